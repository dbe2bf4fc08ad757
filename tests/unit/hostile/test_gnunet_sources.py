"""A user's GNUnet source is inert input (issue 32, kind 3).

Read, never written, never executed: no write follows a symlink out of the build copy,
and git runs none of the commands the tree's own config names (a clean filter). Bounded
before reading: a sparse file is refused by its apparent size without being read, a
``.version`` is never read whole, and a tree is packed for the image's context streaming,
to disk, in bounded memory. Every compression a ``tarball:`` source may have is
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
import re
import subprocess
import tarfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard
from helpers import REPO, run_invoke

from archbench.errors import SourceError
from archbench.images import ImageSpec, build_context
from archbench.images.builder import digest
from archbench.matrix import GnunetGit, GnunetPath, GnunetTarball
from archbench.platforms import Arch
from archbench.sources import (
    BuildTree,
    ContextFile,
    pack_build_tree,
    prepare_build_tree,
    resolve_gnunet,
)
from archbench.sources.gnunet import HANDBOOK_STUB
from archbench.sources.model import MAX_PACKED_BYTES
from archbench.sources.tree import hash_tree

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


def _bytes_read() -> int:
    """What this process has read through read(2) so far (``rchar``, holes too)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_a_sparse_file_under_the_tree_cap_is_refused_before_any_file_is_read(
    tmp_path: Path,
) -> None:
    tree = fake_tree(tmp_path / "g")
    # 200 MiB and 100 MiB apparent, no block on disk: each under the cap, not together.
    for name, size in (("a.bin", 200 << 20), ("b.bin", 100 << 20)):
        with (tree / name).open("wb") as f:
            f.truncate(size)
    files = sorted(p.name for p in tree.iterdir() if p.is_file())
    before = _bytes_read()
    with pytest.raises(SourceError, match=r"'a.bin' alone has 209715200, all together 31"):
        hash_tree(tree, files, "path g")
    assert _bytes_read() - before < 1 << 20  # was: 200 MiB read before the refusal
    # Through resolving, as a user meets it: refused, and still nothing read.
    before = _bytes_read()
    with pytest.raises(SourceError, match=rf"more than {MAX_PACKED_BYTES} bytes of files"):
        resolve_gnunet(GnunetPath(path=str(tree)), tmp_path / "work")
    assert _bytes_read() - before < 1 << 20


def test_a_large_tree_is_packed_and_sent_in_bounded_memory(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "g")
    zeros = 128 << 20
    with (tree / "zeros.bin").open("wb") as f:
        f.truncate(zeros)  # 128 MiB of zeros, sparse: held in memory it would show
    tracemalloc.start()
    try:
        packed = pack_build_tree(BuildTree(tree, "meson", "0.27.0", ()), tmp_path / "packed")
        _, packing_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        spec = ImageSpec(
            "archbench/bench",
            Arch.AMD64,
            "FROM scratch\n",
            (("gnunet-source/gnunet-src.tar", packed),),
            digest(packed),
        )
        sent = 0
        with build_context(spec, tmp_path) as context:  # what the SDK's request reads
            while chunk := context.read(64 * 1024):
                sent += len(chunk)
        _, sending_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(packed, ContextFile) and packed.size > zeros
    assert sent > packed.size
    # A whole tar in memory would peak above 128 MiB; streaming stays under 8 MiB.
    assert packing_peak < 8 << 20, packing_peak
    assert sending_peak < 8 << 20, sending_peak
    # The digest of the file on disk is that of its bytes (an image's content hash is
    # unchanged by where the tree is held).
    assert digest(packed) == digest(packed.path.read_bytes())
    with tarfile.open(packed.path) as tar:
        member = tar.getmember("src/zeros.bin")
    assert member.size == zeros
    assert [p.name for p in (tmp_path / "packed").iterdir()] == [packed.path.name]


def test_a_huge_version_file_is_never_read_whole(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "g", version=None)
    with (tree / ".version").open("wb") as f:
        # Under the tree's bound (a 1 GiB one is refused as too large a tree first).
        f.truncate(64 << 20)
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


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--gnunet", "nonsense", r"path .*/nonsense: no such directory; give a GNUnet source tree"),
        (
            "--gnunet",
            "gone.tar.gz@sha256:" + "a" * 64,
            r"tarball .*gone\.tar\.gz: no such file; give the path of a GNUnet release tarball",
        ),
        (
            "--taler",
            "gone.tar.gz@sha256:" + "b" * 64,
            r"taler tarball .*gone\.tar\.gz: no such file; give the path of a taler-exchange",
        ),
    ],
)
def test_a_missing_local_source_is_refused_before_the_run_begins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, value: str, said: str
) -> None:
    # No engine is reachable: the refusal must come before engines are asked, and leave
    # the results folder as it was (no run folder, no manifest).
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    results = tmp_path / "results"
    done = run_invoke(
        "bench", flag, value, "--arch", "amd64", settings={"results": results}, cwd=REPO
    )
    assert done.returncode == 12, done.stderr
    assert re.search(said, done.stderr), done.stderr
    assert "Traceback" not in done.stderr
    assert not results.exists() or not any(results.iterdir())
