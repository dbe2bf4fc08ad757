"""``invoke bisect``: the commit that moved a row's instructions per operation, per architecture.

:func:`measure_bisection` lists the commits between ``good`` and ``bad`` of a git repository
(:func:`archbench.images.commit_range`), then measures one commit per step, each as an
ordinary run of the results store: libgnunetutil built from that commit (natively, or
cross-compiled for an emulated target, as ``invoke bench --gnunet git+URL@COMMIT``
does) and the blindsig row counted under QEMU (``--metric instructions``). Which
commit comes next, and on which architectures, is the pure logic of
:mod:`archbench.analysis.bisection`: exact counts, ``git bisect``'s choice on the
commit graph, skips for commits that do not build or run, several moves found when a
commit shows a third level.

Every step is written to ``<results>/<bisect-id>/bisect.json`` as soon as it is
measured (atomic, under the results folder's lock), with its commit, subject, date,
count per architecture and verdict; ``--resume BISECT_ID`` replays the stored steps
and goes on, so Ctrl-C or a lost engine costs at most the step in progress.

What a step reuses: a commit already counted on an architecture, by any earlier run of
the store (another bisection of another row over the same range, a history's version, an
``invoke bench --gnunet git+URL@REF``), with the same :class:`archbench.run.CountKey`
(repository, commit, target and its definition, QEMU CPU model, harness sources, plugin
version) is not built again: the step takes that run's count and records the run
(``BisectCount.reused``). Otherwise the base images, the build dependencies' image layers
and the cross stage's prefix are content-hashed and shared by every step (and with
``invoke bench``); what differs per commit is the libgnunetutil build and the counting run.

The command checks its flags (:data:`archbench.cli.flags.BISECT`) into one
:class:`BisectOptions` (a new bisection, or ``--resume BISECT_ID``), measures
(:func:`measure_bisection`) and prints the outcome.
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from archbench.analysis import (
    ArchState,
    Count,
    Graph,
    Measurement,
    OwnParent,
    against_parent,
    arch_state,
    block_kind,
    count_kind,
    median_per_op,
    next_probe,
    remaining_probes,
    same_level,
    spread,
    stored_count,
)
from archbench.cli.bisect_time import UNDECIDED_END, refuse_emulated, timed_step
from archbench.cli.config import Settings
from archbench.cli.flags import (
    ARCH,
    BAD,
    BISECT,
    BISECT_GNUNET,
    BISECT_METRIC,
    BISECT_RESUME,
    BISECT_ROUNDS,
    BLINDSIG,
    GOOD,
    MATRIX,
    ROW,
    TARGET,
    Given,
    archs,
    blindsig_overrides,
    split,
)
from archbench.cli.terminal import show
from archbench.errors import Interrupted, MatrixError, ResultsError, TargetsFailed
from archbench.images import counter_qemu_version, resolve_apt_proxy
from archbench.inputs import did_you_mean, quote
from archbench.matrix import GnunetGit, Matrix, Target, parse, parse_gnunet, read_matrix_text
from archbench.platforms import Arch
from archbench.result import (
    OPERATION_ORDER,
    BisectCommit,
    BisectCount,
    BisectManifest,
    BisectStep,
    ResultStore,
    RunManifest,
    check_run_id,
    folder_lock,
    load,
    new_run_id,
)
from archbench.run import (
    FoundCount,
    Reporter,
    RichReporter,
    TargetOutcome,
    TargetPlan,
    Workspace,
    check_overrides,
    connect_engines,
    count_key,
    execute,
    find_count,
    plan,
)
from archbench.sources import commit_range

ROW_PATTERN: Final = re.compile(r"(?i)^\s*(CS|RSA)(?:-(\d{3,5}))?\s+([a-z][a-z _-]*[a-z])\s*$")
"""``CS signing``, ``RSA-2048 key generation``, ``CS blinding-secret derivation``."""
ROW_ALIASES: Final = {"blinding secrets derivation": "blinding_secret_derivation"}


@dataclass(frozen=True)
class RowSpec:
    """The row a bisection follows: scheme, RSA modulus (None: the run's only size),
    operation id (:data:`archbench.result.OPERATION_ORDER`), and the text as given."""

    scheme: str
    key_bits: int | None
    operation: str
    text: str


def parse_row(text: str) -> RowSpec:
    """``--row``: a blindsig row as ``SCHEME[-BITS] OPERATION``.

    The operation is an operation id or its words (``blinding secret derivation``,
    ``blinding-secret derivation``, ``key generation``).

    Raises:
        MatrixError: not of that form, or no such operation (with the closest one).
    """
    m = ROW_PATTERN.match(text) if len(text) <= 100 else None
    if m is None:
        raise MatrixError(
            f"--row {quote(text)}: give a blindsig row as SCHEME[-BITS] OPERATION, e.g. "
            '"CS signing", "RSA-2048 signing" or "CS blinding-secret derivation"'
        )
    scheme, bits, words = m.group(1).upper(), m.group(2), m.group(3).lower()
    words = re.sub(r"[\s_-]+", " ", words)
    operation = ROW_ALIASES.get(words, words.replace(" ", "_"))
    known = [op for op in OPERATION_ORDER if not op.startswith("helper_")]
    if operation not in known:
        raise MatrixError(
            f"--row {quote(text)}: no blindsig operation {quote(words)}"
            f"{did_you_mean(operation, known)} (operations: {', '.join(known)})"
        )
    if scheme == "CS" and bits is not None:
        raise MatrixError(f"--row {quote(text)}: CS has no key size; give CS {words}")
    return RowSpec(scheme, int(bits) if bits else None, operation, text.strip())


@dataclass(frozen=True)
class BisectOptions:
    """One ``invoke bisect``, every flag checked.

    ``url``: the repository (as ``git+URL`` without ``@REF``); ``good``/``bad``: refs;
    ``archs``/``targets``: the matrix targets measured, one per architecture;
    ``overrides``: blindsig parameters (``--rsa-bits``, ``--repetitions``); ``resume``:
    a stored bisection to go on with (then the others but ``results``/``work`` are
    taken from its record).
    """

    matrix: Path
    results: Path
    work: Path
    url: str = ""
    good: str = ""
    bad: str = ""
    row: RowSpec | None = None
    archs: tuple[Arch, ...] = ()
    targets: tuple[str, ...] = ()
    overrides: Mapping[str, object] = field(default_factory=dict)
    resume: str | None = None
    metric: Literal["instructions", "time"] = "instructions"
    rounds: int = 0
    """``time``: interleaved rounds per step, and at most ``max_rounds`` for an undecided probe."""
    max_rounds: int = 0
    apt_proxy: str = "auto"
    on_wait: Callable[[str], None] = print
    """Where the line goes that says this bisection waits for another writer of the results."""
    matrix_text: str | None = None
    """The matrix as a stored history had it (None: read ``matrix``)."""
    bisect_id: str | None = None
    """The id of a new bisection (None: a fresh one); ``invoke history --bisect-steps``
    links it from the history before it starts."""


@dataclass(frozen=True)
class BisectRun:
    """A finished (or stopped) ``invoke bisect``: its record and each architecture's state."""

    store: ResultStore
    manifest: BisectManifest
    states: tuple[ArchState, ...]
    seconds: float
    """Wall time of this session's steps, in s."""


def graph_of(manifest: BisectManifest) -> Graph:
    """The commit graph a record holds: with the parents outside the range and the roots
    when the record counted every commit's parents (:attr:`archbench.analysis.Graph.complete`).

    Raises:
        ResultsError: the record's commits make no graph from good to bad (edited).
    """
    commits = manifest.commits
    complete = all(c.parent_count is not None for c in commits[1:])
    try:
        return Graph(
            tuple(c.parents for c in commits),
            boundary=frozenset(i for i, c in enumerate(commits) if c.boundary),
            roots=frozenset(
                i for i, c in enumerate(commits) if i and not c.boundary and c.parent_count == 0
            ),
            complete=complete,
        )
    except ValueError as exc:
        raise ResultsError(
            f"bisection {manifest.bisect_id}: its commits do not make one range from good to "
            f"bad ({exc}); the record was edited: restore it, or start a new bisection"
        ) from None


def steps_of(manifest: BisectManifest) -> list[tuple[int, Measurement]]:
    """The record's steps as the pure logic's (commit index, measurement) pairs."""
    out: list[tuple[int, Measurement]] = []
    for step in manifest.steps:
        # --metric time: the level the step decided (bisect_time); counts with their blocks.
        out.append((step.index, {c.arch: stored_count(c) for c in step.counts}))
    return out


def one_per_arch(chosen: Sequence[Target]) -> dict[str, str]:
    """Architecture -> the one chosen target measured there.

    Raises:
        MatrixError: an architecture has several targets, or none is chosen.
    """
    by_arch: dict[str, list[str]] = {}
    for t in chosen:
        by_arch.setdefault(t.arch.key, []).append(t.name)
    several = {a: names for a, names in by_arch.items() if len(names) > 1}
    if several:
        arch, names = sorted(several.items())[0]
        raise MatrixError(
            f"invoke bisect measures one target per architecture; {arch} has "
            f"{', '.join(names)}: choose with --target"
        )
    if not by_arch:
        raise MatrixError("no target selected: give --arch or --target")
    return {a: names[0] for a, names in by_arch.items()}


def stored_targets(m: Matrix, names: Sequence[str], what: str) -> list[Target]:
    """The targets ``names`` a stored record (``what``: ``history ID``, ``bisection ID``)
    measured, from the matrix it stored.

    Raises:
        ResultsError: the record names a target its own matrix does not have (it was edited,
            or its parts come from different records), saying it is the record's.
    """
    try:
        return m.select(list(names))
    except MatrixError as exc:
        raise ResultsError(
            f"{what} is inconsistent: it names targets its own stored matrix does not have "
            f"({exc}); it was edited or put together from other records: restore it, or "
            "start a new one"
        ) from None


def _new_manifest(options: BisectOptions) -> BisectManifest:
    if options.row is None:
        raise MatrixError("invoke bisect needs --row (e.g. --row 'CS signing')")
    matrix_file = str(options.matrix)
    matrix_text = (
        options.matrix_text if options.matrix_text is not None else read_matrix_text(options.matrix)
    )
    m = parse(matrix_text, matrix_file, base_dir=options.matrix.parent)
    targets = one_per_arch(m.select(list(options.targets), list(options.archs)))
    commits = commit_range(options.url, options.good, options.bad, options.work)
    index = {c.commit: i for i, c in enumerate(commits)}
    return BisectManifest(
        bisect_id=options.bisect_id or new_run_id(),
        created_at=_now(),
        matrix_file=matrix_file,
        matrix_text=matrix_text,
        repository=options.url,
        good=options.good,
        bad=options.bad,
        row=options.row.text,
        scheme=options.row.scheme,
        key_bits=options.row.key_bits,
        operation=options.row.operation,
        targets=targets,
        overrides=dict(options.overrides),
        metric=options.metric,
        rounds=options.rounds,
        max_rounds=options.max_rounds,
        commits=tuple(
            BisectCommit(
                commit=c.commit,
                parents=tuple(index[p] for p in c.parents),
                subject=c.subject,
                date=c.date,
                boundary=c.boundary,
                parent_count=c.parent_count,
            )
            for c in commits
        ),
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def measure_bisection(options: BisectOptions, reporter: Reporter | None = None) -> BisectRun:
    """Bisect (or resume bisecting) the row on every selected architecture (module docs).

    Raises:
        MatrixError: a bad row, selection or value (before anything is built).
        SourceError: a ref names no commit, good is not an ancestor of bad, git fails.
        ResultsError: ``resume`` names no readable bisection.
        EngineError: a host's engine cannot be reached.
        Interrupted: Ctrl-C; every finished step is kept and the message gives the
            ``--resume`` command.
    """
    # The reports (pandas) load when a step is measured, not when the flags are checked.
    from archbench.report import bisect_moves, stored_rows

    store = ResultStore(options.results)
    if options.resume is not None:
        manifest = store.load_bisect(options.resume)
    else:
        manifest = _new_manifest(options)
    bisect_id = manifest.bisect_id
    m = parse(
        manifest.matrix_text,
        f"{manifest.matrix_file} (as of bisection {manifest.bisect_id})",
        base_dir=Path(manifest.matrix_file).parent,
    )
    chosen = {
        t.name: t
        for t in stored_targets(
            m, list(manifest.targets.values()), f"bisection {manifest.bisect_id}"
        )
    }
    graph = graph_of(manifest)
    archs = sorted(manifest.targets)
    clients, host_archs = connect_engines(m, chosen.values(), show)
    measure = _measure
    if manifest.metric == "time":
        refuse_emulated(m, list(chosen.values()), host_archs)
        measure = timed_step
    apt_proxy = resolve_apt_proxy(clients.get("local"), options.apt_proxy)
    started = time.monotonic()
    with (
        # One writer per bisection (two --resume of it at once): the second waits, then
        # reads the record the first left, so no step is measured twice or lost.
        folder_lock(
            store.root / bisect_id, ResultsError, f"bisection {bisect_id}", options.on_wait
        ),
        folder_lock(store.root, ResultsError, "results folder", options.on_wait),
        contextlib.ExitStack() as stack,
    ):
        if options.resume is not None:
            manifest = store.load_bisect(options.resume)
        shown: Reporter = reporter if reporter is not None else stack.enter_context(RichReporter())

        def tell(text: str) -> None:
            shown.stage("bisect", text)

        store.save_bisect(manifest)
        tell(
            f"bisect {manifest.bisect_id}: {manifest.row} on {', '.join(archs)}, "
            f"{sum(not c.boundary for c in manifest.commits) - 1} commits after "
            f"{manifest.good} up to {manifest.bad}"
            + (f", {len(manifest.steps)} steps stored" if manifest.steps else "")
        )
        try:
            while (probe := next_probe(graph, archs, steps_of(manifest))) is not None:
                commit = manifest.commits[probe.commit]
                left = remaining_probes(graph, archs, steps_of(manifest))
                done = [s.seconds for s in manifest.steps]
                eta = f", ETA {_duration(left * sum(done) / len(done))}" if done else ""
                tell(
                    f"step {len(manifest.steps) + 1} (about {left} to go{eta}): "
                    f"{commit.commit[:12]} {commit.subject[:60]} on {', '.join(probe.archs)}"
                )
                step = measure(
                    manifest, m, probe.commit, probe.archs, chosen, store,
                    options.work, apt_proxy, clients, host_archs, shown,
                )  # fmt: skip
                manifest = manifest.model_copy(update={"steps": (*manifest.steps, step)})
                step = _with_verdicts(manifest, graph, step)
                manifest = manifest.model_copy(update={"steps": (*manifest.steps[:-1], step)})
                store.save_bisect(manifest)
                tell(step_line(step))
                for line in build_lines(store, step):
                    tell(line)
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted; {len(manifest.steps)} steps are kept in "
                f"{store.root / manifest.bisect_id / 'bisect.json'}: go on with "
                f"invoke bisect --resume {manifest.bisect_id}"
            ) from None
        states = tuple(arch_state(graph, a, steps_of(manifest)) for a in archs)
        manifest = manifest.model_copy(
            update={
                "outcome": "\n".join(outcome_lines(manifest, states)),
                "moves": bisect_moves(manifest, states, graph, stored_rows(store, manifest)),
            }
        )
        store.save_bisect(manifest)
    return BisectRun(store, manifest, states, time.monotonic() - started)


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def _measure(
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
    """Count commit ``index`` on ``archs``: from an earlier run where one has the same
    key (:func:`_reused`), else built and counted in one new run of the store."""
    commit = manifest.commits[index]
    t0 = time.monotonic()
    plans = _plans(manifest, m, commit.commit, archs, chosen, host_archs)
    found = _reused(manifest, commit.commit, plans, store, clients, reporter)
    for a, f in found.items():
        reporter.stage(
            "bisect",
            f"{a}: {commit.commit[:12]} was counted in run {f.run_id}: reused "
            f"({f.path.name}, digest {f.digest[:19]}…, checked)",
        )
    reused = {a: f.run_id for a, f in found.items()}
    built = [a for a in archs if a not in reused]
    run_id, outcomes = "", dict[str, TargetOutcome]()
    if built:
        run_id, outcomes = _build_and_count(
            manifest, commit.commit, [plans[a] for a in built], store, work, apt_proxy,
            clients, host_archs, reporter,
        )  # fmt: skip
    counts = tuple(
        _count(manifest, a, manifest.targets[a], reused[a], None, store, reused=True).model_copy(
            update={"digest": found[a].digest}
        )
        if a in reused
        else _count(
            manifest, a, manifest.targets[a], run_id, outcomes.get(manifest.targets[a]), store
        )
        for a in archs
    )
    return BisectStep(
        index=index,
        commit=commit.commit,
        subject=commit.subject,
        date=commit.date,
        counts=counts,
        seconds=round(time.monotonic() - t0, 1),
        finished_at=_now(),
    )


def _plans(
    manifest: BisectManifest,
    m: Matrix,
    commit: str,
    archs: Sequence[str],
    chosen: Mapping[str, Target],
    host_archs: Mapping[str, Arch],
) -> dict[str, TargetPlan]:
    """Architecture -> the plan that counts the blindsig row with libgnunetutil at ``commit``."""
    plans = plan(
        m,
        [chosen[manifest.targets[a]] for a in archs],
        dict(host_archs),
        dict(manifest.overrides),
        suites=["blindsig"],
        metrics=("instructions",),
        gnunet=GnunetGit(git=manifest.repository, ref=commit),
    )
    return {a: p for a, p in zip(archs, plans, strict=True)}


def _reused(
    manifest: BisectManifest,
    commit: str,
    plans: Mapping[str, TargetPlan],
    store: ResultStore,
    clients: Mapping[str, Any],
    reporter: Reporter,
) -> dict[str, FoundCount]:
    """Architecture -> the stored count of ``commit`` with the same
    :class:`archbench.run.CountKey` as ``plans`` would have (none where there is none, or
    where the engine has no counter tools yet, so the QEMU of a new count is unknown);
    what :func:`archbench.run.find_count` passed over is said through ``reporter``.

    Raises:
        CountConflict: stored counts of the key disagree, or one is damaged.
    """
    found = {}
    row = (manifest.scheme, manifest.key_bits, manifest.operation)
    for a, p in plans.items():
        qemu = counter_qemu_version(clients[p.host_name], p.target.arch)
        if qemu is None:
            reporter.stage("bisect", f"{a}: no counter tools on the engine yet: counting anew")
            continue
        search = find_count(store, count_key(p, manifest.repository, commit, qemu), row)
        for note in search.notes:
            reporter.stage("bisect", f"{a}: {note}")
        if search.found is not None:
            found[a] = search.found
    return found


def _build_and_count(
    manifest: BisectManifest,
    commit: str,
    plans: Sequence[TargetPlan],
    store: ResultStore,
    work: Path,
    apt_proxy: str | None,
    clients: Mapping[str, Any],
    host_archs: Mapping[str, Arch],
    reporter: Reporter,
) -> tuple[str, dict[str, TargetOutcome]]:
    """Build and count ``plans`` in one new run of the store: its id and the outcome of
    each target, by name."""
    run_id = new_run_id()
    store.save_manifest(
        RunManifest(
            run_id=run_id,
            started_at=_now(),
            matrix_file=manifest.matrix_file,
            matrix_text=manifest.matrix_text,
            targets=tuple(p.name for p in plans),
            overrides=dict(manifest.overrides),
            suites=("blindsig",),
            metrics=("instructions",),
            gnunet=f"git+{manifest.repository}@{commit}",
        )
    )
    ws = Workspace(store=store, run_id=run_id, work_dir=work, apt_proxy=apt_proxy)
    outcomes = execute(clients, plans, ws, host_archs, reporter=reporter)
    return run_id, {o.name: o for o in outcomes}


def _count(
    manifest: BisectManifest,
    arch: str,
    target: str,
    run_id: str,
    outcome: TargetOutcome | None,
    store: ResultStore,
    *,
    reused: bool = False,
) -> BisectCount:
    """The row's count in the run's stored result, or a skip saying why there is none;
    ``reused``: the run is an earlier one (no outcome of this step), recorded as such."""
    if not reused and (outcome is None or not outcome.ok):
        why = "no outcome" if outcome is None else f"{outcome.stage}: {outcome.message}"
        return BisectCount(arch=arch, target=target, run_id=run_id, skipped=why[:2000])
    return _row_count(manifest, arch, target, run_id, store).model_copy(update={"reused": reused})


def _row_count(
    manifest: BisectManifest, arch: str, target: str, run_id: str, store: ResultStore
) -> BisectCount:
    """The row's count in the stored counting result of ``target`` in ``run_id``.

    Raises:
        ResultsError: a results file of the run cannot be read (edited, truncated, of a
            format not ours): the bisection stops without deciding, naming the run.
    """
    # The reports (pandas) load when a step is measured, not when the flags are checked.
    from archbench.report import bisect_row

    try:
        row = bisect_row(manifest, [load(path) for path in store.files([run_id])], target)
    except ResultsError as exc:
        raise ResultsError(
            f"bisection {manifest.bisect_id}, {arch}: the count of run {run_id} cannot be "
            f"read ({exc}); nothing was decided from it and every step before is kept: "
            f"restore or move that run away, then invoke bisect --resume {manifest.bisect_id}"
        ) from None
    if row is None:
        return BisectCount(
            arch=arch, target=target, run_id=run_id,
            skipped=f"run: no {manifest.row} row among the counted results",
        )  # fmt: skip
    if not row.valid or not row.instructions:
        return BisectCount(
            arch=arch, target=target, run_id=run_id,
            skipped=f"run: the row is invalid: {row.invalid_reason or 'no count'}",
        )  # fmt: skip
    return BisectCount(
        arch=arch,
        target=target,
        run_id=run_id,
        instructions=median_per_op(row.instructions, row.ops_per_block),
        spread=spread(row.instructions),
        blocks=tuple(row.instructions),
        ops_per_block=row.ops_per_block,
    )


def _with_verdicts(manifest: BisectManifest, graph: Graph, step: BisectStep) -> BisectStep:
    """``step`` with each count's verdict against the good and bad commits' counts."""
    ends: dict[tuple[int, str], Count] = {}
    for s in manifest.steps:
        for c in s.counts:
            end = stored_count(c) if s.index in (0, graph.bad) and c.time is None else None
            if end is not None:
                ends.setdefault((s.index, c.arch), end)
    counts = []
    for c in step.counts:
        if c.time is not None:  # decided with its rounds (bisect_time)
            counts.append(c)
            continue
        mine = stored_count(c)
        if mine is None:
            verdict = "skipped (did not build or run)"
        else:
            good, bad = ends.get((0, c.arch)), ends.get((graph.bad, c.arch))
            if step.index == 0:
                verdict = "good"
            elif step.index == graph.bad:
                verdict = "bad" if good is None or not same_level(good, mine) else "bad: no move"
            elif good is not None and same_level(good, mine):
                verdict = "at the good count"
            elif bad is not None and same_level(bad, mine):
                verdict = "at the bad count"
            else:
                verdict = "a third count: the row moved in several commits"
            if step.index in graph.boundary:
                # Measured as the own parent of a commit found: not a candidate itself.
                verdict = f"before good, a parent outside the range: {verdict}"
        counts.append(c.model_copy(update={"verdict": verdict}))
    return step.model_copy(update={"counts": tuple(counts)})


def step_line(step: BisectStep) -> str:
    """One stored step as a line: commit, subject, count and verdict per architecture."""
    parts = []
    for c in step.counts:
        if c.time is not None:  # --metric time: the decision says it (bisect_time)
            parts.append(f"{c.arch} {c.verdict}")
        elif c.instructions is None:
            parts.append(f"{c.arch} skipped ({(c.skipped or '')[:120]})")
        else:
            reused = f"; reused run {c.run_id}" if c.reused else ""
            shown = block_kind(c.blocks) if c.blocks else count_kind(c.spread)
            kind = f"; {shown} ±{c.spread:.2%}" if c.spread else ""
            parts.append(f"{c.arch} {c.instructions:,.1f} ({c.verdict}{reused}{kind})")
    return (
        f"{step.commit[:12]} {step.date[:10]} {step.subject[:60]}: "
        + "; ".join(parts)
        + f" [{step.seconds:.0f} s]"
    )


def build_line(arch: str, source: Mapping[str, str | bool | None]) -> str:
    """How a step built libgnunetutil on ``arch``, from its result's provenance
    (``execution.gnunet_source``: :meth:`archbench.images.IncrementalBuild.provenance`):
    clean or incremental, in which tree, its seconds and what ccache reused."""
    mode = source.get("build_mode")
    if not mode:
        return f"{arch}: libgnunetutil built inside the image build (not incremental)"
    why = f" ({source['build_reason']})" if mode == "clean" and source.get("build_reason") else ""
    hits, misses = source.get("ccache_hits"), source.get("ccache_misses")
    cache = f", ccache {hits} hits, {misses} misses" if hits is not None else ""
    return (
        f"{arch}: libgnunetutil {mode} build{why} in {source.get('build_seconds')} s "
        f"(tree {source.get('build_tree')}{cache})"
    )


BUILD_STATE: Final = re.compile(r"^build-incremental\.sh: ((?:clean|incremental)\b.*)$", re.M)
"""The first line ``images/gnunet-source/build-incremental.sh`` writes to its log."""


def build_lines(store: ResultStore, step: BisectStep) -> list[str]:
    """:func:`build_line` of each count the step built (not those reused from a run
    before), read from the step's own run: its result, or where it stored none (the
    good end of ``--metric time``, which is built but not timed alone; a build that
    failed) the first line of its build log ``logs/<target>.gnunet.log``."""
    lines = []
    for c in step.counts:
        if c.reused or not c.run_id:
            continue
        for path in store.files([c.run_id]):
            try:
                result = load(path)
            except ResultsError:
                continue
            if result.target.name == c.target and result.execution is not None:
                lines.append(build_line(c.arch, result.execution.gnunet_source or {}))
                break
        else:
            log = store.root / c.run_id / "logs" / f"{c.target}.gnunet.log"
            try:
                with log.open("rb") as f:
                    head = f.read(4096).decode(errors="replace")
            except OSError:
                continue
            if found := BUILD_STATE.search(head):
                lines.append(f"{c.arch}: libgnunetutil {found.group(1)} build (log {log})")
    return lines


def outcome_lines(manifest: BisectManifest, states: Sequence[ArchState]) -> list[str]:
    """The result per architecture, in words: the commit(s) that moved the row (with
    the counts on either side), the range a move could not be narrowed below (with the
    commits that did not build), or why there is none."""
    counts: dict[tuple[int, str], float] = {}
    for step in manifest.steps:
        for n in step.counts:
            if n.instructions is not None:
                counts.setdefault((step.index, n.arch), n.instructions)
    graph, steps = graph_of(manifest), steps_of(manifest)
    lines = []
    for st in states:
        undecided = undecided_end(manifest, st.arch)
        if st.status == "failed" and undecided is not None:
            lines.append(f"{st.arch}: {manifest.row}: {undecided}")
            continue
        if st.status != "moved":
            span = f"{manifest.good} and {manifest.bad}"
            why = {
                "no move": f"{manifest.row} did not move between {span}",
                "failed": f"{span}: one did not build or run, nothing to bisect",
                "unmeasured": "not finished (resume to go on)",
            }[st.status]
            lines.append(f"{st.arch}: {why}")
            continue
        owns = [against_parent(graph, st.arch, steps, s.bad) if s.exact else None
                for s in st.searches]  # fmt: skip
        moved = sum(o is None or o.verdict in ("moved", "unchecked") for o in owns)
        if moved > 1:
            lines.append(f"{st.arch}: {manifest.row} moved in {moved} commits")
        for s, own in zip(st.searches, owns, strict=True):
            c = manifest.commits[s.bad]
            # The count before a move is its own parent's (git bisect's reasoning); only a
            # record without every parent falls back on the search's good level.
            start = s.goods[0]
            if own is not None and own.verdict == "moved" and own.parent is not None:
                start = own.parent
            before = counts.get((start, st.arch))
            after = counts.get((s.bad, st.arch))
            ratio = (
                f" ({before:,.1f} → {after:,.1f}, {after / before:.3f}×)"
                if before and after
                else ""
            )
            if not s.done:
                lines.append(f"{st.arch}: not finished: the move is among {len(s.range)} commits")
            elif own is not None and own.verdict not in ("moved", "unchecked"):
                lines.append(f"{st.arch}: {_not_moved(manifest, c, own)}")
            elif s.exact:
                lines.append(
                    f"{st.arch}: first moved at {c.commit} ({c.date[:10]}, {c.subject}){ratio}"
                )
            else:
                skipped = ", ".join(manifest.commits[i].commit[:12] for i in sorted(s.skipped))
                lines.append(
                    f"{st.arch}: moved in one of {len(s.range)} commits up to {c.commit[:12]} "
                    f"({c.subject}){ratio}; could not split them: {skipped} did not build or run"
                )
    return lines


def _not_moved(manifest: BisectManifest, c: BisectCommit, own: OwnParent) -> str:
    """Why the commit a search narrowed to is not said to have moved the row
    (:func:`archbench.analysis.against_parent`)."""
    at = f"{c.commit[:12]} ({c.subject[:60]})"
    p = manifest.commits[own.parent] if own.parent is not None else None
    if own.verdict == "root":
        return (
            f"{at} has no parent (a history of its own, merged in later): its count is "
            "not a move of this range's line; bisect from the merge that brought it"
        )
    assert p is not None
    if own.verdict == "inherited":
        where = " (from before good, on a branch merged later)" if p.boundary else ""
        return (
            f"{at} has the count of its own parent {p.commit[:12]}{where}: it moved "
            "nothing; the level came with that parent, not from a commit of the range"
        )
    if own.verdict == "parent skipped":
        return (
            f"{at} is where the search ended, but its own parent {p.commit[:12]} did not "
            "build or run there, so the move could not be checked against it"
        )
    return f"{at}: not finished: its own parent {p.commit[:12]} is to be measured (resume)"


def undecided_end(manifest: BisectManifest, arch: str) -> str | None:
    """``--metric time``: why the bad end's rounds on ``arch`` decided nothing
    (:func:`archbench.analysis.time_end` undecided even with the most rounds), else None:
    neither "no move" nor a failed build, and nothing was bisected."""
    bad = len(manifest.commits) - 1
    for step in manifest.steps:
        for c in step.counts:
            if step.index == bad and c.arch == arch and c.time is not None:
                if c.time.decision != "undecided":
                    return None
                ratio = "no interval"
                if len(c.time.vs_good) == 3:
                    r, low, high = c.time.vs_good
                    ratio = f"{r:.3f}× [{low:.3f}, {high:.3f}] of {manifest.good}"
                return (
                    f"undecided whether {manifest.bad} moved: {ratio} after "
                    f"{c.time.rounds} rounds; {UNDECIDED_END}"
                )
    return None


def undecided_lines(manifest: BisectManifest) -> list[str]:
    """``--metric time``: the probes their rounds could not decide, per architecture. They
    are replayed as skips, so a range above that holds them was not split by time."""
    found: dict[str, list[str]] = {}
    for step in manifest.steps:
        for c in step.counts:
            last = step.index == len(manifest.commits) - 1  # the bad end: the outcome says it
            if c.time is not None and c.time.decision == "undecided" and not last:
                found.setdefault(c.arch, []).append(f"{step.commit[:12]} ({c.time.rounds} rounds)")
    return [
        f"{arch}: undecided by time, not taken as a verdict: {', '.join(commits)}"
        for arch, commits in sorted(found.items())
    ]


def summary_line(done: BisectRun) -> str:
    """Steps, builds and counts made and reused, and the wall time, in one line."""
    steps = done.manifest.steps
    made = sum(1 for st in steps for c in st.counts if not c.reused)
    reused = sum(1 for st in steps for c in st.counts if c.reused)
    total = sum(st.seconds for st in steps)
    return (
        f"{len(steps)} steps ({made} builds and counts, {reused} counts reused), "
        f"{total / 60:.1f} min measuring in all ({done.seconds / 60:.1f} min this session)"
    )


def bisect_options(s: Settings, g: Given) -> BisectOptions:
    """``invoke bisect``'s flags and settings, every flag checked, as one options object.

    Raises:
        MatrixError: a flag value is not allowed, a flag ``--resume`` takes from the
            stored bisection, or a missing ``--gnunet``/``--good``/``--bad``/``--row``.
    """
    metric = g.text(BISECT_METRIC)
    if metric not in ("instructions", "time"):
        raise MatrixError(
            f"{BISECT_METRIC.option} {quote(metric)}: allowed are instructions (exact counts "
            "under QEMU, any target) and time (interleaved rounds, native targets only)"
        )
    given_rounds = g.optional(BISECT_ROUNDS)
    if given_rounds is not None and metric != "time":
        raise MatrixError(f"{BISECT_ROUNDS.option} is for --metric time (counts are exact)")
    rounds = BISECT_ROUNDS.integer_or_absent(given_rounds)
    chosen = blindsig_overrides(g)
    check_overrides(chosen)
    matrix = Path(g.text(MATRIX) or s.matrix)
    resume = g.text(BISECT_RESUME)
    gnunet, good, bad, row = (g.optional(f) for f in (BISECT_GNUNET, GOOD, BAD, ROW))
    if resume:
        check_run_id(resume, BISECT_RESUME.option, MatrixError)
        named = [
            f.option
            for f in (BISECT_GNUNET, GOOD, BAD, ROW, ARCH, TARGET, BISECT_ROUNDS, MATRIX)
            if g.optional(f)
        ]
        if metric != BISECT_METRIC.default:  # it has a default: only another value is news
            named.append(BISECT_METRIC.option)
        # The blindsig settings a bisection measures with are its own too (stored).
        own = {f.name for f in BLINDSIG}
        named += [f.option for f in g.command.flags if f.name in own and g.optional(f)]
        if named:
            raise MatrixError(
                f"--resume takes the bisection's own {', '.join(named)}: give none of them "
                f"(bisection {resume} goes on as it was started; for other values, start a "
                "new bisection without --resume)"
            )
        return BisectOptions(matrix=matrix, results=Path(s.results), work=Path(s.work),
                             resume=resume, apt_proxy=s.apt_proxy, on_wait=show)  # fmt: skip
    missing = [f.option for f in (BISECT_GNUNET, GOOD, BAD, ROW) if not g.optional(f)]
    if missing:
        raise MatrixError(
            f"invoke bisect needs {', '.join(missing)} (e.g. --gnunet git+file:///srv/"
            "gnunet.git --good v0.21.2 --bad v0.22.2 --row 'CS signing')"
        )
    assert gnunet and good and bad and row
    if not gnunet.startswith("git+") or "@" in gnunet.rpartition("/")[2]:
        raise MatrixError(
            f"{BISECT_GNUNET.option} {quote(gnunet)}: give git+URL without @REF (the refs are "
            f"{GOOD.option}, {BAD.option})"
        )
    url = gnunet[len("git+") :]
    # The grammar of a git source checks the URL and each ref as for bench --gnunet; each
    # refusal names the flag whose value it is.
    parse_gnunet(f"git+{url}@HEAD", BISECT_GNUNET.option)
    for flag, ref in ((GOOD, good), (BAD, bad)):
        if "@" in ref:  # git+URL@REF splits at the last '@': say it of the ref itself
            raise MatrixError(
                f"{flag.option} {quote(ref)}: a ref holds no '@' (reflog forms such as "
                "HEAD@{1} are not taken); give a tag, branch or commit id"
            )
        parse_gnunet(f"git+{url}@{ref}", flag.option)
    return BisectOptions(
        matrix=matrix,
        results=Path(s.results),
        work=Path(s.work),
        url=url,
        good=good,
        bad=bad,
        row=parse_row(row),
        archs=tuple(archs(g.optional(ARCH))),
        targets=tuple(split(g.optional(TARGET), TARGET.option)),
        overrides=chosen,
        apt_proxy=s.apt_proxy,
        on_wait=show,
        metric="time" if metric == "time" else "instructions",
        rounds=rounds if metric == "time" else 0,
        max_rounds=2 * rounds if metric == "time" else 0,
    )


def bisect(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke bisect``: the commit(s) between two refs that moved a row's instructions
    per operation, on each selected architecture (:func:`archbench.run.measure_bisection`).

    Prints every step as it is measured (with an ETA), the outcome per architecture,
    the number of steps and the wall time, and where ``bisect.json`` is.

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        SourceError: a ref names no commit, or good is not an ancestor of bad.
        TargetsFailed: good or bad did not build or run on some architecture.
        ArchbenchError: whatever :func:`archbench.run.measure_bisection` raises.
    """
    options = bisect_options(s, Given(BISECT, values))
    # The reports (pandas) load once the flags are checked: a refused flag costs less.
    from archbench.report import bisect_moved, move_lines, write_bisect_page

    done = measure_bisection(options)
    show()
    for line in done.manifest.outcome.splitlines():
        show(line)
    for line in undecided_lines(done.manifest):
        show(line)
    for line in move_lines(bisect_moved(done.manifest)):
        show(line)
    show(summary_line(done))
    where = done.store.root / done.manifest.bisect_id / "bisect.json"
    show(f"bisection: {where}")
    if done.manifest.outcome:
        for p in write_bisect_page(done.store, Path(s.reports), done.manifest, show):
            show(f"wrote {p}")
    failed = [
        st.arch
        for st in done.states
        if st.status == "failed" and undecided_end(done.manifest, st.arch) is None
    ]
    if failed:
        raise TargetsFailed(
            f"{done.manifest.good} or {done.manifest.bad} did not build or run on "
            f"{', '.join(failed)}: see the steps in {where}"
        )
