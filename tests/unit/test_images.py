from __future__ import annotations

import tarfile
from pathlib import Path

from archbench.images import build_context, harness_files, plan_image
from archbench.platforms import Arch

PKGS = ("gcc", "libgnunet-dev")


def _harness(tmp_path: Path, source: str = "int main(void){return 0;}\n") -> Path:
    d = tmp_path / "harness"
    d.mkdir(exist_ok=True)
    (d / "blindsig.c").write_text(source)
    (d / "archbench_harness.py").write_text("print('{}')\n")
    (d / "Makefile").write_text("all:\n")
    (d / "blindsig").write_bytes(b"\x7fELF stale local build")
    return d


def test_dockerfile_has_base_packages_and_harness(tmp_path: Path) -> None:
    spec = plan_image(
        Arch.RISCV64,
        "slim",
        PKGS,
        "archbench-base/deb:riscv64",
        "sha256:1",
        harness_dir=_harness(tmp_path),
    )
    assert spec.dockerfile.splitlines()[1] == "FROM archbench-base/deb:riscv64"
    assert "      gcc \\" in spec.dockerfile and "      libgnunet-dev \\" in spec.dockerfile
    assert "COPY harness/ /opt/archbench/harness/" in spec.dockerfile
    assert spec.tag == f"archbench/bench:riscv64-{spec.content_hash[:16]}"


def test_only_sources_go_into_the_context(tmp_path: Path) -> None:
    d = _harness(tmp_path)
    names = [n for n, _ in harness_files(d)]
    assert names == ["harness/Makefile", "harness/archbench_harness.py", "harness/blindsig.c"]
    spec = plan_image(Arch.AMD64, "slim", PKGS, "b", "sha256:1", harness_dir=d)
    with tarfile.open(fileobj=build_context(spec)) as tar:
        assert tar.getnames() == ["Dockerfile", *names]
        df = tar.extractfile("Dockerfile")
        assert df is not None and df.read().decode() == spec.dockerfile


def test_content_hash_changes_with_every_input(tmp_path: Path) -> None:
    d = _harness(tmp_path)
    ref = plan_image(Arch.AMD64, "slim", PKGS, "b", "sha256:1", harness_dir=d)
    same = plan_image(Arch.AMD64, "slim", PKGS, "b", "sha256:1", harness_dir=d)
    assert ref.tag == same.tag
    variants = [
        plan_image(Arch.ARM64, "slim", PKGS, "b", "sha256:1", harness_dir=d),
        plan_image(Arch.AMD64, "slim", (*PKGS, "git"), "b", "sha256:1", harness_dir=d),
        plan_image(Arch.AMD64, "slim", PKGS, "b", "sha256:2", harness_dir=d),
        plan_image(Arch.AMD64, "slim", PKGS, "b2", "sha256:1", harness_dir=d),
        plan_image(
            Arch.AMD64,
            "slim",
            PKGS,
            "b",
            "sha256:1",
            harness_dir=_harness(tmp_path, "int main(void){return 1;}\n"),
        ),
    ]
    hashes = {v.content_hash for v in variants}
    assert len(hashes) == len(variants) and ref.content_hash not in hashes


def test_a_stale_local_driver_binary_does_not_change_the_hash(tmp_path: Path) -> None:
    d = _harness(tmp_path)
    a = plan_image(Arch.AMD64, "slim", PKGS, "b", "sha256:1", harness_dir=d)
    (d / "blindsig").write_bytes(b"other")
    b = plan_image(Arch.AMD64, "slim", PKGS, "b", "sha256:1", harness_dir=d)
    assert a.content_hash == b.content_hash
    with build_context(a) as context, tarfile.open(fileobj=context) as tar:
        names = tar.getnames()
    assert names[0] == "Dockerfile" and "harness/blindsig" not in names
