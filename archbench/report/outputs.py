"""What ``invoke report`` wrote into its output directory, so it removes only its own files.

The out directory may hold the user's files (a hand-made ``fig-setup.png``,
notes). ``invoke report`` lists the files it writes in ``.archbench-outputs.json``
there; on the next report, files listed in that manifest and not written
again (figures of machines no longer selected, the GnuPG CSV) are removed,
after the new outputs are written. A file archbench never listed is never
touched, and a manifest naming anything but a plain file name in that
directory is ignored entry by entry.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from archbench.errors import ReportError
from archbench.inputs import load_json, read_text
from archbench.result import write_atomic

MANIFEST_FILE: Final = ".archbench-outputs.json"
FORMAT: Final = "archbench-outputs"
_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def listed(out_dir: Path) -> set[str]:
    """File names the previous report recorded in ``out_dir`` (empty when none or unreadable).

    Entries that are not plain file names (``../x``, ``/etc/passwd``, the
    manifest itself) are dropped: they can never be removed.
    """
    path = out_dir / MANIFEST_FILE
    if not path.is_file():
        return set()
    try:
        text = read_text(path, ReportError, "the outputs manifest", 1 << 20)
        data = load_json(text, str(path), ReportError)
    except ReportError:
        return set()
    files = data.get("files") if isinstance(data, dict) and data.get("format") == FORMAT else None
    if not isinstance(files, list):
        return set()
    return {
        f for f in files if isinstance(f, str) and _PLAIN_NAME.fullmatch(f) and f != MANIFEST_FILE
    }


def replace_outputs(
    out_dir: Path, written: Sequence[Path], keep: Callable[[str], bool] | None = None
) -> list[Path]:
    """Record ``written`` as the report's outputs; remove earlier outputs not written again.

    Call it after every new output is written. Only regular files directly
    in ``out_dir`` that the previous manifest listed are removed, except
    those whose name ``keep`` accepts (``--no-plots`` keeps the earlier
    figures): they stay, and stay listed. Returns the paths removed.

    Raises:
        ReportError: the manifest cannot be written.
    """
    fresh = {p.name for p in written if p.parent.resolve() == out_dir.resolve()}
    earlier = listed(out_dir) - fresh
    kept = {n for n in earlier if keep is not None and keep(n) and (out_dir / n).is_file()}
    names = sorted(fresh | kept)
    removed: list[Path] = []
    for name in sorted(earlier - kept):
        path = out_dir / name
        if path.is_file() and not path.is_symlink():
            path.unlink()
            removed.append(path)
    try:
        write_atomic(
            out_dir / MANIFEST_FILE,
            json.dumps({"format": FORMAT, "version": 1, "files": names}, indent=2) + "\n",
        )
    except OSError as exc:
        raise ReportError(
            f"{out_dir / MANIFEST_FILE}: cannot record the report's outputs: {exc.strerror}"
        ) from exc
    return removed
