#!/usr/bin/env python3
"""archbench in-container harness: run the requested suites, print one JSON document.

``--suites`` names the suites to run (default ``blindsig``). The blind-signature
suite runs ``blindsig`` (built from ``blindsig.c`` by the Makefile next to this
file) and parses its TSV output; every other suite is a module
``suite_<name>.py`` next to this file (interface in ``suite_common.py``) that
gets its settings from ``--suite-config`` (a JSON object: suite name ->
settings). The harness collects a description of the machine it ran on and
prints exactly one ``archbench-harness`` version 1 document on stdout (see
``CONTRACT.md`` and ``schema-v1.json``). Diagnostics go to stderr. One suite
failing is recorded in ``suites[name].error`` and does not stop the others.

Standard library only, Python >= 3.11 (Debian 12 and later, the releases that
package GNUnet >= 0.19): this runs under the distribution's ``python3`` inside
the benchmark image and must never import the host package.

Measurement method (details in CONTRACT.md): the driver probes the clock,
then per scheme and key size grows each operation's block from
``--iterations`` until one block takes ``--min-block-ns`` (calibration, rule
in next_block_size()), runs ``--warmup`` discarded repetitions and then up to
``--repetitions`` timed ones, fewer when ``--max-time`` is spent
(should_stop_repetitions()). The harness re-checks every calibration and
budget decision of the driver against the Python rules below.

Exit status: 0 with a document on stdout (possibly with failed suites
recorded in it); 2 (and nothing on stdout) when blindsig is the only suite and
its driver is missing, fails, crashes or prints output that cannot be trusted,
or when every requested suite failed; argparse's 2 on usage errors.

Example::

    python3 archbench_harness.py --iterations 10 --repetitions 3 --warmup 1 \\
        --max-time 60 --rsa-bits 1024,2048,3072,4096 --scheme all
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypedDict

import counting
import suite_counting
from suite_common import Progress, SuiteError, SuiteOutcome

HARNESS_VERSION = "0.2.0"
DOCUMENT_FORMAT = "archbench-harness"
DOCUMENT_VERSION = 1
SUITE = "blindsig"

DRIVER_NAME = "blindsig"
DRIVER_FORMAT = "archbench-blindsig"
DRIVER_FORMAT_VERSION = 2
BUILD_INFO_NAME = "build-info.txt"

EXIT_FAILURE = 2

CS_OPERATIONS: tuple[str, ...] = (
    "key_generation",
    "r_derivation",
    "blinding_secret_derivation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
)
RSA_OPERATIONS: tuple[str, ...] = (
    "key_generation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
)
OPERATIONS: dict[str, tuple[str, ...]] = {"CS": CS_OPERATIONS, "RSA": RSA_OPERATIONS}

DEFAULT_RSA_BITS: tuple[int, ...] = (1024, 2048, 3072, 4096)
# Mirrors blindsig.c so bad values fail as usage errors, not as driver errors.
MIN_RSA_BITS = 512
MAX_RSA_BITS = 16384
MAX_RSA_SIZES = 16
MAX_ITERATIONS = 1_000_000
MAX_REPETITIONS = 100_000
MAX_WARMUP = 1000
MAX_MIN_BLOCK_NS = 60_000_000_000
MAX_TIME_S = 1e6

# The calibration constants of blindsig.c (see next_block_size() and
# default_min_block_ns() there and here).
CALIBRATION_MAX_OPS = 100_000
MIN_BLOCK_TICKS = 100
MIN_BLOCK_FLOOR_NS = 1_000_000

DiscardKind = Literal["calibration", "warmup"]
DISCARD_KINDS: tuple[DiscardKind, ...] = ("calibration", "warmup")

# /proc/cpuinfo keys naming the CPU, best first. Case matters: x86 and
# riscv64 use lower-case "processor" for the CPU index, old ARM kernels use
# "Processor" for the model. x86 and armv7: "model name"; ppc64le: "cpu";
# riscv64: "uarch" (core) or at least "isa"; ARM boards: "Hardware".
CPU_MODEL_KEYS: tuple[str, ...] = ("model name", "cpu", "uarch", "isa", "Processor", "Hardware")

# Packages are found by the shared library they ship, because the package
# names carry sonames and t64 suffixes that change between releases
# (libgnunet0.19, libgnunet0.20t64, libsodium23, libsodium26, ...).
PACKAGE_LIBRARY_GLOBS: dict[str, str] = {
    "libgnunetutil": "*/libgnunetutil.so.*",
    "libsodium": "*/libsodium.so.*",
    "libgcrypt": "*/libgcrypt.so.*",
    "openssl": "*/libssl.so.*",
}
# Packages whose name is stable: key -> dpkg package name.
PACKAGE_NAMES: dict[str, str] = {"gcc": "gcc"}

# /proc/cpuinfo keys listing CPU features, by architecture: x86 "flags",
# ARM "Features", riscv64 "isa" (one string: base ISA and "_"-separated
# extensions). ppc64le lists none (its "cpu" line names the model).
CPU_FLAG_KEYS: tuple[str, ...] = ("flags", "Features", "isa")

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
PROC_LOADAVG = Path("/proc/loadavg")

OS_RELEASE_PATHS: tuple[Path, ...] = (Path("/etc/os-release"), Path("/usr/lib/os-release"))

SchemeKey = tuple[str, int | None]
"""(scheme, RSA modulus bits); bits is None for CS."""


class HarnessError(Exception):
    """The run cannot produce a trustworthy document; main() exits with status 2."""


class DriverOutputError(HarnessError):
    """The driver's stdout is malformed, truncated or inconsistent with the request."""


# --------------------------------------------------------------------------
# Calibration and budget rules (blindsig.c implements the same functions)


def round_up_125(n: int) -> int:
    """Smallest number of the series 1, 2, 5, 10, 20, 50, ... that is >= ``n``.

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    decade = 1
    while True:
        for step in (1, 2, 5):
            if n <= step * decade:
                return step * decade
        decade *= 10


def next_block_size(ops: int, block_ns: int, min_block_ns: int, max_ops: int) -> int:
    """The calibration rule: the next number of operations per timed block.

    A block of ``ops`` operations took ``block_ns`` ns. If that is shorter
    than ``min_block_ns``, the next size is the one that would take
    ``min_block_ns`` at the measured rate plus 25 % headroom (so noise does
    not leave the next block just short again), or ``10 * ops`` when the
    block read 0 ns (no rate known), rounded up to the 1-2-5 series (block
    sizes then agree between runs whose measurements differ by a few
    percent) and capped at ``max_ops``. Otherwise, and when
    ``min_block_ns`` is 0 (calibration off) or ``ops`` is at the cap, the
    size stays: it never shrinks.

    A clock with tick T reads a block of true length t as k ticks with
    t < (k + 1) T, so for k >= 1 the rate is overestimated by at most
    (k + 1) / k and the next block is at most twice as large as needed; a
    block that reads too long only costs another round.

    Same integer arithmetic as ``next_block_size()`` in blindsig.c; the
    harness checks every calibration step of the driver against this.

    Args:
        ops: operations in the measured block (>= 1).
        block_ns: its wall time in ns (>= 0).
        min_block_ns: calibration target in ns; 0 turns calibration off.
        max_ops: largest block calibration may choose.

    Returns:
        The next block size, >= ``ops``.
    """
    if min_block_ns == 0 or block_ns >= min_block_ns or ops >= max_ops:
        return ops
    if block_ns == 0:
        want = ops * 10
    else:
        want = (ops * min_block_ns * 5 + 4 * block_ns - 1) // (4 * block_ns)
    return min(round_up_125(min(want, max_ops)), max_ops)


def default_min_block_ns(resolution_ns: int | None, observed_tick_ns: int | None) -> int:
    """Default calibration target: 100 clock ticks, at least 1 ms, at most 60 s.

    The tick is the coarser of ``clock_getres()`` and the smallest step seen
    between consecutive reads (a clock may report 1 ns and still move in
    coarser steps). 100 ticks keep quantisation under 1 % of a block; 1 ms
    keeps scheduler noise of a few µs small against it.

    Args:
        resolution_ns: clock_getres(CLOCK_MONOTONIC) in ns, None if unknown.
        observed_tick_ns: smallest observed non-zero step in ns, None if none seen.

    Returns:
        The minimum block time in ns.
    """
    tick = max(resolution_ns or 0, observed_tick_ns or 0)
    return min(max(MIN_BLOCK_TICKS * tick, MIN_BLOCK_FLOOR_NS), MAX_MIN_BLOCK_NS)


def should_stop_repetitions(
    taken: int, requested: int, elapsed_ns: int, max_time_ns: int | None
) -> bool:
    """The budget rule, applied after each timed repetition of one scheme and size.

    Stop when ``requested`` repetitions are taken, or when the pair's
    elapsed time (calibration and warmups included) has reached
    ``max_time_ns`` and at least one repetition was taken, like
    ``openssl speed -seconds``.

    Args:
        taken: timed repetitions taken so far.
        requested: ``--repetitions``.
        elapsed_ns: wall time since the pair started, ns.
        max_time_ns: ``--max-time`` in ns; None means no budget.
    """
    if taken >= requested:
        return True
    return max_time_ns is not None and taken >= 1 and elapsed_ns >= max_time_ns


# --------------------------------------------------------------------------
# Driver output


@dataclass(frozen=True)
class Sample:
    """One timed block as reported by the driver.

    Attributes:
        scheme: "CS" or "RSA".
        key_bits: RSA modulus size in bits; None for CS.
        operation: operation id from CONTRACT.md.
        ops_per_block: operations inside the timed block.
        repetition: 0-based index of the block among the timed repetitions.
        ns: wall time of the block in nanoseconds (CLOCK_MONOTONIC); may be 0
            when the block was below clock resolution (the driver then marks
            the scheme invalid).
    """

    scheme: str
    key_bits: int | None
    operation: str
    ops_per_block: int
    repetition: int
    ns: int


@dataclass(frozen=True)
class Discard:
    """A block that was run and thrown away (calibration round or warmup).

    Attributes:
        scheme, key_bits, operation, ops_per_block, ns: as in Sample.
        kind: "calibration" or "warmup".
        index: 0-based index among the pair's blocks of that kind.
    """

    scheme: str
    key_bits: int | None
    operation: str
    kind: DiscardKind
    ops_per_block: int
    index: int
    ns: int


@dataclass(frozen=True)
class PairDone:
    """The driver's closing line for one (scheme, bits) pair.

    Attributes:
        taken: timed repetitions taken.
        budget_exhausted: the --max-time budget stopped it before --repetitions.
        elapsed_ns: the pair's wall time in ns, calibration and warmups included.
    """

    taken: int
    budget_exhausted: bool
    elapsed_ns: int


@dataclass
class DriverOutput:
    """Parsed driver stdout.

    Attributes:
        meta: ``meta`` lines as key -> value (strings, possibly empty).
        samples: every ``sample`` line in output order.
        discards: every ``discard`` line in output order.
        done: (scheme, bits) -> its ``done`` line.
        invalid: (scheme, bits) -> reason for every ``invalid`` line.
    """

    meta: dict[str, str] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    discards: list[Discard] = field(default_factory=list)
    done: dict[SchemeKey, PairDone] = field(default_factory=dict)
    invalid: dict[SchemeKey, str] = field(default_factory=dict)


class CalibrationBlockDict(TypedDict):
    """One discarded calibration block of a row."""

    ops_per_block: int
    ns: int


class RowDict(TypedDict):
    """One ``rows[]`` entry of the document (see CONTRACT.md).

    The fields after ``invalid_reason`` are additions to the version 1
    contract (allowed without a version bump).
    """

    suite: str
    scheme: str
    key_bits: int | None
    operation: str
    ops_per_block: int
    samples_ns: list[int]
    valid: bool
    invalid_reason: str | None
    iterations_requested: int
    calibrated: bool
    repetitions_requested: int
    budget_exhausted: bool
    warmup_samples_ns: list[int]
    calibration_blocks: list[CalibrationBlockDict]


class ParametersDict(TypedDict):
    """``parameters`` of the document; all but the first three are additions."""

    iterations: int
    repetitions: int
    rsa_bits: list[int]
    schemes: list[str]
    message_bytes: int | None
    warmup: int
    max_time_s: float | None
    min_block_ns: int | None
    fresh_items: bool


class CpuLimitsDict(TypedDict):
    """``setup.cpu_limits``: the container's cgroup CPU controls."""

    cgroup: Literal["v1", "v2"]
    quota_us: int | None
    period_us: int | None
    cpus: float | None
    cpuset: str | None


class SetupDict(TypedDict):
    """``setup`` of the document.

    Everything after ``packages`` is an addition to the version 1 contract
    (allowed without a version bump).
    """

    cpu_model: str
    cores: int
    machine: str
    kernel: str
    os: str
    packages: dict[str, str | None]
    package_names: dict[str, str | None]
    gnunet_version: str | None
    gcc_version: str | None
    clock_resolution_ns: int | None
    build: dict[str, str]
    cpu_flags: list[str]
    cpu_affinity: list[int] | None
    cpu_limits: CpuLimitsDict | None
    load_average: list[float] | None
    tools: dict[str, str]


class CalibrationDict(TypedDict):
    """``calibration`` of the document (an addition to version 1)."""

    clock: str
    resolution_ns: int | None
    observed_tick_ns: int | None
    pair_overhead_ns: float | None
    probe_reads: int | None
    min_block_ns: int
    max_block_ops: int


class DocumentDict(TypedDict):
    """The whole ``archbench-harness`` version 1 document."""

    format: str
    version: int
    harness_version: str
    started_at: str
    duration_s: float
    parameters: ParametersDict | None
    calibration: CalibrationDict | None
    setup: SetupDict
    rows: list[dict[str, Any]]
    suites: dict[str, SuiteRunDict]


class SuiteRunDict(TypedDict):
    """``suites[name]`` of the document: how one requested suite went."""

    parameters: dict[str, Any]
    error: str | None
    duration_s: float
    extra: dict[str, Any]


def _parse_int(text: str, what: str, lineno: int, minimum: int) -> int:
    """Parse a decimal integer field of driver output.

    Args:
        text: the field text.
        what: field name for the error message.
        lineno: 1-based line number for the error message.
        minimum: smallest accepted value.

    Returns:
        The value.

    Raises:
        DriverOutputError: not a plain decimal integer, or below ``minimum``.
    """
    if not text.isdigit():
        raise DriverOutputError(f"driver output line {lineno}: {what} {text!r} is not an integer")
    value = int(text)
    if value < minimum:
        raise DriverOutputError(f"driver output line {lineno}: {what} {value} < {minimum}")
    return value


def _parse_scheme_bits(scheme: str, bits_text: str, lineno: int) -> SchemeKey:
    """Validate a (scheme, bits) pair of driver output; CS's bits 0 become None.

    Raises:
        DriverOutputError: unknown scheme, non-zero bits for CS, bits < 1 for RSA.
    """
    if scheme not in OPERATIONS:
        raise DriverOutputError(f"driver output line {lineno}: unknown scheme {scheme!r}")
    if scheme == "CS":
        if bits_text != "0":
            raise DriverOutputError(f"driver output line {lineno}: CS with key bits {bits_text!r}")
        return (scheme, None)
    return (scheme, _parse_int(bits_text, "key bits", lineno, 1))


def _parse_operation(scheme: str, operation: str, lineno: int) -> str:
    if operation not in OPERATIONS[scheme]:
        raise DriverOutputError(
            f"driver output line {lineno}: {scheme} has no operation {operation!r}"
        )
    return operation


def parse_driver_output(text: str) -> DriverOutput:
    """Parse the blindsig driver's stdout (format described in blindsig.c).

    Args:
        text: the complete stdout of one driver run.

    Returns:
        The parsed meta, samples, discarded blocks, pair summaries and
        invalid verdicts.

    Raises:
        DriverOutputError: wrong header or format version, a missing ``end``
            line (truncated output), malformed or duplicate lines, or content
            after ``end``.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    expected_header = f"{DRIVER_FORMAT}\t{DRIVER_FORMAT_VERSION}"
    if not lines or lines[0] != expected_header:
        first = lines[0] if lines else ""
        raise DriverOutputError(
            f"driver output does not start with {expected_header!r} (got {first[:80]!r})"
        )
    out = DriverOutput()
    seen: set[tuple[str, int | None, str, str, int]] = set()
    ended = False
    for lineno, line in enumerate(lines[1:], start=2):
        if ended:
            raise DriverOutputError(f"driver output line {lineno}: content after 'end'")
        fields = line.split("\t")
        kind = fields[0]
        if kind == "meta" and len(fields) == 3:
            out.meta[fields[1]] = fields[2]
        elif kind == "sample" and len(fields) == 7:
            scheme, bits = _parse_scheme_bits(fields[1], fields[2], lineno)
            sample = Sample(
                scheme=scheme,
                key_bits=bits,
                operation=_parse_operation(scheme, fields[3], lineno),
                ops_per_block=_parse_int(fields[4], "ops per block", lineno, 1),
                repetition=_parse_int(fields[5], "repetition", lineno, 0),
                ns=_parse_int(fields[6], "nanoseconds", lineno, 0),
            )
            ident = (scheme, bits, sample.operation, "sample", sample.repetition)
            if ident in seen:
                raise DriverOutputError(f"driver output line {lineno}: duplicate sample")
            seen.add(ident)
            out.samples.append(sample)
        elif kind == "discard" and len(fields) == 8:
            scheme, bits = _parse_scheme_bits(fields[1], fields[2], lineno)
            discard_kind = fields[4]
            if discard_kind not in DISCARD_KINDS:
                raise DriverOutputError(
                    f"driver output line {lineno}: unknown discard kind {discard_kind!r}"
                )
            discard = Discard(
                scheme=scheme,
                key_bits=bits,
                operation=_parse_operation(scheme, fields[3], lineno),
                kind="calibration" if discard_kind == "calibration" else "warmup",
                ops_per_block=_parse_int(fields[5], "ops per block", lineno, 1),
                index=_parse_int(fields[6], "index", lineno, 0),
                ns=_parse_int(fields[7], "nanoseconds", lineno, 0),
            )
            ident = (scheme, bits, discard.operation, discard.kind, discard.index)
            if ident in seen:
                raise DriverOutputError(f"driver output line {lineno}: duplicate {discard_kind}")
            seen.add(ident)
            out.discards.append(discard)
        elif kind == "done" and len(fields) == 6:
            key = _parse_scheme_bits(fields[1], fields[2], lineno)
            if key in out.done:
                raise DriverOutputError(f"driver output line {lineno}: second 'done' for {key}")
            if fields[4] not in ("0", "1"):
                raise DriverOutputError(
                    f"driver output line {lineno}: budget flag {fields[4]!r} is not 0 or 1"
                )
            out.done[key] = PairDone(
                taken=_parse_int(fields[3], "repetitions taken", lineno, 0),
                budget_exhausted=fields[4] == "1",
                elapsed_ns=_parse_int(fields[5], "elapsed ns", lineno, 0),
            )
        elif kind == "invalid" and len(fields) == 4:
            key = _parse_scheme_bits(fields[1], fields[2], lineno)
            if key in out.invalid:
                raise DriverOutputError(f"driver output line {lineno}: second verdict for {key}")
            out.invalid[key] = fields[3] or "invalid (no reason given)"
        elif kind == "end" and fields[1:] == ["ok"]:
            ended = True
        else:
            raise DriverOutputError(f"driver output line {lineno}: unexpected {line[:80]!r}")
    if not ended:
        raise DriverOutputError("driver output has no 'end' line (truncated)")
    return out


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
) -> list[RowDict]:
    """Turn parsed driver output into the document's rows, checking it on the way.

    Every operation of every expected (scheme, bits) pair yields one row, in
    ``expected`` order and then CONTRACT.md operation order. A valid row must
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

    Returns:
        The rows, JSON-ready.

    Raises:
        DriverOutputError: blocks or verdicts for pairs that were not
            requested, a pair without its ``done`` line, block sizes that
            break the calibration rule, or a valid row with missing, extra
            or zero samples.
    """
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

    rows: list[RowDict] = []
    for scheme, bits in expected:
        reason = output.invalid.get((scheme, bits))
        label = scheme if bits is None else f"{scheme}-{bits}"
        done = output.done.get((scheme, bits))
        if done is None:
            raise DriverOutputError(f"{label}: driver output has no 'done' line")
        if reason is None:
            _check_pair_done(label, done, request)
        for operation in OPERATIONS[scheme]:
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
                if reps != list(range(done.taken)):
                    raise DriverOutputError(
                        f"{where}: valid but repetitions {reps}, expected 0..{done.taken - 1}"
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
            rows.append(
                {
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
            )
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
    elif done.taken != request.repetitions:
        raise DriverOutputError(
            f"{label}: {done.taken} of {request.repetitions} repetitions taken without a budget cut"
        )


# --------------------------------------------------------------------------
# Setup


def _cpuinfo_values(text: str) -> dict[str, str]:
    """First non-empty value of each /proc/cpuinfo key (keys stripped, case kept)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if value and key not in values:
            values[key] = value
    return values


def parse_cpuinfo(text: str) -> str:
    """Name the CPU from /proc/cpuinfo text.

    Uses the first of CPU_MODEL_KEYS present with a non-empty value (keys
    compared exactly, case-sensitively, after stripping blanks around the
    colon). On arm64 kernels, which name no model, falls back to the CPU
    implementer/part codes. Only the first CPU's block is needed, but keys
    from later blocks are accepted too.

    Args:
        text: contents of /proc/cpuinfo (may be empty).

    Returns:
        The model string, e.g. "POWER9, altivec supported", or "unknown".
    """
    values = _cpuinfo_values(text)
    for key in CPU_MODEL_KEYS:
        if key in values:
            return values[key]
    implementer = values.get("CPU implementer")
    part = values.get("CPU part")
    if implementer and part:
        return f"CPU implementer {implementer} part {part}"
    return "unknown"


def read_cpu_model(path: Path = Path("/proc/cpuinfo")) -> str:
    """Return parse_cpuinfo() of ``path``, or "unknown" if it cannot be read."""
    try:
        return parse_cpuinfo(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return "unknown"


def parse_cpu_flags(text: str) -> list[str]:
    """List the first CPU's feature flags from /proc/cpuinfo text.

    Uses the first of CPU_FLAG_KEYS present: x86 ``flags`` and ARM
    ``Features`` are blank-separated; riscv64's ``isa`` is one string, split
    at ``_`` into the base ISA and its extensions
    (``rv64imafdc_zicsr`` -> ``["rv64imafdc", "zicsr"]``). ppc64le kernels
    list no flags. Under QEMU user emulation these are the host's flags.

    Args:
        text: contents of /proc/cpuinfo (may be empty).

    Returns:
        The flags in kernel order; empty when none are listed.
    """
    values = _cpuinfo_values(text)
    for key in CPU_FLAG_KEYS:
        if key in values:
            separator = "_" if key == "isa" else None
            return [flag for flag in values[key].split(separator) if flag]
    return []


def read_cpu_flags(path: Path = Path("/proc/cpuinfo")) -> list[str]:
    """Return parse_cpu_flags() of ``path``, or [] if it cannot be read."""
    try:
        return parse_cpu_flags(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return []


def _read_stripped(path: Path) -> str | None:
    """A small kernel file's stripped text, or None if it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def parse_self_cgroup(text: str) -> dict[str, str]:
    """Map each controller to this process's cgroup path, from /proc/self/cgroup.

    Lines are ``<id>:<controllers>:<path>``; cgroup v2's single entry
    (``0::/path``) is returned under the key ``""``, v1 entries under each
    comma-separated controller name (``cpu``, ``cpuacct``, ``cpuset``, ...).

    Args:
        text: contents of /proc/self/cgroup.
    """
    paths: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2]
        if not controllers:
            paths[""] = path
        for controller in controllers.split(","):
            if controller:
                paths[controller] = path
    return paths


def _parse_quota_value(text: str | None) -> int | None:
    """A cgroup CPU quota or period in µs; None for "max", -1, absent or garbage."""
    if text is None or text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value > 0 else None


def parse_cpu_max(text: str) -> tuple[int | None, int | None]:
    """Parse cgroup v2 ``cpu.max``: ``"<quota> <period>"`` in µs, quota ``max`` = no limit.

    Returns:
        (quota_us, period_us); None for no limit or an unreadable field.
    """
    fields = text.split()
    quota = _parse_quota_value(fields[0]) if fields else None
    period = _parse_quota_value(fields[1]) if len(fields) > 1 else None
    return quota, period


def cpu_limits(
    cgroup: Literal["v1", "v2"], quota_us: int | None, period_us: int | None, cpuset: str | None
) -> CpuLimitsDict:
    """Assemble ``setup.cpu_limits``; ``cpus`` = quota / period (3 decimals) when both are set."""
    cpus = round(quota_us / period_us, 3) if quota_us and period_us else None
    return {
        "cgroup": cgroup,
        "quota_us": quota_us,
        "period_us": period_us,
        "cpus": cpus,
        "cpuset": cpuset or None,
    }


def read_cpu_limits(
    root: Path = CGROUP_ROOT, self_cgroup: Path = PROC_SELF_CGROUP
) -> CpuLimitsDict | None:
    """Read the CPU limits of this process's cgroup (inside a container: the container's).

    cgroup v2: ``cpu.max`` and ``cpuset.cpus.effective``. v1: ``cpu.cfs_quota_us``
    and ``cpu.cfs_period_us`` under ``cpu/`` (or ``cpu,cpuacct/``), and
    ``cpuset.effective_cpus`` or ``cpuset.cpus`` under ``cpuset/``. Each is
    looked for in the process's own cgroup directory (from
    ``/proc/self/cgroup``), then at the hierarchy's root, which is where a
    container with its own cgroup namespace or a v1 bind mount sees it.

    Args:
        root: the cgroup mount point.
        self_cgroup: /proc/self/cgroup.

    Returns:
        The limits, with None for whatever is not limited or not readable;
        None when no cgroup CPU file can be read at all.
    """
    own = parse_self_cgroup(_read_stripped(self_cgroup) or "")

    def candidates(base: Path, relative: str | None) -> list[Path]:
        dirs = [base / relative.lstrip("/")] if relative and relative != "/" else []
        return [d for d in [*dirs, base] if d.is_dir()]

    for directory in candidates(root, own.get("")):
        cpu_max = _read_stripped(directory / "cpu.max")
        cpuset = _read_stripped(directory / "cpuset.cpus.effective")
        if cpu_max is not None or cpuset is not None:
            quota, period = parse_cpu_max(cpu_max or "")
            return cpu_limits("v2", quota, period, cpuset)

    found = False
    quota_us = period_us = None
    for name in ("cpu", "cpu,cpuacct"):
        for directory in candidates(root / name, own.get("cpu")):
            quota_text = _read_stripped(directory / "cpu.cfs_quota_us")
            period_text = _read_stripped(directory / "cpu.cfs_period_us")
            if quota_text is not None or period_text is not None:
                quota_us, period_us = (
                    _parse_quota_value(quota_text),
                    _parse_quota_value(period_text),
                )
                found = True
                break
        if found:
            break
    cpuset_v1 = None
    for directory in candidates(root / "cpuset", own.get("cpuset")):
        cpuset_v1 = _read_stripped(directory / "cpuset.effective_cpus")
        if cpuset_v1 is None:
            cpuset_v1 = _read_stripped(directory / "cpuset.cpus")
        if cpuset_v1 is not None:
            found = True
            break
    return cpu_limits("v1", quota_us, period_us, cpuset_v1) if found else None


def read_cpu_affinity() -> list[int] | None:
    """CPUs this process may run on (``sched_getaffinity(0)``), ascending; None if unknown."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def parse_loadavg(text: str) -> list[float] | None:
    """The 1, 5 and 15 minute load averages from /proc/loadavg text; None if malformed."""
    fields = text.split()
    try:
        values = [float(f) for f in fields[:3]]
    except ValueError:
        return None
    return values if len(values) == 3 and all(math.isfinite(v) for v in values) else None


def read_load_average(path: Path = PROC_LOADAVG) -> list[float] | None:
    """Return parse_loadavg() of ``path``, or None if it cannot be read."""
    text = _read_stripped(path)
    return parse_loadavg(text) if text is not None else None


def parse_os_release(text: str) -> dict[str, str]:
    """Parse os-release(5) text into a dict.

    Handles comments, blank lines, unquoted values and single- or
    double-quoted values with backslash escapes inside double quotes.
    Malformed lines are skipped.

    Args:
        text: contents of an os-release file.

    Returns:
        Variable name -> unquoted value.
    """
    result: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.isidentifier():
            continue
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1]
        elif len(value) >= 2 and value[0] == value[-1] == '"':
            chars: list[str] = []
            escaped = False
            for ch in value[1:-1]:
                if escaped or ch != "\\":
                    chars.append(ch)
                    escaped = False
                else:
                    escaped = True
            value = "".join(chars)
        result[name] = value
    return result


def read_os_name(paths: Sequence[Path] = OS_RELEASE_PATHS) -> str:
    """Describe the OS from the first readable os-release file.

    Returns:
        PRETTY_NAME, else "NAME VERSION", else "unknown".
    """
    for path in paths:
        try:
            info = parse_os_release(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if info.get("PRETTY_NAME"):
            return info["PRETTY_NAME"]
        name = " ".join(v for v in (info.get("NAME"), info.get("VERSION")) if v)
        if name:
            return name
    return "unknown"


def kernel_string(uname: os.uname_result) -> str:
    """Format ``uname`` like ``uname -srv``: "Linux 6.1.0-28-amd64 #1 SMP ..."."""
    return f"{uname.sysname} {uname.release} {uname.version}"


def _run_quiet(argv: Sequence[str], timeout_s: float = 60.0) -> str | None:
    """Run a helper command; return its stripped stdout, or None on any failure.

    Args:
        argv: command and arguments.
        timeout_s: seconds before giving up.
    """
    try:
        proc = subprocess.run(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip()


def parse_dpkg_search(text: str, native_arch: str | None = None) -> str | None:
    """Pick the package that owns a library from ``dpkg -S`` output.

    Lines look like ``libsodium23:amd64: /usr/lib/x86_64-linux-gnu/libsodium.so.23``
    (several packages may be listed comma-separated; ``diversion`` lines are
    skipped). With several candidates, one qualified with ``native_arch`` or
    not qualified at all wins over foreign-architecture ones.

    Args:
        text: stdout of ``dpkg -S <glob>``.
        native_arch: ``dpkg --print-architecture``, e.g. "amd64"; None if unknown.

    Returns:
        The package name as dpkg prints it (possibly with ":arch"), or None.
    """
    candidates: list[str] = []
    for line in text.splitlines():
        if line.startswith("diversion ") or ": " not in line:
            continue
        owners = line.split(": ", 1)[0]
        for owner in owners.split(","):
            owner = owner.strip()
            if owner and owner not in candidates:
                candidates.append(owner)
    if not candidates:
        return None
    for owner in candidates:
        _, _, arch = owner.partition(":")
        if not arch or arch == native_arch or arch == "all":
            return owner
    return candidates[0]


def package_versions() -> tuple[dict[str, str | None], dict[str, str | None]]:
    """Find the dpkg packages and versions of the libraries behind the driver.

    Returns:
        (versions, names): both keyed by PACKAGE_LIBRARY_GLOBS and
        PACKAGE_NAMES keys; values are None when dpkg is missing, nothing
        owns the library or the package is not installed.
    """
    native_arch = _run_quiet(["dpkg", "--print-architecture"])
    versions: dict[str, str | None] = {}
    names: dict[str, str | None] = {}
    for key, pattern in PACKAGE_LIBRARY_GLOBS.items():
        found = _run_quiet(["dpkg", "-S", pattern])
        package = parse_dpkg_search(found, native_arch) if found else None
        names[key] = package
        version = None
        if package is not None:
            version = _run_quiet(["dpkg-query", "-W", "-f", "${Version}", package]) or None
        versions[key] = version
    for key, name in PACKAGE_NAMES.items():
        version = _run_quiet(["dpkg-query", "-W", "-f", "${Version}", name]) or None
        versions[key] = version
        names[key] = name if version else None
    return versions, names


def parse_build_info(text: str) -> dict[str, str]:
    """Parse build-info.txt as written by the Makefile: ``key<TAB>value`` lines.

    Returns:
        key -> value (values may be empty); lines without a TAB are skipped.
    """
    info: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if sep and key:
            info[key] = value
    return info


def collect_setup(
    driver_meta: dict[str, str], build_info_path: Path, load_average: list[float] | None
) -> SetupDict:
    """Describe the machine, OS, libraries and driver build of this run.

    Args:
        driver_meta: ``meta`` lines of the driver run.
        build_info_path: build-info.txt next to the driver (may be missing).
        load_average: read_load_average() from before the driver started.

    Returns:
        The document's ``setup`` object.
    """
    uname = os.uname()
    versions, names = package_versions()
    gnunet_version = _run_quiet(["pkg-config", "--modversion", "gnunetutil"])
    if not gnunet_version:
        build_version = driver_meta.get("gnunet_build_version")
        gnunet_version = build_version if build_version not in (None, "", "unknown") else None
    try:
        build = parse_build_info(build_info_path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        build = {}
    gcc = _run_quiet(["gcc", "--version"])
    return {
        "cpu_model": read_cpu_model(),
        "cores": os.cpu_count() or 1,
        "machine": uname.machine,
        "kernel": kernel_string(uname),
        "os": read_os_name(),
        "packages": versions,
        "package_names": names,
        "gnunet_version": gnunet_version,
        "gcc_version": gcc.splitlines()[0] if gcc else None,
        "clock_resolution_ns": _meta_int(driver_meta, "clock_resolution_ns"),
        "build": build,
        "cpu_flags": read_cpu_flags(),
        "cpu_affinity": read_cpu_affinity(),
        "cpu_limits": read_cpu_limits(),
        "load_average": load_average,
        "tools": {},
    }


def _meta_int(meta: dict[str, str], key: str) -> int | None:
    """A non-negative integer meta value, or None when absent or malformed."""
    value = meta.get(key, "")
    return int(value) if value.isdigit() else None


def build_calibration(meta: dict[str, str]) -> CalibrationDict:
    """The document's ``calibration`` object from the driver's clock probe and settings.

    Raises:
        DriverOutputError: the driver did not report ``min_block_ns`` or
            ``max_block_ops`` (without them its blocks cannot be checked).
    """
    min_block_ns = _meta_int(meta, "min_block_ns")
    max_block_ops = _meta_int(meta, "max_block_ops")
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
        "resolution_ns": _meta_int(meta, "clock_resolution_ns"),
        "observed_tick_ns": _meta_int(meta, "clock_observed_tick_ns"),
        "pair_overhead_ns": overhead,
        "probe_reads": _meta_int(meta, "clock_probe_reads"),
        "min_block_ns": min_block_ns,
        "max_block_ops": max_block_ops,
    }


# --------------------------------------------------------------------------
# Running


def run_driver(driver: Path, args: Sequence[str]) -> str:
    """Run the driver and return its stdout; its stderr passes through.

    Args:
        driver: path to the blindsig executable.
        args: driver arguments.

    Returns:
        Complete stdout text.

    Raises:
        HarnessError: the driver is missing or not executable, exits
            non-zero or dies from a signal.
    """
    if not driver.is_file() or not os.access(driver, os.X_OK):
        raise HarnessError(f"driver {driver} is missing or not executable (build it with make)")
    try:
        proc = subprocess.run(
            [str(driver), *args],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            check=False,
        )
    except OSError as exc:
        raise HarnessError(f"cannot run driver {driver}: {exc}") from exc
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        raise HarnessError(f"driver {driver} was killed by {name}")
    if proc.returncode != 0:
        raise HarnessError(f"driver {driver} exited with status {proc.returncode}")
    return proc.stdout


def utc_timestamp(moment: datetime) -> str:
    """Format an aware datetime as UTC ISO 8601 with seconds: "2026-11-29T22:40:00Z"."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_document(
    started_at: datetime,
    duration_s: float,
    parameters: ParametersDict | None,
    calibration: CalibrationDict | None,
    setup: SetupDict,
    rows: Sequence[RowDict | dict[str, Any]],
    suites: dict[str, SuiteRunDict] | None = None,
) -> DocumentDict:
    """Assemble the version 1 document.

    Args:
        started_at: aware datetime at which the run started.
        duration_s: wall time of the whole run in seconds (>= 0).
        parameters: the blindsig suite's parameters; None when it did not run.
        calibration: see build_calibration(); None without the blindsig driver.
        setup: see collect_setup().
        rows: see build_rows() and the suites' make_row().
        suites: suite name -> SuiteRunDict, one entry per requested suite.
    """
    return {
        "format": DOCUMENT_FORMAT,
        "version": DOCUMENT_VERSION,
        "harness_version": HARNESS_VERSION,
        "started_at": utc_timestamp(started_at),
        "duration_s": round(max(duration_s, 0.0), 3),
        "parameters": parameters,
        "calibration": calibration,
        "setup": setup,
        "rows": [dict(row) for row in rows],
        "suites": suites or {},
    }


def _bounded_int(low: int, high: int) -> Callable[[str], int]:
    """argparse type: a decimal integer in [low, high]."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not in {low}..{high}")
        return value

    return parse


def parse_seconds(text: str) -> float:
    """argparse type for --max-time: seconds, a finite number in (0, MAX_TIME_S].

    Raises:
        argparse.ArgumentTypeError: not a number, not finite, <= 0 or too large.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and 0 < value <= MAX_TIME_S):
        raise argparse.ArgumentTypeError(f"{text!r} is not in (0, {MAX_TIME_S:g}] seconds")
    return value


def parse_rsa_bits(text: str) -> list[int]:
    """argparse type for --rsa-bits: distinct comma-separated modulus sizes in bits.

    Raises:
        argparse.ArgumentTypeError: empty, non-integer, out of
            MIN_RSA_BITS..MAX_RSA_BITS, duplicate, or more than MAX_RSA_SIZES.
    """
    parse_one = _bounded_int(MIN_RSA_BITS, MAX_RSA_BITS)
    sizes = [parse_one(part.strip()) for part in text.split(",")]
    if len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError(f"duplicate size in {text!r}")
    if len(sizes) > MAX_RSA_SIZES:
        raise argparse.ArgumentTypeError(f"more than {MAX_RSA_SIZES} sizes")
    return sizes


SUITES = (
    "blindsig",
    "openssl-speed",
    "rsa-large",
    "gnupg",
    "sodium",
    "taler-helper",
    "gnunet-perf",
)
"""Suites this harness knows; all but blindsig live in ``suite_<name>.py``."""


def parse_suites(text: str) -> list[str]:
    """argparse type for --suites: distinct comma-separated names from SUITES.

    Raises:
        argparse.ArgumentTypeError: empty, unknown or duplicate name.
    """
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("no suite given")
    for name in names:
        if name not in SUITES:
            raise argparse.ArgumentTypeError(f"unknown suite {name!r}; known: {', '.join(SUITES)}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"duplicate suite in {text!r}")
    return names


def parse_suite_config(text: str) -> dict[str, dict[str, Any]]:
    """argparse type for --suite-config: a JSON object of suite name -> settings object.

    Raises:
        argparse.ArgumentTypeError: not JSON, not an object of objects, or an unknown suite.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise argparse.ArgumentTypeError("expected a JSON object: suite name -> settings object")
    for name in value:
        if name not in SUITES or name == "blindsig":
            raise argparse.ArgumentTypeError(
                f"unknown suite {name!r} in --suite-config; known: {', '.join(SUITES[1:])}"
            )
    return value


def suite_module(name: str) -> Any:
    """Import the module of suite ``name`` (``openssl-speed`` -> ``suite_openssl_speed``).

    Raises:
        SuiteError: the module is missing from the harness directory.
    """
    module_name = "suite_" + name.replace("-", "_")
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise SuiteError(f"harness module {module_name}.py cannot be loaded: {exc}") from None


def run_suite(
    name: str, settings: dict[str, Any], count: suite_counting.CountSession | None = None
) -> tuple[SuiteOutcome | None, SuiteRunDict]:
    """Run one non-blindsig suite; never raises for the suite's own failures.

    With ``count`` (``--count-with``) the suite's driver runs under the
    counting QEMU; a suite not in ``suite_counting.COUNTED_SUITES`` fails
    with "not counted".

    Returns:
        (outcome, entry): outcome is None when the suite failed, and then
        ``entry["error"]`` says why.
    """
    t0 = time.monotonic()
    module = None
    parameters: dict[str, Any] = dict(settings)
    try:
        module = suite_module(name)
        parameters = module.normalize_config(settings)
        if count is None:
            outcome: SuiteOutcome = module.run(parameters, _warn)
        elif name in suite_counting.COUNTED_SUITES:
            outcome = module.run(parameters, _warn, count)
        else:
            raise SuiteError(f"{name} is not counted: it runs programs archbench does not own")
    except SuiteError as exc:
        _warn(f"suite {name} failed: {exc}")
        return None, {
            "parameters": parameters,
            "error": str(exc),
            "duration_s": round(time.monotonic() - t0, 3),
            "extra": {},
        }
    return outcome, {
        "parameters": outcome.parameters or parameters,
        "error": None,
        "duration_s": round(time.monotonic() - t0, 3),
        "extra": outcome.extra,
    }


def _cpu_model(text: str) -> str:
    """argparse type for --count-cpu: a plain QEMU CPU model name."""
    try:
        return counting.check_cpu_model(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def make_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="archbench_harness.py",
        description="Run the blindsig driver and print one archbench-harness JSON document.",
    )
    parser.add_argument(
        "--iterations",
        type=_bounded_int(1, MAX_ITERATIONS),
        default=10,
        help="operations per timed block to start calibration from, never shrunk"
        " (default 10, the thesis' '10x')",
    )
    parser.add_argument(
        "--repetitions",
        type=_bounded_int(1, MAX_REPETITIONS),
        default=3,
        help="timed blocks per row (default 3; fewer when --max-time is spent)",
    )
    parser.add_argument(
        "--warmup",
        type=_bounded_int(0, MAX_WARMUP),
        default=1,
        help="repetitions run and discarded before the timed ones (default 1)",
    )
    parser.add_argument(
        "--min-block-ns",
        type=_bounded_int(0, MAX_MIN_BLOCK_NS),
        default=None,
        help="grow each block until it takes this many ns; 0 keeps --iterations"
        f" (default: max({MIN_BLOCK_TICKS} clock ticks, 1 ms))",
    )
    parser.add_argument(
        "--max-time",
        type=parse_seconds,
        default=None,
        metavar="SECONDS",
        help="budget per scheme and key size: no further repetition once spent,"
        " at least one is always taken (default: none)",
    )
    parser.add_argument(
        "--rsa-bits",
        type=parse_rsa_bits,
        default=list(DEFAULT_RSA_BITS),
        help="comma-separated RSA modulus sizes in bits (default 1024,2048,3072,4096)",
    )
    parser.add_argument("--scheme", choices=("cs", "rsa", "all"), default="all")
    parser.add_argument(
        "--suites",
        type=parse_suites,
        default=["blindsig"],
        help=f"comma-separated suites to run: {', '.join(SUITES)} (default blindsig)",
    )
    parser.add_argument(
        "--suite-config",
        type=parse_suite_config,
        default={},
        metavar="JSON",
        help="settings of the other suites as a JSON object: suite name -> settings",
    )
    parser.add_argument(
        "--driver",
        type=Path,
        default=Path(__file__).resolve().parent / DRIVER_NAME,
        help="blindsig executable (default: next to this script)",
    )
    parser.add_argument(
        "--progress", action="store_true", help="driver reports each repetition on stderr"
    )
    parser.add_argument(
        "--fresh-items",
        action="store_true",
        help="every operation of a block on its own freshly prepared item (default: one call"
        " after another on the same item, as GNUnet's perf_crypto_* programs)",
    )
    parser.add_argument(
        "--count-with",
        type=Path,
        default=None,
        metavar="DIR",
        help="count instructions per block with the counting layer in DIR"
        " (/opt/archbench/counter) instead of timing natively",
    )
    parser.add_argument(
        "--count-cpu",
        type=_cpu_model,
        default=counting.DEFAULT_CPU,
        metavar="MODEL",
        help=f"QEMU -cpu model for --count-with (default {counting.DEFAULT_CPU})",
    )
    return parser


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
    if args.fresh_items:
        driver_args.append("--fresh-items")
    return driver_args


def _warn(message: str) -> None:
    print(f"archbench-harness: warning: {message}", file=sys.stderr)


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
    if args.count_with is None:
        stdout = run_driver(driver, driver_arguments(args, rsa_bits))
        output = parse_driver_output(stdout)
    else:
        stdout, counting_doc = run_counting(args, driver, rsa_bits)
        output = parse_driver_output(stdout)
    calibration = build_calibration(output.meta)
    request = RunRequest(
        iterations=args.iterations,
        repetitions=args.repetitions,
        min_block_ns=calibration["min_block_ns"],
        max_block_ops=calibration["max_block_ops"],
        max_time_ns=_meta_int(output.meta, "max_time_ns") or None,
    )
    rows = build_rows(output, expected_scheme_keys(schemes, rsa_bits), request, _warn)
    if counting_doc is not None:
        try:
            counting.attach_counts(rows, counting_doc.pop("_paired"))  # type: ignore[arg-type]
        except counting.CountError as exc:
            raise HarnessError(f"counting: {exc}") from exc
    for (scheme, bits), reason in output.invalid.items():
        label = scheme if bits is None else f"{scheme}-{bits}"
        _warn(f"{label} is invalid: {reason}")
    for (scheme, bits), done in output.done.items():
        if done.budget_exhausted:
            label = scheme if bits is None else f"{scheme}-{bits}"
            _warn(f"{label}: --max-time spent after {done.taken} of {args.repetitions} repetitions")
    parameters: ParametersDict = {
        "iterations": args.iterations,
        "repetitions": args.repetitions,
        "rsa_bits": rsa_bits,
        "schemes": schemes,
        "message_bytes": _meta_int(output.meta, "message_bytes"),
        "warmup": args.warmup,
        "max_time_s": args.max_time,
        "min_block_ns": args.min_block_ns,
        "fresh_items": args.fresh_items,
    }
    return rows, parameters, calibration, output.meta, counting_doc


def run_counting(
    args: argparse.Namespace, driver: Path, rsa_bits: Sequence[int]
) -> tuple[str, dict[str, Any]]:
    """Calibrate the counter, then run blindsig under it with block markers.

    Blocks keep ``--iterations`` operations (``--min-block-ns 0``): counts do
    not need long blocks, and fixed sizes make runs comparable.

    Returns:
        (driver stdout, the document's ``counting`` object with the paired
        counts under the private key ``_paired``).

    Raises:
        HarnessError: no counting layer, the calibration is not exact, the
            driver fails under QEMU, or counts and blocks do not pair.
    """
    try:
        counter = counting.load_counter(args.count_with)
        calibration = counting.run_calibration(
            counter,
            args.count_cpu,
            driver.parent / "count_calibrate",
            Path(tempfile.mkdtemp(prefix="archbench-count-")),
            counting.CALIBRATION_ITERATIONS,
        )
        args.min_block_ns = 0
        out = Path(tempfile.mkdtemp(prefix="archbench-count-")) / "blindsig.count"
        stdout, counts = counting.run_counted(
            counter,
            args.count_cpu,
            driver,
            [*driver_arguments(args, rsa_bits), "--count-markers"],
            out,
        )
        paired = counting.pair_counts(counting.driver_blocks(stdout), counts)
    except counting.CountError as exc:
        raise HarnessError(f"counting: {exc}") from exc
    doc = counting.provenance(
        counter, args.count_cpu, calibration, counts.plugin_version, counts.plugin_api
    )
    doc["_paired"] = paired
    return stdout, doc


def main(argv: Sequence[str] | None = None) -> int:
    """Run the requested suites; print the document on stdout.

    Args:
        argv: arguments without the program name; None means sys.argv[1:].

    Returns:
        0 with a document; EXIT_FAILURE (2) when blindsig alone was asked for
        and failed, or when every requested suite failed.
    """
    args = make_parser().parse_args(argv)
    suites: list[str] = args.suites
    started_at = datetime.now(UTC)
    t0 = time.monotonic()
    # Before any suite loads the machine itself.
    load_average = read_load_average()
    rows: list[RowDict | dict[str, Any]] = []
    runs: dict[str, SuiteRunDict] = {}
    tools: dict[str, str] = {}
    parameters: ParametersDict | None = None
    calibration: CalibrationDict | None = None
    meta: dict[str, str] = {}
    counting_doc: dict[str, Any] | None = None
    if "blindsig" in suites:
        b0 = time.monotonic()
        try:
            blindsig_rows, parameters, calibration, meta, counting_doc = run_blindsig(args)
        except HarnessError as exc:
            print(f"archbench-harness: error: {exc}", file=sys.stderr)
            if suites == ["blindsig"]:
                return EXIT_FAILURE
            runs["blindsig"] = {
                "parameters": {},
                "error": str(exc),
                "duration_s": round(time.monotonic() - b0, 3),
                "extra": {},
            }
        else:
            rows += blindsig_rows
            runs["blindsig"] = {
                "parameters": dict(parameters),
                "error": None,
                "duration_s": round(time.monotonic() - b0, 3),
                "extra": {},
            }
    count: suite_counting.CountSession | None = None
    if args.count_with is not None and suites != ["blindsig"]:
        try:
            count = suite_counting.start_session(
                args.count_with,
                args.count_cpu,
                args.driver.parent / "count_calibrate",
                None if counting_doc is None else counting_doc["calibration"],
                None
                if counting_doc is None
                else (counting_doc["plugin_version"], counting_doc["plugin_api"]),
            )
        except counting.CountError as exc:
            print(f"archbench-harness: error: counting: {exc}", file=sys.stderr)
            return EXIT_FAILURE
        counting_doc = counting_doc or count.provenance()
    for name in suites:
        if name == "blindsig":
            continue
        outcome, entry = run_suite(name, args.suite_config.get(name, {}), count)
        runs[name] = entry
        if outcome is not None:
            rows += outcome.rows
            tools.update(outcome.tools)
    if all(run["error"] for run in runs.values()):
        print("archbench-harness: error: every requested suite failed", file=sys.stderr)
        return EXIT_FAILURE
    setup = collect_setup(meta, args.driver.parent / BUILD_INFO_NAME, load_average)
    setup["tools"] = tools
    document = build_document(
        started_at, time.monotonic() - t0, parameters, calibration, setup, rows, runs
    )
    if counting_doc is not None:
        document["counting"] = counting_doc  # type: ignore[typeddict-unknown-key]
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
