"""Running a benchmark: plan the targets, build and measure them across hosts, store results.

matrix -> bases -> images -> **run** -> results. The modules, from the top:

* :mod:`archbench.run.session`: one ``invoke bench`` / ``invoke images``
  (:func:`bench` of a frozen :class:`BenchOptions`): a new run, a resumed one or an
  archive's rerun, its engines, plans, cpuset and quota checks and manifest;
* :mod:`archbench.run.plan`: :func:`plan`, pure: which target runs where, native or
  emulated, with which suites (:class:`TargetPlan`); :func:`check_overrides`;
* :mod:`archbench.run.schedule`: :func:`execute` carries plans out, hosts in
  parallel, each host's targets in its run slots, optionally building every target
  first (:class:`RunOptions`); :func:`is_complete` is what ``--resume`` keeps;
* :mod:`archbench.run.target`: one target's stages, from the emulation preflight to
  stored results and instruction counts (:class:`Workspace`, :class:`TargetOutcome`);
* :mod:`archbench.run.containers`: containers that are always removed and carry the
  label :data:`LABEL_RUN`, the emulation smoke test (:func:`smoke_test`) and the
  harness run (:func:`run_harness`);
* :mod:`archbench.run.progress`: the live display, the harness's progress lines and
  the stored durations that give ETAs (:class:`TimingStore`, :func:`suite_key`);
  :class:`Reporter` is what :func:`execute` reports to (:class:`SilentReporter`
  records it).

Only :mod:`~archbench.run.plan` and :mod:`~archbench.run.progress` are pure (no
``docker``); the rest take their Docker clients as parameters
(:mod:`archbench.hosts` creates them).
"""

from __future__ import annotations

from archbench.run.containers import LABEL_RUN, leftover_containers, run_harness, smoke_test
from archbench.run.plan import TargetPlan, check_overrides, plan
from archbench.run.progress import Reporter, SilentReporter, TimingStore, suite_key
from archbench.run.schedule import RunOptions, execute, is_complete
from archbench.run.session import BenchOptions, BenchRun, bench
from archbench.run.target import TargetOutcome, Workspace

__all__ = [
    "LABEL_RUN",
    "BenchOptions",
    "BenchRun",
    "Reporter",
    "RunOptions",
    "SilentReporter",
    "TargetOutcome",
    "TargetPlan",
    "TimingStore",
    "Workspace",
    "bench",
    "check_overrides",
    "execute",
    "is_complete",
    "leftover_containers",
    "plan",
    "run_harness",
    "smoke_test",
    "suite_key",
]
