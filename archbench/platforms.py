"""CPU architectures as OCI platforms, and whether this host must emulate them.

The enum value is the OCI platform string the Docker API takes
(``linux/arm/v7``); the member's ``key`` is the short name used in
matrix.yml and on the command line (``armv7``).
"""

from __future__ import annotations

import enum
import platform as _platform


class Arch(enum.Enum):
    """A target CPU architecture; the value is its OCI platform string."""

    AMD64 = "linux/amd64"
    ARM64 = "linux/arm64"
    RISCV64 = "linux/riscv64"
    PPC64LE = "linux/ppc64le"
    ARMV7 = "linux/arm/v7"

    @property
    def key(self) -> str:
        """Short name used in matrix.yml and ``--arch`` (``amd64``, ``armv7``)."""
        return _KEYS[self]

    @property
    def platform(self) -> str:
        """OCI platform string, e.g. ``linux/riscv64``."""
        return self.value

    @property
    def debian_arch(self) -> str:
        """Debian's architecture name (``dpkg --print-architecture``)."""
        return _DEBIAN[self]

    @property
    def uname_machines(self) -> frozenset[str]:
        """What ``uname -m`` may print on this architecture (native or emulated)."""
        return _UNAME[self]

    @property
    def qemu_name(self) -> str:
        """Suffix of the QEMU user binary and binfmt_misc handler (``qemu-<name>``)."""
        return _QEMU[self]

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
            if key in (arch.key, arch.value):
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
            if m in arch.uname_machines or m == arch.key or m == arch.debian_arch:
                return arch
        raise ValueError(
            f"unsupported machine {machine[:40]!r}; supported: "
            + ", ".join(sorted(m for a in cls for m in a.uname_machines))
        )

    @classmethod
    def native(cls) -> Arch:
        """The architecture this Python process runs on.

        Raises:
            ValueError: the host is none of the supported architectures.
        """
        return cls.from_machine(_platform.machine())


_KEYS = {
    Arch.AMD64: "amd64",
    Arch.ARM64: "arm64",
    Arch.RISCV64: "riscv64",
    Arch.PPC64LE: "ppc64le",
    Arch.ARMV7: "armv7",
}
_DEBIAN = {
    Arch.AMD64: "amd64",
    Arch.ARM64: "arm64",
    Arch.RISCV64: "riscv64",
    Arch.PPC64LE: "ppc64el",
    Arch.ARMV7: "armhf",
}
_UNAME = {
    Arch.AMD64: frozenset({"x86_64"}),
    Arch.ARM64: frozenset({"aarch64", "arm64"}),
    Arch.RISCV64: frozenset({"riscv64"}),
    Arch.PPC64LE: frozenset({"ppc64le"}),
    # A 32-bit armhf userland on an arm64 kernel reports armv8l.
    Arch.ARMV7: frozenset({"armv7l", "armv8l"}),
}
_QEMU = {
    Arch.AMD64: "x86_64",
    Arch.ARM64: "aarch64",
    Arch.RISCV64: "riscv64",
    Arch.PPC64LE: "ppc64le",
    Arch.ARMV7: "arm",
}


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
