"""Builders and paths shared by the unit and integration tests.

pytest puts this folder on ``sys.path`` (it holds the root ``conftest.py``),
so test modules import it as ``helpers``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from archbench.errors import ResultsError
from archbench.inputs import load_json
from archbench.result import (
    DIGEST_KEY,
    CountCalibration,
    Counting,
    Execution,
    HarnessDocument,
    HistoryManifest,
    HistoryRound,
    HistoryVersion,
    Parameters,
    Result,
    Row,
    Setup,
    TargetInfo,
    content_digest,
)
from archbench.run import SilentReporter

REPO = Path(__file__).resolve().parents[1]
"""The repository root; test modules import it from here, never compute it again."""
HARNESS_DIR = REPO / "harness"
CI_MATRIX = REPO / "tests" / "integration" / "matrix-ci.yml"
"""The matrix the integration tests and CI run: small targets, one per architecture."""
WORK = REPO / ".archbench" / "work"
"""The work directory of ``invoke bench`` (invoke.yaml's ``work``), shared by the
integration tests: bases are content-hashed, so one session's are reused by the next."""
SHARED = next(
    (p for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if p.is_dir()),
    REPO.parent / "shared",
)
"""The workplace's test data beside the clone (``../shared``; a worktree under ``wt/`` finds
it one folder further up)."""
TALER_TARBALLS = SHARED / "taler"
"""GNU Taler exchange sources (``taler-exchange-{0.9.2,0.14.0,0.14.1}.tar.gz``, their sha256
and pairings in its README): issue 31's test data."""
GNUNET_TARBALLS = SHARED / "gnunet"
"""Upstream GNUnet sources (``gnunet-{0.21.2,0.22.2,0.24.3,0.27.0}.tar.gz``, their sha256 in
its README; issue 29's ``gnunet-master-20260630.tar.gz`` and the git history
``gnunet-git-v0.21.2-v0.27.0.tar.gz``): test data beside the repository, or beside the
folder of worktrees it is one of; tests that need it skip without it."""
GNUNET_MASTER_SHA256 = "d96b6ff51b51deebaf8cd2c26438bbe5923f118ce126a16be2a2168f06522577"
"""The sha256 of ``GNUNET_TARBALLS / "gnunet-master-20260630.tar.gz"`` (its README)."""
GNUNET_GIT_SHA256 = "77d44f07b43b03c22831a67f781968efa6ac3cb4fa2db5b3e7d58bdb460a268b"
"""The sha256 of ``GNUNET_TARBALLS / "gnunet-git-v0.21.2-v0.27.0.tar.gz"`` (its README)."""
GNUNET_027_SHA256 = "77102aa83fdb40abf2bf7434869abd7feb53f692a2d9bd4cf86a48e33f29a196"
"""The sha256 of ``GNUNET_TARBALLS / "gnunet-0.27.0.tar.gz"`` (its README)."""
GOLDEN = REPO / "tests" / "golden"
"""Golden files of rendered reports; ``ARCHBENCH_UPDATE_GOLDEN=1`` rewrites them."""
SCHEMA: dict[str, Any] = json.loads((HARNESS_DIR / "schema-v1.json").read_text(encoding="utf-8"))

CS_OPS = [
    "key_generation",
    "r_derivation",
    "blinding_secret_derivation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
]
"""The thesis's CS rows, in the appendix's order."""
RSA_OPS = ["key_generation", "blinding", "signing", "unblinding", "verifying"]
"""The thesis's RSA rows, in the appendix's order."""


def load_module(path: Path, name: str) -> ModuleType:
    """Import the file ``path`` (a script, not in a package) as a fresh module ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve string annotations through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_harness(name: str = "archbench_harness") -> ModuleType:
    """Import ``harness/archbench_harness.py`` (a script beside its package ``abh``) as ``name``."""
    return load_module(HARNESS_DIR / "archbench_harness.py", name)


def load_tasks(name: str) -> ModuleType:
    """Import the repository's ``tasks.py`` (the invoke tasks) as a fresh module ``name``."""
    return load_module(REPO / "tasks.py", name)


def assert_golden(name: str, text: str) -> None:
    """``text`` equals the golden file ``tests/golden/<name>``, byte for byte.

    With ``ARCHBENCH_UPDATE_GOLDEN=1`` the file is (re)written first: review the diff.
    """
    path = GOLDEN / name
    if os.environ.get("ARCHBENCH_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} missing; ARCHBENCH_UPDATE_GOLDEN=1 writes it"
    assert path.read_text(encoding="utf-8") == text, f"{name} differs from its golden file"


def row(
    scheme: str,
    operation: str,
    samples_ns: list[int],
    key_bits: int | None = None,
    valid: bool = True,
    reason: str | None = None,
    suite: str = "blindsig",
) -> Row:
    return Row.model_validate(
        {
            "suite": suite,
            "scheme": scheme,
            "key_bits": key_bits,
            "operation": operation,
            "ops_per_block": 10,
            "samples_ns": samples_ns,
            "valid": valid,
            "invalid_reason": reason,
        }
    )


def result(
    name: str,
    arch: str,
    machine: str,
    cpu_model: str,
    rows: list[Row],
    *,
    emulated: bool = False,
    cores: int = 8,
    kernel: str = "Linux 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)",
    run_id: str = "20261129T224000Z-1a2b3c",
) -> Result:
    return Result(
        run_id=run_id,
        target=TargetInfo(
            name=name,
            arch=arch,
            platform=f"linux/{arch}",
            base="debian:trixie",
            profile="thesis",
        ),
        execution=Execution(
            emulated=emulated,
            host_arch="amd64",
            host_cpu="AMD EPYC 7763 64-Core Processor",
            qemu_version="8.2.2" if emulated else None,
            image_id="sha256:0123456789ab",
            image_tag=f"archbench/{name}:latest",
        ),
        harness=HarnessDocument(
            format="archbench-harness",
            version=1,
            harness_version="0.1.0",
            started_at="2026-11-29T22:40:00Z",
            duration_s=12.5,
            parameters=Parameters(iterations=10, repetitions=3, rsa_bits=(1024, 2048)),
            setup=Setup(
                cpu_model=cpu_model,
                cores=cores,
                machine=machine,
                kernel=kernel,
                os="Debian GNU/Linux 13 (trixie)",
                packages={
                    "libsodium": "1.0.18-1+b2",
                    "libgcrypt": "1.11.0-7",
                    "libgnunetutil": "0.21.1-1",
                },
                gnunet_version="0.21.1",
            ),
            rows=tuple(rows),
        ),
    )


def rewrite_result(path: Path, data: dict[str, Any]) -> None:
    """Write the edited results file ``data`` to ``path`` as archbench would have written
    it: with the integrity digest of its new content (a test's crafted file, not a
    tampered one)."""
    body = {k: v for k, v in data.items() if k != DIGEST_KEY}
    # Over the content as archbench reads it (control characters made visible).
    read = load_json(json.dumps(body), str(path), ResultsError)
    path.write_text(json.dumps({**body, DIGEST_KEY: content_digest(read)}), encoding="utf-8")


def run_invoke(
    *args: str,
    settings: dict[str, Path] | None = None,
    timeout: float = 300,
    cwd: Path = REPO,
) -> subprocess.CompletedProcess[str]:
    """``python -m invoke ARGS`` in ``cwd`` (the repository unless told), output captured,
    never raising on failure.

    ``settings`` override ``invoke.yaml`` (``{"results": path}`` sets
    ``INVOKE_ARCHBENCH_RESULTS``), as a user's environment would.
    """
    env = {**os.environ}
    env.update({f"INVOKE_ARCHBENCH_{k.upper()}": str(v) for k, v in (settings or {}).items()})
    return subprocess.run(
        [sys.executable, "-m", "invoke", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class Recorder(SilentReporter):
    """A pipeline reporter that keeps every progress text and its ETA in s (None: unknown)."""

    def __init__(self) -> None:
        super().__init__()
        self.progressed: list[tuple[str, float | None]] = []

    def progress(self, target: str, text: str, seconds: float | None, step: str) -> None:
        self.progressed.append((text, seconds))


def counted(timed: Result, per_block: dict[str, int]) -> Result:
    """``timed`` as the instruction-count result of the same target (``metric`` instructions).

    ``per_block`` maps a row's operation to its instructions per block (three blocks:
    the count, +10, the count); rows not named are left without counts.
    """
    counting = Counting(
        instrument="archbench QEMU TCG plugin",
        qemu=f"qemu-{timed.target.arch}",
        qemu_version="7.2.22",
        qemu_package="1:7.2+dfsg-7+deb12u18",
        cpu_model="max",
        plugin_version="1",
        plugin_api=1,
        calibration=CountCalibration(
            iterations=1000,
            instructions_per_iteration=2,
            counts=(2030, 4030),
            expected_difference=2000,
            difference=2000,
            overhead=30,
            exact=True,
        ),
    )
    rows = tuple(
        r.model_copy(update={"instructions": (n, n + 10, n), "samples_ns": r.samples_ns[:3]})
        if (n := per_block.get(r.operation)) is not None
        else r
        for r in timed.harness.rows
    )
    harness = timed.harness.model_copy(update={"counting": counting, "rows": rows})
    # Validated again: a counting result must carry harness.counting.
    return Result.model_validate(
        timed.model_copy(update={"metric": "instructions", "harness": harness}).model_dump()
    )


def synthetic_history(
    run_ids: tuple[str, ...] = ("20261201T100000Z-aaaaaa", "20261201T110000Z-bbbbbb"),
    hostile_cpu: str = "<script>alert(1)</script> RISC-V host",
    scales: tuple[float, ...] = (1.0, 1.1),
) -> tuple[HistoryManifest, dict[str, list[Result]]]:
    """A history of two GNUnet versions without Docker: per version an amd64 run (timed
    and counted, CS and RSA-2048 signing and verifying) and a riscv64 one (emulated,
    counted, 30 % more instructions than amd64), the second version 10 % more;
    riscv64's CPU model is ``hostile_cpu``. Returns the manifest and the results by run
    id (not stored). More ``run_ids`` make more versions, each with its factor in
    ``scales`` (one per run id)."""
    labels = (
        "Debian's libgnunet",
        "gnunet-0.27.0.tar.gz",
        *(f"gnunet-0.{26 + i}.0.tar.gz" for i in range(2, len(run_ids))),
    )
    results: dict[str, list[Result]] = {}
    for run_id, scale in zip(run_ids, scales, strict=True):
        rows = [
            row("CS", "signing", [int(90_000 * scale) + k for k in range(8)]),
            row("CS", "verifying", [int(400_000 * scale) + k for k in range(8)]),
            row("RSA", "signing", [int(5_000_000 * scale) + k for k in range(8)], key_bits=2048),
            row("RSA", "verifying", [int(80_000 * scale) + k for k in range(8)], key_bits=2048),
        ]
        amd = result("amd64-trixie", "amd64", "x86_64", "AMD EPYC 7763", rows, run_id=run_id)
        riscv = result(
            "riscv64-trixie", "riscv64", "riscv64", hostile_cpu, rows, emulated=True, run_id=run_id
        )
        counts = {
            "signing": int(300_000 * scale),
            "verifying": int(1_200_000 * scale),
        }
        riscv_counts = {op: n * 13 // 10 for op, n in counts.items()}
        results[run_id] = [amd, counted(amd, counts), counted(riscv, riscv_counts)]
    session = run_ids[0]
    manifest = HistoryManifest(
        history_id="20261201T095959Z-cccccc",
        created_at="2026-12-01T09:59:59Z",
        matrix_file="matrix.yml",
        matrix_text="version: 1\n",
        targets=("amd64-trixie", "riscv64-trixie"),
        rounds=1,
        seed=7,
        versions=tuple(
            HistoryVersion(label=label, gnunet=label, run_id=run_id, session=session)
            for label, run_id in zip(labels, run_ids, strict=True)
        ),
        order=(HistoryRound(session=session, round=1, order=run_ids),),
    )
    return manifest, results


def find_chromium() -> str:
    """Debian's ``chromium``; skips the test where it is missing (a failure in CI, whose
    setup installs it: ``conftest.RIGHT_IN_CI``)."""
    found = shutil.which("chromium")
    if found is None:
        pytest.skip("needs Debian's chromium (scripts/setup-host.sh --tests installs it)")
    return found


def chromium_run(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless ``chromium ARGS`` with its own profile, no network (every host resolves to
    nothing) and every console message on stderr (``:CONSOLE`` lines)."""
    return subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # as root, as CI runs
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=15000",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
