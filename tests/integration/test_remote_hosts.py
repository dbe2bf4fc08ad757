"""Targets on a second, real Docker engine (loopback TCP) beside the local one.

The second engine is the session fixture ``second_engine`` of
``tests/conftest.py`` (see ``tests/engines.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest
from helpers import REPO, WORK

from archbench import run as pipeline
from archbench.errors import MatrixError
from archbench.hosts import engine
from archbench.matrix import Matrix, parse
from archbench.platforms import Arch
from archbench.result import ResultStore, load

pytestmark = pytest.mark.docker

MATRIX = """
version: 1
metrics: [time]
defaults:
  blindsig: {{iterations: 2, repetitions: 3, rsa_bits: [1024], warmup: 0}}
bases:
  debian-trixie: {{source: bootstrap, suite: trixie, variant: minbase}}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
hosts:
  second: {{url: "tcp://127.0.0.1:{port}", build_network: host}}
targets:
  - {{name: second-amd64-a, arch: amd64, base: debian-trixie, host: second}}
  - {{name: second-amd64-b, arch: amd64, base: debian-trixie, host: second}}
  - {{name: local-amd64, arch: amd64, base: debian-trixie}}
  - {{name: local-riscv64, arch: riscv64, base: debian-trixie}}
  - {{name: second-arm64, arch: arm64, base: debian-trixie, host: second}}
"""


@pytest.fixture(scope="module")
def matrix(second_engine: int) -> Matrix:
    return parse(MATRIX.format(port=second_engine), "remote test matrix")


def _connect(m: Matrix, names: list[str]) -> tuple[dict[str, docker.DockerClient], dict[str, Arch]]:
    clients = {n: engine.connect_host(m.host(n), n) for n in names}
    return clients, {n: engine.engine_arch(c) for n, c in clients.items()}


def test_the_first_engine_keeps_its_bridge(second_engine: int) -> None:
    # Regression: a second dockerd with --bridge=none deleted docker0.
    assert subprocess.run(["ip", "link", "show", "docker0"], capture_output=True).returncode == 0


def test_arm64_declared_native_on_an_amd64_engine_is_refused(matrix: Matrix) -> None:
    _, archs = _connect(matrix, ["second"])
    assert archs["second"] is Arch.AMD64
    with pytest.raises(MatrixError, match="host second runs amd64, not arm64"):
        pipeline.plan(matrix, matrix.select(["second-arm64"]), {"local": Arch.AMD64, **archs})


def test_two_hosts_run_in_parallel_and_one_host_never_overlaps(
    matrix: Matrix, tmp_path: Path
) -> None:
    names = ["second-amd64-a", "second-amd64-b", "local-riscv64"]
    clients, archs = _connect(matrix, ["local", "second"])
    plans = pipeline.plan(matrix, matrix.select(names), archs)
    store = ResultStore(tmp_path)
    ws = pipeline.Workspace(store=store, run_id="20261129T000000Z-remote", work_dir=WORK)
    t0 = time.monotonic()
    outcomes = pipeline.execute(clients, plans, ws, archs)
    wall = time.monotonic() - t0
    assert [o.ok for o in outcomes] == [True, True, True], [o.message for o in outcomes]
    results = {r.target.name: r for r in store.load_all()[0]}
    a, b, riscv = (results[n] for n in names)
    for r in (a, b):
        assert r.execution is not None and not r.execution.emulated
        assert r.execution.docker_host == f"second ({matrix.hosts['second'].display})"
        assert r.execution.host_parallel_runs == 1
        assert r.harness.setup.machine == "x86_64"
        assert all(row.valid for row in r.harness.rows)
    assert riscv.execution is not None and riscv.execution.emulated
    assert riscv.execution.docker_host == "local" and riscv.harness.setup.machine == "riscv64"
    # max_parallel_runs 1: the two runs on the second engine follow each other.
    ((a0, a1),), ((b0, b1),), ((r0, _r1),) = (o.run_windows for o in outcomes)
    assert a1 <= b0 or b1 <= a0
    print(f"\nriscv64 on the local engine ran {r0 - min(a0, b0):+.1f} s after the first amd64 run")
    # The image was built on the second engine itself, from the context sent through the API.
    assert a.execution is not None
    assert clients["second"].images.get(a.execution.image_tag).id == a.execution.image_id
    print(f"\ntwo-host run of {names}: {wall:.1f} s wall")


def test_resume_keeps_finished_targets_and_measures_the_rest(
    matrix: Matrix, tmp_path: Path
) -> None:
    matrix_file = tmp_path / "matrix.yml"
    text = MATRIX.format(port=matrix.hosts["second"].display.rsplit(":", 1)[1])
    matrix_file.write_text(text)
    results = tmp_path / "results"
    env = {**os.environ, "INVOKE_ARCHBENCH_RESULTS": str(results)}
    invoke = str(Path(sys.executable).with_name("invoke"))
    proc = subprocess.Popen(
        [invoke, "bench", "--matrix", str(matrix_file), "--target", "local-amd64,local-riscv64",
         "--repetitions", "30"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 900
        while not list(results.glob("*/local-amd64.json")):
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the first target never finished"
            time.sleep(0.5)
        proc.kill()  # no clean-up chance at all: a lost session
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    first = run_dir / "local-amd64.json"
    before = first.stat().st_mtime_ns
    assert not (run_dir / "local-riscv64.json").exists()
    subprocess.run([invoke, "clean", "--matrix", str(matrix_file)], cwd=REPO, env=env, check=True)
    done = subprocess.run(
        [invoke, "bench", "--resume", run_dir.name],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "local-amd64: kept" in done.stdout
    assert first.stat().st_mtime_ns == before
    resumed = load(run_dir / "local-riscv64.json")
    assert resumed.harness.parameters is not None
    assert resumed.run_id == run_dir.name and resumed.harness.parameters.repetitions == 30


def test_a_pool_member_that_does_not_answer_is_left_out_and_said(second_engine: int) -> None:
    # Nothing listens on port 1 of the loopback: 'gone' is left out, 'second' takes the
    # pool's target (no container is started: connecting and planning only).
    text = (
        MATRIX.format(port=second_engine)
        .replace(
            "targets:",
            "pools:\n  amd: [gone, second]\ntargets:\n"
            "  - {name: pooled, arch: amd64, base: debian-trixie, host: amd}",
        )
        .replace("hosts:\n", 'hosts:\n  gone: {url: "tcp://127.0.0.1:1"}\n')
    )
    m = parse(text, "pool test matrix")
    said: list[str] = []
    clients, archs = pipeline.connect_engines(m, m.select(["pooled"]), said.append)
    assert sorted(clients) == ["second"] and archs["second"] is Arch.AMD64
    (line,) = said
    assert line.startswith("host gone (tcp://127.0.0.1:1) does not answer")
    assert line.endswith("(left out of this run: the other hosts of its pool take its targets)")
    (p,) = pipeline.plan(m, m.select(["pooled"]), archs)
    assert p.hosts == ("second",) and p.host_name == "second" and not p.emulated
