"""``invoke history``: one run per version of a series, measured in interleaved rounds.

A version is a GNUnet source (``--gnunet``, each in the grammar of ``invoke bench
--gnunet``), a Debian release (``--base``, a base of the matrix), or a pair of both;
:func:`versions_of` pairs the two lists. Each version becomes an ordinary run of the
results store (its ``run.json`` names the history), so ``invoke report`` and
``invoke compare`` read it as any other run.

:func:`measure_history` builds every version's images first (nothing is built while anything
is timed), then measures:

* **native targets, timed, in rounds**: round ``r`` runs every version once, in an
  order drawn from a recorded seed (:func:`round_orders`), so that drift of a busy
  machine lands on every version alike; each version's round ``r`` is its container
  run ``repeat_index = r``, and every run of the session carries the session's id in
  ``Execution.interleaved``. Comparisons pair rounds by that id and index;
* **every target, counted**: instructions per operation under QEMU, once per version
  (counts do not drift with load); emulated targets are only counted, their times
  would be the emulator's.

The manifest (:class:`archbench.result.HistoryManifest`, ``<results>/<history-id>/
history.json``) lists the versions in series order, their runs and the order of
every round; it is written before anything is measured and after every round, so an
interruption leaves a consistent record. ``--extend HISTORY_ID`` measures more
versions in a session of their own and appends them: the others are not measured
again, and comparisons across the two sessions say they were not interleaved.

The command checks its flags (:data:`archbench.cli.flags.HISTORY`, the blindsig ones
shared with ``bench``) into one :class:`HistoryOptions`, measures
(:func:`measure_history`), prints the history's tables, writes its results page and
applies ``--fail-above`` and the matrix's limits to the counted steps.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archbench import matrix
from archbench.analysis import over_limits
from archbench.cli.bench import build_jobs, path_or_setting, raise_failures
from archbench.cli.config import Settings
from archbench.cli.flags import (
    ARCH,
    BASE,
    CPUS,
    EXTEND,
    HISTORY,
    HISTORY_FAIL_ABOVE,
    HISTORY_GNUNET,
    HISTORY_TALER,
    MATRIX,
    ROUNDS,
    SEED,
    SUITE,
    TARGET,
    Given,
    archs,
    blindsig_overrides,
    split,
)
from archbench.cli.terminal import show
from archbench.errors import Interrupted, LimitExceeded, MatrixError, ReportError, ResultsError
from archbench.images import resolve_apt_proxy
from archbench.inputs import did_you_mean, quote
from archbench.matrix import (
    GnunetDebian,
    GnunetGit,
    GnunetPath,
    GnunetSource,
    GnunetTarball,
    Matrix,
    Target,
    gnunet_flag,
    parse,
    parse_cpus,
    parse_gnunet,
    parse_taler,
    read_matrix_text,
)
from archbench.platforms import Arch
from archbench.report import (
    history_changes,
    history_steps,
    render_changes_markdown,
    render_history_markdown,
    render_steps_markdown,
    write_page_from_store,
)
from archbench.result import (
    HistoryManifest,
    HistoryRound,
    HistoryVersion,
    ResultStore,
    RunManifest,
    check_run_id,
    folder_lock,
    load,
    new_run_id,
)
from archbench.run import (
    Reporter,
    RichReporter,
    RunOptions,
    TargetOutcome,
    TargetPlan,
    Workspace,
    check_cpusets,
    check_overrides,
    check_quotas,
    connect_engines,
    execute,
    plan,
)
from archbench.suites import COUNTED_SUITES

MAX_VERSIONS = 32


@dataclass(frozen=True)
class HistoryOptions:
    """One ``invoke history``, every flag checked.

    ``sources``/``bases``: the series (see :func:`versions_of`); ``rounds``: timed
    rounds of the native targets (:data:`archbench.cli.flags.ROUNDS`); ``seed``: draws
    the round orders (None: a fresh one, recorded); ``extend``: the id of a stored
    history to append to (its matrix and targets are used, ``matrix``/``targets``/
    ``archs`` are not).
    """

    matrix: Path
    results: Path
    work: Path
    sources: tuple[GnunetSource, ...] = ()
    bases: tuple[str, ...] = ()
    talers: tuple[GnunetSource, ...] = ()
    """``--taler``: the series of exchange sources (paired with ``sources``/``bases`` as
    they pair with each other); empty: the matrix's ``taler:``."""
    targets: tuple[str, ...] = ()
    archs: tuple[Arch, ...] = ()
    overrides: Mapping[str, object] = field(default_factory=dict)
    suites: tuple[str, ...] = ()
    cpus: float | None = None
    rounds: int = 8
    seed: int | None = None
    extend: str | None = None
    apt_proxy: str = "auto"
    build_jobs: int = 2
    on_wait: Callable[[str], None] = print
    """Where the line goes that says this history waits for another writer of the results."""


@dataclass(frozen=True)
class HistoryRun:
    """A finished ``invoke history``: its manifest and every target outcome, by run id."""

    store: ResultStore
    manifest: HistoryManifest
    outcomes: Mapping[str, tuple[TargetOutcome, ...]]
    """Run id -> the outcomes of its build, rounds and counts (failed ones included)."""


def series_of(
    sources: Sequence[GnunetSource],
    bases: Sequence[str],
    talers: Sequence[GnunetSource] = (),
    existing: int = 0,
) -> list[tuple[GnunetSource | None, str | None, GnunetSource | None]]:
    """The series as ``(source, base, exchange)`` triples, paired as :func:`versions_of`
    pairs ``--gnunet`` and ``--base``; ``talers`` (``--taler``) is a third list of the
    same kind: as many entries, or one for every version. An exchange series alone is a
    series (``--taler A,B`` with the matrix's GNUnet). ``existing``: as for
    :func:`versions_of`.

    Raises:
        MatrixError: as :func:`versions_of`, for ``--taler`` too.
    """
    if not talers:
        return [(s, b, None) for s, b in versions_of(sources, bases, existing)]
    n = max(len(sources), len(bases), len(talers))
    if sources or bases:
        many = max(len(sources), len(bases)) > 1
        pairs = versions_of(sources, bases, existing) if many else []
        if not pairs:
            one = (sources[0] if sources else None, bases[0] if bases else None)
            pairs = [one] * n
    else:
        pairs = [(None, None)] * n
    if len(talers) not in (1, n) or len(pairs) != n:
        raise MatrixError(
            f"--taler has {len(talers)} entries and the other lists {len(pairs) or 1}: "
            "give as many, or one"
        )
    if n + existing < 2:
        raise MatrixError("a history needs at least two versions to compare")
    if n + existing > MAX_VERSIONS:
        raise MatrixError(f"a history of {n + existing} versions; at most {MAX_VERSIONS}")
    return [(s, b, talers[i] if len(talers) > 1 else talers[0]) for i, (s, b) in enumerate(pairs)]


def versions_of(
    sources: Sequence[GnunetSource], bases: Sequence[str], existing: int = 0
) -> list[tuple[GnunetSource | None, str | None]]:
    """The series as ``(source, base)`` pairs, in order; None: the matrix's own.

    Equal lengths pair up; a list of one goes with every entry of the other
    (``--gnunet debian --base debian-bookworm,debian-trixie,debian-sid``).

    The same version may come twice or more: an A/A series, whose steps and verdicts
    are the noise floor of the machine it ran on.

    ``existing``: the versions a history extended (``--extend``) has already; one more
    version then makes a series.

    Raises:
        MatrixError: no version, fewer than two or more than :data:`MAX_VERSIONS` (with
            ``existing``), or lengths that do not pair.
    """
    if not sources and not bases:
        raise MatrixError(
            "invoke history needs a series: --gnunet S1,S2,... (GNUnet sources) and/or "
            "--base B1,B2,... (matrix bases, e.g. Debian releases)"
        )
    n = max(len(sources), len(bases))
    for name, given in (("--gnunet", sources), ("--base", bases)):
        if given and len(given) not in (1, n):
            raise MatrixError(
                f"{name} has {len(given)} entries and the other list {n}: give as many, or one"
            )
    pairs: list[tuple[GnunetSource | None, str | None]] = [
        (
            (sources[i] if len(sources) > 1 else sources[0]) if sources else None,
            (bases[i] if len(bases) > 1 else bases[0]) if bases else None,
        )
        for i in range(n)
    ]
    if n + existing < 2:
        raise MatrixError("a history needs at least two versions to compare")
    if n + existing > MAX_VERSIONS:
        raise MatrixError(
            f"a history of {n + existing} versions ({existing} stored, {n} new); "
            f"at most {MAX_VERSIONS}"
        )
    return pairs


def version_label(
    source: GnunetSource | None, base: str | None, taler: GnunetSource | None = None
) -> str:
    """A short name for a version: ``gnunet-0.27.0.tar.gz on debian-trixie``, with an
    exchange first: ``taler-exchange-0.14.0.tar.gz with gnunet-0.22.2.tar.gz``."""
    if taler is not None:
        return f"{_source_name(taler)} with {version_label(source, base)}"
    return _with_base(_gnunet_name(source), base)


def _source_name(source: GnunetSource) -> str:
    if isinstance(source, GnunetTarball):
        return Path(source.tarball).name
    if isinstance(source, GnunetGit):
        return f"git {source.ref}"
    if isinstance(source, GnunetPath):
        return f"tree {Path(source.path).name}"
    return str(source)


def _with_base(what: str, base: str | None) -> str:
    return f"{what} on {base}" if base else what


def _gnunet_name(source: GnunetSource | None) -> str:
    if source is None or isinstance(source, GnunetDebian):
        return "Debian's libgnunet"
    return _source_name(source)


def round_orders(run_ids: Sequence[str], rounds: int, seed: int) -> list[tuple[str, ...]]:
    """The order of ``run_ids`` in each of ``rounds`` rounds, drawn from ``seed``.

    Each round is a fresh shuffle (``random.Random(seed)``), so which version runs
    first varies from round to round and none is favoured by the machine warming up
    or getting busier during a round; the same seed gives the same orders.
    """
    rng = random.Random(seed)  # noqa: S311  # an order of runs, not a secret
    orders = []
    for _ in range(rounds):
        order = list(run_ids)
        rng.shuffle(order)
        orders.append(tuple(order))
    return orders


def _rebase(m: Matrix, chosen: Sequence[Target], base: str | None) -> list[Target]:
    """``chosen`` with every target on ``base`` (None: their own)."""
    if base is None:
        return list(chosen)
    if base not in m.bases:
        hint = did_you_mean(base, m.bases)
        raise MatrixError(
            f"--base {quote(base)}: no such base in the matrix; it has "
            f"{', '.join(sorted(m.bases))}{hint}"
        )
    return [t.model_copy(update={"base": base}) for t in chosen]


@dataclass
class _Version:
    """One version while the history runs: its plans, workspace and manifests."""

    entry: HistoryVersion
    source: GnunetSource | None
    plans: list[TargetPlan]
    workspace: Workspace
    outcomes: list[TargetOutcome] = field(default_factory=list)
    taler: GnunetSource | None = None


@dataclass(frozen=True)
class _Series:
    """Where a history's versions come from: its matrix (as written), targets and session."""

    matrix_file: str
    matrix_text: str
    m: Matrix
    chosen: list[Target]
    old: HistoryManifest | None
    """The stored history ``--extend`` appends to; None for a new one."""
    session: str


def _extended(options: HistoryOptions, store: ResultStore) -> HistoryManifest | None:
    """The stored history ``--extend`` names (a note names its runs that are gone), or
    None for a new history.

    Raises:
        ResultsError: ``extend`` names no readable history.
    """
    old = store.load_history(options.extend) if options.extend is not None else None
    if old is not None:
        there = set(store.runs())
        gone = [f"v{i} {v.run_id}" for i, v in enumerate(old.versions, 1) if v.run_id not in there]
        if gone:
            options.on_wait(
                f"note: history {old.history_id} names runs that are not in {store.root}: "
                f"{', '.join(gone[:8])}; their versions are kept and shown without results"
            )
    return old


def _matrix_of(options: HistoryOptions, old: HistoryManifest | None) -> _Series:
    """The matrix and targets of the stored history ``old``, or of ``options`` for a new
    one, and a fresh session id.

    Raises:
        MatrixError: an unreadable matrix or a selection of no target.
    """
    if old is not None:
        m = parse(
            old.matrix_text,
            f"{old.matrix_file} (as of history {old.history_id})",
            base_dir=Path(old.matrix_file).parent,
        )
        return _Series(old.matrix_file, old.matrix_text, m, m.select(old.targets), old,
                       new_run_id())  # fmt: skip
    matrix_text = read_matrix_text(options.matrix)
    m = parse(matrix_text, str(options.matrix))
    chosen = m.select(list(options.targets), list(options.archs))
    return _Series(str(options.matrix), matrix_text, m, chosen, None, new_run_id())


def _plan_versions(
    options: HistoryOptions,
    series: _Series,
    triples: Sequence[tuple[GnunetSource | None, str | None, GnunetSource | None]],
    engines: tuple[dict[str, Any], dict[str, Arch]],
    workspace: Callable[[str], Workspace],
) -> list[_Version]:
    """One :class:`_Version` per (GNUnet source, base, exchange source): its plans (checked
    against the engines' CPUs), a new run id, a label unique in the history, a workspace.

    Raises:
        MatrixError: a base the matrix lacks, or a cpuset or quota an engine cannot give.
    """
    clients, host_archs = engines
    versions: list[_Version] = []
    for source, base, taler in triples:
        plans = plan(
            series.m,
            _rebase(series.m, series.chosen, base),
            host_archs,
            dict(options.overrides),
            suites=list(options.suites),
            metrics=("time", "instructions"),
            cpus=options.cpus,
            gnunet=source,
            taler=taler,
        )
        check_cpusets(clients, plans, None)
        check_quotas(clients, plans, options.cpus)
        run_id = new_run_id()
        label = version_label(source, base, taler)
        taken = [v.label for v in (series.old.versions if series.old else ())] + [
            v.entry.label for v in versions
        ]
        if label in taken:
            label = f"{label} #{sum(1 for t in taken if t.split(' #')[0] == label) + 1}"
        entry = HistoryVersion(
            label=label,
            gnunet=gnunet_flag(source) or "debian",
            base=base,
            taler=gnunet_flag(taler),
            run_id=run_id,
            session=series.session,
        )
        versions.append(_Version(entry, source, plans, workspace(run_id), taler=taler))
    return versions


def _save_runs(
    store: ResultStore,
    options: HistoryOptions,
    series: _Series,
    versions: Sequence[_Version],
    history_id: str,
    now: str,
) -> None:
    """Each version's ``run.json``: an ordinary run of the store that names its history."""
    for v in versions:
        store.save_manifest(
            RunManifest(
                run_id=v.entry.run_id,
                started_at=now,
                matrix_file=series.matrix_file,
                matrix_text=series.matrix_text,
                targets=tuple(p.name for p in v.plans),
                overrides=dict(options.overrides),
                repeat=options.rounds,
                cpus=options.cpus,
                suites=tuple(options.suites),
                metrics=("time", "instructions"),
                gnunet=v.entry.gnunet,
                taler=v.entry.taler,
                history=history_id,
            )
        )


@dataclass(frozen=True)
class _Walk:
    """What every step of a history's measurement uses: the engines, the reporter, the
    store, the options and the session id the timed runs carry."""

    clients: dict[str, Any]
    host_archs: dict[str, Arch]
    shown: Reporter
    store: ResultStore
    options: HistoryOptions
    session: str

    def tell(self, text: str) -> None:
        self.shown.stage("history", text)


def _build(walk: _Walk, versions: Sequence[_Version]) -> None:
    """Build every version's images first; a target that does not build leaves the plans."""
    for v in versions:
        walk.tell(f"build: {v.entry.label} (run {v.entry.run_id})")
        built = execute(
            walk.clients,
            v.plans,
            v.workspace,
            walk.host_archs,
            RunOptions(build_only=True, build_first=True, build_jobs=walk.options.build_jobs),
            reporter=walk.shown,
        )
        v.outcomes.extend(o for o in built if not o.ok)
        ok = {o.name for o in built if o.ok}
        v.plans = [p for p in v.plans if p.name in ok]


def _rounds(
    walk: _Walk,
    versions: Sequence[_Version],
    orders: Sequence[tuple[str, ...]],
    manifest: HistoryManifest,
) -> HistoryManifest:
    """Time the native targets round by round, in each round's order; the history manifest
    is saved after every round with that round's order added. Returns it."""
    by_run = {v.entry.run_id: v for v in versions}
    rounds = walk.options.rounds
    for index, order in enumerate(orders, start=1):
        for run_id in order:
            v = by_run[run_id]
            timed = [
                dataclasses.replace(p, metrics=("time",), repeat=1, first_repeat=index,
                                    total_repeats=rounds, interleaved=walk.session)
                for p in v.plans
                if not p.emulated
            ]  # fmt: skip
            if not timed:
                continue
            walk.tell(f"round {index}/{rounds}: {v.entry.label}")
            done = execute(walk.clients, timed, v.workspace, walk.host_archs, reporter=walk.shown)
            v.outcomes.extend(o for o in done if not o.ok)
        step = HistoryRound(session=walk.session, round=index, order=order)
        manifest = manifest.model_copy(update={"order": (*manifest.order, step)})
        walk.store.save_history(manifest)
    return manifest


def _count(walk: _Walk, versions: Sequence[_Version]) -> None:
    """Count every target of every version (instructions per operation, once each)."""
    for v in versions:
        # A target whose suites are none of the counted ones (the taler-helper suite runs
        # the exchange's programs) has nothing to count: it stores no file and is no
        # failure; its timed rounds are its results.
        counted = [
            dataclasses.replace(p, metrics=("instructions",), interleaved=walk.session)
            for p in v.plans
            if any(name in COUNTED_SUITES for name in p.suites.enabled())
        ]
        skipped = sorted({p.name for p in v.plans} - {p.name for p in counted})
        if skipped:
            walk.tell(
                f"count: {v.entry.label}: {', '.join(skipped)} not counted (none of the "
                f"counted suites {', '.join(COUNTED_SUITES)} is enabled)"
            )
        if not counted:
            continue
        walk.tell(f"count: {v.entry.label}")
        done = execute(walk.clients, counted, v.workspace, walk.host_archs, reporter=walk.shown)
        v.outcomes.extend(done)


def measure_history(options: HistoryOptions, reporter: Reporter | None = None) -> HistoryRun:
    """Build, measure in interleaved rounds and count every version (see the module docs).

    ``reporter``: where progress goes (None: a rich console display).

    Raises:
        MatrixError: a bad series, base, selection or value (before anything is built).
        ResultsError: ``extend`` names no readable history.
        EngineError: a host's engine cannot be reached.
        Interrupted: Ctrl-C; finished rounds are kept, and the history manifest says
            which rounds ran.
    """
    store = ResultStore(options.results)
    if not ROUNDS.accepts(options.rounds):
        low, high = ROUNDS.range.split("-")
        raise MatrixError(f"{ROUNDS.option} {options.rounds}: allowed {low} to {high}")
    old = _extended(options, store)
    triples = series_of(
        options.sources, options.bases, options.talers, len(old.versions) if old else 0
    )
    seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    series = _matrix_of(options, old)
    clients, host_archs = connect_engines(series.m, series.chosen)
    apt_proxy = resolve_apt_proxy(clients.get("local"), options.apt_proxy)
    history_id = options.extend or series.session

    def workspace(run_id: str) -> Workspace:
        return Workspace(store=store, run_id=run_id, work_dir=options.work, apt_proxy=apt_proxy)

    versions = _plan_versions(options, series, triples, (clients, host_archs), workspace)
    if old is None:
        manifest = HistoryManifest(
            history_id=history_id,
            created_at=now,
            matrix_file=series.matrix_file,
            matrix_text=series.matrix_text,
            targets=tuple(t.name for t in series.chosen),
            rounds=options.rounds,
            seed=seed,
            versions=tuple(v.entry for v in versions),
        )
    else:
        manifest = old.model_copy(
            update={"versions": (*old.versions, *(v.entry for v in versions))}
        )
    # One writer of the results folder at a time, taken once everything is checked.
    with folder_lock(store.root, ResultsError, "results folder", options.on_wait):
        _save_runs(store, options, series, versions, history_id, now)
        store.save_history(manifest)
        orders = round_orders([v.entry.run_id for v in versions], options.rounds, seed)
        with contextlib.ExitStack() as stack:
            shown: Reporter = (
                reporter if reporter is not None else stack.enter_context(RichReporter())
            )
            walk = _Walk(clients, host_archs, shown, store, options, series.session)
            walk.tell(
                f"history {history_id}: {len(versions)} versions, {options.rounds} rounds, "
                f"seed {seed}"
            )
            try:
                _build(walk, versions)
                manifest = _rounds(walk, versions, orders, manifest)
                _count(walk, versions)
            except KeyboardInterrupt:
                raise Interrupted(
                    f"interrupted; the rounds that finished are kept in {store.root} and "
                    f"{store.root / history_id / 'history.json'} says which ran"
                ) from None
        return HistoryRun(store, manifest, {v.entry.run_id: tuple(v.outcomes) for v in versions})


def history_options(s: Settings, g: Given) -> tuple[HistoryOptions, float | None]:
    """``invoke history``'s flags and settings, every flag checked, as one options object,
    and the ``--fail-above`` ratio (None: not given).

    Raises:
        MatrixError: a flag value is not allowed (nothing read or called yet).
    """
    chosen = blindsig_overrides(g)
    check_overrides(chosen)
    above = g.optional(HISTORY_FAIL_ABOVE)
    limit = None if above is None else HISTORY_FAIL_ABOVE.level(above)
    gnunet, taler = g.optional(HISTORY_GNUNET), g.optional(HISTORY_TALER)
    where = HISTORY_GNUNET.option
    sources = tuple(parse_gnunet(text, where) for text in split(gnunet, where))
    bases = tuple(split(g.optional(BASE), BASE.option))
    where = HISTORY_TALER.option
    talers = tuple(parse_taler(text, where) for text in split(taler, where))
    extend = g.text(EXTEND)
    if extend:
        check_run_id(extend, EXTEND.option, MatrixError)
    rounds, seed = g.optional(ROUNDS), g.optional(SEED)
    options = HistoryOptions(
        matrix=path_or_setting(MATRIX.option, g.text(MATRIX), s.matrix),
        results=Path(s.results),
        work=Path(s.work),
        sources=sources,
        bases=bases,
        talers=talers,
        targets=tuple(split(g.optional(TARGET), TARGET.option)),
        archs=tuple(archs(g.optional(ARCH))),
        overrides=chosen,
        suites=tuple(split(g.optional(SUITE), SUITE.option)),
        cpus=parse_cpus(CPUS.option, g.optional(CPUS)),
        rounds=int(ROUNDS.absent or 8) if rounds is None else ROUNDS.integer(rounds),
        seed=None if seed is None else SEED.integer(seed),
        extend=extend or None,
        apt_proxy=s.apt_proxy,
        build_jobs=build_jobs(s),
        on_wait=show,
    )
    return options, limit


def history(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke history``: build, measure in interleaved rounds and count a series of versions.

    Prints the history's tables (instructions and times per operation across the
    versions, :func:`archbench.report.render_history_markdown`) and where it is stored,
    and writes the results page of the history into the reports folder
    (:func:`archbench.report.write_page_from_store`).

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read).
        TargetsFailed: some targets failed in some versions; the rest is kept.
        LimitExceeded: ``--fail-above``: a counted row steps up beyond the limit.
        ArchbenchError: whatever :func:`archbench.run.measure_history` raises.
    """
    options, limit = history_options(s, Given(HISTORY, values))
    done = measure_history(options)
    results = {
        v.run_id: [load(p) for p in done.store.files([v.run_id])] for v in done.manifest.versions
    }
    show()
    show(render_history_markdown(done.manifest, results))
    steps = history_steps(done.manifest, results)
    alone = history_steps(done.manifest, results, rate=1.0)
    show(render_steps_markdown(steps, sum(step.metric == "time" for _, _, step in alone)))
    show(render_changes_markdown(history_changes(done.manifest, results)))
    # The page's folder is invoke report's --out: one writer at a time.
    with folder_lock(Path(s.reports), ReportError, "--out", show):
        for p in write_page_from_store(
            done.store, Path(s.reports), histories=[(done.manifest, results)]
        ):
            show(f"wrote {p}")
    where = done.store.root / done.manifest.history_id / "history.json"
    show(f"history: {where}   (extend: invoke history --extend {done.manifest.history_id} ...)")
    raise_failures([o for outcomes in done.outcomes.values() for o in outcomes])
    limits = matrix.load(options.matrix).row_limits
    if limit is not None or limits:
        over = over_limits([(key, step) for _, key, step in steps], limit, limits)
        if over:
            gate = f"--fail-above {limit}" if limit is not None else "the matrix's limits"
            raise LimitExceeded(
                f"{len(over)} counted step(s) grew beyond {gate}: "
                + "; ".join(
                    f"{arch} {key.label} {step.before} → {step.after} {step.ratio:.3f}×"
                    f" (limit {lim:g})"
                    for arch, key, step in steps
                    for item, lim in over
                    if item is step
                )
            )
