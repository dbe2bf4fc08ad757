"""The suites beyond blindsig, run by the real pipeline in real containers (``--run-docker``).

Tiny budgets: openssl-speed natively (single and ``-multi 2``) and emulated
on riscv64, rsa-large at 2048 bit, gnupg on 64 KiB, sodium with 8 samples.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from helpers import CI_MATRIX, REPO, WORK

from archbench import run as pipeline
from archbench.hosts import engine
from archbench.matrix import Matrix, load
from archbench.platforms import Arch
from archbench.report import render_markdown
from archbench.report.export import gnupg_frame
from archbench.report.frame import tidy_frame
from archbench.result import Result, ResultStore
from archbench.result import load as load_result

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ResultStore:
    return ResultStore(tmp_path_factory.mktemp("suites-results"))


@pytest.fixture(scope="module")
def results(store: ResultStore) -> Iterator[dict[str, Result]]:
    client: docker.DockerClient = engine.connect()
    matrix: Matrix = load(CI_MATRIX)
    host = engine.engine_arch(client)
    names = ["ci-suites-amd64", "ci-openssl-riscv64"]
    plans = pipeline.plan(matrix, matrix.select(names), {"local": host})
    ws = pipeline.Workspace(store=store, run_id="20261130T000000Z-suites", work_dir=WORK)
    outcomes = pipeline.execute({"local": client}, plans, ws, {"local": host})
    out = {}
    for o in outcomes:
        assert o.ok, f"{o.name}: {o.message}"
        assert o.result_path is not None
        out[o.name] = load_result(o.result_path)
    yield out


def _rows(result: Result, suite: str) -> dict[tuple[str, int | None, str | None, str, int], int]:
    """(scheme, key_bits, param, operation, processes) -> number of samples, valid rows only."""
    out = {}
    for row in result.harness.rows:
        if row.suite == suite:
            assert row.valid, (row, row.invalid_reason)
            out[(row.scheme, row.key_bits, row.param, row.operation, row.processes)] = len(
                row.samples_ns
            )
    return out


@pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the native target is amd64")
def test_openssl_speed_native_single_and_multi(results: dict[str, Result]) -> None:
    result = results["ci-suites-amd64"]
    assert not result.emulated
    assert result.harness.parameters is None  # blindsig did not run
    assert set(result.harness.suites) == {"openssl-speed", "rsa-large", "gnupg", "sodium"}
    assert all(run.error is None for run in result.harness.suites.values())
    tools = result.harness.setup.tools or {}
    assert tools["openssl"].startswith("OpenSSL 3.")
    rows = _rows(result, "openssl-speed")
    for processes in (1, 2):
        assert ("RSA", 2048, None, "sign", processes) in rows
        assert ("ECDSA", None, "P-521", "sign", processes) in rows
        assert ("ECDSA", None, "brainpoolP512r1", "verify", processes) in rows
    frame = tidy_frame([result])
    single = frame[(frame["suite"] == "openssl-speed") & (frame["processes"] == 1)]
    rsa_sign = single[(single["scheme"] == "RSA") & (single["operation"] == "sign")]
    # A 2048-bit RSA signature takes 0.1-10 ms on any amd64 machine of this decade.
    assert 100 < float(rsa_sign["ops_per_s"].iloc[0]) < 10_000
    gcm = frame[frame["scheme"] == "AES-128-GCM"]
    assert set(gcm["bytes_per_op"]) >= {16, 16384}
    assert (gcm["mb_per_s"] > 0).all()


@pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the native target is amd64")
def test_rsa_large_gnupg_and_sodium_native(results: dict[str, Result]) -> None:
    result = results["ci-suites-amd64"]
    rsa = _rows(result, "rsa-large")
    assert set(rsa) == {
        ("RSA", 2048, None, "key_generation", 1),
        ("RSA", 2048, None, "sign", 1),
        ("RSA", 2048, None, "verify", 1),
    }
    gnupg = _rows(result, "gnupg")
    assert gnupg[("RSA", 2048, None, "decrypt", 1)] == 2
    assert gnupg[("ECDH", None, "Curve25519", "decrypt", 1)] == 2
    csv = gnupg_frame([result])
    assert list(csv.columns[:3]) == ["device", "algorithm", "time"]
    assert set(csv["algorithm"]) == {"RSA-2048", "ECDH-Curve25519"} and len(csv) == 4
    assert (csv["bandwidth"] == 65536 / csv["time"]).all()
    sodium = _rows(result, "sodium")
    assert sodium[("Ed25519", None, None, "sign", 1)] == 8
    assert sodium[("SHA-256", None, "1000 B", "hash", 1)] == 8
    markdown = render_markdown([result])
    assert "## Suite: libsodium" in markdown and "3. best" in markdown
    assert "P-521 / brainpoolP512r1" in markdown


def test_openssl_speed_emulated_riscv64(results: dict[str, Result]) -> None:
    result = results["ci-openssl-riscv64"]
    assert result.emulated and result.harness.setup.machine == "riscv64"
    rows = _rows(result, "openssl-speed")
    assert ("RSA", 2048, None, "sign", 1) in rows and ("Ed25519", None, None, "sign", 1) in rows
    markdown = render_markdown(list(results.values()))
    assert "QEMU user emulation: not comparable with hardware" in markdown


def test_invoke_report_writes_the_gnupg_csv_and_plot(
    results: dict[str, Result], store: ResultStore, tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("invoke")), "report", "--results", str(store.root),
         "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    csv = (tmp_path / "gnupg-decrypt.csv").read_text().splitlines()
    assert csv[0] == "device,algorithm,time,bandwidth,machine,run_id" and len(csv) == 5
    assert (tmp_path / "fig-gnupg-decrypt.png").stat().st_size > 1000
    tex = (tmp_path / "appendix.tex").read_text()
    assert "NIST vs Brainpool" in tex and "ci-openssl-riscv64" in tex


@pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the target is amd64")
def test_a_failing_suite_fails_the_target_and_keeps_the_others(store: ResultStore) -> None:
    client: docker.DockerClient = engine.connect()
    matrix = load(CI_MATRIX)
    plans = pipeline.plan(matrix, matrix.select(["ci-no-gpg"]), {"local": Arch.AMD64})
    ws = pipeline.Workspace(store=store, run_id="20261130T000001Z-nogpg", work_dir=WORK)
    (outcome,) = pipeline.execute({"local": client}, plans, ws, {"local": Arch.AMD64})
    assert not outcome.ok
    assert outcome.message.startswith(
        "suite gnupg failed: gnupg: gpg is not installed in the image"
    )
    assert outcome.result_path is not None
    saved = load_result(outcome.result_path)
    assert saved.harness.suites["sodium"].error is None
    assert {r.suite for r in saved.harness.rows} == {"sodium"}
