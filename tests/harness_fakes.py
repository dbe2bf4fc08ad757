"""Fakes for the harness's unit tests: canned blindsig driver output, a model of the
driver's loop (``run_pair()`` in blindsig.c) on a fake clock that reads in whole ticks,
and a whole harness document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from abh import document, setup_cpu
from abh.suites.blindsig import RunRequest, build_calibration, build_rows, expected_scheme_keys
from abh.suites.blindsig_output import parse_driver_output
from abh.suites.blindsig_rules import (
    default_min_block_ns,
    next_block_size,
    should_stop_repetitions,
)
from helpers import CS_OPS, RSA_OPS

MS = 1_000_000
"""One millisecond in ns."""


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


def never_warn(message: str) -> None:
    """A ``warn`` callback for runs that must not warn."""
    raise AssertionError(f"unexpected warning: {message}")


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


def harness_document() -> dict[str, Any]:
    """A whole harness document as the harness builds it (CS and RSA 1024/2048, one CS
    pair invalid), as the JSON the host reads: plain dicts."""
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


CS_COSTS_NS = {  # roughly this host's CS timings, per operation
    "key_generation": 15_000.0,
    "r_derivation": 35_000.0,
    "blinding_secret_derivation": 6_000.0,
    "blinding": 230_000.0,
    "signing": 6_000.0,
    "unblinding": 90.0,
    "verifying": 105_000.0,
}


def calibrated_rows(tick_ns: int, **kwargs: Any) -> tuple[list[Any], Any]:
    """CS rows (and the parsed output) of a calibrated run on a clock of ``tick_ns`` ns,
    simulated with :data:`CS_COSTS_NS`; ``kwargs`` go to :func:`simulate_pair`."""
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
    return build_rows(out, [("CS", None)], request, never_warn), out
