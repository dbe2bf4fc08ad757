"""Run comparison: bootstrap interval of B/A, verdicts, pairing and rendering."""

from __future__ import annotations

import math
import statistics
import subprocess
from pathlib import Path

import pytest
from helpers import result, row, run_invoke
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import comparison
from archbench.report import compare_tables
from archbench.report.units import format_time_ns
from archbench.result import Result, ResultStore


def _run(
    samples: dict[tuple[str, str, int | None], list[int]], name: str = "amd64-trixie"
) -> list[Result]:
    rows = [row(s, op, xs, key_bits=bits) for (s, op, bits), xs in samples.items()]
    return [result(name, "amd64", "x86_64", "Xeon", rows)]


def test_ratio_interval_of_separated_samples_excludes_one() -> None:
    a = [100.0, 101.0, 99.0, 100.5, 100.2, 99.8]
    b = [120.0, 121.0, 119.5, 120.4, 119.9, 120.2]
    ratio, low, high = comparison.ratio_interval(a, b)
    assert ratio == pytest.approx(statistics.median(b) / statistics.median(a))
    assert 1.18 < low <= ratio <= high < 1.23
    assert comparison.verdict(ratio, low, high) == "slower"
    assert comparison.verdict(1 / ratio, 1 / high, 1 / low) == "faster"


def test_ratio_interval_is_reproducible_for_the_same_inputs() -> None:
    a = [100.0, 130.0, 90.0, 110.0, 105.0]
    b = [102.0, 95.0, 125.0, 99.0, 111.0]
    assert comparison.ratio_interval(a, b) == comparison.ratio_interval(a, b)


def test_overlapping_samples_give_no_significant_change() -> None:
    a = [100.0, 130.0, 90.0, 110.0, 105.0]
    b = [102.0, 95.0, 125.0, 99.0, 111.0]
    ratio, low, high = comparison.ratio_interval(a, b)
    assert low < 1 < high
    assert comparison.verdict(ratio, low, high) == "no significant change"


def test_constant_samples_give_an_exact_interval() -> None:
    ratio, low, high = comparison.ratio_interval([50.0] * 3, [75.0] * 4)
    assert (ratio, low, high) == (1.5, 1.5, 1.5)


def test_a_change_below_the_threshold_is_no_significant_change() -> None:
    # The interval excludes 1, but 2 % is within the default 5 % noise floor.
    assert comparison.verdict(1.02, 1.01, 1.03) == "no significant change"
    assert comparison.verdict(1.02, 1.01, 1.03, threshold=0.0) == "slower"
    with pytest.raises(ValueError, match="threshold"):
        comparison.verdict(1.0, 0.9, 1.1, threshold=-0.1)


@pytest.mark.parametrize(("a", "b"), [([1.0, 2.0], [1.0, 2.0, 3.0]), ([1.0, 2.0, 0.0], [1.0] * 3)])
def test_ratio_interval_refuses_too_few_or_impossible_samples(
    a: list[float], b: list[float]
) -> None:
    with pytest.raises(ValueError, match="samples"):
        comparison.ratio_interval(a, b)


def test_compare_matches_rows_and_gives_verdicts() -> None:
    a = _run(
        {
            ("RSA", "signing", 2048): [1000, 1010, 990, 1005, 995],
            ("CS", "signing", None): [500, 505, 495, 502, 498],
            ("RSA", "verifying", 2048): [100, 101],
        }
    )
    b = _run(
        {
            ("RSA", "signing", 2048): [2000, 2020, 1980, 2010, 1990],
            ("CS", "signing", None): [501, 504, 496, 500, 499],
            ("RSA", "verifying", 2048): [100, 101],
            ("RSA", "blinding", 2048): [10, 11, 12],  # only in B: left out
        }
    )
    rows = {(r.key.scheme, r.key.operation): r for r in comparison.compare(a, b)}
    assert set(rows) == {("RSA", "signing"), ("CS", "signing"), ("RSA", "verifying")}
    assert comparison.unmatched(a, b) == (0, 1)  # RSA blinding only in B
    rsa = rows[("RSA", "signing")]
    assert rsa.ratio == pytest.approx(2.0)
    assert rsa.a_ns == pytest.approx(100.0)  # 1000 ns per block of 10 operations
    assert rsa.verdict == "slower"
    assert rows[("CS", "signing")].verdict == "no significant change"
    verifying = rows[("RSA", "verifying")]
    assert verifying.verdict == "too few samples"
    assert math.isnan(verifying.low)
    assert comparison.counts(rows.values()) == {
        "slower": 1,
        "no significant change": 1,
        "too few samples": 1,
    }


def test_invalid_rows_get_no_verdict() -> None:
    a = [result("t", "amd64", "x86_64", "Xeon", [row("CS", "signing", [5, 5, 5])])]
    bad = row("CS", "signing", [5, 5, 5], valid=False, reason="signature did not verify")
    b = [result("t", "amd64", "x86_64", "Xeon", [bad])]
    (only,) = comparison.compare(a, b)
    assert only.verdict == "invalid"


def test_single_targets_with_different_names_are_paired() -> None:
    a = _run({("CS", "signing", None): [500, 501, 499]}, name="amd64-bookworm")
    b = _run({("CS", "signing", None): [1000, 1001, 999]}, name="amd64-trixie")
    (only,) = comparison.compare(a, b)
    assert only.key.target == "amd64-bookworm"
    assert only.ratio == pytest.approx(2.0)
    both = a + _run({("CS", "signing", None): [1, 1, 1]}, name="other")
    assert comparison.compare(both, b) == []
    assert comparison.unmatched(both, b) == (2, 1)
    assert comparison.unmatched(a, b) == (0, 0)


def test_rendering_markdown_latex_and_csv(tmp_path: Path) -> None:
    a = _run({("RSA", "signing", 2048): [60_800_000, 61_000_000, 60_500_000]})
    b = _run({("RSA", "signing", 2048): [121_600_000, 122_000_000, 121_000_000]})
    rows = comparison.compare(a, b)
    md = compare_tables.markdown(rows, "A1", "B2", 0.95)
    line = next(ln for ln in md.splitlines() if ln.startswith("| amd64-trixie"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells == [
        "amd64-trixie",
        "blindsig RSA-2048 signing",
        "time",
        "6.08 ms",
        "12.2 ms",
        "2.00×",
        cells[6],
        "slower",
    ]
    # Two runs that were not interleaved: the blocks' interval (about [1.99, 2.01])
    # widened by the between-run floor, 2 x/÷ exp(1.96 · √2 · ln 1.06) = [1.70, 2.35].
    low, high = (float(x) for x in cells[6].strip("[]").split(","))
    assert 1.69 < low < 1.71 and 2.34 < high < 2.36
    assert "amd64-trixie: A and B were not interleaved" in md
    assert "2.00×" in md and "slower" in md
    assert "1 rows: 1 slower" in md
    paths = compare_tables.write(rows, "A1", "B2", tmp_path, 0.95)
    assert [p.name for p in paths] == ["compare-A1-vs-B2.tex", "compare-A1-vs-B2.csv"]
    tex = paths[0].read_text()
    assert "\\toprule" in tex and "2.00\\texttimes{}" in tex and "6.08 ms" in tex
    csv = paths[1].read_text().splitlines()
    assert csv[0].startswith("run_a,run_b,target,suite,scheme,key_bits")
    assert ",slower" in csv[1]


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (40.0, "40.0 ns"),
        (1500.0, "1.50 µs"),
        (6.08e6, "6.08 ms"),
        (2.5e9, "2.50 s"),
        (0.5, "0.500 ns"),
    ],
)
def test_format_time_switches_unit(ns: float, text: str) -> None:
    assert format_time_ns(ns) == text


positive = st.floats(min_value=1.0, max_value=1e9, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(
    a=st.lists(positive, min_size=3, max_size=12),
    b=st.lists(positive, min_size=3, max_size=12),
)
def test_interval_always_contains_the_ratio_and_verdict_agrees(
    a: list[float], b: list[float]
) -> None:
    ratio, low, high = comparison.ratio_interval(a, b, n_resamples=200)
    assert low <= ratio <= high
    v = comparison.verdict(ratio, low, high)
    if v == "slower":
        assert low > 1
    elif v == "faster":
        assert high < 1
    else:
        assert v == "no significant change"


@settings(max_examples=25, deadline=None)
@given(a=st.lists(positive, min_size=3, max_size=8), scale=st.floats(min_value=0.1, max_value=10))
def test_ratio_scales_with_b(a: list[float], scale: float) -> None:
    ratio, _, _ = comparison.ratio_interval(a, [x * scale for x in a], n_resamples=100)
    assert ratio == pytest.approx(scale, rel=1e-9)


# --- the command line -----------------------------------------------------------------


def _invoke(*args: str, results: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return run_invoke(*args, settings={"results": results, "reports": out})


def _store_run(results: Path, run_id: str, scale: float) -> None:
    rows = [
        row("CS", "signing", [round(x * scale) for x in (500, 505, 495, 502, 498)]),
        row("RSA", "signing", [1000, 1010, 990, 1005, 995], key_bits=2048),
    ]
    store = ResultStore(results)
    store.save(result("amd64-trixie", "amd64", "x86_64", "Xeon", rows, run_id=run_id))


@pytest.mark.slow
def test_invoke_compare_prints_and_writes(tmp_path: Path) -> None:
    results, out = tmp_path / "results", tmp_path / "out"
    _store_run(results, "20261201T000000Z-aaaaaa", 1.0)
    _store_run(results, "20261201T010000Z-bbbbbb", 1.5)
    done = _invoke(
        "compare", "20261201T000000Z-aaaaaa", "20261201T010000Z-bbbbbb", results=results, out=out
    )
    assert done.returncode == 0, done.stderr
    assert "2 rows: 1 slower, 1 no significant change" in done.stdout
    assert "| amd64-trixie | blindsig CS signing" in done.stdout
    stem = "compare-20261201T000000Z-aaaaaa-vs-20261201T010000Z-bbbbbb"
    assert (out / f"{stem}.tex").is_file() and (out / f"{stem}.csv").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("20261201T000000Z-aaaaaa", "nope"), "no run nope in"),
        (
            ("20261201T000000Z-aaaaaa", "20261201T000000Z-aaaaaa", "--confidence", "abc"),
            "--confidence 'abc': give a level in [0.5, 1)",
        ),
        (
            ("20261201T000000Z-aaaaaa", "20261201T000000Z-aaaaaa", "--threshold", "-1"),
            "--threshold '-1': give a fraction in [0, 1]",
        ),
        (
            ("20261201T000000Z-aaaaaa", "20261201T000000Z-aaaaaa", "--suite", "sodium"),
            "no results match the selection",
        ),
    ],
)
def test_invoke_compare_refuses_bad_input(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    results, out = tmp_path / "results", tmp_path / "out"
    _store_run(results, "20261201T000000Z-aaaaaa", 1.0)
    done = _invoke("compare", *args, results=results, out=out)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()


@pytest.mark.slow
def test_invoke_compare_names_an_out_that_is_a_file(tmp_path: Path) -> None:
    results, out = tmp_path / "results", tmp_path / "afile"
    out.write_text("mine\n")
    _store_run(results, "20261201T000000Z-aaaaaa", 1.0)
    _store_run(results, "20261201T010000Z-bbbbbb", 1.5)
    done = _invoke(
        "compare", "20261201T000000Z-aaaaaa", "20261201T010000Z-bbbbbb", results=results, out=out
    )
    assert done.returncode != 0
    assert f"--out {out}: is a file, not a directory; give a directory" in done.stderr
    assert "Traceback" not in done.stderr
    assert out.read_text() == "mine\n"
