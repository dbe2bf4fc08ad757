"""Reusing a count: an earlier run of the same commit on the same target, found in the store.

Instruction counts are exact and deterministic, so a commit counted once on a target need
not be built and counted again when nothing that decides the count changed. What decides it
is :class:`CountKey`, compared field by field between the count about to be made (from its
:class:`~archbench.run.TargetPlan`, :func:`count_key`) and each stored counting result
(from the facts it records, :func:`stored_count_key`):

* ``repository`` and ``commit``: the git URL as given and the full commit id the image's
  libgnunetutil was built from (``Execution.gnunet_source``; a dirty tree never matches);
* ``target`` and ``arch``: the matrix target's name and architecture;
* ``definition``: :func:`count_definition`, sha256 of what the target counts with: its
  base (name and definition), profile (name, packages), native or emulated, the
  QEMU CPU model and the blindsig settings the counting stage runs (overrides such as
  ``--rsa-bits`` and ``--repetitions`` applied);
* ``cpu_model``: the QEMU ``-cpu`` model of the counts (also in ``definition``; kept apart
  so that a stored count's own record is checked, not only what was planned);
* ``harness``: sha256 of the harness sources (:func:`archbench.images.harness_sha256`: the
  C drivers, the Makefile, the Python harness), so a driver changed since never matches;
* ``plugin``: the counting plugin's version (:data:`archbench.images.PLUGIN_VERSION`).

Not in the key: the day the base image was bootstrapped and the QEMU package of the counting
tools; both are recorded in every result (``Execution.base_built``,
``Counting.qemu_version``). Results written before ``Execution.harness_sha256`` and
``Execution.count_definition`` existed have no key and are never reused.

This module never imports ``docker``: it reads plans and the results store.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Final

from archbench.errors import ResultsError
from archbench.images import PLUGIN_VERSION, harness_sha256
from archbench.result import Result, ResultStore, load
from archbench.run.planning import TargetPlan

_FULL_ID: Final = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
"""A full commit id (SHA-1 or SHA-256), as bisection steps' runs name their source."""


@dataclass(frozen=True)
class CountKey:
    """What must be equal for a stored count to stand for a new one (module docs)."""

    repository: str
    commit: str
    target: str
    arch: str
    definition: str
    cpu_model: str
    harness: str
    plugin: str


def count_definition(plan: TargetPlan) -> str:
    """sha256 (hex) of the target as it counts: base (name and definition), profile
    (name, packages), native or emulated, QEMU CPU model and the blindsig settings
    the counting stage runs. Other suites, CPU pinning and quotas, and the host do not
    change a count and are left out."""
    counted = plan.count_suites if plan.count_suites is not None else plan.suites
    blindsig = counted.blindsig
    what = {
        "target": plan.target.name,
        "arch": plan.target.arch.key,
        "base": plan.target.base,
        "base_definition": plan.base.model_dump(mode="json"),
        "profile": plan.target.profile,
        "packages": list(plan.packages),
        "emulated": plan.emulated,
        "count_cpu": plan.count_cpu,
        "blindsig": blindsig.model_dump(mode="json") if blindsig is not None else None,
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def count_key(plan: TargetPlan, repository: str, commit: str) -> CountKey:
    """The key of counting ``plan`` with libgnunetutil from ``repository`` at ``commit``
    (a full id) with today's harness and plugin.

    Raises:
        FileNotFoundError: the harness sources are missing.
    """
    return CountKey(
        repository=repository,
        commit=commit,
        target=plan.target.name,
        arch=plan.target.arch.key,
        definition=count_definition(plan),
        cpu_model=plan.count_cpu,
        harness=harness_sha256(),
        plugin=PLUGIN_VERSION,
    )


def stored_count_key(result: Result) -> CountKey | None:
    """The key of a stored counting result, from what it records; None when it cannot be
    reused: not a count, not measured by us, not built from a clean git commit, recorded
    before the key's fields existed, or without a valid counted blindsig row."""
    ex, counting = result.execution, result.harness.counting
    if result.metric != "instructions" or ex is None or counting is None:
        return None
    source = ex.gnunet_source or {}
    repository, commit = source.get("location"), source.get("commit")
    if source.get("kind") != "git" or source.get("dirty") or ex.archive is not None:
        return None
    if not isinstance(repository, str) or not isinstance(commit, str):
        return None
    if ex.harness_sha256 is None or ex.count_definition is None:
        return None
    if not any(r.suite == "blindsig" and r.valid and r.instructions for r in result.harness.rows):
        return None
    return CountKey(
        repository=repository,
        commit=commit,
        target=result.target.name,
        arch=result.target.arch,
        definition=ex.count_definition,
        cpu_model=counting.cpu_model,
        harness=ex.harness_sha256,
        plugin=counting.plugin_version,
    )


def find_count(store: ResultStore, key: CountKey) -> str | None:
    """The newest run of ``store`` whose counting result of ``key.target`` has ``key``
    (:func:`stored_count_key`), or None. Runs whose ``run.json`` names another GNUnet
    source than a git ref of ``key.repository``, or another full commit id of it, are
    passed over unread (a tag or branch is resolved by reading the result); an unreadable
    manifest or result is passed over too (it cannot be reused, and is not this
    function's to report)."""
    wanted = f"git+{key.repository}@"
    for run_id in reversed(store.runs()):
        try:
            manifest = store.load_manifest(run_id)
            path = store.path_for(run_id, key.target, 1, "instructions")
        except ResultsError:
            continue
        if manifest.gnunet is not None and not manifest.gnunet.startswith(wanted):
            continue
        ref = (manifest.gnunet or "").removeprefix(wanted)
        if _FULL_ID.fullmatch(ref) and ref != key.commit:
            continue  # a bisection step's run of another commit: nothing to read
        if not path.is_file():
            continue
        try:
            result = load(path)
        except ResultsError:
            continue
        if stored_count_key(result) == key:
            return run_id
    return None
