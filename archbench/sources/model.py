"""What a source is: a :class:`ResolvedSource` (what exactly will be built, the content key
an image's hash covers, the provenance a result records), a :class:`BuildTree`, the limits
every kind of source is held to, its version, and the lock two builds take turns on.

A GNUnet source's version is ``git describe --tags --match 'v[0-9]*'`` without its ``v``
(GNUnet's ``get_version.sh`` takes any tag, such as ``last-gnunet-0.20-compatible``), else
its own ``.version`` (:func:`version_of`); a build tree holds only the release tag of a
described one (:func:`release_version`). An exchange's is its ``configure.ac``'s
``AC_INIT`` (:func:`exchange_version`).
"""

from __future__ import annotations

import contextlib
import fcntl
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from archbench.errors import SourceError
from archbench.inputs import check_gnunet_version, read_bytes

PREPARE_VERSION: Final = 1
"""Changes with what :func:`~archbench.sources.gnunet.prepare_build_tree` adds to a tree,
so that the content key (and with it the image) changes too."""
DESCRIBED: Final = re.compile(r"(?P<release>.+?)(?:-[0-9]+-g[0-9a-f]{4,40})?(?:-dirty)?")
"""``git describe --tags [--dirty]`` without its ``v``: the tag, then ``-N-gHEX`` when the
commit is N commits past it, then ``-dirty`` for a working tree with changes."""
MAX_TREE_BYTES: Final = 4 * 1024 * 1024 * 1024
"""What a tree may unpack or copy to, at most (GNUnet 0.27 is 33 MB)."""
MAX_TREE_FILES: Final = 500_000
MAX_PACKED_BYTES: Final = 256 * 1024 * 1024
"""What a prepared tree may hold to be packed into an image's build context, by the
files' apparent sizes (GNUnet 0.27's tree is 33 MB); the context is written to disk
and sent streaming, so this bounds disk and upload, not memory."""
MAX_VERSION_BYTES: Final = 4096
"""A ``.version`` larger than this is no version; it is never read whole."""
MAX_MESON_BYTES: Final = 1024 * 1024
"""``doc/meson.build`` is read up to this much to look for ``subdir('handbook')``."""
SOURCE_DIR: Final = "gnunet-src"
"""The folder of the work directory that holds downloads and mirrors."""
Kind = Literal["debian", "tarball", "git", "path"]
BuildSystem = Literal["meson", "autotools"]


@dataclass(frozen=True)
class ResolvedSource:
    """What exactly a GNUnet source is: the inputs of the build and of the image's hash.

    Fields that do not apply to ``kind`` are None.
    """

    kind: Kind
    project: Literal["gnunet", "taler"] = "gnunet"
    """Whose source: GNUnet's, or GNU Taler's exchange
    (:func:`~archbench.sources.taler.resolve_taler`)."""
    location: str = ""
    """The URL (tarball, git) or absolute path (tarball, path); empty for debian."""
    ref: str | None = None
    """git: the ref as given; path: the branch checked out (None when detached)."""
    commit: str | None = None
    """git: the commit the ref names; path: HEAD of its work tree (None without git)."""
    sha256: str | None = None
    """tarball: the sha256 of its bytes, as checked."""
    tree_sha256: str | None = None
    """path: the hash of its files (:func:`~archbench.sources.tree.hash_tree`)."""
    dirty: bool | None = None
    """path: the tree differs from HEAD (None without git); False for tarball and git."""
    version: str | None = None
    """The source's version: ``git describe``'s (``0.22.0-59-g6cc77baa8``, ``-dirty``),
    else its own ``.version`` (None for debian)."""
    described: bool = False
    """``version`` is ``git describe``'s (a git ref, a git work tree), not a ``.version``."""
    origin: Path | None = None
    """What the build tree is made from: the tarball file (a download's cached copy),
    the bare mirror, or the directory."""

    @property
    def build_version(self) -> str | None:
        """The version the build tree's ``.version`` holds, and so the version the built
        library reports (``GNUNET_VERSION``, pkg-config's ``Version``, ``PACKAGE_VERSION``
        from 0.24 on): ``version``, but for a described one only its release tag
        (:func:`release_version`), so that commits past the same tag configure alike."""
        if self.version is None or not self.described:
            return self.version
        return release_version(self.version)

    @property
    def content_key(self) -> str:
        """The source as the image's hash sees it: one line, the same for the same bytes."""
        if self.kind == "debian":
            return "gnunet debian"
        digest = {"tarball": self.sha256, "git": self.commit, "path": self.tree_sha256}[self.kind]
        # A described source's tree holds its release tag (build_version): named too, so
        # that an image built when the tree held git describe's version is not reused.
        built = f" build {self.build_version}" if self.build_version != self.version else ""
        return (
            f"{self.project}/{PREPARE_VERSION} {self.kind} {digest} version {self.version}{built}"
        )

    def provenance(self) -> dict[str, str | bool | None]:
        """What a result records about its libgnunetutil's source (JSON-ready).

        Keys: ``kind``, ``location`` (URL or path), ``ref``, ``commit``, ``sha256``,
        ``tree_sha256``, ``dirty``, ``version`` (``git describe``'s or the source's
        ``.version``), ``build_version`` (:attr:`build_version`: the build tree's
        ``.version``, which the library reports; the harness records what it reports).
        """
        return {
            "kind": self.kind,
            "location": self.location or None,
            "ref": self.ref,
            "commit": self.commit,
            "sha256": self.sha256,
            "tree_sha256": self.tree_sha256,
            "dirty": self.dirty,
            "version": self.version,
            "build_version": self.build_version,
        }


@dataclass(frozen=True)
class BuildTree:
    """A source tree ready to build (:func:`~archbench.sources.gnunet.prepare_build_tree`)."""

    root: Path
    build_system: BuildSystem
    version: str
    changes: tuple[str, ...]
    """What archbench changed against the source, one phrase each (for logs and results)."""


def small_text(path: Path, limit: int, where: str) -> str:
    """The text of the small file ``path`` ("" when there is none), read through the
    bounded reader: a FIFO or device at the name is refused, never read, and at most
    ``limit`` bytes are read.

    Raises:
        SourceError: not a regular file, or larger than ``limit``.
    """
    if not path.exists() and not path.is_symlink():
        return ""
    return read_bytes(path, SourceError, f"{where}: {path.name}", limit).decode(errors="replace")


def release_version(described: str) -> str:
    """The release part of a ``git describe`` version (:data:`DESCRIBED`):
    ``0.22.0-59-g6cc77baa8`` and ``0.22.0-59-g6cc77baa8-dirty`` give ``0.22.0``,
    ``0.21.3-talerdev.1-5-gabcdef0`` gives ``0.21.3-talerdev.1``, a tag itself is kept.

    Why: GNUnet's build puts its version into ``gnunet_config.h`` and
    ``gnunet_private_config.h``, which every unit of libgnunetutil includes; a version that
    changed at every commit would recompile all of them in a persistent build tree
    (:mod:`archbench.images.incremental`) for a one-commit step. The release tag changes
    only at a release, and the clean build writes the same, so both give the same code.
    """
    found = DESCRIBED.fullmatch(described)
    return found.group("release") if found else described


def version_of(described: str, dot_version: str, where: str) -> str:
    """The version to write: ``git describe``'s without its ``v``, else a ``.version``'s.

    Raises:
        SourceError: neither gives a version of GNUnet's form.
    """
    candidates = [described.strip().removeprefix("v"), dot_version.strip()]
    for text in candidates:
        if text:
            try:
                return check_gnunet_version(text)
            except ValueError as exc:
                raise SourceError(f"{where}: {exc}") from None
    raise SourceError(
        f"{where}: no version: no tag v* is reachable and there is no .version, so "
        "GNUnet would call itself 'unknown' (scripts/get_version.sh), which breaks its "
        "version #defines; build a commit that follows a release tag, or a release tarball"
    )


_AC_INIT: Final = re.compile(r"AC_INIT\(\s*\[taler-exchange\]\s*,\s*\[([^\]\n]{1,40})\]")


def exchange_version(configure_ac: str, where: str) -> str:
    """The exchange's version from its ``configure.ac`` (``AC_INIT([taler-exchange],[0.14.0],…)``).

    Raises:
        SourceError: no such line, or a version not of the form x.y.z[suffix].
    """
    found = _AC_INIT.search(configure_ac)
    if found is None:
        raise SourceError(
            f"{where}: configure.ac has no AC_INIT([taler-exchange],[VERSION]); "
            "give a GNU Taler exchange source"
        )
    try:
        return check_gnunet_version(found.group(1).strip())
    except ValueError as exc:
        raise SourceError(f"{where}: {exc}") from None


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path``, made with its folder if missing (two builds
    resolving one source take turns; :meth:`archbench.images.Builder.lock` for images). The
    kernel releases it when the holder dies; separately opened files exclude threads too."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
