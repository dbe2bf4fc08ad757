"""The Markdown renderer: ``appendix.md`` (GitHub Markdown, tables by tabulate)."""

from __future__ import annotations

import re
from typing import Final

from tabulate import tabulate

from archbench.report import latex_chapter
from archbench.report.chapter import intro
from archbench.report.model import FLAG_LEGEND, FLAG_MARKS, Cell, Chapter, Ratio, Table, one_line
from archbench.report.templating import Markdown, markdown_escape, render
from archbench.report.units import Unit, format_measured, format_ratio, format_spread

TEMPLATE: Final = "appendix.md.j2"
FILE: Final = "appendix.md"


def cell_text(cell: Cell, unit: Unit) -> str:
    """One cell in Markdown: ``–`` not measured, ``invalid [n]``, a speed or a ratio."""
    if cell is None:
        return "–"
    if isinstance(cell, str):
        return markdown_escape(cell)
    if isinstance(cell, Ratio):
        if cell.value is None:
            return "invalid" if cell.invalid else "–"
        return format_ratio(cell.value, digits=cell.digits) + cell.suffix
    if cell.value is None:
        return "invalid" if cell.note is None else f"invalid [{cell.note}]"
    marks = "".join(FLAG_MARKS[f][1] for f in cell.flags)
    if cell.printed is not None:
        text = re.sub(r"\s*ms$", "", cell.printed) if cell.bare else cell.printed
        return markdown_escape(text) + marks
    text = format_measured(cell.value, unit, cell.digits, bare=cell.bare)
    if cell.spread is not None:
        text += " " + format_spread(cell.spread)
    return text + marks


def table(t: Table, unit: Unit) -> Markdown:
    """``t`` as a pipe table, then its invalid-row notes, flag legend and version notes."""
    rows = [[cell_text(c, unit) for c in row] for row in t.rows]
    text = tabulate(
        rows,
        headers=[markdown_escape(one_line(h)) for h in t.header],
        # "pipe" is GitHub's table syntax with the ---: marker that
        # right-aligns numbers; "github" omits alignment markers.
        tablefmt="pipe",
        colalign=tuple("right" if a == "r" else "left" for a in t.align),
        disable_numparse=True,
    )
    if t.notes:
        text += "\n\nInvalid rows (signatures failed to verify; no speed is reported):\n\n"
        text += "\n".join(
            f"- [{i}] {markdown_escape(note)}" for i, note in enumerate(t.notes, start=1)
        )
    if t.flags:
        text += "\n\n" + "\n".join(
            f"- {FLAG_MARKS[f][1]} {markdown_escape(FLAG_LEGEND[f])}" for f in t.flags
        )
    if t.version_notes:
        text += "\n\n" + "\n".join(f"- {markdown_escape(n)}" for n in t.version_notes)
    return Markdown(text)


def render_chapter(chapter: Chapter) -> str:
    """``appendix.md`` of ``chapter``; load failures close it as a warning.

    A published intro's ``\\ref{label}`` becomes the referenced table's
    caption ("… in table "Comparison on AMD Ryzen 7" below"); figures are
    shown with a link to their PDF.

    Raises:
        ReportError: the template is missing.
    """
    unit = chapter.unit
    captions = {s.table.label: s.table.caption for s in chapter.sections}

    def below(label: str) -> str:
        # Markdown has no \ref: name the table by its caption.
        return markdown_escape(f'"{captions.get(label, label)}" below')

    return render(
        "markdown",
        TEMPLATE,
        intro=intro(chapter),
        sections=[(s, table(s.table, unit)) for s in chapter.sections],
        section_intros=[
            Markdown(latex_chapter.with_refs(s.intro, markdown_escape, below))
            for s in chapter.sections
        ],
        figures=chapter.figures,
        parts=[(p, [(t.caption, table(t, unit)) for t in p.tables]) for p in chapter.parts],
        failures=chapter.failures,
    )
