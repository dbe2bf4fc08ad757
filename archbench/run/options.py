"""How a run carries out its plans: the options that :func:`archbench.run.execute.execute` and
:func:`archbench.run.schedule.build_then_measure` share, passed through as one frozen object.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunOptions:
    """The options of one ``invoke bench`` that are not part of the plan.

    ``build_only``: bases and images only, nothing measured (``--build-only``);
    ``rebuild``: rebuild bases and images even when up to date (``--rebuild``);
    ``resume``: keep targets whose results in this run are complete
    (``--resume RUN_ID``); ``build_jobs``: targets built side by side in the
    build pass of :func:`archbench.run.schedule.build_then_measure` (invoke.yaml
    ``build_jobs``, 1-16, checked by ``tasks.py``); :func:`archbench.run.execute.execute`
    itself takes its run slots from its ``slots`` argument or the hosts.
    """

    build_only: bool = False
    rebuild: bool = False
    resume: bool = False
    build_jobs: int = 2
