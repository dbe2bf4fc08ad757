"""The thesis's security-module table, for real: ``invoke bench`` with a ``taler:`` source.

Exchange 0.14.0 with GNUnet 0.22.2 from the shared tarballs (``../shared/taler``,
``../shared/gnunet``) built natively for amd64 (GNUnet's util, json, curl and pq
libraries, then the exchange's ``src/util``), ``test_helper_cs`` and ``test_helper_rsa``
(RSA-1024 only: RSA-2048 takes 16-21 s per run) run twice each, their lines stored as
security-module rows and rendered beside the thesis's figures; in the same run a pairing
that does not build (exchange 0.14.1 needs GNUnet 0.23 or later) ends its target with the
step and the compiler's last lines, and the good target's results are kept. ``invoke
history --taler`` measures exchange 0.9.2 (Debian 12's libgnunet-dev 0.19.3) and 0.14.0
(the first test's image, reused by its content hash) in interleaved rounds.
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest
from helpers import GNUNET_TARBALLS, TALER_TARBALLS, WORK, run_invoke

from archbench.result import ResultStore
from archbench.result import load as load_result

pytestmark = pytest.mark.docker

GNUNET_0222 = "78e418ed0fb891b5f47914d2538ce9280eee283de63f0c3d1fdac3c20881e879"
TALER_0140 = "cee7ff9624d3cac12754d2677321a2f3eae470ef77976a0da96c82bced749e8b"
TALER_0141 = "412b1a3e21e1d05f1c6a78e703e0b7840518ce2cf183141ac9c9bb7f03ef37c5"
TALER_092 = "1fcb4a4f699677fbdad6c5fcab8724d5145b3cb2ab2516c4cd50e83f7ad1bfd9"

MATRIX = """
version: 1
bases:
  debian-trixie: {{source: bootstrap, suite: trixie, variant: minbase}}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
    gnunet: {{tarball: {gnunet}, sha256: {gnunet_sha}}}
targets:
  - name: taler-0.14.0
    arch: amd64
    base: debian-trixie
    taler: {{tarball: {good}, sha256: {good_sha}}}
    suites:
      blindsig: {{enabled: false}}
      taler-helper: {{rsa_bits: [1024], repetitions: 2, timeout_s: 600}}
  - name: taler-0.14.1-with-0.22.2
    arch: amd64
    base: debian-trixie
    taler: {{tarball: {bad}, sha256: {bad_sha}}}
    suites:
      blindsig: {{enabled: false}}
      taler-helper: {{rsa_bits: [1024], repetitions: 1}}
"""


def test_security_module_rows_measured_parsed_and_reported(
    engine_client: docker.DockerClient, slim_amd64_image: str, tmp_path: Path
) -> None:
    # slim_amd64_image bootstraps the trixie amd64 base if the engine lacks it.
    good = TALER_TARBALLS / "taler-exchange-0.14.0.tar.gz"
    assert good.is_file(), f"no shared exchange tarballs in {TALER_TARBALLS}"
    matrix = tmp_path / "matrix.yml"
    matrix.write_text(
        MATRIX.format(
            gnunet=GNUNET_TARBALLS / "gnunet-0.22.2.tar.gz",
            gnunet_sha=GNUNET_0222,
            good=good,
            good_sha=TALER_0140,
            bad=TALER_TARBALLS / "taler-exchange-0.14.1.tar.gz",
            bad_sha=TALER_0141,
        )
    )
    results, reports = tmp_path / "results", tmp_path / "reports"
    done = run_invoke(
        "bench", "--matrix", str(matrix),
        settings={"results": results, "work": WORK, "reports": reports},
        timeout=3600,
    )  # fmt: skip
    output = done.stdout + done.stderr
    # One target failed (its own exit code), the other's results are kept.
    assert done.returncode != 0, output[-3000:]
    assert "taler-0.14.1-with-0.22.2: FAILED" in output, output[-3000:]
    assert "step 'make -C src/util (libtalerutil, secmods, test_helper_*)' failed" in output
    assert "GNUNET_PROGRAM_run" in output or "error:" in output, output[-3000:]
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    assert not (run_dir / "taler-0.14.1-with-0.22.2.json").exists()
    result = load_result(run_dir / "taler-0.14.0.json")
    suite = result.harness.suites["taler-helper"]
    assert suite.error is None, suite.error
    rows = {
        (r.scheme, r.key_bits, r.operation, r.ops_per_block): r
        for r in result.harness.rows
        if r.suite == "security-module"
    }
    for scheme, bits in (("CS", None), ("RSA", 1024)):
        seq = rows[(scheme, bits, "helper_sequential_signing", 100)]
        par = rows[(scheme, bits, "helper_parallel_signing", 100)]
        total = rows[(scheme, bits, "helper_parallel_signing", 800)]
        assert len(seq.samples_ns) == 2 and len(total.samples_ns) == 2
        assert len(par.samples_ns) == 16  # 8 forked clients, 2 runs
        # The 800 operations' wall time is at least one client's own time.
        assert max(total.samples_ns) >= min(par.samples_ns)
        assert par.note is not None and "fewer than its 8 forked clients" in par.note
    assert suite.extra["prefix_variable"] == "TALER_PREFIX"
    assert (result.harness.setup.tools or {}).get("taler-exchange") == "0.14.0"
    assert result.execution is not None and result.execution.taler_source is not None
    assert result.execution.taler_source["sha256"] == TALER_0140
    assert result.execution.taler_source["version"] == "0.14.0"
    path = run_dir / "logs" / "taler-0.14.0.build.log"
    if path.exists():  # absent when an earlier session's image was reused whole
        log = path.read_text(errors="replace")
        # Layers of an earlier session may be reused: then the step says so instead.
        built = "built taler-exchange 0.14.0 src/util against GNUnet 0.22.2" in log
        assert built or "Using cache" in log.split("build-taler-exchange.sh", 1)[-1], log[-2000:]
    report = run_invoke(
        "report", "--reference",
        settings={"results": results, "work": WORK, "reports": reports},
        timeout=600,
    )  # fmt: skip
    assert report.returncode == 0, report.stdout[-3000:] + report.stderr[-3000:]
    markdown = (reports / "appendix.md").read_text()
    assert "| RSA 1024 bit       | 100 sequential signature operations |" in markdown
    assert "- taler-exchange (security modules): 0.14.0 (built from tarball" in markdown
    assert "- 100 parallel signature operations: each of the test's 8 forked clients" in markdown
    # The thesis's figures beside ours; its "RSA 4092" keeps the label it was printed with.
    summary = markdown[markdown.index("**Summary of security module across machines") :]
    assert "thesis-security-module (amd64)" in summary and "RSA 4092 bit" in summary
    assert "2.591" in summary  # the thesis's CS sequential figure, in ms


RISCV64 = """
version: 1
bases:
  debian-trixie: {{source: bootstrap, suite: trixie, variant: minbase}}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
targets:
  - name: riscv64-taler
    arch: riscv64
    base: debian-trixie
    gnunet: {{tarball: {gnunet}, sha256: {gnunet_sha}}}
    taler: {{tarball: {good}, sha256: {good_sha}}}
    suites:
      blindsig: {{enabled: false}}
      taler-helper: {{rsa_bits: [1024], repetitions: 1, timeout_s: 1800}}
"""


def test_riscv64_cross_compiles_the_exchange_times_it_and_counts_the_secmod(
    engine_client: docker.DockerClient, tmp_path: Path
) -> None:
    good = TALER_TARBALLS / "taler-exchange-0.14.0.tar.gz"
    assert good.is_file(), f"no shared exchange tarballs in {TALER_TARBALLS}"
    matrix = tmp_path / "matrix.yml"
    matrix.write_text(
        RISCV64.format(
            gnunet=GNUNET_TARBALLS / "gnunet-0.22.2.tar.gz",
            gnunet_sha=GNUNET_0222,
            good=good,
            good_sha=TALER_0140,
        )
    )
    results, reports = tmp_path / "results", tmp_path / "reports"
    done = run_invoke(
        "bench", "--matrix", str(matrix), "--metric", "time,instructions",
        settings={"results": results, "work": WORK, "reports": reports},
        timeout=5400,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    result = load_result(run_dir / "riscv64-taler.json")
    assert result.execution is not None and result.execution.emulated
    assert result.harness.setup.machine == "riscv64"
    rows = {
        (r.scheme, r.operation, r.ops_per_block)
        for r in result.harness.rows
        if r.suite == "security-module"
    }
    assert ("RSA", "helper_sequential_signing", 100) in rows
    assert ("CS", "helper_parallel_signing", 800) in rows
    # Built in the cross stage on the engine's architecture; the emulated stage compiled
    # nothing (its build log names no compiler step of the exchange).
    cross_log = run_dir / "logs" / "riscv64-taler.cross.log"
    if cross_log.exists():  # absent when an earlier run's stage was reused
        text = cross_log.read_text(errors="replace")
        built = "built taler-exchange 0.14.0 src/util against GNUnet" in text
        assert built or "Using cache" in text.split("build-taler-exchange.sh", 1)[-1]
        assert "Empty continuation line" not in text
    build_log = run_dir / "logs" / "riscv64-taler.build.log"
    if build_log.exists():
        assert "build-taler-exchange.sh" not in build_log.read_text(errors="replace")
    # Counted: the secmod the test started ran under the plugin-loading QEMU.
    counted = load_result(run_dir / "riscv64-taler.instructions.json")
    assert counted.metric == "instructions" and counted.harness.counting is not None
    assert counted.harness.counting.plugin_version == "3"
    by_key = {
        (r.scheme, r.key_bits, r.operation): r
        for r in counted.harness.rows
        if r.suite == "taler-helper"
    }
    printed = 100 + 800 + 1 + 4 + 16 + 64 + 256  # the operations the test prints
    for scheme, bits, low, high in (("CS", None, 100_000, 2_000_000), ("RSA", 1024, 3e6, 5e7)):
        sign = by_key[(scheme, bits, "secmod_signing")]
        keygen = by_key[(scheme, bits, "secmod_key_generation")]
        assert sign.instructions is not None and keygen.instructions is not None
        # Every signature the test asked for, and its functional tests' few more.
        assert printed <= sign.ops_per_block <= printed + 400, sign.ops_per_block
        per_signature = sign.instructions[0] / sign.ops_per_block
        assert low < per_signature < high, (scheme, per_signature)
        # A key costs more than a signature (RSA: prime search; CS: with start-up).
        assert 1 <= keygen.ops_per_block <= 50
        assert keygen.instructions[0] / keygen.ops_per_block > per_signature
        function = "cs_sign_derive" if scheme == "CS" else "rsa_sign_blinded"
        assert sign.note is not None and f"GNUNET_CRYPTO_{function} calls" in sign.note
    runs = counted.harness.suites["taler-helper"].extra["runs"]
    assert all(r["counts"]["threads"] >= 9 for r in runs)  # main + 8 clients at least
    report = run_invoke(
        "report", settings={"results": results, "work": WORK, "reports": reports}, timeout=600
    )
    assert report.returncode == 0, report.stdout[-3000:] + report.stderr[-3000:]
    markdown = (reports / "appendix.md").read_text()
    assert "secmod signing" in markdown
    assert "measures QEMU user emulation of the secmod" in markdown
    assert "secmod signing" in (reports / "instructions.md").read_text()


HISTORY = """
version: 1
bases:
  debian-trixie: {source: bootstrap, suite: trixie, variant: minbase}
  debian-bookworm: {source: bootstrap, suite: bookworm, variant: minbase}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
targets:
  - name: amd64-taler
    arch: amd64
    base: debian-trixie
    suites:
      blindsig: {enabled: false}
      taler-helper: {rsa_bits: [1024], repetitions: 1, timeout_s: 600}
"""


def test_a_history_of_two_exchanges_is_timed_in_rounds_and_named_by_their_versions(
    engine_client: docker.DockerClient, slim_amd64_image: str, tmp_path: Path
) -> None:
    # The 0.14.0 image is the first test's (same profile, sources and base: same content
    # key); 0.9.2's builds on Debian 12 against its libgnunet-dev in about 3 minutes.
    old, new = (TALER_TARBALLS / f"taler-exchange-{v}.tar.gz" for v in ("0.9.2", "0.14.0"))
    assert old.is_file() and new.is_file(), f"no shared exchange tarballs in {TALER_TARBALLS}"
    matrix = tmp_path / "matrix.yml"
    matrix.write_text(HISTORY)
    results, reports = tmp_path / "results", tmp_path / "reports"
    gnunet = GNUNET_TARBALLS / "gnunet-0.22.2.tar.gz"
    done = run_invoke(
        "history", "--matrix", str(matrix),
        "--taler", f"{old}@sha256:{TALER_092},{new}@sha256:{TALER_0140}",
        "--gnunet", f"debian,{gnunet}@sha256:{GNUNET_0222}",
        "--base", "debian-bookworm,debian-trixie", "--rounds", "2", "--seed", "5",
        settings={"results": results, "work": WORK, "reports": reports},
        timeout=3600,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    store = ResultStore(results)
    (history_id,) = store.histories()
    manifest = store.load_history(history_id)
    assert [v.base for v in manifest.versions] == ["debian-bookworm", "debian-trixie"]
    assert [r.round for r in manifest.order] == [1, 2]
    prefixes = []
    for v in manifest.versions:
        timed = [r for p in store.files([v.run_id]) if (r := load_result(p)).metric == "time"]
        # One container run per round, every run carrying the session's id.
        assert sorted(r.execution.repeat_index for r in timed if r.execution) == [1, 2]
        assert {r.execution.interleaved for r in timed if r.execution} == {v.session}
        prefixes += [r.harness.suites["taler-helper"].extra["prefix_variable"] for r in timed]
        rows = {(r.scheme, r.operation, r.ops_per_block) for t in timed for r in t.harness.rows}
        assert ("RSA", "helper_sequential_signing", 100) in rows
        assert ("CS", "helper_parallel_signing", 800) in rows
    assert prefixes == ["TALER_PREFIX"] * 4  # both versions read TALER_PREFIX
    # The versions are named by what was built: the exchange and the GNUnet under it.
    assert "- v1: exchange 0.9.2 + GNUnet 0.19.3 (taler-exchange-0.9.2.tar.gz" in done.stdout
    assert "- v2: exchange 0.14.0 + GNUnet 0.22.2 (taler-exchange-0.14.0.tar.gz" in done.stdout
    # Per block in ms, as the thesis prints it: 2 rounds are 2 sequential blocks (no
    # interval) and 16 blocks of the 8 forked clients (with one), v2 with its ratio to v1.
    blocks = done.stdout[done.stdout.index("### Security module per block") :]
    line = next(x for x in blocks.splitlines() if "| CS helper sequential signing, 100 ops" in x)
    assert line.count("(n=2)") == 2 and line.count("×)") == 1, line
    line = next(x for x in blocks.splitlines() if "| RSA-1024 helper parallel signing, 100" in x)
    assert line.count("(n=16)") == 2 and line.count("] (n=16)") == 2, line
    page = (reports / "results.html").read_text()
    assert "Security module per block across the versions" in page
    assert "v2 exchange 0.14.0 + GNUnet 0.22.2" in page
