"""The incremental path's pure decisions: which builds take it, what its keys cover (another
compiler, cross stage, base, script or option never reuses a tree or a ccache), what the
image unpacks instead of building, and the settings' checks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archbench.errors import ImageBuildError
from archbench.images import (
    GnunetBuild,
    incremental_applies,
    plan_image,
    plan_toolchain,
    tree_key,
    tree_volume,
)
from archbench.images.benchmark import gnunet_source_files, plan_cross_image
from archbench.images.cross import GnunetCross, plan_cross
from archbench.images.incremental import (
    ccache_cross_file,
    ccache_size,
    ccache_volume,
    max_trees,
    parse_ccache_stats,
)
from archbench.platforms import Arch
from archbench.sources import ContextFile, ResolvedSource

BASE = "archbench-base/debian-trixie:amd64"
BASE_ID = "sha256:" + "1" * 64
TARBALL = ResolvedSource(
    kind="tarball", location="/x/gnunet-0.27.0.tar.gz", sha256="ab" * 32, version="0.27.0"
)
GIT = ResolvedSource(
    kind="git", location="https://example.invalid/gnunet.git", commit="c" * 40, version="0.22.0"
)


def _build(resolved: ResolvedSource = TARBALL, system: str = "meson") -> GnunetBuild:
    return GnunetBuild(resolved, b"tar", system)


def _cross(arch: Arch = Arch.RISCV64, perf: bool = False):  # type: ignore[no-untyped-def]
    plan = plan_cross(
        arch,
        Arch.AMD64,
        ("gcc", "libgcrypt20-dev", "libsodium-dev"),
        BASE,
        emulated=True,
        gnunet_perf=perf,
        gnunet=GnunetCross("meson", perf=perf),
    )
    assert plan is not None
    return plan


def test_meson_trees_take_the_path_natively_and_through_a_cross_stage() -> None:
    assert incremental_applies(_build(), emulated=False, cross=None, taler=False)
    assert incremental_applies(_build(), emulated=True, cross=_cross(), taler=False)
    # Autotools tarballs, an exchange beside, or an emulated target without a cross stage:
    # built inside docker build as before.
    assert not incremental_applies(
        _build(system="autotools"), emulated=False, cross=None, taler=False
    )
    assert not incremental_applies(_build(), emulated=False, cross=None, taler=True)
    assert not incremental_applies(_build(), emulated=True, cross=None, taler=False)
    # A prefix built already is not built again (the measuring pass).
    built = dataclasses.replace(_build(), prefix=ContextFile(Path("/x/p.tar"), 1))
    assert not incremental_applies(built, emulated=False, cross=None, taler=False)


def test_the_keys_cover_base_compiler_cross_stage_options_and_repository() -> None:
    native = plan_toolchain(Arch.AMD64, BASE, BASE_ID, None, perf=False)
    other_base = plan_toolchain(Arch.AMD64, BASE, "sha256:" + "2" * 64, None, perf=False)
    riscv = plan_toolchain(Arch.RISCV64, BASE, BASE_ID, _cross(), perf=False)
    arm = plan_toolchain(Arch.ARM64, BASE, BASE_ID, _cross(Arch.ARM64), perf=False)
    perf = plan_toolchain(Arch.AMD64, BASE, BASE_ID, None, perf=True)
    hashes = {t.spec.content_hash for t in (native, other_base, riscv, arm)}
    assert len(hashes) == 4
    assert len({ccache_volume(t) for t in (native, other_base, riscv, arm)}) == 4
    keys = {
        tree_key(native, _build()),
        tree_key(perf, _build()),
        tree_key(riscv, _build()),
        tree_key(native, _build(GIT)),
        tree_key(other_base, _build()),
    }
    assert len(keys) == 5
    # One tree for every release tarball, and for every commit of one repository.
    later = dataclasses.replace(TARBALL, location="/x/gnunet-0.27.1.tar.gz", sha256="cd" * 32)
    assert tree_key(native, _build(later)) == tree_key(native, _build())
    next_commit = dataclasses.replace(GIT, commit="d" * 40)
    assert tree_key(native, _build(next_commit)) == tree_key(native, _build(GIT))
    assert tree_volume(riscv, tree_key(riscv, _build())).startswith(
        "archbench-gnunet-tree-riscv64-"
    )


def test_the_toolchain_runs_on_the_engine_and_the_cross_compiler_through_ccache() -> None:
    riscv = plan_toolchain(Arch.RISCV64, BASE, BASE_ID, _cross(), perf=True)
    assert riscv.spec.arch == Arch.AMD64 and riscv.spec.for_arch == Arch.RISCV64
    assert "dpkg --add-architecture riscv64" in riscv.spec.dockerfile
    assert "ccache" in riscv.spec.dockerfile and "rsync" in riscv.spec.dockerfile
    assert riscv.build_args[-1] == "--perf" and "--cross-file" in riscv.build_args
    assert "c = ['ccache', 'riscv64-linux-gnu-gcc']" in ccache_cross_file(Arch.RISCV64)
    files = dict(riscv.spec.files)
    assert files["gnunet-source/meson-cross.ini"] == ccache_cross_file(Arch.RISCV64).encode()
    native = plan_toolchain(Arch.AMD64, BASE, BASE_ID, None, perf=False, packages=("gcc",))
    assert dict(native.environment)["CC"] == "ccache gcc"
    assert "--add-architecture" not in native.spec.dockerfile


def test_the_toolchain_shares_the_images_package_layer(tmp_path: Path) -> None:
    # The first RUN is the benchmark image's (cross stage's) own, character for character,
    # so that the engine's layer cache builds it once for both.
    packages = ("gcc", "libgcrypt20-dev")
    native = plan_toolchain(Arch.AMD64, BASE, BASE_ID, None, perf=False, packages=packages)
    image = plan_image(
        Arch.AMD64, "slim", packages, BASE, BASE_ID, harness_dir=_harness(tmp_path), gnunet=_build()
    )
    assert _first_run(native.spec.dockerfile) == _first_run(image.dockerfile)
    riscv = plan_toolchain(Arch.RISCV64, BASE, BASE_ID, _cross(), perf=False)
    stage = plan_cross_image(
        _cross(), BASE_ID, b"", harness_dir=_harness(tmp_path), gnunet=_build()
    )
    assert _first_run(riscv.spec.dockerfile) == _first_run(stage.dockerfile)
    assert "ccache" not in _first_run(riscv.spec.dockerfile)


def _first_run(dockerfile: str) -> str:
    """FROM, ARGs and the first RUN, comments left out (the layer cache ignores them)."""
    lines = [line for line in dockerfile.splitlines() if not line.startswith("#")]
    start = next(i for i, line in enumerate(lines) if line.startswith("RUN "))
    end = start
    while lines[end].endswith("\\"):
        end += 1
    return "\n".join(lines[: end + 1])


def _harness(tmp_path: Path) -> Path:
    harness = tmp_path / "harness"
    harness.mkdir(exist_ok=True)
    (harness / "blindsig.c").write_text("int main(void){return 0;}\n")
    return harness


def test_a_prefix_built_already_is_unpacked_not_built(tmp_path: Path) -> None:
    prefix = tmp_path / ("e" * 64 + ".tar")
    prefix.write_bytes(b"x" * 10)
    built = dataclasses.replace(_build(), prefix=ContextFile(prefix, 10))
    assert [path for path, _ in gnunet_source_files(built)] == ["gnunet-source/gnunet-prefix.tar"]
    harness = _harness(tmp_path)
    spec = plan_image(
        Arch.AMD64, "slim", ("gcc",), BASE, BASE_ID, harness_dir=harness, gnunet=built
    )
    assert "ADD gnunet-source/gnunet-prefix.tar /opt/gnunet/" in spec.dockerfile
    assert "build-libgnunetutil.sh" not in spec.dockerfile
    # Named by the prefix's bytes: the same bits from another source give the same image.
    other = dataclasses.replace(built, resolved=GIT)
    again = plan_image(
        Arch.AMD64, "slim", ("gcc",), BASE, BASE_ID, harness_dir=harness, gnunet=other
    )
    assert again.content_hash == spec.content_hash
    cross = plan_cross_image(_cross(), BASE_ID, b"status", harness_dir=harness, gnunet=built)
    assert "COPY gnunet-source/gnunet-prefix.tar /opt/archbench/gnunet-prefix.tar" in (
        cross.dockerfile
    )
    assert "build-libgnunetutil.sh" not in cross.dockerfile


def test_provenance_says_how_the_library_was_built() -> None:
    info: dict[str, str | bool | None] = {
        "build_mode": "incremental",
        "build_tree": "archbench-gnunet-tree-amd64-ab",
    }
    source = dataclasses.replace(_build(), incremental=info).provenance()
    assert source["build_mode"] == "incremental" and source["kind"] == "tarball"
    assert "build_mode" not in _build().provenance()


def test_ccache_stats_are_read_from_print_stats() -> None:
    text = (
        "direct_cache_hit\t40\npreprocessed_cache_hit\t2\ncache_miss\t3\n"
        "stats_updated_timestamp\t1\n"
    )
    assert parse_ccache_stats(text) == (42, 3)
    assert parse_ccache_stats("nothing here") == (None, None)


@given(st.text(max_size=20))
def test_the_limits_accept_numbers_only(value: str) -> None:
    try:
        n = max_trees({"ARCHBENCH_GNUNET_TREES": value})
    except ImageBuildError as exc:
        assert "ARCHBENCH_GNUNET_TREES" in str(exc)
    else:
        assert 1 <= n <= 1000
        assert value == "" or str(n) == value
    try:
        size = ccache_size({"ARCHBENCH_CCACHE_SIZE": value})
    except ImageBuildError as exc:
        assert "ARCHBENCH_CCACHE_SIZE" in str(exc)
    else:
        assert size == (value or "1G")
        assert size[-1] in "0123456789kMG"


def test_the_limits_name_the_variable_and_what_is_allowed() -> None:
    assert max_trees({}) == 6
    with pytest.raises(ImageBuildError, match="whole number from 1 to 1000"):
        max_trees({"ARCHBENCH_GNUNET_TREES": "0"})
    with pytest.raises(ImageBuildError, match="like 500M"):
        ccache_size({"ARCHBENCH_CCACHE_SIZE": "5 GB"})
