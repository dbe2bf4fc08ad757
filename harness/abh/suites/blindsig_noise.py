"""What the machine was doing around each repetition: steal, iowait, switches, load, frequency.

Standard library only; runs inside the benchmark image. The harness takes a
Snapshot right before and right after every repetition of the blindsig driver
(``--interactive`` makes the driver wait for it), and sums the differences over
a row's timed repetitions into the row's ``noise`` object (CONTRACT.md).

Sources (Linux ``proc(5)``): the aggregate ``cpu`` line of ``/proc/stat``
(jiffies in user, nice, system, idle, iowait, irq, softirq, steal, guest,
guest_nice; guest time is already counted in user) — the container sees the
whole host's counters, which is what steal and iowait mean anyway;
``nonvoluntary_ctxt_switches`` of ``/proc/<pid>/status`` for the driver
process (``getrusage(RUSAGE_CHILDREN)`` only counts children once they have
exited, so it gives the driver's total, recorded apart); ``os.getloadavg()``;
``scaling_governor`` and ``scaling_cur_freq`` (kHz) of
``/sys/devices/system/cpu/cpu*/cpufreq`` where the kernel exposes them (VMs
and containers often do not: then None).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

PROC_STAT = Path("/proc/stat")
CPUFREQ_ROOT = Path("/sys/devices/system/cpu")

# Order of the numbers on /proc/stat's cpu line (proc(5)); older kernels print fewer.
CPU_FIELDS: tuple[str, ...] = (
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
)


@dataclass(frozen=True)
class CpuTimes:
    """Aggregate CPU time of all CPUs from ``/proc/stat``, in jiffies (USER_HZ ticks).

    ``total`` sums user .. steal (guest and guest_nice are part of user and nice).
    """

    total: int
    iowait: int
    steal: int


def parse_proc_stat(text: str) -> CpuTimes | None:
    """The aggregate ``cpu`` line of ``/proc/stat``; None when absent or malformed.

    Fields missing at the end (kernels before 2.6.11 have no steal) count as 0.
    """
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0] != "cpu":
            continue
        values = fields[1:]
        if not values or not all(v.isdigit() for v in values):
            return None
        numbers = dict(zip(CPU_FIELDS, (int(v) for v in values), strict=False))
        total = sum(numbers.get(name, 0) for name in CPU_FIELDS[:8])
        return CpuTimes(total=total, iowait=numbers.get("iowait", 0), steal=numbers.get("steal", 0))
    return None


def parse_involuntary_switches(text: str) -> int | None:
    """``nonvoluntary_ctxt_switches`` of a ``/proc/<pid>/status`` text; None when absent."""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "nonvoluntary_ctxt_switches":
            value = value.strip()
            return int(value) if value.isdigit() else None
    return None


def parse_cpu_list(text: str) -> list[int] | None:
    """A kernel CPU list (``0-3,8,10-11``) as sorted CPU numbers; None when malformed."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            return None
        first, last = int(low), int(high) if dash else int(low)
        if last < first or last - first > 4096:
            return None
        cpus.update(range(first, last + 1))
    return sorted(cpus)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None


@dataclass(frozen=True)
class Snapshot:
    """The machine's counters at one instant (see the module docstring).

    Attributes:
        cpu: /proc/stat aggregate, None if unreadable.
        switches: the driver's involuntary context switches so far, None if unknown.
        load1: 1-minute load average, None if unknown.
        freq_khz: current frequency of each readable CPU, kHz (empty if none).
    """

    cpu: CpuTimes | None
    switches: int | None
    load1: float | None
    freq_khz: tuple[int, ...]


def cpufreq_dirs(cpus: Iterable[int] | None, root: Path = CPUFREQ_ROOT) -> list[Path]:
    """The ``cpufreq`` directories of ``cpus`` (all CPUs when None) that exist."""
    if cpus is None:
        found = sorted(root.glob("cpu[0-9]*/cpufreq"))
    else:
        found = [root / f"cpu{c}" / "cpufreq" for c in cpus]
    return [d for d in found if d.is_dir()]


def read_governors(dirs: Sequence[Path]) -> list[str]:
    """Distinct ``scaling_governor`` values of ``dirs``, sorted; [] when none is readable."""
    names = {(_read(d / "scaling_governor") or "").strip() for d in dirs}
    return sorted(n for n in names if n)


def take_snapshot(pid: int | None, freq_dirs: Sequence[Path]) -> Snapshot:
    """Read every counter now; unreadable ones become None (or no frequencies)."""
    stat = _read(PROC_STAT)
    status = _read(Path(f"/proc/{pid}/status")) if pid is not None else None
    try:
        load1: float | None = os.getloadavg()[0]
    except OSError:
        load1 = None
    freqs = []
    for d in freq_dirs:
        text = (_read(d / "scaling_cur_freq") or "").strip()
        if text.isdigit():
            freqs.append(int(text))
    return Snapshot(
        cpu=parse_proc_stat(stat) if stat is not None else None,
        switches=parse_involuntary_switches(status) if status is not None else None,
        load1=load1,
        freq_khz=tuple(freqs),
    )


class NoiseDict(TypedDict):
    """A row's ``noise`` object (CONTRACT.md): the machine over its timed repetitions."""

    repetitions: int
    steal: float | None
    iowait: float | None
    involuntary_switches: int | None
    load_max: float | None
    cpus: int
    governors: list[str]
    freq_mhz_min: float | None
    freq_mhz_max: float | None


@dataclass
class NoiseTally:
    """Sums over the repetitions of one row (or pair).

    Call add() with the snapshots before and after each repetition.
    """

    repetitions: int = 0
    total: int = 0
    iowait: int = 0
    steal: int = 0
    cpu_known: bool = False
    switches: int = 0
    switches_known: bool = False
    load_max: float | None = None
    freq_min: int | None = None
    freq_max: int | None = None

    def add(self, before: Snapshot, after: Snapshot) -> None:
        """Add one repetition framed by ``before`` and ``after``."""
        self.repetitions += 1
        if before.cpu is not None and after.cpu is not None:
            self.cpu_known = True
            self.total += max(after.cpu.total - before.cpu.total, 0)
            self.iowait += max(after.cpu.iowait - before.cpu.iowait, 0)
            self.steal += max(after.cpu.steal - before.cpu.steal, 0)
        if before.switches is not None and after.switches is not None:
            self.switches_known = True
            self.switches += max(after.switches - before.switches, 0)
        loads = [x for x in (before.load1, after.load1) if x is not None]
        if loads:
            self.load_max = max([*loads, *([self.load_max] if self.load_max is not None else [])])
        freqs = [*before.freq_khz, *after.freq_khz]
        if freqs:
            low, high = min(freqs), max(freqs)
            self.freq_min = low if self.freq_min is None else min(self.freq_min, low)
            self.freq_max = high if self.freq_max is None else max(self.freq_max, high)

    def to_dict(self, cpus: int, governors: list[str]) -> NoiseDict:
        """The row's ``noise`` object; fractions of all CPUs' time, MHz, a load average."""
        known = self.cpu_known and self.total > 0
        return {
            "repetitions": self.repetitions,
            "steal": round(self.steal / self.total, 4) if known else None,
            "iowait": round(self.iowait / self.total, 4) if known else None,
            "involuntary_switches": self.switches if self.switches_known else None,
            "load_max": round(self.load_max, 2) if self.load_max is not None else None,
            "cpus": cpus,
            "governors": governors,
            "freq_mhz_min": self.freq_min / 1000 if self.freq_min is not None else None,
            "freq_mhz_max": self.freq_max / 1000 if self.freq_max is not None else None,
        }
