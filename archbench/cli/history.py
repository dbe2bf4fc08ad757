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

``--bisect-steps`` follows every counted step down to its commit when the versions are
git refs of one repository (:func:`step_bisections`, :func:`bisect_steps`): one ordinary
bisection (``invoke bisect``) per step, row and architecture, linked from
``history.json`` (``bisections``) before it starts; the history's own counts of the two
ends, and every commit any earlier run counted with the same key, are reused
(:mod:`archbench.run.reuse`). ``--extend HISTORY_ID --bisect-steps`` alone follows a
stored history's steps (and resumes the bisections it links).

The command checks its flags (:data:`archbench.cli.flags.HISTORY`, the blindsig ones
shared with ``bench``) into one :class:`HistoryOptions`, measures
(:func:`measure_history`), prints the history's tables, writes its results page,
follows the steps (``--bisect-steps``) and applies ``--fail-above`` and the matrix's
limits to the counted steps.
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
from archbench.analysis import Step, over_limits
from archbench.cli.bench import build_jobs, path_or_setting, raise_failures
from archbench.cli.bisect import (
    BisectOptions,
    BisectRun,
    measure_bisection,
    one_per_arch,
    parse_row,
    stored_targets,
    summary_line,
)
from archbench.cli.config import Settings
from archbench.cli.flags import (
    ARCH,
    BASE,
    BISECT_STEPS,
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
from archbench.errors import (
    Interrupted,
    LimitExceeded,
    MatrixError,
    ReportError,
    ResultsError,
    SourceError,
)
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
from archbench.result import (
    HistoryBisection,
    HistoryManifest,
    HistoryRound,
    HistoryVersion,
    ResultStore,
    RowKey,
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
    pin,
    plan,
)
from archbench.sources import check_local_source
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
    bisect_steps: bool = False
    """``--bisect-steps``: follow every counted step down to its commit (:func:`bisect_steps`)."""


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
        chosen = stored_targets(m, old.targets, f"history {old.history_id}")
        return _Series(old.matrix_file, old.matrix_text, m, chosen, old, new_run_id())
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
        planned = plan(
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
        # Rounds compare versions: a pooled target stays on one member throughout.
        plans = pin(planned)
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
    if old is not None and options.rounds != old.rounds:
        # A session of another length would write rounds the stored history cannot hold
        # (its ``rounds`` bounds every session's): the history's own count is used.
        options = dataclasses.replace(options, rounds=old.rounds)
    triples = series_of(
        options.sources, options.bases, options.talers, len(old.versions) if old else 0
    )
    seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    series = _matrix_of(options, old)
    # A missing tarball or tree is refused now, before a history is written or anything
    # is built (bench does the same), naming the version of the series it belongs to.
    first = len(old.versions) + 1 if old is not None else 1
    for i, (source, _base, taler) in enumerate(triples, start=first):
        try:
            for t in series.chosen:
                check_local_source(source or series.m.gnunet(t))
                check_local_source(taler or series.m.taler(t), "taler-exchange")
        except SourceError as exc:
            raise SourceError(f"version {i} of the series: {exc}") from None
    clients, host_archs = connect_engines(series.m, series.chosen, show)
    apt_proxy = resolve_apt_proxy(clients.get("local"), options.apt_proxy)
    history_id = options.extend or series.session

    def workspace(run_id: str) -> Workspace:
        return Workspace(store=store, run_id=run_id, work_dir=options.work, apt_proxy=apt_proxy)

    versions = _plan_versions(options, series, triples, (clients, host_archs), workspace)
    if options.bisect_steps:
        # Refused before anything is built: the bisections need git refs and a target per arch.
        every = [*(old.versions if old else ()), *(v.entry for v in versions)]
        check_bisectable(every, "the series")
        one_per_arch(series.chosen)
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


# ---------------------------------------------------------------- --bisect-steps


@dataclass(frozen=True)
class StepBisection:
    """One counted step of a history to follow down to its commit: the row (as ``invoke
    bisect --row`` reads it) on ``arch`` between versions ``before`` and ``after``
    (labels), whose GNUnet sources are the refs ``good`` and ``bad`` of ``repository``."""

    arch: str
    row: str
    before: str
    after: str
    repository: str
    good: str
    bad: str


def git_repository(sources: Sequence[GnunetSource | None], where: str) -> str:
    """The one repository (``git+URL``'s URL) every source is a ref of.

    Raises:
        MatrixError: a source is not a git ref, or the refs are of several repositories
            (``where`` names what was read: the flags, or a stored history).
    """
    urls = {s.git for s in sources if isinstance(s, GnunetGit)}
    others = [gnunet_flag(s) or "the matrix's own" for s in sources if not isinstance(s, GnunetGit)]
    if others or len(urls) != 1:
        what = (
            f"{', '.join(others[:3])} {'is' if len(others) == 1 else 'are'} not git refs"
            if others
            else f"the refs are of {len(urls)} repositories ({', '.join(sorted(urls)[:3])})"
        )
        raise MatrixError(
            f"{BISECT_STEPS.option} follows steps between git refs of one repository; in "
            f"{where} {what}: give --gnunet git+URL@REF1,git+URL@REF2,..."
        )
    return urls.pop()


def check_bisectable(versions: Sequence[HistoryVersion], where: str) -> str:
    """The repository of a history whose versions are git refs of one repository, on
    their targets' own bases, without an exchange source.

    Raises:
        MatrixError: they are not (what is wrong and with which version).
    """
    for v in versions:
        if v.base is not None or v.taler is not None:
            raise MatrixError(
                f"{BISECT_STEPS.option}: {where}: version {quote(v.label)} sets "
                f"{'--base' if v.base is not None else '--taler'}; a bisection builds GNUnet "
                "commits on each target's own base, without an exchange"
            )
    return git_repository([parse_gnunet(v.gnunet, where) for v in versions], where)


def step_bisections(
    manifest: HistoryManifest, steps: Sequence[tuple[str, RowKey, Step]]
) -> list[StepBisection]:
    """The bisections that follow ``steps`` (:func:`archbench.report.history_steps`) of a
    history whose versions are git refs of one repository: one per counted blindsig
    step of a CS or RSA row (timed steps and other suites' rows are not bisected), in the
    steps' order, each once.

    Raises:
        MatrixError: the versions are not git refs of one repository
            (:func:`check_bisectable`).
    """
    repository = check_bisectable(manifest.versions, f"history {manifest.history_id}")
    refs = {v.label: parse_gnunet(v.gnunet, "history.json") for v in manifest.versions}
    out: list[StepBisection] = []
    for arch, key, step in steps:
        if step.metric != "instructions" or key.suite != "blindsig":
            continue
        if key.scheme not in ("CS", "RSA") or key.operation.startswith("helper_"):
            continue
        good, bad = refs[step.before], refs[step.after]
        assert isinstance(good, GnunetGit) and isinstance(bad, GnunetGit)
        bits = f"-{key.key_bits}" if key.scheme == "RSA" and key.key_bits else ""
        row = f"{key.scheme}{bits} {key.operation.replace('_', ' ')}"
        found = StepBisection(arch, row, step.before, step.after, repository, good.ref, bad.ref)
        if found not in out:
            out.append(found)
    return out


def _linked(manifest: HistoryManifest, want: StepBisection) -> str | None:
    """The id of the bisection the history already links for ``want``, or None."""
    for b in manifest.bisections:
        if (b.arch, b.row, b.before, b.after) == (want.arch, want.row, want.before, want.after):
            return b.bisect_id
    return None


def _link(
    store: ResultStore,
    manifest: HistoryManifest,
    want: StepBisection,
    on_wait: Callable[[str], None],
) -> tuple[HistoryManifest, str]:
    """The history with a new bisection id linked for ``want`` (saved), and that id."""
    bisect_id = new_run_id()
    link = HistoryBisection(
        arch=want.arch, row=want.row, before=want.before, after=want.after, bisect_id=bisect_id
    )
    manifest = manifest.model_copy(update={"bisections": (*manifest.bisections, link)})
    with folder_lock(store.root, ResultsError, "results folder", on_wait):
        store.save_history(manifest)
    return manifest, bisect_id


def bisect_steps(
    options: HistoryOptions,
    manifest: HistoryManifest,
    steps: Sequence[tuple[str, RowKey, Step]],
    reporter: Reporter | None = None,
) -> list[tuple[StepBisection, BisectRun]]:
    """Follow every counted step of the history down to its commit (:func:`step_bisections`):
    each a bisection of the store (``<results>/<bisect-id>/bisect.json``), linked from
    ``history.json`` before it starts; a step the history already links is resumed (a
    finished one costs nothing). The history's own runs hold the ends' counts and are
    reused (:mod:`archbench.run.reuse`), as is every commit an earlier bisection counted.

    Raises:
        MatrixError: as :func:`step_bisections`, or an architecture with several targets.
        Interrupted: Ctrl-C; every measured step is kept (the message names the
            bisection to resume, and the history links it).
        ArchbenchError: whatever :func:`archbench.cli.bisect.measure_bisection` raises.
    """
    store = ResultStore(options.results)
    wanted = step_bisections(manifest, steps)
    m = parse(manifest.matrix_text, f"{manifest.matrix_file} (as of history {manifest.history_id})",
              base_dir=Path(manifest.matrix_file).parent)  # fmt: skip
    targets = one_per_arch(stored_targets(m, manifest.targets, f"history {manifest.history_id}"))
    done = []
    for want in wanted:
        bisect_id = _linked(manifest, want)
        if bisect_id is None:
            manifest, bisect_id = _link(store, manifest, want, options.on_wait)
            bisection = BisectOptions(
                matrix=Path(manifest.matrix_file),
                results=options.results,
                work=options.work,
                url=want.repository,
                good=want.good,
                bad=want.bad,
                row=parse_row(want.row),
                targets=(targets[want.arch],),
                overrides=options.overrides,
                apt_proxy=options.apt_proxy,
                on_wait=options.on_wait,
                matrix_text=manifest.matrix_text,
                bisect_id=bisect_id,
            )
        else:
            bisection = BisectOptions(
                matrix=Path(manifest.matrix_file), results=options.results, work=options.work,
                resume=bisect_id, apt_proxy=options.apt_proxy, on_wait=options.on_wait,
            )  # fmt: skip
        done.append((want, measure_bisection(bisection, reporter)))
    return done


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
        named = [f.option for f in (TARGET, ARCH, MATRIX, ROUNDS) if g.optional(f)]
        if named:
            raise MatrixError(
                f"{EXTEND.option} takes the history's own {', '.join(named)}: give none of "
                f"them (history {extend} goes on with the matrix, targets and rounds it "
                f"stored; for others, start a new history without {EXTEND.option})"
            )
    rounds, seed = g.optional(ROUNDS), g.optional(SEED)
    follow = g.switch(BISECT_STEPS)
    if follow and (bases or talers):
        raise MatrixError(
            f"{BISECT_STEPS.option} follows steps between git refs of one repository on each "
            f"target's own base: give {HISTORY_GNUNET.option} git+URL@REF1,... without "
            f"{BASE.option if bases else HISTORY_TALER.option}"
        )
    if follow and sources:
        git_repository(sources, HISTORY_GNUNET.option)
    if follow and not sources and not extend:
        raise MatrixError(
            f"{BISECT_STEPS.option} needs a series of git refs ({HISTORY_GNUNET.option} "
            f"git+URL@REF1,git+URL@REF2,...) or {EXTEND.option} HISTORY_ID"
        )
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
        rounds=ROUNDS.integer_or_absent(rounds),
        seed=None if seed is None else SEED.integer(seed),
        extend=extend or None,
        apt_proxy=s.apt_proxy,
        build_jobs=build_jobs(s),
        on_wait=show,
        bisect_steps=follow,
    )
    return options, limit


def _follow_only(options: HistoryOptions) -> bool:
    """``--extend HISTORY_ID --bisect-steps`` without a new version: bisect the stored
    history's steps, measure nothing else."""
    return options.bisect_steps and not (options.sources or options.bases or options.talers)


def _stored(options: HistoryOptions) -> HistoryRun:
    """The stored history ``--extend`` names, measured nothing (:func:`_follow_only`).

    Raises:
        ResultsError: no readable history of that id.
        MatrixError: its versions are not git refs of one repository.
    """
    assert options.extend is not None, "checked by history_options"
    store = ResultStore(options.results)
    manifest = store.load_history(options.extend)
    check_bisectable(manifest.versions, f"history {manifest.history_id}")
    return HistoryRun(store, manifest, {})


def _show_bisections(done: Sequence[tuple[StepBisection, BisectRun]]) -> None:
    """Per followed step: the commit(s) found on its architecture, and where the bisection is."""
    show()
    show(f"### Steps followed to their commits ({len(done)})")
    if not done:
        show("No counted blindsig step to follow.")
    for want, run in done:
        show()
        show(
            f"{want.arch} {want.row}, {want.before} → {want.after} "
            f"(bisection {run.manifest.bisect_id}):"
        )
        for line in run.manifest.outcome.splitlines():
            if line.startswith(f"{want.arch}:"):
                show(f"  {line}")
        show(f"  {summary_line(run)}")


def history(s: Settings, values: Mapping[str, Any]) -> None:
    """``invoke history``: build, measure in interleaved rounds and count a series of versions.

    Prints the history's tables (instructions and times per operation across the
    versions, :func:`archbench.report.render_history_markdown`), its steps, and for
    every counted step the functions whose counts changed most
    (:func:`archbench.report.history_moves`), and where it is stored; writes them as
    ``history-<id>.md`` and ``history-<id>-functions.csv``
    (:func:`archbench.report.write_history_files`) and the results page of the history
    into the reports folder (:func:`archbench.report.write_page_from_store`); with
    ``--bisect-steps``, follows every counted step to its commit (:func:`bisect_steps`)
    and prints the commit(s) found.

    Raises:
        MatrixError: a flag value is not allowed (checked before anything is read), or
            ``--bisect-steps`` with versions that are not git refs of one repository.
        TargetsFailed: some targets failed in some versions; the rest is kept.
        LimitExceeded: ``--fail-above``: a counted row steps up beyond the limit.
        ArchbenchError: whatever :func:`archbench.run.measure_history` raises.
    """
    options, limit = history_options(s, Given(HISTORY, values))
    # The reports (pandas) load once the flags are checked: a refused flag costs less.
    from archbench.report import (
        history_changes,
        history_count_kinds,
        history_moves,
        history_steps,
        move_lines,
        render_changes_markdown,
        render_count_kinds_markdown,
        render_history_markdown,
        render_steps_markdown,
        write_history_files,
        write_page_from_store,
    )

    done = _stored(options) if _follow_only(options) else measure_history(options)
    results = {
        v.run_id: [load(p) for p in done.store.files([v.run_id])] for v in done.manifest.versions
    }
    show()
    steps = history_steps(done.manifest, results)
    alone = history_steps(done.manifest, results, rate=1.0)
    text = "\n".join(
        [
            render_history_markdown(done.manifest, results),
            render_steps_markdown(steps, sum(step.metric == "time" for _, _, step in alone)),
            render_count_kinds_markdown(history_count_kinds(done.manifest, results)),
            render_changes_markdown(history_changes(done.manifest, results)),
        ]
    )
    show(text)
    moves = history_moves(done.manifest, results, steps)
    for line in move_lines(moves):
        show(line)
    # The page's folder is invoke report's --out: one writer at a time.
    with folder_lock(Path(s.reports), ReportError, "--out", show):
        written = write_history_files(done.manifest, Path(s.reports), markdown=text, moves=moves)
        written += write_page_from_store(
            done.store, Path(s.reports), histories=[(done.manifest, results)]
        )
        for p in written:
            show(f"wrote {p}")
    where = done.store.root / done.manifest.history_id / "history.json"
    show(f"history: {where}   (extend: invoke history --extend {done.manifest.history_id} ...)")
    if options.bisect_steps:
        _show_bisections(bisect_steps(options, done.manifest, steps))
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
