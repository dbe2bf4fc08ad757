"""A history: one run per version of a series, measured in interleaved rounds (``invoke history``).

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

from archbench.build import resolve_apt_proxy
from archbench.errors import Interrupted, MatrixError, ResultsError
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
    read_matrix_text,
)
from archbench.platforms import Arch
from archbench.result import (
    HistoryManifest,
    HistoryRound,
    HistoryVersion,
    ResultStore,
    RunManifest,
    folder_lock,
    new_run_id,
)
from archbench.run.engines import check_cpusets, check_quotas, connect_engines
from archbench.run.planning import TargetPlan, plan
from archbench.run.progress import Reporter, RichReporter
from archbench.run.schedule import RunOptions, execute
from archbench.run.target import TargetOutcome, Workspace

MAX_ROUNDS = 100
MAX_VERSIONS = 32


@dataclass(frozen=True)
class HistoryOptions:
    """One ``invoke history``, every flag checked.

    ``sources``/``bases``: the series (see :func:`versions_of`); ``rounds``: timed
    rounds of the native targets (1-100); ``seed``: draws the round orders (None: a
    fresh one, recorded); ``extend``: the id of a stored history to append to (its
    matrix and targets are used, ``matrix``/``targets``/``archs`` are not).
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
    if not 1 <= options.rounds <= MAX_ROUNDS:
        raise MatrixError(f"--rounds {options.rounds}: allowed 1 to {MAX_ROUNDS}")
    old = store.load_history(options.extend) if options.extend is not None else None
    if old is not None:
        there = set(store.runs())
        gone = [f"v{i} {v.run_id}" for i, v in enumerate(old.versions, 1) if v.run_id not in there]
        if gone:
            options.on_wait(
                f"note: history {old.history_id} names runs that are not in {store.root}: "
                f"{', '.join(gone[:8])}; their versions are kept and shown without results"
            )
    triples = series_of(
        options.sources, options.bases, options.talers, len(old.versions) if old else 0
    )
    seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if old is not None:
        matrix_file, matrix_text = old.matrix_file, old.matrix_text
        m = parse(
            matrix_text,
            f"{matrix_file} (as of history {old.history_id})",
            base_dir=Path(matrix_file).parent,
        )
        chosen = m.select(old.targets)
        manifest: HistoryManifest | None = old
        session = new_run_id()
    else:
        matrix_file = str(options.matrix)
        matrix_text = read_matrix_text(options.matrix)
        m = parse(matrix_text, matrix_file)
        chosen = m.select(list(options.targets), list(options.archs))
        session = new_run_id()
        manifest = None
    clients, host_archs = connect_engines(m, chosen)
    apt_proxy = resolve_apt_proxy(clients.get("local"), options.apt_proxy)
    history_id = options.extend or session
    versions: list[_Version] = []
    for source, base, taler in triples:
        targets = _rebase(m, chosen, base)
        plans = plan(
            m,
            targets,
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
        flag = gnunet_flag(source) or "debian"
        label = version_label(source, base, taler)
        taken = [v.label for v in (manifest.versions if manifest else ())] + [
            v.entry.label for v in versions
        ]
        if label in taken:
            label = f"{label} #{sum(1 for t in taken if t.split(' #')[0] == label) + 1}"
        entry = HistoryVersion(
            label=label,
            gnunet=flag,
            base=base,
            taler=gnunet_flag(taler),
            run_id=run_id,
            session=session,
        )
        ws = Workspace(store=store, run_id=run_id, work_dir=options.work, apt_proxy=apt_proxy)
        versions.append(_Version(entry, source, plans, ws, taler=taler))
    if manifest is None:
        manifest = HistoryManifest(
            history_id=history_id,
            created_at=now,
            matrix_file=matrix_file,
            matrix_text=matrix_text,
            targets=tuple(t.name for t in chosen),
            rounds=options.rounds,
            seed=seed,
            versions=tuple(v.entry for v in versions),
        )
    else:
        manifest = manifest.model_copy(
            update={"versions": (*manifest.versions, *(v.entry for v in versions))}
        )
    # One writer of the results folder at a time, taken once everything is checked.
    with folder_lock(store.root, ResultsError, "results folder", options.on_wait):
        for v in versions:
            store.save_manifest(
                RunManifest(
                    run_id=v.entry.run_id,
                    started_at=now,
                    matrix_file=matrix_file,
                    matrix_text=matrix_text,
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
        store.save_history(manifest)
        orders = round_orders([v.entry.run_id for v in versions], options.rounds, seed)
        by_run = {v.entry.run_id: v for v in versions}
        with contextlib.ExitStack() as stack:
            shown: Reporter = (
                reporter if reporter is not None else stack.enter_context(RichReporter())
            )

            def tell(text: str) -> None:
                shown.stage("history", text)

            tell(
                f"history {history_id}: {len(versions)} versions, {options.rounds} rounds, "
                f"seed {seed}"
            )
            try:
                for v in versions:
                    tell(f"build: {v.entry.label} (run {v.entry.run_id})")
                    built = execute(
                        clients,
                        v.plans,
                        v.workspace,
                        host_archs,
                        RunOptions(
                            build_only=True, build_first=True, build_jobs=options.build_jobs
                        ),
                        reporter=shown,
                    )
                    v.outcomes.extend(o for o in built if not o.ok)
                    ok = {o.name for o in built if o.ok}
                    v.plans = [p for p in v.plans if p.name in ok]
                for index, order in enumerate(orders, start=1):
                    for run_id in order:
                        v = by_run[run_id]
                        timed = [
                            dataclasses.replace(
                                p,
                                metrics=("time",),
                                repeat=1,
                                first_repeat=index,
                                total_repeats=options.rounds,
                                interleaved=session,
                            )
                            for p in v.plans
                            if not p.emulated
                        ]
                        if not timed:
                            continue
                        tell(f"round {index}/{options.rounds}: {v.entry.label}")
                        done = execute(clients, timed, v.workspace, host_archs, reporter=shown)
                        v.outcomes.extend(o for o in done if not o.ok)
                    manifest = manifest.model_copy(
                        update={
                            "order": (
                                *manifest.order,
                                HistoryRound(session=session, round=index, order=order),
                            )
                        }
                    )
                    store.save_history(manifest)
                for v in versions:
                    counted = [
                        dataclasses.replace(p, metrics=("instructions",), interleaved=session)
                        for p in v.plans
                    ]
                    tell(f"count: {v.entry.label}")
                    done = execute(clients, counted, v.workspace, host_archs, reporter=shown)
                    v.outcomes.extend(done)
            except KeyboardInterrupt:
                raise Interrupted(
                    f"interrupted; the rounds that finished are kept in {store.root} and "
                    f"{store.root / history_id / 'history.json'} says which ran"
                ) from None
        return HistoryRun(store, manifest, {v.entry.run_id: tuple(v.outcomes) for v in versions})
