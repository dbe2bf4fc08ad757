"""CPU architectures: one record each, and whether this host must emulate one.

Everything archbench knows about an architecture is one :class:`ArchRecord`, the
value of its :class:`Arch` member: the OCI platform the Docker API takes
(``linux/arm/v7``), the short name of matrix.yml and the command line
(``armv7``), Debian's name, what ``uname -m`` prints, the GNU triplet and meson
``[host_machine]`` of Debian's cross toolchain, the QEMU user binary and CPU models,
what the harness reads in ``/proc/cpuinfo``, the calibration loop's branch in
``harness/drivers/counting/count_calibrate.c`` and the hosted CI runner. Adding an
architecture is one member here, plus what is genuinely new outside Python: the
calibration loop's two instructions in ``count_calibrate.c`` and, where the kernel
names the CPU or its features under a key of its own, that key in
``harness/abh/setup_cpu.py`` (``tests/unit/test_platforms.py`` checks both against
the records, and that every record is complete).
"""

from __future__ import annotations

import enum
import platform as _platform
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Runner:
    """A hosted CI runner: its ``runs-on`` labels, who provides it and where that is said."""

    labels: tuple[str, ...]
    provider: str
    source: str
    """Where the labels are documented (the provider's own page or repository)."""


@dataclass(frozen=True, kw_only=True)
class ArchRecord:
    """Everything archbench knows about one architecture (the value of an :class:`Arch`).

    ``key``: the short name of matrix.yml and ``--arch`` (``armv7``); ``platform``: the
    OCI platform string (``linux/arm/v7``); ``debian_arch``: ``dpkg
    --print-architecture`` (``armhf``); ``uname_machines``: what ``uname -m`` may print
    on it, native or emulated.

    ``triplet``: the GNU triplet of Debian's cross toolchain (``<triplet>-gcc``,
    ``/usr/lib/<triplet>``); ``meson_cpu_family``, ``meson_cpu``, ``endian``: meson's
    ``[host_machine]`` for it (meson's "Reference tables", CPU families).

    ``qemu_name``: the suffix of the QEMU user binary and binfmt_misc handler
    (``qemu-<name>``); ``qemu_cpu``: the ``-cpu`` model its instructions are counted
    with when a target sets no ``cpu`` (``docs/counting.md``, "CPU model");
    ``build_qemu_cpu``: ``QEMU_CPU`` for emulated *build* steps only, never a
    measurement (None: QEMU's default).

    ``cc_macro``: the macro gcc predefines for it, which selects its two-instruction loop
    in ``harness/drivers/counting/count_calibrate.c``; ``cpuinfo_model`` and
    ``cpuinfo_flags``: the ``/proc/cpuinfo`` keys that name its CPU and list its features
    (``harness/abh/setup_cpu.py``; None: its kernels print none).

    ``runner``: its native hosted CI runner, None where none exists
    (:mod:`archbench.hosts.ci`).
    """

    key: str
    platform: str
    debian_arch: str
    uname_machines: frozenset[str]
    triplet: str
    meson_cpu_family: str
    meson_cpu: str
    endian: Literal["little", "big"]
    qemu_name: str
    qemu_cpu: str
    build_qemu_cpu: str | None = None
    cc_macro: str
    cpuinfo_model: str | None
    cpuinfo_flags: str | None
    runner: Runner | None


_GITHUB_RUNNERS = "docs.github.com: GitHub-hosted runners, standard runners"


class Arch(enum.Enum):
    """A target CPU architecture; its value is its :class:`ArchRecord`.

    ``arch.key``, ``arch.platform`` and ``arch.debian_arch`` name it; everything else is
    read off the record: ``arch.value.triplet``.
    """

    AMD64 = ArchRecord(
        key="amd64",
        platform="linux/amd64",
        debian_arch="amd64",
        uname_machines=frozenset({"x86_64"}),
        triplet="x86_64-linux-gnu",
        meson_cpu_family="x86_64",
        meson_cpu="x86_64",
        endian="little",
        qemu_name="x86_64",
        # QEMU's own x86-64 default, qemu64, would count a 2003 CPU's code paths.
        qemu_cpu="max",
        cc_macro="__x86_64__",
        cpuinfo_model="model name",
        cpuinfo_flags="flags",
        runner=Runner(("ubuntu-24.04",), "GitHub-hosted", _GITHUB_RUNNERS),
    )
    ARM64 = ArchRecord(
        key="arm64",
        platform="linux/arm64",
        debian_arch="arm64",
        uname_machines=frozenset({"aarch64", "arm64"}),
        triplet="aarch64-linux-gnu",
        meson_cpu_family="aarch64",
        meson_cpu="aarch64",
        endian="little",
        qemu_name="aarch64",
        qemu_cpu="max",
        # Debian's arm64 binaries use pointer authentication, and QEMU's default emulation
        # of it (QARMA5) is slow: a shell loop and gzip -9 of a 4 MB file under QEMU 7.2
        # took 530 s with the default CPU and 66 s with pauth-impdef=on (QEMU's faster
        # implementation-defined algorithm) at load 9-14 on the 2-core build machine.
        build_qemu_cpu="max,pauth-impdef=on",
        cc_macro="__aarch64__",
        # arm64 kernels name no model: setup_cpu.py falls back to implementer and part.
        cpuinfo_model=None,
        cpuinfo_flags="Features",
        runner=Runner(
            ("ubuntu-24.04-arm",),
            "GitHub-hosted (free for public repositories)",
            _GITHUB_RUNNERS,
        ),
    )
    RISCV64 = ArchRecord(
        key="riscv64",
        platform="linux/riscv64",
        debian_arch="riscv64",
        uname_machines=frozenset({"riscv64"}),
        triplet="riscv64-linux-gnu",
        meson_cpu_family="riscv64",
        meson_cpu="riscv64",
        endian="little",
        qemu_name="riscv64",
        # QEMU 7.2 has no max for riscv64; rv64, its default, is RV64GC with the
        # bit-manipulation extensions.
        qemu_cpu="rv64",
        cc_macro="__riscv",
        cpuinfo_model="uarch",
        cpuinfo_flags="isa",
        runner=Runner(
            ("ubuntu-24.04-riscv",),
            "RISE RISC-V runners (a GitHub App; Ubuntu 24.04 on SpacemiT K1 boards, Docker "
            "installed, one label per job)",
            "riseproject-dev riscv-runner docs: Runner Labels Reference",
        ),
    )
    PPC64LE = ArchRecord(
        key="ppc64le",
        platform="linux/ppc64le",
        debian_arch="ppc64el",
        uname_machines=frozenset({"ppc64le"}),
        triplet="powerpc64le-linux-gnu",
        meson_cpu_family="ppc64",
        meson_cpu="ppc64le",
        endian="little",
        qemu_name="ppc64le",
        # QEMU 7.2 has no max for ppc64le: its newest model.
        qemu_cpu="power10",
        cc_macro="__powerpc64__",
        cpuinfo_model="cpu",
        cpuinfo_flags=None,
        runner=Runner(
            ("ubuntu-24.04-ppc64le",),
            "IBM's GitHub Actions for Power (a GitHub App, self-hosted on POWER9, for approved "
            "upstream repositories; ubuntu-24.04-ppc64le-p10 for POWER10)",
            "github.com/IBM/actionspz docs/supported-images.txt and docs/FAQ.md",
        ),
    )
    ARMV7 = ArchRecord(
        key="armv7",
        platform="linux/arm/v7",
        debian_arch="armhf",
        # A 32-bit armhf userland on an arm64 kernel reports armv8l.
        uname_machines=frozenset({"armv7l", "armv8l"}),
        triplet="arm-linux-gnueabihf",
        meson_cpu_family="arm",
        meson_cpu="armv7",
        endian="little",
        qemu_name="arm",
        qemu_cpu="max",
        cc_macro="__arm__",
        cpuinfo_model="model name",
        cpuinfo_flags="Features",
        # GitHub's arm64 runners have no 32-bit mode to rely on.
        runner=None,
    )

    @property
    def key(self) -> str:
        """Short name used in matrix.yml and ``--arch`` (``amd64``, ``armv7``)."""
        return self.value.key

    @property
    def platform(self) -> str:
        """OCI platform string, e.g. ``linux/riscv64``."""
        return self.value.platform

    @property
    def debian_arch(self) -> str:
        """Debian's architecture name (``dpkg --print-architecture``)."""
        return self.value.debian_arch

    @classmethod
    def keys(cls) -> list[str]:
        """All short names, in declaration order."""
        return [a.key for a in cls]

    @classmethod
    def from_key(cls, key: str) -> Arch:
        """Look up by short name or OCI platform string.

        Raises:
            ValueError: ``key`` names no architecture; the message lists the
                allowed names.
        """
        for arch in cls:
            if key in (arch.key, arch.platform):
                return arch
        shown = f"{key[:40]!r}…" if len(key) > 40 else repr(key)  # cut: a value echoed
        raise ValueError(f"unknown architecture {shown}; allowed: {', '.join(cls.keys())}")

    @classmethod
    def from_machine(cls, machine: str) -> Arch:
        """Map a kernel machine name (``uname -m``, Docker's ``Architecture``).

        Docker engines report ``x86_64``/``aarch64`` and sometimes Go names
        (``amd64``/``arm64``); both are accepted.

        Raises:
            ValueError: the machine is none of the supported architectures.
        """
        m = machine.strip().lower()
        for arch in cls:
            if m in arch.value.uname_machines or m == arch.key or m == arch.debian_arch:
                return arch
        raise ValueError(
            f"unsupported machine {machine[:40]!r}; supported: "
            + ", ".join(sorted(m for a in cls for m in a.value.uname_machines))
        )

    @classmethod
    def native(cls) -> Arch:
        """The architecture this Python process runs on.

        Raises:
            ValueError: the host is none of the supported architectures.
        """
        return cls.from_machine(_platform.machine())


def needs_emulation(target: Arch, host: Arch, force: bool | None = None) -> bool:
    """Decide whether ``target`` runs under QEMU user emulation on ``host``.

    ``force`` is the matrix's ``emulate`` setting: ``None`` derives the answer
    (emulate exactly when the architectures differ), ``True`` forces emulation
    even for the host's own architecture, ``False`` demands native execution.

    Raises:
        ValueError: ``force`` is False but the architectures differ, so the
            target cannot run natively on this host.
    """
    differs = target is not host
    if force is None:
        return differs
    if force is False and differs:
        raise ValueError(
            f"target architecture {target.key} cannot run natively on a {host.key} host; "
            "remove 'emulate: false' or run it on a host of that architecture"
        )
    return force or differs
