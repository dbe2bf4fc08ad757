"""``invoke bisect --metric time``: one step of a timed bisection, in interleaved rounds.

Times are bisected on native targets only (an emulated target's time is the
emulator's: :func:`refuse_emulated`). A time has no level of its own, so every step
times its commit beside the ends, as ``invoke history --rounds`` times a series:

* the good end is built; its level is 1 (:data:`archbench.analysis.bisection.GOOD_LEVEL`);
* the bad end is built and timed with good in ``rounds`` interleaved rounds: B/G with
  the Student-t interval of the per-round log ratios and ``invoke compare``'s verdict
  (:func:`archbench.analysis.time_end`) says whether the row moved, and how far, or that
  the rounds cannot tell yet: then it gets one more round at a time up to ``max_rounds``,
  as a probe does, and still undecided it is recorded as such (no level: nothing is
  bisected, and the outcome says so instead of "no move");
* a probe P is timed with good and bad in the same rounds (each round runs G, P and B
  once, in an order drawn from the bisection id, the step and the round), and P/G and
  P/B decide like good, like bad or undecided (:func:`archbench.analysis.time_decision`).
  An undecided probe gets one more round at a time up to ``max_rounds``; still undecided,
  it is recorded as such and replayed as a skip, so the range it sits in is reported as
  not split instead of a verdict being guessed.

Each version of a step is an ordinary run of the results store (its rounds are its
container runs ``repeat_index`` 1..n, sharing the step's ``Execution.interleaved``
id), so ``invoke compare`` reads any two of them as it reads a history's.

The ends are built once per bisection (in this process): their libgnunetutil, built in
the persistent tree (:mod:`archbench.images.incremental`), is kept with its packed prefix
(:data:`_END_BUILDS`) and given to every later step's run of that end, whose image is then
the same image; a step builds only its probe, and the tree stays near the probes.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archbench.analysis import (
    DEFAULT_CONFIDENCE,
    DEFAULT_THRESHOLD,
    GOOD_LEVEL,
    MIN_ROUNDS,
    EndDecision,
    TimeDecision,
    TInterval,
    end_confidence,
    round_samples,
    round_t_interval,
    time_decision,
    time_end,
    time_level,
)
from archbench.errors import MatrixError
from archbench.images import GnunetBuild
from archbench.matrix import GnunetGit, Matrix, Target
from archbench.platforms import Arch
from archbench.result import (
    BisectCount,
    BisectManifest,
    BisectStep,
    BisectTime,
    ResultStore,
    RunManifest,
    load,
    new_run_id,
    row_key,
)
from archbench.run import Reporter, RunOptions, TargetPlan, Workspace, execute, pin, plan

UNDECIDED_END = (
    "its interval holds both no change and a move beyond the threshold, even with the most "
    "rounds: not a verdict, nothing bisected; bisect again on a quieter machine or with more "
    "--rounds"
)
"""Why a timed bisection whose bad end its rounds could not decide stops (:func:`time_end`)."""


def refuse_emulated(m: Matrix, targets: Sequence[Target], host_archs: Mapping[str, Arch]) -> None:
    """Refuse ``--metric time`` for a target this host would emulate.

    Raises:
        MatrixError: a target runs under QEMU here (exit 2), naming it and the fix.
    """
    emulated = [p.name for p in plan(m, targets, dict(host_archs), metrics=("time",)) if p.emulated]
    if emulated:
        raise MatrixError(
            f"--metric time bisects native targets only; {', '.join(emulated)} would run "
            "under QEMU here, where a time measures the emulator: use --metric instructions "
            "for them"
        )


_END_BUILDS: dict[tuple[str, str, int], tuple[str, GnunetBuild]] = {}
"""(bisection id, target, commit index of an end) -> (the run that built it, its
libgnunetutil as built by the incremental path, prefix set). Only builds whose packed
prefix is still on disk are reused (:func:`_reuse_end`)."""


def _reuse_end(bisect_id: str, v: _Version) -> None:
    """Give ``v`` (an end of a later step) the libgnunetutil built for that end earlier in
    this bisection: its run then builds no libgnunetutil, and its provenance says which
    run built it (``build_reused_from_run``)."""
    for p in v.plans:
        kept = _END_BUILDS.get((bisect_id, p.name, v.index))
        if kept is None or kept[1].prefix is None or not kept[1].prefix.path.is_file():
            continue
        run_id, build = kept
        provenance = {**(build.incremental or {}), "build_reused_from_run": run_id}
        v.workspace.gnunet_builds[p.name] = dataclasses.replace(build, incremental=provenance)


def _keep_end(bisect_id: str, v: _Version) -> None:
    """Remember the libgnunetutil ``v`` (an end) built, for :func:`_reuse_end`."""
    for p in v.plans:
        build = v.workspace.gnunet_builds.get(p.name)
        key = (bisect_id, p.name, v.index)
        if build is not None and build.prefix is not None and key not in _END_BUILDS:
            _END_BUILDS[key] = (v.run_id, build)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclasses.dataclass
class _Version:
    """One commit timed in a step: its run, plans and workspace."""

    index: int
    run_id: str
    plans: list[TargetPlan]
    workspace: Workspace
    failed: str = ""


def _prepare(
    manifest: BisectManifest,
    m: Matrix,
    index: int,
    targets: Sequence[Target],
    store: ResultStore,
    workspace: Callable[[str], Workspace],
    host_archs: Mapping[str, Arch],
) -> _Version:
    """A new run of commit ``index`` (its ``run.json``), planned for timing."""
    commit = manifest.commits[index]
    # Every step is timed beside the ends: a pooled target stays on one member throughout.
    plans = pin(
        plan(
            m,
            targets,
            dict(host_archs),
            dict(manifest.overrides),
            suites=["blindsig"],
            metrics=("time",),
            gnunet=GnunetGit(git=manifest.repository, ref=commit.commit),
        )
    )
    run_id = new_run_id()
    store.save_manifest(
        RunManifest(
            run_id=run_id,
            started_at=_now(),
            matrix_file=manifest.matrix_file,
            matrix_text=manifest.matrix_text,
            targets=tuple(p.name for p in plans),
            overrides=dict(manifest.overrides),
            repeat=manifest.rounds,
            suites=("blindsig",),
            metrics=("time",),
            gnunet=f"git+{manifest.repository}@{commit.commit}",
        )
    )
    return _Version(index, run_id, plans, workspace(run_id))


def _interval(
    store: ResultStore,
    manifest: BisectManifest,
    target: str,
    a: str,
    b: str,
    confidence: float = DEFAULT_CONFIDENCE,
) -> TInterval | None:
    """B/A of the row over the rounds both runs have (None: fewer than MIN_ROUNDS)."""
    sides: list[dict[int, list[float]]] = []
    for run_id in (a, b):
        files = [load(p) for p in store.files([run_id])]
        files = [f for f in files if f.metric == "time" and f.target.name == target]
        row = next(
            (
                r
                for f in files
                for r in f.harness.rows
                if r.suite == "blindsig"
                and r.scheme == manifest.scheme
                and r.operation == manifest.operation
                and (manifest.key_bits is None or r.key_bits == manifest.key_bits)
            ),
            None,
        )
        if row is None:
            return None
        sides.append(round_samples(files, target, row_key(target, row)))
    common = sorted(sides[0].keys() & sides[1].keys())
    rounds = [(sides[0][r], sides[1][r]) for r in common if sides[0][r] and sides[1][r]]
    return round_t_interval(rounds, confidence=confidence) if len(rounds) >= MIN_ROUNDS else None


def _triple(got: TInterval | None) -> tuple[float, ...]:
    return () if got is None else (got.ratio, got.low, got.high)


def _text(got: TInterval | None) -> str:
    if got is None:
        return "no interval"
    return f"{got.ratio:.3f}× [{got.low:.3f}, {got.high:.3f}]"


def timed_step(
    manifest: BisectManifest,
    m: Matrix,
    index: int,
    archs: Sequence[str],
    chosen: Mapping[str, Target],
    store: ResultStore,
    work: Path,
    apt_proxy: str | None,
    clients: Mapping[str, Any],
    host_archs: Mapping[str, Arch],
    reporter: Reporter,
) -> BisectStep:
    """Build commit ``index`` and time it in interleaved rounds beside the ends (module
    docs); the same signature as the counting step of :mod:`archbench.cli.bisect`.

    Raises:
        Interrupted: Ctrl-C (from :func:`archbench.run.execute`).
    """
    t0 = time.monotonic()
    commit = manifest.commits[index]
    bad_index = len(manifest.commits) - 1

    def workspace(run_id: str) -> Workspace:
        return Workspace(store=store, run_id=run_id, work_dir=work, apt_proxy=apt_proxy)

    counts = []
    for a in archs:
        target = chosen[manifest.targets[a]]
        args = (manifest, m, index, bad_index, a, target, store, workspace)
        counts.append(_timed_count(*args, clients, host_archs, reporter))
    return BisectStep(
        index=index,
        commit=commit.commit,
        subject=commit.subject,
        date=commit.date,
        counts=tuple(counts),
        seconds=round(time.monotonic() - t0, 1),
        finished_at=_now(),
    )


def _bad_record(manifest: BisectManifest, arch: str) -> BisectTime | None:
    bad_index = len(manifest.commits) - 1
    for s in manifest.steps:
        if s.index == bad_index:
            for c in s.counts:
                if c.arch == arch and c.time is not None:
                    return c.time
    return None


def _timed_count(
    manifest: BisectManifest,
    m: Matrix,
    index: int,
    bad_index: int,
    arch: str,
    target: Target,
    store: ResultStore,
    workspace: Callable[[str], Workspace],
    clients: Mapping[str, Any],
    host_archs: Mapping[str, Arch],
    reporter: Reporter,
) -> BisectCount:
    """One architecture's timed measurement of commit ``index`` (module docs)."""
    indices = [0] if index == 0 else [0, bad_index] if index == bad_index else [0, index, bad_index]
    versions = {
        i: _prepare(manifest, m, i, [target], store, workspace, host_archs) for i in indices
    }
    mine = versions[index]
    ends = (0, bad_index)
    for v in versions.values():
        if v.index in ends:
            _reuse_end(manifest.bisect_id, v)
        built = execute(
            clients, v.plans, v.workspace, host_archs,
            RunOptions(build_only=True, build_first=True), reporter=reporter,
        )  # fmt: skip
        bad = [o for o in built if not o.ok]
        if bad:
            v.failed = f"{bad[0].stage}: {bad[0].message}"
        elif v.index in ends:
            _keep_end(manifest.bisect_id, v)
    name = target.name
    if mine.failed:
        return BisectCount(arch=arch, target=name, run_id=mine.run_id, skipped=mine.failed[:2000])
    if index == 0:
        record = BisectTime(rounds=0, decision="good end", level=GOOD_LEVEL)
        return BisectCount(arch=arch, target=name, run_id=mine.run_id, verdict="good", time=record)
    failed = [v for v in versions.values() if v.failed]
    if failed:
        return BisectCount(
            arch=arch, target=name, run_id=mine.run_id,
            skipped=f"an end did not build: {failed[0].failed}"[:2000],
        )  # fmt: skip
    good_run, bad_run = versions[0].run_id, versions[bad_index].run_id
    bad_before = _bad_record(manifest, arch)
    session = f"bisect-{manifest.bisect_id}-{index}"
    first = max(manifest.rounds, MIN_ROUNDS)
    # An undecided end gets more rounds as an undecided probe does (time_end), up to the cap.
    cap = max(first, manifest.max_rounds)
    rounds = 0
    decision: TimeDecision = "undecided"
    end: EndDecision = "undecided"
    undecided = True
    vs_good: TInterval | None = None
    vs_bad: TInterval | None = None
    while rounds < first or (undecided and rounds < cap):
        rounds += 1
        order = list(versions.values())
        # An order to spread drift over the versions, not a secret: reproducible from the record.
        random.Random(f"{manifest.bisect_id}:{index}:{rounds}").shuffle(order)  # noqa: S311
        for v in order:
            timed = [
                dataclasses.replace(p, metrics=("time",), repeat=1, first_repeat=rounds,
                                    total_repeats=cap, interleaved=session)
                for p in v.plans
            ]  # fmt: skip
            done = execute(clients, timed, v.workspace, host_archs, reporter=reporter)
            if not all(o.ok for o in done):
                why = next(f"{o.stage}: {o.message}" for o in done if not o.ok)
                return BisectCount(
                    arch=arch, target=name, run_id=mine.run_id,
                    skipped=f"round {rounds}: {why}"[:2000],
                )  # fmt: skip
        if rounds < first:
            continue
        if index == bad_index:
            looks = end_confidence(first, cap)  # every look of the end together at 95 %
            vs_good = _interval(store, manifest, name, good_run, mine.run_id, looks)
            end = time_end(vs_good, DEFAULT_THRESHOLD)
            undecided = end == "undecided"
            continue
        vs_good = _interval(store, manifest, name, good_run, mine.run_id)
        vs_bad = _interval(store, manifest, name, bad_run, mine.run_id)
        if vs_good is not None and vs_bad is not None and bad_before is not None:
            decision = time_decision(vs_good, vs_bad, bad_before.decision, DEFAULT_THRESHOLD)
        undecided = decision == "undecided"
    if index == bad_index:
        moved = end in ("slower", "faster") and vs_good is not None
        ratio = vs_good.ratio if moved and vs_good is not None else GOOD_LEVEL
        record = BisectTime(
            rounds=rounds, good_run=good_run, vs_good=_triple(vs_good), decision=end,
            level=None if end == "undecided" else ratio,
        )  # fmt: skip
        said = end if moved else "no move"
        text = f"bad: {said} ({_text(vs_good)} of good, {rounds} rounds)"
        if end == "undecided":
            text = f"bad: undecided ({_text(vs_good)} of good, {rounds} rounds): {UNDECIDED_END}"
        return BisectCount(arch=arch, target=name, run_id=mine.run_id, verdict=text, time=record)
    bad_level = bad_before.level if bad_before is not None and bad_before.level else GOOD_LEVEL
    level = time_level(decision, bad_level)
    record = BisectTime(
        rounds=rounds, good_run=good_run, bad_run=bad_run, vs_good=_triple(vs_good),
        vs_bad=_triple(vs_bad), decision=decision,
        level=None if level is None else level.value,
    )  # fmt: skip
    detail = f"{_text(vs_good)} of good, {_text(vs_bad)} of bad, {rounds} rounds"
    if decision == "undecided":
        text = f"undecided ({detail}): not a verdict, left in the range"
    else:
        text = f"{decision} ({detail})"
    return BisectCount(arch=arch, target=name, run_id=mine.run_id, verdict=text, time=record)
