"""Issues 21 and 30: interleaved rounds, separate runs, counts that decide, steps and the gate."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest
from helpers import result, row
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import (
    MIN_COUNT_EFFECT,
    RANDOM_SPREAD,
    SeriesPoint,
    compare,
    count_effect,
    environment_diff,
    find_steps,
    over_limit,
    round_ratio_interval,
    series,
)
from archbench.analysis import comparison as C
from archbench.cli.report import CompareRequest, compare_runs
from archbench.errors import LimitExceeded
from archbench.report import compare_tables as T
from archbench.result import Counting, Execution, Result, ResultStore, Row, RowKey

# --- interleaved rounds -----------------------------------------------------------------


def symmetric(level: float, n: int, e: float) -> list[float]:
    """``n`` (odd) blocks around ``level`` whose median is exactly ``level``."""
    half = n // 2
    return [level * (1 + e * k / max(half, 1)) for k in range(-half, half + 1)]


@settings(max_examples=30, deadline=None)
@given(
    rho=st.floats(min_value=0.5, max_value=2.0),
    base=st.floats(min_value=1e3, max_value=1e8),
    drift=st.floats(min_value=1.2, max_value=2.0),
    e=st.floats(min_value=0.001, max_value=0.02),
)
def test_paired_rounds_with_a_common_drift_cover_the_true_ratio_and_pooled_blocks_do_not(
    rho: float, base: float, drift: float, e: float
) -> None:
    # Six rounds; in rounds 4-6 the machine is `drift` times slower for A and B alike.
    # Adaptive repetitions took many blocks of A in the slow rounds and many of B in the
    # fast ones, so pooling blocks compares A's slow machine with B's fast one.
    rounds = []
    for r in range(6):
        slow = r >= 3
        level = base * (drift if slow else 1.0)
        a = symmetric(level, 21 if slow else 3, e)
        b = symmetric(level * rho, 3 if slow else 21, e)
        rounds.append((a, b))
    ratio, low, high = round_ratio_interval(rounds)
    assert ratio == pytest.approx(rho, rel=1e-9)
    assert rho / 1.05 < low <= rho * (1 + 1e-9) and rho * (1 - 1e-9) <= high < rho * 1.05
    pooled_a = [x for a, _ in rounds for x in a]
    pooled_b = [x for _, b in rounds for x in b]
    # Pooled blocks compare A's slow machine with B's fast one: off by the drift.
    assert statistics.median(pooled_b) / statistics.median(pooled_a) < rho / 1.15


@settings(max_examples=25, deadline=None)
@given(
    rounds=st.lists(
        st.tuples(
            st.lists(st.floats(min_value=1.0, max_value=1e6), min_size=1, max_size=6),
            st.lists(st.floats(min_value=1.0, max_value=1e6), min_size=1, max_size=6),
        ),
        min_size=3,
        max_size=8,
    ),
    k=st.floats(min_value=0.25, max_value=4.0),
)
def test_the_interval_holds_the_ratio_and_scales_with_b(
    rounds: list[tuple[list[float], list[float]]], k: float
) -> None:
    ratio, low, high = round_ratio_interval(rounds)
    assert low <= ratio <= high
    scaled = [(a, [x * k for x in b]) for a, b in rounds]
    r2, l2, h2 = round_ratio_interval(scaled)
    assert (r2, l2, h2) == pytest.approx((ratio * k, low * k, high * k), rel=1e-9)


def test_paired_rounds_are_reproducible_and_need_three_rounds() -> None:
    rounds = [([100.0, 104.0, 98.0], [110.0, 111.0, 108.0])] * 2 + [([150.0], [166.0])]
    assert round_ratio_interval(rounds) == round_ratio_interval(rounds)
    with pytest.raises(ValueError, match="2 paired rounds, need at least 3"):
        round_ratio_interval(rounds[:2])
    with pytest.raises(ValueError, match="round 1: B has no blocks"):
        round_ratio_interval([([1.0], [])] * 3)


# --- runs as stored ---------------------------------------------------------------------


def timed(
    samples: dict[str, list[int]],
    *,
    run_id: str,
    round_: int = 1,
    rounds: int = 1,
    session: str | None = None,
    name: str = "amd64-trixie",
    packages: dict[str, str] | None = None,
) -> Result:
    rows = [row("CS", op, xs) for op, xs in samples.items()]
    base = result(name, "amd64", "x86_64", "Xeon", rows, run_id=run_id)
    assert base.execution is not None
    ex = base.execution.model_copy(
        update={"repeat_index": round_, "repeat_count": rounds, "interleaved": session}
    )
    update: dict[str, object] = {"execution": ex}
    if packages:
        setup = base.harness.setup.model_copy(
            update={"packages": {**base.harness.setup.packages, **packages}}
        )
        update["harness"] = base.harness.model_copy(update={"setup": setup})
    return base.model_copy(update=update)


def counted(
    counts: dict[str, list[int]], *, run_id: str, packages: dict[str, str] | None = None
) -> Result:
    base = timed({op: [5, 5, 5] for op in counts}, run_id=run_id, packages=packages)
    rows: list[Row] = [
        r.model_copy(update={"instructions": tuple(counts[r.operation])}) for r in base.harness.rows
    ]
    prov = Counting.model_validate(
        {
            "instrument": "qemu-tcg-plugin",
            "qemu": "qemu-x86_64",
            "qemu_version": "qemu 7.2.22",
            "qemu_package": "1:7.2",
            "cpu_model": "max",
            "plugin_version": "1",
            "plugin_api": 1,
            "calibration": {
                "iterations": 100000,
                "instructions_per_iteration": 2,
                "counts": [200021, 400021],
                "expected_difference": 200000,
                "difference": 200000,
                "overhead": 21,
                "exact": True,
            },
        }
    )
    harness = base.harness.model_copy(update={"rows": tuple(rows), "counting": prov})
    return Result.model_validate(
        {**base.model_dump(), "harness": harness.model_dump(), "metric": "instructions"}
    )


RUN_A, RUN_B = "20261202T000000Z-aaaaaa", "20261202T010000Z-bbbbbb"
SIGN = [1000, 1010, 990, 1005, 995, 1002]


def test_separate_runs_without_repeats_get_no_interval_and_with_repeats_their_own() -> None:
    a = [timed({"signing": SIGN}, run_id=RUN_A)]
    drifted = [timed({"signing": [round(x * 1.08) for x in SIGN]}, run_id=RUN_B)]
    (aa,) = compare(a, drifted)
    # The blocks alone would say 1.07-1.09; nothing says how far apart two runs lie.
    assert (aa.verdict, aa.note, aa.between_spread) == ("no interval", C.NO_INTERVAL, None)
    assert aa.ratio == pytest.approx(1.08, rel=1e-3) and math.isnan(aa.low)
    # Three container runs a side whose levels vary by 10 %: 8 % is no change, 2x is.
    levels = [1.0, 1.1, 0.92]

    def run(rho: float, run_id: str) -> list[Result]:
        return [
            timed(
                {"signing": [round(x * level * rho) for x in SIGN]},
                run_id=run_id,
                round_=i,
                rounds=3,
            )
            for i, level in enumerate(levels, 1)
        ]

    (aa,) = compare(run(1.0, RUN_A), run(1.08, RUN_B))
    assert aa.verdict == "no significant change" and aa.spread_source == "repeats"
    assert aa.df == 4 and aa.between_spread == pytest.approx(0.0896, abs=1e-3)
    (ab,) = compare(run(1.0, RUN_A), run(2.0, RUN_B))
    # The between-run prior (0.13 a side) widens it to about 2 x/÷ 1.45: a doubling is
    # still called.
    assert ab.verdict == "slower" and 1.3 < ab.low < 2.0 < ab.high < 3.1


def test_false_discovery_control_overrules_a_lone_marginal_row_and_keeps_strong_ones() -> None:
    def timed_row(op: str, p: float) -> C.RowComparison:
        key = RowKey("t", "blindsig", "CS", 0, "", op, 1)
        return C.RowComparison(
            key, 1.0, 1.1, 6, 6, 1.1, 1.06, 1.14, "slower", p_value=p, df=4, rounds=5
        )

    rows = [timed_row(f"op{i}", 0.9) for i in range(18)]
    rows += [timed_row("marginal", 0.04), timed_row("strong", 1e-5)]
    out = {r.key.operation: r for r in C.control_false_discoveries(rows)}
    # BH: 0.04 is the 2nd smallest of 20 p-values: q = 0.04 · 20 / 2 = 0.4 > 5 %.
    assert out["marginal"].q_value == pytest.approx(0.4)
    assert (out["marginal"].verdict, out["marginal"].own_verdict) == (
        "no significant change",
        "slower",
    )
    assert (out["strong"].verdict, out["strong"].own_verdict) == ("slower", None)
    assert out["strong"].q_value == pytest.approx(2e-4)
    line = T.summary_line(list(out.values()))
    assert "1 of the 20 timed rows with an interval changed under Benjamini–Hochberg" in line
    assert "(20 by their own intervals alone)" in line
    with pytest.raises(ValueError, match="false discovery rate"):
        C.control_false_discoveries(rows, rate=0.0)


def interleaved_session(levels: list[float], rho: float) -> tuple[list[Result], list[Result]]:
    """Rounds of A and B on a machine whose speed is ``levels[r]`` in round r."""
    a, b = [], []
    for r, level in enumerate(levels, 1):
        blocks = [round(x * level) for x in SIGN]
        a.append(
            timed({"signing": blocks}, run_id=RUN_A, round_=r, rounds=len(levels), session="S1")
        )
        b.append(
            timed(
                {"signing": [round(x * rho) for x in blocks]},
                run_id=RUN_B,
                round_=r,
                rounds=len(levels),
                session="S1",
            )
        )
    return a, b


def test_interleaved_rounds_resolve_10_percent_through_a_30_percent_drift() -> None:
    levels = [1.0, 1.3, 1.0, 1.25, 1.05]
    a, b = interleaved_session(levels, 1.10)
    (ab,) = compare(a, b)
    assert ab.rounds == 5 and ab.interleaved and ab.spread_source == "rounds"
    assert ab.ratio == pytest.approx(1.10, rel=1e-3)
    assert 1.09 < ab.low <= ab.high < 1.11
    assert ab.verdict == "slower"
    # The same blocks as two stored runs (no session id): not resolved.
    plain = [
        r.model_copy(update={"execution": r.execution.model_copy(update={"interleaved": None})})
        for r in (*a, *b)
        if r.execution
    ]
    (separate,) = compare(plain[:5], plain[5:])
    assert separate.verdict == "no significant change" and not separate.interleaved
    (aa,) = compare(*interleaved_session(levels, 1.0))
    assert aa.verdict == "no significant change" and aa.ratio == pytest.approx(1.0, abs=1e-3)
    lines = T.design_lines([ab, separate])
    assert lines[0].startswith("amd64-trixie: interleaved, 5 paired rounds")
    assert "Student-t interval of the per-round log ratios" in lines[0]
    # As two runs of five container runs each, their own spread (sd 0.126) is the noise.
    assert separate.spread_source == "repeats" and separate.df == 8
    assert separate.between_spread == pytest.approx(0.1264, abs=1e-3)
    assert "not interleaved" in lines[1] and "(8 degrees of freedom)" in lines[1]


def test_rounds_pair_by_index_not_by_position() -> None:
    levels = [1.0, 1.3, 1.0, 1.25, 1.05]
    a, b = interleaved_session(levels, 1.10)
    # A lost round 2: the others still pair with their own round of B.
    (ab,) = compare([a[0], *a[2:]], b)
    assert ab.rounds == 4 and 1.09 < ab.low <= ab.high < 1.11


def test_too_few_rounds_fall_back_to_separate_runs_and_say_so() -> None:
    a, b = interleaved_session([1.0, 1.3], 1.0)
    (only,) = compare(a, b)
    # Two container runs a side 30 % apart: sd of (0, ln 1.3) = 0.1855, 2 degrees of freedom.
    assert not only.interleaved and only.spread_source == "repeats" and only.df == 2
    assert only.between_spread == pytest.approx(0.1855, abs=1e-3)
    assert "only 2 paired round(s)" in only.note


# --- counts -----------------------------------------------------------------------------


def test_counts_give_the_exact_ratio_and_call_changes_beyond_their_spread() -> None:
    a = [counted({"signing": [1000, 1000, 1000], "verifying": [500, 505, 500]}, run_id=RUN_A)]
    b = [counted({"signing": [1030, 1030, 1030], "verifying": [503, 504, 501]}, run_id=RUN_B)]
    rows = {r.key.operation: r for r in compare(a, b)}
    sign, verify = rows["signing"], rows["verifying"]
    assert sign.metric == "instructions" and sign.ratio == pytest.approx(1.03)
    assert (sign.a_instructions, sign.b_instructions, sign.spread) == (100.0, 103.0, 0.0)
    assert sign.verdict == "more instructions" and math.isnan(sign.a_ns)
    # 503/500 = 1.006 lies within verifying's own spread of 1 % (500..505).
    assert verify.verdict == "no significant change" and verify.spread == pytest.approx(0.01)
    assert [r.key.operation for r in over_limit(rows.values(), 1.02)] == ["signing"]
    assert over_limit(rows.values(), 1.05) == []


def test_times_that_move_while_counts_stay_say_only_what_is_known() -> None:
    def run(rho: float, run_id: str) -> list[Result]:
        times = [
            timed({"signing": [round(x * rho * k) for x in SIGN]}, run_id=run_id, round_=i)
            for i, k in ((1, 1.0), (2, 1.02), (3, 0.99))
        ]
        return [*times, counted({"signing": [1000] * 3}, run_id=run_id)]

    time_row, count_row = compare(run(1.0, RUN_A), run(2.0, RUN_B))
    assert (time_row.metric, time_row.verdict) == ("time", "slower")
    assert (count_row.metric, count_row.verdict) == ("instructions", "no significant change")
    assert time_row.note == (
        "the counts did not change (1.0000×); the times did (slower, 2.000×): a cause "
        "outside the counted instructions, such as the machine, the cache or memory"
    )
    assert count_row.note == time_row.note
    md = T.markdown([time_row, count_row], RUN_A, RUN_B, 0.95)
    assert "| amd64-trixie | blindsig CS signing | instructions | 100 instr. | 100 instr." in md
    assert "exact" in md and "the machine changed" not in md


def test_a_count_change_below_the_minimum_effect_is_no_change() -> None:
    # One instruction in 10 000 per operation, exact on both sides: no verdict.
    assert C.count_verdict(1.0001, 0.0) == "no significant change"
    assert C.count_verdict(1.0011, 0.0) == "more instructions"
    assert C.count_verdict(1 / 1.0011, 0.0) == "fewer instructions"
    assert C.count_verdict(1.00001, 0.0, min_effect=0.0) == "more instructions"


# --- invoke compare's body --------------------------------------------------------------


def _store(tmp: Path, results: list[Result]) -> Path:
    store = ResultStore(tmp / "results")
    for r in results:
        store.save(r)
    return store.root


def test_compare_runs_prints_the_environment_and_gates_counted_rows(tmp_path: Path) -> None:
    root = _store(
        tmp_path,
        [
            timed({"signing": SIGN}, run_id=RUN_A),
            counted({"signing": [1000] * 3}, run_id=RUN_A),
            timed({"signing": SIGN}, run_id=RUN_B, packages={"libgcrypt": "1.12.0-1"}),
            counted({"signing": [1100] * 3}, run_id=RUN_B, packages={"libgcrypt": "1.12.0-1"}),
        ],
    )
    lines: list[str] = []
    request = CompareRequest(
        results=root, out=tmp_path / "out", run_a=RUN_A, run_b=RUN_B, fail_above=1.02
    )
    with pytest.raises(LimitExceeded, match=r"1 counted row\(s\) grew beyond the limit") as err:
        compare_runs(request, lines.append)
    assert err.value.exit_code == 13
    assert "amd64-trixie blindsig CS signing 1.1000×" in str(err.value)
    text = "\n".join(lines)
    assert "environment amd64-trixie: libgcrypt 1.11.0-7 → 1.12.0-1" in text
    assert "A and B were not interleaved" in text
    assert (tmp_path / "out" / f"compare-{RUN_A}-vs-{RUN_B}.csv").is_file()
    lines.clear()
    compare_runs(
        CompareRequest(
            results=root, out=tmp_path / "out", run_a=RUN_A, run_b=RUN_B, fail_above=1.2
        ),
        lines.append,
    )


# --- environments and steps --------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    spread=st.floats(min_value=RANDOM_SPREAD * 1.0001, max_value=1.0),
    values=st.lists(st.floats(min_value=1e5, max_value=1e9), min_size=2, max_size=10),
)
def test_a_counted_series_of_a_random_row_never_steps(spread: float, values: list[float]) -> None:
    # Issue 39: RSA-2048 key generation, 0.844x between two runs of one build (random
    # primes). A count whose repetitions range beyond 5 % is a draw: no step, however far.
    assert find_steps(count_series(values, spread)) == []


def test_environment_diff_names_what_changed() -> None:
    a = timed({"signing": SIGN}, run_id=RUN_A)
    b = timed({"signing": SIGN}, run_id=RUN_B, packages={"libsodium": "1.0.22-1"})
    assert [c.text for c in environment_diff(a, b)] == ["libsodium 1.0.18-1+b2 → 1.0.22-1"]
    assert environment_diff(a, a) == []


def count_series(values: list[float], spread: float) -> list[SeriesPoint]:
    return [SeriesPoint(f"v{i}", v, "instructions", spread=spread) for i, v in enumerate(values)]


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(min_value=2, max_value=10),
    spread=st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=RANDOM_SPREAD)),
    factor=st.floats(min_value=1.0, max_value=5.0),
    down=st.booleans(),
)
def test_a_counted_series_with_one_planted_step_finds_that_step_and_no_other(
    data: st.DataObject, n: int, spread: float, factor: float, down: bool
) -> None:
    at = data.draw(st.integers(min_value=1, max_value=n - 1))
    jitter = data.draw(st.lists(st.floats(min_value=-1, max_value=1), min_size=n, max_size=n))
    bound = count_effect(spread, MIN_COUNT_EFFECT)
    assert bound is not None
    step = (1 + bound) * (1 + spread) * factor * 1.002  # beyond the bound and the jitter
    step = 1 / step if down else step
    values = [1e6 * (1 + j * spread / 3) * (step if i >= at else 1) for i, j in enumerate(jitter)]
    (found,) = find_steps(count_series(values, spread))
    assert (found.index, found.before, found.after) == (at, f"v{at - 1}", f"v{at}")
    assert found.direction == ("down" if down else "up")
    assert found.cause == "nothing recorded changed"
    flat = [1e6 * (1 + j * spread / 3) for j in jitter]
    assert find_steps(count_series(flat, spread)) == []


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=10),
    at=st.integers(min_value=1, max_value=9),
    change=st.floats(min_value=1.2, max_value=3.0),
)
def test_a_timed_series_steps_where_the_interval_excludes_one(
    n: int, at: int, change: float
) -> None:
    at = min(at, n - 1)
    points = [SeriesPoint("v0", 100.0, "time")]
    for i in range(1, n):
        ratio = change if i == at else 1.0
        points.append(
            SeriesPoint(
                f"v{i}",
                points[-1].value * ratio,
                "time",
                ratio=ratio,
                low=ratio / 1.1,
                high=ratio * 1.1,
            )
        )
    assert [s.index for s in find_steps(points)] == [at]
    flat = [SeriesPoint(p.label, 100.0, "time", ratio=1.0, low=0.9, high=1.1) for p in points]
    assert find_steps(flat) == []


def test_series_attributes_a_counted_step_to_the_library_that_changed() -> None:
    runs = [
        ("0.21", [counted({"signing": [1000] * 3}, run_id=RUN_A)]),
        ("0.22", [counted({"signing": [1000, 1002, 1000]}, run_id=RUN_A)]),
        (
            "0.22+gcrypt",
            [counted({"signing": [1200] * 3}, run_id=RUN_B, packages={"libgcrypt": "1.12.0-1"})],
        ),
    ]
    all_series = series(runs)
    ((key, points),) = all_series.items()
    assert (key.arch, key.metric, key.row.operation) == ("amd64", "instructions", "signing")
    assert [p.value for p in points] == [100.0, 100.0, 120.0]
    assert [p.spread for p in points] == [0.0, 0.002, 0.0]
    (step,) = find_steps(points)
    assert (step.before, step.after) == ("0.22", "0.22+gcrypt")
    assert step.ratio == pytest.approx(1.2)
    assert step.cause == "libgcrypt 1.11.0-7 → 1.12.0-1"
    assert over_limit([step], 1.02) == [step]


def test_series_of_timed_runs_carries_the_pairs_intervals() -> None:
    def run(rho: float, run_id: str) -> list[Result]:
        return [
            timed({"signing": [round(x * rho * k) for x in SIGN]}, run_id=run_id, round_=i)
            for i, k in ((1, 1.0), (2, 1.05), (3, 0.97))
        ]

    runs = [("a", run(1.0, RUN_A)), ("b", run(2.0, RUN_B))]
    ((_, points),) = series(runs).items()
    assert math.isnan(points[0].low)
    assert points[1].ratio == pytest.approx(2.0, rel=1e-3)
    assert 1.3 < points[1].low < 2.0 < points[1].high
    assert 0 < points[1].p_value < 0.001 and points[1].q_value == points[1].p_value
    # Single container runs: no interval, so no step.
    flat = [("a", run(1.0, RUN_A)[:1]), ("b", run(2.0, RUN_B)[:1])]
    ((_, points_1),) = series(flat).items()
    assert math.isnan(points_1[1].low) and find_steps(points_1) == []
    (step,) = find_steps(points)
    assert (step.index, step.direction, step.metric) == (1, "up", "time")


def test_execution_without_interleaved_loads_as_an_ordinary_run() -> None:
    ex = Execution.model_validate(
        {
            "emulated": False,
            "host_arch": "amd64",
            "host_cpu": "x",
            "image_id": "i",
            "image_tag": "t",
        }
    )
    assert ex.interleaved is None and ex.repeat_index == 1


def test_the_matrixs_row_limits_win_over_fail_above_for_the_rows_they_name(tmp_path: Path) -> None:
    from archbench.analysis import limit_for
    from archbench.matrix import parse_row_limit

    root = _store(
        tmp_path,
        [
            counted({"signing": [1000] * 3, "blinding": [500] * 3}, run_id=RUN_A),
            counted({"signing": [1100] * 3, "blinding": [515] * 3}, run_id=RUN_B),
        ],
    )

    def gate(fail_above: float | None, *limits: tuple[str, float]) -> str:
        request = CompareRequest(
            results=root,
            out=tmp_path / "out",
            run_a=RUN_A,
            run_b=RUN_B,
            fail_above=fail_above,
            limits=tuple(parse_row_limit(name, ratio) for name, ratio in limits),
        )
        try:
            compare_runs(request, lambda _: None)
        except LimitExceeded as err:
            return str(err)
        return "passed"

    # signing grew 10 %, blinding 3 %.
    assert "2 counted row(s)" in gate(1.02)
    assert "1 counted row(s)" in gate(1.02, ("signing", 1.2))
    assert "blindsig CS blinding 1.0300× (limit 1.02)" in gate(1.02, ("signing", 1.2))
    assert gate(None, ("signing", 1.2)) == "passed"
    said = gate(None, ("CS signing", 1.05), ("signing", 1.5))
    assert said.startswith("the matrix's limits: 1 counted row(s)") and "(limit 1.05)" in said
    limits = [parse_row_limit("signing", 1.5), parse_row_limit("RSA-2048 signing", 1.1)]
    assert limit_for("RSA", 2048, "signing", limits, None) == 1.1
    assert limit_for("RSA", 4096, "signing", limits, None) == 1.5
    assert limit_for("CS", 0, "blinding", limits, 1.02) == 1.02
