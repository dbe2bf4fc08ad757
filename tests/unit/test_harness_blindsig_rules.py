"""The harness's calibration and budget rules (harness/abh/suites/blindsig_rules.py).

Checked against a Python model of blindsig's loop on a fake clock (``harness_fakes``),
and the fake clock itself.
"""

from __future__ import annotations

import math

import pytest
from abh.suites.blindsig_rules import (
    default_min_block_ns,
    next_block_size,
    round_up_125,
    should_stop_repetitions,
)
from harness_fakes import MS, FakeClock

# --------------------------------------------------------------------------
# Calibration and budget rules


@pytest.mark.parametrize(
    ("n", "rounded"),
    [
        (1, 1),
        (2, 2),
        (3, 5),
        (5, 5),
        (6, 10),
        (10, 10),
        (11, 20),
        (21, 50),
        (51, 100),
        (12_500, 20_000),
        (100_000, 100_000),
        (100_001, 200_000),
    ],
)
def test_round_up_125(n: int, rounded: int) -> None:
    assert round_up_125(n) == rounded


def test_round_up_125_rejects_zero() -> None:
    with pytest.raises(ValueError, match="n must be >= 1"):
        round_up_125(0)


@pytest.mark.parametrize(
    ("ops", "block_ns", "min_block_ns", "max_ops", "expected"),
    [
        # Long enough, calibration off, or at the cap: unchanged.
        (10, MS, MS, 100_000, 10),
        (10, 5 * MS, MS, 100_000, 10),
        (10, 100, 0, 100_000, 10),
        (100_000, 100, MS, 100_000, 100_000),
        # Read 0 ns: no rate, grow tenfold.
        (10, 0, MS, 100_000, 100),
        (3, 0, MS, 100_000, 50),
        # Measured rate + 25 %: 10 ops in 1117 ns -> 11191.4 -> 20000.
        (10, 1117, MS, 100_000, 20_000),
        # 10 ops in 0.9 ms -> 13.9 -> 20 (a block just short still grows).
        (10, 900_000, MS, 100_000, 20),
        # 1 op in 0.6 ms -> ceil(2.08) = 3 -> 5.
        (1, 600_000, MS, 100_000, 5),
        # Exactly divisible: 10 ops in 250 us -> 50 exactly.
        (10, 250_000, MS, 100_000, 50),
        # Capped.
        (10, 10, MS, 100_000, 100_000),
        (10, 10, MS, 37, 37),
    ],
)
def test_next_block_size(
    ops: int, block_ns: int, min_block_ns: int, max_ops: int, expected: int
) -> None:
    assert next_block_size(ops, block_ns, min_block_ns, max_ops) == expected


def test_next_block_size_never_shrinks_and_always_grows_short_blocks() -> None:
    for ops in (1, 2, 3, 7, 10, 99, 1000, 99_999):
        for block_ns in (0, 1, 17, 999, 50_000, 999_999, MS, 10 * MS):
            got = next_block_size(ops, block_ns, MS, 100_000)
            assert got >= ops
            assert (got > ops) == (block_ns < MS and ops < 100_000), (ops, block_ns)


@pytest.mark.parametrize(
    ("resolution_ns", "tick_ns", "expected"),
    [
        (1, 20, MS),  # fine clock: the 1 ms floor
        (None, None, MS),
        (1, 4 * MS, 400 * MS),  # 1 ns reported, moves in 4 ms (jiffies): the tick counts
        (10 * MS, None, 1000 * MS),
        (10**9, 10**9, 60 * 10**9),  # capped at 60 s
    ],
)
def test_default_min_block_ns(
    resolution_ns: int | None, tick_ns: int | None, expected: int
) -> None:
    assert default_min_block_ns(resolution_ns, tick_ns) == expected


@pytest.mark.parametrize("phase", [0.0, 0.37, 0.99])
@pytest.mark.parametrize("cost_ns", [20_000.0, 3_000.0, 600.0])
def test_coarse_clock_grows_the_block_until_it_spans_100_ticks(
    phase: float, cost_ns: float
) -> None:
    # A 1 ms tick (old kernels, some VMs): 10 operations of a few us read as
    # 0 ns. The rule must grow the block until it reads >= 100 ticks, and
    # overshoot by no more than its headroom and rounding allow.
    tick = MS
    clock = FakeClock(tick, phase)
    min_block = default_min_block_ns(tick, tick)
    ops, history = 10, []
    while True:
        block_ns = clock.block(ops * cost_ns)
        history.append((ops, block_ns))
        nxt = next_block_size(ops, block_ns, min_block, 1_000_000)
        if nxt == ops:
            break
        assert nxt > ops
        ops = nxt
    needed = min_block / cost_ns
    assert history[0] == (10, 0) or history[0][1] <= tick  # below or at one tick
    assert len(history) > 1
    assert block_ns >= min_block
    assert ops * cost_ns >= min_block - tick
    assert ops <= 2 * 1.25 * 2.5 * needed, history


def test_sub_microsecond_operation_is_measured_in_thousands_per_block() -> None:
    # CS unblinding (~100 ns) on a 1 ns clock with the default 1 ms floor.
    clock = FakeClock(1, 0.0)
    min_block = default_min_block_ns(1, 20)
    ops = 10
    while (nxt := next_block_size(ops, clock.block(ops * 100.0), min_block, 100_000)) != ops:
        ops = nxt
    assert ops >= 10_000
    assert ops * 100.0 >= min_block


@pytest.mark.parametrize(
    ("taken", "requested", "elapsed_ns", "max_time_ns", "stop"),
    [
        (0, 3, 10**12, 10**9, False),  # at least one repetition, whatever the budget
        (1, 3, 10**12, 10**9, True),
        (1, 3, 10**9 - 1, 10**9, False),
        (1, 3, 10**9, 10**9, True),
        (2, 3, 10**12, None, False),  # no budget
        (3, 3, 0, None, True),
        (3, 3, 0, 10**9, True),
    ],
)
def test_should_stop_repetitions(
    taken: int, requested: int, elapsed_ns: int, max_time_ns: int | None, stop: bool
) -> None:
    assert should_stop_repetitions(taken, requested, elapsed_ns, max_time_ns) is stop


def test_fake_clock_reads_whole_ticks() -> None:
    clock = FakeClock(1000, 0.5)
    assert clock.read() == 0
    assert clock.block(499) == 0
    assert clock.block(2) == 1000
    assert math.isclose(clock.true_ns, 1001)
