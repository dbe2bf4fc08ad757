"""Running a benchmark: plan the targets, build and measure them across hosts, store results.

matrix -> bases -> images -> **run** -> results. The modules, from the top:

* the commands that drive it are :mod:`archbench.cli` (``invoke bench``, ``history``
  and ``bisect`` are :mod:`archbench.cli.bench`, :mod:`~archbench.cli.history` and
  :mod:`~archbench.cli.bisect`); :mod:`archbench.run.engines` connects each host's
  engine once (:func:`connect_engines`) and refuses cpusets and CPU quotas it cannot
  give (:func:`check_cpusets`, :func:`check_quotas`);
* :mod:`archbench.run.planning`: :func:`plan`, pure: which target runs where, native or
  emulated, with which suites (:class:`TargetPlan`), on which members of a host pool
  (:class:`Pool`; :func:`pin` keeps each on one member); :func:`check_overrides`;
* :mod:`archbench.run.schedule`: :func:`execute` carries plans out, hosts in
  parallel, each host's targets in its run slots, a pool's targets shared by its
  members and moved off a member that stops answering, optionally building every
  target first (:class:`RunOptions`); :func:`is_complete` is what ``--resume`` keeps;
* :mod:`archbench.run.target`: one target's stages, from the emulation preflight to
  stored results and instruction counts (:class:`Workspace`, :class:`TargetOutcome`);
* :mod:`archbench.run.containers`: containers that are always removed and carry the
  label :data:`LABEL_RUN`, the emulation smoke test (:func:`smoke_test`) and the
  harness run (:func:`run_harness`);
* :mod:`archbench.run.progress`: the live display, the harness's progress lines and
  the stored durations that give ETAs (:class:`TimingStore`, :func:`suite_key`);
  :class:`Reporter` is what :func:`execute` reports to (:class:`SilentReporter`
  records it);
* :mod:`archbench.run.reuse`: the key under which a stored count stands for a new one
  (:class:`CountKey`) and the search of the store for it (:func:`find_count`).

Only :mod:`~archbench.run.planning` and :mod:`~archbench.run.progress` are pure (no
``docker``); the rest take their Docker clients as parameters
(:mod:`archbench.hosts` creates them).
"""

from __future__ import annotations

from archbench.run.containers import LABEL_RUN, leftover_containers, run_harness, smoke_test
from archbench.run.engines import check_cpusets, check_quotas, connect_engines
from archbench.run.planning import Pool, TargetPlan, check_overrides, pin, plan
from archbench.run.progress import Reporter, RichReporter, SilentReporter, TimingStore, suite_key
from archbench.run.reuse import (
    CountKey,
    CountSearch,
    FoundCount,
    count_definition,
    count_key,
    find_count,
    stored_count_key,
)
from archbench.run.schedule import RunOptions, execute, is_complete
from archbench.run.target import TargetOutcome, Workspace

__all__ = [
    "LABEL_RUN",
    "CountKey",
    "CountSearch",
    "FoundCount",
    "Pool",
    "Reporter",
    "RichReporter",
    "RunOptions",
    "SilentReporter",
    "TargetOutcome",
    "TargetPlan",
    "TimingStore",
    "Workspace",
    "check_cpusets",
    "check_overrides",
    "check_quotas",
    "connect_engines",
    "count_definition",
    "count_key",
    "execute",
    "find_count",
    "is_complete",
    "leftover_containers",
    "pin",
    "plan",
    "run_harness",
    "smoke_test",
    "stored_count_key",
    "suite_key",
]
