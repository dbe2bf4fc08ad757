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
    end_confidence,
    next_probe,
    round_t_interval,
    time_decision,
    time_end,
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


def _manifest(undecided: bool, index: int = 1, vs_good: tuple[float, ...] = ()) -> BisectManifest:
    """A timed bisection of 3 commits with one step: commit ``index`` (1 a probe, 2 the bad
    end) undecided or decided."""
    commit = "a" * 40
    decided = "like good" if index == 1 else "slower"
    time = BisectTime(
        rounds=10, decision="undecided" if undecided else decided, level=None, vs_good=vs_good
    )
    count = BisectCount(arch="amd64", target="amd64", run_id="20261203T000000Z-aaaaaa", time=time)
    step = BisectStep(
        index=index, commit=commit, subject="s", date="2026", counts=(count,), seconds=1.0,
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
            "commits": [
                {"commit": commit, "subject": "s", "date": "d", "parents": [i - 1] if i else []}
                for i in range(3)
            ],
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


# --- the bad end: more rounds while undecided, never "no move" from a wide interval ----


def _ends(ratio: float, low: float, high: float) -> TInterval:
    return TInterval(ratio, low, high, 0.01, 4, 0.5)


@given(
    st.floats(0.2, 5.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 0.2),
)
def test_an_end_is_no_move_only_when_its_interval_rules_out_a_move(
    ratio: float, below: float, above: float, narrow: float, threshold: float
) -> None:
    got = _ends(ratio, ratio / (1 + below), ratio * (1 + above))
    end = time_end(got, threshold)
    band = (1 / (1 + threshold), 1 + threshold)
    if end == "no significant change":  # every move the rounds allow is below the threshold
        assert band[0] <= got.low and got.high <= band[1]
    elif end == "undecided":
        assert time_move(got, threshold) == "no significant change"
        assert got.low < band[0] or got.high > band[1]
    else:
        assert end == time_move(got, threshold)
    # Seen the other way round (bad and good swapped) it is the mirror.
    mirror = time_end(_ends(1 / ratio, 1 / got.high, 1 / got.low), threshold)
    swap = {"slower": "faster", "faster": "slower"}
    assert mirror == swap.get(end, end)
    # More rounds narrow the interval around the ratio: a decided end stays decided.
    narrower = _ends(ratio, ratio / (1 + below * narrow), ratio * (1 + above * narrow))
    if end != "undecided":
        assert time_end(narrower, threshold) == end


def test_the_failing_ci_end_is_undecided_not_no_move() -> None:
    # The CI run of stop 42: bad 6.08x slower than good, 3 rounds beside the unit worker.
    assert time_end(_ends(6.08, 0.71, 52.2)) == "undecided"
    assert time_move(_ends(6.08, 0.71, 52.2)) == "no significant change"  # the old reading
    assert time_end(_ends(1.01, 0.98, 1.04)) == "no significant change"
    assert time_end(_ends(1.04, 1.01, 1.08)) == "undecided"  # may still be a 6 % move
    assert time_end(None) == "undecided"
    assert time_end(_ends(6.08, 5.0, 7.0)) == "slower"
    assert time_end(_ends(0.5, 0.4, 0.6)) == "faster"


def _loaded_end(
    rng: random.Random, effect: float, cap: int, looks: bool = True
) -> tuple[str, int, str]:
    """The bad end in a loaded machine's noise model (each version's level in a round
    drawn apart by 60 %, another job starting and stopping): rounds from 3 up to ``cap``
    while :func:`time_end` is undecided, each look at :func:`end_confidence` (``looks``
    False: at 95 % each). Returns (decision, rounds, decision at 3 rounds)."""
    good, bad = 10_000.0, 10_000.0 * effect
    rounds: list[tuple[list[float], list[float]]] = []
    at_three = ""
    confidence = end_confidence(3, cap) if looks else 0.95
    while True:
        load = [math.exp(rng.gauss(0, 0.6)) for _ in range(2)]
        rounds.append(
            tuple(
                [lv * ld * math.exp(rng.gauss(0, 0.03)) for _ in range(3)]
                for lv, ld in zip((good, bad), load, strict=True)
            )  # type: ignore[arg-type]
        )
        if len(rounds) < 3:
            continue
        end = time_end(round_t_interval(rounds, confidence=confidence))
        at_three = at_three or end
        if end != "undecided" or len(rounds) >= cap:
            return end, len(rounds), at_three


def test_a_large_move_on_a_loaded_machine_is_never_no_move() -> None:
    """A 6x move (the CI failure) in a noise model where 3 rounds often give an interval
    as wide as [0.71, 52.2]: no end is ever "no move"; more rounds (up to 6, twice
    --rounds 3) decide most that 3 rounds left undecided."""
    rng = random.Random(20261207)  # noqa: S311  # a noise model, not a secret
    got = [_loaded_end(rng, 6.08, 6) for _ in range(300)]
    assert all(end != "no significant change" for end, _, _ in got)
    undecided_at_three = sum(three == "undecided" for _, _, three in got)
    undecided = sum(end == "undecided" for end, _, _ in got)
    assert undecided_at_three >= 15, undecided_at_three  # the model does reach the failure
    assert undecided <= undecided_at_three / 3, (undecided, undecided_at_three)
    assert all(rounds == 6 for end, rounds, _ in got if end == "undecided")
    # An A/A pair is called a move in at most 5 % of bisections over all four looks (a
    # binomial bound of 300 draws: 25); at 95 % a look it would be far more often.
    aa = [_loaded_end(rng, 1.0, 6)[0] for _ in range(300)]
    assert aa.count("slower") + aa.count("faster") <= 25, aa
    naive = [_loaded_end(rng, 1.0, 6, looks=False)[0] for _ in range(300)]
    assert naive.count("slower") + naive.count("faster") > 25, naive


def test_an_undecided_bad_end_is_said_so_and_is_no_failure() -> None:
    from archbench.cli.bisect import outcome_lines, steps_of, undecided_end

    m = _manifest(True, index=2, vs_good=(6.08, 0.71, 52.2))
    states = [arch_state(Graph.linear(3), "amd64", steps_of(m))]
    assert states[0].status == "unmeasured"  # the good end is not in this record
    bad_step = m.steps[0]
    good_end = BisectTime(rounds=0, decision="good end", level=1)
    good_count = bad_step.counts[0].model_copy(update={"time": good_end})
    good_step = bad_step.model_copy(update={"index": 0, "counts": (good_count,)})
    m = m.model_copy(update={"steps": (good_step, bad_step)})
    states = [arch_state(Graph.linear(3), "amd64", steps_of(m))]
    assert states[0].status == "failed"  # no level for the bad end: nothing to bisect
    why = undecided_end(m, "amd64")
    assert why is not None and "6.080× [0.710, 52.200]" in why and "10 rounds" in why
    (line,) = outcome_lines(m, states)
    assert line.startswith("amd64: CS signing: undecided whether b moved")
    assert "did not build" not in line and "did not move" not in line
    assert undecided_lines(m) == []  # said once, in the outcome
    assert undecided_end(_manifest(False, index=2), "amd64") is None
