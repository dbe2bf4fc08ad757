"""Resolving a GNUnet source and preparing its build tree (issue 20), with real git and files.

Small synthetic trees (a ``meson.build``, ``doc/meson.build`` and the crypto header) keep
most tests fast; the real 0.27.0 tarball, unpacked once per session, and a bare git
repository made from it check the rest (``slow``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import io
import os
import re
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import GNUNET_027_SHA256, GNUNET_TARBALLS
from hypothesis import given
from hypothesis import strategies as st

from archbench.errors import SourceError
from archbench.matrix import GnunetDebian, GnunetGit, GnunetPath, GnunetTarball, parse_gnunet
from archbench.sources import ResolvedSource, prepare_build_tree, resolve_gnunet
from archbench.sources.gnunet import HANDBOOK_STUB
from archbench.sources.model import release_version
from archbench.sources.tarball import fetch_tarball

TARBALL_027 = GNUNET_TARBALLS / "gnunet-0.27.0.tar.gz"

FAKE = {
    "meson.build": "project('gnunet', 'c')\nsubdir('doc')\n",
    "doc/meson.build": "subdir('handbook')\nif false == get_option('exclude-manpages')\nendif\n",
    "src/include/gnunet_crypto_lib.h": "/* the crypto API */\n",
    "src/lib/util/crypto_cs.c": "int cs;\n",
    "scripts/get_version.sh": "#!/bin/sh\ncat .version\n",
    ".gitignore": "build/\n.version\n",
}


GIT_SETTINGS = [
    arg
    for setting in (
        "user.name=t",
        "user.email=t@example.invalid",
        "init.defaultBranch=master",
        "protocol.file.allow=always",
    )
    for arg in ("-c", setting)
]


def git(cwd: Path, *args: str) -> str:
    """git in ``cwd`` with a fixed identity and no user or system configuration."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_DATE": "2026-03-19T07:00:00Z",
        "GIT_COMMITTER_DATE": "2026-03-19T07:00:00Z",
    }
    done = subprocess.run(
        ["git", *GIT_SETTINGS, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def fake_tree(root: Path, version: str | None = "0.27.0", **extra: str) -> Path:
    """A tree with the files archbench looks at (``FAKE``), ``.version`` and ``extra``."""
    files = {**FAKE, **({".version": f"{version}\n"} if version else {}), **extra}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "scripts/get_version.sh").chmod(0o755)
    return root


def tarball(path: Path, tree: Path, top: str = "gnunet-0.27.0") -> str:
    """Pack ``tree`` as ``path`` under the folder ``top``; its sha256."""
    with tarfile.open(path, "w:gz") as tar:
        tar.add(tree, arcname=top)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def repo(root: Path, tag: str | None = "v0.27.0") -> Path:
    """``fake_tree`` without ``.version`` committed (and tagged) in a new repository."""
    fake_tree(root, version=None)
    git(root, "init", "-q")
    git(root, "add", "-A", "-f")
    git(root, "commit", "-q", "-m", "release")
    if tag:
        git(root, "tag", "-a", "-m", tag, tag)
    return root


def snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under ``root`` (``.git`` included): mode, mtime and bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            out[str(path.relative_to(root))] = (st.st_mode, st.st_mtime_ns, path.read_bytes())
    return out


# ---------------------------------------------------------------- path: working trees


def test_a_changed_file_changes_the_hash_and_an_ignored_file_does_not(tmp_path: Path) -> None:
    tree = repo(tmp_path / "src")
    work = tmp_path / "work"
    source = GnunetPath(path=str(tree))
    first = resolve_gnunet(source, work)
    assert first.kind == "path" and first.dirty is False and first.ref == "master"
    assert first.commit == git(tree, "rev-parse", "HEAD") and first.version == "0.27.0"
    before = snapshot(tree)

    (tree / "build").mkdir()
    (tree / "build" / "libgnunetutil.so").write_bytes(b"\x7fELF")
    (tree / ".version").write_text("0.27.0\n", encoding="utf-8")  # ignored, as upstream's
    assert resolve_gnunet(source, work) == first

    (tree / "src/lib/util/crypto_cs.c").write_text("int cs = 1;\n", encoding="utf-8")
    changed = resolve_gnunet(source, work)
    assert changed.tree_sha256 != first.tree_sha256 and changed.dirty is True
    assert changed.version == "0.27.0-dirty"
    assert changed.content_key != first.content_key

    (tree / "src/lib/util/crypto_cs.c").write_text("int cs;\n", encoding="utf-8")
    assert (
        resolve_gnunet(source, work).tree_sha256 == first.tree_sha256
    )  # the content, not the time

    (tree / "src/lib/util/new.c").write_text("int n;\n", encoding="utf-8")  # untracked
    untracked = resolve_gnunet(source, work)
    assert untracked.tree_sha256 != first.tree_sha256 and untracked.dirty is True
    (tree / "src/lib/util/new.c").unlink()

    (tree / "src/lib/util/crypto_cs.c").chmod(0o755)
    assert resolve_gnunet(source, work).tree_sha256 != first.tree_sha256
    (tree / "src/lib/util/crypto_cs.c").chmod(0o644)

    (tree / "src/lib/util/crypto_cs.c").unlink()  # deleted but still in the index
    assert resolve_gnunet(source, work).tree_sha256 != first.tree_sha256
    (tree / "src/lib/util/crypto_cs.c").write_text("int cs;\n", encoding="utf-8")

    after = {k: v for k, v in snapshot(tree).items() if not k.startswith("build/")}
    after.pop(".version")
    # Nothing archbench ran wrote into the tree: not a file, not git's index.
    assert {k: v[2] for k, v in after.items()} == {k: v[2] for k, v in before.items()}
    assert after[".git/index"] == before[".git/index"]
    assert not (work / "gnunet-src").exists()


def test_without_git_every_regular_file_counts(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "src", build="x")
    (tmp_path / "src" / "build.d").mkdir()
    first = resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
    assert (first.dirty, first.commit, first.ref, first.version) == (None, None, None, "0.27.0")
    (tree / "build.d" / "x.o").write_bytes(b"\0")  # no git: nothing is ignored
    assert resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work") != first
    os.symlink("README", tree / "README.md")
    assert resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work") != first


def test_a_path_needs_a_directory_and_a_version(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"path .*/nope: no such directory"):
        resolve_gnunet(GnunetPath(path=str(tmp_path / "nope")), tmp_path)
    tree = fake_tree(tmp_path / "src", version=None)
    with pytest.raises(SourceError, match=r"no tag v\* is reachable and there is no .version"):
        resolve_gnunet(GnunetPath(path=str(tree)), tmp_path)
    (tree / ".version").write_text("unknown\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"GNUnet version 'unknown' is not allowed"):
        resolve_gnunet(GnunetPath(path=str(tree)), tmp_path)


def test_a_path_is_copied_without_git_and_with_what_the_build_needs(tmp_path: Path) -> None:
    tree = repo(tmp_path / "src", tag="v0.24.3")
    (tree / "build").mkdir()
    (tree / "build" / "junk").write_text("x", encoding="utf-8")
    (tree / "src/lib/util/wip.c").write_text("int wip;\n", encoding="utf-8")
    before = snapshot(tree)
    resolved = resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
    built = prepare_build_tree(resolved, tmp_path / "b")
    # The source is described as it is; the tree builds its release tag (build_version).
    assert resolved.version == "0.24.3-dirty" and resolved.build_version == "0.24.3"
    assert built.build_system == "meson" and built.version == "0.24.3"
    assert (tmp_path / "b/.version").read_text(encoding="ascii") == "0.24.3\n"
    assert (tmp_path / "b/doc/handbook/meson.build").read_text(encoding="ascii") == HANDBOOK_STUB
    assert (tmp_path / "b/src/lib/util/wip.c").is_file()  # untracked work is built
    assert not (tmp_path / "b/.git").exists() and not (tmp_path / "b/build").exists()
    assert os.access(tmp_path / "b/scripts/get_version.sh", os.X_OK)
    assert built.changes == (
        "wrote .version: 0.24.3 (the release tag of git describe's 0.24.3-dirty)",
        "added an empty doc/handbook/meson.build (the handbook submodule)",
    )
    assert snapshot(tree) == before


def test_a_tree_that_changes_before_it_is_copied_is_refused(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "src")
    resolved = resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
    (tree / "src/lib/util/crypto_cs.c").write_text("int changed;\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"the tree changed while archbench copied it"):
        prepare_build_tree(resolved, tmp_path / "b")


# ---------------------------------------------------------------- tarballs


def test_a_wrong_sha256_is_refused_naming_expected_and_actual(tmp_path: Path) -> None:
    path = tmp_path / "g.tar.gz"
    actual = tarball(path, fake_tree(tmp_path / "t"))
    with pytest.raises(SourceError) as info:
        resolve_gnunet(GnunetTarball(tarball=str(path), sha256="0" * 64), tmp_path / "work")
    msg = str(info.value)
    assert msg.startswith(f"tarball {path}: sha256 differs: expected {'0' * 64} (as pinned), ")
    assert f"got {actual}; nothing was built" in msg
    with pytest.raises(SourceError, match=r"g.tgz: no such file"):
        resolve_gnunet(GnunetTarball(tarball=str(tmp_path / "g.tgz"), sha256=actual), tmp_path)


def test_a_tarball_unpacks_into_a_build_tree_and_is_checked_again(tmp_path: Path) -> None:
    path = tmp_path / "g.tar.gz"
    sha = tarball(path, fake_tree(tmp_path / "t", version="0.22.2"))
    resolved = resolve_gnunet(GnunetTarball(tarball=str(path), sha256=sha), tmp_path / "work")
    assert (resolved.version, resolved.sha256, resolved.origin) == ("0.22.2", sha, path)
    built = prepare_build_tree(resolved, tmp_path / "b")
    assert (tmp_path / "b/meson.build").is_file() and built.version == "0.22.2"
    assert built.changes == ("added an empty doc/handbook/meson.build (the handbook submodule)",)
    with pytest.raises(ValueError, match="is not empty"):
        prepare_build_tree(resolved, tmp_path / "b")
    tarball(path, fake_tree(tmp_path / "t", version="0.22.3"))  # replaced after resolve
    with pytest.raises(SourceError, match=r"sha256 differs"):
        prepare_build_tree(resolved, tmp_path / "c")


def test_a_tarball_without_version_or_with_an_escaping_member_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.tar.gz"
    sha = tarball(path, fake_tree(tmp_path / "t", version=None))
    with pytest.raises(SourceError, match=r"no .version at its top"):
        resolve_gnunet(GnunetTarball(tarball=str(path), sha256=sha), tmp_path)
    (tmp_path / "x.tar.gz").write_bytes(b"not a tarball")
    sha = hashlib.sha256(b"not a tarball").hexdigest()
    with pytest.raises(SourceError, match=r"not a tar archive that can be read"):
        resolve_gnunet(GnunetTarball(tarball=str(tmp_path / "x.tar.gz"), sha256=sha), tmp_path)

    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as tar:
        for name, data in ((".version", b"0.27.0\n"), ("../../escaped", b"x")):
            info = tarfile.TarInfo(f"gnunet-0.27.0/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    sha = hashlib.sha256(evil.read_bytes()).hexdigest()
    resolved = resolve_gnunet(GnunetTarball(tarball=str(evil), sha256=sha), tmp_path / "work")
    with pytest.raises(SourceError, match=r"refused member '../../escaped'"):
        prepare_build_tree(resolved, tmp_path / "b" / "c")
    assert not (tmp_path / "escaped").exists()


def test_what_is_not_gnunet_or_not_buildable_is_refused(tmp_path: Path) -> None:
    for i, (extra, remove, expect) in enumerate(
        (
            ({}, "src/include/gnunet_crypto_lib.h", "not a GNUnet source tree"),
            ({"configure.ac": "AC_INIT\n"}, "meson.build", "needs ./bootstrap first"),
            ({}, "meson.build", "neither meson.build nor configure"),
        )
    ):
        tree = fake_tree(tmp_path / f"t{i}", **extra)
        (tree / remove).unlink()
        resolved = resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
        with pytest.raises(SourceError, match=expect):
            prepare_build_tree(resolved, tmp_path / f"b{i}")
        assert not (tmp_path / f"b{i}").exists()  # a failed preparation leaves nothing


def test_autotools_and_the_meson_wrapper_are_told_apart_by_meson_build(tmp_path: Path) -> None:
    # 0.24 and later ship a configure that wraps meson: meson.build decides.
    wrapper = fake_tree(tmp_path / "w", configure="#!/bin/sh\npkg_name=gnunet\n")
    built = prepare_build_tree(
        resolve_gnunet(GnunetPath(path=str(wrapper)), tmp_path), tmp_path / "b1"
    )
    assert built.build_system == "meson"
    auto = fake_tree(tmp_path / "a", version="0.20.0", configure="#!/bin/sh\n")
    (auto / "meson.build").unlink()
    built = prepare_build_tree(
        resolve_gnunet(GnunetPath(path=str(auto)), tmp_path), tmp_path / "b2"
    )
    assert built.build_system == "autotools" and built.changes == ()
    assert not (tmp_path / "b2/doc/handbook").exists()


def test_a_git_folder_inside_a_tarball_is_removed(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "t")
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/master\n", encoding="utf-8")
    path = tmp_path / "g.tar.gz"
    sha = tarball(path, tree)
    built = prepare_build_tree(
        resolve_gnunet(GnunetTarball(tarball=str(path), sha256=sha), tmp_path), tmp_path / "b"
    )
    assert not (tmp_path / "b/.git").exists()
    assert built.changes[0] == "removed .git (get_version.sh would run git describe)"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_dir(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served over http on 127.0.0.1, and its URL."""
    root = tmp_path / "www"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_http_tarball_is_downloaded_checked_and_cached(
    tmp_path: Path, http_dir: tuple[Path, str]
) -> None:
    root, url = http_dir
    sha = tarball(root / "g.tar.gz", fake_tree(tmp_path / "t"))
    work = tmp_path / "work"
    with pytest.raises(SourceError, match=r"sha256 differs: expected 0{64}"):
        resolve_gnunet(parse_gnunet(f"{url}/g.tar.gz@sha256:{'0' * 64}"), work)
    assert not any((work / "gnunet-src" / "tarballs").glob("*.tarball"))
    resolved = resolve_gnunet(parse_gnunet(f"{url}/g.tar.gz@sha256:{sha}"), work)
    cached = work / "gnunet-src" / "tarballs" / f"{sha}.tarball"
    assert resolved.origin == cached and resolved.location == f"{url}/g.tar.gz"
    assert resolved.version == "0.27.0" and resolved.provenance()["location"] == f"{url}/g.tar.gz"
    (root / "g.tar.gz").unlink()  # the cache serves it now
    assert resolve_gnunet(parse_gnunet(f"{url}/g.tar.gz@sha256:{sha}"), work) == resolved
    with pytest.raises(SourceError, match=r"the download failed: HTTP 404"):
        resolve_gnunet(parse_gnunet(f"{url}/none.tar.gz@sha256:{'1' * 64}"), work)
    (root / "big").write_bytes(b"x" * 4096)
    with pytest.raises(SourceError, match=r"more than the 1000 a GNUnet tarball may have"):
        fetch_tarball(f"{url}/big", "2" * 64, tmp_path / "cache", max_bytes=1000)
    with pytest.raises(SourceError, match=r"the download failed"):
        fetch_tarball("http://127.0.0.1:9/g.tgz", "3" * 64, tmp_path / "cache")


# ---------------------------------------------------------------- git


def test_a_ref_resolves_in_a_mirror_and_the_tag_v_wins(tmp_path: Path) -> None:
    src = repo(tmp_path / "src")
    git(src, "tag", "last-gnunet-0.20-compatible")  # what get_version.sh might pick
    (src / "src/lib/util/crypto_cs.c").write_text("int cs2;\n", encoding="utf-8")
    git(src, "commit", "-q", "-a", "-m", "after the release")
    git(tmp_path, "clone", "-q", "--bare", "src", "bare.git")
    bare = tmp_path / "bare.git"
    before = snapshot(bare)
    url = f"file://{bare}"
    work = tmp_path / "work"

    released = resolve_gnunet(GnunetGit(git=url, ref="v0.27.0"), work)
    assert released.commit == git(bare, "rev-parse", "v0.27.0^{commit}")
    assert (released.version, released.dirty, released.ref) == ("0.27.0", False, "v0.27.0")
    head = resolve_gnunet(GnunetGit(git=url, ref="master"), work)
    short = git(bare, "rev-parse", "--short", "master")
    assert head.commit == git(bare, "rev-parse", "master") and head.version == f"0.27.0-1-g{short}"
    by_commit = resolve_gnunet(GnunetGit(git=url, ref=released.commit or ""), work)
    assert by_commit.commit == released.commit and by_commit.version == "0.27.0"
    assert released.origin == head.origin and released.origin is not None
    assert released.origin.is_relative_to(work / "gnunet-src" / "git")
    with pytest.raises(
        SourceError, match=r"ref 'v0.27.1' names no commit there .*did you mean 'v0.27.0'"
    ):
        resolve_gnunet(GnunetGit(git=url, ref="v0.27.1"), work)

    built = prepare_build_tree(released, tmp_path / "b")
    assert (tmp_path / "b/.version").read_text(encoding="ascii") == "0.27.0\n"
    assert (tmp_path / "b/src/lib/util/crypto_cs.c").read_text(encoding="utf-8") == "int cs;\n"
    assert (tmp_path / "b/doc/handbook/meson.build").is_file() and built.build_system == "meson"
    assert not (tmp_path / "b/.git").exists()
    assert snapshot(bare) == before  # the user's repository was only read

    # A branch moves: the mirror is fetched again and the new commit found.
    (src / "src/lib/util/crypto_cs.c").write_text("int cs3;\n", encoding="utf-8")
    git(src, "commit", "-q", "-a", "-m", "more")
    git(src, "push", "-q", str(bare), "master")
    assert resolve_gnunet(GnunetGit(git=url, ref="master"), work).commit == git(
        bare, "rev-parse", "master"
    )


def test_a_commit_without_a_release_tag_is_refused_as_unknown(tmp_path: Path) -> None:
    src = repo(tmp_path / "src", tag=None)
    git(src, "tag", "debian-0.24.3")  # not a release tag: describe --match v[0-9]* skips it
    with pytest.raises(SourceError, match=r"GNUnet would call itself 'unknown'"):
        resolve_gnunet(GnunetGit(git=f"file://{src}", ref="master"), tmp_path / "work")
    with pytest.raises(SourceError, match=r"git file:///nonexistent.git: no such folder"):
        resolve_gnunet(GnunetGit(git="file:///nonexistent.git", ref="master"), tmp_path / "work")


def test_content_keys_and_provenance(tmp_path: Path) -> None:
    debian = resolve_gnunet(GnunetDebian(), tmp_path)
    assert debian.content_key == "gnunet debian" and debian.provenance()["kind"] == "debian"
    with pytest.raises(ValueError, match="no tree"):
        prepare_build_tree(debian, tmp_path / "b")
    a = ResolvedSource(
        kind="git", location="https://h/g.git", ref="v1", commit="a" * 40, version="0.27.0"
    )
    b = ResolvedSource(
        kind="git", location="https://h/g.git", ref="master", commit="a" * 40, version="0.27.0"
    )
    assert a.content_key == b.content_key  # the same commit is the same source
    assert (
        a.content_key != ResolvedSource(kind="git", commit="b" * 40, version="0.27.0").content_key
    )
    assert set(a.provenance()) == {
        "kind",
        "location",
        "ref",
        "commit",
        "sha256",
        "tree_sha256",
        "dirty",
        "version",
        "build_version",
    }
    # Not described: a committed .version is built as it is.
    assert a.build_version == "0.27.0" and a.provenance()["build_version"] == "0.27.0"
    described = dataclasses.replace(a, version="0.27.0-5-g2d1625296", described=True)
    assert described.build_version == "0.27.0"
    assert described.provenance()["version"] == "0.27.0-5-g2d1625296"
    assert described.provenance()["build_version"] == "0.27.0"
    assert described.content_key != a.content_key


@pytest.mark.parametrize(
    ("described", "release"),
    [
        ("0.22.0-59-g6cc77baa8", "0.22.0"),
        ("0.22.0-59-g6cc77baa8-dirty", "0.22.0"),
        ("0.24.3-dirty", "0.24.3"),
        ("0.21.3-talerdev.1-5-gabcdef0", "0.21.3-talerdev.1"),
        ("0.27.0", "0.27.0"),
        ("0.24.0-debian", "0.24.0-debian"),
        # Not describe's form (a hash of less than 4 digits, no g): kept whole.
        ("0.22.0-59-gab", "0.22.0-59-gab"),
        ("0.22.0-59-6cc77baa8", "0.22.0-59-6cc77baa8"),
    ],
)
def test_release_version_is_describes_tag(described: str, release: str) -> None:
    assert release_version(described) == release


@given(
    # Release tags as GNUnet names them (v0.22.0, v0.21.3-talerdev.1), without the v.
    tag=st.from_regex(
        r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(-[a-z]{1,8}(\.[0-9]{1,2})?)?", fullmatch=True
    ).filter(lambda t: not t.endswith("-dirty")),
    past=st.integers(min_value=1, max_value=99999),
    commit=st.text("0123456789abcdef", min_size=7, max_size=40),
    dirty=st.booleans(),
)
def test_release_version_gives_back_the_tag(tag: str, past: int, commit: str, dirty: bool) -> None:
    described = f"{tag}-{past}-g{commit}" + ("-dirty" if dirty else "")
    assert release_version(described) == tag
    assert release_version(tag + ("-dirty" if dirty else "")) == tag


# ---------------------------------------------------------------- the real 0.27.0


@pytest.fixture(scope="session")
def gnunet_027(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 0.27.0 tarball unpacked once per session (read-only for the tests)."""
    if not TARBALL_027.is_file():
        pytest.skip(f"no {TARBALL_027} (issue 20's shared test data)")
    root = tmp_path_factory.mktemp("gnunet-0.27.0")
    subprocess.run(
        ["tar", "xzf", str(TARBALL_027), "-C", str(root), "--strip-components=1"], check=True
    )
    return root


@pytest.fixture(scope="session")
def gnunet_027_bare(gnunet_027: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare repository of 0.27.0 (no .version committed), tagged v0.27.0 and, on the same
    commit, last-gnunet-0.20-compatible."""
    base = tmp_path_factory.mktemp("gnunet-git")
    work = base / "src"
    shutil.copytree(gnunet_027, work, symlinks=True)
    (work / ".version").unlink()
    git(work, "init", "-q")
    git(work, "add", "-A", "-f")  # upstream's .gitignore ignores every name without a dot
    git(work, "commit", "-q", "-m", "v0.27.0")
    git(work, "tag", "-a", "-m", "GNUnet 0.27.0", "v0.27.0")
    git(work, "tag", "last-gnunet-0.20-compatible")
    git(base, "clone", "-q", "--bare", "src", "gnunet.git")
    return base / "gnunet.git"


@pytest.mark.slow
def test_the_real_tarball_with_its_readme_sha256(gnunet_027: Path, tmp_path: Path) -> None:
    source = parse_gnunet(f"{TARBALL_027}@sha256:{GNUNET_027_SHA256}")
    resolved = resolve_gnunet(source, tmp_path / "work")
    assert resolved.version == "0.27.0" and resolved.sha256 == GNUNET_027_SHA256
    built = prepare_build_tree(resolved, tmp_path / "b")
    assert built.build_system == "meson"
    assert built.changes == ("added an empty doc/handbook/meson.build (the handbook submodule)",)
    assert (tmp_path / "b/README.md").is_symlink()
    # The build tree is the tarball's tree plus the handbook stub, file for file.
    ours = {str(p.relative_to(tmp_path / "b")) for p in (tmp_path / "b").rglob("*")}
    theirs = {str(p.relative_to(gnunet_027)) for p in gnunet_027.rglob("*")}
    assert ours - theirs == {"doc/handbook/meson.build"} and theirs <= ours
    with pytest.raises(
        SourceError, match=r"sha256 differs: expected 0{64} \(as pinned\), got 77102a"
    ):
        resolve_gnunet(parse_gnunet(f"{TARBALL_027}@sha256:{'0' * 64}"), tmp_path / "work")


@pytest.mark.slow
def test_the_real_tree_as_a_bare_git_repository(gnunet_027_bare: Path, tmp_path: Path) -> None:
    resolved = resolve_gnunet(
        GnunetGit(git=f"file://{gnunet_027_bare}", ref="v0.27.0"), tmp_path / "w"
    )
    assert resolved.commit == git(gnunet_027_bare, "rev-parse", "v0.27.0^{commit}")
    assert resolved.version == "0.27.0"  # not last-gnunet-0.20-compatible
    built = prepare_build_tree(resolved, tmp_path / "b")
    assert (tmp_path / "b/.version").read_text(encoding="ascii") == "0.27.0\n"
    assert (tmp_path / "b/doc/handbook/meson.build").is_file()
    assert (
        built.build_system == "meson" and (tmp_path / "b/src/include/gnunet_crypto_lib.h").is_file()
    )
    assert not (tmp_path / "b/.git").exists()


@pytest.mark.slow
def test_the_real_tree_as_a_path_in_and_out_of_git(
    gnunet_027: Path, gnunet_027_bare: Path, tmp_path: Path
) -> None:
    plain = resolve_gnunet(GnunetPath(path=str(gnunet_027)), tmp_path / "w")
    assert plain.version == "0.27.0" and plain.dirty is None
    git(tmp_path, "clone", "-q", str(gnunet_027_bare), "clone")
    clone = tmp_path / "clone"
    tracked = resolve_gnunet(GnunetPath(path=str(clone)), tmp_path / "w")
    assert tracked.version == "0.27.0" and tracked.dirty is False
    assert tracked.commit == git(gnunet_027_bare, "rev-parse", "v0.27.0^{commit}")
    # Without git every file counts, .version too; in the clone .version is ignored.
    assert tracked.tree_sha256 != plain.tree_sha256
    (clone / ".version").write_text("0.1.0\n", encoding="ascii")
    assert resolve_gnunet(GnunetPath(path=str(clone)), tmp_path / "w") == tracked
    with (clone / "src/lib/util/crypto_cs.c").open("a", encoding="utf-8") as f:
        f.write("/* a change under study */\n")
    dirty = resolve_gnunet(GnunetPath(path=str(clone)), tmp_path / "w")
    assert dirty.dirty is True and dirty.tree_sha256 != tracked.tree_sha256
    assert dirty.version == "0.27.0-dirty"
    built = prepare_build_tree(dirty, tmp_path / "b")
    assert "a change under study" in (tmp_path / "b/src/lib/util/crypto_cs.c").read_text()
    # What the library will report: the release, the same for the clean tree.
    assert dirty.build_version == tracked.build_version == "0.27.0"
    assert (tmp_path / "b/.version").read_text(encoding="ascii") == "0.27.0\n"
    assert built.build_system == "meson"


def _readme_tarballs() -> list[tuple[str, str, str]]:
    """(file, tag, sha256) of each row of the shared tarballs' README."""
    readme = GNUNET_TARBALLS / "README.md"
    if not readme.is_file():
        return []
    rows = re.findall(
        r"^\| (gnunet-[0-9.]+\.tar\.gz) \| (v[0-9.]+) \| [0-9a-f]{40} \| [0-9-]+ "
        r"\| ([0-9a-f]{64}) \|$",
        readme.read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    return [(str(f), str(t), str(h)) for f, t, h in rows]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "tag", "sha256"), _readme_tarballs())
def test_every_shared_tarball_prepares_with_the_stub_only_where_needed(
    name: str, tag: str, sha256: str, tmp_path: Path
) -> None:
    resolved = resolve_gnunet(
        parse_gnunet(f"{GNUNET_TARBALLS / name}@sha256:{sha256}"), tmp_path / "w"
    )
    assert resolved.version == tag.removeprefix("v")
    built = prepare_build_tree(resolved, tmp_path / "b")
    assert built.build_system == "meson"
    # 0.21.2 and 0.22.2 carry doc/handbook/meson.build; 0.24.3 and 0.27.0 have a submodule.
    stub = (tmp_path / "b/doc/handbook/meson.build").read_text(encoding="utf-8") == HANDBOOK_STUB
    assert stub == (tag in ("v0.24.3", "v0.27.0")), built.changes


def _evil_tarball(path: Path, members: list[tarfile.TarInfo]) -> str:
    """A tarball with a .version and ``members`` (regular files get 1 byte each)."""
    with tarfile.open(path, "w:gz") as tar:
        version = tarfile.TarInfo("gnunet-0.27.0/.version")
        version.size = 7
        tar.addfile(version, io.BytesIO(b"0.27.0\n"))
        for info in members:
            info.name = f"gnunet-0.27.0/{info.name}"
            if info.isfile():
                info.size = 1
            tar.addfile(info, io.BytesIO(b"x") if info.isfile() else None)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


@pytest.mark.parametrize(
    ("members", "refused"),
    [
        # A link to a folder outside, then a file written through it.
        ([_member("out", tarfile.SYMTYPE, "../../outside"), _member("out/f")], "out"),
        ([_member("abs", tarfile.SYMTYPE, "/etc")], "abs"),
        ([_member("h", tarfile.LNKTYPE, "gnunet-0.27.0/../../../etc/passwd")], "h"),
        ([_member("dev", tarfile.CHRTYPE)], "dev"),
        ([_member("fifo", tarfile.FIFOTYPE)], "fifo"),
        ([_member("twice"), _member("twice")], "twice"),
    ],
)
def test_archive_members_never_reach_outside_the_build_copy(
    tmp_path: Path, members: list[tarfile.TarInfo], refused: str
) -> None:
    """The rules of tarfile's ``data`` filter hold on every Python archbench supports
    (3.11.2 has no such filter): nothing is written outside, the member is named."""
    (tmp_path / "outside").mkdir()
    path = tmp_path / "evil.tar.gz"
    sha = _evil_tarball(path, members)
    resolved = resolve_gnunet(GnunetTarball(tarball=str(path), sha256=sha), tmp_path / "work")
    with pytest.raises(SourceError, match=rf"refused member '{refused}'"):
        prepare_build_tree(resolved, tmp_path / "b" / "c")
    assert list((tmp_path / "outside").iterdir()) == []


def test_links_inside_the_tree_and_modes_are_kept_without_set_id_bits(tmp_path: Path) -> None:
    script = _member("bin/run")
    script.mode = 0o4755
    link = _member("bin/again", tarfile.SYMTYPE, "run")
    hard = _member("bin/copy", tarfile.LNKTYPE, "gnunet-0.27.0/bin/run")
    tree = fake_tree(tmp_path / "t", version="0.27.0")
    path = tmp_path / "g.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(tree, arcname="gnunet-0.27.0")
        for info in (script, link, hard):
            info.name = f"gnunet-0.27.0/{info.name}"
            info.size = 1 if info.isfile() else 0
            tar.addfile(info, io.BytesIO(b"x") if info.isfile() else None)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    resolved = resolve_gnunet(GnunetTarball(tarball=str(path), sha256=sha), tmp_path / "work")
    prepare_build_tree(resolved, tmp_path / "b")
    assert (tmp_path / "b/bin/run").stat().st_mode & 0o7777 == 0o755
    assert os.readlink(tmp_path / "b/bin/again") == "run"
    assert (tmp_path / "b/bin/copy").read_bytes() == b"x"
