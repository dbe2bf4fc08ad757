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
* ``plugin``: the counting plugin's version (:data:`archbench.images.PLUGIN_VERSION`);
* ``qemu``: the version line of the QEMU that counts (``Counting.qemu_version``, e.g.
  ``qemu-riscv64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u16)``): QEMU's translation of
  the guest's instructions decides what the plugin sees, and counts were measured to differ
  between QEMU 10.0.13 and 7.2.22 (``docs/counting.md``). A new count's is read from the
  engine's counter tools image (:func:`archbench.images.counter_qemu_version`); with no
  tools image there yet it is unknown, and nothing is reused.

Not in the key: the day the base image was bootstrapped (``Execution.base_built``).
Results written before ``Execution.harness_sha256`` and ``Execution.count_definition``
existed have no key and are never reused.

Trust (issue 39): a stored count is reused only when its file's integrity digest matched
its content when it was read (:mod:`archbench.result.integrity`); a file without one (an
older archbench wrote it) is named and passed over, never reused. :func:`find_count` reads
every stored count of the key, not only the newest: two that disagree on the bisected row
where each one's repetitions all agree (an exact count) are a conflict, and a results file
of a run of this repository that cannot be read (edited, truncated) could be the count
asked for; both raise :class:`~archbench.errors.CountConflict` naming the files, so the
bisection stops rather than decide on a count it cannot trust.

This module never imports ``docker``: it reads plans and the results store.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Final

from archbench.errors import CountConflict, ResultsError
from archbench.images import PLUGIN_VERSION, harness_sha256
from archbench.result import Result, ResultStore, load_checked
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
    qemu: str


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


def count_key(plan: TargetPlan, repository: str, commit: str, qemu: str) -> CountKey:
    """The key of counting ``plan`` with libgnunetutil from ``repository`` at ``commit``
    (a full id) with today's harness and plugin, under the QEMU whose version line is
    ``qemu`` (:func:`archbench.images.counter_qemu_version`).

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
        qemu=qemu,
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
        qemu=counting.qemu_version,
    )


Row = tuple[str, int | None, str]
"""A blindsig row as a bisection names it: scheme, RSA modulus (None: any size), operation."""


@dataclass(frozen=True)
class FoundCount:
    """A stored count that may stand for a new one: its run, its file and the file's
    integrity digest (checked when it was read)."""

    run_id: str
    path: Path
    digest: str


@dataclass(frozen=True)
class CountSearch:
    """What :func:`find_count` found: the count to reuse (None: count anew) and, one line
    each, the stored counts of the key that were passed over and why (no digest, a copy
    lying in another run's folder)."""

    found: FoundCount | None
    notes: tuple[str, ...] = ()


def _exact_values(result: Result, row: Row | None) -> dict[tuple[str, int | None, str], Fraction]:
    """Per blindsig row (``row``'s only, when given) whose repetitions all counted the same
    instructions per block: that count per operation, exactly."""
    out = {}
    for r in result.harness.rows:
        if r.suite != "blindsig" or not r.valid or not r.instructions:
            continue
        if row is not None and (
            (r.scheme, r.operation) != (row[0], row[2])
            or (row[1] is not None and r.key_bits != row[1])
        ):
            continue
        if len(set(r.instructions)) == 1:
            out[(r.scheme, r.key_bits, r.operation)] = Fraction(r.instructions[0], r.ops_per_block)
    return out


def _conflict(a: FoundCount, ra: Result, b: FoundCount, rb: Result, row: Row | None) -> str | None:
    """Why ``a`` and ``b`` (of one key) cannot both be the count, or None."""
    va, vb = _exact_values(ra, row), _exact_values(rb, row)
    for name in sorted(va.keys() & vb.keys(), key=str):
        if va[name] != vb[name]:
            scheme, bits, operation = name
            label = f"{scheme}{f'-{bits}' if bits else ''} {operation.replace('_', ' ')}"
            return (
                f"{label}: {float(va[name]):,.1f} instructions per operation in {a.path}, "
                f"{float(vb[name]):,.1f} in {b.path}"
            )
    return None


def find_count(store: ResultStore, key: CountKey, row: Row | None = None) -> CountSearch:
    """The newest run of ``store`` whose counting result of ``key.target`` has ``key``
    (:func:`stored_count_key`) and an integrity digest that matched, after every stored
    count of the key was read and found to agree with it (module docs).

    Runs whose ``run.json`` names another GNUnet source than a git ref of
    ``key.repository``, or another full commit id of it, are passed over unread (a tag or
    branch is resolved by reading the result); so are runs with an unreadable manifest. A
    results file of a run that names a ref of the repository and cannot be read is
    refused (below); one of a run that names no source (the matrix's) is noted and passed
    over. ``row``: the row the counts are for; conflicts are looked for on it alone
    (every blindsig row when None).

    Raises:
        CountConflict: two stored counts of the key differ on an exact row (both files
            named), or a results file of a run of this repository's ref or commit is
            damaged (its digest does not match, truncated, not JSON).
    """
    wanted = f"git+{key.repository}@"
    notes: list[str] = []
    found: list[tuple[FoundCount, Result]] = []
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
            result, digest = load_checked(path)
        except ResultsError as exc:
            if manifest.gnunet is None:
                notes.append(f"not reused: {exc}")
                continue
            raise CountConflict(
                f"{exc}\nIt may be the count of {key.commit[:12]} on {key.target}, so this "
                "bisection stops rather than decide without it (every step so far is kept)"
            ) from exc
        if stored_count_key(result) != key:
            continue
        if result.run_id != run_id:
            notes.append(
                f"not reused: {path} belongs to run {result.run_id} but lies in {run_id} "
                "(a copied file)"
            )
            continue
        if digest is None:
            notes.append(
                f"not reused: {path} has no integrity digest (written before archbench "
                "stored one), so nothing proves it is the count that was measured"
            )
            continue
        here = FoundCount(run_id, path, digest)
        for other, other_result in found:
            why = _conflict(other, other_result, here, result, row)
            if why is not None:
                raise CountConflict(
                    f"two stored counts of {key.commit[:12]} on {key.target} with the same "
                    f"key disagree: {why}. A count of this commit is exact, so one of them "
                    "is wrong: remove the run that is (or both, to count it again); this "
                    "bisection stops rather than choose (every step so far is kept)"
                )
        found.append((here, result))
    return CountSearch(found[0][0] if found else None, tuple(notes))
