"""GNUnet's master after 0.27.0 (the new randomness API) from the shared snapshot: built natively
for amd64 and cross-compiled for riscv64, every blindsig row measured and counted, the known
answers passing first, the API found by the driver's compile probes (not by the version, which
still says 0.27.0) and the rows whose work moved carrying a note that says so. The riscv64
half is also the suite's check of a cross build's provenance and runtime packages (until
issue 37 a test of 0.27.0 on riscv64 of its own, which the history test builds and counts
as well)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CI_MATRIX, GNUNET_MASTER_SHA256, GNUNET_TARBALLS, WORK, run_invoke

from archbench.result import load as load_result

pytestmark = [pytest.mark.docker, pytest.mark.emulated]

TARBALL = GNUNET_TARBALLS / "gnunet-master-20260630.tar.gz"


def test_master_builds_natively_and_cross_and_counts_every_row(tmp_path: Path) -> None:
    if not TARBALL.is_file():
        pytest.skip(f"no {TARBALL} (issue 29's shared test data)")
    results = tmp_path / "results"
    done = run_invoke(
        "bench", "--matrix", str(CI_MATRIX), "--target", "ci-amd64,ci-riscv64",
        "--gnunet", f"{TARBALL}@sha256:{GNUNET_MASTER_SHA256}",
        "--rsa-bits", "1024", "--repetitions", "1", "--ci-target", "off",
        "--metric", "time,instructions",
        settings={"results": results, "work": WORK},
        timeout=5400,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    for target, kind in (("ci-amd64", "native"), ("ci-riscv64", "cross")):
        timed = load_result(run_dir / f"{target}.json")
        rows = timed.harness.rows
        invalid = [(r.operation, r.invalid_reason) for r in rows if not r.valid]
        assert not invalid, (target, invalid)
        setup = timed.harness.setup
        # The snapshot's .version: the version alone would call this 0.27.0's API.
        assert setup.gnunet_version == "0.27.0-master-20260630"
        build = setup.build or {}
        assert build.get("build_kind", "native") == kind
        assert build.get("gnunet_bsig_api") == "0.21"
        # The probes found the API without the quality argument and hmac_raw's new form.
        assert build.get("gnunet_random_api") == "sodium", build
        assert build.get("gnunet_hmac_raw_api") == "sodium", build
        gnunet = setup.gnunet
        assert gnunet is not None and gnunet.known_answers == ("CS", "RSA")
        assert gnunet.source_build is not None
        assert gnunet.source_build["version"] == "0.27.0-master-20260630"
        notes = {(r.scheme, r.operation): r.note or "" for r in rows}
        assert "no longer initialises libgcrypt" in notes["RSA", "key_generation"]
        assert "crypto_hash_sha512" in notes["CS", "blinding"]
        assert "crypto_hash_sha512" in notes["CS", "verifying"]
        # 0.22 moved the HKDF to libsodium's HMAC (0.21.2's test checks the note's absence).
        assert "libsodium's HMAC" in notes["CS", "signing"]
        source = timed.execution.gnunet_source if timed.execution else None
        assert source is not None and source["sha256"] == GNUNET_MASTER_SHA256
        # Built incrementally (archbench.images.incremental): the seconds are the result's,
        # so that the packed prefix is the same bytes for the same code.
        assert gnunet.source_build["kind"] == "meson"
        assert gnunet.source_build["prefix"] == "/opt/gnunet"
        assert "build_seconds" not in gnunet.source_build
        assert source["build_mode"] in ("clean", "incremental")
        assert float(str(source["build_seconds"])) > 0
        if kind == "cross":
            # Nothing compiled under QEMU; the library comes with the image, not from a
            # package (0.21's soname is Debian 0.20's).
            assert timed.execution is not None and timed.execution.emulated
            assert "/opt/gnunet/lib" in build.get("ldflags", "")
            runtime = build.get("runtime_packages", "").split()
            assert any(p.startswith("libgcrypt20:riscv64=") for p in runtime), runtime
            assert not any(p.startswith("libgnunet") for p in runtime), runtime
        counted = load_result(run_dir / f"{target}.instructions.json")
        counts = {
            (r.scheme, r.operation): min(r.instructions) / r.ops_per_block
            for r in counted.harness.rows
            if r.instructions
        }
        assert set(counts) == {(r.scheme, r.operation) for r in rows}, target
        assert all(r.instructions for r in counted.harness.rows), target
        # RSA-1024 signing is hundreds of times CS signing's work on any CPU.
        assert counts["RSA", "signing"] > 50 * counts["CS", "signing"], counts
