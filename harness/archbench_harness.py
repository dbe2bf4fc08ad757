#!/usr/bin/env python3
"""archbench in-container harness: run the requested suites, print one JSON document.

``--suites`` names the suites to run (default ``blindsig``). The
blind-signature suite (``suite_blindsig.py``) runs ``blindsig`` (built from
``blindsig.c`` by the Makefile next to this file) and parses its TSV output
(``blindsig_output.py``, rules in ``blindsig_rules.py``); every other suite is a module
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
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypedDict

import counting
import median_ci
import suite_counting
from blindsig_counting import run_counting
from blindsig_output import (
    DISCARD_KINDS,
    DRIVER_FORMAT,
    DRIVER_FORMAT_VERSION,
    DRIVER_NAME,
    Discard,
    DiscardKind,
    DriverOutput,
    DriverOutputError,
    HarnessError,
    PairDone,
    Sample,
    parse_driver_output,
)
from blindsig_rules import (
    CALIBRATION_MAX_OPS,
    CS_OPERATIONS,
    DEFAULT_RSA_BITS,
    MAX_ITERATIONS,
    MAX_MIN_BLOCK_NS,
    MAX_REPETITIONS,
    MAX_RSA_BITS,
    MAX_RSA_SIZES,
    MAX_TIME_S,
    MAX_WARMUP,
    MIN_BLOCK_FLOOR_NS,
    MIN_BLOCK_TICKS,
    MIN_RSA_BITS,
    OPERATIONS,
    RSA_OPERATIONS,
    SUITE,
    SchemeKey,
    default_min_block_ns,
    next_block_size,
    round_up_125,
    should_stop_repetitions,
)
from suite_blindsig import (
    CalibrationBlockDict,
    CalibrationDict,
    ParametersDict,
    RowDict,
    RunRequest,
    _meta_int,
    _warn,
    build_calibration,
    build_rows,
    driver_arguments,
    expected_scheme_keys,
    read_affinity,
    run_blindsig,
)
from suite_common import SuiteError, SuiteOutcome

# Re-exported: the blindsig suite's names stay reachable as archbench_harness.X.
__all__ = [
    "CALIBRATION_MAX_OPS",
    "CS_OPERATIONS",
    "DEFAULT_RSA_BITS",
    "DISCARD_KINDS",
    "DRIVER_FORMAT",
    "DRIVER_FORMAT_VERSION",
    "DRIVER_NAME",
    "MIN_BLOCK_FLOOR_NS",
    "MIN_BLOCK_TICKS",
    "OPERATIONS",
    "RSA_OPERATIONS",
    "SUITE",
    "CalibrationBlockDict",
    "Discard",
    "DiscardKind",
    "DriverOutput",
    "DriverOutputError",
    "PairDone",
    "RunRequest",
    "Sample",
    "SchemeKey",
    "build_calibration",
    "build_rows",
    "default_min_block_ns",
    "driver_arguments",
    "expected_scheme_keys",
    "next_block_size",
    "parse_driver_output",
    "read_affinity",
    "round_up_125",
    "run_counting",
    "should_stop_repetitions",
]

HARNESS_VERSION = "0.2.0"
DOCUMENT_FORMAT = "archbench-harness"
DOCUMENT_VERSION = 1
BUILD_INFO_NAME = "build-info.txt"

EXIT_FAILURE = 2

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


def parse_fraction(text: str) -> float:
    """argparse type for --ci-target: a fraction in (0, 1), e.g. 0.02 for ±2 %.

    Raises:
        argparse.ArgumentTypeError: not a number or outside (0, 1).
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and 0 < value < 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction in (0, 1), e.g. 0.02")
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
        "--ci-target",
        type=parse_fraction,
        default=None,
        metavar="FRACTION",
        help="adaptive repetitions: stop a scheme/size once the 95 %% interval of every"
        " row's median is within this fraction of it (0.02 = ±2 %%); --repetitions is"
        " then the most taken (default: off, exactly --repetitions)",
    )
    parser.add_argument(
        "--min-repetitions",
        type=_bounded_int(1, MAX_REPETITIONS),
        default=median_ci.MIN_SAMPLES_95,
        help="timed repetitions before --ci-target may stop a scheme/size"
        f" (default {median_ci.MIN_SAMPLES_95}, the fewest with a 95 %% interval)",
    )
    parser.add_argument(
        "--order",
        choices=("interleaved", "sequential"),
        default=None,
        help="interleaved (driver default): schemes/sizes take turns, one repetition"
        " each, in an order shuffled per round; sequential: one after the other",
    )
    parser.add_argument(
        "--seed",
        type=_bounded_int(0, 2**63 - 1),
        default=None,
        help="seed of the interleaved order (default: from the clock; recorded)",
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
