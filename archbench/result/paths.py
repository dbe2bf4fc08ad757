"""Where results live on disk: run ids, safe file names, atomic writes.

Results files are ``<root>/<run-id>/<target>.json``; run ids and target names
are checked against their grammars (:data:`RUN_ID`, :data:`FILE_NAME`) before
they become paths, and every file is written atomically (:func:`write_atomic`),
so a crash or Ctrl-C never leaves a half-written file; writers of one folder take
turns (:func:`folder_lock`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final

from archbench.errors import ArchbenchError, ResultsError
from archbench.inputs import quote

RUN_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""Run ids as directory names: :func:`new_run_id` writes ``20261129T224000Z-1a2b3c``;
``invoke import --run`` may choose others. No ``/``, never ``.`` or ``..``."""
FILE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""Target names as file names inside a run directory."""


def check_run_id(
    run_id: str, what: str = "run id", error: type[ArchbenchError] = ResultsError
) -> str:
    """``run_id`` when it is a safe directory name (:data:`RUN_ID`).

    ``error`` is the class raised: :class:`ResultsError` for a run id read from a file,
    :class:`MatrixError` (exit 2, like every refused command-line value) for a flag's.

    Raises:
        ResultsError: anything else (``../x``, ``/tmp``, empty, too long); ``error``
            when given.
    """
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise error(
            f"{what} {quote(run_id)} is not a run id; run ids are letters, digits, "
            "'.', '_' and '-', starting with a letter or digit (e.g. 20261129T224000Z-1a2b3c)"
        )
    return run_id


def inside(root: Path, path: Path, what: str) -> Path:
    """``path`` when it lies inside ``root`` once both are resolved (symlinks followed).

    Raises:
        ResultsError: ``path`` would land outside ``root``.
    """
    base = root.resolve()
    resolved = path.resolve()
    if resolved != base and base not in resolved.parents:
        raise ResultsError(f"{path}: {what} would be written outside {root}; refusing")
    return path


def new_run_id(now: _dt.datetime | None = None) -> str:
    """A sortable, unique run id: ``20261129T224000Z-1a2b3c``."""
    now = now or _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


# Read once at import, while single-threaded: os.umask can only be read by setting it.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path``: readers see the old file or the
    new, never half of one, and never anything but a new file at ``path``.

    The data goes to a fresh temporary file in ``path``'s directory, is flushed to
    disk, then renamed over ``path`` (``os.replace``): a symlink at ``path`` is
    replaced, never followed, so its target is not touched; a full disk or a
    ``kill -9`` leaves the previous file (or none) and at most a hidden
    ``.<name>.*.tmp`` beside it, never a truncated file at ``path``.

    Raises:
        OSError: the directory cannot be created or written (the temporary file
            is removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates 0600; results and reports are meant to be shared.
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            # A file name that is not UTF-8 (a lone surrogate in text) is written as
            # \udce9, never a UnicodeEncodeError that loses the whole output.
            fh.write(data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


LOCK_FILE: Final = ".archbench.lock"
"""The lock file a writer holds in the folder it writes (:func:`folder_lock`)."""


@contextlib.contextmanager
def folder_lock(
    folder: Path,
    error: type[ArchbenchError],
    what: str,
    on_wait: Callable[[str], None],
) -> Iterator[Path]:
    """Hold the lock of ``folder`` (created if missing) while the ``with`` block writes it.

    One writer at a time per folder: ``invoke report`` and ``compare`` hold their
    ``--out``, ``invoke bench`` and ``import`` their results folder. The lock is
    ``fcntl.flock`` on ``folder/.archbench.lock``, so the kernel releases it when the
    process ends, ``kill -9`` included: a lock is never left behind; the file itself is
    removed when the block ends (a ``kill -9`` leaves an empty, unlocked one). When another
    process holds it, ``on_wait`` receives one line saying so, then this waits.

    Raises:
        ArchbenchError: of class ``error`` (``what`` names the folder, e.g. ``--out``):
            ``folder`` is a file or cannot be created, or its lock file cannot be opened.
    """
    if folder.exists() and not folder.is_dir():
        raise error(f"{what} {folder}: is a file, not a directory; give a directory")
    lock = folder / LOCK_FILE
    while True:
        fd = _open_lock(folder, error, what)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                on_wait(
                    f"waiting: another archbench is writing {folder} (it holds "
                    f"{lock}); this one goes on when it is done"
                )
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        # The holder before us removed the file it locked: a lock on that file is no
        # lock; take the one now at the name (the usual flock-and-unlink protocol).
        held = os.fstat(fd)
        try:
            named = os.stat(lock, follow_symlinks=False)
        except OSError:
            named = None
        if named is not None and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)
    try:
        yield folder
    finally:
        # Removed while still held, so no lock file is left in the user's folder.
        with contextlib.suppress(OSError):
            lock.unlink()
        os.close(fd)


def _open_lock(folder: Path, error: type[ArchbenchError], what: str) -> int:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(
            folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666
        )
    except OSError as exc:
        reason = (
            "not a directory"
            if isinstance(exc, FileExistsError | NotADirectoryError)
            else (exc.strerror or str(exc))
        )
        raise error(f"{what} {folder}: cannot write there: {reason}") from exc


def write_texts(
    texts: Mapping[Path, str | bytes], error: type[ArchbenchError], what: str, fix: str = ""
) -> list[Path]:
    """Write each text (or bytes) to its path with :func:`write_atomic`, in order; returns
    the paths.

    Raises:
        ArchbenchError: of class ``error``, the first file that cannot be written,
            as ``<path>: cannot write <what>: <reason>[; <fix>]``; the files before
            it are written, those after it are not.
    """
    for path, text in texts.items():
        try:
            write_atomic(path, text)
        except OSError as exc:
            advice = f"; {fix}" if fix else ""
            raise error(f"{path}: cannot write {what}: {exc.strerror or exc}{advice}") from exc
    return list(texts)
