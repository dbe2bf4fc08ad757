"""What archbench prints: text from files made safe for a terminal and for its encoding.

Every line a task prints goes through :func:`show`, and every error message through
:func:`safe_text`: control characters (ESC of the CSI and OSC sequences that clear a
screen or retitle a window, C1, DEL, carriage return, bidirectional overrides) become
visible escapes (:func:`archbench.inputs.neutralise`), and text the terminal's encoding
cannot hold is written in ASCII: ``µs`` as ``us`` (``LC_ALL=C``,
``PYTHONIOENCODING=ascii``), anything else as ``?``. Printing never raises
``UnicodeEncodeError``.
"""

from __future__ import annotations

import sys
from typing import Final

from archbench.inputs import TERMINAL_CONTROL, neutralise

_ASCII_SPELLINGS: Final = {"µ": "u", "μ": "u", "×": "x", "–": "-", "—": "-", "…": "...", "≤": "<="}
"""Spellings of our own non-ASCII characters for a terminal that cannot show them."""


def safe_text(text: str, encoding: str | None = None) -> str:
    """``text`` with terminal controls escaped and, for ``encoding``, what it cannot encode
    spelled in ASCII (``µs`` -> ``us``) or as ``?``. Newlines and tabs are kept."""
    text = neutralise(text, TERMINAL_CONTROL)
    if not encoding:
        return text
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        for char, ascii_text in _ASCII_SPELLINGS.items():
            text = text.replace(char, ascii_text)
        try:
            return text.encode(encoding, errors="replace").decode(encoding)
        except LookupError:
            return text.encode("ascii", errors="replace").decode("ascii")
    return text


def show(text: str = "") -> None:
    """Print one line (or a block of lines) to stdout as :func:`safe_text` makes it."""
    out = sys.stdout
    print(safe_text(text, getattr(out, "encoding", None)), file=out)
