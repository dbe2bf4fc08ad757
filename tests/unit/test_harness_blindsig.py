"""The harness's blindsig suite (harness/abh/suites/blindsig.py): rows and calibration
built from the driver's output, canned or from a model of its loop on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest
from abh.suites.blindsig import RunRequest, build_calibration, build_rows, expected_scheme_keys
from abh.suites.blindsig_document import RowDict
from abh.suites.blindsig_output import Discard, DriverOutputError, parse_driver_output
from abh.suites.blindsig_rules import (
    default_min_block_ns,
)
from harness_fakes import (
    CS_COSTS_NS,
    MS,
    FakeClock,
    calibrated_rows,
    driver_text,
    never_warn,
    simulate_pair,
    simulated_output,
)
from helpers import CS_OPS, RSA_OPS


def test_build_rows_gives_one_row_per_thesis_operation_in_order() -> None:
    out = parse_driver_output(driver_text(iterations=10, repetitions=2, rsa_bits=(1024, 2048)))
    expected = expected_scheme_keys(["CS", "RSA"], [1024, 2048])
    rows = build_rows(out, expected, RunRequest(10, 2), never_warn)

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
        out, expected_scheme_keys(["CS", "RSA"], [1024, 2048]), RunRequest(10, 2), never_warn
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
        build_rows(out, expected, request_, never_warn)


def test_build_rows_rejects_zero_sample_in_valid_row() -> None:
    text = driver_text(repetitions=1, rsa_bits=()).replace("\t0\t1000\n", "\t0\t0\n")
    out = parse_driver_output(text)
    with pytest.raises(DriverOutputError, match="valid but a sample is 0 ns"):
        build_rows(out, [("CS", None)], RunRequest(10, 1), never_warn)


@pytest.mark.parametrize("tick_ns", [1, 1000, MS])
def test_calibrated_rows_follow_the_rule(tick_ns: int) -> None:
    rows, _ = calibrated_rows(tick_ns)
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
    _, out = calibrated_rows(1)
    first = next(d for d in out.discards if d.operation == "unblinding" and d.kind == "calibration")
    out.discards[out.discards.index(first)] = Discard(
        "CS", None, "unblinding", "calibration", 10, 0, first.ns * 4
    )
    with pytest.raises(DriverOutputError, match="calibration went from 10 ops"):
        build_rows(out, [("CS", None)], RunRequest(10, 3, min_block_ns=MS), never_warn)


def test_calibration_that_stops_too_early_is_rejected() -> None:
    # Not calibrating while claiming to: blocks of 10 unblindings read ~900 ns.
    lines = simulate_pair(
        "CS", 0, CS_COSTS_NS, FakeClock(1), iterations=10, repetitions=2, warmup=0, min_block_ns=0
    )
    out = parse_driver_output(simulated_output([lines], MS))
    with pytest.raises(DriverOutputError, match="calibration stopped at 10 ops"):
        build_rows(out, [("CS", None)], RunRequest(10, 2, min_block_ns=MS), never_warn)


def test_budget_cuts_repetitions_and_says_so() -> None:
    # ~15 ms per CS repetition on the fake clock, budget 40 ms: calibration
    # and the warmup eat most of it, at least one timed repetition is taken.
    rows, out = calibrated_rows(1, max_time_ns=40 * MS)
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
        build_rows(out, [("CS", None)], request, never_warn)
    # With a budget of 10 us it is allowed.
    rows = build_rows(out, [("CS", None)], RunRequest(10, 3, max_time_ns=10_000), never_warn)
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
