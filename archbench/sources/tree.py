"""A local working ``path:`` source: its files as they are on disk, hashed and copied.

Its key is a sha256 of its files, uncommitted changes included (:func:`hash_tree`). In a
git work tree (a ``.git`` in the folder) the files are git's tracked and
untracked-but-not-ignored ones (``git ls-files -co --exclude-standard``), so an ignored
build folder does not count; without git, every regular file and symlink. Directories that
are submodules or nested repositories are left out (a library-only build needs none).
``dirty`` is whether ``git status`` differs from HEAD; git runs with optional locks off,
so nothing is written into the tree, not even its index (:func:`working_tree`). A working
tree is hashed again as it is copied, so what is built is what was keyed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from archbench.errors import SourceError
from archbench.inputs import quote
from archbench.matrix import GnunetPath
from archbench.sources.git import Git
from archbench.sources.model import (
    MAX_PACKED_BYTES,
    MAX_TREE_FILES,
    MAX_VERSION_BYTES,
    ResolvedSource,
    small_text,
    version_of,
)


def resolve_path(source: GnunetPath) -> ResolvedSource:
    directory = source.directory
    where = f"path {directory}"
    if not directory.is_dir():
        raise SourceError(f"{where}: no such directory; give a GNUnet source tree")
    state = working_tree(directory)
    tree_sha256 = hash_tree(directory, state.files, where)
    if state.git:
        git = Git(str(directory), where, tree=directory)
        described = git.out(
            ["-C", str(directory), "describe", "--tags", "--match", "v[0-9]*", "HEAD"],
            check=False,
        )
        if described and state.dirty:
            described += "-dirty"
    else:
        described = ""
    on_disk = small_text(directory / ".version", MAX_VERSION_BYTES, where)
    return ResolvedSource(
        kind="path",
        location=str(directory),
        ref=state.branch,
        commit=state.head,
        tree_sha256=tree_sha256,
        dirty=state.dirty,
        version=version_of(described, on_disk, where),
        described=bool(described.strip()),
        origin=directory,
    )


@dataclass(frozen=True)
class TreeState:
    """A working tree as git sees it (or not): which files count, and against what HEAD."""

    files: tuple[str, ...]
    """Relative paths, sorted, of the regular files and symlinks that count."""
    git: bool
    head: str | None = None
    branch: str | None = None
    dirty: bool | None = None


def working_tree(directory: Path) -> TreeState:
    """The files of ``directory`` that count, and its git state; nothing is written.

    Raises:
        SourceError: git fails on a folder that has a ``.git``.
    """
    if not (directory / ".git").exists():
        return TreeState(files=_every_file(directory), git=False)
    where = f"path {directory}"
    git = Git(str(directory), where, tree=directory)
    base = ["-C", str(directory)]
    listed = git.out([*base, "ls-files", "-z", "-c", "-o", "--exclude-standard"], raw=True)
    files = sorted(
        {name for name in listed.split("\0") if name and _is_file_or_link(directory / name)}
    )
    head = git.out([*base, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False)
    branch = git.out([*base, "symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
    status = git.out([*base, "status", "--porcelain", "-z"], raw=True)
    return TreeState(
        files=tuple(files),
        git=True,
        head=head or None,
        branch=branch or None,
        dirty=bool(status.strip("\0")),
    )


def _is_file_or_link(path: Path) -> bool:
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False  # a tracked file deleted from the working tree
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def _every_file(directory: Path) -> tuple[str, ...]:
    found: list[str] = []
    for root, dirs, names in os.walk(directory):
        dirs.sort()
        for name in names:
            path = Path(root, name)
            if _is_file_or_link(path):
                found.append(str(path.relative_to(directory)))
                if len(found) > MAX_TREE_FILES:
                    raise SourceError(
                        f"path {directory}: more than {MAX_TREE_FILES} files; "
                        "that is no GNUnet source tree"
                    )
    return tuple(sorted(found))


def hash_tree(
    directory: Path,
    files: Sequence[str],
    where: str,
    copy_to: Path | None = None,
) -> str:
    """The sha256 of ``files`` of ``directory``: names, kinds and contents, in name order.

    Each entry is ``NAME NUL KIND SP SHA256(content) LF``: KIND ``f`` a regular file,
    ``x`` one with an executable bit, ``l`` a symlink (content: its target). With
    ``copy_to``, each file is copied there as it is hashed (the bytes hashed are the
    bytes copied; symlinks are copied as symlinks, modes as ``0644``/``0755``).

    The bound is decided before any file is read: the files' apparent sizes (a sparse
    file's too, holes counted) together may not pass :data:`MAX_PACKED_BYTES`, since
    every file of such a tree goes into the image's build context
    (:func:`~archbench.sources.packing.pack_build_tree`). Each file is then read streaming,
    in 1 MiB chunks, and no further than what is left of that bound (a file that grows is
    refused).

    Raises:
        SourceError: a file cannot be read, or the tree is too large.
    """
    names = sorted(files, key=os.fsencode)
    _check_apparent_sizes(directory, names, where)
    total = hashlib.sha256()
    size = 0
    for name in names:
        path = directory / name
        try:
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                kind, digest = "l", hashlib.sha256(os.fsencode(target)).hexdigest()
                if copy_to is not None:
                    os.symlink(target, inside(copy_to, name))
            elif stat.S_ISREG(st.st_mode):
                kind = "x" if st.st_mode & 0o111 else "f"
                # Checked again: the file may have grown since the first look.
                if size + st.st_size > MAX_PACKED_BYTES:
                    raise SourceError(_too_large(where, name, st.st_size, size + st.st_size))
                copy = inside(copy_to, name) if copy_to is not None else None
                digest, n = _hash_file(path, copy, MAX_PACKED_BYTES - size)
                size += n
                if copy_to is not None:
                    os.chmod(copy_to / name, 0o755 if kind == "x" else 0o644)
            else:
                continue  # became a directory or vanished: not a file of the tree
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SourceError(f"{where}: cannot read {name}: {exc.strerror}") from None
        total.update(os.fsencode(name) + b"\0" + f"{kind} {digest}\n".encode())
    return total.hexdigest()


def _check_apparent_sizes(directory: Path, names: Sequence[str], where: str) -> None:
    """Refuse ``names`` of ``directory`` whose apparent sizes together pass
    :data:`MAX_PACKED_BYTES`, by ``lstat`` alone (nothing is opened or read)."""
    total = 0
    largest = ("", 0)
    for name in names:
        try:
            st = (directory / name).lstat()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SourceError(f"{where}: cannot read {name}: {exc.strerror}") from None
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
            largest = max(largest, (name, st.st_size), key=lambda e: e[1])
    if total > MAX_PACKED_BYTES:
        raise SourceError(_too_large(where, *largest, total))


def _too_large(where: str, name: str, size: int, total: int) -> str:
    return (
        f"{where}: more than {MAX_PACKED_BYTES} bytes of files by their apparent sizes, "
        f"checked before reading ({quote(name)} alone has {size}, all together {total}); "
        "GNUnet's tree is about 33 MB: remove large files from the tree, or build a "
        "release tarball"
    )


def _hash_file(path: Path, copy: Path | None, limit: int) -> tuple[str, int]:
    """sha256 and size of the regular file ``path``, streamed in 1 MiB chunks, at most
    ``limit`` bytes (a file that grows while read is refused); copied to ``copy``.

    The file is opened without following a symlink and without blocking, and must still
    be a regular file once open (it may have been swapped since ``lstat``).
    """
    h = hashlib.sha256()
    n = 0
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with contextlib.ExitStack() as stack:
        src = stack.enter_context(os.fdopen(os.open(path, flags), "rb"))
        if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
            raise OSError(0, "not a regular file any more")
        out = None
        if copy is not None:
            out = stack.enter_context(copy.open("xb"))
        while chunk := src.read(1024 * 1024):
            h.update(chunk)
            n += len(chunk)
            if n > limit:
                raise OSError(0, f"grew past {MAX_PACKED_BYTES} bytes of files while read")
            if out is not None:
                out.write(chunk)
    return h.hexdigest(), n


def inside(root: Path, name: str) -> Path:
    """``root / name`` with every folder between made as a real folder of ``root``.

    A folder on the way that is a symlink (a copied ``doc/handbook`` pointing elsewhere)
    is replaced by a real folder in the copy, so that nothing written there follows it
    out of ``root``; nothing outside ``root`` is touched.

    Raises:
        OSError: ``name`` leaves ``root`` (``..``, absolute) or a folder cannot be made.
    """
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or ".." in parts:
        raise OSError(0, f"{quote(name)} is not a path inside the copy")
    here = root
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            here.unlink()
        if not here.exists():
            here.mkdir()
    final = here / parts[-1]
    if final.is_symlink():
        final.unlink()
    return final
