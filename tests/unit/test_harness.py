"""In-container harness (harness/archbench_harness.py): the parts that need no GNUnet.

Its modules are imported from its package ``abh`` (``harness/`` is on the test path,
as in the image); ``main()`` lives in the entry script, loaded by path.
Driver runs are simulated with small shell scripts that print canned output,
or with a Python model of the driver's loop on a fake clock; the real
driver is exercised by tests/integration/test_harness_native.py.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from abh import cli, document, setup_cpu, setup_system
from abh.suites.blindsig import RunRequest, build_calibration, build_rows, expected_scheme_keys
from abh.suites.blindsig_document import RowDict
from abh.suites.blindsig_output import Discard, DriverOutputError, PairDone, parse_driver_output
from abh.suites.blindsig_rules import (
    default_min_block_ns,
    next_block_size,
    round_up_125,
    should_stop_repetitions,
)
from helpers import CS_OPS, RSA_OPS, SCHEMA, load_harness

H = load_harness()
MS = 1_000_000


def driver_text(
    iterations: int = 10,
    repetitions: int = 2,
    rsa_bits: tuple[int, ...] = (1024,),
    invalid: dict[tuple[str, int], str] | None = None,
    end: bool = True,
) -> str:
    """Canned uncalibrated blindsig stdout: sample ns = 1000 * (1 + rep) + op index."""
    lines = [
        "archbench-blindsig\t2",
        "meta\tgnunet_build_version\t0.20.0",
        "meta\tclock\tCLOCK_MONOTONIC",
        "meta\tmessage_bytes\t64",
        "meta\tclock_resolution_ns\t1",
        "meta\tclock_observed_tick_ns\t20",
        "meta\tclock_pair_overhead_ns\t18.50",
        "meta\tclock_probe_reads\t20000",
        "meta\tmin_block_ns\t0",
        "meta\tmax_block_ops\t100000",
        "meta\tmax_time_ns\t0",
    ]
    pairs: list[tuple[str, int, list[str]]] = [("CS", 0, CS_OPS)]
    pairs += [("RSA", bits, RSA_OPS) for bits in rsa_bits]
    for scheme, bits, ops in pairs:
        for rep in range(repetitions):
            for index, op in enumerate(ops):
                ns = 1000 * (1 + rep) + index
                lines.append(f"sample\t{scheme}\t{bits}\t{op}\t{iterations}\t{rep}\t{ns}")
        lines.append(f"done\t{scheme}\t{bits}\t{repetitions}\t0\t{repetitions * 9000}")
        if invalid and (scheme, bits) in invalid:
            lines.append(f"invalid\t{scheme}\t{bits}\t{invalid[(scheme, bits)]}")
    if end:
        lines.append("end\tok")
    return "\n".join(lines) + "\n"


def _never_warn(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


# --------------------------------------------------------------------------
# A model of blindsig's loop on a fake clock


class FakeClock:
    """A monotonic clock that advances continuously and reads in whole ticks.

    ``phase`` (fraction of a tick) places time 0 inside a tick, so a block
    of the same true length can read as k or k + 1 ticks.
    """

    def __init__(self, tick_ns: int, phase: float = 0.37) -> None:
        self.tick_ns = tick_ns
        self.true_ns = phase * tick_ns

    def read(self) -> int:
        return int(self.true_ns // self.tick_ns) * self.tick_ns

    def block(self, true_ns: float) -> int:
        """Advance by ``true_ns``; return what the clock says the block took."""
        t0 = self.read()
        self.true_ns += true_ns
        return self.read() - t0


def simulate_pair(
    scheme: str,
    bits: int,
    cost_ns: Mapping[str, float],
    clock: FakeClock,
    *,
    iterations: int,
    repetitions: int,
    warmup: int,
    min_block_ns: int,
    max_block_ops: int = 100_000,
    max_time_ns: int | None = None,
) -> list[str]:
    """Driver output lines of one pair, following run_pair() in blindsig.c.

    ``cost_ns`` is the true time of one operation; repetitions cost nothing
    outside their blocks.
    """
    ops = {op: iterations for op in cost_ns}
    calibrating = min_block_ns > 0
    rounds = warmups = taken = 0
    budget_spent = False
    start = clock.read()
    lines: list[str] = []
    while True:
        ns = {op: clock.block(ops[op] * cost_ns[op]) for op in cost_ns}
        nxt = {
            op: next_block_size(ops[op], ns[op], min_block_ns, max_block_ops)
            if calibrating
            else ops[op]
            for op in cost_ns
        }
        if nxt != ops:
            lines += [
                f"discard\t{scheme}\t{bits}\t{op}\tcalibration\t{ops[op]}\t{rounds}\t{ns[op]}"
                for op in cost_ns
            ]
            rounds += 1
            ops = nxt
        elif warmups < warmup and not budget_spent:
            calibrating = False
            lines += [
                f"discard\t{scheme}\t{bits}\t{op}\twarmup\t{ops[op]}\t{warmups}\t{ns[op]}"
                for op in cost_ns
            ]
            warmups += 1
        else:
            calibrating = False
            lines += [
                f"sample\t{scheme}\t{bits}\t{op}\t{ops[op]}\t{taken}\t{ns[op]}" for op in cost_ns
            ]
            taken += 1
        elapsed = clock.read() - start
        budget_spent = max_time_ns is not None and elapsed >= max_time_ns
        if not calibrating and should_stop_repetitions(taken, repetitions, elapsed, max_time_ns):
            break
    lines.append(f"done\t{scheme}\t{bits}\t{taken}\t{int(taken < repetitions)}\t{elapsed}")
    return lines


def simulated_output(pairs: Sequence[list[str]], min_block_ns: int, max_time_ns: int = 0) -> str:
    header = [
        "archbench-blindsig\t2",
        "meta\tclock\tCLOCK_MONOTONIC",
        "meta\tclock_resolution_ns\t1000000",
        f"meta\tmin_block_ns\t{min_block_ns}",
        "meta\tmax_block_ops\t100000",
        f"meta\tmax_time_ns\t{max_time_ns}",
    ]
    return "\n".join([*header, *(line for pair in pairs for line in pair), "end\tok"]) + "\n"


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


# --------------------------------------------------------------------------
# Driver output parsing


def test_parse_driver_output_reads_meta_samples_and_verdicts() -> None:
    text = driver_text(rsa_bits=(1024, 2048), invalid={("RSA", 2048): "sig 3 did not verify"})
    out = parse_driver_output(text)

    assert out.meta["gnunet_build_version"] == "0.20.0"
    assert out.meta["clock_resolution_ns"] == "1"
    assert len(out.samples) == 2 * (7 + 5 + 5)
    first = out.samples[0]
    assert (first.scheme, first.key_bits, first.operation) == ("CS", None, "key_generation")
    assert (first.ops_per_block, first.repetition, first.ns) == (10, 0, 1000)
    rsa = [s for s in out.samples if s.key_bits == 2048 and s.operation == "signing"]
    assert [(s.repetition, s.ns) for s in rsa] == [(0, 1002), (1, 2002)]
    assert out.invalid == {("RSA", 2048): "sig 3 did not verify"}
    assert out.done[("RSA", 1024)] == PairDone(taken=2, budget_exhausted=False, elapsed_ns=18000)


def test_parse_driver_output_reads_discarded_blocks() -> None:
    text = (
        "archbench-blindsig\t2\n"
        "discard\tCS\t0\tunblinding\tcalibration\t10\t0\t0\n"
        "discard\tRSA\t2048\tsigning\twarmup\t10\t0\t31000000\n"
        "done\tRSA\t2048\t1\t1\t9000000000\n"
        "end\tok\n"
    )
    out = parse_driver_output(text)
    assert out.discards == [
        Discard("CS", None, "unblinding", "calibration", 10, 0, 0),
        Discard("RSA", 2048, "signing", "warmup", 10, 0, 31_000_000),
    ]
    assert out.done == {("RSA", 2048): PairDone(1, True, 9_000_000_000)}


V2 = "archbench-blindsig\t2\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "does not start with"),
        ("archbench-blindsig\t1\nend\tok\n", "does not start with"),
        (V2 + "sample\tCS\t0\tsigning\t10\t0\t5\n", "truncated"),
        (V2 + "sample\tCS\t0\tsigning\t10\t0\t-5\nend\tok\n", "not an integer"),
        (V2 + "sample\tCS\t0\tsigning\t0\t0\t5\nend\tok\n", "ops per block 0"),
        (V2 + "sample\tCS\t512\tsigning\t1\t0\t5\nend\tok\n", "CS with key bits"),
        (V2 + "sample\tRSA\t1024\tr_derivation\t1\t0\t5\nend\tok\n", "no operation"),
        (V2 + "sample\tEC\t0\tsigning\t1\t0\t5\nend\tok\n", "unknown scheme"),
        (V2 + "bogus\tline\nend\tok\n", "unexpected"),
        (V2 + "end\tok\nmeta\tx\ty\n", "after 'end'"),
        (
            V2 + "sample\tCS\t0\tsigning\t1\t0\t5\nsample\tCS\t0\tsigning\t1\t0\t6\nend\tok\n",
            "duplicate sample",
        ),
        (V2 + "discard\tCS\t0\tsigning\tprobe\t1\t0\t5\nend\tok\n", "unknown discard kind"),
        (
            V2 + "discard\tCS\t0\tsigning\twarmup\t1\t0\t5\n"
            "discard\tCS\t0\tsigning\twarmup\t1\t0\t6\nend\tok\n",
            "duplicate warmup",
        ),
        (V2 + "done\tCS\t0\t1\t2\t5\nend\tok\n", "budget flag '2'"),
        (V2 + "done\tCS\t0\t1\t0\t5\ndone\tCS\t0\t1\t0\t5\nend\tok\n", "second 'done'"),
    ],
)
def test_parse_driver_output_rejects_untrustworthy_output(text: str, message: str) -> None:
    with pytest.raises(DriverOutputError, match=message):
        parse_driver_output(text)


def test_build_rows_gives_one_row_per_thesis_operation_in_order() -> None:
    out = parse_driver_output(driver_text(iterations=10, repetitions=2, rsa_bits=(1024, 2048)))
    expected = expected_scheme_keys(["CS", "RSA"], [1024, 2048])
    rows = build_rows(out, expected, RunRequest(10, 2), _never_warn)

    keys = [(r["scheme"], r["key_bits"], r["operation"]) for r in rows]
    assert keys == (
        [("CS", None, op) for op in CS_OPS]
        + [("RSA", 1024, op) for op in RSA_OPS]
        + [("RSA", 2048, op) for op in RSA_OPS]
    )
    blinding = rows[CS_OPS.index("blinding")]
    assert dict(blinding) == {
        "suite": "blindsig",
        "scheme": "CS",
        "key_bits": None,
        "operation": "blinding",
        "ops_per_block": 10,
        "samples_ns": [1003, 2003],
        "valid": True,
        "invalid_reason": None,
        "iterations_requested": 10,
        "calibrated": False,
        "repetitions_requested": 2,
        "budget_exhausted": False,
        "warmup_samples_ns": [],
        "calibration_blocks": [],
    }


def test_build_rows_marks_every_row_of_an_invalid_pair() -> None:
    reason = "RSA-2048 signature 0 of repetition 0 did not verify (rc=-1)"
    out = parse_driver_output(driver_text(rsa_bits=(1024, 2048), invalid={("RSA", 2048): reason}))
    rows = build_rows(
        out, expected_scheme_keys(["CS", "RSA"], [1024, 2048]), RunRequest(10, 2), _never_warn
    )

    by_bits: dict[Any, list[RowDict]] = {}
    for row in rows:
        by_bits.setdefault(row["key_bits"], []).append(row)
    assert [r["valid"] for r in by_bits[2048]] == [False] * 5
    assert {r["invalid_reason"] for r in by_bits[2048]} == {reason}
    assert all(r["valid"] and r["invalid_reason"] is None for r in by_bits[1024] + by_bits[None])


def test_build_rows_drops_unusable_samples_of_invalid_rows_and_warns() -> None:
    # A failure in repetition 0 stops the driver: later blocks never ran, and
    # the unblinding block was below clock resolution.
    text = "\n".join(
        [
            "archbench-blindsig\t2",
            "sample\tRSA\t1024\tkey_generation\t3\t0\t900",
            "sample\tRSA\t1024\tblinding\t3\t0\t80",
            "sample\tRSA\t1024\tsigning\t3\t0\t70",
            "sample\tRSA\t1024\tunblinding\t3\t0\t0",
            "done\tRSA\t1024\t1\t0\t2000",
            "invalid\tRSA\t1024\tunblinding block of 3 ops measured 0 ns",
            "end\tok",
        ]
    )
    warnings: list[str] = []
    rows = build_rows(parse_driver_output(text), [("RSA", 1024)], RunRequest(3, 5), warnings.append)

    assert [(r["operation"], r["samples_ns"], r["valid"]) for r in rows] == [
        ("key_generation", [900], False),
        ("blinding", [80], False),
        ("signing", [70], False),
    ]
    assert warnings == [
        "RSA-1024 unblinding: no samples before the failure; row omitted",
        "RSA-1024 verifying: no samples before the failure; row omitted",
    ]


def test_invalid_pair_that_failed_while_calibrating_keeps_its_last_discarded_block() -> None:
    # The driver stops a pair at its first failure, here in calibration
    # round 1: the rows must still say so rather than vanish.
    text = "\n".join(
        [
            "archbench-blindsig\t2",
            "discard\tRSA\t1024\tverifying\tcalibration\t10\t0\t650000",
            "discard\tRSA\t1024\tverifying\tcalibration\t20\t1\t1300000",
            "done\tRSA\t1024\t0\t0\t9000000",
            "invalid\tRSA\t1024\tRSA-1024 signature 0 of repetition 1 did not verify (rc=-1)",
            "end\tok",
        ]
    )
    warnings: list[str] = []
    rows = build_rows(
        parse_driver_output(text),
        [("RSA", 1024)],
        RunRequest(10, 3, min_block_ns=MS),
        warnings.append,
    )
    assert len(rows) == 1
    assert rows[0]["operation"] == "verifying"
    assert (rows[0]["ops_per_block"], rows[0]["samples_ns"]) == (20, [1_300_000])
    assert rows[0]["valid"] is False
    assert len(warnings) == 4


@pytest.mark.parametrize(
    ("expected", "request_", "message"),
    [
        ([("CS", None)], RunRequest(10, 2), "not requested"),
        ([("CS", None), ("RSA", 1024)], RunRequest(5, 2), "expected 5"),
        ([("CS", None), ("RSA", 1024)], RunRequest(10, 3), "2 of 3 repetitions taken"),
        ([("CS", None), ("RSA", 1024), ("RSA", 4096)], RunRequest(10, 2), "no 'done' line"),
        # Calibrating from 5 cannot have produced blocks of 10 without a step.
        ([("CS", None), ("RSA", 1024)], RunRequest(5, 2, min_block_ns=1), "first block"),
    ],
)
def test_build_rows_rejects_output_that_does_not_match_the_request(
    expected: list[tuple[str, int | None]], request_: Any, message: str
) -> None:
    out = parse_driver_output(driver_text(iterations=10, repetitions=2, rsa_bits=(1024,)))
    with pytest.raises(DriverOutputError, match=message):
        build_rows(out, expected, request_, _never_warn)


def test_build_rows_rejects_zero_sample_in_valid_row() -> None:
    text = driver_text(repetitions=1, rsa_bits=()).replace("\t0\t1000\n", "\t0\t0\n")
    out = parse_driver_output(text)
    with pytest.raises(DriverOutputError, match="valid but a sample is 0 ns"):
        build_rows(out, [("CS", None)], RunRequest(10, 1), _never_warn)


CS_COSTS_NS = {  # roughly this host's CS timings, per operation
    "key_generation": 15_000.0,
    "r_derivation": 35_000.0,
    "blinding_secret_derivation": 6_000.0,
    "blinding": 230_000.0,
    "signing": 6_000.0,
    "unblinding": 90.0,
    "verifying": 105_000.0,
}


def _calibrated_rows(tick_ns: int, **kwargs: Any) -> tuple[list[Any], Any]:
    min_block = default_min_block_ns(tick_ns, tick_ns)
    request = RunRequest(10, 3, min_block_ns=min_block, max_time_ns=kwargs.get("max_time_ns"))
    lines = simulate_pair(
        "CS",
        0,
        CS_COSTS_NS,
        FakeClock(tick_ns),
        iterations=10,
        repetitions=3,
        warmup=1,
        min_block_ns=min_block,
        **kwargs,
    )
    out = parse_driver_output(simulated_output([lines], min_block))
    return build_rows(out, [("CS", None)], request, _never_warn), out


@pytest.mark.parametrize("tick_ns", [1, 1000, MS])
def test_calibrated_rows_follow_the_rule(tick_ns: int) -> None:
    rows, _ = _calibrated_rows(tick_ns)
    by_op = {r["operation"]: r for r in rows}
    min_block = default_min_block_ns(tick_ns, tick_ns)

    for op, row in by_op.items():
        assert len(row["samples_ns"]) == 3
        assert len(row["warmup_samples_ns"]) == 1
        assert row["ops_per_block"] >= 10
        assert row["calibrated"] is (row["ops_per_block"] > 10)
        if row["ops_per_block"] < 100_000:
            assert min(row["samples_ns"]) >= min_block, op
    # Unblinding is far below any tick at 10 ops and must be grown the most.
    unblinding = by_op["unblinding"]
    assert unblinding["calibrated"]
    assert unblinding["calibration_blocks"][0] == {
        "ops_per_block": 10,
        "ns": unblinding["calibration_blocks"][0]["ns"],
    }
    assert unblinding["ops_per_block"] == max(r["ops_per_block"] for r in rows)


def test_a_calibration_step_the_rule_would_not_take_is_rejected() -> None:
    _, out = _calibrated_rows(1)
    first = next(d for d in out.discards if d.operation == "unblinding" and d.kind == "calibration")
    out.discards[out.discards.index(first)] = Discard(
        "CS", None, "unblinding", "calibration", 10, 0, first.ns * 4
    )
    with pytest.raises(DriverOutputError, match="calibration went from 10 ops"):
        build_rows(out, [("CS", None)], RunRequest(10, 3, min_block_ns=MS), _never_warn)


def test_calibration_that_stops_too_early_is_rejected() -> None:
    # Not calibrating while claiming to: blocks of 10 unblindings read ~900 ns.
    lines = simulate_pair(
        "CS", 0, CS_COSTS_NS, FakeClock(1), iterations=10, repetitions=2, warmup=0, min_block_ns=0
    )
    out = parse_driver_output(simulated_output([lines], MS))
    with pytest.raises(DriverOutputError, match="calibration stopped at 10 ops"):
        build_rows(out, [("CS", None)], RunRequest(10, 2, min_block_ns=MS), _never_warn)


def test_budget_cuts_repetitions_and_says_so() -> None:
    # ~15 ms per CS repetition on the fake clock, budget 40 ms: calibration
    # and the warmup eat most of it, at least one timed repetition is taken.
    rows, out = _calibrated_rows(1, max_time_ns=40 * MS)
    done = out.done[("CS", None)]
    assert done.budget_exhausted
    assert 1 <= done.taken < 3
    assert all(r["budget_exhausted"] for r in rows)
    assert all(len(r["samples_ns"]) == done.taken for r in rows)
    assert all(r["repetitions_requested"] == 3 for r in rows)


def test_a_budget_cut_the_rule_does_not_allow_is_rejected() -> None:
    text = driver_text(repetitions=2, rsa_bits=()).replace(
        "done\tCS\t0\t2\t0\t18000", "done\tCS\t0\t2\t1\t18000"
    )
    out = parse_driver_output(text)
    # 18 us elapsed against a 1 s budget: no reason to stop at 2 of 3.
    request = RunRequest(10, 3, max_time_ns=10**9)
    with pytest.raises(DriverOutputError, match="budget rule does not allow"):
        build_rows(out, [("CS", None)], request, _never_warn)
    # With a budget of 10 us it is allowed.
    rows = build_rows(out, [("CS", None)], RunRequest(10, 3, max_time_ns=10_000), _never_warn)
    assert all(r["budget_exhausted"] and len(r["samples_ns"]) == 2 for r in rows)


# --------------------------------------------------------------------------
# Clock and calibration meta


def test_build_calibration_from_driver_meta() -> None:
    out = parse_driver_output(driver_text())
    assert build_calibration(out.meta) == {
        "clock": "CLOCK_MONOTONIC",
        "resolution_ns": 1,
        "observed_tick_ns": 20,
        "pair_overhead_ns": 18.5,
        "probe_reads": 20000,
        "min_block_ns": 0,
        "max_block_ops": 100_000,
    }
    assert build_calibration({"min_block_ns": "5", "max_block_ops": "9"})["resolution_ns"] is None
    with pytest.raises(DriverOutputError, match="lacks meta min_block_ns"):
        build_calibration({"clock": "CLOCK_MONOTONIC"})


# --------------------------------------------------------------------------
# /proc/cpuinfo

CPUINFO_X86 = """\
processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 80
model name\t: AMD Ryzen 7 PRO 5850U with Radeon Graphics
stepping\t: 0
cpu MHz\t\t: 1900.000
flags\t\t: fpu vme de pse

processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD Ryzen 7 PRO 5850U with Radeon Graphics
"""

CPUINFO_RISCV64 = """\
processor\t: 0
hart\t\t: 1
isa\t\t: rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb
mmu\t\t: sv39
uarch\t\t: sifive,u74-mc
mvendorid\t: 0x489
marchid\t\t: 0x8000000000000007
mimpid\t\t: 0x4210427

"""

CPUINFO_RISCV64_NO_UARCH = """\
processor\t: 0
hart\t\t: 0
isa\t\t: rv64imafdch_zicsr_zifencei_zba_zbb_zbc_zbs_sstc
mmu\t\t: sv57

"""

CPUINFO_PPC64LE = """\
processor\t: 0
cpu\t\t: POWER9 (raw), altivec supported
clock\t\t: 2166.000000MHz
revision\t: 2.2 (pvr 004e 1202)

processor\t: 1
cpu\t\t: POWER9 (raw), altivec supported

timebase\t: 512000000
platform\t: PowerNV
model\t\t: 8335-GTH
machine\t\t: PowerNV 8335-GTH
firmware\t: OPAL
MMU\t\t: Radix
"""

CPUINFO_ARMV7 = """\
processor\t: 0
model name\t: ARMv7 Processor rev 3 (v7l)
BogoMIPS\t: 84.00
Features\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt
CPU implementer\t: 0x41
CPU architecture: 7
CPU variant\t: 0x0
CPU part\t: 0xc07
CPU revision\t: 3

Hardware\t: ODROID-XU4
Revision\t: 0100
Serial\t\t: 0000000000000000
"""

CPUINFO_ARMV6_OLD_KERNEL = """\
Processor\t: ARMv6-compatible processor rev 7 (v6l)
processor\t: 0
BogoMIPS\t: 697.95
Hardware\t: BCM2708
"""

CPUINFO_ARM64 = """\
processor\t: 0
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x0
CPU part\t: 0xd08
CPU revision\t: 3
"""


@pytest.mark.parametrize(
    ("text", "model"),
    [
        (CPUINFO_X86, "AMD Ryzen 7 PRO 5850U with Radeon Graphics"),
        (CPUINFO_RISCV64, "sifive,u74-mc"),
        (CPUINFO_RISCV64_NO_UARCH, "rv64imafdch_zicsr_zifencei_zba_zbb_zbc_zbs_sstc"),
        (CPUINFO_PPC64LE, "POWER9 (raw), altivec supported"),
        (CPUINFO_ARMV7, "ARMv7 Processor rev 3 (v7l)"),
        (CPUINFO_ARMV6_OLD_KERNEL, "ARMv6-compatible processor rev 7 (v6l)"),
        (CPUINFO_ARM64, "CPU implementer 0x41 part 0xd08"),
        ("", "unknown"),
        ("processor\t: 0\nmodel name\t:\n", "unknown"),
    ],
    ids=["x86", "riscv64", "riscv64-isa", "ppc64le", "armv7", "armv6", "arm64", "empty", "blank"],
)
def test_parse_cpuinfo(text: str, model: str) -> None:
    assert setup_cpu.parse_cpuinfo(text) == model


def test_read_cpu_model_without_proc(tmp_path: Path) -> None:
    assert setup_cpu.read_cpu_model(tmp_path / "missing") == "unknown"


# --------------------------------------------------------------------------
# os-release, dpkg, build info

OS_RELEASE_TRIXIE = """\
PRETTY_NAME="Debian GNU/Linux 13 (trixie)"
NAME="Debian GNU/Linux"
VERSION_ID="13"
VERSION="13 (trixie)"
VERSION_CODENAME=trixie
# a comment
ID=debian
HOME_URL='https://www.debian.org/'
QUOTED="say \\"hi\\" \\\\o/"
not a variable line
BAD KEY=x
"""


def test_parse_os_release() -> None:
    info = setup_system.parse_os_release(OS_RELEASE_TRIXIE)
    assert info["PRETTY_NAME"] == "Debian GNU/Linux 13 (trixie)"
    assert info["VERSION_CODENAME"] == "trixie"
    assert info["VERSION_ID"] == "13"
    assert info["HOME_URL"] == "https://www.debian.org/"
    assert info["QUOTED"] == 'say "hi" \\o/'
    assert "BAD KEY" not in info and len(info) == 8


def test_read_os_name_falls_back(tmp_path: Path) -> None:
    no_pretty = tmp_path / "os-release"
    no_pretty.write_text('NAME="Debian GNU/Linux"\nVERSION="12 (bookworm)"\n', encoding="utf-8")
    pretty = tmp_path / "usr-os-release"
    pretty.write_text('PRETTY_NAME="Ubuntu 24.04 LTS"\n', encoding="utf-8")

    assert setup_system.read_os_name([tmp_path / "missing", pretty]) == "Ubuntu 24.04 LTS"
    assert setup_system.read_os_name([no_pretty, pretty]) == "Debian GNU/Linux 12 (bookworm)"
    assert setup_system.read_os_name([tmp_path / "missing"]) == "unknown"


@pytest.mark.parametrize(
    ("text", "arch", "package"),
    [
        (
            "libgnunet0.20t64: /usr/lib/x86_64-linux-gnu/libgnunetutil.so.15\n"
            "libgnunet0.20t64: /usr/lib/x86_64-linux-gnu/libgnunetutil.so.15.0.0\n",
            "amd64",
            "libgnunet0.20t64",
        ),
        (
            "libsodium23:i386: /usr/lib/i386-linux-gnu/libsodium.so.23\n"
            "libsodium23:amd64: /usr/lib/x86_64-linux-gnu/libsodium.so.23\n",
            "amd64",
            "libsodium23:amd64",
        ),
        (
            "diversion by foo from: /usr/lib/libgcrypt.so.20\n"
            "libgcrypt20:riscv64: /usr/lib/riscv64-linux-gnu/libgcrypt.so.20\n",
            "riscv64",
            "libgcrypt20:riscv64",
        ),
        (
            "libsodium26:arm64: /usr/lib/aarch64-linux-gnu/libsodium.so.26\n",
            None,
            "libsodium26:arm64",
        ),
        ("", "amd64", None),
    ],
)
def test_parse_dpkg_search(text: str, arch: str | None, package: str | None) -> None:
    assert setup_system.parse_dpkg_search(text, arch) == package


def test_parse_build_info() -> None:
    text = "cc\tcc\ncflags\t-O2 -Wall -Wextra -Werror\nldflags\t\nno tab here\n"
    assert setup_system.parse_build_info(text) == {
        "cc": "cc",
        "cflags": "-O2 -Wall -Wextra -Werror",
        "ldflags": "",
    }


def test_kernel_string_matches_uname_srv() -> None:
    uname = os.uname_result(("Linux", "host", "6.1.0-28-amd64", "#1 SMP Debian", "x86_64"))
    assert setup_system.kernel_string(uname) == "Linux 6.1.0-28-amd64 #1 SMP Debian"


@pytest.mark.parametrize(
    ("text", "value"),
    [("1024,2048", [1024, 2048]), ("4096", [4096]), (" 512 , 16384", [512, 16384])],
)
def test_parse_rsa_bits_accepts(text: str, value: list[int]) -> None:
    assert cli.parse_rsa_bits(text) == value


@pytest.mark.parametrize(
    "text", ["", "1024,1024", "256", "20000", "2048,x", ",".join(["1024"] * 17)]
)
def test_parse_rsa_bits_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        cli.parse_rsa_bits(text)


# --------------------------------------------------------------------------
# CPU flags, cgroup limits, affinity, load

CPUINFO_RISCV64_NEW = """\
processor\t: 0
hart\t\t: 2
isa\t\t: rv64imafdcv_zicbom_zicboz_zicntr_zicsr_zifencei_zihintpause_zihpm_zba_zbb_zbs
mmu\t\t: sv39
uarch\t\t: thead,c908

"""


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        (CPUINFO_X86, ["fpu", "vme", "de", "pse"]),
        (
            CPUINFO_ARM64,
            ["fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "cpuid"],
        ),
        (
            CPUINFO_ARMV7,
            [
                "half",
                "thumb",
                "fastmult",
                "vfp",
                "edsp",
                "neon",
                "vfpv3",
                "tls",
                "vfpv4",
                "idiva",
                "idivt",
            ],
        ),
        (
            CPUINFO_RISCV64,
            ["rv64imafdc", "zicntr", "zicsr", "zifencei", "zihpm", "zba", "zbb"],
        ),
        (
            CPUINFO_RISCV64_NEW,
            [
                "rv64imafdcv",
                "zicbom",
                "zicboz",
                "zicntr",
                "zicsr",
                "zifencei",
                "zihintpause",
                "zihpm",
                "zba",
                "zbb",
                "zbs",
            ],
        ),
        (CPUINFO_PPC64LE, []),
        ("", []),
        # Only the first CPU's line counts, and "vmx flags" is not "flags".
        ("vmx flags\t: ept vpid\nflags\t: sse sse2\n\nflags\t: sse\n", ["sse", "sse2"]),
    ],
    ids=["x86", "arm64", "armv7", "riscv64", "riscv64-new", "ppc64le", "empty", "first-cpu"],
)
def test_parse_cpu_flags(text: str, flags: list[str]) -> None:
    assert setup_cpu.parse_cpu_flags(text) == flags


def test_read_cpu_flags_without_proc(tmp_path: Path) -> None:
    assert setup_cpu.read_cpu_flags(tmp_path / "missing") == []


def test_parse_self_cgroup() -> None:
    v1 = "12:cpuset:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n"
    assert setup_cpu.parse_self_cgroup(v1) == {
        "cpuset": "/docker/abc",
        "cpu": "/docker/abc",
        "cpuacct": "/docker/abc",
        "name=systemd": "/docker/abc",
        "": "/",
    }
    assert setup_cpu.parse_self_cgroup("0::/user.slice/session-2.scope\ngarbage\n") == {
        "": "/user.slice/session-2.scope"
    }


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("150000 100000", (150000, 100000)),
        ("max 100000", (None, 100000)),
        ("max", (None, None)),
        ("", (None, None)),
        ("x y", (None, None)),
    ],
)
def test_parse_cpu_max(text: str, parsed: tuple[int | None, int | None]) -> None:
    assert setup_cpu.parse_cpu_max(text) == parsed


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def test_cpu_limits_cgroup_v2_container(tmp_path: Path) -> None:
    # docker run --cpus 1.5 --cpuset-cpus 0-1 on a cgroup v2 host: the
    # container's cgroup namespace makes its cgroup the root.
    _tree(tmp_path, {"fs/cpu.max": "150000 100000\n", "fs/cpuset.cpus.effective": "0-1\n"})
    _tree(tmp_path, {"self": "0::/\n"})
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "self") == {
        "cgroup": "v2",
        "quota_us": 150000,
        "period_us": 100000,
        "cpus": 1.5,
        "cpuset": "0-1",
    }


def test_cpu_limits_cgroup_v2_prefers_own_cgroup_and_reads_no_limit(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "fs/cpuset.cpus.effective": "0-63\n",
            "fs/user.slice/s.scope/cpu.max": "max 100000\n",
            "fs/user.slice/s.scope/cpuset.cpus.effective": "2,4-5\n",
            "self": "0::/user.slice/s.scope\n",
        },
    )
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "self") == {
        "cgroup": "v2",
        "quota_us": None,
        "period_us": 100000,
        "cpus": None,
        "cpuset": "2,4-5",
    }


def test_cpu_limits_cgroup_v1_container(tmp_path: Path) -> None:
    # Docker on cgroup v1 bind-mounts the container's cgroups at the
    # controller roots; /proc/self/cgroup still names /docker/<id>.
    _tree(
        tmp_path,
        {
            "fs/cpu,cpuacct/cpu.cfs_quota_us": "50000\n",
            "fs/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            "fs/cpuset/cpuset.cpus": "3\n",
            "self": "4:cpu,cpuacct:/docker/abc\n3:cpuset:/docker/abc\n0::/docker/abc\n",
        },
    )
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "self") == {
        "cgroup": "v1",
        "quota_us": 50000,
        "period_us": 100000,
        "cpus": 0.5,
        "cpuset": "3",
    }


def test_cpu_limits_cgroup_v1_unlimited_host(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "fs/cpu/cpu.cfs_quota_us": "-1\n",
            "fs/cpu/cpu.cfs_period_us": "100000\n",
            "fs/cpuset/cpuset.cpus": "0-3\n",
            "fs/cpuset/cpuset.effective_cpus": "0-1\n",
        },
    )
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "missing") == {
        "cgroup": "v1",
        "quota_us": None,
        "period_us": 100000,
        "cpus": None,
        "cpuset": "0-1",
    }


def test_cpu_limits_none_without_cgroups(tmp_path: Path) -> None:
    (tmp_path / "fs").mkdir()
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "missing") is None
    assert setup_cpu.read_cpu_limits(tmp_path / "nothing", tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("text", "load"),
    [
        ("1.30 0.95 0.65 4/127 15733\n", [1.3, 0.95, 0.65]),
        ("0.00 0.01 0.05 1/1 1", [0.0, 0.01, 0.05]),
        ("", None),
        ("1.0 2.0", None),
        ("a b c 1/1 1", None),
        ("nan 1 1 1/1 1", None),
    ],
)
def test_parse_loadavg(text: str, load: list[float] | None) -> None:
    assert setup_cpu.parse_loadavg(text) == load


def test_read_load_average_and_affinity_on_this_host(tmp_path: Path) -> None:
    assert setup_cpu.read_load_average(tmp_path / "missing") is None
    load = setup_cpu.read_load_average()
    assert load is None or (len(load) == 3 and all(x >= 0 for x in load))
    affinity = setup_cpu.read_cpu_affinity()
    assert affinity is None or (affinity == sorted(affinity) and len(affinity) >= 1)


@pytest.mark.parametrize("text", ["1", "0.25", "1e3", "30.0"])
def test_parse_seconds_accepts(text: str) -> None:
    assert cli.parse_seconds(text) == float(text)


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "1e7", "", "soon"])
def test_parse_seconds_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        cli.parse_seconds(text)


# --------------------------------------------------------------------------
# Whole documents


def _setup() -> dict[str, Any]:
    return {
        "cpu_model": "AMD Ryzen 7 PRO 5850U with Radeon Graphics",
        "cores": 8,
        "machine": "x86_64",
        "kernel": "Linux 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1",
        "os": "Debian GNU/Linux 13 (trixie)",
        "packages": {
            "libgnunetutil": "0.20.0-7",
            "libsodium": "1.0.18-1",
            "libgcrypt": None,
            "openssl": "3.5.1-1",
            "gcc": "4:14.2.0-1",
        },
        "package_names": {
            "libgnunetutil": "libgnunet0.20t64",
            "libsodium": "libsodium23:amd64",
            "libgcrypt": None,
            "openssl": "libssl3t64:amd64",
            "gcc": "gcc",
        },
        "gnunet_version": "0.20.0",
        "gcc_version": "gcc (Debian 14.2.0-19) 14.2.0",
        "clock_resolution_ns": 1,
        "build": {"cflags": "-O2 -Wall -Wextra -Werror"},
        "cpu_flags": ["fpu", "sse2", "avx2"],
        "cpu_affinity": [0, 1],
        "cpu_limits": setup_cpu.cpu_limits("v2", 150000, 100000, "0-1"),
        "load_average": [0.5, 0.25, 0.1],
    }


def _parameters() -> dict[str, Any]:
    return {
        "iterations": 10,
        "repetitions": 2,
        "rsa_bits": [1024, 2048],
        "schemes": ["CS", "RSA"],
        "message_bytes": 64,
        "warmup": 1,
        "max_time_s": 30.0,
        "min_block_ns": None,
    }


def _document() -> dict[str, Any]:
    out = parse_driver_output(
        driver_text(rsa_bits=(1024, 2048), invalid={("CS", 0): "CS signature 1 did not verify"})
    )
    rows = build_rows(
        out, expected_scheme_keys(["CS", "RSA"], [1024, 2048]), RunRequest(10, 2), print
    )
    started = datetime(2026, 11, 29, 22, 40, 0, 123456, tzinfo=UTC)
    # Plain dicts stand in for the TypedDicts, as in the JSON the host reads.
    build: Any = document.build_document
    doc: dict[str, Any] = build(
        started, 12.34567, _parameters(), build_calibration(out.meta), _setup(), rows
    )
    return doc


def test_build_document_validates_against_schema() -> None:
    doc = _document()

    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["format"] == "archbench-harness"
    assert doc["version"] == 1
    assert doc["started_at"] == "2026-11-29T22:40:00Z"
    assert doc["duration_s"] == 12.346
    assert len(doc["rows"]) == 17
    assert [r["valid"] for r in doc["rows"][:7]] == [False] * 7
    # The schema is what the host checks too: make sure it would catch breakage.
    broken = json.loads(json.dumps(doc))
    broken["rows"][0]["samples_ns"] = [0]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(broken)


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    broken: dict[str, Any] = json.loads(json.dumps(doc))
    *parents, last = path.split(".")
    node: Any = broken
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[last] = value
    return broken


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("rows.0.calibrated", "yes"),
        ("rows.0.iterations_requested", 0),
        ("rows.0.repetitions_requested", 0),
        ("rows.0.budget_exhausted", None),
        ("rows.0.warmup_samples_ns", [-1]),
        ("rows.0.calibration_blocks", [{"ops_per_block": 0, "ns": 5}]),
        ("rows.0.calibration_blocks", [{"ops_per_block": 10}]),
        ("parameters.warmup", -1),
        ("parameters.max_time_s", 0),
        ("parameters.min_block_ns", -5),
        ("calibration.min_block_ns", None),
        ("calibration.pair_overhead_ns", "fast"),
        ("calibration.observed_tick_ns", 0),
        ("setup.cpu_flags", "fpu sse2"),
        ("setup.cpu_affinity", [-1]),
        ("setup.cpu_limits", {"cgroup": "v3"}),
        ("setup.cpu_limits.cpus", 0),
        ("setup.load_average", [1.0, 2.0]),
        ("setup.gcc_version", 14),
    ],
)
def test_schema_types_the_new_fields(path: str, value: Any) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(_set(_document(), path, value))


def test_schema_still_accepts_documents_without_the_new_fields() -> None:
    # Stored version 1 results from before calibration must stay valid.
    doc = _document()
    del doc["calibration"]
    for key in ("warmup", "max_time_s", "min_block_ns"):
        del doc["parameters"][key]
    for key in ("gcc_version", "cpu_flags", "cpu_affinity", "cpu_limits", "load_average"):
        del doc["setup"][key]
    for row in doc["rows"]:
        for key in (
            "iterations_requested",
            "calibrated",
            "repetitions_requested",
            "budget_exhausted",
            "warmup_samples_ns",
            "calibration_blocks",
        ):
            del row[key]
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def test_schema_allows_unknown_cpu_limits_and_no_load() -> None:
    doc = _document()
    doc["setup"]["cpu_limits"] = None
    doc["setup"]["load_average"] = None
    doc["setup"]["cpu_affinity"] = None
    doc["calibration"]["observed_tick_ns"] = None
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def _fake_driver(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "blindsig"
    script.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    script.chmod(0o700)
    return script


def _hermetic_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = {"libgnunetutil": "0.20.0-7", "libsodium": "1.0.18-1+deb13u1", "libgcrypt": None}
    names = {"libgnunetutil": "libgnunet0.20t64", "libsodium": "libsodium23", "libgcrypt": None}
    monkeypatch.setattr(setup_system, "package_versions", lambda: (versions, names))
    monkeypatch.setattr(setup_system, "_run_quiet", lambda argv, timeout_s=60.0: None)
    monkeypatch.setattr(setup_cpu, "read_cpu_limits", lambda: None)
    monkeypatch.setattr(setup_cpu, "read_load_average", lambda: [0.5, 0.25, 0.125])


def test_main_prints_one_valid_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    canned = tmp_path / "canned.txt"
    canned.write_text(driver_text(iterations=4, repetitions=2, rsa_bits=(1024, 3072)), "utf-8")
    argv_log = tmp_path / "argv.txt"
    driver = _fake_driver(tmp_path, f'echo "$@" > {argv_log}\ncat {canned}\n')
    (tmp_path / "build-info.txt").write_text("cflags\t-O2 -Wall\ncc\tgcc\n", encoding="utf-8")
    _hermetic_setup(monkeypatch)

    code = H.main(
        [
            "--iterations",
            "4",
            "--repetitions",
            "2",
            "--rsa-bits",
            "1024,3072",
            "--driver",
            str(driver),
        ]
    )

    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert argv_log.read_text(encoding="utf-8").split() == [
        "--iterations",
        "4",
        "--repetitions",
        "2",
        "--warmup",
        "1",
        "--scheme",
        "all",
        "--rsa-bits",
        "1024,3072",
        "--interactive",
    ]
    doc = json.loads(captured.out)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["parameters"] == {
        "iterations": 4,
        "repetitions": 2,
        "rsa_bits": [1024, 3072],
        "schemes": ["CS", "RSA"],
        "message_bytes": 64,
        "warmup": 1,
        "max_time_s": None,
        "min_block_ns": None,
        "ci_target": None,
        "min_repetitions": 6,
        "confidence": 0.95,
        "order": "sequential",
        "order_seed": None,
        "driver_involuntary_switches": doc["parameters"]["driver_involuntary_switches"],
        "fresh_items": False,
    }
    assert isinstance(doc["parameters"]["driver_involuntary_switches"], int)
    assert doc["calibration"]["observed_tick_ns"] == 20
    assert doc["calibration"]["pair_overhead_ns"] == 18.5
    setup = doc["setup"]
    assert setup["packages"]["libgnunetutil"] == "0.20.0-7"
    assert setup["gnunet_version"] == "0.20.0"  # from the driver, pkg-config "failed"
    assert setup["gcc_version"] is None
    assert setup["build"] == {"cflags": "-O2 -Wall", "cc": "gcc"}
    assert setup["clock_resolution_ns"] == 1
    assert setup["cores"] >= 1
    assert setup["load_average"] == [0.5, 0.25, 0.125]
    assert setup["cpu_limits"] is None
    assert len(doc["rows"]) == 7 + 5 + 5
    assert all(r["valid"] and not r["calibrated"] for r in doc["rows"])


def test_main_passes_calibration_warmup_and_budget_to_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    canned = tmp_path / "canned.txt"
    canned.write_text(driver_text(iterations=3, repetitions=1, rsa_bits=()), "utf-8")
    argv_log = tmp_path / "argv.txt"
    driver = _fake_driver(tmp_path, f'echo "$@" > {argv_log}\ncat {canned}\n')
    _hermetic_setup(monkeypatch)

    code = H.main(
        [
            "--iterations=3",
            "--repetitions=1",
            "--scheme=cs",
            "--warmup=0",
            "--min-block-ns=0",
            "--max-time=2.5",
            "--progress",
            f"--driver={driver}",
        ]
    )

    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    args = argv_log.read_text(encoding="utf-8").split()
    assert args == [
        "--iterations",
        "3",
        "--repetitions",
        "1",
        "--warmup",
        "0",
        "--scheme",
        "cs",
        "--min-block-ns",
        "0",
        "--max-time",
        "2.5",
        "--progress",
        "--interactive",
    ]
    assert doc["parameters"]["max_time_s"] == 2.5
    assert doc["parameters"]["min_block_ns"] == 0
    assert doc["parameters"]["warmup"] == 0


def test_main_cs_only_reports_no_rsa_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    canned = tmp_path / "canned.txt"
    canned.write_text(driver_text(iterations=3, repetitions=1, rsa_bits=()), "utf-8")
    argv_log = tmp_path / "argv.txt"
    driver = _fake_driver(tmp_path, f'echo "$@" > {argv_log}\ncat {canned}\n')
    _hermetic_setup(monkeypatch)

    code = H.main(
        ["--iterations", "3", "--repetitions", "1", "--scheme", "cs", "--driver", str(driver)]
    )

    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert "--rsa-bits" not in argv_log.read_text(encoding="utf-8")
    assert doc["parameters"]["rsa_bits"] == []
    assert doc["parameters"]["schemes"] == ["CS"]
    assert [r["operation"] for r in doc["rows"]] == CS_OPS
    assert doc["setup"]["build"] == {}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("echo 'archbench-blindsig\t2'\nexit 3\n", "exited with status 3"),
        ("kill -SEGV $$\n", "killed by SIGSEGV"),
        (
            "printf 'archbench-blindsig\\t2\\nsample\\tCS\\t0\\tsigning\\t10\\t0\\t5\\n'\n",
            "truncated",
        ),
        ("printf 'archbench-blindsig\\t2\\nend\\tok\\n'\n", "lacks meta min_block_ns"),
    ],
    ids=["exit-status", "signal", "truncated", "no-calibration-meta"],
)
def test_main_driver_failure_exits_2_without_stdout(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    body: str,
    message: str,
) -> None:
    driver = _fake_driver(tmp_path, body)
    _hermetic_setup(monkeypatch)

    code = H.main(["--iterations", "10", "--repetitions", "1", "--driver", str(driver)])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert message in captured.err


def test_main_missing_driver_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = H.main(["--driver", str(tmp_path / "nope")])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert "missing or not executable" in captured.err


def test_fake_clock_reads_whole_ticks() -> None:
    clock = FakeClock(1000, 0.5)
    assert clock.read() == 0
    assert clock.block(499) == 0
    assert clock.block(2) == 1000
    assert math.isclose(clock.true_ns, 1001)
