"""What differs between a native, an emulated and a remote target: one strategy per kind.

:func:`archbench.run.target.execute_target` runs the same list of steps for every
target; what a step does differently for a target run natively here, under QEMU
user emulation here, or on a host named in ``hosts`` (natively or under that host's
QEMU) is asked of the target's :class:`TargetKind` (:func:`kind_of`), not decided
by branches inside the steps (cibuildwheel's ``platforms/`` behind one protocol is
the model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from archbench.result import HarnessDocument
from archbench.run.planning import TargetPlan


class TargetKind(Protocol):
    """The strategy of one kind of target: native, emulated (here) or remote."""

    @property
    def emulated(self) -> bool:
        """QEMU runs the target: a smoke test comes first, QEMU's CPU model is recorded."""

    @property
    def checks_binfmt(self) -> bool:
        """This machine's binfmt_misc runs the target: checked before anything else
        (the ``preflight`` stage)."""

    @property
    def cross_compiles(self) -> bool:
        """The drivers are cross-compiled on the engine's own base, bootstrapped beside
        the target's (:func:`archbench.images.prepare_cross`)."""

    def apt_proxy(self, configured: str | None) -> str | None:
        """The package cache the target's builds use, given this machine's (or None)."""

    def host_cpu(self, local_cpu: str) -> str:
        """The ``host_cpu`` recorded before a run, given this machine's CPU model."""

    def run_update(self, doc: HarnessDocument) -> dict[str, object]:
        """Fields of the run's ``Execution`` known only from the harness document."""


@dataclass(frozen=True)
class Native:
    """A target this machine's engine runs on its own CPU."""

    emulated = False
    checks_binfmt = False
    cross_compiles = False

    def apt_proxy(self, configured: str | None) -> str | None:
        """This machine's cache, unchanged."""
        return configured

    def host_cpu(self, local_cpu: str) -> str:
        """This machine's CPU model, unchanged."""
        return local_cpu

    def run_update(self, doc: HarnessDocument) -> dict[str, object]:
        """Nothing: the CPU was known before the run."""
        return {}


@dataclass(frozen=True)
class Emulated(Native):
    """A target this machine's engine runs under QEMU user emulation (binfmt_misc)."""

    emulated = True
    checks_binfmt = True
    cross_compiles = True


@dataclass(frozen=True)
class Remote:
    """A target on a host named in ``hosts``, natively or under that host's QEMU.

    Its builds do not use this machine's package cache (the cache is this machine's),
    nothing of this machine's binfmt_misc matters (the smoke test is the check), and
    its CPU is the one its harness reports.
    """

    emulated: bool
    checks_binfmt = False
    cross_compiles = False

    def apt_proxy(self, configured: str | None) -> str | None:
        """None: the cache is this machine's, not the remote host's."""
        return None

    def host_cpu(self, local_cpu: str) -> str:
        """Empty until the run: this machine's CPU says nothing of the remote host."""
        return ""

    def run_update(self, doc: HarnessDocument) -> dict[str, object]:
        """``host_cpu`` from the harness: only the engine's own CPU can say what it is
        (inside the container /proc/cpuinfo is the remote host's)."""
        return {"host_cpu": doc.setup.cpu_model}


def kind_of(p: TargetPlan) -> TargetKind:
    """``p``'s strategy: :class:`Remote` for a host in ``hosts``, else :class:`Emulated`
    or :class:`Native` as planned."""
    if p.remote:
        return Remote(emulated=p.emulated)
    return Emulated() if p.emulated else Native()
