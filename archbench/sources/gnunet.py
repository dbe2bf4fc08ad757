"""A GNUnet source, resolved to what it is and copied into a tree ready to build.

:func:`resolve_gnunet` turns a ``gnunet:`` source (:class:`archbench.matrix.GnunetSource`)
into a :class:`ResolvedSource`: what exactly will be built, and the
:attr:`~ResolvedSource.content_key` the image's hash covers, so that the same
source is never built twice and a changed one always is:

* a **tarball**: the sha256 of its bytes, checked against the pin before
  anything else (an ``http(s)`` tarball is downloaded first, bounded in size,
  into ``<work>/gnunet-src/tarballs``); its version is its own ``.version``;
* a **git** repository: the commit its ref names, in a bare mirror under
  ``<work>/gnunet-src/git`` (``git clone --mirror``, then ``git fetch``; a
  full commit id already there is not fetched again). The user's repository is
  only read through its URL. The version is ``git describe --tags --match
  'v[0-9]*'`` without its ``v`` (GNUnet's ``get_version.sh`` takes any tag,
  such as ``last-gnunet-0.20-compatible``), else a committed ``.version``;
* a local working **path**: a sha256 of its files as they are on disk,
  uncommitted changes included. In a git work tree (a ``.git`` in the folder)
  the files are git's tracked and untracked-but-not-ignored ones (``git ls-files
  -co --exclude-standard``), so an ignored build folder does not count; without
  git, every regular file and symlink. Directories that are submodules or
  nested repositories are left out (a library-only build needs none). ``dirty``
  is whether ``git status`` differs from HEAD; git runs with optional locks off,
  so nothing is written into the tree, not even its index.

:func:`prepare_build_tree` copies a resolved source into a scratch folder as
the build will see it: no ``.git``, ``.version`` written (``get_version.sh``
reads it when there is no ``.git``, instead of printing ``unknown`` or writing
into the source; for a git or working-tree source the release tag of its ``git
describe``, :attr:`ResolvedSource.build_version`, so that a build one commit
away recompiles only what changed), and an empty ``doc/handbook/meson.build`` where
``doc/meson.build`` needs it (0.24.3 and 0.27.0 have the handbook as a
submodule, which a plain clone or ``git archive`` lacks). The build system is
meson when ``meson.build`` is at the top, else autotools when ``configure`` is
(0.24 and later ship a ``configure`` that wraps meson, so ``configure`` alone
says nothing). A tarball is checked again as it is unpacked and a working tree
is hashed again as it is copied, so what is built is what was keyed.

Research behind these rules: ``/tmp/i20/API.md`` (issue 20), sections 2 and 3.
"""

from __future__ import annotations

import bz2
import contextlib
import dataclasses
import fcntl
import gzip
import hashlib
import http.client
import io
import lzma
import os
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, Literal

import zstandard

from archbench.errors import SourceError
from archbench.inputs import check_gnunet_version, did_you_mean, quote, read_bytes
from archbench.matrix import GnunetDebian, GnunetGit, GnunetPath, GnunetSource, GnunetTarball
from archbench.sources.packing import ContextFile

PREPARE_VERSION: Final = 1
"""Changes with what :func:`prepare_build_tree` adds to a tree, so that the content key
(and with it the image) changes too."""
DESCRIBED: Final = re.compile(r"(?P<release>.+?)(?:-[0-9]+-g[0-9a-f]{4,40})?(?:-dirty)?")
"""``git describe --tags [--dirty]`` without its ``v``: the tag, then ``-N-gHEX`` when the
commit is N commits past it, then ``-dirty`` for a working tree with changes."""
MAX_TARBALL_BYTES: Final = 512 * 1024 * 1024
"""A downloaded tarball's cap; GNUnet's are 7 MB (``git archive``) to 30 MB (``make dist``)."""
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
DOWNLOAD_TIMEOUT: Final = 60.0
"""Seconds a download may wait for the server on one read."""
GIT_TIMEOUT: Final = 1800.0
"""Seconds a clone or fetch may take (GNUnet's full history, on a slow line)."""
GIT_QUICK_TIMEOUT: Final = 120.0
"""Seconds any other git command may take."""
SOURCE_DIR: Final = "gnunet-src"
"""The folder of the work directory that holds downloads and mirrors."""
HANDBOOK_STUB: Final = (
    "# Empty: written by archbench for a library-only build. GNUnet's handbook is a git\n"
    "# submodule (doc/handbook) that a plain clone or git archive lacks, and\n"
    "# doc/meson.build calls subdir('handbook') unconditionally.\n"
)
HANDBOOK_SUBDIR: Final = re.compile(r"""^\s*subdir\(\s*['"]handbook['"]\s*\)""", re.MULTILINE)
CONFIG_TEMPLATE: Final = "src/include/gnunet_config.h.in"
CONFIG_TEMPLATE_USE: Final = re.compile(r"""input\s*:\s*['"]gnunet_config\.h\.in['"]""")
CONFIG_TEMPLATE_STUB: Final = """/* Written by archbench: this tree's src/include/meson.build makes
 * gnunet_config.h from gnunet_config.h.in, which the tree lacks (GNUnet's .gitignore lists it; a
 * development snapshot after 0.27.0 has none). These are the public defines of
 * 0.27.0's template whose values the top meson.build still sets. */
#ifndef GNUNET_CONFIG_H
#define GNUNET_CONFIG_H
{defines}
#endif
"""
CONFIG_TEMPLATE_DEFINES: Final = (
    ("GNUNET_VERSION", '"@gnunet_version@"', "gnunet_version"),
    ("GNUNET_MAJOR_VERSION", "@gnunet_major_version@", "gnunet_major_version"),
    ("GNUNET_MINOR_VERSION", "@gnunet_minor_version@", "gnunet_minor_version"),
    ("GNUNET_MICRO_VERSION", "@gnunet_micro_version@", "gnunet_micro_version"),
    ("GNUNET_EXPERIMENTAL", "@enable_experimental@", "enable_experimental"),
    ("GNUNET_FS_EXTRACTOR_ENABLED", "@extractor@", "extractor"),
)
"""0.27.0's ``gnunet_config.h.in`` (name, value, the meson ``cdata`` key it needs); its
``GNUNET_CURL_GNUTLS`` moved to the private configuration on master."""
_STUB_FILE: Final = r"""['"]((?:[\w.+-]+/)*[\w+-][\w.+-]*)['"]"""
STUB_INPUT: Final = re.compile(r"input\s*:\s*" + _STUB_FILE)
"""``input: 'X'`` of a ``configure_file`` in a ``meson.build``: a file the tree must have."""
STUB_INSTALL: Final = re.compile(r"install_data\s*\(([^)]*)\)")
"""An ``install_data(...)`` call: its positional string arguments are files too."""
STUB_KEYWORD: Final = re.compile(r"\b\w+\s*:")
STUB_LITERAL: Final = re.compile(_STUB_FILE)
STUB_FOREACH: Final = re.compile(r"foreach\s+(\w+)\s*:\s*\[([^\]]*)\](.*?)endforeach", re.DOTALL)
"""``foreach p : ['a', 'b'] ... endforeach``, whose body may compute an input's name."""
MAX_STUBS: Final = 1000
STUB_TEXT: Final = ""
"""A stub's content: nothing (libgnunetutil's build reads none of these files)."""
SENTINEL_HEADER: Final = "src/include/gnunet_crypto_lib.h"
"""A file every GNUnet source tree has, from 0.19 to 0.27 (autotools and meson)."""

Kind = Literal["debian", "tarball", "git", "path"]
BuildSystem = Literal["meson", "autotools"]


@dataclass(frozen=True)
class ResolvedSource:
    """What exactly a GNUnet source is: the inputs of the build and of the image's hash.

    Fields that do not apply to ``kind`` are None.
    """

    kind: Kind
    project: Literal["gnunet", "taler"] = "gnunet"
    """Whose source: GNUnet's, or GNU Taler's exchange (:func:`resolve_taler`)."""
    location: str = ""
    """The URL (tarball, git) or absolute path (tarball, path); empty for debian."""
    ref: str | None = None
    """git: the ref as given; path: the branch checked out (None when detached)."""
    commit: str | None = None
    """git: the commit the ref names; path: HEAD of its work tree (None without git)."""
    sha256: str | None = None
    """tarball: the sha256 of its bytes, as checked."""
    tree_sha256: str | None = None
    """path: the hash of its files (:func:`hash_tree`)."""
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
    """A source tree ready to build (:func:`prepare_build_tree`)."""

    root: Path
    build_system: BuildSystem
    version: str
    changes: tuple[str, ...]
    """What archbench changed against the source, one phrase each (for logs and results)."""


# ---------------------------------------------------------------- resolving


def resolve_gnunet(source: GnunetSource, work_dir: Path) -> ResolvedSource:
    """What ``source`` is, checked: see the module's docstring for each kind.

    ``work_dir`` holds downloads and git mirrors (``<work_dir>/gnunet-src``).

    Raises:
        SourceError: a missing file or directory, a sha256 that differs (naming both),
            a download or fetch that fails, a ref that names no commit, no usable
            version (``unknown``), or git missing.
    """
    if isinstance(source, GnunetDebian):
        return ResolvedSource(kind="debian")
    if isinstance(source, GnunetTarball):
        return _resolve_tarball(source, work_dir / SOURCE_DIR / "tarballs")
    if isinstance(source, GnunetGit):
        return _resolve_git(source, work_dir / SOURCE_DIR / "git")
    if isinstance(source, GnunetPath):
        return _resolve_path(source)
    raise TypeError(f"not a GNUnet source: {source!r}")


def check_local_source(source: GnunetSource | None, project: str = "GNUnet") -> None:
    """Refuse, before anything is built or run, a local source that is not there.

    ``source``: a target's GNUnet or Taler exchange source (None and the ``debian``
    kind pass); ``project``: ``GNUnet`` or ``taler-exchange``, for the message. Only
    what costs nothing is checked here (a local tarball is a file, a ``path:`` is a
    directory); its sha256, its contents and remote sources are checked when the
    source is resolved, as before.

    Raises:
        SourceError: the tarball is not a file or the directory does not exist, with
            the same words as :func:`resolve_gnunet` and :func:`resolve_taler`.
    """
    prefix = "" if project == "GNUnet" else "taler "
    if isinstance(source, GnunetTarball) and not source.is_url:
        if not Path(source.tarball).is_file():
            raise SourceError(
                f"{prefix}tarball {source.tarball}: no such file; "
                f"give the path of a {project} {'release ' if not prefix else ''}tarball"
            )
    elif isinstance(source, GnunetPath) and not source.directory.is_dir():
        raise SourceError(
            f"{prefix}path {source.directory}: no such directory; give a {project} source tree"
        )


def _resolve_tarball(source: GnunetTarball, cache: Path) -> ResolvedSource:
    where = f"tarball {source.tarball}"
    if source.is_url:
        path = fetch_tarball(source.tarball, source.sha256, cache)
    else:
        path = Path(source.tarball)
        if not path.is_file():
            raise SourceError(f"{where}: no such file; give the path of a GNUnet release tarball")
        with path.open("rb") as f:
            verify_sha256(f, source.sha256, where)
    return ResolvedSource(
        kind="tarball",
        location=source.tarball,
        sha256=source.sha256,
        dirty=False,
        version=tarball_version(path, where),
        origin=path,
    )


def _resolve_git(
    source: GnunetGit, mirrors: Path, version_file: str = ".version"
) -> ResolvedSource:
    where = f"git {source.git}"
    if source.git.startswith("file://"):
        local = Path(source.git.removeprefix("file://"))
        if local.exists() and not local.is_dir():
            raise SourceError(f"{where}: a file, not a folder; give the path of a git repository")
        if not local.is_dir():
            raise SourceError(f"{where}: no such folder; give the path of a git repository")
        if not ((local / ".git").exists() or (local / "HEAD").is_file()):
            raise SourceError(
                f"{where}: not a git repository (no .git, and not a bare repository); for a "
                "working tree that is not under git use gnunet: {path: ...} (--gnunet PATH)"
            )
    mirror = mirrors / (hashlib.sha256(source.git.encode()).hexdigest()[:24] + ".git")
    with _locked(mirror.with_suffix(".lock")):
        git = _Git(source.git, where)
        if not (mirror / "HEAD").is_file():
            mirror.parent.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=".clone-", dir=mirror.parent))
            try:
                git.run(
                    ["clone", "--mirror", "--quiet", "--", source.git, str(scratch)], GIT_TIMEOUT
                )
                scratch.rename(mirror)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        elif not (re.fullmatch(r"[0-9a-f]{40}", source.ref) and git.commit(mirror, source.ref)):
            git.run(
                ["--git-dir", str(mirror), "fetch", "--prune", "--quiet", "origin"], GIT_TIMEOUT
            )
        commit = git.commit(mirror, source.ref)
        if commit is None:
            refs = git.out(["--git-dir", str(mirror), "for-each-ref", "--format=%(refname:short)"])
            names = refs.split()
            raise SourceError(
                f"{where}: ref {source.ref!r} names no commit there (no such tag, branch or "
                f"commit){did_you_mean(source.ref, names)}; the repository has "
                f"{len(names)} refs{_why_no_commit(git, mirror, source.ref)}"
            )
        described = git.out(
            ["--git-dir", str(mirror), "describe", "--tags", "--match", "v[0-9]*", commit],
            check=False,
        )
        committed = git.out(
            ["--git-dir", str(mirror), "show", f"{commit}:{version_file}"], check=False
        )
    at = f"{where} at {source.ref} ({commit[:12]})"
    version = (
        _version(described, committed, at)
        if version_file == ".version"
        else exchange_version(committed, at)
    )
    by_describe = version_file == ".version" and bool(described.strip())
    return ResolvedSource(
        kind="git",
        project="gnunet" if version_file == ".version" else "taler",
        location=source.git,
        ref=source.ref,
        commit=commit,
        dirty=False,
        version=version,
        described=by_describe,
        origin=mirror,
    )


def _why_no_commit(git: _Git, mirror: Path, ref: str) -> str:
    """More on a ref that names no commit: a short commit id several objects start
    with, or a shallow repository whose history is cut ("" when neither)."""
    if re.fullmatch(r"[0-9a-f]{4,39}", ref):
        found = git.out(
            ["--git-dir", str(mirror), "rev-parse", "--disambiguate=" + ref], check=False
        ).split()
        if len(found) > 1:
            return (
                f"; {len(found)} objects start with {ref}: give more digits of the commit "
                "(git log --format=%H shows them whole)"
            )
    if (mirror / "shallow").is_file():
        return (
            "; the repository is shallow (cloned with --depth), so older commits are not "
            "in it: give a full clone (git fetch --unshallow)"
        )
    return ""


@dataclass(frozen=True)
class CommitInfo:
    """One commit of a range (:func:`commit_range`): full id, parents' ids, subject, and
    the committer date (ISO 8601); ``boundary``: outside ``good..bad``, a parent of a
    commit in it; ``parent_count``: how many parents it has in git."""

    commit: str
    parents: tuple[str, ...]
    subject: str
    date: str
    boundary: bool = False
    parent_count: int = 0


MAX_RANGE: Final = 20_000
"""The most commits :func:`commit_range` lists (GNUnet has about 33 000 in all)."""


def commit_range(url: str, good: str, bad: str, work_dir: Path) -> list[CommitInfo]:
    """The commits of ``good..bad`` in the repository ``url``, ``good`` first, then the
    parents outside the range of commits in it (``boundary``: ancestors of ``good`` other
    than itself, on branches forked before it and merged later; their own parents left
    out), then every commit that is an ancestor of ``bad`` and not of ``good``, parents
    before children (``git log --topo-order --reverse``), ``bad`` last.

    The repository is read through the same bare mirror as a ``git:`` source
    (``<work_dir>/gnunet-src/git``, fetched when a ref is not there yet).

    Raises:
        SourceError: a ref names no commit, ``good`` is not an ancestor of ``bad``, the
            range is empty or longer than :data:`MAX_RANGE`, or git fails.
    """
    ends = [resolve_gnunet(GnunetGit(git=url, ref=ref), work_dir) for ref in (good, bad)]
    mirror = ends[1].origin
    good_c, bad_c = ends[0].commit, ends[1].commit
    assert mirror is not None and good_c is not None and bad_c is not None
    where = f"git {url}"
    git = _Git(url, where)
    if good_c == bad_c:
        raise SourceError(
            f"{where}: --good {good} and --bad {bad} are the same commit ({good_c[:12]}); "
            "give two commits, good an ancestor of bad"
        )
    with _locked(mirror.with_suffix(".lock")):
        if not _is_ancestor(git, mirror, good_c, bad_c):
            raise SourceError(_not_a_line(git, mirror, (good, good_c), (bad, bad_c), where))
        listing = git.out(
            [
                "--git-dir", str(mirror), "log", "--topo-order", "--reverse",
                "--format=%H%x00%P%x00%cI%x00%s", f"{good_c}..{bad_c}",
            ],
            raw=True,
        )  # fmt: skip
        head = git.out(
            ["--git-dir", str(mirror), "log", "-1", "--format=%H%x00%P%x00%cI%x00%s", good_c],
            raw=True,
        )
    lines = [line for line in listing.splitlines() if line]
    if len(lines) > MAX_RANGE:
        raise SourceError(f"{where}: {good}..{bad} has more than {MAX_RANGE} commits")
    ranged = [_commit_line(line) for line in [head.strip("\n"), *lines]]
    inside = {c.commit for c in ranged}
    outside = list(dict.fromkeys(p for c in ranged[1:] for p in c.parents if p not in inside))
    boundary: list[CommitInfo] = []
    if outside:
        with _locked(mirror.with_suffix(".lock")):
            shown = git.out(
                ["--git-dir", str(mirror), "log", "--no-walk=unsorted",
                 "--format=%H%x00%P%x00%cI%x00%s", *outside],
                raw=True,
            )  # fmt: skip
        boundary = [
            dataclasses.replace(_commit_line(line), parents=(), boundary=True)
            for line in shown.splitlines()
            if line
        ]
    out = [dataclasses.replace(ranged[0], parents=()), *boundary]
    known = {c.commit for c in out}
    for c in ranged[1:]:
        # Every parent is in the graph now: the range's own, or a boundary commit.
        out.append(dataclasses.replace(c, parents=tuple(p for p in c.parents if p in known)))
        known.add(c.commit)
    if len(out) > MAX_RANGE:
        raise SourceError(
            f"{where}: {good}..{bad} has more than {MAX_RANGE} commits with the parents "
            "outside it that its merges bring"
        )
    if len(out) < 2 or out[-1].commit != bad_c:
        raise SourceError(f"{where}: {good}..{bad} lists no commits ending at {bad_c[:12]}")
    return out


def _commit_line(line: str) -> CommitInfo:
    """One ``%H%x00%P%x00%cI%x00%s`` line of git log as a commit (all its parents)."""
    commit, parents, date, subject = [*line.split("\x00"), "", "", ""][:4]
    # A subject is the author's text: printable characters only, bounded.
    shown = "".join(c if c.isprintable() else "?" for c in subject)[:200]
    ids = tuple(parents.split())
    return CommitInfo(commit, ids, shown, date, parent_count=len(ids))


def _not_a_line(
    git: _Git, mirror: Path, good: tuple[str, str], bad: tuple[str, str], where: str
) -> str:
    """Why ``good`` (ref, commit) is not an ancestor of ``bad``, and what to give instead:
    the ends swapped, histories with no common commit, or branches that diverged (then
    their merge base is the good end ``git bisect`` would test first)."""
    (g, g_c), (b, b_c) = good, bad
    ends = f"--good {g} ({g_c[:12]}) is not an ancestor of --bad {b} ({b_c[:12]})"
    if (mirror / "shallow").is_file():
        return (
            f"{where}: {ends}, as far as this shallow repository (cloned with --depth) "
            "shows: its history is cut; give a full clone (git fetch --unshallow)"
        )
    if _is_ancestor(git, mirror, b_c, g_c):
        return f"{where}: {ends}: the ends are swapped; give --good {b} --bad {g}"
    base = git.out(["--git-dir", str(mirror), "merge-base", g_c, b_c], check=False)
    if not base:
        return (
            f"{where}: {ends}: they share no commit (unrelated histories); give two "
            "commits of one history, good an ancestor of bad"
        )
    return (
        f"{where}: {ends}: they diverged at {base[:12]} (their merge base); give --good "
        f"{base[:12]}, or a commit between it and bad, to bisect bad's side"
    )


def _is_ancestor(git: _Git, mirror: Path, a: str, b: str) -> bool:
    try:
        git.run(["--git-dir", str(mirror), "merge-base", "--is-ancestor", a, b])
    except SourceError:
        return False
    return True


def _resolve_path(source: GnunetPath) -> ResolvedSource:
    directory = source.directory
    where = f"path {directory}"
    if not directory.is_dir():
        raise SourceError(f"{where}: no such directory; give a GNUnet source tree")
    state = working_tree(directory)
    tree_sha256 = hash_tree(directory, state.files, where)
    if state.git:
        git = _Git(str(directory), where, tree=directory)
        described = git.out(
            ["-C", str(directory), "describe", "--tags", "--match", "v[0-9]*", "HEAD"],
            check=False,
        )
        if described and state.dirty:
            described += "-dirty"
    else:
        described = ""
    on_disk = _small_text(directory / ".version", MAX_VERSION_BYTES, where)
    return ResolvedSource(
        kind="path",
        location=str(directory),
        ref=state.branch,
        commit=state.head,
        tree_sha256=tree_sha256,
        dirty=state.dirty,
        version=_version(described, on_disk, where),
        described=bool(described.strip()),
        origin=directory,
    )


def _small_text(path: Path, limit: int, where: str) -> str:
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


def _version(described: str, dot_version: str, where: str) -> str:
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


# ---------------------------------------------------------------- tarballs


def verify_sha256(f: IO[bytes], expected: str, where: str) -> None:
    """Hash ``f`` from where it stands to its end and compare with ``expected``.

    Raises:
        SourceError: they differ; the message names both.
    """
    h = hashlib.sha256()
    while chunk := f.read(1024 * 1024):
        h.update(chunk)
    if h.hexdigest() != expected:
        raise SourceError(
            f"{where}: sha256 differs: expected {expected} (as pinned), got {h.hexdigest()}; "
            "nothing was built. Pin the sha256 of the file you mean (sha256sum), or fetch "
            "the file the pin names"
        )


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects to http(s) only (urllib's own also follows ftp)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if not newurl.startswith(("http://", "https://")):
            raise urllib.error.HTTPError(newurl, code, "redirect to a non-http(s) URL", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch_tarball(url: str, sha256: str, cache: Path, max_bytes: int = MAX_TARBALL_BYTES) -> Path:
    """The tarball at ``url`` in ``cache`` (named by its sha256), downloaded if not there.

    At most ``max_bytes`` are read; the file is checked against ``sha256`` before it
    takes its name, so a cached file is always a checked one.

    Raises:
        SourceError: the download fails, is larger than ``max_bytes``, or its sha256
            differs (naming both).
    """
    where = f"tarball {url}"
    final = cache / f"{sha256}.tarball"
    with _locked(cache / f"{sha256}.lock"):
        if final.is_file():
            with final.open("rb") as f:
                verify_sha256(f, sha256, f"{where} (cached as {final})")
            return final
        cache.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=".download-", dir=cache)
        try:
            with os.fdopen(fd, "w+b") as out:
                _download(url, out, max_bytes, where)
                out.seek(0)
                verify_sha256(out, sha256, where)
            os.replace(partial, final)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)
    return final


def _download(url: str, out: IO[bytes], max_bytes: int, where: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"not an http(s) URL: {quote(url)}")
    opener = urllib.request.build_opener(_HttpOnlyRedirects())
    request = urllib.request.Request(url, headers={"User-Agent": "archbench"})  # noqa: S310  # http(s), checked above
    try:
        with opener.open(request, timeout=DOWNLOAD_TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) > max_bytes:
                raise SourceError(
                    f"{where}: the server announces {int(length)} bytes, more than the "
                    f"{max_bytes} a GNUnet tarball may have"
                )
            total = 0
            while chunk := response.read(1024 * 1024):
                total += len(chunk)
                if total > max_bytes:
                    raise SourceError(
                        f"{where}: more than {max_bytes} bytes; that is no GNUnet tarball"
                    )
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise SourceError(f"{where}: the download failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SourceError(f"{where}: the download failed: {quote(str(reason), 200)}") from None


def tarball_version(path: Path, where: str) -> str:
    """The ``.version`` at the top of the tarball (or of its one top folder), checked.

    The whole archive is read first, streaming (:func:`tar_members`): a damaged one is
    refused as damaged, never read as one without a ``.version``.

    Raises:
        SourceError: not a tar archive, a damaged one, or no usable ``.version``.
    """
    found: str | None = None
    with path.open("rb") as f:
        for member, data in tar_members(f, where):
            parts = member.name.strip("/").split("/")
            if found is None and parts[-1] == ".version" and len(parts) <= 2 and member.isfile():
                head = data.read(MAX_VERSION_BYTES) if data is not None else b""
                found = head.decode(errors="replace")
    if found is None:
        raise SourceError(
            f"{where}: no .version at its top; GNUnet's release tarballs carry one, and "
            "without it GNUnet calls itself 'unknown' (scripts/get_version.sh)"
        )
    return _version("", found, where)


COMPRESSIONS: Final = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
"""Magic numbers of the compressions a ``tarball:`` source may have (else a plain tar)."""
_DAMAGE: Final = (
    tarfile.TarError,
    OSError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    zstandard.ZstdError,
)
"""What the decompressors and tarfile raise on damaged input (gzip's and bzip2's own
errors are OSError, xz's LZMAError, zstd's ZstdError, a torn deflate stream zlib.error)."""


def _decompressed(f: IO[bytes]) -> tuple[io.BufferedIOBase | IO[bytes], str]:
    """``f`` decompressed by what its first bytes say, and the compression's name."""
    if not isinstance(f, io.BufferedReader):
        f = io.BufferedReader(f)  # type: ignore[type-var]  # any binary stream
    magic = f.peek(6)[:6]  # a pipe (git archive) cannot seek back
    for prefix, name in COMPRESSIONS:
        if magic.startswith(prefix):
            if name == "gzip":
                return gzip.GzipFile(fileobj=f, mode="rb"), name
            if name == "bzip2":
                return bz2.BZ2File(f, "rb"), name
            if name == "xz":
                return lzma.LZMAFile(f, "rb"), name
            reader = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)
            return reader, name
    return f, "uncompressed"


def tar_members(f: IO[bytes], where: str) -> Iterator[tuple[tarfile.TarInfo, IO[bytes] | None]]:
    """The members of the tar stream ``f`` (plain, gzip, bzip2, xz or zstd), in order,
    each with its data (to be read before the next), and then a check of the rest.

    tarfile ends its iteration quietly at a damaged header after the first; so the
    stream is then read to its end, in 1 MiB chunks: what follows the last member must
    be the tar's zero blocks, and the decompressor's own check (gzip's CRC, xz's and
    zstd's checksums) must pass. At most :data:`MAX_TREE_FILES` members and
    :data:`MAX_TREE_BYTES` bytes (as the headers declare them) are accepted, and at most
    :data:`MAX_PACKED_BYTES` bytes of regular files (what a build context holds).

    Raises:
        SourceError: a damaged archive ("not a tar archive that can be read: damaged
            (<compression>: ...)"), or one beyond the limits.
    """
    stream, kind = _decompressed(f)
    count = size = files = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                count += 1
                size += member.size
                if count > MAX_TREE_FILES or size > MAX_TREE_BYTES:
                    raise SourceError(
                        f"{where}: more than {MAX_TREE_FILES} files or {MAX_TREE_BYTES} bytes"
                    )
                files += member.size if member.isfile() else 0
                if files > MAX_PACKED_BYTES:
                    # Every file of a source goes into the image's build context, which
                    # holds at most MAX_PACKED_BYTES: refused by the headers, before a
                    # byte of it is unpacked (a decompression bomb fills no disk).
                    raise SourceError(
                        f"{where}: its files unpack to more than {MAX_PACKED_BYTES} bytes "
                        f"(by the sizes its headers declare, {quote(member.name, 120)} alone "
                        f"{member.size}); a GNUnet or Taler source is about 33 MB: this is "
                        "not a release tarball"
                    )
                yield member, tar.extractfile(member) if member.isfile() else None
            tail = 0
            while chunk := stream.read(1024 * 1024):
                tail += len(chunk)
                if chunk.count(0) != len(chunk):
                    raise tarfile.ReadError("data after the last member that is no tar header")
                if tail > MAX_TREE_BYTES:
                    raise tarfile.ReadError(f"more than {MAX_TREE_BYTES} bytes after its end")
        if count == 0:
            raise tarfile.ReadError("no member at all")
    except _DAMAGE as exc:
        raise SourceError(
            f"{where}: not a tar archive that can be read: damaged ({kind}: "
            f"{quote(str(exc), 200)}); fetch the release tarball again and pin its sha256"
        ) from None


# ---------------------------------------------------------------- working trees


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
    git = _Git(str(directory), where, tree=directory)
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
    (:func:`pack_build_tree`). Each file is then read streaming, in 1 MiB chunks, and
    no further than what is left of that bound (a file that grows is refused).

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
                    os.symlink(target, _inside(copy_to, name))
            elif stat.S_ISREG(st.st_mode):
                kind = "x" if st.st_mode & 0o111 else "f"
                # Checked again: the file may have grown since the first look.
                if size + st.st_size > MAX_PACKED_BYTES:
                    raise SourceError(_too_large(where, name, st.st_size, size + st.st_size))
                copy = _inside(copy_to, name) if copy_to is not None else None
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


def _inside(root: Path, name: str) -> Path:
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


# ---------------------------------------------------------------- build trees


def prepare_build_tree(resolved: ResolvedSource, dest: Path) -> BuildTree:
    """Copy ``resolved`` into ``dest`` (new or empty) as the build will see it.

    The source itself is never written to. See the module's docstring for what is
    added; :attr:`BuildTree.changes` lists it.

    Raises:
        SourceError: the tarball's sha256 or the working tree's hash changed since
            :func:`resolve_gnunet`, the tree is not GNUnet's, or it cannot be built as it is
            (an autotools tree without ``configure``).
        ValueError: ``resolved`` is the debian source (there is nothing to copy), or
            ``dest`` is not empty.
    """
    if resolved.kind == "debian" or resolved.origin is None or resolved.version is None:
        raise ValueError("the debian source has no tree to prepare")
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty")
    created = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        return _prepare(resolved, resolved.origin, resolved.version, dest)
    except BaseException:
        # A half-made tree must not be mistaken for a prepared one.
        if created:
            shutil.rmtree(dest, ignore_errors=True)
        else:
            for child in dest.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        raise


def _prepare(resolved: ResolvedSource, origin: Path, version: str, dest: Path) -> BuildTree:
    where = f"{resolved.kind} {resolved.location}"
    if resolved.kind == "tarball":
        assert resolved.sha256 is not None
        with origin.open("rb") as f:
            verify_sha256(f, resolved.sha256, where)
            f.seek(0)
            _unpack(f, dest, where, strip_top=True)
    elif resolved.kind == "git":
        assert resolved.commit is not None
        _export(origin, resolved.commit, dest, where)
    else:
        again = working_tree(origin)
        digest = hash_tree(origin, again.files, where, copy_to=dest)
        if digest != resolved.tree_sha256:
            raise SourceError(
                f"{where}: the tree changed while archbench copied it (hash "
                f"{resolved.tree_sha256} when resolved, {digest} as copied); run again"
            )
    built = resolved.build_version or version
    why = f" (the release tag of git describe's {version})" if built != version else ""
    return _finish(dest, built, where, why)


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


def _unpack(f: IO[bytes], dest: Path, where: str, strip_top: bool) -> None:
    """Extract the tar stream ``f`` (:func:`tar_members`: any compression a source may
    have, checked to its end, bounded) into ``dest`` as untrusted input, its one top
    folder stripped when ``strip_top``: regular files, folders and symbolic links whose
    target stays inside ``dest``; hard links become copies of an earlier member.

    The rules are those of tarfile's ``data`` filter (PEP 706): no absolute name, no
    ``..``, no link out of ``dest``, no device or FIFO, no set-id bits, owner not kept.
    They are applied here rather than through ``filter="data"`` because that filter came
    with Python 3.11.4, and Debian 12's own Python is 3.11.2 (archbench supports
    3.11.2 and later). No write follows a symbolic link: every file is created with
    ``O_NOFOLLOW | O_EXCL`` under a parent folder whose real path lies inside ``dest``.

    Raises:
        SourceError: a damaged archive, one beyond the limits, not one top folder
            (``strip_top``), or a member the rules refuse.
    """
    top: str | None = None
    root = os.path.realpath(dest)
    for member, data in tar_members(f, where):
        name = member.name.strip("/")
        linkname = member.linkname
        if strip_top:
            first, _, rest = name.partition("/")
            if top is None:
                top = first
            if first != top:
                raise SourceError(
                    f"{where}: not one top folder ({quote(top)} and {quote(first)}); GNUnet's "
                    "tarballs unpack into gnunet-VERSION/"
                )
            name = rest
            if member.islnk():
                linkname = linkname.partition("/")[2]
        if not name:
            continue
        try:
            _extract_member(member, data, name, linkname, root, where)
        except OSError as exc:
            raise SourceError(f"{where}: cannot unpack {quote(name, 120)}: {exc}") from None


def _below(root: str, path: str) -> bool:
    """Whether the real path ``path`` is ``root`` or lies below it (both real paths)."""
    return path == root or path.startswith(root + os.sep)


def _extract_member(
    member: tarfile.TarInfo,
    data: IO[bytes] | None,
    name: str,
    linkname: str,
    root: str,
    where: str,
) -> None:
    """One member of :func:`_unpack`, checked and written (see there for the rules);
    ``data`` is a regular file's content, streamed.

    Raises:
        SourceError: the rules refuse the member.
        OSError: writing failed.
    """

    def refuse(why: str) -> SourceError:
        return SourceError(f"{where}: refused member {quote(name, 120)}: {why}")

    parts = name.split("/")
    if name.startswith("/") or ".." in parts or "\0" in name:
        raise refuse("an absolute name or one with '..'")
    target = os.path.join(root, *[p for p in parts if p not in ("", ".")])
    parent = os.path.dirname(target)
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise refuse("not a file, folder or link (devices and FIFOs are not source)")
    os.makedirs(parent, exist_ok=True)
    if not _below(root, os.path.realpath(parent)):
        raise refuse("its folder is a link out of the tree")
    mode = member.mode & 0o755 if member.isdir() or member.mode & 0o100 else member.mode & 0o644
    if member.isdir():
        if os.path.lexists(target) and not os.path.isdir(target):
            raise refuse("a folder where a file or link was")
        os.makedirs(target, mode=0o755, exist_ok=True)
        os.chmod(target, mode | 0o700)
        return
    if member.issym():
        if os.path.isabs(linkname) or not _below(
            root, os.path.normpath(os.path.join(parent, linkname))
        ):
            raise refuse(f"a link to {quote(linkname, 120)}, outside the tree")
        os.symlink(linkname, target)
        return
    source: IO[bytes] | None = data
    if member.islnk():
        link_parts = linkname.strip("/").split("/")
        if ".." in link_parts or os.path.isabs(linkname):
            raise refuse(f"a hard link to {quote(linkname, 120)}, outside the tree")
        earlier = os.path.join(root, *link_parts)
        if not _below(root, os.path.realpath(earlier)) or not os.path.isfile(earlier):
            raise refuse(f"a hard link to {quote(linkname, 120)}, which is no earlier file")
        source = open(earlier, "rb")  # noqa: SIM115  # closed below
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(target, flags, 0o600)
    except FileExistsError:
        raise refuse("a second member of that name") from None
    with os.fdopen(fd, "wb") as out, contextlib.ExitStack() as stack:
        if source is not None:
            stack.enter_context(source)
            shutil.copyfileobj(source, out, 1024 * 1024)
        os.fchmod(out.fileno(), mode)


def _export(mirror: Path, commit: str, dest: Path, where: str) -> None:
    """``git archive`` of ``commit`` unpacked into ``dest`` (export-ignore applies, as in
    upstream's own tarballs)."""
    with subprocess.Popen(
        ["git", "--git-dir", str(mirror), "archive", "--format=tar", commit],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_git_env(),
    ) as proc:
        assert proc.stdout is not None
        try:
            _unpack(proc.stdout, dest, where, strip_top=False)
        finally:
            proc.stdout.close()
            _, err = proc.communicate(timeout=GIT_QUICK_TIMEOUT)
    if proc.returncode != 0:
        raise SourceError(f"{where}: git archive {commit} failed: {_last_line(err)}")


def _finish(dest: Path, version: str, where: str, why: str = "") -> BuildTree:
    changes: list[str] = []
    git_dir = dest / ".git"
    if git_dir.is_dir() and not git_dir.is_symlink():
        shutil.rmtree(git_dir)
        changes.append("removed .git (get_version.sh would run git describe)")
    elif git_dir.exists() or git_dir.is_symlink():
        git_dir.unlink()
        changes.append("removed .git (get_version.sh would run git describe)")
    if not (dest / SENTINEL_HEADER).is_file():
        raise SourceError(f"{where}: no {SENTINEL_HEADER}; this is not a GNUnet source tree")
    if (dest / "meson.build").is_file():
        build_system: BuildSystem = "meson"
    elif (dest / "configure").is_file():
        build_system = "autotools"
    elif (dest / "configure.ac").is_file():
        raise SourceError(
            f"{where}: an autotools tree without configure (a GNUnet before 0.21 from git) "
            "needs ./bootstrap first; build its release tarball instead"
        )
    else:
        raise SourceError(f"{where}: neither meson.build nor configure at the top")
    dot_version = dest / ".version"
    try:
        own: str | None = _small_text(dot_version, MAX_VERSION_BYTES, where).strip() or None
    except SourceError:
        own = None  # a .version that is no version: replaced below
    if own != version or dot_version.is_symlink():
        _write_new(dest, ".version", version + "\n")
        changes.append(f"wrote .version: {version}{why}")
    doc = dest / "doc" / "meson.build"
    handbook = dest / "doc" / "handbook" / "meson.build"
    if (
        build_system == "meson"
        and doc.is_file()
        and not doc.is_symlink()
        and not (handbook.exists() and not _leaves(dest, handbook))
        and HANDBOOK_SUBDIR.search(_small_text(doc, MAX_MESON_BYTES, where))
    ):
        _write_new(dest, "doc/handbook/meson.build", HANDBOOK_STUB)
        changes.append("added an empty doc/handbook/meson.build (the handbook submodule)")
    if build_system == "meson":
        _config_template(dest, changes)
        _data_stubs(dest, where, changes)
    return BuildTree(root=dest, build_system=build_system, version=version, changes=tuple(changes))


def _leaves(root: Path, path: Path) -> bool:
    """True when ``path`` resolves outside ``root`` (through a symlink on the way)."""
    resolved, base = path.resolve(), root.resolve()
    return resolved != base and base not in resolved.parents


def _write_new(root: Path, name: str, text: str) -> None:
    """Write ``text`` at ``root / name`` as a new file: no symlink on the way is followed
    (:func:`_inside`), and the file is created, never opened through a link."""
    path = _inside(root, name)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(text)


# ---------------------------------------------------------------- the exchange

TALER_SENTINEL: Final = "src/util/test_helper_rsa.c"
"""A file every exchange tree with the security-module benchmarks has (0.9 to 0.14)."""
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


def resolve_taler(source: GnunetSource, work_dir: Path) -> ResolvedSource:
    """What an exchange source (``taler:``) is, checked as :func:`resolve_gnunet` checks a
    GNUnet source (sha256 before anything else, a ref's commit, a tree's hash); the version
    is ``configure.ac``'s ``AC_INIT``. Downloads share ``<work_dir>/gnunet-src``.

    Raises:
        SourceError: as :func:`resolve_gnunet`; or no exchange ``configure.ac``.
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
        return _resolve_git(source, work_dir / SOURCE_DIR / "git", version_file="configure.ac")
    if isinstance(source, GnunetPath):
        directory = source.directory
        where = f"taler path {directory}"
        if not directory.is_dir():
            raise SourceError(f"{where}: no such directory; give a taler-exchange source tree")
        state = working_tree(directory)
        # Bounded, regular files only: a FIFO or a huge file at the name is refused, not read.
        text = _small_text(directory / "configure.ac", MAX_MESON_BYTES, where)[:20000]
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
        SourceError: as :func:`prepare_build_tree`, or the tree lacks the
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
                _unpack(f, dest, where, strip_top=True)
        elif resolved.kind == "git":
            assert resolved.commit is not None
            _export(resolved.origin, resolved.commit, dest, where)
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


def _config_template(dest: Path, changes: list[str]) -> None:
    """Write :data:`CONFIG_TEMPLATE` when meson needs it and the tree lacks it.

    Only the defines whose ``cdata`` key the top ``meson.build`` sets are written, so
    that meson fills every one; the version macros are required (drivers/blindsig.h
    reads them).
    """
    template = dest / CONFIG_TEMPLATE
    include_meson = template.parent / "meson.build"
    if template.exists() or template.is_symlink() or not include_meson.is_file():
        return
    if not CONFIG_TEMPLATE_USE.search(include_meson.read_text(errors="replace")):
        return
    top = (dest / "meson.build").read_text(errors="replace")
    lines = [
        f"#define {name} {value}"
        for name, value, key in CONFIG_TEMPLATE_DEFINES
        if re.search(rf"""cdata\.set(10)?\(\s*['"]{key}['"]""", top)
    ]
    template.write_text(CONFIG_TEMPLATE_STUB.format(defines="\n".join(lines)), encoding="ascii")
    changes.append(f"wrote {CONFIG_TEMPLATE} (absent from the tree; {len(lines)} defines)")


def _data_stubs(dest: Path, where: str, changes: list[str]) -> None:
    """Write an empty file for every data file a ``meson.build`` names that the tree lacks.

    A development snapshot of GNUnet's master (issue 29's ``gnunet-master-20260630``)
    was taken without files that have no extension or end in ``.conf``/``.in``
    (``README``, ``COPYING``, ``util.conf``, the tests' configurations,
    ``gnunet.conf.5.in``, scripts such as ``gnunet-bugreport``), and ``meson setup``
    refuses a tree where an ``install_data``/``configure_file`` input is missing. None
    of them is read by libgnunetutil's build; a complete tree (a release, a git checkout: it has the
    ``README`` its top ``meson.build`` installs) gets no stub.
    Literal names are seen here, and names computed in a ``foreach`` over a literal
    list (``'test_' + p + '.conf'``); ``build-libgnunetutil.sh`` stubs any other one
    as ``meson setup`` names it.

    Raises:
        SourceError: more than :data:`MAX_STUBS` would be needed (not a snapshot gap).
    """
    top = dest / "meson.build"
    top_names = [
        n.group(1)
        for call in STUB_INSTALL.finditer(top.read_text(errors="replace"))
        for n in STUB_LITERAL.finditer(STUB_KEYWORD.split(call.group(1))[0])
    ]
    # Only a tree that lacks the README its top meson.build installs: a release or a git
    # checkout has it, and stays as it is (meson.build files name data that conditional
    # branches never reach, e.g. data/gns-bcd.tex in 0.27.0).
    if "README" not in top_names or (dest / "README").exists():
        return
    written: list[str] = []
    for build_file in sorted(dest.rglob("meson.build")):
        if build_file.is_symlink() or not build_file.is_file():
            continue
        text = build_file.read_text(errors="replace")
        names = [m.group(1) for m in STUB_INPUT.finditer(text)] + [
            n.group(1)
            for call in STUB_INSTALL.finditer(text)
            # Positional arguments only: install_dir: get_option('bindir') names no file.
            for n in STUB_LITERAL.finditer(STUB_KEYWORD.split(call.group(1))[0])
        ]
        # input: 'test_' + p + '_peer1.conf' inside a foreach over a literal list.
        for loop in STUB_FOREACH.finditer(text):
            var, items, body = loop.groups()
            computed = re.compile(rf"input\s*:\s*'([\w.+-]*)'\s*\+\s*{var}\s*\+\s*'([\w.+-]*)'")
            for item in re.findall(r"'([\w.+-]+)'", items):
                for head, tail in computed.findall(body):
                    name = head + item + tail
                    if STUB_LITERAL.fullmatch(f"'{name}'"):
                        names.append(name)
        for name in names:
            target = build_file.parent / name
            if (
                target.exists()
                or target.is_symlink()
                or not target.parent.is_dir()
                or target.parent.is_symlink()
                or not target.resolve().is_relative_to(dest.resolve())
            ):
                continue
            if len(written) >= MAX_STUBS:
                raise SourceError(
                    f"{where}: more than {MAX_STUBS} files its meson.build files name are "
                    "missing; this is not a GNUnet tree archbench can build"
                )
            target.write_text(STUB_TEXT, encoding="ascii")
            written.append(str(target.relative_to(dest)))
    if written:
        shown = ", ".join(written[:5]) + (
            f" and {len(written) - 5} more" if len(written) > 5 else ""
        )
        changes.append(f"wrote {len(written)} empty data files meson needs ({shown})")


# ---------------------------------------------------------------- git, locks


QUIET_CONFIG: Final = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
)
"""Settings that would make git run a command the user's tree (its ``.git/config``)
names: a file-system monitor, hooks, a pager, credential helpers. Clean/smudge filters
have names of their own; :func:`_quiet_filters` turns each off."""


def _git_env(extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    # No prompt for credentials (a run must not hang), C messages for our errors, and
    # optional locks off: git status would otherwise refresh the user's index. Settings
    # go through GIT_CONFIG_COUNT (git 2.31+): no name needs quoting for a command line.
    config = [*QUIET_CONFIG, *extra]
    env = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "GIT_CONFIG_COUNT": str(len(config)),
    }
    for i, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def _quiet_filters(directory: Path) -> list[tuple[str, str]]:
    """Settings that turn off every ``filter.<name>`` the tree's config defines.

    ``git status`` runs a filter's ``clean`` command on files whose stat changed; the
    command is the tree's to name, so archbench runs none: each filter's ``clean``,
    ``smudge`` and ``process`` are set empty (git then runs no command) and
    ``required`` false. Reading the config runs nothing.
    """
    try:
        done = subprocess.run(
            [
                "git",
                "-C",
                str(directory),
                "config",
                "--null",
                "--name-only",
                "--get-regexp",
                r"^filter\.",
            ],
            capture_output=True,
            timeout=GIT_QUICK_TIMEOUT,
            env=_git_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    names = {
        key.decode(errors="surrogateescape")[len("filter.") :].rpartition(".")[0]
        for key in done.stdout.split(b"\0")
        if key.startswith(b"filter.")
    }
    out: list[tuple[str, str]] = []
    for name in sorted(n for n in names if n):
        out += [(f"filter.{name}.{k}", "") for k in ("clean", "smudge", "process")]
        out.append((f"filter.{name}.required", "false"))
    return out


def _last_line(err: bytes | str) -> str:
    """The line of git's message that says what went wrong: the first ``fatal:`` or
    ``error:`` line (git's last lines are advice), else the last line."""
    text = err.decode(errors="replace") if isinstance(err, bytes) else err
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    said = next((x for x in lines if x.startswith(("fatal:", "error:"))), None)
    return quote(said or (lines[-1] if lines else "no message"), 300)


class _Git:
    """git for one remote or tree: only the transport its URL needs, no prompts."""

    def __init__(self, url: str, where: str, tree: Path | None = None) -> None:
        self.where = where
        allow = ["-c", "protocol.allow=never", "-c", "protocol.https.allow=always"]
        if url.startswith("file://"):
            allow += ["-c", "protocol.file.allow=always"]
        self.prefix = ["git", *allow]
        # A user's working tree: none of the commands its config names is run.
        self.config = _quiet_filters(tree) if tree is not None else []

    def run(
        self, args: list[str], timeout: float = GIT_QUICK_TIMEOUT
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(
                [*self.prefix, *args],
                capture_output=True,
                timeout=timeout,
                env=_git_env(self.config),
                check=False,
            )
        except FileNotFoundError:
            raise SourceError(f"{self.where}: git is not installed (apt-get install git)") from None
        except subprocess.TimeoutExpired:
            raise SourceError(
                f"{self.where}: git {_verb(args)} took longer than {timeout:g} s"
            ) from None
        if done.returncode != 0:
            raise SourceError(f"{self.where}: git {_verb(args)} failed: {_last_line(done.stderr)}")
        return done

    def out(self, args: list[str], check: bool = True, raw: bool = False) -> str:
        """stdout of git ``args`` (stripped unless ``raw``); "" on failure when not ``check``."""
        try:
            done = self.run(args)
        except SourceError:
            if check:
                raise
            return ""
        text = done.stdout.decode(errors="surrogateescape")
        return text if raw else text.strip()

    def commit(self, mirror: Path, ref: str) -> str | None:
        """The commit ``ref`` names in ``mirror``, or None."""
        found = self.out(
            [
                "--git-dir",
                str(mirror),
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                f"{ref}^{{commit}}",
            ],
            check=False,
        )
        return found if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", found) else None


def _verb(args: Sequence[str]) -> str:
    """The git subcommand of ``args`` (after ``-C DIR`` / ``--git-dir DIR``)."""
    rest = list(args)
    while rest and rest[0] in ("-C", "--git-dir"):
        rest = rest[2:]
    return rest[0] if rest else "?"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (two builds resolving one source take turns)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
