"""``invoke doctor``, ``invoke clean`` and ``invoke ci-matrix``: the hosts targets run on.

QEMU user emulation on this machine (:func:`doctor`), the containers archbench left
on the matrix's hosts (:func:`clean`), and the targets as a GitHub Actions matrix for
native runners (:func:`ci_matrix`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from archbench import matrix
from archbench.analysis import parse_metrics
from archbench.cli.bench import path_or_setting
from archbench.cli.config import Settings
from archbench.cli.flags import (
    ARCH,
    CACHES,
    CI_MATRIX,
    CLEAN,
    DOCTOR,
    DOCTOR_ARCH,
    FIX,
    HOST,
    MATRIX,
    METRIC,
    RUNNING,
    TARGET,
    Given,
    archs,
    split,
)
from archbench.cli.terminal import show
from archbench.errors import ArchbenchError, EmulationError, EngineError, MatrixError
from archbench.hosts import check_emulation, connect, connect_host, fix_emulation, plan_jobs
from archbench.images import (
    Builder,
    base_tag,
    cache_namespace,
    cache_volumes,
    image_labels,
    remove_caches,
)
from archbench.inputs import quote
from archbench.matrix import LOCAL_HOST
from archbench.platforms import Arch
from archbench.run import LABEL_RUN, leftover_containers, smoke_test


def doctor(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke doctor``: binfmt_misc, the QEMU handlers, static QEMU, a ``uname -m`` smoke run.

    Checks ``--arch`` (default: every emulated architecture of the matrix); with
    ``--fix`` first installs and registers what is missing (root, Debian). Prints
    one line per architecture.

    Raises:
        EmulationError: any architecture failed a check (all of them listed).
        MatrixError: an unknown architecture or a bad matrix.
    """
    g = Given(DOCTOR, values)
    native = Arch.native()
    checked = archs(g.optional(DOCTOR_ARCH))
    m = matrix.load(path_or_setting(MATRIX.option, g.text(MATRIX), s.matrix))
    if not checked:
        checked = sorted({t.arch for t in m.targets if t.arch is not native}, key=lambda a: a.key)
    if g.switch(FIX):
        for action in fix_emulation(checked):
            show(f"fixed: {action}")
    problems = []
    client = None
    try:
        client = connect()
    except ArchbenchError as exc:
        problems.append(str(exc))
    for a in checked:
        try:
            st = check_emulation(a)
        except EmulationError as exc:
            problems.append(f"{a.key}: {exc}")
            show(f"FAIL {a.key:8} {exc}")
            continue
        smoke = "no base image yet (run 'invoke images --arch " + a.key + "')"
        status = "ok  "
        if client is not None:
            for t in m.targets:
                tag = base_tag(t.base, a)
                if t.arch is a and image_labels(client, tag) is not None:
                    try:
                        smoke = "uname -m: " + smoke_test(client, tag, a)
                    except EmulationError as exc:
                        problems.append(f"{a.key}: {exc}")
                        smoke = f"smoke test FAILED: {exc}"
                        status = "FAIL"
                    break
        show(
            f"{status} {a.key:8} {st.handler.name} flags {st.handler.flags} -> "
            f"{st.handler.interpreter} (static), QEMU {st.qemu_version}; {smoke}"
        )
    if problems:
        raise EmulationError("emulation preflight found problems:\n  " + "\n  ".join(problems))


def clean(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke clean``: remove containers labelled ``org.archbench`` on the matrix's hosts
    (stopped ones; running ones too with ``--running``: they may be another invoke's);
    with ``--caches`` also the caches of libgnunetutil's incremental builds (build trees and
    ccaches, Docker volumes not in use; the packed prefixes of the work folder), those of
    the cache namespace ``ARCHBENCH_CACHE_NAMESPACE`` names when it is set (then only
    those volumes), else those of no namespace.

    ``--host`` names some hosts (``local``, keys of ``hosts``, or a key of ``pools`` for
    its members); default: all. Prints how many containers each host had, and the cache
    volumes it kept or removed.

    Raises:
        MatrixError: an unknown host name or a bad matrix.
        EngineError: some hosts could not be reached (the others were cleaned).
        ImageBuildError: ``ARCHBENCH_CACHE_NAMESPACE`` is malformed (before anything is
            removed).
    """
    g = Given(CLEAN, values)
    remove_running = g.switch(RUNNING)
    namespace = cache_namespace()
    m = matrix.load(path_or_setting(MATRIX.option, g.text(MATRIX), s.matrix))
    unreachable = []
    names = [LOCAL_HOST, *m.hosts]
    chosen = split(g.optional(HOST), HOST.option) or names
    unknown = [n for n in chosen if n not in names and n not in m.pools]
    if unknown:
        shown = ", ".join(quote(n) for n in unknown[:5])
        pools = f"; pools: {', '.join(m.pools)}" if m.pools else ""
        raise MatrixError(f"--host: no host {shown}; known: {', '.join(names)}{pools}")
    for name in dict.fromkeys(member for n in chosen for member in m.members(n)):
        try:
            client = connect_host(m.host(name), name)
        except ArchbenchError as exc:
            unreachable.append(f"{name}: {exc}")
            continue
        n = 0
        running: dict[str, int] = {}
        for container in leftover_containers(client):
            if container.status == "running" and not remove_running:
                # Maybe another invoke's measurement, in another terminal or checkout.
                run = str(container.labels.get(LABEL_RUN) or "?")
                running[run] = running.get(run, 0) + 1
                continue
            container.remove(force=True)
            n += 1
        show(f"{name}: removed {n} container(s)")
        if running:
            runs = ", ".join(f"{quote(r)} ({k})" for r, k in sorted(running.items())[:10])
            show(
                f"{name}: kept {sum(running.values())} running container(s) of run(s) {runs}: "
                "another invoke may be measuring with them; --running removes them too"
            )
        if g.switch(CACHES):
            work = Path(s.work)
            caches = remove_caches(Builder(client, work, work / "logs"), namespace)
            of = f" of cache namespace {namespace}" if namespace else ""
            if caches:
                show(
                    f"{name}: removed {len(caches)} build cache volume(s){of}: " + ", ".join(caches)
                )
            else:
                show(f"{name}: no build cache volume{of} to remove")
        else:
            kept = cache_volumes(client)
            if kept:
                show(
                    f"{name}: {len(kept)} build cache volume(s) of libgnunetutil kept "
                    "(--caches removes them)"
                )
    if unreachable:
        raise EngineError("could not clean every host:\n  " + "\n  ".join(unreachable))


def ci_matrix(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke ci-matrix``: print ``{"include": [...]}``, one entry per job of the workflow.

    Each entry (:meth:`archbench.hosts.CiJob.entry`) has ``job``, ``artifact``, ``arch``,
    ``platform``, ``runs-on`` (a list of labels: the architecture's native runner, a
    target's ``runs_on``, or the x86-64 runner that emulates), ``emulated``, ``targets``
    and ``metric`` (comma-separated, for ``invoke bench --target``/``--metric``).
    ``--metric`` replaces the matrix's ``metrics:`` as ``invoke bench --metric`` does.

    Raises:
        MatrixError: a bad selection or matrix, or a target no runner can take.
    """
    g = Given(CI_MATRIX, values)
    m = matrix.load(path_or_setting(MATRIX.option, g.text(MATRIX), s.matrix))
    chosen = m.select(split(g.optional(TARGET), TARGET.option), archs(g.optional(ARCH)))
    metric = g.optional(METRIC)
    measured = parse_metrics(metric) if metric is not None else ()
    include = [job.entry() for job in plan_jobs(m, chosen, measured)]
    show(json.dumps({"include": include}, indent=2))
