"""GitHub Actions runners: which runner measures each matrix target, and the jobs of
``invoke ci-matrix``.

Every architecture has a native hosted runner but armv7 (its record's ``runner``,
:class:`archbench.platforms.ArchRecord`, with where each is documented); a target
without one, or marked ``emulate: true``, runs under
QEMU user emulation on an x86-64 runner (:data:`EMULATING_RUNNER`), and a target's
``runs_on:`` in matrix.yml replaces the labels. Instructions per operation are counted by
archbench's QEMU TCG plugin in an x86-64 counter image (Debian 12's dynamic QEMU 7.2, the
only Debian QEMU that loads plugins; ``docs/counting.md``), so a count runs on an x86-64
runner: a native arm64, riscv64 or ppc64le job times its targets, and a second job on the
x86-64 runner counts them (:func:`plan_jobs`). Counts are exact and the same on any host,
so nothing is lost by counting elsewhere; times are measured where the CPU is.

Jobs group the targets that share an architecture, a runner, native or emulated, and
what they measure, so one job sets its runner up once for all of them. Pure: never
imports ``docker``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from archbench.errors import MatrixError
from archbench.matrix import Matrix, Target
from archbench.platforms import Arch

EMULATING_RUNNER: Final = Arch.AMD64.value.runner
"""The x86-64 runner emulated targets run on, and where every count is taken."""
assert EMULATING_RUNNER is not None

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class CiJob:
    """One job of the workflow's ``bench`` matrix: targets of one architecture on one runner.

    ``metrics``: what ``invoke bench --metric`` measures there (``time``,
    ``instructions`` or both); ``emulated``: the runner is x86-64 and runs the targets
    under QEMU user emulation.
    """

    arch: Arch
    runs_on: tuple[str, ...]
    emulated: bool
    metrics: tuple[str, ...]
    targets: tuple[str, ...]

    @property
    def mode(self) -> str:
        """``native`` or ``emulated``."""
        return "emulated" if self.emulated else "native"

    @property
    def artifact(self) -> str:
        """The artifact this job's run folder is uploaded as: ``run-<arch>-<mode>-<metrics>``
        plus the runner when it is not the default one; unique per job."""
        parts = [self.arch.key, self.mode, "-".join(m[:5] for m in self.metrics)]
        default = EMULATING_RUNNER if self.emulated else self.arch.value.runner
        if default is None or self.runs_on != default.labels:
            parts.append("-".join(self.runs_on))
        return "run-" + _SAFE.sub("_", "-".join(parts))[:100]

    def entry(self) -> dict[str, object]:
        """The job as one ``include`` entry of the ``strategy.matrix`` the workflow reads."""
        return {
            "job": f"{self.arch.key} {self.mode} {','.join(self.metrics)}",
            "artifact": self.artifact,
            "arch": self.arch.key,
            "platform": self.arch.platform,
            "runs-on": list(self.runs_on),
            "emulated": self.emulated,
            "targets": ",".join(self.targets),
            "metric": ",".join(self.metrics),
        }


def counts_on(emulated: bool, arch: Arch) -> bool:
    """Whether a job can count instructions: on an x86-64 runner (the counter's QEMU and
    plugin are x86-64 programs), that is an emulating job or a native amd64 one."""
    return emulated or arch is Arch.AMD64


def _placement(t: Target) -> tuple[tuple[str, ...], bool]:
    """``(runs-on labels, emulated)`` of target ``t``.

    Raises:
        MatrixError: ``emulate: false`` for an architecture without a native runner and
            without ``runs_on`` labels.
    """
    native = t.arch.value.runner
    assert EMULATING_RUNNER is not None
    if t.emulate is True:
        return t.runs_on or EMULATING_RUNNER.labels, True
    if t.runs_on is not None:
        return t.runs_on, False
    if native is not None:
        return native.labels, False
    if t.emulate is False:
        raise MatrixError(
            f"target {t.name}: 'emulate: false', but {t.arch.key} has no hosted native "
            f"runner; give its runner's labels (runs_on: [self-hosted, linux, "
            f"{t.arch.key}]) or remove 'emulate: false' to run it emulated"
        )
    return EMULATING_RUNNER.labels, True


def plan_jobs(m: Matrix, targets: Sequence[Target], metrics: Sequence[str] = ()) -> list[CiJob]:
    """The workflow's bench jobs for ``targets`` of matrix ``m``, in the targets' order.

    Each target measures ``metrics`` (``--metric``) or what the matrix says (``metrics:``,
    else time natively and time with instructions under emulation:
    :meth:`~archbench.matrix.Matrix.metrics_for`). A
    native target whose instructions are wanted on a runner that cannot count
    (:func:`counts_on`) is timed there and counted in a job of its own on
    :data:`EMULATING_RUNNER` (one marked ``emulate: false`` demands its own CPU and is
    counted, or fails to, where it is timed). Targets sharing architecture, runner, mode
    and metrics share a job.

    Raises:
        MatrixError: a target cannot be placed (:func:`_placement`).
    """
    assert EMULATING_RUNNER is not None
    jobs: dict[tuple[Arch, tuple[str, ...], bool, tuple[str, ...]], list[str]] = {}
    for t in targets:
        runs_on, emulated = _placement(t)
        wanted = tuple(metrics) or tuple(m.metrics_for(emulated))
        # 'emulate: false' demands the target's own CPU for everything, counts included.
        if "instructions" in wanted and not counts_on(emulated, t.arch) and t.emulate is None:
            timed = tuple(x for x in wanted if x != "instructions")
            if timed:
                jobs.setdefault((t.arch, runs_on, False, timed), []).append(t.name)
            key = (t.arch, EMULATING_RUNNER.labels, True, ("instructions",))
            jobs.setdefault(key, []).append(t.name)
            continue
        jobs.setdefault((t.arch, runs_on, emulated, wanted), []).append(t.name)
    return [
        CiJob(arch, runs_on, emulated, metrics, tuple(names))
        for (arch, runs_on, emulated, metrics), names in jobs.items()
    ]
