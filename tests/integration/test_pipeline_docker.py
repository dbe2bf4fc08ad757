"""The whole pipeline against a real Docker engine and real QEMU (``--run-docker``)."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import docker
import pytest
from helpers import CI_MATRIX, CS_OPS, REPO, RSA_OPS, WORK

from archbench import run as pipeline
from archbench.errors import BaseImageError, EmulationError
from archbench.hosts import engine
from archbench.images import Builder, ensure_base, ensure_image, plan_image
from archbench.images.bases import build_scratch_image
from archbench.matrix import Base, Matrix, load
from archbench.platforms import Arch
from archbench.report import render_latex, render_markdown_table
from archbench.result import Execution, Result, ResultStore
from archbench.result import load as load_result
from archbench.run import LABEL_RUN, smoke_test

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    return engine.connect()


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load(CI_MATRIX)


@pytest.fixture(scope="module")
def outcomes(
    client: docker.DockerClient, matrix: Matrix, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ResultStore, list[pipeline.TargetOutcome]]]:
    """One run of the CI matrix: broken target first, so its failure precedes the others."""
    store = ResultStore(tmp_path_factory.mktemp("results"))
    host = engine.engine_arch(client)
    order = ["ci-broken", "ci-amd64", "ci-riscv64"]
    plans = pipeline.plan(matrix, matrix.select(order), {"local": host})
    plans.sort(key=lambda p: order.index(p.name))
    ws = pipeline.Workspace(store=store, run_id="20261129T000000Z-test00", work_dir=WORK)
    yield store, pipeline.execute({"local": client}, plans, ws, {"local": host})


def _result(outcomes: list[pipeline.TargetOutcome], name: str) -> Result:
    (o,) = [o for o in outcomes if o.name == name]
    assert o.ok, o.message
    assert o.result_path is not None
    result = load_result(o.result_path)
    assert result.execution is not None and result.reference is None
    return result


def _execution(result: Result) -> Execution:
    assert result.execution is not None
    return result.execution


def _assert_every_thesis_row(result: Result) -> None:
    got = {(r.scheme, r.key_bits, r.operation) for r in result.harness.rows}
    want = {("CS", None, op) for op in CS_OPS} | {("RSA", 1024, op) for op in RSA_OPS}
    assert got == want
    for row in result.harness.rows:
        assert row.valid, row.invalid_reason
        # Calibration grows blocks from the requested 2 ops until one takes >= 1 ms.
        assert row.iterations_requested == 2 and row.ops_per_block >= 2
        assert row.calibrated == (row.ops_per_block > 2)
        assert min(row.samples_ns) > 0 and len(row.samples_ns) == 3
        if row.operation == "unblinding" and row.scheme == "CS":
            # Sub-µs: only calibration makes it measurable.
            calibration = result.harness.calibration
            assert calibration is not None and row.calibrated
            assert statistics.median(row.samples_ns) >= 100 * calibration.tick_ns
        assert all(s > 0 for s in row.samples_ns)
    # Blocks of 2 are measured; tables print the thesis's 10x figure from the per-op time.
    table = render_markdown_table(result)
    assert table.count("10x ") == len(want)


@pytest.mark.skipif(
    Arch.native() is not Arch.AMD64, reason="the CI matrix's native target is amd64"
)
def test_native_amd64(outcomes: tuple[ResultStore, list[pipeline.TargetOutcome]]) -> None:
    result = _result(outcomes[1], "ci-amd64")
    _assert_every_thesis_row(result)
    assert result.harness.setup.machine == "x86_64"
    assert _execution(result).emulated is False and _execution(result).qemu_version is None
    assert result.harness.setup.gnunet_version is not None
    assert result.harness.setup.packages.get("libsodium")


@pytest.mark.emulated
def test_emulated_riscv64(outcomes: tuple[ResultStore, list[pipeline.TargetOutcome]]) -> None:
    result = _result(outcomes[1], "ci-riscv64")
    _assert_every_thesis_row(result)
    assert result.harness.setup.machine == "riscv64"
    assert _execution(result).emulated is True
    assert _execution(result).qemu_version and _execution(result).qemu_version != "unknown"
    latex = render_latex([result])
    assert "emulated on amd64" in latex
    # The drivers were cross-compiled natively (archbench.images.cross) and the image holds the
    # runtime libraries they were linked against, at those versions, and no compiler.
    build = result.harness.setup.build
    assert build is not None and build["build_kind"] == "cross"
    assert build["cc"] == "riscv64-linux-gnu-gcc" and build["build_machine"] == "x86_64"
    linked = dict(p.partition("=")[::2] for p in build["runtime_packages"].split())
    gnunet = next(v for k, v in linked.items() if k.startswith("libgnunet"))
    assert gnunet == result.harness.setup.packages["libgnunetutil"]
    assert (
        linked[next(k for k in linked if k.startswith("libsodium"))]
        == (result.harness.setup.packages["libsodium"])
    )
    assert result.harness.setup.gcc_version is None


def test_one_failing_target_keeps_the_others(
    outcomes: tuple[ResultStore, list[pipeline.TargetOutcome]],
) -> None:
    store, done = outcomes
    broken = next(o for o in done if o.name == "ci-broken")
    assert not broken.ok
    assert "archbench-no-such-package" in broken.message
    assert "ci-broken.build.log" in broken.message
    assert [o.name for o in done if o.ok] == ["ci-amd64", "ci-riscv64"]
    names = sorted(p.name for p in store.files())
    assert names == ["ci-amd64.json", "ci-riscv64.json"]


def test_unchanged_image_is_reused(
    client: docker.DockerClient,
    matrix: Matrix,
    outcomes: tuple[ResultStore, list[pipeline.TargetOutcome]],
    tmp_path: Path,
) -> None:
    result = _result(outcomes[1], "ci-amd64")
    base = client.images.get("archbench-base/debian-trixie:amd64")
    spec = plan_image(
        Arch.AMD64,
        "slim",
        matrix.profiles["slim"].packages,
        "archbench-base/debian-trixie:amd64",
        str(base.id),
    )
    assert spec.tag == _execution(result).image_tag
    image_id, reused = ensure_image(Builder(client, tmp_path, tmp_path), spec, "b.log")
    assert reused and image_id == _execution(result).image_id
    assert not (tmp_path / "b.log").exists()


@pytest.mark.emulated
def test_smoke_test_catches_wrong_platform_metadata(
    client: docker.DockerClient,
    outcomes: tuple[ResultStore, list[pipeline.TargetOutcome]],
    tmp_path: Path,
) -> None:
    riscv = "archbench-base/debian-trixie:riscv64"
    assert smoke_test(client, riscv, Arch.RISCV64) == "riscv64"
    # A riscv64 root file system declared linux/arm64 (what an ignored
    # 'docker import --platform' produces): only running it can tell.
    box = client.containers.create(riscv, command=["true"], platform="linux/riscv64")
    try:
        rootfs = tmp_path / "rootfs.tar"
        with rootfs.open("wb") as fh:
            for chunk in box.export():
                # types-docker declares str; the API streams bytes.
                fh.write(cast(bytes, chunk))
    finally:
        box.remove(force=True)
    tag = "archbench-test/mislabelled:arm64"
    build_scratch_image(
        client, rootfs, tag=tag, platform="linux/arm64", labels={}, log_path=tmp_path / "build.log"
    )
    try:
        with pytest.raises(EmulationError, match=r"'uname -m' gave 'riscv64'.*expected aarch64"):
            smoke_test(client, tag, Arch.ARM64)
    finally:
        client.images.remove(tag, force=True)


def _invoke(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).with_name("invoke")), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_invoke_bench_and_report(
    outcomes: tuple[ResultStore, list[pipeline.TargetOutcome]], tmp_path: Path
) -> None:
    env = {"INVOKE_ARCHBENCH_RESULTS": str(tmp_path / "results")}
    done = _invoke(
        "bench", "--matrix", str(CI_MATRIX), "--target", "ci-amd64", "--repetitions", "2", env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| CS                 | 10x signing" in done.stdout
    (run_dir,) = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    assert (run_dir / "ci-amd64.json").is_file()
    done = _invoke("report", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    tex = (tmp_path / "out" / "appendix.tex").read_text()
    assert r"\begin{tabular}{llr}" in tex and "10x unblinding" in tex


def test_invoke_bench_bad_arch_is_a_clear_error_and_builds_nothing() -> None:
    done = _invoke("bench", "--arch", "riscv")
    assert done.returncode == 2
    assert (
        "unknown architecture 'riscv'; allowed: amd64, arm64, riscv64, ppc64le, armv7"
        in done.stderr
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_keeps_finished_results_and_removes_containers(
    client: docker.DockerClient,
    outcomes: tuple[ResultStore, list[pipeline.TargetOutcome]],
    tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("invoke")),
            "bench",
            "--matrix",
            str(CI_MATRIX),
            "--target",
            "ci-amd64,ci-riscv64",
            "--repetitions",
            "50",
            "--rsa-bits",
            "2048",
        ],
        cwd=REPO,
        env={**os.environ, "INVOKE_ARCHBENCH_RESULTS": str(results)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Started from a background shell, SIGINT is inherited as ignored and
        # Python then installs no KeyboardInterrupt handler: the test would
        # interrupt nothing.
        preexec_fn=_default_sigint,
    )
    try:
        # Wait until the amd64 result is stored and a riscv64 container of this
        # run is running (the engine is shared: other runs' containers do not count).
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            stored = list(results.glob("*/ci-amd64.json"))
            if stored:
                mine: dict[str, str | list[str] | bool] = {
                    "label": f"{LABEL_RUN}={stored[0].parent.name}"
                }
                if client.containers.list(filters=mine):
                    break
            time.sleep(0.5)
        else:
            pytest.fail("the run never reached the riscv64 harness")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    output = proc.stdout.read() if proc.stdout else ""
    assert proc.returncode == 130, output
    assert "Finish it with: invoke bench --resume" in output
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    assert client.api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_dir.name}"}) == []
    assert sorted(p.name for p in run_dir.iterdir() if p.is_file()) == ["ci-amd64.json", "run.json"]
    load_result(run_dir / "ci-amd64.json")
    manifest = ResultStore(results).load_manifest(run_dir.name)
    assert (
        manifest.targets == ("ci-amd64", "ci-riscv64") and manifest.overrides["repetitions"] == 50
    )


def test_failed_pull_names_the_bootstrap_alternative(
    client: docker.DockerClient, tmp_path: Path
) -> None:
    # A name no registry serves: the pull fails with or without a registry.
    base = Base(source="pull", image="archbench-test/no-such-image:0")
    with pytest.raises(BaseImageError) as info:
        ensure_base(Builder(client, tmp_path, tmp_path), "nope", base, Arch.RISCV64)
    msg = str(info.value)
    assert "pulling archbench-test/no-such-image:0 for linux/riscv64 failed" in msg
    assert "'source: bootstrap'" in msg
