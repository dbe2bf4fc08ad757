"""The harness's reader of the blindsig driver's output
(harness/abh/suites/blindsig_output.py), on canned driver text."""

from __future__ import annotations

import pytest
from abh.suites.blindsig_output import Discard, DriverOutputError, PairDone, parse_driver_output
from harness_fakes import driver_text

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
