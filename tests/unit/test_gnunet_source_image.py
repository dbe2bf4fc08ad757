"""A native target with a GNUnet source gets an image that builds libgnunetutil; a debian
target's image stays byte for byte what it was; an emulated one builds it in its cross stage
and unpacks the stage's prefix."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tarfile
from pathlib import Path

import pytest
from helpers import REPO, assert_golden, result, row

from archbench.images import CrossBuild, GnunetBuild, ImageSpec, plan_image
from archbench.images.benchmark import render_dockerfile, source_packages
from archbench.images.cross import GnunetCross, plan_cross
from archbench.matrix import Matrix, gnunet_flag, load, parse_gnunet
from archbench.platforms import Arch
from archbench.report.sections import setup_items
from archbench.result import ResultStore
from archbench.run import Workspace, plan
from archbench.run.target import source_build
from archbench.sources import BuildTree, ContextFile, ResolvedSource, pack_build_tree

SLIM = ("gcc", "libc6-dev", "make", "pkgconf", "python3", "libgnunet-dev", "libsodium-dev")
SHA = "ab" * 32
RESOLVED = ResolvedSource(
    kind="tarball", location="/x/gnunet-0.27.0.tar.gz", sha256=SHA, dirty=False, version="0.27.0"
)
DEBIAN_HASH = "dd392e1e84ab722e58bdbca6aac6b0fe32fcfaf7921f5acc52334f265bffbc8e"
"""The content hash of the image below, recorded before source builds existed."""


def _harness(tmp_path: Path) -> Path:
    d = tmp_path / "harness"
    d.mkdir(exist_ok=True)
    (d / "blindsig.c").write_text("int main(void){return 0;}\n")
    (d / "archbench_harness.py").write_text("print('{}')\n")
    (d / "Makefile").write_text("all:\n")
    return d


def _plan(
    tmp_path: Path,
    gnunet: GnunetBuild | None = None,
    cross: CrossBuild | None = None,
    gnunet_perf: bool = False,
) -> ImageSpec:
    return plan_image(
        Arch.AMD64,
        "slim",
        ("gcc", "libgnunet-dev"),
        "archbench-base/debian-trixie:amd64",
        "sha256:" + "1" * 64,
        harness_dir=_harness(tmp_path),
        gnunet=gnunet,
        cross=cross,
        gnunet_perf=gnunet_perf,
    )


def test_a_debian_targets_dockerfile_and_tag_are_unchanged(tmp_path: Path) -> None:
    # The golden Dockerfiles were rendered before source builds existed.
    assert_golden(
        "dockerfiles/slim-amd64.Dockerfile",
        render_dockerfile("archbench-base/debian-trixie:amd64", Arch.AMD64, "slim", SLIM),
    )
    assert_golden(
        "dockerfiles/slim-riscv64-gnunet-perf.Dockerfile",
        render_dockerfile(
            "archbench-base/debian-trixie:riscv64", Arch.RISCV64, "slim", SLIM, gnunet_perf=True
        ),
    )
    spec = _plan(tmp_path)
    assert spec.content_hash == DEBIAN_HASH
    assert not any(p.startswith("gnunet-source/") for p, _ in spec.files)


def test_a_source_target_builds_libgnunetutil_in_its_image(tmp_path: Path) -> None:
    spec = _plan(tmp_path, GnunetBuild(RESOLVED, b"tar bytes"))
    text = spec.dockerfile
    assert "libgnunet-dev" not in text
    for package in ("meson", "ninja-build", "libgcrypt20-dev", "dpkg-dev", "libidn2-dev"):
        assert f"      {package} \\" in text
    assert f"# libgnunetutil from source ({RESOLVED.content_key})" in text
    assert "build-libgnunetutil.sh /tmp/gnunet/src /tmp/gnunet/build /opt/gnunet" in text
    assert "ENV PKG_CONFIG_PATH=/opt/gnunet/lib/pkgconfig" in text
    assert "RUN make -C /opt/archbench/harness LDFLAGS=-Wl,-rpath,/opt/gnunet/lib" in text
    # The library is built before the drivers that link against it.
    assert text.index("build-libgnunetutil.sh") < text.index("RUN make -C")
    files = dict(spec.files)
    assert files["gnunet-source/gnunet-src.tar"] == b"tar bytes"
    script = REPO / "images" / "gnunet-source" / "build-libgnunetutil.sh"
    assert files["gnunet-source/build-libgnunetutil.sh"] == script.read_bytes()
    assert spec.content_hash != DEBIAN_HASH


def test_gnunet_perf_runs_the_sources_own_perf_crypto_rsa(tmp_path: Path) -> None:
    spec = _plan(tmp_path, GnunetBuild(RESOLVED, b"x"), gnunet_perf=True)
    text = spec.dockerfile
    assert "build-libgnunetutil.sh --perf /tmp/gnunet/src /tmp/gnunet/build /opt/gnunet" in text
    assert "RUN ln -s /opt/gnunet/libexec/gnunet-perf /opt/archbench/gnunet-perf" in text
    # Not Debian's source of libgnunet-dev, which a source build has not installed.
    assert "gnunet-perf-src/build.sh" not in text
    assert not any(p.startswith("gnunet-perf/") for p, _ in spec.files)


def test_the_hash_follows_the_source_key_and_the_trees_bytes(tmp_path: Path) -> None:
    one = _plan(tmp_path, GnunetBuild(RESOLVED, b"tree")).content_hash
    same = _plan(tmp_path, GnunetBuild(RESOLVED, b"tree")).content_hash
    other_tree = _plan(tmp_path, GnunetBuild(RESOLVED, b"tree2")).content_hash
    moved = dataclasses.replace(RESOLVED, sha256="cd" * 32)
    other_key = _plan(tmp_path, GnunetBuild(moved, b"tree")).content_hash
    assert one == same
    assert len({one, other_tree, other_key}) == 3


def _cross_build(gnunet: bool) -> CrossBuild:
    packages = source_packages(SLIM) if gnunet else SLIM
    plan = plan_cross(
        Arch.RISCV64,
        Arch.AMD64,
        packages,
        "archbench-base/debian-trixie:amd64",
        emulated=True,
        gnunet_perf=False,
        gnunet=GnunetCross("meson") if gnunet else None,
    )
    assert plan is not None
    files = (("cross/harness/blindsig", b"\x7fELF"), ("cross/gnunet-prefix.tar", b"prefix"))
    return CrossBuild(plan, "sha256:" + "2" * 64, files, ("python3", "libgcrypt20:riscv64=1.11"))


def test_a_cross_built_source_is_unpacked_not_built_again(tmp_path: Path) -> None:
    spec = _plan(tmp_path, GnunetBuild(RESOLVED, b"tree"), cross=_cross_build(True))
    text = spec.dockerfile
    assert "ADD cross/gnunet-prefix.tar /opt/gnunet/" in text
    assert f"# libgnunetutil from source ({RESOLVED.content_key}), cross-compiled" in text
    # Nothing is compiled under QEMU: neither the library nor the drivers.
    assert "build-libgnunetutil.sh" not in text and "make -C" not in text
    files = dict(spec.files)
    assert files["cross/gnunet-prefix.tar"] == b"prefix"
    assert "gnunet-source/gnunet-src.tar" not in files


def test_the_cross_stage_and_the_image_agree_on_the_source(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="GNUnet source"):
        _plan(tmp_path, GnunetBuild(RESOLVED, b"x"), cross=_cross_build(False))
    with pytest.raises(ValueError, match="GNUnet source"):
        _plan(tmp_path, None, cross=_cross_build(True))


def test_the_packed_tree_is_the_same_bytes_for_the_same_files(tmp_path: Path) -> None:
    def tree(root: Path, mtime: int) -> BuildTree:
        (root / "src" / "include").mkdir(parents=True)
        (root / "meson.build").write_text("project('gnunet')\n")
        (root / "src" / "include" / "gnunet_crypto_lib.h").write_text("/* h */\n")
        (root / "configure").write_text("#!/bin/sh\n")
        (root / "configure").chmod(0o755)
        os.symlink("meson.build", root / "link")
        for p in root.rglob("*"):
            os.utime(p, (mtime, mtime), follow_symlinks=False)
        return BuildTree(root, "meson", "0.27.0", ())

    a = pack_build_tree(tree(tmp_path / "a", 1_000_000), tmp_path / "packed-a")
    b = pack_build_tree(tree(tmp_path / "b", 2_000_000), tmp_path / "packed-b")
    assert a.path.read_bytes() == b.path.read_bytes() and a.size == b.size
    # Named by its sha256: the same tree finds the same file.
    assert a.path.name == hashlib.sha256(a.path.read_bytes()).hexdigest() + ".tar"
    assert [p.name for p in a.path.parent.iterdir()] == [a.path.name]
    with tarfile.open(a.path) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert list(members) == sorted(members)
    assert members["src/configure"].mode == 0o755 and members["src/meson.build"].mode == 0o644
    assert members["src/link"].issym() and members["src/link"].linkname == "meson.build"
    assert {(m.uid, m.gid, m.mtime) for m in members.values()} == {(0, 0, 0)}


def _ci_matrix() -> Matrix:
    return load(REPO / "tests" / "integration" / "matrix-ci.yml")


def test_gnunet_flag_overrides_the_matrix_for_native_targets() -> None:
    m = _ci_matrix()
    source = parse_gnunet(f"/x/gnunet-0.27.0.tar.gz@sha256:{SHA}")
    (p,) = plan(m, m.select(["ci-amd64"]), {"local": Arch.AMD64}, gnunet=source)
    assert p.gnunet == source and not p.emulated
    (q,) = plan(m, m.select(["ci-amd64"]), {"local": Arch.AMD64})
    assert q.gnunet.kind == "debian"


def test_an_emulated_target_may_build_from_source() -> None:
    m = _ci_matrix()
    source = parse_gnunet(f"/x/gnunet-0.27.0.tar.gz@sha256:{SHA}")
    (p,) = plan(m, m.select(["ci-riscv64"]), {"local": Arch.AMD64}, gnunet=source)
    assert p.emulated and p.gnunet == source


def test_the_flag_survives_run_json_in_its_one_string_form(tmp_path: Path) -> None:
    for text in (
        f"{tmp_path}/g.tar.gz@sha256:{SHA}",
        "git+https://git.gnunet.org/gnunet.git@v0.27.0",
        str(tmp_path),
        "debian",
    ):
        source = parse_gnunet(text)
        assert gnunet_flag(source) == text
        assert parse_gnunet(gnunet_flag(source) or "") == source
    assert gnunet_flag(None) is None


def test_the_setup_box_names_the_source_builds_version() -> None:
    r = result("a", "amd64", "x86_64", "CPU", [row("CS", "signing", [1, 2, 3])])
    debian = dict(setup_items(r))
    assert debian["libgnunetutil:amd64 version"] == "0.21.1-1 (Debian package)"
    harness = r.harness.model_copy(
        update={
            "setup": r.harness.setup.model_copy(
                update={"packages": {**r.harness.setup.packages, "libgnunetutil": None}}
            )
        }
    )
    assert r.execution is not None
    execution = r.execution.model_copy(update={"gnunet_source": RESOLVED.provenance()})
    built = r.model_copy(update={"harness": harness, "execution": execution})
    assert dict(setup_items(built))["libgnunetutil:amd64 version"] == (
        f"0.21.1 (built from tarball gnunet-0.27.0.tar.gz, sha256 {SHA[:12]})"
    )


def test_a_run_prepares_a_targets_source_once(tmp_path: Path) -> None:
    top = tmp_path / "gnunet-0.27.0"
    (top / "src" / "include").mkdir(parents=True)
    (top / "meson.build").write_text("project('gnunet')\n")
    (top / "src" / "include" / "gnunet_crypto_lib.h").write_text("/* h */\n")
    (top / ".version").write_text("0.27.0\n")
    tarball = tmp_path / "gnunet-0.27.0.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(top, arcname=top.name)
    sha256 = hashlib.sha256(tarball.read_bytes()).hexdigest()
    m = _ci_matrix()
    source = parse_gnunet(f"{tarball}@sha256:{sha256}")
    (p,) = plan(m, m.select(["ci-amd64"]), {"local": Arch.AMD64}, gnunet=source)
    ws = Workspace(store=ResultStore(tmp_path / "results"), run_id="r", work_dir=tmp_path / "w")
    first = source_build(p, ws)
    assert source_build(p, ws) is first
    assert first.resolved.provenance()["sha256"] == sha256
    # What a result records: the source, how it was built and what archbench changed.
    recorded = first.provenance()
    script = REPO / "images" / "gnunet-source" / "build-libgnunetutil.sh"
    assert recorded["sha256"] == sha256 and recorded["build_system"] == "meson"
    assert recorded["build_script_sha256"] == hashlib.sha256(script.read_bytes()).hexdigest()
    assert recorded["changes"] is None  # a tarball with .version and no handbook reference
    assert isinstance(first.tar, ContextFile)
    assert first.tar.path.parent == tmp_path / "w" / "gnunet-src" / "packed"
    with tarfile.open(first.tar.path) as tar:
        names = set(tar.getnames())
    assert {"src/meson.build", "src/.version", "src/src/include/gnunet_crypto_lib.h"} <= names
    # The scratch copy is gone once packed.
    assert not any((tmp_path / "w" / "gnunet-src" / "trees").iterdir())
