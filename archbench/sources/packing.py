"""A prepared tree packed for an image's build context, on disk.

:func:`pack_build_tree` writes a :class:`~archbench.sources.model.BuildTree` as an
uncompressed tar, the same bytes for the same files, streaming to a file named by its
sha256; a :class:`ContextFile` is such a build-context file too large to hold in memory
(a packed source tree, an installed prefix), which the images read in :data:`CHUNK`
pieces.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from archbench.errors import SourceError
from archbench.sources.model import MAX_PACKED_BYTES, MAX_TREE_FILES, BuildTree

CHUNK = 1024 * 1024
"""What a context file on disk is read in, at most, at a time (1 MiB)."""


@dataclass(frozen=True)
class ContextFile:
    """A build-context file too large to hold in memory: its bytes are in the file
    ``path`` (``size`` bytes), read in :data:`CHUNK` pieces whenever they are hashed
    (:func:`archbench.images.builder.digest`) or packed
    (:func:`archbench.images.builder.build_context`). Its owner does not change it
    while a spec names it (a packed GNUnet tree is named by its sha256).
    """

    path: Path
    size: int

    def chunks(self) -> Iterator[bytes]:
        """The file's bytes in order, :data:`CHUNK` at a time.

        Raises:
            OSError: the file cannot be read, or holds another size than :attr:`size`
                (it changed since it was made).
        """
        seen = 0
        with self.path.open("rb") as f:
            while chunk := f.read(CHUNK):
                seen += len(chunk)
                if seen > self.size:
                    break
                yield chunk
        if seen != self.size:
            raise OSError(0, f"{self.path} has changed: {seen} bytes, {self.size} expected")


def pack_build_tree(tree: BuildTree, out_dir: Path) -> ContextFile:
    """``tree`` as an uncompressed tar with one top folder ``src/``, the same bytes for the
    same files: names sorted, owner 0:0 without names, mtime 0, modes 0644/0755 (0755
    where the owner may execute), symlinks kept as links.

    The tar is written streaming to ``out_dir/<its sha256>.tar`` (made if missing; the
    same tree finds the same file), never held in memory: each file is copied in 16 KiB
    pieces, and the whole is bounded by the files' apparent sizes before any is read.

    Raises:
        SourceError: the tree holds something else than files, folders and symlinks, or
            more than :data:`MAX_TREE_FILES` entries or :data:`MAX_PACKED_BYTES` bytes,
            or a file changed size while packed.
        OSError: ``out_dir`` cannot be written.
    """
    root = tree.root
    paths = sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix())
    if len(paths) > MAX_TREE_FILES:
        raise SourceError(f"build tree {root}: more than {MAX_TREE_FILES} entries")
    entries = [(path, path.lstat()) for path in paths]
    size = sum(st.st_size for _, st in entries if stat.S_ISREG(st.st_mode))
    if size > MAX_PACKED_BYTES:
        raise SourceError(
            f"build tree {root}: more than {MAX_PACKED_BYTES} bytes (by the files' "
            "apparent sizes, checked before reading); GNUnet's tree is about "
            "33 MB: remove large files from the source, or build a release tarball"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, part_name = tempfile.mkstemp(prefix="packing-", suffix=".part", dir=out_dir)
    part = Path(part_name)
    try:
        with os.fdopen(fd, "wb") as out:
            _write_tar(root, entries, out)
        h = hashlib.sha256()
        with part.open("rb") as f:
            while chunk := f.read(1024 * 1024):
                h.update(chunk)
        final = out_dir / f"{h.hexdigest()}.tar"
        os.replace(part, final)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return ContextFile(final, final.stat().st_size)


def _write_tar(root: Path, entries: list[tuple[Path, os.stat_result]], out: IO[bytes]) -> None:
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(_tar_info("src", tarfile.DIRTYPE, 0o755))
        for path, st in entries:
            name = "src/" + path.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                info = _tar_info(name, tarfile.SYMTYPE, 0o777)
                info.linkname = os.readlink(path)
                tar.addfile(info)
            elif stat.S_ISDIR(st.st_mode):
                tar.addfile(_tar_info(name, tarfile.DIRTYPE, 0o755))
            elif stat.S_ISREG(st.st_mode):
                info = _tar_info(name, tarfile.REGTYPE, 0o755 if st.st_mode & 0o100 else 0o644)
                info.size = st.st_size
                with path.open("rb") as f:
                    try:
                        tar.addfile(info, f)
                    except OSError as exc:  # tarfile's "unexpected end of data"
                        raise SourceError(
                            f"build tree {root}: {name} changed while packed ({exc})"
                        ) from None
            else:
                raise SourceError(f"build tree {root}: {name} is not a file, folder or link")


def _tar_info(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
