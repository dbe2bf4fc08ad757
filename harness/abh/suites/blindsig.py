"""The blind-signature suite: run the ``blindsig`` driver and turn its output into rows.

The driver (``drivers/blindsig.c``, built by the harness's Makefile) probes
the clock, calibrates, warms up and times every operation of CS and RSA
blind signatures; this module builds its command line, runs it (timed, with
adaptive repetitions and noise readings, ``blindsig_adaptive``; or counted
under QEMU with ``--count-with``, ``blindsig_counting``), parses its output
(``blindsig_output``) and re-checks every calibration and budget decision
against the rules in ``blindsig_rules`` before building the document's rows
(``blindsig_document``). Unlike the other suites it is not run by
``abh.suites.run_suite``: its options are the harness's own and its
parameters and calibration are top-level fields of the document, so
``archbench_harness.py`` calls :func:`run_blindsig` itself.
Standard library only.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abh.suites import blindsig_noise
from abh.suites.blindsig_adaptive import (
    AdaptiveRule,
    InteractiveRun,
    annotate_rows,
    run_driver_interactive,
)
from abh.suites.blindsig_counting import attach_counts, run_counting
from abh.suites.blindsig_document import CalibrationDict, ParametersDict, RowDict
from abh.suites.blindsig_output import (
    Discard,
    DriverOutput,
    DriverOutputError,
    HarnessError,
    PairDone,
    Sample,
    meta_int,
    parse_driver_output,
    row_notes,
)
from abh.suites.blindsig_rules import (
    CALIBRATION_MAX_OPS,
    KEY_GENERATIONS,
    SUITE,
    TALER_LAYER_MEASURED,
    SchemeKey,
    next_block_size,
    run_operations,
    should_stop_repetitions,
)
from abh.suites.common import Progress, warn
from abh.suites.counting import CountError


def expected_scheme_keys(schemes: Sequence[str], rsa_bits: Sequence[int]) -> list[SchemeKey]:
    """List the (scheme, bits) pairs a run measures, in driver order.

    Args:
        schemes: subset of ("CS", "RSA").
        rsa_bits: RSA modulus sizes in bits, in the requested order.

    Returns:
        ``("CS", None)`` first if CS is selected, then ``("RSA", b)`` per size.
    """
    keys: list[SchemeKey] = []
    if "CS" in schemes:
        keys.append(("CS", None))
    if "RSA" in schemes:
        keys.extend(("RSA", bits) for bits in rsa_bits)
    return keys


@dataclass(frozen=True)
class RunRequest:
    """What the driver was asked for, as far as checking its output needs it.

    Attributes:
        iterations: starting (and smallest) operations per block.
        repetitions: timed repetitions wanted per pair.
        min_block_ns: calibration target the driver used, ns; 0 = no calibration.
        max_block_ops: calibration cap the driver used.
        max_time_ns: budget per pair in ns; None = no budget.
    """

    iterations: int
    repetitions: int
    min_block_ns: int = 0
    max_block_ops: int = CALIBRATION_MAX_OPS
    max_time_ns: int | None = None


def _check_calibration(
    label: str,
    calibration: Sequence[Discard],
    first_after: Discard | Sample | None,
    final: int,
    request: RunRequest,
) -> None:
    """Hold a row's calibration steps against next_block_size().

    Raises:
        DriverOutputError: a step the rule would not have taken, or
            calibration that ended while the rule still wanted to grow.
    """
    sizes = [d.ops_per_block for d in calibration] + [final]
    if sizes[0] != request.iterations:
        raise DriverOutputError(
            f"{label}: first block has {sizes[0]} ops, expected --iterations {request.iterations}"
        )
    for step, block in enumerate(calibration):
        want = next_block_size(
            block.ops_per_block, block.ns, request.min_block_ns, request.max_block_ops
        )
        if want != sizes[step + 1]:
            raise DriverOutputError(
                f"{label}: calibration went from {block.ops_per_block} ops ({block.ns} ns) to"
                f" {sizes[step + 1]}, the rule says {want}"
            )
    if first_after is not None:
        want = next_block_size(final, first_after.ns, request.min_block_ns, request.max_block_ops)
        if want != final:
            raise DriverOutputError(
                f"{label}: calibration stopped at {final} ops although a block of"
                f" {first_after.ns} ns calls for {want}"
            )


def build_rows(
    output: DriverOutput,
    expected: Sequence[SchemeKey],
    request: RunRequest,
    warn: Callable[[str], None],
    keygen_left: Mapping[SchemeKey, int] | None = None,
) -> list[RowDict]:
    """Turn parsed driver output into the document's rows, checking it on the way.

    Every operation of every expected (scheme, bits) pair yields one row, in
    ``expected`` order and then CONTRACT.md operation order; the layer's
    ``taler_*`` rows follow a pair's raw rows when the driver's ``meta
    taler_layer`` says it measured them. A valid row must
    have one sample > 0 ns per timed repetition, all of one block size that
    calibration (checked step by step against next_block_size()) arrived
    at, and as many repetitions as requested unless the driver reports the
    budget spent (checked against should_stop_repetitions()). Rows of a pair
    the driver declared invalid carry its reason; their zero-ns samples are
    dropped (the schema requires > 0). An invalid row without timed samples
    (the failure came during calibration or warmup) keeps its last
    discarded block so the failure stays visible; a row left with nothing
    is omitted with a warning, since the schema cannot express it.

    Args:
        output: parsed driver output.
        expected: pairs that were requested, see expected_scheme_keys().
        request: what was asked of the driver.
        warn: called with a one-line message for each omitted row.
        keygen_left: (scheme, bits) -> the key generation blocks a pair's
            key generation row must have, for pairs whose key generation
            left the adaptive loop (``InteractiveRun.keygen_left``); its
            other rows still need one sample per timed repetition.

    Returns:
        The rows, JSON-ready.

    Raises:
        DriverOutputError: blocks or verdicts for pairs that were not
            requested, blocks of the layer's rows in a run without them, a
            pair without its ``done`` line, block sizes that
            break the calibration rule, a valid row with missing, extra
            or zero samples, or a malformed ``row_note``.
    """
    notes = row_notes(output.meta)
    taler = output.meta.get("taler_layer") == TALER_LAYER_MEASURED
    by_row: dict[tuple[str, int | None, str], list[Sample]] = {}
    for sample in output.samples:
        by_row.setdefault((sample.scheme, sample.key_bits, sample.operation), []).append(sample)
    discards_by_row: dict[tuple[str, int | None, str], list[Discard]] = {}
    for discard in output.discards:
        key3 = (discard.scheme, discard.key_bits, discard.operation)
        discards_by_row.setdefault(key3, []).append(discard)
    expected_set = set(expected)
    for scheme, bits, _ in [*by_row, *discards_by_row]:
        if (scheme, bits) not in expected_set:
            raise DriverOutputError(f"driver measured {scheme} {bits}, which was not requested")
    for key in [*output.invalid, *output.done]:
        if key not in expected_set:
            raise DriverOutputError(f"driver judged {key}, which was not requested")
    for scheme, _, operation in [*by_row, *discards_by_row]:
        if operation not in run_operations(scheme, taler):
            raise DriverOutputError(
                f"driver measured {scheme} {operation}, but its meta taler_layer says"
                f" {output.meta.get('taler_layer', '(nothing)')!r}"
            )

    rows: list[RowDict] = []
    for scheme, bits in expected:
        reason = output.invalid.get((scheme, bits))
        label = scheme if bits is None else f"{scheme}-{bits}"
        done = output.done.get((scheme, bits))
        if done is None:
            raise DriverOutputError(f"{label}: driver output has no 'done' line")
        if reason is None:
            _check_pair_done(label, done, request)
        for operation in run_operations(scheme, taler):
            where = f"{label} {operation}"
            samples = sorted(by_row.get((scheme, bits, operation), []), key=lambda s: s.repetition)
            discarded = discards_by_row.get((scheme, bits, operation), [])
            calibration = sorted(
                (d for d in discarded if d.kind == "calibration"), key=lambda d: d.index
            )
            warmups = sorted((d for d in discarded if d.kind == "warmup"), key=lambda d: d.index)
            sizes = {s.ops_per_block for s in samples} | {d.ops_per_block for d in warmups}
            if len(sizes) > 1:
                raise DriverOutputError(f"{where}: blocks of different sizes {sorted(sizes)}")
            if reason is None:
                reps = [s.repetition for s in samples]
                # Key generation that left the adaptive loop has its own count.
                want = done.taken
                if operation in KEY_GENERATIONS and keygen_left is not None:
                    want = keygen_left.get((scheme, bits), want)
                if reps != list(range(want)):
                    raise DriverOutputError(
                        f"{where}: valid but repetitions {reps}, expected 0..{want - 1}"
                    )
                if any(s.ns <= 0 for s in samples):
                    raise DriverOutputError(f"{where}: valid but a sample is 0 ns")
                ops = samples[0].ops_per_block
                if request.min_block_ns == 0 and ops != request.iterations:
                    raise DriverOutputError(
                        f"{where}: block of {ops} ops, expected {request.iterations}"
                    )
                first_after = warmups[0] if warmups else samples[0]
                _check_calibration(where, calibration, first_after, ops, request)
                samples_ns = [s.ns for s in samples]
            else:
                samples_ns = [s.ns for s in samples if s.ns > 0]
                ops = samples[0].ops_per_block if samples else request.iterations
                if not samples_ns:
                    fallback = [d for d in [*calibration, *warmups] if d.ns > 0]
                    if not fallback:
                        warn(f"{where}: no samples before the failure; row omitted")
                        continue
                    samples_ns, ops = [fallback[-1].ns], fallback[-1].ops_per_block
            row: RowDict = {
                "suite": SUITE,
                "scheme": scheme,
                "key_bits": bits,
                "operation": operation,
                "ops_per_block": ops,
                "samples_ns": samples_ns,
                "valid": reason is None,
                "invalid_reason": reason,
                "iterations_requested": request.iterations,
                "calibrated": ops > request.iterations,
                "repetitions_requested": request.repetitions,
                "budget_exhausted": done.budget_exhausted,
                "warmup_samples_ns": [d.ns for d in warmups],
                "calibration_blocks": [
                    {"ops_per_block": d.ops_per_block, "ns": d.ns} for d in calibration
                ],
            }
            # Where the GNUnet API changed the row's call (drivers/blindsig_api.c).
            note = notes.get((scheme, operation))
            if note is not None:
                row["note"] = note
            rows.append(row)
    return rows


def _check_pair_done(label: str, done: PairDone, request: RunRequest) -> None:
    """Check a valid pair's ``done`` line against the budget rule.

    Raises:
        DriverOutputError: too few or too many repetitions for what the
            driver reports, or a budget cut the rule would not have made.
    """
    if done.budget_exhausted:
        if not 1 <= done.taken < request.repetitions or not should_stop_repetitions(
            done.taken, request.repetitions, done.elapsed_ns, request.max_time_ns
        ):
            raise DriverOutputError(
                f"{label}: budget cut after {done.taken} of {request.repetitions} repetitions"
                f" at {done.elapsed_ns} ns, which the budget rule does not allow"
            )
    elif done.stop == "target":
        # Whether the target really was reached is checked row by row
        # (blindsig_adaptive.annotate_rows()).
        if not 1 <= done.taken <= request.repetitions:
            raise DriverOutputError(
                f"{label}: stopped on its target after {done.taken} of at most"
                f" {request.repetitions} repetitions"
            )
    elif done.taken != request.repetitions:
        raise DriverOutputError(
            f"{label}: {done.taken} of {request.repetitions} repetitions taken without a budget cut"
        )


def build_calibration(meta: dict[str, str]) -> CalibrationDict:
    """The document's ``calibration`` object from the driver's clock probe and settings.

    Raises:
        DriverOutputError: the driver did not report ``min_block_ns`` or
            ``max_block_ops`` (without them its blocks cannot be checked).
    """
    min_block_ns = meta_int(meta, "min_block_ns")
    max_block_ops = meta_int(meta, "max_block_ops")
    if min_block_ns is None or max_block_ops is None:
        raise DriverOutputError("driver output lacks meta min_block_ns or max_block_ops")
    try:
        overhead: float | None = float(meta.get("clock_pair_overhead_ns", ""))
    except ValueError:
        overhead = None
    if overhead is not None and not math.isfinite(overhead):
        overhead = None
    return {
        "clock": meta.get("clock", "CLOCK_MONOTONIC"),
        "resolution_ns": meta_int(meta, "clock_resolution_ns"),
        "observed_tick_ns": meta_int(meta, "clock_observed_tick_ns"),
        "pair_overhead_ns": overhead,
        "probe_reads": meta_int(meta, "clock_probe_reads"),
        "min_block_ns": min_block_ns,
        "max_block_ops": max_block_ops,
    }


def driver_arguments(args: argparse.Namespace, rsa_bits: Sequence[int]) -> list[str]:
    """The blindsig command line for parsed harness arguments.

    ``--max-time`` is passed as repr() of the float, which strtod() reads back exactly.
    """
    driver_args = [
        "--iterations",
        str(args.iterations),
        "--repetitions",
        str(args.repetitions),
        "--warmup",
        str(args.warmup),
        "--scheme",
        args.scheme,
    ]
    if args.min_block_ns is not None:
        driver_args += ["--min-block-ns", str(args.min_block_ns)]
    if args.max_time is not None:
        driver_args += ["--max-time", repr(args.max_time)]
    if rsa_bits:
        driver_args += ["--rsa-bits", ",".join(str(b) for b in rsa_bits)]
    if args.progress:
        driver_args.append("--progress")
    if getattr(args, "order", None) is not None:
        driver_args += ["--order", args.order]
    if getattr(args, "seed", None) is not None:
        driver_args += ["--seed", str(args.seed)]
    if getattr(args, "fresh_items", False):
        driver_args.append("--fresh-items")
    return driver_args


def read_affinity() -> list[int] | None:
    """CPUs this process may run on (os.sched_getaffinity), ascending; None if unknown."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def run_blindsig(
    args: argparse.Namespace,
) -> tuple[list[RowDict], ParametersDict, CalibrationDict, dict[str, str], dict[str, Any] | None]:
    """Run the blindsig driver as the arguments ask (timed, or counted with --count-with).

    Returns:
        (rows, parameters, calibration, driver meta lines, the ``counting``
        provenance object or None when timed).

    Raises:
        HarnessError: the driver is missing, fails or prints untrustworthy output.
    """
    schemes = {"cs": ["CS"], "rsa": ["RSA"], "all": ["CS", "RSA"]}[args.scheme]
    rsa_bits: list[int] = args.rsa_bits if "RSA" in schemes else []
    driver: Path = args.driver
    if args.progress:
        # The driver's own lines ("blindsig: RSA-2048 repetition 2/3 done") follow.
        keys = expected_scheme_keys(schemes, rsa_bits)
        labels = [scheme if bits is None else f"{scheme}-{bits}" for scheme, bits in keys]
        Progress("blindsig", len(labels), ", ".join(labels))
    counting_doc: dict[str, Any] | None = None
    if args.count_with is not None and args.ci_target is not None:
        # Instruction counts are exact: no interval to wait for.
        args.repetitions = min(args.repetitions, args.min_repetitions)
        args.ci_target = None
    rule = AdaptiveRule(target=args.ci_target, min_repetitions=args.min_repetitions)
    interactive: InteractiveRun | None = None
    affinity = read_affinity()
    freq_dirs = blindsig_noise.cpufreq_dirs(affinity)
    if args.count_with is None:
        interactive = run_driver_interactive(
            driver, driver_arguments(args, rsa_bits), rule, freq_dirs
        )
        output = parse_driver_output(interactive.stdout)
    else:
        args.min_block_ns = 0
        # Counts repeat exactly across runs only with the same order of work
        # (libgcrypt's pool mixing has a phase; docs/counting.md).
        args.order = "sequential"
        stdout, counting_doc = run_counting(
            args, driver, driver_arguments(args, rsa_bits), rsa_bits
        )
        output = parse_driver_output(stdout)
    calibration = build_calibration(output.meta)
    request = RunRequest(
        iterations=args.iterations,
        repetitions=args.repetitions,
        min_block_ns=calibration["min_block_ns"],
        max_block_ops=calibration["max_block_ops"],
        max_time_ns=meta_int(output.meta, "max_time_ns") or None,
    )
    rows = build_rows(
        output,
        expected_scheme_keys(schemes, rsa_bits),
        request,
        warn,
        interactive.keygen_left if interactive is not None else None,
    )
    annotate_rows(
        rows,  # type: ignore[arg-type]
        output,
        rule,
        interactive,
        len(affinity) if affinity else (os.cpu_count() or 1),
        blindsig_noise.read_governors(freq_dirs),
        warn,
    )
    if counting_doc is not None:
        try:
            attach_counts(
                rows,  # type: ignore[arg-type]
                counting_doc.pop("_paired"),
                counting_doc.pop("_attributed"),
                counting_doc.pop("_callgrind", None),
                counting_doc.pop("_callgrind_attributed", None),
            )
        except CountError as exc:
            raise HarnessError(f"counting: {exc}") from exc
    for (scheme, bits), reason in output.invalid.items():
        label = scheme if bits is None else f"{scheme}-{bits}"
        warn(f"{label} is invalid: {reason}")
    for (scheme, bits), done in output.done.items():
        if done.budget_exhausted:
            label = scheme if bits is None else f"{scheme}-{bits}"
            warn(f"{label}: --max-time spent after {done.taken} of {args.repetitions} repetitions")
    parameters: ParametersDict = {
        "iterations": args.iterations,
        "repetitions": args.repetitions,
        "rsa_bits": rsa_bits,
        "schemes": schemes,
        "message_bytes": meta_int(output.meta, "message_bytes"),
        "warmup": args.warmup,
        "max_time_s": args.max_time,
        "min_block_ns": args.min_block_ns,
        "ci_target": args.ci_target,
        "min_repetitions": args.min_repetitions,
        "confidence": rule.confidence,
        "order": output.meta.get("order", "sequential"),
        "order_seed": meta_int(output.meta, "order_seed"),
        "driver_involuntary_switches": (
            interactive.involuntary_switches if interactive is not None else None
        ),
        "fresh_items": bool(getattr(args, "fresh_items", False)),
    }
    return rows, parameters, calibration, output.meta, counting_doc
