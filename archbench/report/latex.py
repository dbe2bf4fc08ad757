"""The LaTeX renderer: ``appendix.tex`` and ``appendix-standalone.tex``.

``reports/templates/appendix.tex.j2`` in the thesis's macros
``bfhBox``/``setupBfhTabular`` or plain booktabs; the macros the chapter
needs outside the thesis class live in ``archbench-appendix.sty``
(:mod:`archbench.report.latex_chapter`), which the standalone wrapper loads
before it ``\\input``s the chapter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from archbench.report import latex_chapter
from archbench.report.chapter import intro
from archbench.report.model import FLAG_LEGEND, FLAG_MARKS, Cell, Chapter, Ratio, Style, Table
from archbench.report.templating import Latex, latex_escape, render
from archbench.report.units import Unit, format_measured, format_ratio, format_spread

TEMPLATE: Final = "appendix.tex.j2"
STANDALONE_TEMPLATE: Final = "appendix-standalone.tex.j2"
FILE: Final = "appendix.tex"
STANDALONE_FILE: Final = "appendix-standalone.tex"


@dataclass(frozen=True)
class LatexTable:
    """A :class:`~archbench.report.model.Table` as the template prints it."""

    label: str
    caption: Latex
    colspec: str
    header: Latex
    groups: tuple[tuple[Latex, ...], ...]
    notes: tuple[Latex, ...]
    small: bool


def _marks(flags: Sequence[str]) -> str:
    return "".join(r"\textsuperscript{" + FLAG_MARKS[f][0] + "}" for f in flags)


def cell_text(cell: Cell, unit: Unit) -> str:
    """One cell in LaTeX: ``--`` not measured, ``\\textit{invalid}``, a speed or a ratio."""
    if cell is None:
        return "--"
    if isinstance(cell, str):
        return latex_escape(cell)
    if isinstance(cell, Ratio):
        if cell.value is None:
            return r"\textit{invalid}" if cell.invalid else "--"
        text = format_ratio(cell.value, r"\,", cell.digits)
        return text + (r"\texttimes{}" if cell.suffix else "")
    if cell.value is None:
        mark = "" if cell.note is None else r"\textsuperscript{" + str(cell.note) + "}"
        return r"\textit{invalid}" + mark
    marks = _marks(cell.flags)
    if cell.printed is not None:
        if cell.bare:
            return latex_escape(re.sub(r"\s*ms$", "", cell.printed)).replace(" ", r"\,") + marks
        return latex_escape(cell.printed) + marks
    text = format_measured(cell.value, unit, cell.digits, r"\,", r"\textmu{}", bare=cell.bare)
    if cell.spread is not None:
        text += r"~" + latex_escape(format_spread(cell.spread)).replace(" ", r"\,")
    return text + marks


def table(t: Table, unit: Unit, style: Style, prefix: str = "") -> LatexTable:
    """``t`` with escaped caption, header, cells and notes (flag legend, version notes).

    ``prefix`` (a checked ``--label-prefix``) goes before the label.
    """

    def head(index: int, text: str) -> str:
        lines = [latex_escape(line) for line in text.split("\n")]
        cell = lines[0]
        if len(lines) > 1:
            # Stacked, aligned as the column: a narrow header keeps the column narrow.
            side = "r" if t.align[index : index + 1] == "r" else "l"
            cell = r"\shortstack[" + side + "]{" + r"\\".join(lines) + "}"
        if t.rotate_from is not None and index >= t.rotate_from:
            # Machine names are long; vertical headers keep a dozen columns on A4.
            cell = r"\rotatebox{90}{" + cell + "}"
        return r"\textbf{" + cell + "}" if style == "thesis" else cell

    notes = [
        r"\textsuperscript{" + str(i) + r"}\,\textit{invalid}: " + latex_escape(text)
        for i, text in enumerate(t.notes, start=1)
    ]
    notes += [
        r"\textsuperscript{" + FLAG_MARKS[f][0] + r"}\," + latex_escape(FLAG_LEGEND[f])
        for f in t.flags
    ]
    notes += [latex_escape(text) for text in t.version_notes]
    return LatexTable(
        label=prefix + t.label,
        caption=Latex(latex_escape(t.caption)),
        colspec=t.align,
        header=Latex(" & ".join(head(i, h) for i, h in enumerate(t.header))),
        groups=tuple(
            tuple(Latex(" & ".join(cell_text(c, unit) for c in row)) for row in group)
            for group in t.groups
        ),
        notes=tuple(Latex(n) for n in notes),
        small=t.small,
    )


def render_chapter(chapter: Chapter, style: Style, label_prefix: str = "") -> str:
    """``appendix.tex`` of ``chapter``; load failures become LaTeX comments at the end.

    Every label and reference gets ``label_prefix`` (``--label-prefix``).
    Published sections keep the thesis's intro (its ``\\ref`` kept) and
    Setup box as its LaTeX has them; figures get ``fig:<name>`` labels and
    are referenced from a closing section.

    Raises:
        ReportError: the template is missing, or ``label_prefix`` is not
            allowed (:func:`~archbench.report.latex_chapter.check_label_prefix`).
    """
    unit = chapter.unit
    prefix = latex_chapter.check_label_prefix(label_prefix)

    def refs(text: str) -> Latex:
        return Latex(
            latex_chapter.with_refs(text, latex_escape, lambda lb: r"\ref{" + lb + "}", prefix)
        )

    return render(
        "latex",
        TEMPLATE,
        style=style,
        prefix=prefix,
        package=latex_chapter.STY_NAME,
        figures=[
            (stem, Latex(latex_escape(caption)), f"{prefix}fig:{stem.removeprefix('fig-')}")
            for stem, caption in chapter.figures
        ],
        intro=[Latex(latex_escape(s)) for s in intro(chapter)],
        section_intros=[refs(s.intro) for s in chapter.sections],
        boxes=[
            [
                (Latex(latex_escape(k)), Latex(latex_chapter.published(v, latex_escape)))
                if s.intro  # published sections: the box as the thesis's LaTeX has it
                else (Latex(latex_escape(k)), Latex(latex_escape(v)))
                for k, v in s.setup
            ]
            for s in chapter.sections
        ],
        sections=[(s, table(s.table, unit, style, prefix)) for s in chapter.sections],
        parts=[(p, [table(t, unit, style, prefix) for t in p.tables]) for p in chapter.parts],
        failures=[Latex(latex_escape(f"{path}: {msg}")) for path, msg in chapter.failures],
    )


def render_standalone(style: Style = "thesis") -> str:
    """``appendix-standalone.tex``: compiles ``appendix.tex`` outside the thesis class.

    It defines ``bfhBox`` (tcolorbox), ``setupBfhTabular`` (xcolor's
    alternating row colours) and the ``BFH-*`` colours with plain packages:
    xcolor (``table``), tcolorbox, booktabs, graphicx, geometry. ``style`` is
    recorded in a comment only; both styles compile with the same preamble.

    Raises:
        ReportError: the template is missing.
    """
    return render(
        "latex",
        STANDALONE_TEMPLATE,
        style=style,
        chapter=FILE.removesuffix(".tex"),
        package=latex_chapter.STY_NAME,
    )
