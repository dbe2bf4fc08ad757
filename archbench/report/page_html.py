"""The results page as HTML: the second of the page's two steps (:mod:`archbench.report.page`).

:func:`render_page` turns an assembled :class:`~archbench.report.page.Page` into one HTML
document with Jinja2 (autoescape on: machine names, CPU models and labels come from
results files, which are untrusted) and plotly, which is imported only here (it is slow to
import), and draws the differential figures of the steps and moves (matplotlib, inlined as
PNG). :func:`write_page` writes it atomically.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import jinja2
from markupsafe import Markup

from archbench.errors import ReportError
from archbench.report.formats import TEMPLATES_DIR
from archbench.report.moved import Differential
from archbench.report.page import PAGE_FILE, PAGE_TEMPLATE, Figure, OverTime, Page
from archbench.result import write_texts


def _plotly_text(text: str) -> str:
    """``text`` for plotly, which reads a few HTML tags in labels: escaped, so it shows
    as written; ``<br>`` (our own line breaks) kept."""
    return "<br>".join(html.escape(part, quote=False) for part in text.split("<br>"))


PLOT_HEIGHT: Final = 320
"""Height of a figure's plot area in px (the browser test asks for at least 300)."""
LEGEND_PER_ROW: Final = 3
"""Legend entries per row below a figure, at the page's 1200 px (targets' names are long)."""


def _figure_html(figure: Figure) -> str:
    """The figure as plotly's ``to_html`` writes one (a sized ``div`` and the script that
    draws it with ``Plotly.newPlot``), built as plain data: plotly's Python objects
    validated and deep-copied the whole template for every figure, 0.25 s each, which
    was most of a page of 1,000 runs' 5.5 minutes. The layout's template is the page's
    one copy of plotly's ``plotly_white`` (:func:`_template_js`)."""
    data = []
    for trace in figure.traces:
        common: dict[str, Any] = {
            "customdata": [p.anchor for p in trace.points],
            "hovertemplate": "%{text}<extra></extra>",
            "name": _plotly_text(trace.name),
            "text": [_plotly_text(p.hover) for p in trace.points],
            "x": [_plotly_text(p.x) for p in trace.points],
            "y": [p.y for p in trace.points],
        }
        if figure.kind == "bar":
            data.append({**common, "textposition": "none", "type": "bar"})
        else:
            data.append({**common, "mode": "lines+markers", "type": "scatter"})
    # The legend goes below the plot, wrapping, with room for every entry: a legend
    # beside a plot shows only what fits its height. The height grows with the legend
    # and the longest tick label, so the plot area itself keeps PLOT_HEIGHT px.
    legend_rows = math.ceil(len(figure.traces) / LEGEND_PER_ROW)
    tick_px = 7 * max((len(x) for x in figure.x), default=0)
    bottom = 76 + min(tick_px, 160) + 22 * legend_rows
    yaxis: dict[str, Any] = {"type": "log", "title": {"text": figure.y_title}, "automargin": True}
    values = [p.y for t in figure.traces for p in t.points]
    if figure.kind == "bar" and values:
        # Bars on a log axis have no base: plotly's own range can start above the
        # smallest bar, which then shows as a sliver that reads as "smallest by far".
        # The range (in decades) reaches a third of a decade below the smallest value.
        low, high = math.log10(min(values)), math.log10(max(values))
        yaxis["range"] = [low - 0.35, high + 0.15]
    marks = _mark_layout(figure)
    height = 60 + PLOT_HEIGHT + bottom
    layout: dict[str, Any] = {
        "annotations": [note for _, note in marks if note is not None],
        "barmode": "group",
        "height": height,
        "legend": {
            "orientation": "h",
            "yanchor": "top",
            "y": -min(tick_px, 160) / PLOT_HEIGHT - 0.12,
            "x": 0,
            "title": {"text": "click to hide or show:", "side": "top"},
            # A fixed share of the width per entry: plotly wraps such a legend into rows.
            "entrywidth": 0.95 / LEGEND_PER_ROW,
            "entrywidthmode": "fraction",
        },
        "margin": {"l": 80, "r": 20, "t": 60, "b": bottom},
        "shapes": [shape for shape, _ in marks],
        "showlegend": True,  # with one target too: the legend names what the bars are
        "title": {"text": _plotly_text(figure.title)},
        "xaxis": {
            "type": "category",
            "categoryorder": "array",
            "categoryarray": [_plotly_text(x) for x in figure.x],
            "automargin": True,
        },
        "yaxis": yaxis,
    }
    div_id = figure.anchor + "-plot"
    config = {"displaylogo": False, "responsive": True}
    # Everything between <script> and </script> is JSON with "<" escaped, or our own text.
    return (
        f'<div style="height:{height}px; width:100%;">'
        f'<div id="{div_id}" class="plotly-graph-div" style="height:100%; width:100%;"></div>'
        '<script type="text/javascript">'
        f'if (document.getElementById("{div_id}")) {{ Plotly.newPlot("{div_id}", '
        f"{_script_json(data)}, Object.assign({{template: window.archbenchTemplate}}, "
        f"{_script_json(layout)}), {_script_json(config)}); }}"
        "</script></div>"
    )


def _template_js() -> str:
    """plotly's ``plotly_white`` template as the script that names it
    ``window.archbenchTemplate`` for every figure of the page (once, not per figure)."""
    import plotly.io as pio  # slow to import: only when a page is drawn

    template = pio.templates["plotly_white"].to_plotly_json()
    return f"window.archbenchTemplate = {_script_json(template)};"


MARK_STYLE: Final = {"step": ("#c01c28", "solid"), "change": ("#e66100", "dash")}
"""Colour and dash of a step's line and a change point's line on a history figure."""


MARKS_STACKED: Final = 8
"""Annotations stacked at one place on a history figure (18 px each, in a 320 px plot
area); beyond, one says how many more the list below the figure holds."""


def _mark_layout(figure: Figure) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Per mark, a plotly shape (a vertical line halfway between its two versions, over
    the whole plot height) and its annotation (the text, at the top of the plot area,
    stacked where several marks share a place; None beyond :data:`MARKS_STACKED`)."""
    where = {x: i for i, x in enumerate(figure.x)}
    out: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    stacked: dict[float, int] = {}
    for mark in figure.marks:
        # A category axis places category i at i: halfway is between the two versions.
        at = (where[mark.before] + where[mark.after]) / 2
        colour, dash = MARK_STYLE[mark.kind]
        level = stacked.get(at, 0)
        stacked[at] = level + 1
        shape = {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": at,
            "x1": at,
            "y0": 0,
            "y1": 1,
            "line": {"color": colour, "dash": dash, "width": 2},
        }
        text = mark.text
        if level >= MARKS_STACKED:
            out.append((shape, None))
            continue
        if level == MARKS_STACKED - 1:
            more = sum((where[m.before] + where[m.after]) / 2 == at for m in figure.marks) - level
            if more > 1:
                text = f"{more} more: listed below the figure"
        note = {
            "x": at,
            "xref": "x",
            "y": 1,
            "yref": "paper",
            "yanchor": "top",
            "xanchor": "left",
            "yshift": -4 - 18 * level,
            "showarrow": False,
            "text": _plotly_text(text),
            "font": {"color": colour, "size": 12},
            "bgcolor": "rgba(255,255,255,0.85)",
        }
        out.append((shape, note))
    return out


MAX_EAGER_FIGURES: Final = 40
"""Figures drawn when the page opens; a page with more draws each as it comes near the
screen (a page of 1,000 runs had not been drawn after 180 s)."""
CUT_AT: Final = 120
"""Characters of a string from results shown on the page; the whole value on hover."""


def cut(text: object, limit: int = CUT_AT) -> Markup:
    """``text`` as escaped HTML, cut to ``limit`` characters with an ellipsis and the
    whole value in the ``title`` (shown on hover); short text as it is."""
    value = str(text)
    if len(value) <= limit:
        return Markup.escape(value)
    return Markup('<span class="cut" title="{}">{}…</span>').format(value, value[:limit])


def relative_href(path: str) -> str:
    """A relative path as a URL for ``href``: each segment percent-encoded, and starting
    with ``./`` or ``../``, so that no first segment (``javascript:x``) reads as a scheme.
    """
    url = urllib.parse.quote(path, safe="/")
    return url if url.startswith(("./", "../")) else "./" + url


def _deferred(html: str) -> str:
    """Plotly's figure HTML with its drawing script kept as text, run by the page's
    observer when the figure comes near the screen."""
    return re.sub(
        r'<script(?: type="text/javascript")?>',
        '<script type="application/x-archbench-deferred">',
        html,
    )


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs  # slow to import: only when a page is drawn

    # Inside <script>, only "</script" could end the element early; plotly.js has none,
    # but the check is cheap and the failure would be silent.
    js = str(get_plotlyjs())
    if "</script" in js.lower():
        raise ReportError("plotly.js contains '</script'; it cannot be inlined as it is")
    return js


def render_page(page: Page) -> str:
    """The page as one HTML document (UTF-8 text; about 4.7 MB with plotly.js inlined).

    Every string of ``page`` is escaped (Jinja2 autoescape; plotly's JSON escapes
    ``<``, ``>`` and ``/``, and labels given to plotly are HTML-escaped once more, so
    plotly shows them as written; the data of the figures over time is JSON with ``<``
    escaped, and the page's script gives its strings to the DOM as text and to plotly
    escaped). plotly.js is inlined once, and only when the page has a figure. A page over
    time (:attr:`Page.over_time`) reads each run's detail from the files
    :func:`detail_files` makes, beside it.

    Raises:
        ReportError: the template is missing.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Every output ends with a newline: a truncated file is then told from a whole one.
        keep_trailing_newline=True,
    )
    env.filters["cut"] = cut
    env.filters["href"] = relative_href
    try:
        template = env.get_template(PAGE_TEMPLATE)
    except jinja2.TemplateNotFound as exc:
        raise ReportError(
            f"page template {exc.name!r} not found in {TEMPLATES_DIR}; reinstall archbench"
        ) from exc
    # The two pieces of markup: plotly's own output, whose JSON escapes < > / (and our
    # labels are escaped before they reach it), and plotly.js, checked for </script.
    deferred = len(page.figures) > MAX_EAGER_FIGURES
    figures = {
        f.anchor: Markup(_deferred(_figure_html(f)) if deferred else _figure_html(f))  # noqa: S704
        for f in page.figures
    }
    over_time = page.over_time
    drawn = figures or (over_time is not None and over_time.figures)
    plotly_js = Markup(_plotly_js() + "\n" + _template_js()) if drawn else None  # noqa: S704
    images = _differential_images(page.differentials)
    return template.render(
        page=page,
        figures=figures,
        images=images,
        plotly_js=plotly_js,
        deferred=deferred,
        # JSON with every "<" escaped: nothing in it can end the <script> that holds it.
        over_time_data=Markup(_script_json(_over_time_data(over_time)))  # noqa: S704
        if over_time is not None
        else None,
        details_prefix=DETAILS_PREFIX,
        details_chunk=DETAILS_CHUNK,
    )


DETAILS_PREFIX: Final = "results-runs-"
"""Beside the page, ``results-runs-<k>.js``: the detail of runs ``k * DETAILS_CHUNK`` on."""
DETAILS_CHUNK: Final = 200
"""Runs per detail file: a click loads one file of about 0.6 MB (10,000 runs: 50 files),
not 10,000 files nor one of 30 MB."""


def _script_json(value: object) -> str:
    """``value`` as JSON that a ``<script>`` element can hold: ``<`` written ``\\u003c``,
    so no ``</script>`` or ``<!--`` in a string (from a results file) ends or changes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _short(value: float | None) -> float | None:
    """A value of a figure over time to 6 significant digits (a count's 0.1 % step shows,
    and the page's data stays small); None as it is."""
    return None if value is None else float(f"{value:.6g}")


def _over_time_data(over_time: OverTime) -> dict[str, object]:
    """What the page's script draws the figures over time from (compact: indices into
    ``runs``, values to 6 digits); a point's runs are ``a``..``b`` when it groups runs."""
    figures = []
    for f in over_time.figures:
        lines = []
        for machine, points in f.lines:
            line: dict[str, object] = {
                "m": machine,
                "at": [p.at for p in points],
                "y": [_short(p.value) for p in points],
                "lo": [_short(p.low) for p in points],
                "hi": [_short(p.high) for p in points],
            }
            if any(p.first != p.last for p in points):
                line["a"] = [p.first for p in points]
                line["b"] = [p.last for p in points]
            lines.append(line)
        figures.append(
            {"id": f.anchor, "title": f.title, "y": f.y_title, "metric": f.metric, "lines": lines}
        )
    return {
        "machines": list(over_time.machines),
        "labels": list(over_time.labels),
        "runs": [[r[0], r[1], r[2], r[3][:12], r[4]] for r in over_time.runs],
        "sections": over_time.sections,
        "figures": figures,
    }


def detail_files(page: Page) -> dict[str, str]:
    """File name -> text of the files of runs' details beside the page: each calls
    ``archbenchRuns(k, runs)`` with :data:`DETAILS_CHUNK` runs' details (JSON, ``<``
    escaped), so a page opened from disk loads one with a ``<script>`` element when a run
    is clicked (a ``fetch`` of a ``file:`` URL is refused by browsers). Empty without
    :attr:`Page.over_time`."""
    over_time = page.over_time
    if over_time is None:
        return {}
    out = {}
    details = over_time.details
    for k in range(0, len(details), DETAILS_CHUNK):
        chunk = [
            [
                d.run_id,
                d.target,
                [
                    # Tuples are JSON arrays as they are: no copy of 300,000 rows.
                    (
                        f.metric,
                        f.column,
                        relative_href(f.href) if f.href else None,
                        f.rows,
                        f.environment,
                    )
                    for f in d.files
                ],
            ]
            for d in details[k : k + DETAILS_CHUNK]
        ]
        number = k // DETAILS_CHUNK
        out[f"{DETAILS_PREFIX}{number}.js"] = f"archbenchRuns({number},{_script_json(chunk)});\n"
    return out


def _differential_images(drawn: Sequence[Differential]) -> dict[str, str]:
    """Differential key -> its figure as a ``data:`` URL of a PNG (base64: no markup).

    matplotlib, not plotly: the same figure a report folder or a thesis takes
    (:func:`archbench.report.plots.differential_figure`)."""
    if not drawn:
        return {}
    from archbench.report import plots  # matplotlib is slow to import: only when drawn

    return {
        d.key: "data:image/png;base64,"
        + base64.b64encode(plots.figure_png(plots.differential_figure(d.moves, d.title))).decode()
        for d in drawn
    }


def write_page(page: Page, out_dir: Path) -> list[Path]:
    """Render ``page`` and write it to ``out_dir/results.html`` atomically, with the files
    of its runs' details beside it (:func:`detail_files`).

    Returns:
        ``[out_dir / PAGE_FILE]``, then the detail files.

    Raises:
        ReportError: the template is missing, or a file cannot be written.
    """
    text = render_page(page)
    texts = {out_dir / name: body for name, body in detail_files(page).items()}
    # The details first: a page never points at detail files that are not there yet.
    written = write_texts(texts, ReportError, "the runs' details", "choose a writable --out")
    page_path = write_texts(
        {out_dir / PAGE_FILE: text}, ReportError, "the results page", "choose a writable --out"
    )
    return page_path + written
