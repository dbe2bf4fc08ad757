"""Significant digits carried from printed figures and confidence intervals into every table."""

from __future__ import annotations

import math
import re

import pytest
from helpers import result, row
from hypothesis import given
from hypothesis import strategies as st

from archbench.report import ReportOptions, format_ratio, render_markdown
from archbench.report.units import (
    format_measured,
    format_significant,
    format_spread,
    interval_digits,
    printed_digits,
    ratio_digits,
    sum_digits,
)


@pytest.mark.parametrize(
    ("printed", "digits"),
    [
        ("0.204 ms", 3),
        ("3.870 ms", 4),
        ("2684 ms", 4),
        ("0.001 ms", 1),
        ("10 000 ms", 1),
        ("8000 ms", 1),
        ("11ms", 2),
        ("0.0400 ms", 3),
        ("unknown", None),
    ],
)
def test_printed_figures_carry_their_digits(printed: str, digits: int | None) -> None:
    assert printed_digits(printed) == digits


def test_unit_changes_keep_the_digits_of_the_printed_figure() -> None:
    # "0.001 ms" is one digit: 1 µs, not "1.000 µs"; "10 000 ms" is not 10 000 000 µs.
    assert format_measured(1.0, "us", printed_digits("0.001 ms")) == "1 µs"
    assert format_measured(1e7, "us", printed_digits("10 000 ms")) == "1e+07 µs"
    assert format_measured(204.0, "us", 3) == "204 µs"
    assert format_measured(183_000.0, "us", 3) == "183 000 µs"
    # never more digits than the appendix's style shows
    assert format_measured(10_000.123456, "ms", 9) == "10 000 ms"
    assert format_measured(3.87, "ms", None) == "3.870 ms"


def test_ratios_keep_the_digits_of_the_coarser_input() -> None:
    # 0.005 / 0.001: one digit each, so "5", not "5.00"
    assert format_ratio(0.005 / 0.001, digits=ratio_digits(1, 1)) == "5"
    assert format_ratio(2684 / 0.204, digits=ratio_digits(4, 3)) == "13 200"
    # Issue 30: a ratio is never printed as "5e+04" (beside "13 200" in one column).
    assert format_ratio(10_000 / 0.204, digits=ratio_digits(1, 3)) == "50 000"
    assert format_ratio(10_000 / 0.204, r"\,", ratio_digits(1, 3)) == r"50\,000"
    assert ratio_digits(None, 2) == 2 and ratio_digits(None, None) is None
    assert ratio_digits(None, 5) == 3


def test_sums_keep_the_coarsest_decimal_place() -> None:
    # the thesis's discussion: 0.444 + 0.094 + 3.332 = 3.870 ms
    assert sum_digits([(0.444, 3), (0.094, 2), (3.332, 4)]) == 4
    assert sum_digits([(3.0, 1), (0.25, 2)]) == 1
    assert sum_digits([(1.0, None), (2.0, 1)]) is None


def test_intervals_decide_a_measured_figure_s_digits() -> None:
    assert interval_digits(6.08, 6.0, 6.17) == 3
    assert interval_digits(6.08, 5.0, 7.0) == 1
    assert interval_digits(6.08, 6.08, 6.08) is None
    assert format_spread(0.0142) == "±1.4 %" and format_spread(0.25) == "±25 %"


def _significant(text: str) -> int:
    mantissa = text.split("e")[0].replace(" ", "").lstrip("-")
    if "." in mantissa:
        return len(mantissa.replace(".", "").lstrip("0"))
    return len(mantissa.lstrip("0").rstrip("0")) or 1


@given(
    st.floats(min_value=1e-6, max_value=1e11, allow_nan=False, allow_infinity=False),
    st.integers(min_value=1, max_value=6),
)
def test_format_significant_rounds_to_at_most_its_digits(value: float, digits: int) -> None:
    text = format_significant(value, digits)
    assert _significant(text) <= digits
    back = float(text.replace(" ", ""))
    assert math.isclose(back, value, rel_tol=0.5 * 10 ** (1 - digits) * 1.0001)


def test_measured_rows_print_the_digits_their_interval_supports() -> None:
    # 8 blocks of 10 signatures, 6.00 to 6.17 ms: the median's interval supports 3 digits.
    samples = [6_000_000, 6_050_000, 6_070_000, 6_080_000, 6_085_000, 6_100_000, 6_150_000]
    samples.append(6_170_000)
    box = result("box", "amd64", "x86_64", "Ryzen", [row("CS", "signing", samples)])
    markdown = render_markdown([box])
    line = next(x for x in markdown.splitlines() if "10x signing" in x)
    assert re.search(r"\| +6\.08 ms ±\d\.\d % \|$", line), line
    # The ± says what it covers: one run's blocks, not another run (issue 30).
    assert "- ±: half-width of the 95 % interval of the row's median over its blocks" in markdown
    assert "how far another run on the same machine would lie is not in it" in markdown
    ops = render_markdown([box], options=ReportOptions(unit="ops/s"))
    line = next(x for x in ops.splitlines() if "| CS " in x and "signing" in x)
    assert re.search(r"\| +1640 ops/s ±\d\.\d % \|$", line), line
