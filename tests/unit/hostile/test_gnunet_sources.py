"""A user's GNUnet source is inert input (issue 32, kind 3).

Read, never written, never executed: no write follows a symlink out of the build copy,
and git runs none of the commands the tree's own config names (a clean filter). Bounded
before reading: a sparse file is refused by its apparent size without being read, and a
``.version`` is never read whole. Every compression a ``tarball:`` source may have is
checked to its end, so a damaged archive is said to be damaged, and a ``git+file://``
folder that is no repository is said to be none.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import subprocess
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from archbench.build import prepare_build_tree, resolve_gnunet
from archbench.build.gnunet_source import HANDBOOK_STUB, hash_tree
from archbench.errors import SourceError
from archbench.matrix import GnunetGit, GnunetPath, GnunetTarball

MESON_DOC = "subdir('handbook')\n"
FAKE = {
    "meson.build": "project('gnunet', 'c')\nsubdir('doc')\n",
    "doc/meson.build": MESON_DOC,
    "src/include/gnunet_crypto_lib.h": "/* the crypto API */\n",
    "scripts/get_version.sh": "#!/bin/sh\ncat .version\n",
    ".gitignore": "build/\n.version\n",
}


def git(cwd: Path, *args: str) -> str:
    """git in ``cwd`` with a fixed identity and no user or system configuration."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    settings = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    done = subprocess.run(
        ["git", *settings, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def fake_tree(root: Path, version: str | None = "0.27.0") -> Path:
    """A tree with the files archbench looks at and ``.version``."""
    files = {**FAKE, **({".version": f"{version}\n"} if version else {})}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def repo(root: Path) -> Path:
    """``fake_tree`` without ``.version``, committed and tagged v0.27.0."""
    fake_tree(root, version=None)
    git(root, "init", "-q")
    git(root, "add", "-A", "-f")
    git(root, "commit", "-q", "-m", "release")
    git(root, "tag", "-a", "-m", "v0.27.0", "v0.27.0")
    return root


def test_a_symlinked_handbook_folder_is_not_written_through(tmp_path: Path) -> None:
    tree = repo(tmp_path / "g")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tree / "doc" / "handbook").symlink_to(elsewhere)
    git(tree, "add", "-A", "-f")
    git(tree, "commit", "-q", "-m", "symlinked handbook")
    resolved = resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
    built = prepare_build_tree(resolved, tmp_path / "copy")
    assert list(elsewhere.iterdir()) == []  # nothing written into the user's folder
    stub = built.root / "doc" / "handbook" / "meson.build"
    assert stub.read_text() == HANDBOOK_STUB and not stub.parent.is_symlink()


def test_a_symlinked_version_is_replaced_not_written_through(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "g", version=None)
    victim = tmp_path / "victim"
    victim.write_text("0.27.0\n")  # a version, so resolving takes it
    (tree / ".version").symlink_to(victim)
    resolved = resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
    built = prepare_build_tree(resolved, tmp_path / "copy")
    assert victim.read_text() == "0.27.0\n"
    assert not (built.root / ".version").is_symlink()


def test_git_runs_no_filter_the_tree_configures(tmp_path: Path) -> None:
    tree = repo(tmp_path / "g")
    marker = tmp_path / "ran"
    git(tree, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(tree, "config", "filter.evil.required", "true")
    (tree / ".gitattributes").write_text("*.c filter=evil\n")
    (tree / "x.c").write_text("int x;\n")
    # git adds with the filter (the user's own command, run by the user) ...
    git(tree, "add", "-A", "-f")
    git(tree, "commit", "-q", "-m", "filtered")
    marker.unlink()
    # ... and a stat change makes git status look at the file again.
    time.sleep(1.1)
    (tree / "x.c").write_text("int y;\n")
    resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
    assert not marker.exists(), "archbench ran the tree's clean filter"
    # The same tree, read by plain git status, does run it: the test can fail.
    subprocess.run(
        ["git", "-C", str(tree), "status", "--porcelain"], check=True, capture_output=True
    )
    assert marker.exists()


def test_a_sparse_file_is_refused_by_its_size_before_it_is_read(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "g")
    with (tree / "huge.bin").open("wb") as f:
        f.truncate(1 << 40)  # 1 TiB apparent, no block on disk
    start = time.monotonic()
    with pytest.raises(SourceError, match=r"huge.bin' alone has 1099511627776"):
        hash_tree(tree, ["huge.bin"], "path g")
    assert time.monotonic() - start < 5  # was still reading after 45 s


def test_a_huge_version_file_is_never_read_whole(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "g", version=None)
    with (tree / ".version").open("wb") as f:
        f.truncate(1 << 30)
    with pytest.raises(SourceError, match=r"\.version.*larger than"):
        resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
    os.unlink(tree / ".version")
    os.mkfifo(tree / ".version")  # would block a plain read forever
    with pytest.raises(SourceError, match="FIFO"):
        resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")


def _tar_bytes(tree: Path) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        tar.add(tree, arcname="gnunet-0.27.0")
    return out.getvalue()


def _zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


def _plain(data: bytes) -> bytes:
    return data


COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "tar": _plain,
    "tar.gz": gzip.compress,
    "tar.bz2": bz2.compress,
    "tar.xz": lzma.compress,
    "tar.zst": _zstd,
}


@pytest.mark.parametrize("suffix", list(COMPRESS))
def test_every_compression_is_read_and_a_damaged_one_is_refused(
    tmp_path: Path, suffix: str
) -> None:
    raw = _tar_bytes(fake_tree(tmp_path / "t"))
    good = COMPRESS[suffix](raw)
    path = tmp_path / f"g.{suffix}"
    path.write_bytes(good)
    source = GnunetTarball(tarball=str(path), sha256=hashlib.sha256(good).hexdigest())
    assert resolve_gnunet(source, tmp_path / "w").version == "0.27.0"
    # Damage in the middle of the stream (the compressed bytes, or a plain tar's header).
    bad = bytearray(good)
    middle = len(bad) // 2 if suffix != "tar" else 512 * 3 + 100
    for i in range(middle, min(middle + 64, len(bad))):
        bad[i] ^= 0x5A
    path.write_bytes(bytes(bad))
    source = GnunetTarball(tarball=str(path), sha256=hashlib.sha256(bytes(bad)).hexdigest())
    with pytest.raises(SourceError, match=r"not a tar archive that can be read: damaged"):
        resolve_gnunet(source, tmp_path / "w")


def test_a_damaged_gzip_is_not_said_to_lack_a_version(tmp_path: Path) -> None:
    raw = _tar_bytes(fake_tree(tmp_path / "t"))
    good = gzip.compress(raw)
    cut = good[: len(good) * 2 // 3]  # a download that stopped
    path = tmp_path / "g.tar.gz"
    path.write_bytes(cut)
    source = GnunetTarball(tarball=str(path), sha256=hashlib.sha256(cut).hexdigest())
    with pytest.raises(SourceError, match=r"damaged \(gzip"):
        resolve_gnunet(source, tmp_path / "w")


def test_git_file_url_of_a_folder_that_is_no_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    source = GnunetGit(git=f"file://{plain}", ref="v0.27.0")
    with pytest.raises(SourceError, match=r"not a git repository .* gnunet: \{path: \.\.\.\}"):
        resolve_gnunet(source, tmp_path / "w")
