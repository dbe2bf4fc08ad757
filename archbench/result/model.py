"""The stored result models: a harness document plus what only the host knows.

:class:`Result` (format ``archbench-result`` version 2) wraps one
:class:`~archbench.result.document.HarnessDocument` with the target, how it
was executed (emulated or native, QEMU, image) or where published figures
come from; :class:`RunManifest` is a run's ``run.json``. Files of older
versions are brought up to date on load (:func:`migrate`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import math
from typing import Any, Final, Literal, get_args

from pydantic import Field, model_validator

from archbench.result.document import HarnessDocument
from archbench.result.paths import RUN_ID
from archbench.result.row import Frozen

RESULT_FORMAT: Literal["archbench-result"] = "archbench-result"
RESULT_VERSION: Literal[2] = 2
"""Version 2 (instruction counts): ``Result.metric``, ``HarnessDocument.counting`` and
``Row.instructions``. Version 1 files are migrated on load (:func:`migrate`)."""


def migrate(data: Any) -> Any:
    """A stored result brought up to :data:`RESULT_VERSION` (a copy; as asv does on load).

    Version 1 -> 2: ``metric`` becomes ``time`` (version 1 only stored times);
    nothing else changed. Other versions and non-objects are returned as they
    are, for the header check of
    :func:`archbench.result.loading.load` to report.
    """
    if isinstance(data, dict) and data.get("format") == RESULT_FORMAT and data.get("version") == 1:
        return {**data, "version": 2, "metric": data.get("metric", "time")}
    return data


Metric = Literal["time", "instructions"]
METRICS: Final = get_args(Metric)


class TargetInfo(Frozen):
    """The matrix target a result was measured for."""

    name: str
    arch: str
    platform: str
    base: str
    profile: str


class ArchiveRef(Frozen):
    """The archive (``invoke archive``) a rerun took its images and matrix from."""

    archive_id: str
    manifest_sha256: str
    """sha256 (hex) of the archive's ``manifest.json`` bytes: names its exact content."""
    source_run_id: str
    """The run that was archived."""


class Execution(Frozen):
    """How the harness was executed: host facts the container cannot see."""

    emulated: bool
    host_arch: str
    host_cpu: str
    qemu_version: str | None = None
    qemu_cpu: str | None = None
    """QEMU's CPU model: ``QEMU_CPU`` if set for the engine, else QEMU's default for the arch."""
    image_id: str
    image_tag: str
    image_digest: str | None = None
    """Registry digest of the image, when it was pushed or pulled (local builds have none)."""
    base_image: str | None = None
    base_built: str | None = None
    """UTC build date of the base image (label written when it was bootstrapped)."""
    docker_host: str = "local"
    engine_version: str | None = None
    host_kernel: str | None = None
    host_parallel_runs: int = Field(default=1, ge=1)
    """How many benchmark containers the host allowed at once (``max_parallel_runs``)."""
    cpuset: str | None = None
    """CPUs the container was pinned to (Docker cpuset), None when not pinned."""
    cpus: float | None = None
    """CPU quota the container was given (Docker's ``--cpus``), None when it had none;
    ``harness.setup.cpu_limits`` is what the container saw."""
    repeat_index: int = Field(default=1, ge=1)
    repeat_count: int = Field(default=1, ge=1)
    """This file is container run ``repeat_index`` of ``repeat_count`` for the target.
    In an interleaved session (:attr:`interleaved`) ``repeat_index`` is the round (1..N)."""
    interleaved: str | None = None
    """The id of the interleaved session this container run belongs to, or None (an
    ordinary run). Two or more images measured in alternating rounds on one engine store
    one run per image; every file of the session carries the same id, and
    ``repeat_index`` is the round, so ``invoke compare`` pairs the two runs' blocks round
    by round (:mod:`archbench.analysis.rounds`). Files written before the field have none."""
    archive: ArchiveRef | None = None
    """Set when ``invoke bench --from-archive`` ran the archived image (nothing built)."""
    gnunet_source: dict[str, str | bool | None] | None = None
    """Where the image's libgnunetutil was built from, when not the base's packages
    (:meth:`archbench.images.ResolvedSource.provenance`: kind, location, ref, commit,
    sha256, tree_sha256, dirty, version); None: Debian's ``libgnunet-dev``."""
    harness_sha256: str | None = None
    """sha256 of the harness sources the image was built with
    (:func:`archbench.images.harness_sha256`: drivers, Makefile, Python harness); None for
    an archived image and in files written before the field. Part of a count's reuse key
    (:class:`archbench.run.CountKey`)."""
    count_definition: str | None = None
    """sha256 of the target as it counts (:func:`archbench.run.count_definition`: base,
    profile packages, QEMU CPU model, counted blindsig settings); None before the field.
    Part of a count's reuse key."""
    taler_source: dict[str, str | bool | None] | None = None
    """Where the image's GNU Taler exchange (``src/util``: the security modules and
    ``test_helper_*``) was built from (the same keys, plus ``prefix`` and
    ``build_script_sha256``); None: the image has no exchange built from a ``taler:``
    source. Files written before the field have none."""


class Reference(Frozen):
    """Where published figures come from, for results that were not measured by us.

    Reference results carry one sample per row: the printed value converted
    to ns, with ``Row.printed`` keeping the text as printed.
    """

    source: str
    """File and table, e.g. ``thesis-appendix-performance.tex, tab:comp-sign-amd-ryzen-7``."""
    citation: str
    """Who published it, e.g. the thesis's title, authors and year."""
    notes: str = ""
    """Caveats, e.g. that printed values are truncated toward zero."""
    kind: Literal["published", "imported"] = "published"
    """``published``: figures from a paper or thesis; ``imported``: a tool's saved log."""
    title: str | None = None
    """The section title as published (``AMD Ryzen 7 PRO 5850U (Notebook)``); None: ours."""
    table_label: str | None = None
    """The table's LaTeX label as published (``tab:comp-sign-amd-ryzen-7``), kept so a
    thesis's own ``\\ref`` still resolves; None: a label of our scheme."""
    caption: str | None = None
    """The table caption as published (``Comparison on AMD Ryzen 7``)."""
    intro: str | None = None
    """The section's text before the Setup box as published, LaTeX escapes removed;
    ``\\ref{label}`` kept as written."""
    box: tuple[tuple[str, str], ...] | None = None
    """The Setup box line by line as the PDF prints it, each line split at its first ``": "``
    into (key, value); ``key + ": " + value`` is the printed line, verbatim."""
    placeholders: tuple[str, ...] = ()
    """``Setup`` fields holding a placeholder, not a published fact (``cores``)."""
    printed_schemes: tuple[tuple[str, str], ...] = ()
    """(our label, the label as printed) of each scheme the source printed otherwise
    (``("RSA 4092 bit", "RSA 4092")``): the machine's own tables print it as printed."""

    @property
    def label(self) -> str:
        """How tables name this origin: ``published figures`` or ``imported log``."""
        return "published figures" if self.kind == "published" else "imported log"


class Result(Frozen):
    """One stored results file, format ``archbench-result`` version 2.

    Exactly one of ``execution`` (we measured it) and ``reference`` (published
    figures carried over) is set. ``metric`` says what the rows measure:
    ``time`` (``samples_ns`` are the target's wall-clock block times) or
    ``instructions`` (``Row.instructions`` are counts, ``harness.counting``
    their provenance); a counting result is its own file.
    """

    format: Literal["archbench-result"] = RESULT_FORMAT
    version: Literal[2] = RESULT_VERSION
    metric: Metric = "time"
    run_id: str
    target: TargetInfo
    execution: Execution | None = None
    reference: Reference | None = None
    harness: HarnessDocument

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return migrate(data)

    @model_validator(mode="after")
    def _one_origin(self) -> Result:
        if (self.execution is None) == (self.reference is None):
            raise ValueError("exactly one of 'execution' and 'reference' must be set")
        if (self.metric == "instructions") != (self.harness.counting is not None):
            raise ValueError("harness.counting is set exactly when metric is 'instructions'")
        return self

    @property
    def emulated(self) -> bool:
        """True when measured under QEMU user emulation (never for reference data)."""
        return self.execution is not None and self.execution.emulated


MANIFEST_NAME = "run.json"
HISTORY_NAME = "history.json"
"""A history's manifest (:class:`HistoryManifest`) in its own folder of the results root."""


class RunManifest(Frozen):
    """What a run was asked to do, kept beside its results for ``--resume``.

    ``matrix_text`` is the matrix as it was when the run started, so a
    resumed run measures the same targets with the same parameters even if
    matrix.yml changed since. ``seconds`` maps target -> stage -> wall time
    in s of the targets that finished; the progress display reads it as the
    ETA of the next run of the same target.
    """

    format: Literal["archbench-run"] = "archbench-run"
    version: Literal[1] = 1
    run_id: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    started_at: str
    matrix_file: str
    matrix_text: str
    targets: tuple[str, ...]
    overrides: dict[str, Any] = Field(default_factory=dict)
    repeat: int = 1
    cpuset: str | None = None
    cpus: float | None = None
    """``--cpus``: the CPU quota of every container of this run (None: the targets' own)."""
    seconds: dict[str, dict[str, float]] = Field(default_factory=dict)
    suites: tuple[str, ...] = ()
    """``--suite``: the suites this run was limited to (empty: the matrix's enabled ones)."""
    archive: ArchiveRef | None = None
    """Set for ``invoke bench --from-archive``: the archive whose images and matrix it reran."""
    metrics: tuple[Metric, ...] = ()
    """``--metric``: what this run measured (empty: the matrix's ``metrics``); ``--resume``
    keeps it, and a target is complete only when every metric's results are stored."""
    gnunet: str | None = None
    """``--gnunet``: every target's GNUnet source in its one-string form, paths absolute
    (None: the matrix's); ``--resume`` builds the same."""
    taler: str | None = None
    """``--taler``: every target's exchange source in the same form (None: the matrix's)."""
    history: str | None = None
    """The history (``invoke history``) this run is one version of, None: a run of its own."""


class HistoryVersion(Frozen):
    """One version of a history: what was built, where it ran, which run holds it.

    ``gnunet``: the GNUnet source in ``--gnunet``'s one-string form, paths absolute;
    ``base``: the matrix base every target ran on (None: each target's own);
    ``session``: the interleaved session that measured it (``Execution.interleaved``):
    versions of one session were measured in alternating rounds, versions of
    different sessions (a history extended later) were not.
    """

    label: str = Field(min_length=1, max_length=200)
    gnunet: str
    base: str | None = None
    taler: str | None = None
    """The exchange source of this version (``--taler``'s one-string form), None: the
    matrix's (or none)."""
    run_id: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    session: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)


class HistoryRound(Frozen):
    """The order the versions ran in during one round of one session (run ids)."""

    session: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    round: int = Field(ge=1)
    order: tuple[str, ...]


class HistoryBisection(Frozen):
    """A bisection (``invoke history --bisect-steps``) of one counted step of a history:
    the row on one architecture between two consecutive versions (their labels), and the
    bisection's id (``<results>/<bisect-id>/bisect.json``)."""

    arch: str = Field(min_length=1, max_length=32)
    row: str = Field(min_length=1, max_length=100)
    before: str = Field(min_length=1, max_length=200)
    after: str = Field(min_length=1, max_length=200)
    bisect_id: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)


class HistoryManifest(Frozen):
    """``<results>/<history-id>/history.json``: a series of runs, one per version, in order.

    ``seed`` drew each round's order (:class:`HistoryRound`), so the order can be
    told from the seed alone; ``rounds``: timed rounds per session (native targets).
    """

    format: Literal["archbench-history"] = "archbench-history"
    version: Literal[1] = 1
    history_id: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    created_at: str
    matrix_file: str
    matrix_text: str
    targets: tuple[str, ...]
    rounds: int = Field(ge=1)
    seed: int = Field(ge=0)
    versions: tuple[HistoryVersion, ...] = Field(min_length=1)
    order: tuple[HistoryRound, ...] = ()
    bisections: tuple[HistoryBisection, ...] = ()
    """``--bisect-steps``: the bisection of each counted step, linked before it starts."""

    @model_validator(mode="after")
    def _consistent(self) -> HistoryManifest:
        """The manifest as a whole: every run once, every label once, and each round's
        order exactly the runs of its session's versions, rounds 1..``rounds`` each once.

        A history that names one run twice would number its versions wrongly on every
        page and be written back by ``--extend``; it is refused when read.
        """
        seen: dict[str, int] = {}
        labels: dict[str, int] = {}
        for i, v in enumerate(self.versions, start=1):
            if v.run_id in seen:
                raise ValueError(
                    f"versions {seen[v.run_id]} and {i} name the same run {v.run_id}; "
                    "every run is one version, once"
                )
            if v.label in labels:
                raise ValueError(f"versions {labels[v.label]} and {i} have one label {v.label!r}")
            seen[v.run_id] = i
            labels[v.label] = i
        runs_of: dict[str, set[str]] = {}
        for v in self.versions:
            runs_of.setdefault(v.session, set()).add(v.run_id)
        done: set[tuple[str, int]] = set()
        for r in self.order:
            if r.session not in runs_of:
                raise ValueError(f"order: session {r.session} measured no version")
            if r.round > self.rounds:
                raise ValueError(
                    f"order: round {r.round} of {r.session}, but rounds is {self.rounds}"
                )
            if (r.session, r.round) in done:
                raise ValueError(f"order: round {r.round} of session {r.session} is listed twice")
            done.add((r.session, r.round))
            if len(r.order) != len(set(r.order)) or set(r.order) != runs_of[r.session]:
                raise ValueError(
                    f"order: round {r.round} of session {r.session} runs "
                    f"{', '.join(r.order) or 'nothing'}, not once each of its versions' runs "
                    f"({', '.join(sorted(runs_of[r.session]))})"
                )
        return self


BISECT_NAME = "bisect.json"
"""A bisection's record (:class:`BisectManifest`) in its own folder of the results root."""


class BisectCommit(Frozen):
    """One commit of a bisection's range: id, parents (indices of earlier commits of the
    range), subject and committer date (ISO 8601).

    ``boundary``: not in ``good..bad`` but a parent of a commit there (an ancestor of
    ``good``, on a branch forked before it): kept so that a move is measured against
    the commit's own parent, never a candidate. ``parent_count``: how many parents the
    commit has in git (0: a root, an unrelated history merged in); None in records made
    before parents outside the range were kept (issue 39), whose moves are then read as
    before.
    """

    commit: str = Field(pattern="^[0-9a-f]{40}([0-9a-f]{24})?$")
    parents: tuple[int, ...] = ()
    subject: str = Field(max_length=200)
    date: str = Field(max_length=64)
    boundary: bool = False
    parent_count: int | None = Field(default=None, ge=0, le=1000)


class BisectTime(Frozen):
    """A timed step's decision (``invoke bisect --metric time``, native targets).

    ``rounds``: the interleaved rounds taken; ``good_run``/``bad_run``: the runs of the
    ends timed in the same rounds (``""`` for the good end itself); ``vs_good`` and
    ``vs_bad``: ``(ratio, low, high)`` of this commit's per-operation time over the
    end's, from the Student-t interval of the per-round log ratios (``invoke
    compare``'s; the bad end's at 1 - 5 %/looks, :func:`archbench.analysis.end_confidence`),
    empty where not measured; ``decision``: ``good end``, ``slower``/``faster``/``no
    significant change``/``undecided`` (the bad end, :func:`archbench.analysis.time_end`),
    ``like good``, ``like bad`` or ``undecided``; ``level``: what
    the graph logic replays (1 for good, bad's ratio to good, None when undecided: for the
    bad end, ``undecided`` after the most rounds means nothing was bisected).
    """

    rounds: int = Field(ge=0)
    good_run: str = Field(default="", max_length=64)
    bad_run: str = Field(default="", max_length=64)
    vs_good: tuple[float, ...] = ()
    vs_bad: tuple[float, ...] = ()
    decision: str = Field(max_length=64)
    level: float | None = Field(default=None, gt=0)


MAX_BISECT_BLOCKS: Final = 100_000
"""Most blocks a bisection step keeps of one row (the harness's repetitions bound)."""


class BisectCount(Frozen):
    """One architecture's measurement of a step's commit.

    ``instructions``: the row's median instructions per operation, ``spread`` its
    relative block-to-block range; both None when the commit did not build or run
    there (``skipped`` says why: the stage and the pipeline's message), which
    the bisection treats as ``git bisect skip`` does. ``run_id``: the run that
    counted it, this step's own or (``reused``) an earlier one.
    """

    arch: str = Field(min_length=1, max_length=32)
    target: str = Field(min_length=1, max_length=64)
    run_id: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    instructions: float | None = Field(default=None, gt=0)
    spread: float = Field(default=0.0, ge=0)
    skipped: str | None = Field(default=None, max_length=2000)
    verdict: str = Field(default="", max_length=200)
    time: BisectTime | None = None
    """``--metric time``: the step's rounds and decision (``instructions`` is then None)."""
    reused: bool = False
    """True when nothing was built: ``run_id`` is an earlier run of the same commit whose
    count has the same key (:class:`archbench.run.CountKey`)."""
    digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    """The integrity digest of the reused counting result (:mod:`archbench.result.integrity`),
    checked when it was read: which content the step took; None for a count of its own."""
    blocks: tuple[int, ...] = Field(default=(), max_length=MAX_BISECT_BLOCKS)
    """The row's instructions per block, from which ``instructions`` and ``spread`` come:
    what tells a constant with whole extra events (``exact+extra``,
    :func:`archbench.analysis.count_reading`) from a count that varies. Empty in records
    made before blocks were kept (issue 39), whose counts are then read by ``spread``."""
    ops_per_block: int = Field(default=0, ge=0)
    """Operations per block of ``blocks`` (0 with no blocks)."""

    @model_validator(mode="after")
    def _blocks_hold_together(self) -> BisectCount:
        """Blocks that do not give the count stored beside them (an edited record) are
        refused: the bisection would decide on one and show the other."""
        if not self.blocks:
            return self
        if self.ops_per_block < 1 or min(self.blocks) < 0 or self.instructions is None:
            raise ValueError(
                f"{self.arch}: blocks need operations per block >= 1, counts >= 0 and the "
                "count they give"
            )
        ordered = sorted(self.blocks)
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        if not math.isclose(median / self.ops_per_block, self.instructions, rel_tol=1e-9):
            raise ValueError(
                f"{self.arch}: instructions {self.instructions} is not the median of its "
                f"blocks per operation ({median / self.ops_per_block}); the record was edited"
            )
        return self


class BisectStep(Frozen):
    """One measured commit, stored as soon as it is measured (``index``: into the
    manifest's ``commits``); ``seconds``: the step's wall time (builds and counts)."""

    index: int = Field(ge=0)
    commit: str
    subject: str = Field(max_length=200)
    date: str = Field(max_length=64)
    counts: tuple[BisectCount, ...]
    seconds: float = Field(ge=0)
    finished_at: str


class FunctionMove(Frozen):
    """One function's part in a move of a counted row, from run A (before) to run B (after).

    ``library``: the file name without its version (``libsodium.so``); ``before``/``after``:
    the function's instructions per operation in each run (0.0 where it is not among that
    run's listed functions); ``change`` = after - before; ``share``: change / the row's
    change (None when the row's attributed totals are equal).
    """

    library: str = Field(max_length=300)
    function: str = Field(max_length=300)
    before: float = Field(ge=0)
    after: float = Field(ge=0)
    change: float
    share: float | None = None


class BisectMove(Frozen):
    """Where the instructions went at one move a bisection ended at, on one architecture.

    ``commit``: the first commit at the new level (the search's ``bad``); ``neighbour``:
    the commit measured at the level before it that is closest to it (a parent when one
    was measured); ``before_run``/``after_run``: the runs of the store that counted them;
    ``before``/``after``: the row's instructions per operation there; ``exact``: the move
    is at ``commit`` alone (False: somewhere among skipped commits up to it);
    ``functions``: the functions whose instructions per operation changed most, largest
    absolute change first (empty when a run has no attribution: ``note`` says why).
    """

    arch: str = Field(min_length=1, max_length=32)
    commit: str
    neighbour: str
    before_run: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    after_run: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    before: float = Field(gt=0)
    after: float = Field(gt=0)
    exact: bool = True
    functions: tuple[FunctionMove, ...] = ()
    note: str = Field(default="", max_length=500)


class BisectManifest(Frozen):
    """``<results>/<bisect-id>/bisect.json``: what ``invoke bisect`` was asked and every
    step it measured, so that ``--resume`` replays the steps and goes on.

    ``commits``: the range, ``good`` first and ``bad`` last, parents before children;
    ``targets``: architecture -> the matrix target measured there; ``row``: the row as
    given, ``scheme``/``key_bits``/``operation`` what it names; ``outcome``: the text
    of the finished bisection (empty while it runs); ``moves``: the functions behind
    each move it found.
    """

    format: Literal["archbench-bisect"] = "archbench-bisect"
    version: Literal[1] = 1
    bisect_id: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    created_at: str
    matrix_file: str
    matrix_text: str
    repository: str
    good: str
    bad: str
    row: str = Field(min_length=1, max_length=100)
    scheme: str
    key_bits: int | None = None
    operation: str
    metric: Literal["instructions", "time"] = "instructions"
    rounds: int = Field(default=0, ge=0, le=1000)
    """``time``: interleaved rounds per step; an undecided bad end or probe gets more, one
    at a time, up to :attr:`max_rounds`."""
    max_rounds: int = Field(default=0, ge=0, le=1000)
    targets: dict[str, str] = Field(min_length=1)
    overrides: dict[str, Any] = Field(default_factory=dict)
    commits: tuple[BisectCommit, ...] = Field(min_length=2)
    steps: tuple[BisectStep, ...] = ()
    outcome: str = ""
    moves: tuple[BisectMove, ...] = ()
    """Per architecture and move of the finished bisection, where its instructions went
    (empty while it runs, and in records written before moves were stored)."""

    @model_validator(mode="after")
    def _holds_together(self) -> BisectManifest:
        """A record that was edited or put together from others is refused as a whole:
        a parent that is no earlier commit, a step of a commit not in the range (or of
        another id than the range has there), a count on an architecture the bisection
        does not measure."""
        n = len(self.commits)
        for i, c in enumerate(self.commits):
            for p in c.parents:
                if not 0 <= p < i:
                    raise ValueError(f"commits[{i}]: parent {p} is not an earlier commit")
            if c.boundary and (c.parents or i in (0, n - 1)):
                raise ValueError(
                    f"commits[{i}]: a commit outside the range is neither good nor bad and "
                    "has no parent listed"
                )
            if (
                i > 0
                and not c.boundary
                and c.parent_count is not None
                and c.parent_count != len(c.parents)
            ):
                raise ValueError(
                    f"commits[{i}]: {len(c.parents)} parents listed but {c.parent_count} counted"
                )
        for k, step in enumerate(self.steps):
            if step.index >= n:
                raise ValueError(f"steps[{k}]: commit index {step.index}, but the range has {n}")
            if step.commit != self.commits[step.index].commit:
                raise ValueError(
                    f"steps[{k}]: commit {step.commit[:12]} is not commits[{step.index}] "
                    f"({self.commits[step.index].commit[:12]})"
                )
            for count in step.counts:
                if count.arch not in self.targets:
                    raise ValueError(
                        f"steps[{k}]: a count on {count.arch}, which this bisection does not "
                        f"measure (targets on {', '.join(sorted(self.targets))})"
                    )
        return self
