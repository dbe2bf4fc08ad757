"""A history as tables: every row across the versions of a series (``invoke history``).

Pure: it takes a :class:`archbench.result.HistoryManifest` and the results of its runs
and renders Markdown. Two tables per history:

* **instructions per operation** (median over a row's counted blocks, exact up to the
  row's block-to-block spread) for every version, and each version's ratio to the
  first: counts do not drift with load, so these are the figures a step is read from;
* **time per operation** of the native targets (median over every block of every
  round, ns), and each version's ratio to the first. The rounds of one session ran
  alternately (``Execution.interleaved``), so the machine's drift lands on every
  version alike; versions measured in another session (``--extend``) are marked.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tabulate import tabulate

from archbench.analysis import (
    ChangePoint,
    CountKind,
    Step,
    count_of,
    count_reading,
    find_steps,
    median_interval,
    median_per_op,
    whole_series,
)
from archbench.analysis import series as analysis_series
from archbench.errors import ReportError
from archbench.report.formats import csv_text
from archbench.report.moved import (
    FUNCTIONS_SHOWN,
    NO_ATTRIBUTION,
    Moved,
    counted_row,
    function_moves,
    moves_frame,
    render_moves_markdown,
)
from archbench.report.units import format_count, format_ms, format_time_ns
from archbench.report.versions import gnunet_version
from archbench.result import (
    OPERATION_ORDER,
    HistoryManifest,
    Result,
    Row,
    RowKey,
    merge_repeats,
    row_key,
    write_texts,
)

NO_RESULTS: Final = "no results stored (the run failed, was interrupted or its folder is gone)"
"""How a version whose run holds no results file is marked, on the page and in Markdown."""


@dataclass(frozen=True)
class SeriesCell:
    """One row of one version: instructions per operation or ns per operation."""

    value: float
    spread: float
    """Relative spread of the blocks (counts: (max - min) / median; times: IQR / median)."""


def series(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]], metric: str
) -> dict[RowKey, dict[str, SeriesCell]]:
    """Row -> run id -> its cell, for ``metric`` ``instructions`` or ``time``.

    ``results`` maps each version's run id to its stored results (every repeat and
    metric); rows without a value for ``metric`` are left out.
    """
    found: dict[RowKey, dict[str, SeriesCell]] = {}
    for version in manifest.versions:
        chosen = [r for r in results.get(version.run_id, ()) if r.metric == metric]
        for merged in merge_repeats(chosen):
            for row in merged.harness.rows:
                if not row.valid:
                    continue
                cell = _cell(row.instructions, row.samples_ns, row.ops_per_block, metric)
                if cell is not None:
                    found.setdefault(row_key(merged.target.name, row), {})[version.run_id] = cell
    return found


def _cell(
    counts: Sequence[int] | None, samples_ns: Sequence[int], ops: int, metric: str
) -> SeriesCell | None:
    if metric == "instructions":
        if not counts:
            return None
        per_op = [c / ops for c in counts]
        middle = median_per_op(counts, ops)
        return SeriesCell(middle, (max(per_op) - min(per_op)) / middle if middle else 0.0)
    per_op = [s / ops for s in samples_ns]
    if not per_op:
        return None
    middle = statistics.median(per_op)
    if len(per_op) < 4:
        return SeriesCell(middle, 0.0)
    q1, _, q3 = statistics.quantiles(per_op, n=4)
    return SeriesCell(middle, (q3 - q1) / middle if middle else 0.0)


def version_titles(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]]
) -> dict[str, str]:
    """Run id -> the name a version goes by in the tables, figures and steps.

    A version whose results built a GNU Taler exchange (``execution.taler_source``) is
    named by what it measured, ``exchange 0.14.0 + GNUnet 0.22.2``: the exchange's
    version (its ``configure.ac``) and the GNUnet its security modules were built
    against (``setup.tools``, else :func:`archbench.report.versions.gnunet_version`).
    Other versions, and versions without results, keep their label (``invoke history``'s,
    from the sources' names). A name that comes twice (an A/A series) gets `` #2``.
    """
    titles: dict[str, str] = {}
    for v in manifest.versions:
        title = v.label
        for r in results.get(v.run_id, ()):
            source = r.execution.taler_source if r.execution is not None else None
            if not source:
                continue
            tools = r.harness.setup.tools or {}
            exchange = tools.get("taler-exchange") or source.get("version")
            gnunet = tools.get("gnunet (exchange's)") or gnunet_version(r)
            if exchange:
                title = f"exchange {exchange} + GNUnet {gnunet or 'unknown'}"
                break
        taken = list(titles.values())
        if title in taken:
            title = f"{title} #{sum(t.split(' #')[0] == title for t in taken) + 1}"
        titles[v.run_id] = title
    return titles


SECURITY_MODULE: Final = "security-module"
"""The suite whose rows the history also shows per block, in ms, as the thesis printed them."""


@dataclass(frozen=True)
class BlockCell:
    """One security-module row of one version: ms per block (100 sequential, 100 parallel
    per forked client, 800 parallel, N batch), the median of every block of every round
    and its distribution-free 95 % interval (None: fewer than 6 blocks,
    :func:`archbench.analysis.median_interval`)."""

    median_ms: float
    interval_ms: tuple[float, float] | None
    blocks: int

    @property
    def text(self) -> str:
        """``"576 ms [116, 900] (n=24)"``: median, interval, number of blocks."""
        ms = format_ms(self.median_ms)
        if self.interval_ms is None:
            return f"{ms} (n={self.blocks})"
        low, high = (format_ms(x).removesuffix(" ms") for x in self.interval_ms)
        return f"{ms} [{low}, {high}] (n={self.blocks})"


def block_series(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]]
) -> dict[RowKey, dict[str, BlockCell]]:
    """Security-module row -> run id -> its :class:`BlockCell` (timed results only), in
    the appendix's row order (sequential, parallel 100, parallel 800, batch; CS first).

    A security module's figure is a block of signature operations (the thesis prints ms
    per 100 or 800 operations), and its parallel blocks overlap in time, so a time per
    operation (:func:`series`) does not read as the thesis's table; this is the same
    row per block, with its interval.
    """
    found: dict[RowKey, dict[str, BlockCell]] = {}
    for version in manifest.versions:
        chosen = [r for r in results.get(version.run_id, ()) if r.metric == "time"]
        for merged in merge_repeats(chosen):
            for row in merged.harness.rows:
                if row.suite != SECURITY_MODULE or not row.valid or not row.samples_ns:
                    continue
                ms = [x / 1e6 for x in row.samples_ns]
                found.setdefault(row_key(merged.target.name, row), {})[version.run_id] = BlockCell(
                    statistics.median(ms), median_interval(ms), len(ms)
                )
    return {key: found[key] for key in sorted(found, key=_order)}


def render_blocks_markdown(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]]
) -> str:
    """:func:`block_series` as a Markdown table (empty string: no security-module rows)."""
    table = block_series(manifest, results)
    if not table:
        return ""
    names = {v.run_id: f"v{i}" for i, v in enumerate(manifest.versions, start=1)}
    first = manifest.versions[0].run_id
    rows = []
    for key, cells in table.items():
        line = [key.target, key.label.removeprefix(f"{key.suite} ")]
        for v in manifest.versions:
            cell = cells.get(v.run_id)
            if cell is None:
                line.append("")
                continue
            text = cell.text
            base = cells.get(first)
            if base is not None and v.run_id != first and base.median_ms:
                text += f" ({cell.median_ms / base.median_ms:.3f}×)"
            line.append(text)
        rows.append(line)
    headers = ["target", "row", *(names[v.run_id] for v in manifest.versions)]
    return (
        "### Security module per block (native targets)\n\n"
        "ms per block of signature operations as the thesis prints them (100 sequential: "
        "the sum of 100 calls; 100 parallel: one forked client's; 800 parallel: the wall "
        "time of all clients): median of every block of every round [95 % interval of "
        "the median] (n = blocks); in brackets the ratio to v1.\n\n"
        + tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    )


def history_steps(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]], *, rate: float = 0.05
) -> list[tuple[str, RowKey, Step]]:
    """Every step of every row and architecture across the versions, in series order.

    ``(architecture, row, step)``; counts step beyond the row's block-to-block spread and
    0.1 %, times when the pair's interval (paired over rounds where the versions were
    interleaved) excludes 1, the change exceeds 5 % and the p-value adjusted by
    Benjamini–Hochberg over the whole history is at most 5 %
    (:func:`archbench.analysis.find_steps`). Each step names the two versions and what
    changed between their environments (:attr:`Step.cause`). ``rate``: the false
    discovery rate of the timed steps (1: no control, each pair's interval alone).
    """
    titles = version_titles(manifest, results)
    runs = [(titles[v.run_id], list(results.get(v.run_id, ()))) for v in manifest.versions]
    found = []
    for key, points in analysis_series(runs).items():
        for step in find_steps(points, rate=rate):
            found.append((key.arch, key.row, step))
    return sorted(found, key=lambda item: (item[2].metric != "instructions", _order(item[1])))


def history_count_kinds(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]]
) -> list[tuple[str, RowKey, CountKind, float]]:
    """The counted rows whose count is not a constant, by kind, in the appendix's order.

    ``(architecture, row, kind, spread)``: ``spread`` the largest relative range of the
    row's repetitions over the versions, ``kind`` the versions' one reading
    (:func:`archbench.analysis.count_reading`, as steps and the gate read them):
    ``varying`` (stepped only beyond 1 % and three times the spread), ``random`` (never
    stepped, gated or bisected) or ``exact+extra`` where every version's blocks are a
    constant with whole extra events (stepped on the constant, beyond 0.1 %). Exact rows
    are left out.
    """
    titles = version_titles(manifest, results)
    runs = [(titles[v.run_id], list(results.get(v.run_id, ()))) for v in manifest.versions]
    out = []
    for key, points in analysis_series(runs).items():
        if key.metric != "instructions" or not points:
            continue
        reading = count_reading([count_of(p) for p in points])
        if reading.kind != "exact":
            out.append((key.arch, key.row, reading.kind, reading.spread))
    return sorted(out, key=lambda item: (item[0], _order(item[1])))


def render_count_kinds_markdown(kinds: Sequence[tuple[str, RowKey, CountKind, float]]) -> str:
    """The counted rows that are not constants as a Markdown paragraph ('' when none)."""
    if not kinds:
        return ""
    lines = [
        f"- {arch} {key.label.removeprefix(f'{key.suite} ')}: {kind}, repetitions ±{spread:.2%}"
        for arch, key, kind, spread in kinds
    ]
    return (
        "### Counts that are not constants\n\n"
        "A count is exact only where inputs, allocation and scheduling are. These rows' "
        "own repetitions vary: `exact+extra` rows (a constant with whole extra events in "
        "some blocks, such as libgcrypt's entropy-pool mixing) step on their constant "
        "beyond 0.1 %, `varying` rows only beyond 1 % and three times their "
        "range, `random` rows (a draw, such as random keys) never step and are never "
        "gated or bisected.\n\n" + "\n".join(lines) + "\n"
    )


def render_steps_markdown(
    steps: Sequence[tuple[str, RowKey, Step]], alone: int | None = None
) -> str:
    """The steps as a Markdown table (instructions first), or a line saying there are none;
    with ``alone`` (the timed steps the pairs' own intervals call), a line saying how many
    timed steps the false-discovery control kept."""
    timed = sum(step.metric == "time" for _, _, step in steps)
    control = (
        f"\n{timed} timed step(s) under Benjamini–Hochberg control of false discoveries at "
        f"5 % over the history's timed points ({alone} by the pairs' own intervals alone).\n"
        if alone is not None
        else ""
    )
    if not steps:
        return (
            "### Steps\n\nNo row steps across the series (counts within their spread and "
            "0.1 %, times within their intervals or not kept by the false-discovery "
            "control).\n"
        ) + control
    rows = [
        [
            arch,
            key.label.removeprefix(f"{key.suite} "),
            step.metric,
            f"{step.before} → {step.after}",
            f"{step.ratio:.3f}×",
            step.cause,
        ]
        for arch, key, step in steps
    ]
    return (
        "### Steps\n\n"
        + tabulate(
            rows,
            headers=["arch", "row", "metric", "versions", "ratio", "what changed"],
            tablefmt="github",
            disable_numparse=True,
        )
        + "\n"
        + control
    )


def history_changes(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]]
) -> list[tuple[str, RowKey, ChangePoint]]:
    """Every change point over the whole series of every row and architecture
    (:func:`archbench.analysis.whole_series`): counts of every version, times of the
    versions of the first session; instructions first, then the appendix's row order."""
    titles = version_titles(manifest, results)
    runs = [(titles[v.run_id], list(results.get(v.run_id, ()))) for v in manifest.versions]
    found = whole_series(runs)
    return sorted(found, key=lambda item: (item[2].metric != "instructions", _order(item[1])))


def render_changes_markdown(changes: Sequence[tuple[str, RowKey, ChangePoint]]) -> str:
    """The change points as a Markdown table, or a line saying there are none."""
    head = (
        "### Change points over the whole series\n\n"
        "Each row's series segmented at once (PELT, BIC penalty; counts beyond their "
        "spread and 0.1 %, times beyond 5 % and the noise left after each round's "
        "common drift); ratio: the segment after over the segment before.\n\n"
    )
    if not changes:
        return head + "No row changes level over the series.\n"
    rows = [
        [
            arch,
            key.label.removeprefix(f"{key.suite} "),
            change.metric,
            f"{change.before} → {change.after}",
            f"{change.ratio:.4f}×" if change.metric == "instructions" else f"{change.ratio:.3f}×",
        ]
        for arch, key, change in changes
    ]
    return (
        head
        + tabulate(
            rows,
            headers=["arch", "row", "metric", "between", "ratio"],
            tablefmt="github",
            disable_numparse=True,
        )
        + "\n"
    )


def _order(key: RowKey) -> tuple[str, str, int, int, bool, int, str, str, str, int]:
    """The appendix's order inside a target: operation, block (a security module's 100
    before its 800), CS before RSA, RSA by size."""
    rank = OPERATION_ORDER.index(key.operation) if key.operation in OPERATION_ORDER else 99
    return (
        key.target,
        key.suite,
        rank,
        key.block,
        key.scheme != "CS",
        key.key_bits,
        key.param,
        key.operation,
        key.device,
        key.bytes_per_op,
    )


def render_history_markdown(
    manifest: HistoryManifest, results: Mapping[str, Sequence[Result]]
) -> str:
    """The history's two tables (see the module docs) as Markdown, with a legend."""
    names = {v.run_id: f"v{i}" for i, v in enumerate(manifest.versions, start=1)}
    first_session = manifest.versions[0].session
    titles = version_titles(manifest, results)
    legend = [
        f"History {manifest.history_id}: {len(manifest.versions)} versions, "
        f"{manifest.rounds} interleaved rounds per session (seed {manifest.seed})."
    ]
    for v in manifest.versions:
        other = "" if v.session == first_session else " (another session: not interleaved)"
        empty = "" if results.get(v.run_id) else f" — {NO_RESULTS}"
        title = titles[v.run_id]
        built = "" if title == v.label else f"{v.label}; "
        legend.append(f"- {names[v.run_id]}: {title} ({built}run {v.run_id}){other}{empty}")
    parts = ["\n".join(legend)]
    for metric, title, unit in (
        ("instructions", "Instructions per operation", "instructions"),
        ("time", "Time per operation (native targets)", "ns"),
    ):
        table = series(manifest, results, metric)
        if not table:
            continue
        rows = []
        for key in sorted(table, key=_order):
            cells = table[key]
            first = cells.get(manifest.versions[0].run_id)
            line = [key.target, key.label.removeprefix(f"{key.suite} ")]
            for v in manifest.versions:
                cell = cells.get(v.run_id)
                if cell is None:
                    line.append("" if results.get(v.run_id) else "no results")
                    continue
                text = (
                    format_count(round(cell.value))
                    if metric == "instructions"
                    else format_time_ns(cell.value)
                )
                if first is not None and v is not manifest.versions[0] and first.value:
                    text += f" ({cell.value / first.value:.3f}×)"
                line.append(text)
            rows.append(line)
        headers = ["target", "row", *(names[v.run_id] for v in manifest.versions)]
        parts.append(
            f"### {title}\n\n{unit}; in brackets the ratio to v1.\n\n"
            + tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
        )
    blocks = render_blocks_markdown(manifest, results)
    if blocks:
        parts.append(blocks)
    return "\n\n".join(parts) + "\n"


def _counted_row(results: Sequence[Result], arch: str, key: RowKey) -> Row | None:
    """``key``'s row (its target is the architecture, as in :func:`history_steps`) in the
    first counting result of ``arch`` among one version's ``results``."""
    for result in results:
        if result.metric != "instructions" or result.target.arch != arch:
            continue
        for row in result.harness.rows:
            if row_key(arch, row) == key and counted_row(row) is not None:
                return row
    return None


def history_moves(
    manifest: HistoryManifest,
    results: Mapping[str, Sequence[Result]],
    steps: Sequence[tuple[str, RowKey, Step]] | None = None,
    limit: int = FUNCTIONS_SHOWN,
) -> list[Moved]:
    """Where the instructions went at every counted step of the history, per architecture.

    ``steps``: :func:`history_steps` (computed when None); each step of metric
    ``instructions`` pairs its two versions' rows (:func:`archbench.report.moved.function_moves`):
    the ``limit`` functions whose instructions per operation changed most. A step whose
    rows have no attribution (counted before plugin version 2) gets a note instead.
    """
    if steps is None:
        steps = history_steps(manifest, results)
    # Steps name their versions by title (an exchange's version, else the label).
    titles = version_titles(manifest, results)
    run_of = {titles[v.run_id]: v.run_id for v in manifest.versions}
    names = {titles[v.run_id]: f"v{i}" for i, v in enumerate(manifest.versions, start=1)}
    out = []
    for arch, key, step in steps:
        if step.metric != "instructions":
            continue
        a, b = (
            _counted_row(results.get(run_of[label], ()), arch, key)
            for label in (step.before, step.after)
        )
        if a is None or b is None:
            continue
        before, after = counted_row(a), counted_row(b)
        assert before is not None and after is not None  # rows found have counts
        both = a.attribution is not None and b.attribution is not None
        functions = function_moves(a.attribution or (), b.attribution or (), limit) if both else ()
        out.append(
            Moved(
                arch=arch,
                row=key.label.removeprefix(f"{key.suite} "),
                before_label=f"{names[step.before]} {step.before}",
                after_label=f"{names[step.after]} {step.after}",
                before=before,
                after=after,
                functions=functions,
                note="" if functions else (NO_ATTRIBUTION if not both else "no function moved"),
            )
        )
    return out


def history_file_stem(history_id: str) -> str:
    """``history-<history-id>``: the stem of a history's report files."""
    return f"history-{history_id}"


def write_history_files(
    manifest: HistoryManifest,
    out_dir: Path,
    *,
    markdown: str,
    moves: Sequence[Moved],
) -> list[Path]:
    """Write ``history-<id>.md`` (``markdown``: the history's tables as printed, then
    :func:`archbench.report.moved.render_moves_markdown` of ``moves``) and, when a step
    has functions, ``history-<id>-functions.csv``
    (:func:`archbench.report.moved.moves_frame`) into ``out_dir``, atomically.

    Raises:
        ReportError: ``out_dir`` cannot be written.
    """
    stem = history_file_stem(manifest.history_id)
    section = render_moves_markdown(moves, "Where the instructions went at each counted step")
    texts: dict[Path, str | bytes] = {
        out_dir / f"{stem}.md": markdown + ("\n" + section if section else "")
    }
    frame = moves_frame(moves)
    if not frame.empty:
        texts[out_dir / f"{stem}-functions.csv"] = csv_text(frame)
    return write_texts(texts, ReportError, "the history's report", "choose a writable --out")
