"""What a result was measured with, and what changed between two results.

A step in a series, or a verdict of ``invoke compare``, is attributed to what differs
between the two runs' environments: the GNUnet version and commit, libgcrypt and
libsodium, the compiler, the Debian release, QEMU, the CPU and the CPU quota. Every fact
comes from the stored result (the harness's Setup, the host's ``Execution``, the
counter's provenance); a fact the result does not record is None and never differs
from another None.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from archbench.result import Result


@dataclass(frozen=True)
class Environment:
    """The facts of one result that may explain a change (None: not recorded)."""

    gnunet_version: str | None = None
    """``harness.setup.gnunet_version`` (the library's own), else the source's version."""
    gnunet_commit: str | None = None
    """``Execution.gnunet_source``'s commit (a source build), or None (Debian's package)."""
    gnunet_source: str | None = None
    """Where libgnunetutil came from: the source's kind and location, or ``debian``."""
    libgnunetutil_package: str | None = None
    libgcrypt: str | None = None
    libsodium: str | None = None
    compiler: str | None = None
    """``setup.build['cc_version']``, else ``setup.gcc_version``."""
    os: str | None = None
    qemu: str | None = None
    """The QEMU that ran the target (``Execution.qemu_version``) or counted it."""
    qemu_cpu: str | None = None
    cpu: str | None = None
    """The host CPU model (what ran the container; under emulation, the emulator)."""
    cpu_quota: str | None = None


LABELS: dict[str, str] = {
    "gnunet_version": "GNUnet version",
    "gnunet_commit": "GNUnet commit",
    "gnunet_source": "GNUnet source",
    "libgnunetutil_package": "libgnunetutil package",
    "libgcrypt": "libgcrypt",
    "libsodium": "libsodium",
    "compiler": "compiler",
    "os": "OS",
    "qemu": "QEMU",
    "qemu_cpu": "QEMU CPU model",
    "cpu": "CPU",
    "cpu_quota": "CPU quota",
}
"""How a change names each :class:`Environment` field."""


@dataclass(frozen=True)
class Change:
    """One fact that differs: ``name`` (a :data:`LABELS` value), its value before and after."""

    name: str
    before: str | None
    after: str | None

    @property
    def text(self) -> str:
        """``libgcrypt 1.10.1-3 → 1.11.0-7``; a missing value reads ``none``."""
        return f"{self.name} {self.before or 'none'} → {self.after or 'none'}"


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def environment_of(result: Result) -> Environment:
    """The :class:`Environment` of one stored result (pure: reads the model only)."""
    setup = result.harness.setup
    ex = result.execution
    source = (ex.gnunet_source if ex is not None else None) or {}
    build = setup.build or {}
    counting = result.harness.counting
    where = (
        " ".join(str(source[k]) for k in ("kind", "location", "ref") if source.get(k))
        if source
        else "debian"
    )
    quota = None
    if ex is not None and ex.cpus is not None:
        quota = f"{ex.cpus:g} CPUs"
    if ex is not None and ex.cpuset is not None:
        quota = f"{quota or 'no quota'}, cpuset {ex.cpuset}"
    return Environment(
        gnunet_version=setup.gnunet_version or _text(source.get("version")),
        gnunet_commit=_text(source.get("commit")),
        gnunet_source=where if ex is not None else None,
        libgnunetutil_package=setup.packages.get("libgnunetutil"),
        libgcrypt=setup.packages.get("libgcrypt"),
        libsodium=setup.packages.get("libsodium"),
        compiler=build.get("cc_version") or setup.gcc_version,
        os=setup.os,
        qemu=(ex.qemu_version if ex is not None else None)
        or (counting.qemu_version if counting is not None else None),
        qemu_cpu=(ex.qemu_cpu if ex is not None else None)
        or (counting.cpu_model if counting is not None else None),
        cpu=ex.host_cpu if ex is not None else setup.cpu_model,
        cpu_quota=quota,
    )


def environment_diff(before: Result | Environment, after: Result | Environment) -> list[Change]:
    """What differs between two results' environments, in :class:`Environment`'s order.

    Empty when nothing recorded differs (the change, if any, is the machine's or noise).
    """
    a = before if isinstance(before, Environment) else environment_of(before)
    b = after if isinstance(after, Environment) else environment_of(after)
    return [
        Change(LABELS[f.name], getattr(a, f.name), getattr(b, f.name))
        for f in fields(Environment)
        if getattr(a, f.name) != getattr(b, f.name)
    ]
