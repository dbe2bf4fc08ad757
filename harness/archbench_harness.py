#!/usr/bin/env python3
"""archbench in-container harness: run the blindsig driver, print one JSON document.

Runs ``blindsig`` (built from ``blindsig.c`` by the Makefile next to this
file), parses its TSV output, collects a description of the machine it ran on
and prints exactly one ``archbench-harness`` version 1 document on stdout (see
``CONTRACT.md`` and ``schema-v1.json``). Diagnostics go to stderr.

Standard library only, Python >= 3.11 (Debian 12 and later, the releases that
package GNUnet >= 0.19): this runs under the distribution's ``python3`` inside
the benchmark image and must never import the host package.

Exit status: 0 with a document on stdout; 2 (and nothing on stdout) when the
driver is missing, fails, crashes or prints output that cannot be trusted;
argparse's 2 on usage errors.

Example::

    python3 archbench_harness.py --iterations 10 --repetitions 3 \\
        --rsa-bits 1024,2048,3072,4096 --scheme all
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

HARNESS_VERSION = "0.1.0"
DOCUMENT_FORMAT = "archbench-harness"
DOCUMENT_VERSION = 1
SUITE = "blindsig"

DRIVER_NAME = "blindsig"
DRIVER_FORMAT = "archbench-blindsig"
DRIVER_FORMAT_VERSION = 1
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
}

OS_RELEASE_PATHS: tuple[Path, ...] = (Path("/etc/os-release"), Path("/usr/lib/os-release"))

SchemeKey = tuple[str, int | None]
"""(scheme, RSA modulus bits); bits is None for CS."""


class HarnessError(Exception):
    """The run cannot produce a trustworthy document; main() exits with status 2."""


class DriverOutputError(HarnessError):
    """The driver's stdout is malformed, truncated or inconsistent with the request."""


@dataclass(frozen=True)
class Sample:
    """One timed block as reported by the driver.

    Attributes:
        scheme: "CS" or "RSA".
        key_bits: RSA modulus size in bits; None for CS.
        operation: operation id from CONTRACT.md.
        ops_per_block: operations inside the timed block.
        repetition: 0-based index of the block among the repetitions.
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


@dataclass
class DriverOutput:
    """Parsed driver stdout.

    Attributes:
        meta: ``meta`` lines as key -> value (strings, possibly empty).
        samples: every ``sample`` line in output order.
        invalid: (scheme, bits) -> reason for every ``invalid`` line.
    """

    meta: dict[str, str] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    invalid: dict[SchemeKey, str] = field(default_factory=dict)


class RowDict(TypedDict):
    """One ``rows[]`` entry of the document (see CONTRACT.md)."""

    suite: str
    scheme: str
    key_bits: int | None
    operation: str
    ops_per_block: int
    samples_ns: list[int]
    valid: bool
    invalid_reason: str | None


class ParametersDict(TypedDict):
    """``parameters`` of the document; ``schemes`` and ``message_bytes`` are additions."""

    iterations: int
    repetitions: int
    rsa_bits: list[int]
    schemes: list[str]
    message_bytes: int | None


class SetupDict(TypedDict):
    """``setup`` of the document.

    ``package_names``, ``clock_resolution_ns`` and ``build`` are additions to
    the version 1 contract (allowed without a version bump).
    """

    cpu_model: str
    cores: int
    machine: str
    kernel: str
    os: str
    packages: dict[str, str | None]
    package_names: dict[str, str | None]
    gnunet_version: str | None
    clock_resolution_ns: int | None
    build: dict[str, str]


class DocumentDict(TypedDict):
    """The whole ``archbench-harness`` version 1 document."""

    format: str
    version: int
    harness_version: str
    started_at: str
    duration_s: float
    parameters: ParametersDict
    setup: SetupDict
    rows: list[RowDict]


# --------------------------------------------------------------------------
# Driver output


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


def parse_driver_output(text: str) -> DriverOutput:
    """Parse the blindsig driver's stdout (format described in blindsig.c).

    Args:
        text: the complete stdout of one driver run.

    Returns:
        The parsed meta, samples and invalid verdicts.

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
    seen: set[tuple[str, int | None, str, int]] = set()
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
            operation = fields[3]
            if operation not in OPERATIONS[scheme]:
                raise DriverOutputError(
                    f"driver output line {lineno}: {scheme} has no operation {operation!r}"
                )
            sample = Sample(
                scheme=scheme,
                key_bits=bits,
                operation=operation,
                ops_per_block=_parse_int(fields[4], "ops per block", lineno, 1),
                repetition=_parse_int(fields[5], "repetition", lineno, 0),
                ns=_parse_int(fields[6], "nanoseconds", lineno, 0),
            )
            ident = (scheme, bits, operation, sample.repetition)
            if ident in seen:
                raise DriverOutputError(f"driver output line {lineno}: duplicate sample")
            seen.add(ident)
            out.samples.append(sample)
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


def build_rows(
    output: DriverOutput,
    expected: Sequence[SchemeKey],
    iterations: int,
    repetitions: int,
    warn: Callable[[str], None],
) -> list[RowDict]:
    """Turn parsed driver output into the document's rows.

    Every operation of every expected (scheme, bits) pair yields one row, in
    ``expected`` order and then CONTRACT.md operation order. A valid row must
    have exactly one sample > 0 ns per repetition. Rows of a pair the driver
    declared invalid carry its reason; their zero-ns samples are dropped
    (the schema requires > 0), and a row left without samples is omitted
    with a warning, since the schema cannot express it.

    Args:
        output: parsed driver output.
        expected: pairs that were requested, see expected_scheme_keys().
        iterations: requested operations per block.
        repetitions: requested blocks per row.
        warn: called with a one-line message for each omitted row.

    Returns:
        The rows, JSON-ready.

    Raises:
        DriverOutputError: samples or verdicts for pairs that were not
            requested, a block size other than ``iterations``, or a valid
            row with missing, extra or zero samples.
    """
    by_row: dict[tuple[str, int | None, str], list[Sample]] = {}
    for sample in output.samples:
        by_row.setdefault((sample.scheme, sample.key_bits, sample.operation), []).append(sample)
    expected_set = set(expected)
    for scheme, bits, _ in by_row:
        if (scheme, bits) not in expected_set:
            raise DriverOutputError(f"driver measured {scheme} {bits}, which was not requested")
    for key in output.invalid:
        if key not in expected_set:
            raise DriverOutputError(f"driver judged {key}, which was not requested")

    rows: list[RowDict] = []
    for scheme, bits in expected:
        reason = output.invalid.get((scheme, bits))
        label = scheme if bits is None else f"{scheme}-{bits}"
        for operation in OPERATIONS[scheme]:
            samples = sorted(by_row.get((scheme, bits, operation), []), key=lambda s: s.repetition)
            for sample in samples:
                if sample.ops_per_block != iterations:
                    raise DriverOutputError(
                        f"{label} {operation}: block of {sample.ops_per_block} ops,"
                        f" expected {iterations}"
                    )
            if reason is None:
                reps = [s.repetition for s in samples]
                if reps != list(range(repetitions)):
                    raise DriverOutputError(
                        f"{label} {operation}: valid but repetitions {reps},"
                        f" expected 0..{repetitions - 1}"
                    )
                if any(s.ns <= 0 for s in samples):
                    raise DriverOutputError(f"{label} {operation}: valid but a sample is 0 ns")
                samples_ns = [s.ns for s in samples]
            else:
                samples_ns = [s.ns for s in samples if s.ns > 0]
                if not samples_ns:
                    warn(f"{label} {operation}: no samples before the failure; row omitted")
                    continue
            rows.append(
                {
                    "suite": SUITE,
                    "scheme": scheme,
                    "key_bits": bits,
                    "operation": operation,
                    "ops_per_block": iterations,
                    "samples_ns": samples_ns,
                    "valid": reason is None,
                    "invalid_reason": reason,
                }
            )
    return rows


# --------------------------------------------------------------------------
# Setup


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
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if value and key not in values:
            values[key] = value
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
        (versions, names): both keyed by PACKAGE_LIBRARY_GLOBS keys; values
        are None when dpkg is missing or nothing owns the library.
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


def collect_setup(driver_meta: dict[str, str], build_info_path: Path) -> SetupDict:
    """Describe the machine, OS, libraries and driver build of this run.

    Args:
        driver_meta: ``meta`` lines of the driver run.
        build_info_path: build-info.txt next to the driver (may be missing).

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
    resolution = driver_meta.get("clock_resolution_ns", "")
    return {
        "cpu_model": read_cpu_model(),
        "cores": os.cpu_count() or 1,
        "machine": uname.machine,
        "kernel": kernel_string(uname),
        "os": read_os_name(),
        "packages": versions,
        "package_names": names,
        "gnunet_version": gnunet_version,
        "clock_resolution_ns": int(resolution) if resolution.isdigit() else None,
        "build": build,
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
    parameters: ParametersDict,
    setup: SetupDict,
    rows: list[RowDict],
) -> DocumentDict:
    """Assemble the version 1 document.

    Args:
        started_at: aware datetime at which the run started.
        duration_s: wall time of the whole run in seconds (>= 0).
        parameters: the run parameters.
        setup: see collect_setup().
        rows: see build_rows().
    """
    return {
        "format": DOCUMENT_FORMAT,
        "version": DOCUMENT_VERSION,
        "harness_version": HARNESS_VERSION,
        "started_at": utc_timestamp(started_at),
        "duration_s": round(max(duration_s, 0.0), 3),
        "parameters": parameters,
        "setup": setup,
        "rows": rows,
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
        help="operations per timed block (default 10, the thesis' '10x')",
    )
    parser.add_argument(
        "--repetitions",
        type=_bounded_int(1, MAX_REPETITIONS),
        default=3,
        help="timed blocks per row (default 3)",
    )
    parser.add_argument(
        "--rsa-bits",
        type=parse_rsa_bits,
        default=list(DEFAULT_RSA_BITS),
        help="comma-separated RSA modulus sizes in bits (default 1024,2048,3072,4096)",
    )
    parser.add_argument("--scheme", choices=("cs", "rsa", "all"), default="all")
    parser.add_argument(
        "--driver",
        type=Path,
        default=Path(__file__).resolve().parent / DRIVER_NAME,
        help="blindsig executable (default: next to this script)",
    )
    parser.add_argument(
        "--progress", action="store_true", help="driver reports each repetition on stderr"
    )
    return parser


def _warn(message: str) -> None:
    print(f"archbench-harness: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the harness; print the document on stdout.

    Args:
        argv: arguments without the program name; None means sys.argv[1:].

    Returns:
        0 on success, EXIT_FAILURE (2) on driver or output errors.
    """
    args = make_parser().parse_args(argv)
    schemes = {"cs": ["CS"], "rsa": ["RSA"], "all": ["CS", "RSA"]}[args.scheme]
    rsa_bits: list[int] = args.rsa_bits if "RSA" in schemes else []
    driver: Path = args.driver

    started_at = datetime.now(UTC)
    t0 = time.monotonic()
    driver_args = [
        "--iterations",
        str(args.iterations),
        "--repetitions",
        str(args.repetitions),
        "--scheme",
        args.scheme,
    ]
    if rsa_bits:
        driver_args += ["--rsa-bits", ",".join(str(b) for b in rsa_bits)]
    if args.progress:
        driver_args.append("--progress")
    try:
        output = parse_driver_output(run_driver(driver, driver_args))
        rows = build_rows(
            output,
            expected_scheme_keys(schemes, rsa_bits),
            args.iterations,
            args.repetitions,
            _warn,
        )
        for (scheme, bits), reason in output.invalid.items():
            label = scheme if bits is None else f"{scheme}-{bits}"
            _warn(f"{label} is invalid: {reason}")
        setup = collect_setup(output.meta, driver.parent / BUILD_INFO_NAME)
    except HarnessError as exc:
        print(f"archbench-harness: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    message_bytes = output.meta.get("message_bytes", "")
    parameters: ParametersDict = {
        "iterations": args.iterations,
        "repetitions": args.repetitions,
        "rsa_bits": rsa_bits,
        "schemes": schemes,
        "message_bytes": int(message_bytes) if message_bytes.isdigit() else None,
    }
    document = build_document(started_at, time.monotonic() - t0, parameters, setup, rows)
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
