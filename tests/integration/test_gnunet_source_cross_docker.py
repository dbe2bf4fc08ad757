"""GNUnet from source on an emulated target: libgnunetutil 0.27.0 cross-compiled for riscv64 in
the cross stage from the shared tarball, every row measured and counted under QEMU; a tree that
does not build and a wrong sha256 end their own targets with the step and the log named, and
the other target's results are kept."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from helpers import CI_MATRIX, GNUNET_027_SHA256, GNUNET_TARBALLS, WORK, run_invoke

from archbench.result import load as load_result

pytestmark = [pytest.mark.docker, pytest.mark.emulated]

TARBALL = GNUNET_TARBALLS / "gnunet-0.27.0.tar.gz"


def test_riscv64_builds_0_27_in_its_cross_stage_and_counts_every_row(tmp_path: Path) -> None:
    assert TARBALL.is_file(), f"no shared GNUnet tarballs in {GNUNET_TARBALLS}"
    results = tmp_path / "results"
    done = run_invoke(
        "bench", "--matrix", str(CI_MATRIX), "--target", "ci-riscv64",
        "--gnunet", f"{TARBALL}@sha256:{GNUNET_027_SHA256}",
        "--rsa-bits", "1024", "--repetitions", "1", "--ci-target", "off",
        "--metric", "time,instructions",
        settings={"results": results, "work": WORK},
        timeout=2400,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    timed = load_result(run_dir / "ci-riscv64.json")
    rows = timed.harness.rows
    assert {(r.scheme, r.operation) for r in rows} >= {("CS", "signing"), ("RSA", "verifying")}
    invalid = [(r.operation, r.invalid_reason) for r in rows if not r.valid]
    assert not invalid, invalid
    setup = timed.harness.setup
    assert setup.gnunet_version == "0.27.0"
    build = setup.build or {}
    # Cross-compiled against the 0.21-generation API, nothing compiled under QEMU; the
    # library comes with the image, not from a package (0.21's soname is Debian 0.20's).
    assert build.get("build_kind") == "cross" and build.get("gnunet_bsig_api") == "0.21"
    assert "/opt/gnunet/lib" in build.get("ldflags", "")
    runtime = build.get("runtime_packages", "").split()
    assert any(p.startswith("libgcrypt20:riscv64=") for p in runtime)
    assert not any(p.startswith("libgnunet") for p in runtime)
    assert timed.execution is not None and timed.execution.emulated
    source = timed.execution.gnunet_source
    assert source is not None and source["sha256"] == GNUNET_027_SHA256
    assert source["version"] == "0.27.0"
    # Counted through the same plugin: an exact count for every counted row.
    counted = load_result(run_dir / "ci-riscv64.instructions.json")
    counts: dict[tuple[str, str], float] = {}
    for r in counted.harness.rows:
        assert r.instructions, (r.scheme, r.operation)
        counts[r.scheme, r.operation] = min(r.instructions) / r.ops_per_block
    assert set(counts) == {(r.scheme, r.operation) for r in rows}
    # RSA-1024 signing is hundreds of times CS signing's work on any CPU (13.1 M vs 49 k
    # instructions per operation on riscv64, 0.27.0).
    assert counts["RSA", "signing"] > 50 * counts["CS", "signing"], counts
    # What the build script recorded in the image, read back by the harness.
    gnunet = setup.gnunet
    assert gnunet is not None and gnunet.source_build is not None
    built = gnunet.source_build
    assert (built["kind"], built["version"], built["prefix"]) == ("meson", "0.27.0", "/opt/gnunet")
    # Built incrementally (archbench.images.incremental): the seconds are the result's, so
    # that the packed prefix is the same bytes for the same code.
    assert "build_seconds" not in built
    assert source["build_mode"] in ("clean", "incremental")
    assert float(str(source["build_seconds"])) > 0
    assert gnunet.bsig_api == "0.21" and gnunet.known_answers == ("CS", "RSA")


def _broken_tree(tmp_path: Path) -> Path:
    """The 0.27.0 tree with one line of C that does not compile in libgnunetutil."""
    with tarfile.open(TARBALL) as tar:
        tar.extractall(tmp_path / "src", filter="data")
    (tree,) = (tmp_path / "src").iterdir()
    source = tree / "src" / "lib" / "util" / "crypto_cs.c"
    source.write_text(source.read_text() + "\nthis is not C;\n")
    return tree


def test_a_tree_that_does_not_build_and_a_wrong_sha256_end_only_their_targets(
    tmp_path: Path,
) -> None:
    tree = _broken_tree(tmp_path)
    matrix = tmp_path / "matrix.yml"
    text = CI_MATRIX.read_text()
    text = text.replace(
        "targets:\n",
        "targets:\n"
        "  - {name: broken-riscv64, arch: riscv64, base: debian-trixie,\n"
        f"     gnunet: {{path: {json.dumps(str(tree))}}}}}\n"
        "  - {name: pinned-amd64, arch: amd64, base: debian-trixie,\n"
        f"     gnunet: {{tarball: {json.dumps(str(TARBALL))}, sha256: '{'0' * 64}'}}}}\n",
        1,
    )
    matrix.write_text(text)
    results = tmp_path / "results"
    done = run_invoke(
        "bench", "--matrix", str(matrix),
        "--target", "broken-riscv64,pinned-amd64,ci-amd64",
        "--rsa-bits", "1024", "--repetitions", "1", "--ci-target", "off",
        settings={"results": results, "work": WORK},
        timeout=2400,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert "Traceback" not in out
    # The step, the compiler's complaint and the log, in the target's failure.
    assert "cross-compiling libgnunetutil 0.27.0 from source for riscv64 failed" in out, out[-4000:]
    assert "meson compile gnunetutil failed (log: /tree/b/compile.log)" in out
    assert "crypto_cs.c" in out
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    assert str(run_dir / "logs" / "broken-riscv64.gnunet.log") in out
    # The pin is checked before a base is bootstrapped or anything is built.
    assert f"sha256 differs: expected {'0' * 64} (as pinned), got {GNUNET_027_SHA256[:6]}" in out
    # The other target ran and its result is kept; the user's tree is untouched.
    assert load_result(run_dir / "ci-amd64.json").harness.rows
    assert not (run_dir / "broken-riscv64.json").exists()
    assert not (tree / "build").exists() and not (tree / ".version.tmp").exists()
