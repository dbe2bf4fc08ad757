"""The chapter as text: LaTeX (``appendix.tex``, its package and standalone wrapper) and Markdown.

Both renderers print the same format-neutral :class:`~archbench.report.model.Chapter`
through Jinja2 templates in ``reports/templates/`` of the checkout:
``appendix.tex.j2`` in the thesis's macros ``bfhBox``/``setupBfhTabular`` or
plain booktabs, ``appendix-standalone.tex.j2``, and ``appendix.md.j2`` (GitHub
Markdown, tables by tabulate). A value a template prints is escaped for its
format unless it is already :class:`Latex` or :class:`Markdown` text, so data
can never inject markup.

``appendix.tex`` is meant to be ``\\input`` into someone else's document.
Its macros (``bfhBox``, ``setupBfhTabular``, the ``BFH-*`` colours, the
``archbenchNote`` annotation and the ``archbenchFit`` width guard) live in
:data:`STY_FILE`, written next to the chapter, so that::

    \\documentclass{report}
    \\usepackage{archbench-appendix}
    \\begin{document}\\input{appendix}\\end{document}

compiles in either table style; ``appendix-standalone.tex`` loads it before
it ``\\input``s the chapter. Inside the BFH thesis class the thesis's own
definitions win (the package defines only what is missing).

Labels keep the thesis's scheme (``tab:comp-sign-amd-ryzen-7``), so a
thesis's own ``\\ref`` still resolves; :func:`check_label_prefix` validates
``--label-prefix``, which is put in front of every label and reference of
the chapter for documents that already hold those labels.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import jinja2
import pandas as pd
from tabulate import tabulate

from archbench import REPO_ROOT
from archbench.errors import ReportError, ReportUsageError
from archbench.inputs import quote
from archbench.report.model import (
    FLAG_MARKS,
    Cell,
    Chapter,
    Ratio,
    Style,
    Table,
    one_line,
)
from archbench.report.units import Unit, format_measured, format_ratio, format_spread

LATEX_TEMPLATE: Final = "appendix.tex.j2"
STANDALONE_TEMPLATE: Final = "appendix-standalone.tex.j2"
MARKDOWN_TEMPLATE: Final = "appendix.md.j2"
LATEX_FILE: Final = "appendix.tex"
STANDALONE_FILE: Final = "appendix-standalone.tex"
MARKDOWN_FILE: Final = "appendix.md"

TEMPLATES_DIR: Final = REPO_ROOT / "reports" / "templates"
"""Where the Jinja2 templates live: ``reports/templates`` of the checkout."""

_LATEX_SPECIAL: Final = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Without T1 font encoding these print as other glyphs (< as an inverted !).
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    # pdflatex's default OT1 encoding has no such glyphs; these are the TS1 ones.
    "µ": r"\textmu{}",
    "μ": r"\textmu{}",
    "×": r"\texttimes{}",
    "±": r"\textpm{}",
    "–": "--",
    "—": "---",
    "†": r"\dag{}",
    "‡": r"\ddag{}",
    "§": r"\S{}",
    "¶": r"\P{}",
}
_LATEX_TABLE: Final = str.maketrans(_LATEX_SPECIAL)
_WHITESPACE: Final = re.compile(r"\s+")


def latex_escape(text: str) -> str:
    r"""Escape ``text`` so LaTeX prints it literally.

    Handles ``\ & % $ # _ { } ~ ^ < > |`` and the few non-ASCII signs reports
    use (µ × ± – — † ‡ § ¶); e.g. ``"#1 SMP x86_64"`` becomes ``"\#1 SMP
    x86\_64"``. Whitespace runs (newlines included) collapse to one space,
    because a blank line inside ``\section{}`` is a LaTeX error.
    """
    return _WHITESPACE.sub(" ", text).strip().translate(_LATEX_TABLE)


# Characters that start Markdown syntax anywhere in a line. Underscores only
# emphasise at word boundaries, so "x86_64" stays readable in the raw file.
_MARKDOWN_SPECIAL: Final = re.compile(
    r"[\\`*\[\]<>|~$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|&(?=#?[0-9A-Za-z]+;)"
)


def markdown_escape(text: str) -> str:
    r"""Escape ``text`` so GitHub Markdown prints it literally.

    Backslash-escapes ``\ ` * [ ] < > | ~ $``, underscores at word boundaries
    and ``&`` that would start an HTML entity; whitespace runs collapse to one
    space so a value never ends a heading or a table row early.
    """
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), _WHITESPACE.sub(" ", text).strip())


class Latex(str):
    """Text that is already LaTeX; the LaTeX environment prints it unchanged."""


class Markdown(str):
    """Text that is already Markdown; the Markdown environment prints it unchanged."""


def latex_filter(value: object) -> Latex:
    """``value`` as LaTeX: escaped, unless it already is :class:`Latex`."""
    return value if isinstance(value, Latex) else Latex(latex_escape(str(value)))


def markdown_filter(value: object) -> Markdown:
    """``value`` as Markdown: escaped, unless it already is :class:`Markdown`."""
    return value if isinstance(value, Markdown) else Markdown(markdown_escape(str(value)))


@functools.cache
def _environment(kind: str) -> jinja2.Environment:
    common: dict[str, Any] = {
        "loader": jinja2.FileSystemLoader(TEMPLATES_DIR),
        "autoescape": False,
        "undefined": jinja2.StrictUndefined,
        "trim_blocks": True,
        "lstrip_blocks": True,
        "keep_trailing_newline": True,
    }
    if kind == "latex":
        # Jinja's default {{ }} and {% %} clash with LaTeX braces and comments.
        # HTML autoescaping would mangle LaTeX; finalize escapes for LaTeX instead.
        env = jinja2.Environment(  # noqa: S701
            block_start_string=r"\BLOCK{",
            block_end_string="}",
            variable_start_string=r"\VAR{",
            variable_end_string="}",
            comment_start_string="((#",
            comment_end_string="#))",
            # A value that skipped |latex is still escaped: data can never
            # inject LaTeX, and escaped text is not escaped twice.
            finalize=latex_filter,
            **common,
        )
        env.filters["latex"] = latex_filter
    else:
        # HTML autoescaping would print &amp; in Markdown; finalize escapes for it.
        env = jinja2.Environment(finalize=markdown_filter, **common)  # noqa: S701
        env.filters["md"] = markdown_filter
    return env


def render_template(kind: str, template: str, **context: Any) -> str:
    """Render ``template`` (``"latex"`` or ``"markdown"`` environment) with ``context``.

    Raises:
        ReportError: the template is missing (an incomplete checkout).
    """
    try:
        return _environment(kind).get_template(template).render(**context)
    except jinja2.TemplateNotFound as exc:
        raise ReportError(
            f"report template {exc.name!r} not found in {TEMPLATES_DIR}; "
            "run archbench from a complete checkout (reports/templates/)"
        ) from exc


STY_FILE: Final = "archbench-appendix.sty"
"""The chapter's package, written next to ``appendix.tex`` (copied from ``reports/templates``)."""
STY_NAME: Final = STY_FILE.removesuffix(".sty")
"""What ``\\usepackage{…}`` names."""

LABEL_PREFIX_GRAMMAR: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9:._-]{0,39}")
"""``--label-prefix``: letters, digits and ``: . _ -`` (at most 40), starting alphanumeric;
nothing that LaTeX's ``\\label`` or a ``\\ref`` would read specially."""

_REF: Final = re.compile(r"\\ref\{([A-Za-z0-9:._-]+)\}")
"""A ``\\ref`` kept in published intro text; anything else there is escaped."""


def check_label_prefix(text: str) -> str:
    """``text`` if it is a valid ``--label-prefix`` (``""`` = none), else a clear error.

    Raises:
        ReportUsageError (exit 2): ``text`` is not empty and does not match
            :data:`LABEL_PREFIX_GRAMMAR`; the message says what is allowed.
    """
    if text == "" or LABEL_PREFIX_GRAMMAR.fullmatch(text):
        return text
    raise ReportUsageError(
        f"--label-prefix {quote(text)} is not allowed: use up to 40 letters, digits and ': . _ -', "
        "starting with a letter or digit (e.g. 'ab:' gives 'ab:tab:comp-sign-amd-ryzen-7')"
    )


def sty_text() -> str:
    """The text of :data:`STY_FILE`.

    Raises:
        ReportError: the package is missing from ``reports/templates`` (an
            incomplete checkout).
    """
    path = TEMPLATES_DIR / STY_FILE
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReportError(
            f"{path}: cannot read the chapter's LaTeX package ({exc.strerror or exc}); "
            "run archbench from a complete checkout (reports/templates/)"
        ) from exc


def published(text: str, escape: Callable[[str], str]) -> str:
    """``text`` escaped by ``escape``; a ``~`` stays LaTeX's tie, as the published source has it.

    The thesis's Setup boxes print Debian versions as ``#23~20.04.1-Ubuntu``
    in LaTeX, which its PDF shows with a (non-breaking) space; carried over
    verbatim, the pasted chapter prints the same. A tie cannot inject markup.
    """
    return escape(text).replace(r"\textasciitilde{}", "~")


def with_refs(
    text: str, escape: Callable[[str], str], ref: Callable[[str], str], prefix: str = ""
) -> str:
    """``text`` escaped by ``escape``, except each ``\\ref{label}``: ``ref(prefix + label)``.

    Published intros say "… can be found in table \\ref{tab:comp-sign-full}";
    the reference must survive while every other character is escaped, so
    data can never inject markup. Labels must match ``[A-Za-z0-9:._-]+``;
    any other ``\\ref`` is escaped as text. ``escape`` may strip; a space
    around a reference in ``text`` is kept.
    """
    out: list[str] = []
    last = 0
    for match in _REF.finditer(text):
        out.append(_escaped(text[last : match.start()], escape))
        out.append(ref(prefix + match.group(1)))
        last = match.end()
    out.append(_escaped(text[last:], escape))
    return "".join(out).strip()


def _escaped(part: str, escape: Callable[[str], str]) -> str:
    if not part.strip():
        return " " if part else ""
    lead = " " if part[0].isspace() else ""
    trail = " " if part[-1].isspace() else ""
    return lead + escape(part) + trail


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


def _latex_marks(flags: Sequence[str]) -> str:
    return "".join(r"\textsuperscript{" + FLAG_MARKS[f][0] + "}" for f in flags)


def latex_cell(cell: Cell, unit: Unit) -> str:
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
    marks = _latex_marks(cell.flags)
    if cell.printed is not None:
        if cell.bare:
            return latex_escape(re.sub(r"\s*ms$", "", cell.printed)).replace(" ", r"\,") + marks
        return latex_escape(cell.printed) + marks
    text = format_measured(cell.value, unit, cell.digits, r"\,", r"\textmu{}", bare=cell.bare)
    if cell.spread is not None:
        text += r"~" + latex_escape(format_spread(cell.spread)).replace(" ", r"\,")
    return text + marks


def latex_table(t: Table, unit: Unit, style: Style, prefix: str = "") -> LatexTable:
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
        r"\textsuperscript{" + FLAG_MARKS[f][0] + r"}\," + latex_escape(t.legend(f))
        for f in t.flags
    ]
    notes += [latex_escape(text) for text in t.version_notes]
    notes += [latex_escape(t.spread_note)] if t.spread_note else []
    notes += [r"\textit{Note}: " + latex_escape(text) for text in t.row_notes]
    return LatexTable(
        label=prefix + t.label,
        caption=Latex(latex_escape(t.caption)),
        colspec=t.align,
        header=Latex(" & ".join(head(i, h) for i, h in enumerate(t.header))),
        groups=tuple(
            tuple(Latex(" & ".join(latex_cell(c, unit) for c in row)) for row in group)
            for group in t.groups
        ),
        notes=tuple(Latex(n) for n in notes),
        small=t.small,
    )


def render_latex_chapter(chapter: Chapter, style: Style, label_prefix: str = "") -> str:
    """``appendix.tex`` of ``chapter``; load failures become LaTeX comments at the end.

    Every label and reference gets ``label_prefix`` (``--label-prefix``).
    Published sections keep the thesis's intro (its ``\\ref`` kept) and
    Setup box as its LaTeX has them; figures get ``fig:<name>`` labels and
    are referenced from a closing section.

    Raises:
        ReportError: the template is missing, or ``label_prefix`` is not
            allowed (:func:`check_label_prefix`).
    """
    unit = chapter.unit
    prefix = check_label_prefix(label_prefix)

    def refs(text: str) -> Latex:
        return Latex(with_refs(text, latex_escape, lambda lb: r"\ref{" + lb + "}", prefix))

    return render_template(
        "latex",
        LATEX_TEMPLATE,
        style=style,
        prefix=prefix,
        package=STY_NAME,
        figures=[
            (stem, Latex(latex_escape(caption)), f"{prefix}fig:{stem.removeprefix('fig-')}")
            for stem, caption in chapter.figures
        ],
        intro=[Latex(latex_escape(s)) for s in chapter.opening],
        section_intros=[refs(s.intro) for s in chapter.sections],
        boxes=[
            [
                (Latex(latex_escape(k)), Latex(published(v, latex_escape)))
                if s.intro  # published sections: the box as the thesis's LaTeX has it
                else (Latex(latex_escape(k)), Latex(latex_escape(v)))
                for k, v in s.setup
            ]
            for s in chapter.sections
        ],
        sections=[
            (
                s,
                latex_table(s.table, unit, style, prefix),
                [latex_table(x, unit, style, prefix) for x in s.extra_tables],
            )
            for s in chapter.sections
        ],
        parts=[(p, [latex_table(t, unit, style, prefix) for t in p.tables]) for p in chapter.parts],
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
    return render_template(
        "latex",
        STANDALONE_TEMPLATE,
        style=style,
        chapter=LATEX_FILE.removesuffix(".tex"),
        package=STY_NAME,
    )


def markdown_cell(cell: Cell, unit: Unit) -> str:
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


def markdown_table(t: Table, unit: Unit) -> Markdown:
    """``t`` as a pipe table, then its invalid-row notes, flag legend and version notes."""
    rows = [[markdown_cell(c, unit) for c in row] for row in t.rows]
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
            f"- {FLAG_MARKS[f][1]} {markdown_escape(t.legend(f))}" for f in t.flags
        )
    if t.version_notes:
        text += "\n\n" + "\n".join(f"- {markdown_escape(n)}" for n in t.version_notes)
    if t.spread_note:
        text += "\n\n- " + markdown_escape(t.spread_note)
    if t.row_notes:
        text += "\n\nNotes on rows:\n\n"
        text += "\n".join(f"- {markdown_escape(n)}" for n in t.row_notes)
    return Markdown(text)


def render_markdown_chapter(chapter: Chapter) -> str:
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

    return render_template(
        "markdown",
        MARKDOWN_TEMPLATE,
        intro=list(chapter.opening),
        sections=[
            (
                s,
                markdown_table(s.table, unit),
                [(x.caption, markdown_table(x, unit)) for x in s.extra_tables],
            )
            for s in chapter.sections
        ],
        section_intros=[
            Markdown(with_refs(s.intro, markdown_escape, below)) for s in chapter.sections
        ],
        figures=chapter.figures,
        parts=[
            (p, [(t.caption, markdown_table(t, unit)) for t in p.tables]) for p in chapter.parts
        ],
        failures=chapter.failures,
    )


FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula (OWASP's CSV injection list)."""


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text (header, ``\\n`` line ends), with text cells protected.

    A text cell starting with one of :data:`FORMULA_START` gets a leading ``'``
    (``=HYPERLINK(…)`` becomes ``'=HYPERLINK(…)``), so a spreadsheet shows it as text
    instead of evaluating it; numbers, and text starting otherwise, are as they are.
    Every CSV a report or ``invoke compare`` writes goes through here.
    """
    protected = frame.copy()
    for column in protected.columns:
        values = protected[column]
        if values.dtype == object or str(values.dtype) == "str":
            # Each distinct text once: a column of 300,000 cells holds a few thousand.
            quoted = {
                v: "'" + v
                for v in values.unique()
                if isinstance(v, str) and v.startswith(FORMULA_START)
            }
            if quoted:
                protected[column] = values.replace(quoted)
    return protected.to_csv(index=False, lineterminator="\n")
