"""What the LaTeX chapter needs to be pasted into a thesis: its package, labels, references.

``appendix.tex`` is meant to be ``\\input`` into someone else's document.
Its macros (``bfhBox``, ``setupBfhTabular``, the ``BFH-*`` colours, the
``archbenchNote`` annotation and the ``archbenchFit`` width guard) live in
:data:`STY_FILE`, written next to the chapter, so that::

    \\documentclass{report}
    \\usepackage{archbench-appendix}
    \\begin{document}\\input{appendix}\\end{document}

compiles in either table style. Inside the BFH thesis class the thesis's
own definitions win (the package defines only what is missing).

Labels keep the thesis's scheme (``tab:comp-sign-amd-ryzen-7``), so a
thesis's own ``\\ref`` still resolves; :func:`check_label_prefix` validates
``--label-prefix``, which is put in front of every label and reference of
the chapter for documents that already hold those labels.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from archbench.errors import ReportError, ReportUsageError
from archbench.report.templating import TEMPLATES_DIR

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
        f"--label-prefix {text!r} is not allowed: use up to 40 letters, digits and ': . _ -', "
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
