"""Escaping for LaTeX and Markdown, and the Jinja2 environments the renderers share.

Templates live in ``reports/templates/`` of the checkout. A value printed by
a template is escaped for its format unless it is already :class:`Latex` or
:class:`Markdown` text, so data can never inject markup.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

import jinja2

from archbench import REPO_ROOT
from archbench.errors import ReportError

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


def render(kind: str, template: str, **context: Any) -> str:
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
