"""A GNU Taler exchange source (``taler:``), resolved and prepared as a GNUnet source is
(:mod:`archbench.sources.gnunet`): the same kinds, checked the same way. Its version is its
``configure.ac``'s ``AC_INIT``; its build tree is the source without ``.git`` and nothing
else changed (the image runs ``autoreconf -fi`` on its copy)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

from archbench.errors import SourceError
from archbench.matrix import GnunetGit, GnunetPath, GnunetSource, GnunetTarball
from archbench.sources.git import export, resolve_git
from archbench.sources.model import (
    MAX_MESON_BYTES,
    SOURCE_DIR,
    BuildTree,
    ResolvedSource,
    exchange_version,
    small_text,
)
from archbench.sources.tarball import fetch_tarball, tar_members, unpack, verify_sha256
from archbench.sources.tree import hash_tree, working_tree

TALER_SENTINEL: Final = "src/util/test_helper_rsa.c"
"""A file every exchange tree with the security-module benchmarks has (0.9 to 0.14)."""


def resolve_taler(source: GnunetSource, work_dir: Path) -> ResolvedSource:
    """What an exchange source (``taler:``) is, checked as
    :func:`~archbench.sources.gnunet.resolve_gnunet` checks a GNUnet source (sha256 before
    anything else, a ref's commit, a tree's hash); the version is ``configure.ac``'s
    ``AC_INIT``. Downloads share ``<work_dir>/gnunet-src``.

    Raises:
        SourceError: as :func:`~archbench.sources.gnunet.resolve_gnunet`; or no exchange
            ``configure.ac``.
        TypeError: ``source`` is the debian kind (there is no exchange package).
    """
    if isinstance(source, GnunetTarball):
        where = f"taler tarball {source.tarball}"
        if source.is_url:
            path = fetch_tarball(source.tarball, source.sha256, work_dir / SOURCE_DIR / "tarballs")
        else:
            path = Path(source.tarball)
            if not path.is_file():
                raise SourceError(
                    f"{where}: no such file; give the path of a taler-exchange tarball"
                )
            with path.open("rb") as f:
                verify_sha256(f, source.sha256, where)
        return ResolvedSource(
            kind="tarball",
            project="taler",
            location=source.tarball,
            sha256=source.sha256,
            dirty=False,
            version=exchange_version(_tar_member(path, "configure.ac", where), where),
            origin=path,
        )
    if isinstance(source, GnunetGit):
        return resolve_git(source, work_dir / SOURCE_DIR / "git", version_file="configure.ac")
    if isinstance(source, GnunetPath):
        directory = source.directory
        where = f"taler path {directory}"
        if not directory.is_dir():
            raise SourceError(f"{where}: no such directory; give a taler-exchange source tree")
        state = working_tree(directory)
        # Bounded, regular files only: a FIFO or a huge file at the name is refused, not read.
        text = small_text(directory / "configure.ac", MAX_MESON_BYTES, where)[:20000]
        return ResolvedSource(
            kind="path",
            project="taler",
            location=str(directory),
            ref=state.branch,
            commit=state.head,
            tree_sha256=hash_tree(directory, state.files, where),
            dirty=state.dirty,
            version=exchange_version(text, where),
            origin=directory,
        )
    raise TypeError(f"not an exchange source: {source!r}")


def _tar_member(path: Path, name: str, where: str) -> str:
    """The text (first 20 000 characters) of ``name`` at the tarball's top or in its one
    top folder; "" when there is none.

    Read as a GNUnet tarball is (:func:`tar_members`): any compression a source may have
    (zstd too), checked to its end and bounded, so a damaged or oversized exchange tarball
    is refused here, naming it, before anything is unpacked.

    Raises:
        SourceError: not a tar archive that can be read, or one beyond the limits.
    """
    found: str | None = None
    with path.open("rb") as f:
        for member, data in tar_members(f, where):
            parts = member.name.strip("/").split("/")
            if found is None and parts[-1] == name and len(parts) <= 2 and member.isfile():
                found = data.read(20000).decode(errors="replace") if data is not None else ""
    return found or ""


def prepare_taler_tree(resolved: ResolvedSource, dest: Path) -> BuildTree:
    """Copy an exchange source into ``dest`` (new or empty) as the image's build sees it:
    no ``.git``, nothing else changed (the image runs ``autoreconf -fi`` on its copy).

    Raises:
        SourceError: as :func:`~archbench.sources.gnunet.prepare_build_tree`, or the tree lacks the
            security-module benchmarks (``src/util/test_helper_rsa.c``).
        ValueError: ``resolved`` is not an exchange source, or ``dest`` is not empty.
    """
    if resolved.project != "taler" or resolved.origin is None or resolved.version is None:
        raise ValueError("not a resolved exchange source")
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    where = f"taler {resolved.kind} {resolved.location}"
    try:
        if resolved.kind == "tarball":
            assert resolved.sha256 is not None
            with resolved.origin.open("rb") as f:
                verify_sha256(f, resolved.sha256, where)
                f.seek(0)
                unpack(f, dest, where, strip_top=True)
        elif resolved.kind == "git":
            assert resolved.commit is not None
            export(resolved.origin, resolved.commit, dest, where)
        else:
            again = working_tree(resolved.origin)
            digest = hash_tree(resolved.origin, again.files, where, copy_to=dest)
            if digest != resolved.tree_sha256:
                raise SourceError(f"{where}: the tree changed while archbench copied it; run again")
        changes: list[str] = []
        git_dir = dest / ".git"
        if git_dir.is_dir() and not git_dir.is_symlink():
            shutil.rmtree(git_dir)
            changes.append("removed .git")
        if not (dest / TALER_SENTINEL).is_file() or not (dest / "configure.ac").is_file():
            raise SourceError(
                f"{where}: no {TALER_SENTINEL} or configure.ac; this is not an exchange tree "
                "with the security-module benchmarks"
            )
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return BuildTree(
        root=dest, build_system="autotools", version=resolved.version, changes=tuple(changes)
    )
