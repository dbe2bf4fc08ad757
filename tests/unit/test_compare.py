"""Run comparison: the t interval of B/A over container runs, verdicts, pairing, rendering."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import result, row, run_invoke
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import comparison, repeat_ratio_interval
from archbench.report import compare_tables
from archbench.report.units import format_time_ns
from archbench.result import Result, ResultStore


def _run(
    samples: dict[tuple[str, str, int | None], list[int]],
    name: str = "amd64-trixie",
    levels: tuple[float, ...] = (1.0,),
) -> list[Result]:
    """One run; with several ``levels``, one container run (repeat) per level, its blocks
    scaled by it."""
    out = []
    for i, level in enumerate(levels, 1):
        rows = [
            row(s, op, [round(x * level) for x in xs], key_bits=bits)
            for (s, op, bits), xs in samples.items()
        ]
        r = result(name, "amd64", "x86_64", "Xeon", rows)
        assert r.execution is not None
        ex = r.execution.model_copy(update={"repeat_index": i, "repeat_count": len(levels)})
        out.append(r.model_copy(update={"execution": ex}))
    return out


def test_repeat_interval_is_the_pooled_t_interval_of_the_log_medians() -> None:
    from scipy import stats

    a = [100.0, 104.0, 97.0]
    b = [121.0, 118.0, 125.0, 119.0]
    got = repeat_ratio_interval(a, b)
    assert got is not None
    la, lb = np.log(a), np.log(b)
    ratio = math.exp(lb.mean() - la.mean())
    test = stats.ttest_ind(lb, la, equal_var=True)
    ci = test.confidence_interval(0.95)
    assert (got.ratio, got.low, got.high) == pytest.approx(
        (ratio, math.exp(ci.low), math.exp(ci.high)), rel=1e-9
    )
    assert got.p_value == pytest.approx(test.pvalue, rel=1e-9) and got.df == 5
    assert comparison.verdict(got.ratio, got.low, got.high) == "slower"


def test_a_side_with_one_container_run_uses_the_others_spread_and_none_gives_nothing() -> None:
    got = repeat_ratio_interval([100.0], [120.0, 126.0, 114.0])
    assert got is not None and got.df == 2 and got.low < 1.2 < got.high
    assert repeat_ratio_interval([100.0], [120.0]) is None
    with pytest.raises(ValueError, match="A has no container runs"):
        repeat_ratio_interval([], [1.0, 2.0])
    with pytest.raises(ValueError, match="B's levels must be positive"):
        repeat_ratio_interval([1.0, 2.0], [0.0])


def test_a_change_below_the_threshold_is_no_significant_change() -> None:
    # The interval excludes 1, but 2 % is within the default 5 % noise floor.
    assert comparison.verdict(1.02, 1.01, 1.03) == "no significant change"
    assert comparison.verdict(1.02, 1.01, 1.03, threshold=0.0) == "slower"
    with pytest.raises(ValueError, match="threshold"):
        comparison.verdict(1.0, 0.9, 1.1, threshold=-0.1)


def test_compare_matches_rows_and_gives_verdicts() -> None:
    samples_a: dict[tuple[str, str, int | None], list[int]] = {
        ("RSA", "signing", 2048): [1000, 1010, 990, 1005, 995],
        ("CS", "signing", None): [500, 505, 495, 502, 498],
        ("RSA", "verifying", 2048): [100, 101],
    }
    samples_b: dict[tuple[str, str, int | None], list[int]] = {
        ("RSA", "signing", 2048): [2000, 2020, 1980, 2010, 1990],
        ("CS", "signing", None): [501, 504, 496, 500, 499],
        ("RSA", "verifying", 2048): [100, 101],
        ("RSA", "blinding", 2048): [10, 11, 12],  # only in B: left out
    }
    a, b = _run(samples_a), _run(samples_b)
    rows = {(r.key.scheme, r.key.operation): r for r in comparison.compare(a, b)}
    assert set(rows) == {("RSA", "signing"), ("CS", "signing"), ("RSA", "verifying")}
    assert comparison.unmatched(a, b) == (0, 1)  # RSA blinding only in B
    rsa = rows[("RSA", "signing")]
    assert rsa.ratio == pytest.approx(2.0)
    assert rsa.a_ns == pytest.approx(100.0)  # 1000 ns per block of 10 operations
    # One container run each: nothing says how far apart two runs lie.
    assert rsa.verdict == "no interval" and math.isnan(rsa.low)
    assert rsa.note == comparison.NO_INTERVAL
    verifying = rows[("RSA", "verifying")]
    assert verifying.verdict == "too few samples"
    assert math.isnan(verifying.low)
    assert comparison.counts(rows.values()) == {"no interval": 2, "too few samples": 1}
    # Three container runs each, 3 % apart: the runs' own spread gives the interval.
    levels = (1.0, 1.03, 0.98)
    with_repeats = {
        (r.key.scheme, r.key.operation): r
        for r in comparison.compare(_run(samples_a, levels=levels), _run(samples_b, levels=levels))
    }
    rsa = with_repeats[("RSA", "signing")]
    assert rsa.verdict == "slower" and rsa.spread_source == "repeats" and rsa.df == 4
    # sd of log(1, 1.03, 0.98) 0.0253, t(4) 2.776, √(2/3): exp(0.0574) from the repeats;
    # the between-run prior 0.13 a side adds 1.96 · √2 · 0.13 = 0.3603 in quadrature:
    # 2 x/÷ exp(0.3649).
    assert rsa.between_runs == comparison.DEFAULT_BETWEEN_RUNS
    assert 1.38 < rsa.low < 1.40 and 2.87 < rsa.high < 2.89
    assert with_repeats[("CS", "signing")].verdict == "no significant change"
    # The repeats alone (--between-runs 0): their interval, but no 95 % claim, no verdict.
    alone = {
        (r.key.scheme, r.key.operation): r
        for r in comparison.compare(
            _run(samples_a, levels=levels), _run(samples_b, levels=levels), between_runs=0.0
        )
    }
    rsa = alone[("RSA", "signing")]
    assert 1.88 < rsa.low < 1.90 and 2.11 < rsa.high < 2.13
    assert rsa.verdict == "no significant change" and comparison.NO_BETWEEN in rsa.note
    assert math.isnan(rsa.p_value)


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
    levels = (1.0, 1.01, 0.99)
    a = _run({("RSA", "signing", 2048): [60_800_000, 61_000_000, 60_500_000]}, levels=levels)
    b = _run({("RSA", "signing", 2048): [121_600_000, 122_000_000, 121_000_000]}, levels=levels)
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
    # Two runs that were not interleaved, three container runs each at levels 1 % apart:
    # the log medians' pooled sd 0.01, t(4) = 2.776, √(2/3): exp(0.0227), and the
    # between-run prior's 1.96 · √2 · 0.13 = 0.3603 in quadrature: 2 x/÷ exp(0.3610).
    assert rows[0].low == pytest.approx(2 * math.exp(-0.3610), rel=1e-3)
    assert cells[6] == "[1.39, 2.87]"
    assert "amd64-trixie: A and B were not interleaved: each time interval is the t" in md
    assert "2.00×" in md and "slower" in md
    assert "1 rows: 1 slower; 1 of the 1 timed rows with an interval changed" in md
    one = comparison.compare(a[:1], b[:1])
    md = compare_tables.markdown(one, "A1", "B2", 0.95)
    assert "| 2.00× | not interleaved: no interval | no interval |" in md
    assert "neither has two container runs: ratios only" in md
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
    a=st.lists(positive, min_size=1, max_size=6),
    b=st.lists(positive, min_size=2, max_size=6),
    scale=st.floats(min_value=0.1, max_value=10),
)
def test_repeat_interval_holds_the_ratio_scales_with_b_and_agrees_with_its_verdict(
    a: list[float], b: list[float], scale: float
) -> None:
    got = repeat_ratio_interval(a, b)
    assert got is not None and got.low <= got.ratio <= got.high
    v = comparison.verdict(got.ratio, got.low, got.high)
    assert v == "no significant change" or (v == "slower") == (got.low > 1)
    # Excluding 1 from a 95 % interval is p < 0.05.
    assert (got.low > 1 or got.high < 1) == (got.p_value < 0.05) or got.sd == 0
    scaled = repeat_ratio_interval(a, [x * scale for x in b])
    assert scaled is not None
    assert (scaled.ratio, scaled.low, scaled.high) == pytest.approx(
        (got.ratio * scale, got.low * scale, got.high * scale), rel=1e-9
    )


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
    assert "2 rows: 2 no interval" in done.stdout
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
