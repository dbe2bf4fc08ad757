"""A run's bookkeeping: where it writes, how each target ended, what ``--resume`` keeps.

:class:`Workspace` names the results store, run id, logs and scratch space;
:class:`TargetOutcome` is one target's end (ok or its message, result paths,
stage seconds); :func:`is_complete` decides whether ``--resume`` keeps a target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from archbench.errors import ResultsError
from archbench.result import ResultStore, load
from archbench.run.plan import TargetPlan


@dataclass
class TargetOutcome:
    """How one target ended; ``seconds`` maps stage name to wall time in s."""

    name: str
    ok: bool
    message: str
    result_path: Path | None = None
    result_paths: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    skipped: bool = False
    """True when ``--resume`` found the target's results complete and kept them."""
    run_windows: list[tuple[float, float]] = field(default_factory=list)
    """Wall-clock (epoch s) start and end of each harness container run."""
    stage: str = ""
    """The stage the target was in last (``base``, ``image``, ``run``...)."""


@dataclass(frozen=True)
class Workspace:
    """Where the pipeline writes: results store, logs and scratch space."""

    store: ResultStore
    run_id: str
    work_dir: Path
    apt_proxy: str | None = None
    """Package cache for debootstrap and image builds.

    Checked by :func:`archbench.build.cross.check_apt_proxy`.
    """

    @property
    def log_dir(self) -> Path:
        """``<results>/<run-id>/logs``: bootstrap, build and harness logs."""
        return self.store.root / self.run_id / "logs"


def is_complete(store: ResultStore, run_id: str, p: TargetPlan) -> bool:
    """True when every container run of ``p`` in ``run_id`` is stored and loads.

    What ``--resume`` keeps: a target with a missing or unreadable repeat, or
    without its instruction counts when the run counts (``metrics``), is
    measured again, every metric and repeat.
    """
    paths = [store.path_for(run_id, p.name, i) for i in range(1, p.repeat + 1)]
    if "time" not in p.metrics:
        paths = []
    if "instructions" in p.metrics:
        paths.append(store.path_for(run_id, p.name, 1, "instructions"))
    for path in paths:
        try:
            load(path)
        except ResultsError:
            return False
    return True
