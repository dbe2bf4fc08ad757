"""Issue 39: count steps only where a count can step.

A count is exact only where inputs, allocation and scheduling are. A counted row is
classified by its own repetitions (``exact``, ``varying``, ``random``) and compare, the
history's steps, its change points, the gate and the bisection's levels all follow the
kind. The A/A pairs are the issue's: RSA-2048 key generation 0.844× between two runs of
one build (random primes, −289 M instructions per key) and RSA-2048 blinding 1.001×
(+5,372 instructions per operation in libc's allocator). The per-block figures are
modelled on those (no stored RSA-2048 counting run was at hand): three blocks a side,
key generation's keys 1.6-2.3 G instructions each, blinding's blocks a few thousand
instructions per operation apart.
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest
from helpers import result, row
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import (
    MIN_COUNT_EFFECT,
    RANDOM_SPREAD,
    VARYING_FLOOR,
    Count,
    block_kind,
    compare,
    count_change,
    count_changes,
    count_constants,
    count_effect,
    count_kind,
    extra_levels,
    find_steps,
    over_limits,
    rank_ratio_interval,
    same_level,
    series,
    spread,
    whole_series,
)
from archbench.report import compare_tables
from archbench.result import Counting, Result, Row

RUN_A = "20261207T100000Z-aaaaaa"
RUN_B = "20261207T110000Z-bbbbbb"
OPS = 10
"""Operations per block of :func:`helpers.row`."""

KEYGEN_A = [1_620_000_000, 1_850_000_000, 2_310_000_000]
KEYGEN_B = [1_410_000_000, 1_561_000_000, 2_050_000_000]
"""Per-key instructions (× OPS per block): medians 1.85 G and 1.561 G, 0.844×."""
BLIND_A = [5_371_000, 5_372_900, 5_370_400]
BLIND_B = [x + 5_372 for x in BLIND_A]
"""Per-operation instructions of RSA-2048 blinding: +5,372 on B, 1.001×."""


def counted(
    counts: dict[tuple[str, int | None, str], list[int]], run_id: str, scale: int = OPS
) -> Result:
    """One counting result of amd64 with one row per ``(scheme, key_bits, operation)``,
    ``counts`` per operation (stored per block of :data:`OPS` operations; with
    ``scale=1``, ``counts`` are the blocks' own counts)."""
    rows: list[Row] = [
        row(scheme, op, [5] * len(xs), key_bits=bits).model_copy(
            update={"instructions": tuple(x * scale for x in xs)}
        )
        for (scheme, bits, op), xs in counts.items()
    ]
    base = result("amd64-trixie", "amd64", "x86_64", "Xeon", rows, run_id=run_id)
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


KEYGEN = ("RSA", 2048, "key_generation")
BLIND = ("RSA", 2048, "blinding")
SIGN = ("CS", None, "signing")


def a_a_pair() -> tuple[Result, Result]:
    """The issue's A/A history as two counting results of one build."""
    exact = [1_000_000] * 3
    a = counted({KEYGEN: KEYGEN_A, BLIND: BLIND_A, SIGN: exact}, RUN_A)
    b = counted({KEYGEN: KEYGEN_B, BLIND: BLIND_B, SIGN: exact}, RUN_B)
    return a, b


def test_the_issue_s_a_a_pair_has_no_count_step_in_compare_gate_history_or_bisection() -> None:
    a, b = a_a_pair()
    rows = {r.key.operation: r for r in compare([a], [b]) if r.metric == "instructions"}
    keygen, blind, sign = rows["key_generation"], rows["blinding"], rows["signing"]
    # Key generation: 0.844× in the medians, but its keys range ±37 %: random, by rank.
    assert keygen.count_kind == "random" and keygen.verdict == "no significant change"
    assert statistics.median(KEYGEN_B) / statistics.median(KEYGEN_A) == pytest.approx(0.844, 1e-3)
    assert "random by nature" in keygen.note and "never called or gated" in keygen.note
    # Three keys a side cannot give a 95 % rank interval (Mann–Whitney's smallest
    # two-sided p with 3 + 3 is 0.1).
    assert math.isnan(keygen.low) and keygen.p_value == pytest.approx(0.4, abs=0.01)
    # Blinding: +5,372 per operation (1.001×) within a row whose blocks vary: varying,
    # called only beyond 1 %.
    assert blind.count_kind == "varying" and blind.verdict == "no significant change"
    assert blind.b_instructions - blind.a_instructions == pytest.approx(5_372)
    assert blind.low < 1 < blind.high and blind.high / blind.ratio == pytest.approx(1.01)
    # The constant row stays exact.
    assert sign.count_kind == "exact" and sign.verdict == "no significant change"
    # The gate (--fail-above 1.0001) fails on none of them.
    assert over_limits([(r.key, r) for r in rows.values()], 1.0001, ()) == []
    # History: no step and no change point on any counted row.
    for key, points in series([("v1", [a]), ("v2", [b])]).items():
        if key.metric == "instructions":
            assert find_steps(points) == [], key
            values = [p.value for p in points]
            spreads = [p.spread for p in points]
            assert count_changes(["v1", "v2"], values, spreads) == []
    # Bisection (--bisect-steps): both ends at one level.
    for op_a, op_b in ((KEYGEN_A, KEYGEN_B), (BLIND_A, BLIND_B)):
        level = max(spread(op_a), spread(op_b))
        ends = Count(statistics.median(op_a), level), Count(statistics.median(op_b), level)
        assert same_level(*ends)
    # The table says which rows are which.
    md = compare_tables.markdown(list(rows.values()), RUN_A, RUN_B, 0.95)
    assert "random ±" in md and "not called" in md and "varying ±" in md and "exact" in md


def test_real_changes_of_exact_and_varying_rows_are_still_called() -> None:
    # Exact: 0.2 % more is a change. Varying (blocks 0.05 % apart): 3 % more is one,
    # 0.5 % is not (below the 1 % floor).
    a = counted({SIGN: [1_000_000] * 3, BLIND: BLIND_A}, RUN_A)
    b = counted({SIGN: [1_002_000] * 3, BLIND: [round(x * 1.03) for x in BLIND_A]}, RUN_B)
    rows = {r.key.operation: r for r in compare([a], [b]) if r.metric == "instructions"}
    assert (rows["signing"].count_kind, rows["signing"].verdict) == ("exact", "more instructions")
    assert (rows["blinding"].count_kind, rows["blinding"].verdict) == (
        "varying",
        "more instructions",
    )
    over = over_limits([(r.key, r) for r in rows.values()], 1.001, ())
    assert {r.key.operation for r, _ in over} == {"signing", "blinding"}
    small = counted({BLIND: [round(x * 1.005) for x in BLIND_A]}, RUN_B)
    (blind,) = [r for r in compare([a], [small]) if r.metric == "instructions"]
    assert blind.verdict == "no significant change"


@settings(max_examples=80, deadline=None)
@given(s=st.floats(min_value=0.0, max_value=2.0))
def test_kinds_and_bounds_follow_the_spread(s: float) -> None:
    kind = count_kind(s)
    bound = count_effect(s, MIN_COUNT_EFFECT)
    if s == 0:
        assert (kind, bound) == ("exact", MIN_COUNT_EFFECT)
    elif s <= RANDOM_SPREAD:
        assert kind == "varying" and bound is not None
        assert bound >= max(VARYING_FLOOR, 3 * s)
    else:
        assert (kind, bound) == ("random", None)


@settings(max_examples=60, deadline=None)
@given(
    a=st.lists(st.floats(min_value=1e3, max_value=1e9), min_size=1, max_size=12),
    factor=st.floats(min_value=0.2, max_value=5.0),
)
def test_the_rank_ratio_of_a_scaled_sample_is_the_scale(a: list[float], factor: float) -> None:
    ratio, low, high, p = rank_ratio_interval(a, [x * factor for x in a])
    assert ratio == pytest.approx(factor, rel=1e-9)
    assert 0 <= p <= 1
    if not math.isnan(low):
        assert low <= ratio * (1 + 1e-12) and high >= ratio * (1 - 1e-12)


def test_the_rank_interval_covers_95_percent_of_random_counts() -> None:
    # Eight keys a side, each a lognormal draw (sd 0.15, as key generation's primes).
    rng = np.random.default_rng(39)
    covered = n = 0
    for i in range(400):
        rho = 1.0 if i % 2 else 1.2
        a = list(1e9 * rng.lognormal(0.0, 0.15, 8))
        b = list(1e9 * rho * rng.lognormal(0.0, 0.15, 8))
        _, low, high, _ = rank_ratio_interval(a, b)
        n += 1
        covered += low <= rho <= high
    assert 0.93 <= covered / n <= 0.99


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="spread"):
        count_kind(-0.1)
    with pytest.raises(ValueError, match="has no counts"):
        rank_ratio_interval([], [1.0])
    with pytest.raises(ValueError, match="positive"):
        rank_ratio_interval([0.0], [1.0])
    with pytest.raises(ValueError, match="confidence"):
        rank_ratio_interval([1.0], [1.0], confidence=1.0)


MEASURED: dict[tuple[str, int | None, str], tuple[int, ...]] = {
    ("CS", None, "key_generation"): (444408, 444408, 449068),
    ("CS", None, "r_derivation"): (1054611, 1014021, 1054611),
    ("CS", None, "blinding_secret_derivation"): (222032, 222032, 181442),
    ("CS", None, "blinding"): (7074650, 7386074, 7115240),
    ("CS", None, "signing"): (158856, 118266, 158856),
    ("CS", None, "unblinding"): (2354, 2354, 2354),
    ("CS", None, "verifying"): (3337394, 3377984, 3337394),
    ("RSA", 1024, "key_generation"): (374072519, 240032682, 111368646),
    ("RSA", 1024, "blinding"): (3649062, 3460268, 3917153),
    ("RSA", 1024, "signing"): (24778986, 24688533, 24739533),
    ("RSA", 1024, "unblinding"): (13123996, 13084770, 13360020),
    ("RSA", 1024, "verifying"): (1993861, 1803001, 1997364),
}
"""Stored counts of a real run: the CI matrix's amd64 target (Debian trixie, libgcrypt
1.11.0-7+deb13u1), blindsig, 3 blocks of 2 operations, counted by the pipeline in
``tests/integration/test_callgrind_docker.py`` on 2026-12-07: instructions per block.
One block in three of several CS rows carries 40,590 instructions more or fewer
(libgcrypt's entropy-pool mixing)."""
KINDS = {
    "exact": {"CS unblinding"},
    "varying": {
        "CS key_generation",
        "CS r_derivation",
        "CS blinding",
        "CS verifying",
        "RSA signing",
        "RSA unblinding",
    },
    "random": {
        "CS blinding_secret_derivation",
        "CS signing",
        "RSA key_generation",
        "RSA blinding",
        "RSA verifying",
    },
}
"""The kinds by the spread alone (:func:`count_kind`)."""
BLOCK_KINDS = {
    "exact": {"CS unblinding"},
    "exact+extra": {
        "CS key_generation",
        "CS r_derivation",
        "CS blinding_secret_derivation",
        "CS signing",
        "CS verifying",
    },
    "varying": {"CS blinding", "RSA signing", "RSA unblinding"},
    "random": {"RSA key_generation", "RSA blinding", "RSA verifying"},
}
"""The kinds by the blocks (:func:`block_kind`): every CS row whose blocks take two
values is a constant with whole extra events, whichever level holds the majority."""


def test_the_kinds_of_a_real_counting_run() -> None:
    got: dict[str, set[str]] = {"exact": set(), "varying": set(), "random": set()}
    by_blocks: dict[str, set[str]] = {k: set() for k in BLOCK_KINDS}
    for (scheme, _, op), blocks in MEASURED.items():
        got[count_kind(spread(blocks))].add(f"{scheme} {op}")
        by_blocks[block_kind(blocks)].add(f"{scheme} {op}")
    assert got == KINDS
    assert by_blocks == BLOCK_KINDS


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_real_run_against_another_execution_of_the_same_build_has_no_count_step(
    data: st.DataObject,
) -> None:
    # Another execution of the same build: each row's blocks drawn again from the blocks
    # this run measured (the entropy-pool mixing, the allocator and the keys landing
    # elsewhere). Whatever is drawn, no row is called, stepped or gated.
    again = {
        key: [data.draw(st.sampled_from(blocks)) for _ in blocks]
        for key, blocks in MEASURED.items()
    }
    a = counted({k: [x // OPS for x in v] for k, v in MEASURED.items()}, RUN_A)
    b = counted({k: [x // OPS for x in v] for k, v in again.items()}, RUN_B)
    rows = [r for r in compare([a], [b]) if r.metric == "instructions"]
    assert len(rows) == len(MEASURED)
    assert [r for r in rows if r.changed] == []
    assert over_limits([(r.key, r) for r in rows], 1.0001, ()) == []
    for key, points in series([("v1", [a]), ("v2", [b])]).items():
        if key.metric == "instructions":
            assert find_steps(points) == [], key


MIX = 40_590
"""Instructions of one libgcrypt pool mix on amd64 with ``-cpu max`` (docs/counting.md)."""


def periodic_blocks(base: int, ops: int, rate: float, phase: float, blocks: int) -> list[int]:
    """Block counts of a constant path (``base`` per operation) plus a pool mix every
    ``1 / rate`` operations from ``phase`` on: block ``i`` holds the mixes whose
    positions fall in it (the model of :func:`extra_levels`)."""
    edges = [math.floor(phase + rate * ops * i) for i in range(blocks + 1)]
    return [base * ops + MIX * (hi - lo) for lo, hi in itertools.pairwise(edges)]


@settings(max_examples=150, deadline=None)
@given(
    base=st.integers(min_value=1_000, max_value=10_000_000),
    ops=st.integers(min_value=1, max_value=20),
    rate=st.floats(min_value=0.01, max_value=3.0),
    phases=st.tuples(st.floats(0, 1, exclude_max=True), st.floats(0, 1, exclude_max=True)),
    blocks=st.integers(min_value=3, max_value=8),
    step=st.sampled_from([0.0, 0.002, -0.002, 0.05, -0.3]),
)
def test_a_constant_with_pool_mixes_is_called_only_when_the_constant_moves(
    base: int,
    ops: int,
    rate: float,
    phases: tuple[float, float],
    blocks: int,
    step: float,
) -> None:
    # Two executions of one row: the same constant path and the same number of mixes per
    # operation; the mixes land elsewhere (another phase: what ran before differs). With
    # ``step`` the second's constant path moves by that fraction (a real change).
    moved = round(base * (1 + step))
    a = periodic_blocks(base, ops, rate, phases[0], blocks)
    b = periodic_blocks(moved, ops, rate, phases[1], blocks)
    res_a = counted({SIGN: a}, RUN_A, scale=1)
    res_b = counted({SIGN: b}, RUN_B, scale=1)
    (cmp,) = [r for r in compare([res_a], [res_b]) if r.metric == "instructions"]
    one_level = len(set(a)) == 1 and len(set(b)) == 1
    if not one_level:
        # Two levels somewhere: compared on the constant, as an exact row.
        assert cmp.count_kind == "exact+extra", (a, b)
    if step == 0:
        assert cmp.verdict == "no significant change", (a, b, cmp)
        assert over_limits([(cmp.key, cmp)], 1.0001, ()) == []
    elif abs(moved - base) * ops != MIX:  # a move of exactly one mix is the extra work's
        # The lower level of a side with two is the constant path with ⌊ops · rate⌋ mixes a
        # block; a side of one level may hold that many or one more: called only when
        # either reading of it moved beyond 0.1 % the same way.
        called = cmp.verdict != "no significant change"
        true_ratio = (moved * ops + MIX * math.floor(rate * ops)) / (
            base * ops + MIX * math.floor(rate * ops)
        )
        if called:
            assert (cmp.verdict == "more instructions") == (step > 0), (a, b, cmp)
        elif not one_level and len(set(a)) == 2 and len(set(b)) == 2:
            # Both sides show their constant: called as an exact row.
            assert abs(math.log(true_ratio)) <= math.log(1.0011), (a, b, cmp)
        if len(set(a)) == 2 and len(set(b)) == 2:
            assert cmp.ratio == pytest.approx(true_ratio, rel=1e-12)
        if abs(math.log(true_ratio)) > math.log(1 + MIX / min(a)) + 0.0011:
            assert called, (a, b, cmp)  # beyond what one mix more or less can explain
    # The history's steps and change points say the same as compare.
    (points,) = [p for k, p in series([("v1", [res_a]), ("v2", [res_b])]).items()
                 if k.metric == "instructions"]  # fmt: skip
    assert bool(find_steps(points)) == cmp.changed
    # A bisection's two counts, with the blocks its steps keep, say the same too; the
    # one verdict (count_change) is what every one of them decides with.
    end_a, end_b = (Count(statistics.median(x) / ops, spread(x), tuple(x), ops) for x in (a, b))
    assert same_level(end_a, end_b) == (not cmp.changed), (a, b, cmp)
    change = count_change(end_a, end_b)
    assert (change.verdict, change.kind) == (cmp.verdict, cmp.count_kind)


@settings(max_examples=60, deadline=None)
@given(
    base=st.integers(min_value=10_000, max_value=10_000_000),
    ops=st.integers(min_value=1, max_value=20),
    rate=st.floats(min_value=0.01, max_value=3.0),
    phases=st.lists(st.floats(0, 1, exclude_max=True), min_size=3, max_size=6),
)
def test_an_a_a_history_of_pool_mixes_has_no_step_and_no_change_point(
    base: int, ops: int, rate: float, phases: list[float]
) -> None:
    runs = [
        (f"v{i}", [counted({SIGN: periodic_blocks(base, ops, rate, p, 3)}, f"{RUN_A[:-1]}{i}", 1)])
        for i, p in enumerate(phases)
    ]
    for key, points in series(runs).items():
        if key.metric == "instructions":
            assert find_steps(points) == [], [p.blocks for p in points]
    assert [c for _, _, c in whole_series(runs) if c.metric == "instructions"] == []


def test_the_measured_two_level_rows_compare_on_their_constant() -> None:
    # CS signing, 2 operations a block: 58,593 or 78,888 per operation by where the mix
    # falls (docs/counting.md); two executions that caught it in other blocks are one
    # constant; 0.3 % more in the constant path is a change.
    a = [158856, 118266, 158856]
    assert extra_levels(a) == (118266, 158856) and extra_levels(a[:2]) is None
    assert extra_levels([1, 2, 3]) is None and extra_levels([5, 5, 5]) is None
    for b in ([118266, 118266, 158856], [158856] * 3, [118266] * 3, [158856, 118266, 118266]):
        (ca, cb) = count_constants([(a, 2), (b, 2)]) or []
        assert ca == (59133.0, 59133.0) and 59133.0 in cb
        ra, rb = counted({SIGN: a}, RUN_A, 1), counted({SIGN: b}, RUN_B, 1)
        (cmp,) = [r for r in compare([ra], [rb]) if r.metric == "instructions"]
        assert (cmp.count_kind, cmp.verdict, cmp.ratio) == (
            "exact+extra", "no significant change", 1.0
        )  # fmt: skip
        assert "40,590 instructions a block" in cmp.note
    # Other operations per block, or a side of three values: not read as levels.
    assert count_constants([(a, 2), (a, 4)]) is None
    assert count_constants([(a, 2), ([118266, 118267, 158856], 2)]) is None
    assert count_constants([([7] * 3, 2), ([8] * 3, 2)]) is None  # exact vs exact
    up = [x + 400 for x in a]  # +200 per operation: +0.34 % of the constant
    ra, rb = counted({SIGN: a}, RUN_A, 1), counted({SIGN: up}, RUN_B, 1)
    (cmp,) = [r for r in compare([ra], [rb]) if r.metric == "instructions"]
    assert (cmp.count_kind, cmp.verdict) == ("exact+extra", "more instructions")
    assert cmp.ratio == pytest.approx(59333 / 59133)
    assert {r.key for r, _ in over_limits([(cmp.key, cmp)], 1.001, ())} == {cmp.key}
    md = compare_tables.markdown([cmp], RUN_A, RUN_B, 0.95)
    assert "exact+extra ±" in md and "on the constant" in md
    with pytest.raises(ValueError, match="operations per block"):
        count_constants([(a, 0), (a, 2)])
