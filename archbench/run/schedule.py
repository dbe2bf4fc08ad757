"""Build every target first, then measure them one at a time (issue 14, "Fast").

:func:`build_then_measure` runs :func:`archbench.run.execute.execute` twice: a build
pass (bases and images only, ``build_jobs`` targets side by side, emulated targets
first since they take longest) and then the measuring pass, which finds every image
up to date and runs the targets in each host's run slots as before. Nothing is built
while anything is timed, and the builds of different targets overlap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import docker

from archbench.platforms import Arch
from archbench.run import execute as pipeline
from archbench.run.execute import TargetOutcome, TargetPlan, Workspace
from archbench.run.options import RunOptions
from archbench.run.progress import Reporter


def build_then_measure(
    clients: Mapping[str, docker.DockerClient],
    plans: Sequence[TargetPlan],
    workspace: Workspace,
    host_archs: Mapping[str, Arch],
    options: RunOptions | None = None,
    *,
    reporter: Reporter | None = None,
) -> list[TargetOutcome]:
    """Build every target's image first, ``options.build_jobs`` side by side, then measure.

    The measuring :func:`archbench.run.execute.execute` runs only after the last build has
    ended, one
    target at a time per host as before: nothing is built while anything is timed.
    A target whose build failed is not measured; its outcome is the build's. The
    base and image seconds of the build pass are the targets' stage times.
    A single target, an archive rerun and ``options.build_only`` go straight to
    :func:`archbench.run.execute.execute`. ``options`` None: all off, two build jobs.
    """
    options = options or RunOptions()
    if len(plans) < 2 or any(p.archived is not None for p in plans):
        return pipeline.execute(
            clients,
            plans,
            workspace,
            host_archs,
            options,
            reporter=reporter,
            slots=options.build_jobs if options.build_only else None,
        )
    # Emulated targets take longest to build: they start first.
    order = sorted(plans, key=lambda p: not p.emulated)
    built = pipeline.execute(
        clients,
        order,
        workspace,
        host_archs,
        dataclasses.replace(options, build_only=True),
        reporter=reporter,
        slots=options.build_jobs,
    )
    by_name = {o.name: o for o in built}
    if options.build_only:
        return [by_name[p.name] for p in plans]
    ready = [p for p in plans if by_name[p.name].ok and not by_name[p.name].skipped]
    measure = dataclasses.replace(options, rebuild=False)
    measured = {
        o.name: o
        for o in pipeline.execute(clients, ready, workspace, host_archs, measure, reporter=reporter)
    }
    outcomes = []
    for p in plans:
        first = by_name[p.name]
        o = measured.get(p.name, first)
        if o is not first:
            # Stage times of the build pass; the measuring pass's up-to-date checks
            # are not builds. Smoke tests ran in both passes: both count.
            for stage, seconds in first.seconds.items():
                extra = o.seconds.get(stage, 0.0) if stage == "smoke" else 0.0
                o.seconds[stage] = seconds + extra
        outcomes.append(o)
    return outcomes
