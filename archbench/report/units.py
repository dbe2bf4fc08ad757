"""Units and number formatting: the one place a figure becomes text.

Speeds are stored in ns per operation (:func:`archbench.report.frame.tidy_frame`);
a table shows them in ms or µs (of the appendix's block of 10 operations) or
as operations per second. Formatting follows the appendix: three decimals
below 5, whole numbers from 5 on, digits grouped from 10 000 on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Final, Literal

from archbench.errors import ReportUsageError
from archbench.inputs import quote
from archbench.result import NS_PER_MS

Unit = Literal["ms", "us", "ops/s"]

UNITS: Final[dict[str, Unit]] = {"ms": "ms", "us": "us", "µs": "us", "μs": "us", "ops/s": "ops/s"}
"""Accepted spellings of ``--unit``: milliseconds, microseconds, operations per second."""

NS_PER_S: Final = 1_000_000_000

THREE_DECIMALS_BELOW: Final = 5
"""Speeds below this print three decimals ("3.332 ms"), from here on integers ("5 ms", "34 ms")."""

GROUP_DIGITS_FROM_MS: Final = 10_000
"""Numbers from here on get a thousands separator.

The appendix groups five-digit values ("10 000 ms") but prints four-digit ones
plainly ("2684 ms", "8000 ms"), as SI typography does; we follow the appendix.
"""

SCIENTIFIC_FROM: Final = 1e12
"""From here on numbers print as ``1.00e+30``: a float has ~16 significant digits, and a
speed of 10^12 is no measurement anyway. Non-zero values that would print ``0.000`` also
switch to it (``4.00e-05``)."""


def parse_unit(text: str) -> Unit:
    """``"ms"``, ``"us"``/``"µs"`` or ``"ops/s"``.

    Raises:
        ReportUsageError (exit 2): any other text; the message lists the choices.
    """
    try:
        return UNITS[text.strip()]
    except KeyError:
        raise ReportUsageError(f"--unit {quote(text)} is not one of: ms, us (µs), ops/s") from None


def format_number(value: float, thousands_sep: str = " ") -> str:
    """A number as the appendix prints speeds: three decimals below 5, integers from 5.

    Values too small to show in three decimals (``0.00004`` -> ``"4.00e-05"``,
    not ``"0.000"``) or from :data:`SCIENTIFIC_FROM` on (``1e30`` ->
    ``"1.00e+30"``, not 31 invented digits) print in scientific notation
    with three significant digits.

    ``0.2044`` -> ``"0.204"``, ``4.9996`` -> ``"5"`` (decided on the rounded
    text), ``2684.4`` -> ``"2684"``, ``10000.4`` -> ``"10 000"``: from
    :data:`GROUP_DIGITS_FROM_MS` on, groups of three digits are separated by
    ``thousands_sep`` (LaTeX passes the thin space ``\\,``). Rounding is
    Python's round-half-even on the binary value.

    Raises:
        ValueError: ``value`` is NaN or infinite; such a value must never
            reach a table.
    """
    if not math.isfinite(value):
        raise ValueError(f"cannot format a non-finite number: {value!r}")
    if value != 0 and (float(f"{value:.3f}") == 0 or abs(value) >= SCIENTIFIC_FROM):
        # "0.000" would claim zero, and 30 digits of a float would invent 14.
        return f"{value:.2e}"
    decimals = f"{value:.3f}"
    if abs(float(decimals)) < THREE_DECIMALS_BELOW:
        return decimals
    whole = f"{value:.0f}"
    if abs(int(whole)) < GROUP_DIGITS_FROM_MS:
        return whole
    return f"{value:,.0f}".replace(",", thousands_sep)


def format_count(value: int, thousands_sep: str = " ") -> str:
    """A whole count (instructions per operation) with every group of three digits separated.

    ``70`` -> ``"70"``, ``1234`` -> ``"1 234"``, ``2345678`` -> ``"2 345 678"``.
    Unlike :func:`format_number` (speeds, grouped from :data:`GROUP_DIGITS_FROM_MS`
    on, as the appendix prints them), counts group from 1000 on, as the
    instruction table's LaTeX does (pandas Styler ``thousands=r"\\,"``), so the
    Markdown and LaTeX tables print the same digits.
    """
    return f"{value:,d}".replace(",", thousands_sep)


def unit_label(unit: Unit, micro: str = "µ") -> str:
    """``"ms"``, ``"µs"`` (``micro`` + ``"s"``; LaTeX passes ``\\textmu{}``) or ``"ops/s"``."""
    return f"{micro}s" if unit == "us" else unit


def format_speed(
    value: float, unit: Unit = "ms", thousands_sep: str = " ", micro: str = "µ"
) -> str:
    """``value`` (already in ``unit``) with its unit: ``"0.204 ms"``, ``"10 000 ms"``.

    Raises:
        ValueError: ``value`` is not finite.
    """
    return f"{format_number(value, thousands_sep)} {unit_label(unit, micro)}"


def format_ms(value_ms: float, thousands_sep: str = " ") -> str:
    """A speed in ms as the appendix prints it: ``"0.204 ms"``, ``"2684 ms"``, ``"10 000 ms"``.

    Raises:
        ValueError: ``value_ms`` is not finite.
    """
    return format_speed(value_ms, "ms", thousands_sep)


def format_ratio(value: float, thousands_sep: str = " ", digits: int | None = None) -> str:
    """A ratio to ``digits`` significant digits (default :data:`RATIO_DIGITS`).

    ``3.0195`` -> ``"3.02"``, ``0.0000760`` -> ``"0.0000760"``, ``13157.9``
    -> ``"13 200"``; with ``digits=1``, ``5.0`` -> ``"5"`` (0.005 / 0.001
    claims no more) and ``49 019.6`` -> ``"50 000"`` (never exponent notation below
    :data:`SCIENTIFIC_FROM`). See :func:`format_significant` for grouping and exponents.

    Raises:
        ValueError: ``value`` is not positive and finite.
    """
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"a ratio must be positive and finite, got {value!r}")
    if value >= SCIENTIFIC_FROM or value < 1e-12:
        return f"{value:.2e}"
    text = format_significant(value, RATIO_DIGITS if digits is None else digits, thousands_sep)
    if "e" in text:
        # A ratio reads as a whole number, its zeros as the thesis prints "10 000 ms":
        # "50 000×", never "5e+04×" beside "13 200×" in one column.
        text = f"{float(text):,.0f}".replace(",", thousands_sep)
    return text


# --- significant digits: what a figure's source supports ---------------------------

RATIO_DIGITS: Final = 3
"""Significant digits of a ratio whose inputs do not say how many they support."""

EXPONENT_FROM_ZEROS: Final = 4
"""Whole-number zeros that carry nothing, from which a figure switches to exponent notation."""

_PRINTED_NUMBER: Final = re.compile(r"^\s*(\d[\d ,]*)(?:\.(\d+))?")


def _exponent(value: float) -> int:
    return math.floor(math.log10(abs(value)))


def format_significant(value: float, digits: int, thousands_sep: str = " ") -> str:
    """``value`` rounded to ``digits`` significant digits, zeros that carry nothing left out.

    ``(3.8702, 4)`` -> ``"3.870"``, ``(1.0, 1)`` -> ``"1"``, ``(13157.9, 3)``
    -> ``"13 200"`` (grouped from :data:`GROUP_DIGITS_FROM_MS` on). When
    :data:`EXPONENT_FROM_ZEROS` or more whole-number zeros would carry nothing,
    exponent notation says so: ``(10_000_000, 1)`` -> ``"1e+07"``, not
    ``"10 000 000"``; ``(183_000, 3)`` stays ``"183 000"``.

    Raises:
        ValueError: ``value`` is not finite or ``digits`` is below 1.
    """
    if not math.isfinite(value) or digits < 1:
        raise ValueError(f"cannot format {value!r} to {digits!r} significant digits")
    if value == 0:
        return "0"
    last = _exponent(value) - digits + 1
    rounded = round(value, -last)
    if rounded != 0 and _exponent(rounded) - digits + 1 != last:
        last += 1  # 9.96 -> 10.0: rounding added a digit
        rounded = round(value, -last)
    if last >= EXPONENT_FROM_ZEROS and abs(rounded) >= GROUP_DIGITS_FROM_MS:
        return f"{rounded:.{digits - 1}e}"
    decimals = max(0, -last)
    if abs(rounded) >= GROUP_DIGITS_FROM_MS:
        return f"{rounded:,.{decimals}f}".replace(",", thousands_sep)
    return f"{rounded:.{decimals}f}"


def printed_digits(printed: str) -> int | None:
    """Significant digits of a published figure as printed.

    ``"0.204 ms"`` -> 3, ``"3.870 ms"`` -> 4, ``"2684 ms"`` -> 4, ``"0.001 ms"``
    -> 1, ``"10 000 ms"`` and ``"8000 ms"`` -> 1 (a whole number's trailing
    zeros are taken as not significant, as the reference notes say). None when
    the text does not start with a number.
    """
    match = _PRINTED_NUMBER.match(printed)
    if match is None:
        return None
    whole = match.group(1).replace(" ", "").replace(",", "")
    fraction = match.group(2) or ""
    if fraction:
        significant = (whole + fraction).lstrip("0")
        return max(1, len(significant))
    return max(1, len(whole.lstrip("0").rstrip("0")))


def interval_digits(value: float, low: float, high: float) -> int | None:
    """Significant digits of ``value`` that its confidence interval [low, high] supports.

    The last digit kept is the one of the interval's half-width's leading
    digit: 6.08 with (6.00, 6.17) (half-width 0.085) keeps hundredths, 3
    digits. None when the interval is empty or not finite.
    """
    half = (high - low) / 2
    if not (math.isfinite(half) and half > 0 and math.isfinite(value) and value != 0):
        return None
    return max(1, _exponent(value) - _exponent(half) + 1)


def sum_digits(parts: Sequence[tuple[float, int | None]]) -> int | None:
    """Significant digits of a sum of (value, digits): the coarsest part's last digit decides.

    0.444 + 0.094 + 3.332 (3, 2 and 4 digits, all to thousandths) = 3.870, 4 digits.
    None when a part's digits are unknown.
    """
    if any(d is None for _, d in parts) or not parts:
        return None
    last = max(_exponent(v) - d + 1 for v, d in parts if d is not None and v != 0)
    total = sum(v for v, _ in parts)
    return max(1, _exponent(total) - last + 1) if total else None


def ratio_digits(*digits: int | None) -> int | None:
    """Significant digits of a product or quotient: the fewest of its inputs'.

    An input of unknown digits (None) counts as :data:`RATIO_DIGITS`; None when all are unknown.
    """
    known = [d for d in digits if d is not None]
    if not known:
        return None
    return min(known + [RATIO_DIGITS] * (len(digits) - len(known)))


def unit_value(thesis_ms: float, ops_per_s: float, unit: Unit) -> float:
    """A row's figure in ``unit``: ``thesis_ms`` in ms or µs, or ``ops_per_s`` (one operation)."""
    if unit == "ms":
        return thesis_ms
    if unit == "us":
        return thesis_ms * 1000
    return ops_per_s


def per_op_ns_in(per_op_ns: float, thesis_ops: int, unit: Unit) -> float:
    """ns per operation as a table shows it: ms or µs of ``thesis_ops`` operations, or ops/s."""
    if unit == "ops/s":
        return NS_PER_S / per_op_ns
    return per_op_ns * thesis_ops / NS_PER_MS * (1000 if unit == "us" else 1)


def format_measured(
    value: float,
    unit: Unit,
    digits: int | None,
    thousands_sep: str = " ",
    micro: str = "µ",
    *,
    bare: bool = False,
) -> str:
    """A speed in ``unit`` to the ``digits`` its source supports; ``digits`` None: the appendix's
    style (:func:`format_number`).

    Never more digits than the appendix's style shows or :data:`RATIO_DIGITS`,
    whichever is more: a tight interval does not make "10 000.12 ms".

    ``(6.0812, "ms", 3)`` -> ``"6.08 ms"`` (the appendix's style: "6 ms");
    ``(1.0, "us", 1)`` -> ``"1 µs"`` (from "0.001 ms"); ``(1e7, "us", 1)`` ->
    ``"1e+07 µs"`` (from "10 000 ms").

    Raises:
        ValueError: ``value`` is not finite.
    """
    if digits is None or value == 0:
        text = format_number(value, thousands_sep)
    else:
        style = max(1, _exponent(value) + 1 + (3 if abs(value) < THREE_DECIMALS_BELOW else 0))
        text = format_significant(value, min(digits, max(style, RATIO_DIGITS)), thousands_sep)
    return text if bare else f"{text} {unit_label(unit, micro)}"


def format_spread(spread: float) -> str:
    """A relative half-width as ``"±1.4 %"`` (two significant digits, at most one decimal)."""
    percent = spread * 100
    return f"±{percent:.1f} %" if percent < 10 else f"±{percent:.0f} %"


_TIME_UNITS: Final = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))


def format_time_ns(ns: float) -> str:
    """A per-operation time to three significant digits, in the largest unit that keeps
    it at least 1: ``"6.08 ms"``, ``"40.0 ns"``.

    Raises:
        ValueError: ``ns`` is not positive and finite.
    """
    if not math.isfinite(ns) or ns <= 0:
        raise ValueError(f"a time must be positive and finite, got {ns!r}")
    scale, unit = next(((s, u) for s, u in _TIME_UNITS if ns >= s), _TIME_UNITS[-1])
    return f"{format_ratio(ns / scale)} {unit}"
