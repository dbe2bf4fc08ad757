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
into the source), and an empty ``doc/handbook/meson.build`` where
``doc/meson.build`` needs it (0.24.3 and 0.27.0 have the handbook as a
submodule, which a plain clone or ``git archive`` lacks). The build system is
meson when ``meson.build`` is at the top, else autotools when ``configure`` is
(0.24 and later ship a ``configure`` that wraps meson, so ``configure`` alone
says nothing). A tarball is checked again as it is unpacked and a working tree
is hashed again as it is copied, so what is built is what was keyed.

Research behind these rules: ``/tmp/i20/API.md`` (issue 20), sections 2 and 3.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import http.client
import io
import os
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, Literal

from archbench.errors import SourceError
from archbench.inputs import check_gnunet_version, did_you_mean, quote
from archbench.matrix import GnunetDebian, GnunetGit, GnunetPath, GnunetSource, GnunetTarball

PREPARE_VERSION: Final = 1
"""Changes with what :func:`prepare_build_tree` adds to a tree, so that the content key
(and with it the image) changes too."""
MAX_TARBALL_BYTES: Final = 512 * 1024 * 1024
"""A downloaded tarball's cap; GNUnet's are 7 MB (``git archive``) to 30 MB (``make dist``)."""
MAX_TREE_BYTES: Final = 4 * 1024 * 1024 * 1024
"""What a tree may unpack or copy to, at most (GNUnet 0.27 is 33 MB)."""
MAX_TREE_FILES: Final = 500_000
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
    """The version ``.version`` holds in the build tree (None for debian)."""
    origin: Path | None = None
    """What the build tree is made from: the tarball file (a download's cached copy),
    the bare mirror, or the directory."""

    @property
    def content_key(self) -> str:
        """The source as the image's hash sees it: one line, the same for the same bytes."""
        if self.kind == "debian":
            return "gnunet debian"
        digest = {"tarball": self.sha256, "git": self.commit, "path": self.tree_sha256}[self.kind]
        return f"gnunet/{PREPARE_VERSION} {self.kind} {digest} version {self.version}"

    def provenance(self) -> dict[str, str | bool | None]:
        """What a result records about its libgnunetutil's source (JSON-ready).

        Keys: ``kind``, ``location`` (URL or path), ``ref``, ``commit``, ``sha256``,
        ``tree_sha256``, ``dirty``, ``version`` (of ``.version``; the version the
        library reports is the harness's to record).
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


def _resolve_git(source: GnunetGit, mirrors: Path) -> ResolvedSource:
    where = f"git {source.git}"
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
                f"{len(names)} refs"
            )
        described = git.out(
            ["--git-dir", str(mirror), "describe", "--tags", "--match", "v[0-9]*", commit],
            check=False,
        )
        committed = git.out(["--git-dir", str(mirror), "show", f"{commit}:.version"], check=False)
    version = _version(described, committed, f"{where} at {source.ref} ({commit[:12]})")
    return ResolvedSource(
        kind="git",
        location=source.git,
        ref=source.ref,
        commit=commit,
        dirty=False,
        version=version,
        origin=mirror,
    )


@dataclass(frozen=True)
class CommitInfo:
    """One commit of a range (:func:`commit_range`): full id, parents' ids, subject, and
    the committer date (ISO 8601)."""

    commit: str
    parents: tuple[str, ...]
    subject: str
    date: str


MAX_RANGE: Final = 20_000
"""The most commits :func:`commit_range` lists (GNUnet has about 33 000 in all)."""


def commit_range(url: str, good: str, bad: str, work_dir: Path) -> list[CommitInfo]:
    """The commits of ``good..bad`` in the repository ``url``, ``good`` first, then every
    commit that is an ancestor of ``bad`` and not of ``good``, parents before children
    (``git rev-list --topo-order --reverse``), ``bad`` last.

    The repository is read through the same bare mirror as a ``git:`` source
    (``<work_dir>/gnunet-src/git``, fetched when a ref is not there yet). Parents
    outside the range (ancestors of ``good``) are left out of ``parents``.

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
        raise SourceError(f"{where}: --good {good} and --bad {bad} are the same commit")
    with _locked(mirror.with_suffix(".lock")):
        if not _is_ancestor(git, mirror, good_c, bad_c):
            raise SourceError(
                f"{where}: --good {good} ({good_c[:12]}) is not an ancestor of --bad {bad} "
                f"({bad_c[:12]}); give an older commit as --good"
            )
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
    out: list[CommitInfo] = []
    inside: set[str] = set()
    for line in [head.strip("\n"), *listing.splitlines()]:
        if not line:
            continue
        commit, parents, date, subject = [*line.split("\x00"), "", "", ""][:4]
        kept = tuple(p for p in parents.split() if p in inside) if out else ()
        # A subject is the author's text: printable characters only, bounded.
        shown = "".join(c if c.isprintable() else "?" for c in subject)[:200]
        out.append(CommitInfo(commit, kept, shown, date))
        inside.add(commit)
        if len(out) > MAX_RANGE + 1:
            raise SourceError(f"{where}: {good}..{bad} has more than {MAX_RANGE} commits")
    if len(out) < 2 or out[-1].commit != bad_c:
        raise SourceError(f"{where}: {good}..{bad} lists no commits ending at {bad_c[:12]}")
    return out


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
        git = _Git(str(directory), where)
        described = git.out(
            ["-C", str(directory), "describe", "--tags", "--match", "v[0-9]*", "HEAD"],
            check=False,
        )
        if described and state.dirty:
            described += "-dirty"
    else:
        described = ""
    dot_version = directory / ".version"
    on_disk = dot_version.read_text(errors="replace")[:200] if dot_version.is_file() else ""
    return ResolvedSource(
        kind="path",
        location=str(directory),
        ref=state.branch,
        commit=state.head,
        tree_sha256=tree_sha256,
        dirty=state.dirty,
        version=_version(described, on_disk, where),
        origin=directory,
    )


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

    Raises:
        SourceError: not a tar archive, or no usable ``.version``.
    """
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                parts = member.name.strip("/").split("/")
                if parts[-1] == ".version" and len(parts) <= 2 and member.isfile():
                    f = tar.extractfile(member)
                    text = f.read(200).decode(errors="replace") if f is not None else ""
                    return _version("", text, where)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SourceError(
            f"{where}: not a tar archive that can be read (gzip, bzip2 or xz): "
            f"{quote(str(exc), 200)}"
        ) from None
    raise SourceError(
        f"{where}: no .version at its top; GNUnet's release tarballs carry one, and "
        "without it GNUnet calls itself 'unknown' (scripts/get_version.sh)"
    )


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
    git = _Git(str(directory), where)
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

    Raises:
        SourceError: a file cannot be read, or the tree is too large.
    """
    total = hashlib.sha256()
    size = 0
    for name in sorted(files, key=os.fsencode):
        path = directory / name
        try:
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                kind, digest = "l", hashlib.sha256(os.fsencode(target)).hexdigest()
                if copy_to is not None:
                    (copy_to / name).parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(target, copy_to / name)
            elif stat.S_ISREG(st.st_mode):
                kind = "x" if st.st_mode & 0o111 else "f"
                digest, n = _hash_file(path, copy_to / name if copy_to is not None else None)
                size += n
                if copy_to is not None:
                    os.chmod(copy_to / name, 0o755 if kind == "x" else 0o644)
            else:
                continue  # became a directory or vanished: not a file of the tree
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SourceError(f"{where}: cannot read {name}: {exc.strerror}") from None
        if size > MAX_TREE_BYTES:
            raise SourceError(f"{where}: more than {MAX_TREE_BYTES} bytes of files")
        total.update(os.fsencode(name) + b"\0" + f"{kind} {digest}\n".encode())
    return total.hexdigest()


def _hash_file(path: Path, copy: Path | None) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    with contextlib.ExitStack() as stack:
        src = stack.enter_context(path.open("rb"))
        out = None
        if copy is not None:
            copy.parent.mkdir(parents=True, exist_ok=True)
            out = stack.enter_context(copy.open("xb"))
        while chunk := src.read(1024 * 1024):
            h.update(chunk)
            n += len(chunk)
            if out is not None:
                out.write(chunk)
    return h.hexdigest(), n


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
    return _finish(dest, version, where)


def pack_build_tree(tree: BuildTree) -> bytes:
    """``tree`` as an uncompressed tar with one top folder ``src/``, the same bytes for the
    same files: names sorted, owner 0:0 without names, mtime 0, modes 0644/0755 (0755
    where the owner may execute), symlinks kept as links.

    Raises:
        SourceError: the tree holds something else than files, folders and symlinks, or
            more than :data:`MAX_TREE_FILES` entries or :data:`MAX_TREE_BYTES` bytes.
    """
    buffer = io.BytesIO()
    root = tree.root
    paths = sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix())
    if len(paths) > MAX_TREE_FILES:
        raise SourceError(f"build tree {root}: more than {MAX_TREE_FILES} entries")
    size = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(_tar_info("src", tarfile.DIRTYPE, 0o755))
        for path in paths:
            name = "src/" + path.relative_to(root).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                info = _tar_info(name, tarfile.SYMTYPE, 0o777)
                info.linkname = os.readlink(path)
                tar.addfile(info)
            elif stat.S_ISDIR(st.st_mode):
                tar.addfile(_tar_info(name, tarfile.DIRTYPE, 0o755))
            elif stat.S_ISREG(st.st_mode):
                size += st.st_size
                if size > MAX_TREE_BYTES:
                    raise SourceError(f"build tree {root}: more than {MAX_TREE_BYTES} bytes")
                info = _tar_info(name, tarfile.REGTYPE, 0o755 if st.st_mode & 0o100 else 0o644)
                info.size = st.st_size
                with path.open("rb") as f:
                    tar.addfile(info, f)
            else:
                raise SourceError(f"build tree {root}: {name} is not a file, folder or link")
    return buffer.getvalue()


def _tar_info(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _unpack(f: IO[bytes], dest: Path, where: str, strip_top: bool) -> None:
    """Extract the tar stream ``f`` into ``dest`` with tarfile's ``data`` filter (no
    absolute names, no ``..``, no links out of ``dest``, no devices), its one top
    folder stripped when ``strip_top``."""
    try:
        with tarfile.open(fileobj=f, mode="r|*") as tar:
            _extract(tar, dest, where, strip_top)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SourceError(f"{where}: cannot unpack: {quote(str(exc), 200)}") from None


def _extract(tar: tarfile.TarFile, dest: Path, where: str, strip_top: bool) -> None:
    top: str | None = None
    count = size = 0
    for member in tar:
        count += 1
        size += member.size
        if count > MAX_TREE_FILES or size > MAX_TREE_BYTES:
            raise SourceError(
                f"{where}: more than {MAX_TREE_FILES} files or {MAX_TREE_BYTES} bytes"
            )
        name = member.name.strip("/")
        if strip_top:
            first, _, rest = name.partition("/")
            if top is None:
                top = first
            if first != top:
                raise SourceError(
                    f"{where}: not one top folder ({top!r} and {first!r}); GNUnet's "
                    "tarballs unpack into gnunet-VERSION/"
                )
            name = rest
            if member.islnk():
                member = member.replace(linkname=member.linkname.partition("/")[2], deep=False)
        if not name:
            continue
        member = member.replace(name=name, deep=False)
        try:
            tar.extract(member, dest, filter="data")
        except tarfile.FilterError as exc:
            raise SourceError(f"{where}: refused member {quote(name, 120)}: {exc}") from None


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


def _finish(dest: Path, version: str, where: str) -> BuildTree:
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
    own = dot_version.read_text(errors="replace").strip() if dot_version.is_file() else None
    if own != version:
        if dot_version.is_symlink() or dot_version.exists():
            dot_version.unlink()
        dot_version.write_text(version + "\n", encoding="ascii")
        changes.append(f"wrote .version: {version}")
    doc = dest / "doc" / "meson.build"
    handbook = dest / "doc" / "handbook" / "meson.build"
    if (
        build_system == "meson"
        and doc.is_file()
        and not handbook.exists()
        and HANDBOOK_SUBDIR.search(doc.read_text(errors="replace"))
    ):
        handbook.parent.mkdir(parents=True, exist_ok=True)
        handbook.write_text(HANDBOOK_STUB, encoding="ascii")
        changes.append("added an empty doc/handbook/meson.build (the handbook submodule)")
    if build_system == "meson":
        _config_template(dest, changes)
        _data_stubs(dest, where, changes)
    return BuildTree(root=dest, build_system=build_system, version=version, changes=tuple(changes))


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


def _git_env() -> dict[str, str]:
    # No prompt for credentials (a run must not hang), C messages for our errors, and
    # optional locks off: git status would otherwise refresh the user's index.
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}


def _last_line(err: bytes | str) -> str:
    text = err.decode(errors="replace") if isinstance(err, bytes) else err
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return quote(lines[-1] if lines else "no message", 300)


class _Git:
    """git for one remote or tree: only the transport its URL needs, no prompts."""

    def __init__(self, url: str, where: str) -> None:
        self.where = where
        allow = ["-c", "protocol.allow=never", "-c", "protocol.https.allow=always"]
        if url.startswith("file://"):
            allow += ["-c", "protocol.file.allow=always"]
        self.prefix = ["git", *allow, "-c", "core.fsmonitor=false"]

    def run(
        self, args: list[str], timeout: float = GIT_QUICK_TIMEOUT
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(
                [*self.prefix, *args],
                capture_output=True,
                timeout=timeout,
                env=_git_env(),
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
