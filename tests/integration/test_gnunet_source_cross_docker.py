"""GNUnet from source on an emulated target, when it goes wrong: a tree that does not build and
a wrong sha256 end their own targets with the step and the log named, and the other target's
results are kept. A cross build that works, every row measured and counted under QEMU, is
``test_gnunet_master_docker.py``'s (master) and ``test_history_docker.py``'s (0.27.0)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from helpers import CI_MATRIX, GNUNET_027_SHA256, GNUNET_TARBALLS, WORK, run_invoke

from archbench.result import load as load_result

pytestmark = [pytest.mark.docker, pytest.mark.emulated]

TARBALL = GNUNET_TARBALLS / "gnunet-0.27.0.tar.gz"


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
