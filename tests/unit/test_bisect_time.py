"""``invoke bisect --metric time``: a timed step's decision, its replay, and the flags.

The decision is checked for what it promises on data drawn from a noise model of
interleaved rounds (each round's machine multiplies every version of the round alike,
each block has its own noise): a probe at one end is almost never decided to be at the
other, and with a clear move and enough rounds it is decided correctly.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archbench import cli
from archbench.analysis import (
    GOOD_LEVEL,
    Count,
    Graph,
    Measurement,
    TInterval,
    arch_state,
    next_probe,
    round_t_interval,
    time_decision,
    time_level,
    time_move,
)
from archbench.cli.bisect import bisect_options, undecided_lines
from archbench.cli.flags import BISECT, Given
from archbench.errors import MatrixError
from archbench.result import BisectCount, BisectManifest, BisectStep, BisectTime


def _rounds(
    rng: random.Random, levels: list[float], n: int, noise: float, drift: float
) -> list[list[list[float]]]:
    """``n`` rounds of per-operation times (ns) of versions at ``levels``: 3 blocks each,
    a shared per-round drift factor and independent lognormal block noise."""
    out = []
    for _ in range(n):
        d = math.exp(rng.gauss(0, drift))
        out.append([[lv * d * math.exp(rng.gauss(0, noise)) for _ in range(3)] for lv in levels])
    return out


def _decide(rng: random.Random, probe_at_bad: bool, effect: float, n: int, noise: float) -> str:
    good, bad = 10_000.0, 10_000.0 * effect
    probe = bad if probe_at_bad else good
    rounds = _rounds(rng, [good, probe, bad], n, noise, drift=0.05)
    vs_good = round_t_interval([(r[0], r[1]) for r in rounds])
    vs_bad = round_t_interval([(r[2], r[1]) for r in rounds])
    move = time_move(round_t_interval([(r[0], r[2]) for r in rounds]))
    if move not in ("slower", "faster"):
        return "no move"
    return time_decision(vs_good, vs_bad, move)


def test_a_probe_is_almost_never_put_at_the_wrong_end() -> None:
    """Noise of 3 % per block, 5 % drift per round, 5 rounds, a 10 % move: over 400 probes
    at each end, a wrong side at most 2.5 % of the time (each side needs an interval
    that excludes 1 at 95 % and a change beyond the 5 % threshold)."""
    rng = random.Random(20261203)  # noqa: S311  # a noise model, not a secret
    wrong = 0
    decided = 0
    for k in range(800):
        at_bad = k % 2 == 1
        got = _decide(rng, at_bad, 1.10, 5, 0.03)
        if got in ("like good", "like bad"):
            decided += 1
            wrong += got != ("like bad" if at_bad else "like good")
    assert wrong <= 0.025 * 800, wrong
    assert decided >= 0.8 * 800, decided  # and it decides most of them


def test_a_move_smaller_than_the_threshold_is_no_move_and_decides_nothing() -> None:
    rng = random.Random(7)  # noqa: S311  # a noise model, not a secret
    results = [_decide(rng, k % 2 == 1, 1.02, 5, 0.01) for k in range(200)]
    assert results.count("no move") >= 190


def _interval(ratio: float, half: float) -> TInterval:
    return TInterval(ratio, ratio / (1 + half), ratio * (1 + half), 0.01, 4, 0.5)


@given(
    st.floats(0.5, 2.0),
    st.floats(0.0, 0.5),
    st.floats(0.5, 2.0),
    st.floats(0.0, 0.5),
    st.sampled_from(["slower", "faster"]),
)
def test_the_decision_needs_both_intervals_and_mirrors_itself(
    rg: float, hg: float, rb: float, hb: float, move: str
) -> None:
    vs_good, vs_bad = _interval(rg, hg), _interval(rb, hb)
    got = time_decision(vs_good, vs_bad, move)
    if got == "like bad":  # moved from good the way bad did; bad's interval holds 1
        assert (vs_good.low > 1) if move == "slower" else (vs_good.high < 1)
        assert vs_bad.low <= 1 <= vs_bad.high or abs(math.log(rb)) <= math.log(1.05)
    if got == "like good":
        assert vs_good.low <= 1 <= vs_good.high or abs(math.log(rg)) <= math.log(1.05)
        assert (vs_bad.high < 1) if move == "slower" else (vs_bad.low > 1)
    # Seen from the other end (good and bad swapped, the move reversed) it is the mirror.
    back = "faster" if move == "slower" else "slower"
    mirror = time_decision(vs_bad, vs_good, back)
    assert {got, mirror} in ({"undecided"}, {"like good", "like bad"})


def test_no_move_decides_nothing() -> None:
    with pytest.raises(ValueError, match="bad did not move"):
        time_decision(_interval(1.0, 0.01), _interval(1.0, 0.01), "no significant change")


def test_levels_replay_as_the_counting_bisection_and_undecided_as_a_skip() -> None:
    assert time_level("like good", 1.3) == Count(GOOD_LEVEL)
    assert time_level("like bad", 1.3) == Count(1.3)
    assert time_level("undecided", 1.3) is None
    # A chain of 5 commits that moved at commit 3; commit 2 stays undecided.
    graph = Graph.linear(5)
    steps: list[tuple[int, Measurement]] = []
    truth = {0: "like good", 1: "like good", 2: "undecided", 3: "like bad", 4: "like bad"}
    while (probe := next_probe(graph, ["amd64"], steps)) is not None:
        if probe.commit == 0:
            level: Count | None = Count(GOOD_LEVEL)
        elif probe.commit == graph.bad:
            level = Count(1.3)
        else:
            level = time_level(truth[probe.commit], 1.3)  # type: ignore[arg-type]
        steps.append((probe.commit, {"amd64": level}))
    (search,) = arch_state(graph, "amd64", steps).searches
    assert search.done and not search.exact
    assert search.range == (2, 3)  # the undecided commit is no verdict: the range stays


def _manifest(undecided: bool) -> BisectManifest:
    commit = "a" * 40
    time = BisectTime(rounds=10, decision="undecided" if undecided else "like good", level=None)
    count = BisectCount(arch="amd64", target="amd64", run_id="20261203T000000Z-aaaaaa", time=time)
    step = BisectStep(
        index=1, commit=commit, subject="s", date="2026", counts=(count,), seconds=1.0,
        finished_at="2026",
    )  # fmt: skip
    return BisectManifest.model_validate(
        {
            "bisect_id": "20261203T000000Z-bbbbbb",
            "created_at": "2026",
            "matrix_file": "m.yml",
            "matrix_text": "",
            "repository": "file:///r.git",
            "good": "g",
            "bad": "b",
            "row": "CS signing",
            "scheme": "CS",
            "operation": "signing",
            "metric": "time",
            "rounds": 5,
            "max_rounds": 10,
            "targets": {"amd64": "amd64"},
            "commits": [{"commit": commit, "subject": "s", "date": "d"}] * 2,
            "steps": [step.model_dump()],
        }
    )


def test_undecided_probes_are_said_to_be_no_verdict() -> None:
    assert undecided_lines(_manifest(True)) == [
        "amd64: undecided by time, not taken as a verdict: aaaaaaaaaaaa (10 rounds)"
    ]
    assert undecided_lines(_manifest(False)) == []


def _settings(tmp_path: Path) -> cli.Settings:
    return cli.Settings(
        matrix=str(tmp_path / "none.yml"),
        results=str(tmp_path / "results"),
        reports=str(tmp_path / "reports"),
        work=str(tmp_path / "work"),
        apt_proxy="",
        build_jobs="2",
    )


NEW = {"gnunet": "git+file:///r.git", "good": "v1", "bad": "v2", "row": "CS signing"}


def test_time_takes_rounds_and_counts_refuse_them(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    opts = bisect_options(s, Given(BISECT, {**NEW, "metric": "time", "rounds": "4"}))
    assert (opts.metric, opts.rounds, opts.max_rounds) == ("time", 4, 8)
    opts = bisect_options(s, Given(BISECT, {**NEW, "metric": "time"}))
    assert (opts.rounds, opts.max_rounds) == (5, 10)
    opts = bisect_options(s, Given(BISECT, {**NEW}))
    assert (opts.metric, opts.rounds) == ("instructions", 0)
    with pytest.raises(MatrixError, match="--rounds is for --metric time"):
        bisect_options(s, Given(BISECT, {**NEW, "rounds": "4"}))
    with pytest.raises(MatrixError, match=r"allowed are instructions .* and time"):
        bisect_options(s, Given(BISECT, {**NEW, "metric": "cycles"}))


def test_emulated_targets_are_refused_for_time() -> None:
    from helpers import CI_MATRIX

    from archbench.cli.bisect_time import refuse_emulated
    from archbench.matrix import load
    from archbench.platforms import Arch

    m = load(CI_MATRIX)
    refuse_emulated(m, m.select(["ci-amd64"]), {"local": Arch.AMD64})  # native: fine
    with pytest.raises(MatrixError, match="ci-riscv64 would run under QEMU") as refused:
        refuse_emulated(m, m.select(["ci-riscv64"]), {"local": Arch.AMD64})
    assert refused.value.exit_code == 2


def test_a_timed_step_prints_its_decision() -> None:
    from archbench.cli.bisect import step_line, steps_of

    m = _manifest(True)
    step = m.steps[0]
    count = step.counts[0].model_copy(update={"verdict": "undecided (…): not a verdict"})
    line = step_line(step.model_copy(update={"counts": (count,)}))
    assert "amd64 undecided (…): not a verdict" in line and "skipped" not in line
    # Replayed as a skip (None); a decided one as its level.
    assert steps_of(m) == [(1, {"amd64": None})]
    decided = m.model_copy(
        update={
            "steps": (
                step.model_copy(
                    update={
                        "counts": (
                            step.counts[0].model_copy(
                                update={
                                    "time": BisectTime(rounds=5, decision="like bad", level=1.3)
                                }
                            ),
                        )
                    }
                ),
            )
        }
    )
    assert steps_of(decided) == [(1, {"amd64": Count(1.3)})]
