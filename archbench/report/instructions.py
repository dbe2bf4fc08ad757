"""Instructions per operation across architectures: frame, tables, export column, plot.

Reads counting results (``Result.metric == "instructions"``, see
:mod:`archbench.analysis.counting`). Each row's figure is the median over its blocks of
count / ``ops_per_block`` (instructions per operation); ``spread`` is the
relative range of the per-block counts. The wide table has one column per
target and each architecture's ratio to amd64's count. Counts never share a
column with times; captions name the QEMU CPU model that was counted. Where a
time result of the same target and row exists (``invoke report`` passes the
time results too), ``ns_per_instruction`` = median ns per operation / instructions
per operation, a sanity figure meaningful only for native runs.

Counted suites are blindsig, rsa-large and sodium (their drivers mark each
block) and taler-helper (its security module counted as a whole process:
``secmod_signing``, ``secmod_key_generation`` rows, :func:`secmod_table`);
:data:`NOT_COUNTED` run programs archbench does not own, so their rows have no
count (an empty ``instructions_per_op`` cell in the exports), as the table notes say.
"""

from __future__ import annotations

import dataclasses
import io
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, get_args

import pandas as pd
from tabulate import tabulate

from archbench.analysis import median_per_op, spread
from archbench.errors import ReportError
from archbench.report.formats import csv_text, markdown_escape
from archbench.report.model import Cell, Ratio, Table
from archbench.report.sections import grouped
from archbench.report.units import format_count
from archbench.result import (
    THESIS_OPS,
    AppendixRow,
    Operation,
    Result,
    RowKey,
    operation_label,
    row_key,
    scheme_id,
    scheme_label,
    write_atomic,
)
from archbench.suites import COUNTED_SUITES, NOT_COUNTED

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn (it is slow to import)
    from matplotlib.figure import Figure


@dataclass(frozen=True, slots=True)
class CountRecord:
    """One counted harness row: instructions per operation and where they were counted.

    ``instructions_per_op`` is the median over the row's ``blocks`` blocks of
    ``ops_per_block`` operations (:func:`archbench.analysis.median_per_op`); ``spread``
    their relative range (:func:`archbench.analysis.spread`, 0: exact);
    ``native_ns_per_op`` the median time per operation in ns of the same target's
    native timing run (None: none given), ``ns_per_instruction`` that time over the count.
    """

    run_id: str
    target: str
    arch: str
    cpu_model: str
    qemu_version: str
    plugin_version: str
    suite: str
    scheme: str
    key_bits: int | None
    param: str | None
    operation: str
    ops_per_block: int
    blocks: int
    instructions_per_op: float
    spread: float
    native_ns_per_op: float | None
    ns_per_instruction: float | None


COLUMNS: Final = tuple(f.name for f in dataclasses.fields(CountRecord))
"""The columns of :func:`frame` and of ``instructions.csv``: :class:`CountRecord`'s fields."""
OPERATION_ORDER: Final = get_args(Operation)
"""The thesis appendix's row order (:data:`archbench.result.Operation`)."""
BASELINE_ARCH = "amd64"
NOT_COUNTED_NOTE: Final = (
    "Not counted: " + ", ".join(NOT_COUNTED) + " (they run programs archbench does not own; "
    "empty instructions_per_op cells in the exports)."
)


def _native_ns(times: Sequence[Result]) -> dict[RowKey, float]:
    """Each native row's :class:`archbench.result.RowKey` -> its median ns per operation."""
    found: dict[RowKey, float] = {}
    for r in times:
        if r.metric != "time" or r.emulated or r.execution is None:
            continue
        for row in r.harness.rows:
            if row.valid:
                ns = statistics.median(row.samples_ns) / row.ops_per_block
                found[row_key(r.target.name, row)] = ns
    return found


def frame(counted: Sequence[Result], times: Sequence[Result] = ()) -> pd.DataFrame:
    """One row per counted harness row: instructions per operation and provenance.

    Columns are :data:`COLUMNS`; rows without counts (invalid, or suites that
    are not counted) are left out.
    """
    native = _native_ns(times)
    records: list[CountRecord] = []
    for r in counted:
        if r.metric != "instructions" or r.harness.counting is None:
            continue
        c = r.harness.counting
        for row in r.harness.rows:
            if row.instructions is None:
                continue
            ipo = median_per_op(row.instructions, row.ops_per_block)
            ns = native.get(row_key(r.target.name, row))
            records.append(
                CountRecord(
                    run_id=r.run_id,
                    target=r.target.name,
                    arch=r.target.arch,
                    cpu_model=c.cpu_model,
                    qemu_version=c.qemu_version,
                    plugin_version=c.plugin_version,
                    suite=row.suite,
                    scheme=row.scheme,
                    key_bits=row.key_bits,
                    param=row.param,
                    operation=row.operation,
                    ops_per_block=row.ops_per_block,
                    blocks=len(row.instructions),
                    instructions_per_op=ipo,
                    spread=spread(row.instructions),
                    native_ns_per_op=ns,
                    ns_per_instruction=None if ns is None else ns / ipo,
                )
            )
    values = [tuple(getattr(record, name) for name in COLUMNS) for record in records]
    return pd.DataFrame.from_records(values, columns=list(COLUMNS))


def _row_label(scheme: str, bits: float | None, param: object = None) -> str:
    if scheme == "CS":
        return "CS"
    label = scheme_id(scheme, None if bits is None or bits != bits else int(bits))  # NaN: none
    return f"{label} {param}" if isinstance(param, str) and param else label


def _labelled(f: pd.DataFrame) -> pd.DataFrame:
    """``f`` with Suite, Scheme, Operation labels and a sort rank (suite, then operation)."""
    suite_rank = {s: i for i, s in enumerate(COUNTED_SUITES)}
    op_rank = {op: i for i, op in enumerate(OPERATION_ORDER)}
    return f.assign(
        Suite=f["suite"],
        Scheme=[
            _row_label(s, b, p)
            for s, b, p in zip(f["scheme"], f["key_bits"], f["param"], strict=True)
        ],
        Operation=f["operation"].str.replace("_", " "),
        rank=[
            suite_rank.get(s, 99) * 100 + op_rank.get(o, 99)
            for s, o in zip(f["suite"], f["operation"], strict=True)
        ],
    )


def wide(counted: Sequence[Result]) -> pd.DataFrame:
    """The cross-architecture table: Scheme, Operation, per target its count, ratio to amd64.

    A target's ratio column is ``<target> / amd64`` (its instructions per
    operation divided by those of the first amd64 target); without an amd64
    target there are no ratio columns.
    """
    f = frame(counted)
    if f.empty:
        return pd.DataFrame(columns=["Suite", "Scheme", "Operation"])
    f = _labelled(f)
    order = list(dict.fromkeys(f["target"]))
    table = f.pivot_table(
        index=["rank", "Suite", "Scheme", "Operation"],
        columns="target",
        values="instructions_per_op",
        aggfunc="median",
    ).reset_index()
    table = table.sort_values(["rank", "Scheme"]).drop(columns="rank")
    base = next(
        (t for t in order if f.loc[f["target"] == t, "arch"].iloc[0] == BASELINE_ARCH), None
    )
    out = table[["Suite", "Scheme", "Operation"]].copy()
    for t in order:
        out[t] = table[t].round(0).astype("Int64")
        if base is not None and t != base:
            out[f"{t} / {base}"] = (table[t] / table[base]).round(2)
    return out.reset_index(drop=True)


def caption(counted: Sequence[Result]) -> str:
    """Caption naming the QEMU version and CPU model of every counted target."""
    models = sorted(
        {
            f"{r.target.name}: -cpu {r.harness.counting.cpu_model}"
            for r in counted
            if r.harness.counting is not None
        }
    )
    versions = sorted(
        {r.harness.counting.qemu_version for r in counted if r.harness.counting is not None}
    )
    return (
        "Instructions per operation (median over blocks), counted with archbench's QEMU TCG "
        f"plugin under {'; '.join(versions)}; QEMU CPU models: {', '.join(models)}. "
        "Ratios are to amd64's count. " + NOT_COUNTED_NOTE
    )


def ns_per_instruction(counted: Sequence[Result], times: Sequence[Result]) -> pd.DataFrame:
    """Native ns per instruction: Scheme, Operation, one column per target with a native time.

    Empty when no counted target has a native time result among ``times``.
    """
    f = frame(counted, times).dropna(subset=["ns_per_instruction"])
    if f.empty:
        return pd.DataFrame(columns=["Suite", "Scheme", "Operation"])
    f = _labelled(f)
    table = f.pivot_table(
        index=["rank", "Suite", "Scheme", "Operation"],
        columns="target",
        values="ns_per_instruction",
    ).reset_index()
    return table.sort_values(["rank", "Scheme"]).drop(columns="rank").round(3)


def _markdown_wide(table: pd.DataFrame) -> str:
    """:func:`wide`'s table as a pipe table (tabulate), numbers right-aligned.

    Counts (the ``Int64`` columns) are grouped by thousands with a space
    (:func:`format_count`), as the LaTeX table groups them with ``\\,``; a row a
    target has no count for shows "–", as in the appendix's tables. Ratios
    print as tabulate prints floats (``2``, ``1.5``).
    """
    counts = [str(table[c].dtype) == "Int64" for c in table.columns]
    rows = [
        [
            None if pd.isna(v) else format_count(int(v)) if count else v
            for v, count in zip(values, counts, strict=True)
        ]
        for values in table.itertuples(index=False)
    ]
    labels = ("Suite", "Scheme", "Operation")
    return tabulate(
        rows,
        headers=[str(c) for c in table.columns],
        tablefmt="pipe",
        colalign=["left" if c in labels else "right" for c in table.columns],
        # None, not NaN: pandas would turn None back into NaN, printed "nan".
        missingval="–",
    )


def render_instructions_markdown(counted: Sequence[Result], times: Sequence[Result] = ()) -> str:
    """The table as Markdown (:func:`_markdown_wide`) with its caption above.

    With native time results of the same targets in ``times``, a second table
    gives ns per instruction (median native ns per operation / instructions per
    operation), a sanity figure for native targets only.
    """
    text = (
        "### Instructions per operation\n\n"
        + caption(counted)
        + "\n\n"
        + _markdown_wide(wide(counted))
        + "\n"
    )
    per_insn = ns_per_instruction(counted, times)
    if not per_insn.empty:
        text += (
            "\n### Native ns per instruction\n\nMedian native time per operation divided by "
            "the instructions per operation counted above (host CPU vs QEMU CPU model: a "
            "sanity figure, not a measurement of either).\n\n"
            + per_insn.to_markdown(index=False)
            + "\n"
        )
    return text


FUNCTIONS_PER_ROW: Final = 5
"""Functions per counted row in the report's "Where the instructions went" table."""


def functions_frame(counted: Sequence[Result], limit: int = FUNCTIONS_PER_ROW) -> pd.DataFrame:
    """The top ``limit`` functions of every counted row with an attribution.

    One row per (target, counted row, function), in the results' order and
    largest first: ``target``, ``row`` (its label), ``rank`` (1 = largest),
    ``library``, ``function``, ``instructions_per_op`` (the function's
    instructions per operation) and ``share`` (of the row's attributed total,
    0 to 1). The ``(other functions)`` remainder is left out; rows without an
    attribution (counted before plugin version 2, rsa-large and sodium rows)
    have none. Names are as stored (``(no symbol) after f`` for a stripped
    library's internal code; see :class:`archbench.result.FunctionCount`).
    """
    records = []
    for result in counted:
        for row in result.harness.rows:
            if not row.attribution:
                continue
            total = sum(f.instructions_per_op for f in row.attribution)
            label = f"{row.label} {row.operation.replace('_', ' ')}"
            listed = sorted(
                (f for f in row.attribution if f.library or f.function != "(other functions)"),
                key=lambda f: -f.instructions_per_op,
            )
            for rank, f in enumerate(listed[:limit], start=1):
                records.append(
                    {
                        "target": result.target.name,
                        "row": label,
                        "rank": rank,
                        "library": f.library,
                        "function": f.function,
                        "instructions_per_op": round(f.instructions_per_op, 1),
                        "share": round(f.instructions_per_op / total, 4) if total else None,
                    }
                )
    columns = ["target", "row", "rank", "library", "function", "instructions_per_op", "share"]
    return pd.DataFrame.from_records(records, columns=columns)


def render_functions_markdown(counted: Sequence[Result], limit: int = FUNCTIONS_PER_ROW) -> str:
    """:func:`functions_frame` as a Markdown section ("" when no row has an attribution).

    Library, function and target names come from results files: escaped for Markdown.
    """
    f = functions_frame(counted, limit)
    if f.empty:
        return ""
    rows = [
        [
            markdown_escape(str(r["target"])),
            markdown_escape(str(r["row"])),
            r["rank"],
            markdown_escape(str(r["library"])),
            markdown_escape(str(r["function"])),
            format_count(round(float(r["instructions_per_op"]))),
            "–" if r["share"] is None or pd.isna(r["share"]) else f"{float(r['share']):.1%}",
        ]
        for r in f.to_dict("records")
    ]
    return (
        "### Where the instructions went\n\n"
        f"The {limit} functions that executed most of each counted row's instructions per "
        "operation (the counting plugin attributes every translated block to the function "
        "and library it starts in). Debian's stripped libraries are named from symbol files "
        "whose code matches them (docs/counting.md); where none matched, their internal "
        'code shows as "(no symbol) after" the exported function before it.\n\n'
        + tabulate(
            rows,
            headers=["Target", "Row", "#", "Library", "Function", "Instructions/op", "Share"],
            tablefmt="pipe",
            colalign=["left", "left", "right", "left", "left", "right", "right"],
        )
        + "\n"
    )


def render_instructions_latex(counted: Sequence[Result]) -> str:
    """The table as a LaTeX ``table`` (pandas Styler, Jinja2 inside) with caption and label."""
    table = wide(counted)
    styler = (
        table.style.hide(axis="index")
        .format(precision=2, na_rep="--", thousands=r"\,", escape="latex")
        .format_index(escape="latex", axis=1)
    )
    return styler.to_latex(
        caption=caption(counted).replace("_", r"\_"),
        label="tab:instructions-per-op",
        hrules=True,
        position="htbp",
    )


def plot(counted: Sequence[Result]) -> Figure:
    """Grouped bars of instructions per operation per row and target, log-scale y axis."""
    import matplotlib

    matplotlib.use("Agg")  # headless
    from matplotlib.figure import Figure

    f = frame(counted)
    # Sized for a LaTeX \textwidth (5 in) with fonts of 9 pt, as archbench.report.plots draws.
    fig = Figure(figsize=(5.0, 3.6))
    ax = fig.add_subplot()
    if f.empty:
        return fig
    f = f.assign(
        row=[
            f"{_row_label(s, b, p)} {o.replace('_', ' ')}" + ("" if u == "blindsig" else f" ({u})")
            for u, s, b, p, o in zip(
                f["suite"], f["scheme"], f["key_bits"], f["param"], f["operation"], strict=True
            )
        ]
    )
    table = f.pivot_table(index="row", columns="target", values="instructions_per_op", sort=False)
    models = dict(zip(f["target"], f["cpu_model"], strict=True))
    width = 0.8 / max(1, len(table.columns))
    for i, target in enumerate(table.columns):
        xs = [x + i * width for x in range(len(table.index))]
        ax.bar(xs, table[target], width=width, label=f"{target} (QEMU -cpu {models[target]})")
    ax.set_yscale("log")
    ax.set_ylabel("instructions per operation (log scale)")
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(table.index))])
    ax.set_xticklabels(table.index, rotation=45, ha="right", fontsize=9)
    ax.tick_params(labelsize=9)
    ax.yaxis.label.set_fontsize(9)
    ax.legend(fontsize=9)
    ax.set_title("Instructions per operation (QEMU TCG plugin)", fontsize=10)
    fig.tight_layout()
    return fig


def add_export_column(export: pd.DataFrame, counted: Sequence[Result]) -> pd.DataFrame:
    """``export`` (the tidy time frame) with ``instructions_per_op`` (NA where not counted).

    Joined on run, target, suite, scheme, key size, param and operation (suite
    and param when ``export`` has them). Rows of :data:`NOT_COUNTED` suites
    stay empty.
    """
    keys = [
        k
        for k in ("run_id", "target", "suite", "scheme", "key_bits", "param", "operation")
        if k in export.columns or k not in ("suite", "param")
    ]
    f = frame(counted)
    if f.empty or export.empty:
        return export.assign(instructions_per_op=pd.Series(dtype="Float64", index=export.index))
    counts = f[[*keys, "instructions_per_op"]].astype({"key_bits": "Int64"})
    left = export.astype({"key_bits": "Int64"}) if "key_bits" in export else export
    merged = left.merge(counts, on=keys, how="left")
    merged.index = export.index
    return merged


FIGURE_STEM: Final = "fig-instructions"
"""The figure of :func:`plot`, as ``.png`` and ``.pdf``."""


def write_all(
    counted: Sequence[Result], times: Sequence[Result], out_dir: Path, figure: bool = True
) -> list[Path]:
    """Write instructions.md/.tex/.csv/.json and fig-instructions.png/.pdf into ``out_dir``,
    and ``instructions-functions.csv`` (:func:`functions_frame`) when rows have an
    attribution (``instructions.md`` then ends with its table). Without ``figure`` the
    caller draws :func:`plot` (``invoke report`` renders it with the other figures,
    :class:`archbench.report.plots.Drawing`).

    Returns:
        The paths written (none without counting results).

    Raises:
        ReportError: ``out_dir`` is not writable.
    """
    if not counted:
        return []
    f = frame(counted, times)
    texts = {
        # The Markdown file references the figure written beside it.
        out_dir / "instructions.md": render_instructions_markdown(counted, times)
        + "\n![Instructions per operation](fig-instructions.png)\n"
        + ("\n" + functions if (functions := render_functions_markdown(counted)) else ""),
        out_dir / "instructions.tex": render_instructions_latex(counted),
        out_dir / "instructions.csv": csv_text(f),
        out_dir / "instructions.json": f.to_json(orient="records", indent=2) + "\n",
    }
    top = functions_frame(counted)
    if not top.empty:
        texts[out_dir / "instructions-functions.csv"] = csv_text(top)
    try:
        for path, text in texts.items():
            write_atomic(path, text)
        if not figure:
            return list(texts)
        import matplotlib  # lazily, as in plot()

        fig = plot(counted)
        paths = list(texts)
        for ext in ("png", "pdf"):
            path = out_dir / f"{FIGURE_STEM}.{ext}"
            buffer = io.BytesIO()
            # TrueType (42), not Type 3, in the PDF.
            with matplotlib.rc_context({"pdf.fonttype": 42}):
                fig.savefig(buffer, format=ext, dpi=150)
            # Atomic, as every output: never through a symlink, never truncated.
            write_atomic(path, buffer.getvalue())
            paths.append(path)
    except OSError as exc:
        raise ReportError(f"{out_dir}: cannot write the instruction tables: {exc}") from exc
    return paths


COUNTS_TO_READ: Final = (
    "Under emulation a time measures QEMU on this host, not the target's CPU; the count of "
    "the target's own instructions is exact on any host, whatever its load, so it is the "
    "figure to compare {arch} by."
)
"""The one line of an emulated machine's section saying why its counts are the figure to read."""


SECMOD_SUITE: Final = "taler-helper"
"""The suite of the security module's counted rows."""
SECMOD_OPERATIONS: Final = ("secmod_signing", "secmod_key_generation")
"""The security module's counted rows, in table order."""
SECMOD_COUNTS_NOTE: Final = (
    "secmod signing is the security module's own instructions per signature (its threads "
    "other than the main one: requests, signing, replies), secmod key generation its main "
    "thread's per key generated (with start-up and shutdown), both over whole runs of "
    "Taler's test_helper_*; exact and independent of the host, where an emulated "
    "security-module time measures QEMU and the host's IPC."
)
"""What the security module's counts are, for the notes of tables that show them."""


def secmod_table(label: str, name: str, own: Sequence[Result]) -> Table | None:
    """The machine section's table of its security module's counts (taler-helper rows).

    Rows: per scheme and key size, ``secmod signing`` (instructions per signature) and
    ``secmod key generation`` (per key, main thread), with the signatures or keys per run
    the count was divided by; the rows' notes (what exactly was counted) under it. None
    when ``own`` counted no such row.
    """
    mine = frame(own)
    mine = mine[(mine["suite"] == SECMOD_SUITE) & mine["operation"].isin(SECMOD_OPERATIONS)]
    if mine.empty:
        return None
    rows: list[tuple[AppendixRow, tuple[Cell, ...]]] = []
    columns = ("operation", "scheme", "key_bits", "instructions_per_op", "ops_per_block")
    for o, sch, b, v, ops in zip(*(mine[c] for c in columns), strict=True):
        bits = 0 if pd.isna(b) else int(b)
        # The appendix's key orders scheme and size; the operation's rank is its own.
        key = AppendixRow("signing", SECMOD_OPERATIONS.index(str(o)) + 1, str(sch), bits)
        cells: tuple[Cell, ...] = (
            scheme_label(key),
            str(o).replace("_", " "),
            format_count(round(float(v))),
            format_count(int(ops)),
        )
        rows.append((key, cells))
    rows.sort(key=lambda kc: (kc[0].scheme != "CS", kc[0].key_bits, kc[0].ops))
    notes: dict[str, None] = {}
    for r in own:
        for row in r.harness.rows:
            if row.suite == SECMOD_SUITE and row.instructions and row.note:
                who = "CS" if row.scheme == "CS" else "RSA"
                notes.setdefault(f"{who} {row.operation.replace('_', ' ')}: {row.note}")
    arch = own[0].target.arch
    model = next((r.harness.counting.cpu_model for r in own if r.harness.counting), "?")
    qemu = next((r.harness.counting.qemu_version for r in own if r.harness.counting), "?")
    caption = (
        f"Security module of {name}, {arch}: instructions per signature and per generated "
        f"key (median over runs, counted with archbench's QEMU TCG plugin in process mode: "
        f"-cpu {model}, QEMU {_qemu_release(qemu)})"
    )
    if own[0].emulated:
        caption += (
            ". An emulated security-module time measures QEMU user emulation and the host's "
            "IPC; these counts are the secmod's own instructions"
        )
    return Table(
        label=label,
        caption=caption,
        header=("Signature Scheme", "Counted", "Instructions", "Operations per run"),
        align="llrr",
        groups=(tuple(cells for _, cells in rows),),
        row_notes=tuple(notes),
    )


def _qemu_release(version: str) -> str:
    """``"qemu-riscv64 version 7.2.22 (Debian 1:7.2+dfsg-7)"`` -> ``"7.2.22"``."""
    return version.split(" version ", 1)[-1].split(" (", 1)[0]


def section_table(
    label: str, name: str, own: Sequence[Result], counted: Sequence[Result]
) -> Table | None:
    """The machine section's table of its blindsig counts, beside its (emulator) times.

    ``name`` is the machine's name in the report; ``own`` are its counting results
    (same run and target); ``counted`` every counting result of the report, of which
    the first amd64 target (this run's first, else any) gives the ``× amd64`` column:
    the machine's count over amd64's for the same row. Without an amd64 count there is
    no such column. None when ``own`` counted no blindsig row. An emulated machine's
    caption says why the counts are the figure to read (:data:`COUNTS_TO_READ`).
    """
    mine = frame(own)
    mine = mine[mine["suite"] == "blindsig"]
    if mine.empty:
        return None
    target = str(mine["target"].iloc[0])
    run_ids = {r.run_id for r in own}
    everything = frame([r for r in counted if r.target.name != target])
    base_rows = everything[
        (everything["arch"] == BASELINE_ARCH) & (everything["suite"] == "blindsig")
    ]
    if not base_rows.empty:
        # Prefer amd64 counted in the same run, else the first one reported.
        same = base_rows[base_rows["run_id"].isin(run_ids)]
        base_rows = same if not same.empty else base_rows
        first = base_rows["target"].iloc[0]
        base_rows = base_rows[base_rows["target"] == first]
    baseline = {
        (str(o), str(s), 0 if pd.isna(b) else int(b)): float(v)
        for o, s, b, v in zip(
            base_rows["operation"],
            base_rows["scheme"],
            base_rows["key_bits"],
            base_rows["instructions_per_op"],
            strict=True,
        )
    }
    rows: list[tuple[AppendixRow, tuple[Cell, ...]]] = []
    columns = ("operation", "scheme", "key_bits", "instructions_per_op")
    for o, sch, b, v in zip(*(mine[c] for c in columns), strict=True):
        bits = 0 if pd.isna(b) else int(b)
        key = AppendixRow(str(o), THESIS_OPS, str(sch), bits)
        cells: tuple[Cell, ...] = (
            scheme_label(key),
            operation_label(key, True),
            format_count(round(float(v))),
        )
        if baseline:
            other = baseline.get((str(o), str(sch), bits))
            cells += (Ratio(float(v) / other, "×") if other else Ratio(None),)
        rows.append((key, cells))
    arch = own[0].target.arch
    model = next((r.harness.counting.cpu_model for r in own if r.harness.counting), "?")
    qemu = next((r.harness.counting.qemu_version for r in own if r.harness.counting), "?")
    caption = (
        f"Instructions per operation of {name}, {arch} (median over blocks, counted with "
        f"archbench's QEMU TCG plugin: -cpu {model}, QEMU {_qemu_release(qemu)})"
    )
    if own[0].emulated:
        caption += ". " + COUNTS_TO_READ.format(arch=arch)
    header: tuple[str, ...] = ("Signature Scheme", "Operation", "Instructions")
    if baseline:
        header += (f"× {BASELINE_ARCH}",)
    return Table(
        label=label,
        caption=caption,
        header=header,
        align="llr" + ("r" if baseline else ""),
        groups=grouped(rows),
    )
