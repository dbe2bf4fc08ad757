"""The first run's shortcuts: mmdebstrap's command line, the cross stage's prefix."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_cross import _plan

from archbench.errors import BaseImageError
from archbench.images import ImageSpec, bases, benchmark
from archbench.matrix import Base
from archbench.platforms import Arch


def test_mmdebstrap_writes_the_tar_and_takes_no_option_from_a_value() -> None:
    base = Base(source="bootstrap", suite="trixie", mirror="file:///srv/debian")
    cmd = bases.mmdebstrap_command(base, Arch.RISCV64, Path("rel/rootfs.tar"))
    assert cmd[:6] == [
        "mmdebstrap",
        "--verbose",
        "--mode=root",
        "--variant=minbase",
        "--architectures=riscv64",
        "--",
    ]
    assert cmd[6] == "trixie" and Path(cmd[7]).is_absolute() and cmd[7].endswith("rootfs.tar")
    assert cmd[8:] == ["file:///srv/debian"]
    hostile = Base.model_construct(
        source="bootstrap", suite="--include=evil", variant="minbase", mirror=None, image=None
    )
    with pytest.raises(BaseImageError, match="refusing to run debootstrap"):
        bases.mmdebstrap_command(hostile, Arch.RISCV64, Path("/x.tar"))


def test_the_bootstrap_tool_is_in_the_base_hash_and_debootstrap_keeps_its_own() -> None:
    base = Base(source="bootstrap", suite="trixie")
    old = bases.config_hash(base, Arch.RISCV64)
    assert bases.config_hash(base, Arch.RISCV64, "debootstrap") == old
    assert bases.config_hash(base, Arch.RISCV64, "mmdebstrap") != old


def test_cross_prefix_is_the_stage_up_to_the_target_status(tmp_path: Path) -> None:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "blindsig.c").write_text("int main(void){return 0;}\n")
    status = b"Package: libc6\nStatus: install ok installed\n"
    spec = benchmark.plan_cross_image(_plan(Arch.RISCV64), "sha256:9", status, harness)
    prefix = benchmark.plan_cross_prefix(spec, "sha256:9")
    assert prefix is not None
    assert spec.dockerfile.startswith(prefix.dockerfile)
    rest = spec.dockerfile[len(prefix.dockerfile) :]
    assert rest.startswith("COPY cross/target-status /opt/archbench/target/status\n")
    assert "crossbuild-essential-riscv64" in prefix.dockerfile
    assert "make CC=riscv64-linux-gnu-gcc" in prefix.dockerfile
    assert "cross/target-status" not in dict(prefix.files)
    assert prefix.tag.startswith("archbench/cross-prefix:riscv64-")
    # Another target base (another status) has the same prefix: it is built before one.
    other = benchmark.plan_cross_image(_plan(Arch.RISCV64), "sha256:9", b"", harness)
    again = benchmark.plan_cross_prefix(other, "sha256:9")
    assert again is not None and again.tag == prefix.tag
    no_cut = spec.dockerfile.replace("COPY cross/target-status", "COPY cross/other")
    cut: ImageSpec = dataclasses.replace(spec, dockerfile=no_cut)
    assert benchmark.plan_cross_prefix(cut, "sha256:9") is None


NO_RISCV64 = (
    "E: apt-get update did not find any indices for architecture 'riscv64' in suite 'bookworm'"
)


def test_a_suite_without_the_architecture_is_said_in_one_line(tmp_path: Path) -> None:
    # The line mmdebstrap printed when a bookworm base was bootstrapped for riscv64
    # (2026-12-03): Debian 12 has no riscv64 port, the message says so, not "retry".
    said = bases.missing_port(NO_RISCV64)
    assert said is not None
    assert said.startswith("the mirror has no riscv64 packages for suite bookworm (Debian's")
    assert "give the target a base of a suite that has riscv64" in said
    assert bases.missing_port("E: apt-get update failed") is None
    assert bases.missing_port(NO_RISCV64.replace("riscv64", "risc v;rm")) is None
    script = f"echo 'I: running apt-get update...'; echo \"{NO_RISCV64}\"; exit 25"
    with pytest.raises(BaseImageError) as caught:
        bases._run_logged(["sh", "-c", script], tmp_path / "base.log", None)
    assert str(caught.value) == f"{said}\n  full log: {tmp_path / 'base.log'}"
    # Any other failure keeps its last lines and the retry hint.
    with pytest.raises(BaseImageError, match=r"(?s)exit code 3; last lines:\n    boom\n.*retry"):
        bases._run_logged(["sh", "-c", "echo boom; exit 3"], tmp_path / "other.log", None)
