"""Rows and the pycryptopp-style summary of the ``sodium`` suite (standard library only).

:func:`build_outcome` turns parsed ``sodium_bench`` output
(``sodium_output``) into the suite's rows, with :func:`order_statistics`
(best / Nth best / mean / Nth worst / worst per operation) as the summary
pycryptopp printed. Nothing here runs the driver.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from abh.suites.common import SuiteOutcome, make_row
from abh.suites.sodium_output import (
    DRIVER_NAME,
    PER_BYTE_ROWS,
    SIGNATURE_ROWS,
    DriverOutput,
    DriverRow,
)

SUITE = "sodium"


def order_statistics(samples_ns: Sequence[int], ops_per_block: int, nth: int) -> dict[str, float]:
    """Best, Nth-best, mean, Nth-worst and worst time per operation, in ns.

    This is the pycryptopp convention (pyutil's ``benchutil.rep_bench``, which
    pycryptopp's benchmark printed as ``best: …, 3th-best: …, mean: …, 3th-worst:
    …, worst: … (of 8)``): every sample is one timed block; it is divided by the
    operations in the block, the per-operation times are sorted, and the k-th
    smallest is the "k-th best". Differences, on purpose: ``nth`` is chosen by the
    caller (pyutil derived it from the sample count, m = n // 4, and printed
    element m under the label m + 1); when fewer than ``nth`` samples exist the
    last one is used (pyutil's older ``min(m, n)`` rule), so with one sample all
    five figures are equal. For ns per byte divide by ``bytes_per_op``.

    Args:
        samples_ns: wall time of each timed block, ns (positive).
        ops_per_block: operations per block (>= 1).
        nth: which best / worst to report (>= 1; 3 in pycryptopp's 8-sample rows).

    Returns:
        ``{"best", "nth_best", "mean", "nth_worst", "worst"}``, ns per operation
        (floats); ``mean`` is the arithmetic mean.

    Raises:
        ValueError: no samples, a sample <= 0, ``ops_per_block`` < 1 or ``nth`` < 1.
    """
    if not samples_ns:
        raise ValueError("order_statistics needs at least one sample")
    if any(s <= 0 for s in samples_ns):
        raise ValueError("order_statistics: samples must be positive ns values")
    if ops_per_block < 1 or nth < 1:
        raise ValueError(
            f"order_statistics: ops_per_block = {ops_per_block} and nth = {nth} must be >= 1"
        )
    per_op = sorted(s / ops_per_block for s in samples_ns)
    k = min(nth, len(per_op))
    return {
        "best": per_op[0],
        "nth_best": per_op[k - 1],
        "mean": math.fsum(per_op) / len(per_op),
        "nth_worst": per_op[-k],
        "worst": per_op[-1],
    }


def _meta_number(meta: Mapping[str, str], key: str) -> float | None:
    try:
        return float(meta[key])
    except (KeyError, ValueError):
        return None


def _row_label(row: DriverRow) -> str:
    param = "" if row.size is None else f" {row.size} B"
    return f"{row.scheme} {row.operation}{param}"


def build_outcome(
    parsed: DriverOutput, config: Mapping[str, Any], warn: Callable[[str], None]
) -> SuiteOutcome:
    """Rows, tools and extra data from parsed driver output (nothing is run).

    A row whose check failed, or with a timed sample that read 0 ns (clock too coarse),
    becomes an invalid row; it keeps its positive timed samples, or, without any, its
    last non-zero warmup or calibration block (the contract's rule for blindsig); a
    row with no non-zero block at all is left out with a warning. ``extra`` holds the
    clock probe, libsodium's CPU features, each row's discarded blocks and a
    pycryptopp-style ``summary`` (:func:`order_statistics` of the valid rows, in µs per
    operation, or ns per byte for rows with ``bytes_per_op``).

    Args:
        parsed: from :func:`parse_driver_output`.
        config: normalized settings (:func:`normalize_config`).
        warn: receives one line per warning (missing row, samples near the clock's
            resolution, header / library version mismatch).

    Returns:
        The suite's :class:`SuiteOutcome`; ``tools["libsodium"]`` is the library's
        run-time version.
    """
    meta = parsed.meta
    version = meta["sodium_version"]
    header = meta.get("sodium_header_version")
    if header is not None and header != version:
        warn(f"{SUITE}: {DRIVER_NAME} was built against libsodium {header} but runs {version}")
    min_sample_ns = _meta_number(meta, "min_sample_ns")
    fixed_ops = config["ops_per_sample"] != "auto"
    rows: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    seen: set[tuple[str, str, int | None]] = set()
    for drow in parsed.rows:
        seen.add((drow.scheme, drow.operation, drow.size))
        label = _row_label(drow)
        timed = drow.blocks["sample"]
        reason = drow.invalid_reason
        zeros = sum(1 for _, ns in timed if ns == 0)
        if reason is None and zeros:
            reason = f"below clock resolution: {zeros} of {len(timed)} timed samples read 0 ns"
        if reason is None and not timed:
            reason = "the driver printed no timed sample"
        kept = [(ops, ns) for ops, ns in timed if ns > 0]
        if not kept and reason is not None:
            discarded = [b for b in drow.blocks["calib"] + drow.blocks["warmup"] if b[1] > 0]
            kept = discarded[-1:]
        if not kept:
            warn(f"{SUITE}: {label} left out: {reason}")
            continue
        ops_per_block = kept[0][0]
        samples = [ns for _, ns in kept]
        rows.append(
            make_row(
                SUITE,
                drow.scheme,
                drow.operation,
                samples,
                ops_per_block,
                param=None if drow.size is None else f"{drow.size} B",
                bytes_per_op=drow.size,
                valid=reason is None,
                invalid_reason=reason,
                repetitions_requested=config["repetitions"],
            )
        )
        details.append(
            {
                "scheme": drow.scheme,
                "operation": drow.operation,
                "param": rows[-1]["param"],
                "warmup_samples_ns": [ns for _, ns in drow.blocks["warmup"]],
                "calibration_blocks": [
                    {"ops_per_block": ops, "ns": ns} for ops, ns in drow.blocks["calib"]
                ],
            }
        )
        if reason is not None:
            continue
        if fixed_ops and min_sample_ns is not None and min(samples) < min_sample_ns:
            warn(
                f"{SUITE}: {label}: best sample {min(samples)} ns is under "
                f"{min_sample_ns:g} ns (100 clock ticks or clock-read costs), so clock "
                'reading weighs in; ops_per_sample "auto" avoids this'
            )
        stats = order_statistics(samples, ops_per_block, config["nth"])
        scale = 1000.0 if drow.size is None else float(drow.size)
        summary.append(
            {
                "scheme": drow.scheme,
                "operation": drow.operation,
                "param": rows[-1]["param"],
                "unit": "µs/op" if drow.size is None else "ns/B",
                "count": len(samples),
                "nth": min(config["nth"], len(samples)),
                **{k: v / scale for k, v in stats.items()},
            }
        )
    expected = [(s, o, None) for s, o in SIGNATURE_ROWS] + [
        (s, o, size) for s, o in PER_BYTE_ROWS for size in config["sizes"]
    ]
    for scheme, operation, size in expected:
        if (scheme, operation, size) not in seen:
            param = "" if size is None else f" {size} B"
            warn(f"{SUITE}: {DRIVER_NAME} printed nothing for {scheme} {operation}{param}")
    features = meta.get("runtime_features", "-")
    clock = {
        "clock": meta.get("clock"),
        "resolution_ns": _meta_number(meta, "clock_res_ns"),
        "observed_tick_ns": _meta_number(meta, "clock_tick_ns"),
        "pair_overhead_ns": _meta_number(meta, "clock_pair_overhead_ns"),
        "probe_reads": _meta_number(meta, "clock_probe_reads"),
        "min_sample_ns": min_sample_ns,
    }
    return SuiteOutcome(
        rows=rows,
        parameters=dict(config),
        tools={"libsodium": version},
        extra={
            "clock": clock,
            "runtime_features": [] if features == "-" else features.split(","),
            "sign_message_bytes": _meta_number(meta, "sign_message_bytes"),
            "rows": details,
            "summary": summary,
        },
    )
