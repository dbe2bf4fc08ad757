"""``setup`` of the harness document, CPU part: model, flags, affinity, cgroup limits, load.

What the benchmark container sees of its CPUs: /proc/cpuinfo (model and
feature flags; under QEMU user emulation the host's), ``sched_getaffinity``,
the cgroup CPU controls the engine set (``--cpus``, ``--cpuset-cpus``) and
/proc/loadavg (the whole host's load). Each ``parse_*`` function takes a
file's text; each ``read_*`` function reads the file and never raises: what
cannot be read is "unknown", ``[]`` or None as its docstring says.

Standard library only: this runs under the distribution's ``python3`` inside
the benchmark image.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Literal, TypedDict

# /proc/cpuinfo keys naming the CPU, best first. Case matters: x86 and
# riscv64 use lower-case "processor" for the CPU index, old ARM kernels use
# "Processor" for the model. x86 and armv7: "model name"; ppc64le: "cpu";
# riscv64: "uarch" (core) or at least "isa"; ARM boards: "Hardware".
CPU_MODEL_KEYS: tuple[str, ...] = ("model name", "cpu", "uarch", "isa", "Processor", "Hardware")

# /proc/cpuinfo keys listing CPU features, by architecture: x86 "flags",
# ARM "Features", riscv64 "isa" (one string: base ISA and "_"-separated
# extensions). ppc64le lists none (its "cpu" line names the model).
CPU_FLAG_KEYS: tuple[str, ...] = ("flags", "Features", "isa")

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
PROC_LOADAVG = Path("/proc/loadavg")


class CpuLimitsDict(TypedDict):
    """``setup.cpu_limits``: the container's cgroup CPU controls."""

    cgroup: Literal["v1", "v2"]
    quota_us: int | None
    period_us: int | None
    cpus: float | None
    cpuset: str | None


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
