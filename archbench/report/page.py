"""The results page: one self-contained HTML file to look at runs and histories.

``invoke report``, ``history`` and ``bisect`` write :data:`PAGE_FILE` beside the chapter:
no server, no network (plotly.js is inlined once, nothing is linked from elsewhere),
opened straight from disk. It shows, per run, the time per operation of every row on
every target and the instructions per operation of the counted ones, with a figure of
each; per history, every row across the versions, one line per target (click a legend
entry to hide or show an architecture, hover for the values), and the same tables
rows × versions, and where the instructions went at each counted step (per bisection,
at each move: a table and a differential figure); the environment of every run (CPU,
kernel, OS, GNUnet version and source, library versions, QEMU, emulated or native); and
every row's raw samples, which every figure and table cell links to (anchors inside the
page), each with the results file it came from (a path relative to the page).

Two steps, so the data can be tested without a browser: :func:`assemble` (this module)
turns results, history manifests and bisection records into a :class:`Page` (pure data,
strings as read), and :func:`archbench.report.page_html.render_page` turns that into HTML
(Jinja2, plotly, matplotlib's differential figures); :func:`archbench.report.page_html.write_page`
writes it atomically; :func:`archbench.report.write_page_from_store` assembles it from a
results store.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from archbench.analysis import median_interval, median_per_op
from archbench.report import timeline as _timeline
from archbench.report.history import (
    NO_RESULTS,
    BlockCell,
    SeriesCell,
    block_series,
    history_changes,
    history_moves,
    history_steps,
    series,
    version_titles,
)
from archbench.report.instructions import (
    FUNCTIONS_PER_ROW,
    SECMOD_COUNTS_NOTE,
    SECMOD_SUITE,
    functions_frame,
)
from archbench.report.moved import Differential, Moved, bisect_moved, differentials
from archbench.report.sections import EMULATED_HELPER_NOTE
from archbench.report.timeline import METRICS, Timeline, row_series
from archbench.report.units import format_count, format_ratio, format_time_ns, printed_digits
from archbench.result import (
    BisectManifest,
    HistoryManifest,
    IndexEntry,
    Result,
    Row,
    RowKey,
    merge_repeats,
    row_key,
)

PAGE_FILE: Final = "results.html"
PAGE_TEMPLATE: Final = "page.html.j2"
"""In :data:`archbench.report.formats.TEMPLATES_DIR`."""

History = tuple[HistoryManifest, Mapping[str, Sequence[Result]]]
"""A history's manifest and, by run id, the stored results of its versions (any metric)."""


@dataclass(frozen=True)
class Cell:
    """One table cell: the text shown and the samples anchor it links to (None: empty)."""

    text: str
    anchor: str | None = None


@dataclass(frozen=True)
class Table:
    """A table of rows × columns; ``cells[i][j]`` belongs to ``rows[i]`` and ``columns[j]``."""

    title: str
    note: str
    columns: tuple[str, ...]
    rows: tuple[str, ...]
    cells: tuple[tuple[Cell, ...], ...]
    column_ids: tuple[str, ...] = ()
    """HTML ids of the column headers (the environment table's: a link lands on its
    machine's column); empty: none."""
    column_links: tuple[str, ...] = ()
    """Per column, the id its header links to (a machine's environment); empty: none."""


@dataclass(frozen=True)
class Point:
    """One value of a figure: x category, y value (ns or instructions per operation)."""

    x: str
    y: float
    hover: str
    anchor: str
    """The samples anchor of the row this value was computed from."""


@dataclass(frozen=True)
class Trace:
    """One line (or set of bars) of a figure: one target, togglable in the legend."""

    name: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Mark:
    """A step or change point of a history figure: a vertical line between two versions.

    ``before``/``after``: the x categories (versions) it lies between; ``kind``
    ``step`` (a neighbouring pair, :func:`archbench.report.history_steps`) or
    ``change`` (a change point over the whole series,
    :func:`archbench.report.history_changes`); ``text``: what it says, with the ratio
    after/before and the architecture.
    """

    before: str
    after: str
    kind: str
    text: str


@dataclass(frozen=True)
class Figure:
    """A figure: log-scale y, categorical x (rows of a run, or versions of a history)."""

    anchor: str
    title: str
    y_title: str
    kind: str
    """``bar`` (a run: rows × targets) or ``line`` (a history: versions × targets)."""
    x: tuple[str, ...]
    traces: tuple[Trace, ...]
    marks: tuple[Mark, ...] = ()
    """History figures: the row's steps and change points, drawn as vertical lines."""


@dataclass(frozen=True)
class Samples:
    """One row's raw samples: block values and per-operation values, and their file."""

    anchor: str
    title: str
    unit: str
    """``ns`` (block times) or ``instructions`` (block counts)."""
    ops_per_block: int
    blocks: tuple[int, ...]
    per_op: tuple[float, ...]
    json_path: str | None
    """The results file, relative to the page (None: not in a results store)."""
    valid: bool = True
    reason: str | None = None


@dataclass(frozen=True)
class RunSection:
    """One run: its tables, figures and the environment of each target."""

    run_id: str
    anchor: str
    tables: tuple[Table, ...]
    figures: tuple[Figure, ...]
    environment: Table
    """Fields × results: where and how each target was measured."""


@dataclass(frozen=True)
class HistorySection:
    """One history: its versions, figures per row (one trace per target) and tables."""

    history_id: str
    anchor: str
    versions: tuple[tuple[str, str, str, str], ...]
    """(name ``v1``…, label, run id, note) in series order."""
    figures: tuple[Figure, ...]
    tables: tuple[Table, ...]
    run_links: tuple[str | None, ...] = ()
    """Per version, the id of its run's section (tables and environment); None: the
    run holds no results."""
    differentials: tuple[Differential, ...] = ()
    """Per counted step, where its instructions went (a panel per architecture)."""


@dataclass(frozen=True)
class BisectSection:
    """One bisection: what it was asked, its outcome and where each move's instructions went."""

    bisect_id: str
    anchor: str
    summary: str
    outcome: tuple[str, ...]
    tables: tuple[Table, ...]
    differentials: tuple[Differential, ...]


@dataclass(frozen=True)
class SeriesFigure:
    """A row in one metric over time: a line per machine class (index into
    :attr:`OverTime.machines`) of :class:`archbench.report.timeline.Point`, each the median
    of a run (or of a group of runs) with its 95 % interval as a band."""

    anchor: str
    title: str
    y_title: str
    metric: str
    lines: tuple[tuple[int, tuple[_timeline.Point, ...]], ...]


@dataclass(frozen=True)
class RunFile:
    """A results file as a run's detail shows it: ``column`` names its target, ``href``
    is the file relative to the page (None: no link), ``rows`` are (row: an index into
    :attr:`OverTime.labels`, blocks, median per operation, the low and high ends of its
    95 % interval, why the row is invalid), numbers the page writes as its tables do
    (None: not known); ``environment`` its (field, value)."""

    metric: str
    column: str
    href: str | None
    rows: tuple[tuple[int, int, float | None, float | None, float | None, str | None], ...]
    environment: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RunDetail:
    """What a run's detail shows when asked for (loaded on demand, not drawn with the
    page): a table per metric and the environment, per results file."""

    run_id: str
    target: str
    files: tuple[RunFile, ...]


@dataclass(frozen=True)
class OverTime:
    """Every stored run of the machines of a report over many runs (``--all-runs``):
    per row a figure over time, a line per machine class, and each run's detail.

    ``runs``: (run id, start, machine class, GNUnet commit, target) per run, by class and
    then time (the figures' points index it); ``details``: per run, in that order, what
    it shows when clicked (:class:`RunDetail`, written beside the page in chunks of
    ``chunk`` runs); ``sections``: run id -> the anchor of its section on the page (the
    runs the chapter shows, drawn in full).
    """

    anchor: str
    machines: tuple[str, ...]
    runs: tuple[tuple[str, str, int, str, str], ...]
    labels: tuple[str, ...]
    """The rows' names, which :attr:`RunFile.rows` index."""
    figures: tuple[SeriesFigure, ...]
    details: tuple[RunDetail, ...]
    grouped: bool
    """True when a line groups consecutive runs into one point (a long history)."""
    points: int
    """The most points a line has (:data:`archbench.report.timeline.MAX_POINTS`)."""
    sections: dict[str, str]


@dataclass(frozen=True)
class Page:
    """Everything the page shows, strings as read from the results (not escaped)."""

    title: str
    generated_at: str
    runs: tuple[RunSection, ...]
    histories: tuple[HistorySection, ...]
    samples: tuple[Samples, ...]
    failures: tuple[str, ...] = ()
    bisections: tuple[BisectSection, ...] = ()
    over_time: OverTime | None = None
    """With a report over many runs of the same machines: every run over time."""

    @property
    def differentials(self) -> tuple[Differential, ...]:
        """Every differential figure of the page (matplotlib, inlined as PNG)."""
        return tuple(d for h in self.histories for d in h.differentials) + tuple(
            d for b in self.bisections for d in b.differentials
        )

    @property
    def figures(self) -> tuple[Figure, ...]:
        """Every figure of the page, runs first."""
        return tuple(f for r in self.runs for f in r.figures) + tuple(
            f for h in self.histories for f in h.figures
        )


def anchor(kind: str, *parts: object) -> str:
    """A stable HTML id for ``parts`` (any strings): ``kind-`` and 12 hex digits.

    Names from results files never reach an id or a URL fragment as they are.
    """
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:12]
    return f"{kind}-{digest}"


def _column(result: Result) -> str:
    kind = ", emulated" if result.emulated else ""
    return f"{result.target.name} ({result.target.arch}{kind})"


def _samples_anchor(result: Result, key: RowKey) -> str:
    return anchor("samples", result.run_id, result.metric, key)


def _time_per_op(row: Row) -> tuple[float, tuple[float, float] | None] | None:
    per_op = [s / row.ops_per_block for s in row.samples_ns]
    if not row.valid or not per_op:
        return None
    middle = float(statistics.median(per_op))
    if middle <= 0:
        return None
    return middle, median_interval(per_op)


def _printed_text(row: Row) -> str:
    """A published figure per operation, to the digits the source printed."""
    return _printed_value(row.samples_ns[0] / row.ops_per_block, row.printed or "")


def _printed_value(per_op: float, printed: str) -> str:
    """``per_op`` (ns) to the digits of the published figure ``printed``."""
    scale, unit = next(((f, u) for f, u in _TIME_SCALES if per_op >= f), _TIME_SCALES[-1])
    return f"{format_ratio(per_op / scale, digits=printed_digits(printed))} {unit}"


_TIME_SCALES: Final = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))


def _time_text(middle: float, interval: tuple[float, float] | None) -> str:
    text = format_time_ns(middle)
    if interval is not None:
        half = (interval[1] - interval[0]) / 2 / middle
        text += f" ±{half * 100:.1f} %"
    return text


def _count_per_op(row: Row) -> float | None:
    if not row.valid or not row.instructions:
        return None
    return median_per_op(row.instructions, row.ops_per_block)


def _environment(result: Result | IndexEntry) -> list[tuple[str, str]]:
    """(field, value) of where and how ``result`` was measured: its environment table's
    column (a stored result, or its index entry: the same fields)."""
    if isinstance(result, Result):
        setup, started_at = result.harness.setup, result.harness.started_at
    else:
        setup, started_at = result.setup, result.started_at
    lines: list[tuple[str, str]] = [
        ("target", result.target.name),
        ("run", result.run_id),
        ("metric", result.metric),
        ("architecture", f"{result.target.arch} ({result.target.platform})"),
        ("base", result.target.base),
        ("profile", result.target.profile),
        ("CPU", setup.cpu_model),
        (
            "cores",
            "unknown (not printed)"
            if result.reference is not None and "cores" in result.reference.placeholders
            else str(setup.cores),
        ),
        ("machine", setup.machine),
        ("kernel", setup.kernel),
        ("OS", setup.os),
        ("GNUnet version", setup.gnunet_version or "not recorded"),
    ]
    for name in ("libgnunetutil", "libgcrypt", "libsodium"):
        lines.append((name, setup.packages.get(name) or "not recorded"))
    if setup.gcc_version:
        lines.append(("compiler", setup.gcc_version))
    ex = result.execution
    if ex is not None:
        source = ex.gnunet_source
        lines.append(
            (
                "GNUnet source",
                "Debian's libgnunet-dev"
                if source is None
                else ", ".join(f"{k} {v}" for k, v in source.items() if v not in (None, "")),
            )
        )
        if ex.emulated:
            qemu = f"QEMU {ex.qemu_version or 'version not recorded'}"
            cpu = f", CPU model {ex.qemu_cpu}" if ex.qemu_cpu else ""
            lines.append(("execution", f"emulated ({qemu}{cpu}) on {ex.host_arch}"))
        else:
            lines.append(("execution", f"native on {ex.host_arch}"))
        lines.append(("QEMU version", ex.qemu_version or "none (native)"))
        lines.append(("host CPU", ex.host_cpu))
        if ex.host_kernel:
            lines.append(("host kernel", ex.host_kernel))
        lines.append(("image", ex.image_tag))
        lines.append(("engine", ex.docker_host))
        if ex.interleaved:
            lines.append(("interleaved session", f"{ex.interleaved}, round {ex.repeat_index}"))
    elif result.reference is not None:
        lines.append(("execution", f"{result.reference.label}: {result.reference.source}"))
        if result.reference.notes:
            lines.append(("notes", result.reference.notes))
    lines.append(("started", started_at))
    return lines


def _environment_table(results: Sequence[Result]) -> Table:
    """Fields × results; a field a result does not have is an empty cell."""
    each = [dict(_environment(r)) for r in results]
    fields: dict[str, None] = {}
    for r in results:
        for name, _value in _environment(r):
            fields.setdefault(name, None)
    return Table(
        "Environment",
        "As seen inside the container (CPU, kernel, OS, libraries) and by the host "
        "(execution, QEMU, engine). Under QEMU user emulation the container sees the "
        "host's CPU.",
        tuple(f"{_column(r)}, {r.metric}" for r in results),
        tuple(fields),
        tuple(tuple(Cell(e.get(name, "")) for e in each) for name in fields),
        column_ids=tuple(_environment_anchor(r) for r in results),
    )


def _environment_anchor(result: Result) -> str:
    """The id of ``result``'s column in its run's environment table."""
    return anchor("env", result.run_id, result.target.name, result.metric)


def _samples(result: Result, row: Row, json_path: str | None) -> Samples:
    key = row_key(result.target.name, row)
    counted = result.metric == "instructions"
    blocks = tuple(row.instructions or ()) if counted else tuple(row.samples_ns)
    return Samples(
        anchor=_samples_anchor(result, key),
        title=f"{_column(result)}: {key.label} ({result.metric}, run {result.run_id})"
        + (f"; printed as {row.printed} per {row.ops_per_block} operations" if row.printed else ""),
        unit="instructions" if counted else "ns",
        ops_per_block=row.ops_per_block,
        blocks=blocks,
        per_op=tuple(b / row.ops_per_block for b in blocks),
        json_path=json_path,
        valid=row.valid,
        reason=row.invalid_reason,
    )


def _rows_in_order(results: Sequence[Result]) -> list[RowKey]:
    """Row keys without their target (``target=""``), in order of first appearance."""
    seen: dict[RowKey, None] = {}
    for r in results:
        for row in r.harness.rows:
            seen.setdefault(row_key("", row), None)
    return list(seen)


def _functions_table(counted: Sequence[Result]) -> Table | None:
    """ "Where the instructions went": each counted row's top functions (None: no row
    has an attribution; :func:`archbench.report.instructions.functions_frame`)."""
    top = functions_frame(counted)
    if top.empty:
        return None
    records = top.to_dict("records")
    return Table(
        "Where the instructions went",
        f"The {FUNCTIONS_PER_ROW} functions that executed most of each counted row's "
        "instructions per operation, with their share of the row (the counting plugin "
        "attributes every translated block to the function it starts in; Debian's "
        "stripped libraries are named from symbol files whose code matches them). Code "
        'no symbol names shows as "(no symbol) after" the exported function before it.',
        ("Library", "Function", "Instructions per operation", "Share"),
        tuple(f"{r['target']} · {r['row']} · {r['rank']}" for r in records),
        tuple(
            (
                Cell(str(r["library"])),
                Cell(str(r["function"])),
                Cell(format_count(round(float(r["instructions_per_op"])))),
                Cell("" if r["share"] is None else f"{float(r['share']):.1%}"),
            )
            for r in records
        ),
    )


def _secmod_note(metric: str, chosen: Sequence[Result]) -> str:
    """What the security module's rows of ``chosen`` mean: an emulated time measures
    QEMU and the host's IPC; a count is the secmod's own ("" when neither is shown)."""
    if metric == "time":
        emulated = [
            _column(r)
            for r in chosen
            if r.emulated and any(row.suite == "security-module" for row in r.harness.rows)
        ]
        if emulated:
            return f" Security module on {', '.join(emulated)}, {EMULATED_HELPER_NOTE}."
        return ""
    if any(
        row.suite == SECMOD_SUITE and row.instructions for r in chosen for row in r.harness.rows
    ):
        return " " + SECMOD_COUNTS_NOTE
    return ""


def _run_section(run_id: str, results: Sequence[Result]) -> RunSection:
    tables: list[Table] = []
    figures: list[Figure] = []
    for metric, title, y_title in (
        ("time", "Time per operation", "time per operation (ns)"),
        ("instructions", "Instructions per operation", "instructions per operation"),
    ):
        chosen = [r for r in results if r.metric == metric]
        if not chosen:
            continue
        keys = _rows_in_order(chosen)
        labels = tuple(k.label for k in keys)
        columns = tuple(_column(r) for r in chosen)
        cells: list[tuple[Cell, ...]] = []
        traces: dict[int, list[Point]] = {i: [] for i in range(len(chosen))}
        for key, label in zip(keys, labels, strict=True):
            line: list[Cell] = []
            for i, r in enumerate(chosen):
                row = next(
                    (x for x in r.harness.rows if row_key("", x) == key),
                    None,
                )
                if row is None:
                    line.append(Cell(""))
                    continue
                link = _samples_anchor(r, row_key(r.target.name, row))
                if not row.valid:
                    line.append(Cell(f"invalid: {row.invalid_reason or 'no reason given'}", link))
                    continue
                value: float | None
                if metric == "time":
                    got = _time_per_op(row)
                    value = got[0] if got else None
                    text = _time_text(*got) if got else ""
                    if row.printed is not None and got:
                        text = _printed_text(row)
                else:
                    value = _count_per_op(row)
                    text = format_count(round(value)) if value is not None else ""
                line.append(Cell(text, link if text else None))
                if value is not None and value > 0:
                    traces[i].append(Point(label, value, f"{columns[i]}<br>{label}: {text}", link))
            cells.append(tuple(line))
        published = all(r.reference is not None for r in chosen)
        note = (
            "Published figures per operation (the printed figure of a block divided by its "
            "operations), to the digits the source printed; no interval (one published "
            "figure); a cell links to its sample, the figure as printed."
            if metric == "time" and published
            else "Median over the row's blocks, with ± the half-width of its 95 % interval "
            "where the row has one (6 blocks or more): the spread within the container run(s) "
            "measured, not how far another run would lie; a cell links to its raw samples."
            if metric == "time"
            else "Median over the row's counted blocks (QEMU TCG plugin); a cell links to "
            "its raw counts."
        )
        note += _secmod_note(metric, chosen)
        tables.append(
            Table(
                title,
                note,
                columns,
                labels,
                tuple(cells),
                column_links=tuple(_environment_anchor(r) for r in chosen),
            )
        )
        figures += _operation_figures(run_id, metric, title, y_title, keys, labels, columns, traces)
    functions = _functions_table([r for r in results if r.metric == "instructions"])
    if functions is not None:
        tables.append(functions)
    return RunSection(
        run_id,
        anchor("run", run_id),
        tuple(tables),
        tuple(f for f in figures if f.traces),
        _environment_table(results),
    )


def _operation_figures(
    run_id: str,
    metric: str,
    title: str,
    y_title: str,
    keys: Sequence[RowKey],
    labels: Sequence[str],
    columns: Sequence[str],
    traces: Mapping[int, Sequence[Point]],
) -> list[Figure]:
    """One figure per operation (small multiples): x the schemes and sizes, a trace per
    target, so a figure holds a handful of short categories whatever the rows and
    machines, and its tick labels never crowd its plot area."""
    groups: dict[tuple[str, str, int], list[str]] = {}
    for key, label in zip(keys, labels, strict=True):
        groups.setdefault((key.suite, key.operation, key.processes), []).append(label)
    out = []
    for (suite, operation, processes), members in groups.items():
        inside = set(members)
        words = operation.replace("_", " ") + (f" ×{processes}" if processes > 1 else "")
        figure_traces = []
        for i, points in traces.items():
            mine = [
                Point(_scheme_part(p.x, suite, words), p.y, p.hover, p.anchor)
                for p in points
                if p.x in inside
            ]
            if mine:
                figure_traces.append(Trace(columns[i], tuple(mine)))
        out.append(
            Figure(
                anchor("fig", run_id, metric, suite, operation, processes),
                f"{title}: {suite} {words}, run {run_id}",
                y_title,
                "bar",
                tuple(_scheme_part(m, suite, words) for m in members),
                tuple(figure_traces),
            )
        )
    return out


def _scheme_part(label: str, suite: str, words: str) -> str:
    """``"RSA-2048"`` of ``"blindsig RSA-2048 signing"``, ``"CS, 800 ops"`` of
    ``"security-module CS helper parallel signing, 800 ops"``: what tells a group's rows
    apart (the label without its suite and operation words)."""
    head, _, tail = label.removeprefix(f"{suite} ").rpartition(f" {words}")
    inner = (head + tail).strip()
    return inner or label


def _history_section(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]]
) -> HistorySection:
    names = {v.run_id: f"v{i}" for i, v in enumerate(manifest.versions, start=1)}
    titles = version_titles(manifest, results)
    first_session = manifest.versions[0].session
    versions = tuple(
        (
            names[v.run_id],
            titles[v.run_id] if titles[v.run_id] == v.label else f"{titles[v.run_id]} ({v.label})",
            v.run_id,
            "; ".join(
                note
                for note, applies in (
                    ("another session: not interleaved", v.session != first_session),
                    (NO_RESULTS, not results.get(v.run_id)),
                )
                if applies
            ),
        )
        for v in manifest.versions
    )
    x = tuple(f"{names[v.run_id]} {titles[v.run_id]}" for v in manifest.versions)
    marks = _history_marks(
        manifest,
        results,
        dict(zip((titles[v.run_id] for v in manifest.versions), x, strict=True)),
    )
    figures: list[Figure] = []
    tables: list[Table] = []
    columns: dict[str, str] = {}
    for version in manifest.versions:
        for r in results.get(version.run_id, ()):
            columns.setdefault(r.target.name, _column(r))
    for metric, title, y_title in (
        ("instructions", "Instructions per operation", "instructions per operation"),
        ("time", "Time per operation (native targets)", "time per operation (ns)"),
    ):
        found: dict[RowKey, dict[str, SeriesCell]] = series(manifest, results, metric)
        if not found:
            continue
        drawn, table = _history_metric(
            manifest, found, (metric, title, y_title), x, names, columns, marks
        )
        figures += drawn
        tables.append(table)
    blocks = block_series(manifest, results)
    if blocks:
        tables.append(_blocks_table(manifest, blocks, names, columns))
    moves = history_moves(manifest, results)
    if moves:
        tables.append(_moves_table(moves, "at each counted step"))
    return HistorySection(
        manifest.history_id,
        anchor("history", manifest.history_id),
        versions,
        tuple(figures),
        tuple(tables),
        tuple(
            anchor("run", v.run_id) if results.get(v.run_id) else None for v in manifest.versions
        ),
        tuple(differentials(moves, manifest.history_id)),
    )


def _moves_table(moves: Sequence[Moved], where: str) -> Table:
    """The functions behind each move (:mod:`archbench.report.moved`), a row per function."""
    rows: list[str] = []
    cells: list[tuple[Cell, ...]] = []
    for m in moves:
        head = f"{m.arch} · {m.row} · {m.before_label} → {m.after_label}"
        for rank, f in enumerate(m.functions, start=1):
            rows.append(f"{head} · {rank}")
            cells.append(
                (
                    Cell(f.library),
                    Cell(f.function),
                    Cell(f"{f.change:+,.0f}"),
                    Cell("" if f.share is None else f"{f.share:.1%}"),
                    Cell(f"{f.before:,.0f} → {f.after:,.0f}"),
                )
            )
        if not m.functions:
            rows.append(head)
            cells.append((Cell(""), Cell(m.note), Cell(f"{m.change:+,.0f}"), Cell(""), Cell("")))
    return Table(
        f"Where the instructions went {where}",
        "For each counted row that moved, the functions whose instructions per operation "
        "changed most: the change (after − before), its share of the row's change, and "
        "the function's instructions per operation before and after; the figure below "
        "draws the same changes.",
        ("Library", "Function", "Change per operation", "Share of the change", "Before → after"),
        tuple(rows),
        tuple(cells),
    )


def _bisect_section(manifest: BisectManifest) -> BisectSection:
    moves = bisect_moved(manifest)
    archs = ", ".join(f"{a} ({t})" for a, t in sorted(manifest.targets.items()))
    summary = (
        f"{manifest.row} from {manifest.good} to {manifest.bad} of {manifest.repository} "
        f"on {archs}: {sum(not c.boundary for c in manifest.commits) - 1} commits, "
        f"{len(manifest.steps)} steps"
    )
    return BisectSection(
        manifest.bisect_id,
        anchor("bisect", manifest.bisect_id),
        summary,
        tuple(manifest.outcome.splitlines()) or ("not finished (resume to go on)",),
        (_moves_table(moves, "at each move"),) if moves else (),
        tuple(differentials(moves, manifest.bisect_id)),
    )


def _history_metric(
    manifest: HistoryManifest,
    found: Mapping[RowKey, Mapping[str, SeriesCell]],
    metric_texts: tuple[str, str, str],
    x: tuple[str, ...],
    names: Mapping[str, str],
    columns: Mapping[str, str],
    marks: Mapping[tuple[str, RowKey], tuple[Mark, ...]],
) -> tuple[list[Figure], Table]:
    """A history's figures (one per row, a line per target) and table of one metric.

    ``metric_texts``: (metric, title, y-axis title); ``found``: the metric's
    :func:`archbench.report.history.series`; ``x``: the versions' axis labels;
    ``names``: run id -> ``v1``…; ``columns``: target -> column name.
    """
    metric, title, y_title = metric_texts
    figures: list[Figure] = []
    by_row: dict[RowKey, list[RowKey]] = {}
    for key in found:
        by_row.setdefault(key.across, []).append(key)
    row_labels: list[str] = []
    cells: list[tuple[Cell, ...]] = []
    for bare, keys in by_row.items():
        label = bare.label
        traces = []
        for key in sorted(keys, key=lambda k: k.target):
            points = []
            line: list[Cell] = []
            for v, xv in zip(manifest.versions, x, strict=True):
                cell = found[key].get(v.run_id)
                if cell is None:
                    line.append(Cell(""))
                    continue
                link = anchor("samples", v.run_id, metric, key)
                text = (
                    format_count(round(cell.value))
                    if metric == "instructions"
                    else format_time_ns(cell.value)
                )
                line.append(Cell(text, link))
                name = columns.get(key.target, key.target)
                points.append(Point(xv, cell.value, f"{name}<br>{xv}: {text}", link))
            traces.append(Trace(columns.get(key.target, key.target), tuple(points)))
            row_labels.append(f"{label} · {columns.get(key.target, key.target)}")
            cells.append(tuple(line))
        figures.append(
            Figure(
                anchor("fig", manifest.history_id, metric, bare),
                f"{label}: {title.lower()}",
                y_title,
                "line",
                x,
                tuple(traces),
                marks.get((metric, bare), ()),
            )
        )
    return figures, Table(
        f"{title} across the versions",
        "Median over the row's blocks (times: of every round); a cell links to the "
        "raw samples of that version.",
        tuple(names[v.run_id] for v in manifest.versions),
        tuple(row_labels),
        tuple(cells),
    )


def _blocks_table(
    manifest: HistoryManifest,
    found: Mapping[RowKey, Mapping[str, BlockCell]],
    names: Mapping[str, str],
    columns: Mapping[str, str],
) -> Table:
    """The security-module rows per block in ms, with intervals and the ratio to v1
    (:func:`archbench.report.history.block_series`, in its order); a cell links to its
    samples."""
    first = manifest.versions[0].run_id
    row_labels: list[str] = []
    cells: list[tuple[Cell, ...]] = []
    for key in found:  # in the appendix's row order
        line: list[Cell] = []
        for v in manifest.versions:
            cell = found[key].get(v.run_id)
            if cell is None:
                line.append(Cell(""))
                continue
            text = cell.text
            base = found[key].get(first)
            if base is not None and v.run_id != first and base.median_ms:
                text += f" ({cell.median_ms / base.median_ms:.3f}×)"
            line.append(Cell(text, anchor("samples", v.run_id, "time", key)))
        row_labels.append(f"{key.across.label} · {columns.get(key.target, key.target)}")
        cells.append(tuple(line))
    return Table(
        "Security module per block across the versions",
        "ms per block of signature operations as the thesis prints them (100 sequential: "
        "the sum of 100 calls; 100 parallel: one forked client's; 800 parallel: the wall "
        "time of all clients): median of every block of every round [95 % interval of the "
        "median] (n = blocks), in brackets the ratio to v1; a cell links to the raw samples.",
        tuple(names[v.run_id] for v in manifest.versions),
        tuple(row_labels),
        tuple(cells),
    )


def _history_marks(
    manifest: HistoryManifest,
    results: Mapping[str, Sequence[Result]],
    x_of: Mapping[str, str],
) -> dict[tuple[str, RowKey], tuple[Mark, ...]]:
    """(metric, row without target) -> the steps and change points of that row on every
    architecture, as :func:`archbench.report.history_steps` and
    :func:`archbench.report.history_changes` find them for the Markdown."""
    out: dict[tuple[str, RowKey], list[Mark]] = {}
    for arch, key, step in history_steps(manifest, results):
        out.setdefault((step.metric, key.across), []).append(
            Mark(
                x_of[step.before],
                x_of[step.after],
                "step",
                f"step {_mark_ratio(step.ratio, step.metric)} on {arch}",
            )
        )
    for arch, key, change in history_changes(manifest, results):
        out.setdefault((change.metric, key.across), []).append(
            Mark(
                x_of[change.before],
                x_of[change.after],
                "change",
                f"change point {_mark_ratio(change.ratio, change.metric)} on {arch}",
            )
        )
    return {k: tuple(v) for k, v in out.items()}


def _mark_ratio(ratio: float, metric: str) -> str:
    """After/before as the Markdown prints it: counts to 4 decimals, times to 3."""
    return f"{ratio:.4f}×" if metric == "instructions" else f"{ratio:.3f}×"


def assemble(
    results: Sequence[Result],
    histories: Sequence[History] = (),
    *,
    bisections: Sequence[BisectManifest] = (),
    json_path: Callable[[Result], str | None] = lambda _r: None,
    failures: Sequence[str] = (),
    generated_at: str | None = None,
    timeline: Timeline | None = None,
    entry_path: Callable[[IndexEntry], str | None] = lambda _e: None,
) -> Page:
    """The page's data: a section per run, per history, and every row's samples.

    ``results`` are the runs to show (time and instruction results, repeats merged or
    not); each history adds its versions' runs to them (a run shown twice is shown
    once). ``json_path`` names a result's file relative to the page (None: no link);
    ``failures`` are messages of files that could not be loaded, shown at the top;
    ``bisections`` (``bisect.json`` records) each get a section with their outcome and
    the functions behind each move.
    ``generated_at`` (ISO 8601 UTC) defaults to now. ``timeline``: every stored run of
    the report's machines (``--all-runs``), drawn over time when a machine has several
    (:class:`OverTime`); ``entry_path`` names an index entry's file relative to the page.

    Raises:
        ResultsError: a target's repeated runs measured different rows (they cannot
            be merged, :func:`archbench.result.merge_repeats`).
    """
    pool: dict[tuple[str, str, str, int], Result] = {}
    for r in [*results, *(x for _m, by_run in histories for rs in by_run.values() for x in rs)]:
        index = r.execution.repeat_index if r.execution else 1
        pool.setdefault((r.run_id, r.target.name, r.metric, index), r)
    merged = merge_repeats(list(pool.values()))
    by_run: dict[str, list[Result]] = {}
    for r in merged:
        by_run.setdefault(r.run_id, []).append(r)
    runs = tuple(
        _run_section(run_id, sorted(rs, key=lambda r: (r.metric != "time", r.target.name)))
        for run_id, rs in sorted(by_run.items())
    )
    samples = tuple(
        _samples(r, row, json_path(r))
        for run_id in sorted(by_run)
        for r in by_run[run_id]
        for row in r.harness.rows
    )
    sections = tuple(_history_section(m, rs) for m, rs in histories)
    return Page(
        title="archbench results",
        generated_at=generated_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        runs=runs,
        histories=sections,
        samples=samples,
        failures=tuple(failures),
        bisections=tuple(_bisect_section(b) for b in bisections),
        over_time=(
            _over_time(timeline, entry_path, {r.run_id: r.anchor for r in runs})
            if timeline is not None and timeline.repeated
            else None
        ),
    )


def _over_time(
    timeline: Timeline,
    entry_path: Callable[[IndexEntry], str | None],
    sections: dict[str, str],
) -> OverTime:
    """The page's part over time: a figure per row and metric, each run's detail."""
    texts = {
        "time": ("Time per operation", "time per operation (ns)"),
        "instructions": ("Instructions per operation", "instructions per operation"),
    }
    series = row_series(timeline)
    figures = tuple(
        SeriesFigure(
            anchor("over-time", r.metric, r.key),
            f"{r.key.label}: {texts[r.metric][0].lower()} over time",
            texts[r.metric][1],
            r.metric,
            r.series,
        )
        for r in series
    )
    return OverTime(
        anchor=anchor("over-time", *timeline.machines),
        machines=timeline.machines,
        runs=tuple((r.run_id, r.started_at, r.machine, r.commit, r.target) for r in timeline.runs),
        labels=tuple(k.label for k in timeline.keys),
        figures=figures,
        details=tuple(_run_details(timeline, entry_path)),
        grouped=any(p.first != p.last for r in series for _m, ps in r.series for p in ps),
        points=_timeline.MAX_POINTS,
        sections=sections,
    )


def _run_details(
    timeline: Timeline, entry_path: Callable[[IndexEntry], str | None]
) -> list[RunDetail]:
    """Per run of ``timeline``, its detail: per metric, its rows' values (the page writes
    them as the run's tables do: a time's median ± the half-width of its interval, a
    count), the environment and the link to its first file of that metric."""
    v = timeline.values

    def known(values: list[float]) -> list[float | None]:
        return [None if x != x else x for x in values]  # NaN: not known

    per_op = known(v.per_op.tolist())
    lows = known(v.low.tolist())
    highs = known(v.high.tolist())
    metrics: list[int] = v.metric.tolist()
    keys: list[int] = v.key.tolist()
    blocks: list[int] = v.n.tolist()
    starts: list[int] = v.start.tolist()
    out = []
    for i, run in enumerate(timeline.runs):
        files = []
        for m, metric in enumerate(METRICS):
            mine = [f for f in run.files if f.metric == metric]
            if not mine:
                continue
            head = min(mine, key=lambda f: f.repeat_index)
            rows = tuple(
                (keys[x], blocks[x], per_op[x], lows[x], highs[x], v.reasons.get(x))
                for x in range(starts[i], starts[i + 1])
                if metrics[x] == m
            )
            kind = ", emulated" if head.emulated else ""
            files.append(
                RunFile(
                    metric,
                    f"{head.target.name} ({head.target.arch}{kind})",
                    entry_path(head),
                    rows,
                    tuple(_environment(head)),
                )
            )
        out.append(RunDetail(run.run_id, run.target, tuple(files)))
    return out
