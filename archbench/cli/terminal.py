"""What archbench prints: text from files made safe for a terminal and for its encoding.

Every line a task prints goes through :func:`show`, and every error message through
:func:`safe_text`: control characters (ESC of the CSI and OSC sequences that clear a
screen or retitle a window, C1, DEL, carriage return, bidirectional overrides) become
visible escapes (:func:`archbench.inputs.neutralise`), and text the terminal's encoding
cannot hold is written in ASCII: ``µs`` as ``us`` (``LC_ALL=C``,
``PYTHONIOENCODING=ascii``), anything else as ``?``. Printing never raises
``UnicodeEncodeError``.

A reader that goes away (``invoke compare A B | head``) is a quiet exit, as a shell
user expects of ``SIGPIPE``: :func:`guard_stdout` drops what is printed after the pipe
closed while the command finishes its work (files written, an import stored whole),
and the task then exits with status 141 (128 + SIGPIPE) and no message.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from typing import Any, Final, TextIO

from archbench.inputs import TERMINAL_CONTROL, neutralise, redact_credentials

SIGPIPE_EXIT: Final = 141
"""The status a shell reports for a command ended by ``SIGPIPE`` (128 + 13)."""

_ASCII_SPELLINGS: Final = {"µ": "u", "μ": "u", "×": "x", "–": "-", "—": "-", "…": "...", "≤": "<="}
"""Spellings of our own non-ASCII characters for a terminal that cannot show them."""


def safe_text(text: str, encoding: str | None = None) -> str:
    """``text`` with terminal controls escaped and, for ``encoding``, what it cannot encode
    spelled in ASCII (``µs`` -> ``us``) or as ``?``. Newlines and tabs are kept. The
    credentials of a URL are never shown (:func:`archbench.inputs.redact_credentials`)."""
    text = redact_credentials(neutralise(text, TERMINAL_CONTROL))
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
    """Print one line (or a block of lines) to stdout as :func:`safe_text` makes it.

    Flushed at once: stdout into a pipe or a log (CI, ``| tee``) is block-buffered, and a
    report's lines then all came at its end, a minute of silence on a busy machine."""
    out = sys.stdout
    print(safe_text(text, getattr(out, "encoding", None)), file=out, flush=True)


class PipeGuard:
    """A stand-in for ``sys.stdout`` that stops writing once its reader is gone.

    ``closed_pipe`` turns true at the first ``BrokenPipeError`` (or ``EPIPE``); from
    then on writes and flushes do nothing and file descriptor 1 points at
    ``/dev/null``, so neither rich nor the interpreter's last flush raises again.
    Everything else is the wrapped stream's.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.closed_pipe = False

    def _closed(self) -> None:
        self.closed_pipe = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)

    def write(self, text: str) -> int:
        """Write ``text`` unless the reader is gone; returns ``len(text)`` either way."""
        if not self.closed_pipe:
            try:
                self._stream.write(text)
            except OSError as exc:
                if not isinstance(exc, BrokenPipeError) and exc.errno != errno.EPIPE:
                    raise
                self._closed()
        return len(text)

    def flush(self) -> None:
        """Flush unless the reader is gone."""
        if not self.closed_pipe:
            try:
                self._stream.flush()
            except OSError as exc:
                if not isinstance(exc, BrokenPipeError) and exc.errno != errno.EPIPE:
                    raise
                self._closed()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guard_stdout() -> Iterator[PipeGuard]:
    """``sys.stdout`` as a :class:`PipeGuard` for the block; restored afterwards."""
    original = sys.stdout
    guard = PipeGuard(original)
    sys.stdout = guard
    try:
        yield guard
    finally:
        guard.flush()
        sys.stdout = original
