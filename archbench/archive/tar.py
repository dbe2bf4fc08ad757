"""Pack and unpack archives as one uncompressed tar, trusting nothing in a tar read back.

:func:`write_tar` packs an archive directory (``invoke archive --tar``);
:func:`extract_tar` unpacks one for ``invoke bench --from-archive X.tar``
after checking every member's name against the archive path grammar
(:func:`archbench.archive.format.check_relpath`) and refusing links and special
files. The unpacked directory is then verified like any other archive.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from archbench.archive.format import MANIFEST_FILE, check_relpath, list_files
from archbench.errors import ArchiveError

_CHUNK = 1024 * 1024


def write_tar(root: Path, out: Path) -> None:
    """Pack the archive directory ``root`` into the uncompressed tar ``out``.

    ``manifest.json`` comes first, then the other files in sorted order, all
    below one top directory named like ``out`` without ``.tar``. Owners are
    dropped (uid/gid 0, no names) and modes normalised (0644/0755).

    Raises:
        ArchiveError: ``out`` exists already.
        OSError: a file cannot be read or ``out`` written.
    """
    if out.exists():
        raise ArchiveError(f"{out} exists already; choose another --out or move it away")
    top = out.name.removesuffix(".tar")
    check_relpath(top, "tar name")
    tmp = out.with_name(f".{out.name}.partial")
    names = [MANIFEST_FILE, *(e.path for e in list_files(root))]
    try:
        with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
            for name in _with_dirs(names):
                src = root / name
                info = tar.gettarinfo(str(src), arcname=f"{top}/{name}")
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mode = 0o755 if src.is_dir() else 0o644
                if src.is_dir():
                    tar.addfile(info)
                else:
                    with src.open("rb") as fh:
                        tar.addfile(info, fh)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _with_dirs(names: Iterable[str]) -> list[str]:
    """``names`` with each parent directory inserted before its first file."""
    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        parts = name.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in seen:
                seen.add(d)
                out.append(d)
        out.append(name)
    return out


def extract_tar(tar_path: Path, dest_parent: Path) -> Path:
    """Unpack an archive tar written by :func:`write_tar` below ``dest_parent``; return its root.

    Trusts nothing in the tar: every member must be a regular file or a
    directory below one top directory, with a name passing
    :func:`check_relpath`; links, devices and anything else are refused
    before a byte is written. An existing directory of the same name (the
    same tar unpacked before) is returned as it is, never overwritten: the
    caller verifies it against its manifest.

    Raises:
        ArchiveError: not a tar, or a member breaks the rules above.
    """
    try:
        tar = tarfile.open(tar_path, "r:")  # noqa: SIM115  # closed by the with below
    except (tarfile.TarError, OSError) as exc:
        raise ArchiveError(f"{tar_path}: not an uncompressed tar archive: {exc}") from exc
    with tar:
        members = tar.getmembers()
        if not members:
            raise ArchiveError(f"{tar_path}: empty tar")
        top = members[0].name.split("/")[0]
        check_relpath(top, f"{tar_path}: top directory")
        for m in members:
            rel = check_relpath(m.name, f"{tar_path}: member")
            if rel.parts[0] != top:
                raise ArchiveError(
                    f"{tar_path}: member {m.name!r} is outside the top directory {top!r}"
                )
            if not (m.isfile() or m.isdir()):
                raise ArchiveError(
                    f"{tar_path}: member {m.name!r} is a link or special file; refused"
                )
        dest = dest_parent / top
        if dest.exists():
            # Unpacked before: verify() checks it against its manifest.
            return dest
        dest_parent.mkdir(parents=True, exist_ok=True)
        # Unpacked beside its place and renamed when whole: an interrupted
        # unpack never looks like an archive.
        tmp = Path(tempfile.mkdtemp(prefix=f".{top}.partial-", dir=dest_parent))
        try:
            for m in members:
                target = tmp.joinpath(*PurePosixPath(m.name).parts[1:])
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(m)
                if src is None:
                    raise ArchiveError(f"{tar_path}: member {m.name!r} has no data")
                with src, target.open("xb") as out:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
            tmp.rename(dest)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return dest
