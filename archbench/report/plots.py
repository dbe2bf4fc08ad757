"""Bar charts of the results, next to the tables: one per operation and one of CS vs RSA.

Like the charts people draw from such benchmarks (the GnuPG token-decryption
seed, ``/work/shared/seeds/gnupg-token-decrypt-bench.txt``: device on the x
axis, one bar per algorithm), each operation gets a chart with machines on
the x axis and one bar per scheme, on a log scale because RSA key generation
and CS unblinding differ by seven orders of magnitude. A second chart shows,
per machine, how much faster CS is than RSA 2048 bit for each operation
(RSA time / CS time, the thesis's discussion rows). Emulated machines are
hatched and named in the legend: QEMU timings are not hardware timings.

Figures are drawn for a LaTeX ``\\textwidth``: :data:`FIGURE_WIDTH_IN` wide
(5 in = 360 pt, the text width of an 11 pt ``report``) with every font at
:data:`MIN_FONT_PT` or more, so at ``width=\\linewidth`` in a 345 pt column
text is still ≥ 8.6 pt; PDFs embed TrueType fonts (``pdf.fonttype`` 42), not
Type 3. Log axes start a decade below the smallest bar, so the smallest
value still shows as a bar. The chapter references every figure
(:func:`listing` feeds :class:`archbench.report.ReportOptions`).

Numbers come from :func:`archbench.report.frame.tidy_frame` (so from
:func:`archbench.analysis.stats.summarize`), machine names from
:func:`archbench.report.machine_names`. Figures are built with
:class:`matplotlib.figure.Figure` on the Agg backend, never with pyplot's
global state, so they are safe to build in tests and threads.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import concurrent.futures
import io
import math
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import matplotlib

matplotlib.use("Agg")  # headless: no display is ever needed, and none may exist

from matplotlib.figure import Figure  # must follow matplotlib.use
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, StrMethodFormatter
from matplotlib.typing import RcKeyType

from archbench.errors import ReportError
from archbench.report.export import gnupg_frame
from archbench.report.frame import ReportData, build
from archbench.report.model import slug
from archbench.report.moved import Moved
from archbench.report.record import Record
from archbench.report.units import Unit, unit_label, unit_value
from archbench.result import (
    COMPARISON_ROWS,
    HELPER_OPERATIONS,
    OPERATION_ORDER,
    OPERATION_WORDING,
    SPEEDUP_RSA_BITS,
    Result,
    scheme_text,
    write_texts,
)
from archbench.suites import BLIND_SIGNATURE_SUITES

FORMATS: Final = ("png", "pdf")
FIGURE_WIDTH_IN: Final = 5.0
"""Figure width in inches: 360 pt, an 11 pt ``report``'s ``\\textwidth``."""
FIGURE_HEIGHT_IN: Final = 3.6
MIN_FONT_PT: Final = 9.0
"""Smallest font of any figure at its own size (ticks, legend, bar labels)."""
STYLE: Final[dict[RcKeyType, Any]] = {
    "font.size": MIN_FONT_PT,
    "axes.titlesize": 10.0,
    "axes.labelsize": MIN_FONT_PT,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "legend.title_fontsize": MIN_FONT_PT,
    "figure.titlesize": 10.0,
    # Embedded TrueType (42) instead of Type 3: journals and PDF/A checkers refuse Type 3.
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
}
"""matplotlib settings of every figure, applied while building and while saving."""
EMULATED_HATCH: Final = "//"
PALETTE: Final = (
    "#4c72b0",
    "#dd8452",
    "#55a868",
    "#c44e52",
    "#8172b3",
    "#937860",
    "#da8bc3",
    "#8c8c8c",
)
"""Colour per bar series, in series order (seaborn's "deep", colour-blind friendly)."""


@contextmanager
def _style() -> Iterator[None]:
    with matplotlib.rc_context(STYLE):
        yield


def log_bottom(values: Sequence[float]) -> float:
    """The power of ten a decade or more below the smallest positive value.

    ``[0.001, 5]`` -> ``0.0001``; ``[0.0035]`` -> ``0.0001`` (10^floor(log10(min/10))).

    Raises:
        ValueError: no positive value.
    """
    positive = [v for v in values if v > 0]
    if not positive:
        raise ValueError("no positive value to scale a log axis to")
    return float(10 ** math.floor(math.log10(min(positive) / 10)))


def caption(fig: Figure) -> str:
    """The figure's title, used as its caption in the chapter; empty when it has none."""
    return fig.axes[0].get_title() if fig.axes else ""


def _records(
    results: Sequence[Result] | ReportData,
) -> tuple[list[tuple[str, Result]], list[tuple[str, Record]]]:
    """(name, result) of every machine, and (machine name, record) of their appendix rows."""
    data = results if isinstance(results, ReportData) else build(results)
    names = [(m.name, m.result) for m in data.machines]
    # Per-operation charts are the appendix's; other suites have their own (GnuPG).
    records = [
        (m.name, r) for m in data.machines for r in m.records if r.suite in BLIND_SIGNATURE_SUITES
    ]
    return names, records


def _bars(
    title: str,
    ylabel: str,
    machines: Sequence[tuple[str, bool]],
    series: Sequence[str],
    values: dict[tuple[str, str], float],
    *,
    reference_line: float | None = None,
    intervals: dict[tuple[str, str], tuple[float, float]] | None = None,
) -> Figure:
    """Grouped bars: a group per machine, a bar per series that has a value.

    ``machines`` are (name, emulated); ``values`` maps (machine, series) to
    a positive number; ``intervals`` the same keys to the (low, high) bounds of
    the value's 95 % interval, drawn as error bars where known. The y axis is
    logarithmic.
    """
    with _style():
        return _draw_bars(title, ylabel, machines, series, values, reference_line, intervals or {})


def _draw_bars(
    title: str,
    ylabel: str,
    machines: Sequence[tuple[str, bool]],
    series: Sequence[str],
    values: dict[tuple[str, str], float],
    reference_line: float | None,
    intervals: dict[tuple[str, str], tuple[float, float]],
) -> Figure:
    fig = Figure(figsize=(FIGURE_WIDTH_IN, FIGURE_HEIGHT_IN), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(series))
    for s_index, name in enumerate(series):
        colour = PALETTE[s_index % len(PALETTE)]
        for m_index, (machine, emulated) in enumerate(machines):
            value = values.get((machine, name))
            if value is None:
                continue
            bounds = intervals.get((machine, name))
            ax.bar(
                m_index - 0.4 + width * (s_index + 0.5),
                value,
                width,
                color=colour,
                edgecolor="black" if emulated else colour,
                linewidth=0.6,
                hatch=EMULATED_HATCH if emulated else None,
                alpha=0.55 if emulated else 1.0,
                yerr=None if bounds is None else [[value - bounds[0]], [bounds[1] - value]],
                error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "black"},
            )
    if reference_line is not None:
        ax.axhline(reference_line, color="black", linewidth=0.8, linestyle="--")
    ax.set_yscale("log")
    lowest = [*values.values(), *([reference_line] if reference_line is not None else [])]
    # Bars grow from the axis bottom: a decade below the smallest keeps it visible.
    ax.set_ylim(bottom=log_bottom(lowest))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_xticks(range(len(machines)))
    ax.set_xticklabels(
        [f"{m} (emulated)" if e else m for m, e in machines],
        rotation=45,
        ha="right",
        rotation_mode="anchor",
    )
    ax.tick_params(labelsize=MIN_FONT_PT)
    ax.grid(axis="y", which="major", linewidth=0.4, alpha=0.6)
    handles = [Patch(color=PALETTE[i % len(PALETTE)], label=s) for i, s in enumerate(series)]
    if any(e for _, e in machines):
        handles.append(
            Patch(
                facecolor="white",
                edgecolor="black",
                hatch=EMULATED_HATCH,
                label="emulated (QEMU): not comparable",
            )
        )
    # Outside the axes, above them: tall bars of slow machines would hide behind a
    # legend inside, and one at the right would take the width the bars need.
    fig.legend(
        handles=handles, loc="outside upper center", ncols=2, fontsize=MIN_FONT_PT, frameon=False
    )
    return fig


def operation_figure(
    results: Sequence[Result] | ReportData,
    operation: str,
    unit: Unit = "ms",
    ops: int | None = None,
) -> Figure | None:
    """Bars of one operation across machines, one bar per scheme present; None if no machine has it.

    ``ops`` picks the block size of a security-module operation (100 or
    800 parallel signatures); blind-signature figures are always of 10
    operations. Values are :func:`archbench.report.unit_value` of the
    valid rows (ms or µs per 10 operations, or operations per second);
    invalid rows get no bar.

    Raises:
        ReportError: no results, or a damaged row.
    """
    names, records = _records(results)
    chosen = [
        (name, r)
        for name, r in records
        if r.operation == operation and r.valid and (ops is None or r.thesis_ops == ops)
    ]
    if not chosen:
        return None
    schemes = sorted(
        {(r.scheme != "CS", r.key_bits or 0, scheme_text(r.scheme, r.key_bits)) for _, r in chosen}
    )
    series = [label for _, _, label in schemes]
    present = {name for name, _ in chosen}
    machines = [(n, r.emulated) for n, r in names if n in present]
    values = {
        (name, scheme_text(r.scheme, r.key_bits)): unit_value(r.thesis_ms, r.ops_per_s, unit)
        for name, r in chosen
    }
    intervals = {
        (name, scheme_text(r.scheme, r.key_bits)): bounds
        for name, r in chosen
        if (bounds := interval_in_unit(r, unit)) is not None
    }
    count = chosen[0][1].thesis_ops
    words = OPERATION_WORDING.get(operation, operation)
    title = f"{count} {words}" if operation in HELPER_OPERATIONS else f"{count}x {words}"
    if unit == "ops/s":
        title, ylabel = words, "operations per second (log scale)"
    else:
        ylabel = f"median time in {unit_label(unit)} (log scale)"
    return _bars(title, ylabel, machines, series, values, intervals=intervals)


def interval_in_unit(record: Record, unit: Unit) -> tuple[float, float] | None:
    """The 95 % interval of a measured median (``per_op_ns_ci_low``/``_high``, ns per
    operation) in the unit of the record's plotted value, low before high; None when
    unknown (fewer than 6 samples, published figures).

    Times scale linearly with ns per operation; operations per second inversely, so
    the interval's high end in ns is the low end in ops/s.
    """
    low, high = record.per_op_ns_ci_low, record.per_op_ns_ci_high
    per_op = record.per_op_ns
    if low is None or high is None or per_op <= 0:
        return None
    value = unit_value(record.thesis_ms, record.ops_per_s, unit)
    if unit == "ops/s":
        return value * per_op / high, value * per_op / low
    return value * low / per_op, value * high / per_op


def cs_vs_rsa_figure(
    results: Sequence[Result] | ReportData, rsa_bits: int = SPEEDUP_RSA_BITS
) -> Figure | None:
    """Per machine, RSA ``rsa_bits`` time / CS time for each of the thesis's comparison rows.

    Above 1 (the dashed line) CS is faster. CS's "derive R0, R1 & blinding"
    is the sum of r derivation, blinding-secret derivation and blinding
    (:data:`archbench.result.COMPARISON_ROWS`). A bar is drawn only when
    every operation it needs is present and valid; None when no machine has
    CS and RSA ``rsa_bits``.

    Raises:
        ReportError: no results, or a damaged row.
    """
    names, records = _records(results)
    per_op: dict[tuple[str, str, str, int], float | None] = {}
    for name, r in records:
        if r.suite != "blindsig":
            continue
        per_op[(name, r.operation, r.scheme, r.key_bits or 0)] = r.per_op_ns if r.valid else None

    def total(machine: str, scheme: str, bits: int, operations: Sequence[str]) -> float | None:
        parts = [per_op.get((machine, op, scheme, bits)) for op in operations]
        return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)

    values: dict[tuple[str, str], float] = {}
    for name, _ in names:
        for label, cs_ops, rsa_ops in COMPARISON_ROWS:
            cs = total(name, "CS", 0, cs_ops)
            rsa = total(name, "RSA", rsa_bits, rsa_ops)
            if cs is not None and rsa is not None:
                values[(name, label)] = rsa / cs
    present = {m for m, _ in values}
    if not present:
        return None
    machines = [(n, r.emulated) for n, r in names if n in present]
    series = [label for label, _, _ in COMPARISON_ROWS]
    return _bars(
        f"Speedup of CS over {scheme_text('RSA', rsa_bits)} (RSA time / CS time)",
        "speedup (above 1: CS is faster)",
        machines,
        series,
        values,
        reference_line=1.0,
    )


def figures(results: Sequence[Result] | ReportData, unit: Unit = "ms") -> list[tuple[str, Figure]]:
    """(file stem, figure) of every chart: ``fig-<operation>`` …, then ``fig-cs-vs-rsa-2048``.

    The tidy frame is built once (:func:`archbench.report.frame.build`) for all of them.

    Raises:
        ReportError: no results, or a damaged row.
    """
    data = results if isinstance(results, ReportData) else build(results)
    _, records = _records(data)
    keys = sorted(
        {(r.operation, r.thesis_ops) for _, r in records},
        key=lambda k: (OPERATION_ORDER.index(k[0]) if k[0] in OPERATION_ORDER else 99, k[1]),
    )
    out: list[tuple[str, Figure]] = []
    for operation, ops in keys:
        fig = operation_figure(data, operation, unit, ops)
        if fig is not None:
            suffix = f"-{ops}" if operation in HELPER_OPERATIONS else ""
            out.append((f"fig-{slug(operation)}{suffix}", fig))
    fig = cs_vs_rsa_figure(data)
    if fig is not None:
        out.append((f"fig-cs-vs-rsa-{SPEEDUP_RSA_BITS}", fig))
    fig = gnupg_figure(data.results)
    if fig is not None:
        out.append(("fig-gnupg-decrypt", fig))
    return out


def gnupg_figure(results: Sequence[Result]) -> Figure | None:
    """The gnupg-token seed's bar plot: device (per machine) on x, one bar per algorithm.

    Bar height is the median decryption time in ms of one ``gpg --decrypt``
    process (from :func:`archbench.report.export.gnupg_frame`, which keeps the seed's
    seconds), labelled on each bar to three significant digits as the seed
    annotates its bars. None without GnuPG rows.
    """
    frame = gnupg_frame(results)
    if frame.empty:
        return None
    frame = frame.assign(where=frame["device"] + "\n" + frame["machine"])
    medians = frame.groupby(["where", "algorithm"], sort=False)["time"].median().unstack() * 1e3
    places = list(medians.index)
    algorithms = list(medians.columns)
    with _style():
        return _draw_gnupg(medians, places, algorithms)


def _draw_gnupg(medians: Any, places: list[Any], algorithms: list[Any]) -> Figure:
    fig = Figure(figsize=(FIGURE_WIDTH_IN, FIGURE_HEIGHT_IN))
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(algorithms))
    for i, algorithm in enumerate(algorithms):
        xs = [p + (i - (len(algorithms) - 1) / 2) * width for p in range(len(places))]
        heights = [float(v) for v in medians[algorithm]]
        bars = ax.bar(xs, heights, width, label=algorithm, color=PALETTE[i % len(PALETTE)])
        for bar, height in zip(bars, heights, strict=True):
            if height == height:  # not NaN: this machine ran the algorithm
                ax.annotate(
                    f"{height:.3g}",
                    (bar.get_x() + bar.get_width() / 2, height),
                    ha="center",
                    va="bottom",
                    fontsize=MIN_FONT_PT,
                )
    ax.set_xticks(range(len(places)), places)
    ax.set_ylabel("decryption time (ms, median)")
    ax.set_title("GnuPG decryption (time)")
    ax.set_ylim(0, float(medians.max().max()) * 1.25)  # room for the labels and legend
    ax.legend(title="algorithm", fontsize=MIN_FONT_PT, loc="upper left")
    fig.tight_layout()
    return fig


def write_plots(
    results: Sequence[Result] | ReportData, out_dir: Path, unit: Unit = "ms"
) -> list[Path]:
    """Write every chart of :func:`figures` as PNG (150 dpi) and PDF into ``out_dir``.

    Returns:
        The paths written, PNG before PDF for each chart.

    Raises:
        ReportError: no results, a damaged row, or ``out_dir`` is not writable.
    """
    return write_listed(results, out_dir, unit)[0]


def listing(charts: Sequence[tuple[str, Figure]]) -> tuple[tuple[str, str], ...]:
    """(file stem, caption) of each chart, as ``ReportOptions.figures`` takes them."""
    return tuple((stem, caption(fig)) for stem, fig in charts)


MAX_FIGURE_MACHINES: Final = 60
"""Most machines a bar chart is drawn for: beyond, no bar or label could be read, and
laying out thousands of tick labels is what made a report of 10 000 results files take
minutes. The tables hold every machine."""


def too_many_machines(data: ReportData) -> str | None:
    """Why ``data`` gets no figures (more than :data:`MAX_FIGURE_MACHINES` machines), or None."""
    count = len(data.machines)
    if count <= MAX_FIGURE_MACHINES:
        return None
    return (
        f"figures not drawn: {count} machines are more than the {MAX_FIGURE_MACHINES} a bar "
        "chart can label (every one is in the tables); select fewer with --target, --arch "
        "or --run"
    )


def write_listed(
    results: Sequence[Result] | ReportData, out_dir: Path, unit: Unit = "ms"
) -> tuple[list[Path], tuple[tuple[str, str], ...]]:
    """:func:`write_plots`, and the :func:`listing` of what it wrote (for the chapter).

    Each figure is rendered in memory, then written atomically
    (:func:`archbench.result.write_atomic`): a symlink at a figure's name is replaced,
    never followed, and a full disk or ``kill -9`` never leaves a truncated figure
    at its final name. Nothing is drawn for more than :data:`MAX_FIGURE_MACHINES`
    machines (:func:`too_many_machines`).

    Raises:
        ReportError: as :func:`write_plots`.
    """
    drawing = start_drawing(results, out_dir, unit)
    return drawing.finish(), drawing.listed


RENDER_IN_PARALLEL: Final = 4
"""Files to render before they are rendered by one process per CPU (up to
:data:`RENDER_PROCESSES`) rather than by this one: saving a figure as PNG and PDF takes
about 0.7 s of CPU each (layout, text metrics, font subsetting), 12 s for five machines'
eight charts, which dominated a report over 1,000 runs."""
RENDER_PROCESSES: Final = 4

_CHARTS: list[tuple[str, Figure]] = []
"""The charts the rendering processes render: set before they are forked, which is how
they get them (a figure is not sent to them)."""


def _render(index: int, fmt: str) -> bytes:
    """Chart ``index`` of :data:`_CHARTS` saved as ``fmt`` (in a rendering process or here)."""
    buffer = io.BytesIO()
    # PDF metadata carries a creation date by default; drop it so regenerated plots are
    # byte-identical.
    metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
    with _style():
        _CHARTS[index][1].savefig(buffer, format=fmt, dpi=150, metadata=metadata)
    return buffer.getvalue()


class Drawing:
    """The figures of a report being rendered, in other processes where there are CPUs
    for them, while the report writes its text (:func:`start_drawing`).

    ``listed``: (file stem, caption) of every chart, known at once (for the chapter);
    ``extra`` charts are rendered and written too, but not listed (the instruction
    figure, which the chapter does not reference); :meth:`finish` waits for the files and
    writes them.
    """

    def __init__(
        self,
        charts: list[tuple[str, Figure]],
        out_dir: Path,
        extra: Sequence[tuple[str, Figure]] = (),
    ) -> None:
        self.listed = listing(charts)
        self._out_dir = out_dir
        charts = [*charts, *extra]
        self._jobs = [(i, fmt) for i in range(len(charts)) for fmt in FORMATS]
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._futures: list[concurrent.futures.Future[bytes]] = []
        _CHARTS[:] = charts
        workers = min(len(os.sched_getaffinity(0)), RENDER_PROCESSES, len(self._jobs))
        if len(self._jobs) >= RENDER_IN_PARALLEL and workers > 1:
            # fork: the processes start with the charts already built, and share this
            # process's imports (matplotlib), so none is pickled or imported again.
            context = multiprocessing.get_context("fork")
            self._pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=context)
            self._futures = [self._pool.submit(_render, i, fmt) for i, fmt in self._jobs]

    def close(self) -> None:
        """Stop rendering (what is not rendered yet is not): for a report that failed
        before :meth:`finish`. Nothing is written; calling it after :meth:`finish` does
        nothing."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        _CHARTS.clear()

    def finish(self) -> list[Path]:
        """Wait for every file, write them atomically; the paths, PNG before PDF per chart.

        Raises:
            ReportError: a chart cannot be rendered, or ``out_dir`` is not writable.
        """
        try:
            if self._pool is not None:
                try:
                    files = [f.result() for f in self._futures]
                finally:
                    self._pool.shutdown()
                    self._pool = None
            else:
                files = [_render(i, fmt) for i, fmt in self._jobs]
        except (OSError, concurrent.futures.process.BrokenProcessPool) as exc:
            raise ReportError(f"{self._out_dir}: the figures could not be rendered: {exc}") from exc
        finally:
            charts = list(_CHARTS)
            _CHARTS.clear()
        rendered = {
            self._out_dir / f"{charts[i][0]}.{fmt}": data
            for (i, fmt), data in zip(self._jobs, files, strict=True)
        }
        return write_texts(rendered, ReportError, "plot", "choose a writable output directory")


def start_drawing(
    results: Sequence[Result] | ReportData | None,
    out_dir: Path,
    unit: Unit = "ms",
    extra: Sequence[tuple[str, Figure]] = (),
) -> Drawing:
    """Build every chart of :func:`figures` and start rendering them (PNG and PDF), with
    the ``extra`` charts; :meth:`Drawing.finish` writes them. No chart of ``results`` is
    drawn for more than :data:`MAX_FIGURE_MACHINES` machines, nor without results (None).

    Raises:
        ReportError: a damaged row.
    """
    if results is None:
        return Drawing([], out_dir, extra)
    data = results if isinstance(results, ReportData) else build(results)
    if too_many_machines(data) is not None:
        return Drawing([], out_dir, extra)
    return Drawing(figures(data, unit), out_dir, extra)


REST_OF_CHANGE: Final = "rest of the change"
"""The bar of a differential panel for what the listed functions do not account for."""
DIFF_UP: Final = "#c44e52"
"""Colour of a function that executes more instructions after the move (red: costlier)."""
DIFF_DOWN: Final = "#4c72b0"
"""Colour of a function that executes fewer (blue)."""
DIFF_REST: Final = "#8c8c8c"
LABEL_CHARS: Final = 52
"""Characters of a function or library name on a differential panel's axis (the table
beside the figure has the whole name)."""


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def differential_figure(moves: Sequence[Moved], title: str) -> Figure:
    """Where the instructions went: one panel per move (an architecture), a horizontal bar
    per function of its change in instructions per operation (after - before).

    Diverging bars, not stacked bars of before and after: a move is often a few per cent
    of the row, and two stacks of nearly equal height hide it, while a bar per function's
    change shows its sign and size at once. Bars grow right (red) for more instructions
    after the move and left (blue) for fewer, each labelled with its signed change; the
    last bar (grey) is the rest of the row's change, which the listed functions do not
    account for, so a panel's bars sum to the row's change. Each tick names the function
    and, below it, its library. Moves without functions (no attribution) get a panel that
    says so.

    Raises:
        ValueError: no move.
    """
    if not moves:
        raise ValueError("no move to draw")
    with _style():
        return _draw_differential(moves, title)


def _draw_differential(moves: Sequence[Moved], title: str) -> Figure:
    heights = [max(1, len(m.functions) + 1) for m in moves]
    # 0.42 in per bar (two-line tick labels at 9 pt) and 1.1 in per panel for its title.
    fig = Figure(
        figsize=(FIGURE_WIDTH_IN * 1.5, 0.6 + sum(0.42 * h + 1.1 for h in heights)),
        layout="constrained",
    )
    axes = fig.subplots(len(moves), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, move in zip(axes, moves, strict=True):
        ax.set_title(
            f"{move.arch}: {_short(move.row, 60)}\n"
            f"{_short(move.before_label, 40)} → {_short(move.after_label, 40)}\n"
            f"{move.before:,.0f} → {move.after:,.0f} per operation "
            f"({move.change:+,.0f}, {move.ratio:.4f}×)",
            loc="left",
        )
        if not move.functions:
            ax.text(0.5, 0.5, move.note or "no per-function counts", ha="center",
                    va="center", transform=ax.transAxes)  # fmt: skip
            ax.set_axis_off()
            continue
        labels = [f"{_short(f.function)}\n{_short(f.library)}" for f in move.functions]
        values = [f.change for f in move.functions]
        colours = [DIFF_UP if v > 0 else DIFF_DOWN for v in values]
        rest = move.change - sum(values)
        labels.append(REST_OF_CHANGE)
        values.append(rest)
        colours.append(DIFF_REST)
        ys = list(range(len(values)))
        ax.barh(ys, values, color=colours, height=0.7)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(ys, labels)
        ax.invert_yaxis()  # largest change on top, as the tables list them
        span = max(abs(v) for v in values) or 1.0
        # Room beyond the longest bar for its label, on the side(s) bars grow to.
        ax.set_xlim(-span * 1.6 if min(values) < 0 else -span * 0.05,
                    span * 1.6 if max(values) > 0 else span * 0.05)  # fmt: skip
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        for y, v in zip(ys, values, strict=True):
            ax.annotate(f"{v:+,.0f}", (v, y), xytext=(3 if v >= 0 else -3, 0),
                        textcoords="offset points", ha="left" if v >= 0 else "right",
                        va="center")  # fmt: skip
        ax.set_xlabel("change in instructions per operation (after − before)")
        ax.grid(axis="x", linewidth=0.4, alpha=0.6)
    fig.suptitle(title)
    return fig


def figure_png(fig: Figure, dpi: int = 110) -> bytes:
    """``fig`` as PNG bytes (the results page inlines them), with no date or software
    stamp, so a figure redrawn from the same data is byte-identical."""
    return figure_bytes(fig, "png", dpi)


def figure_bytes(fig: Figure, fmt: str, dpi: int = 150) -> bytes:
    """``fig`` as ``png`` or ``pdf`` bytes, without a creation date or software stamp
    (PDF fonts embedded as TrueType, :data:`STYLE`)."""
    buffer = io.BytesIO()
    metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
    with _style():
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()
