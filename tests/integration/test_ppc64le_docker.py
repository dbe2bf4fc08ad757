"""ppc64le end to end under QEMU: Debian 12 base, libgnunetutil 0.19, progress on the way.

Tiny parameters (RSA 1024 only, 2 operations per block, 2 repetitions). The base and
image are the ones ``invoke bench`` builds for matrix.yml's ppc64le target (same base,
same packages, same content hash), so a machine that ran either reuses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import docker
import pytest
from helpers import CI_MATRIX, CS_OPS, RSA_OPS, WORK, Recorder

from archbench import run as pipeline
from archbench.hosts import engine
from archbench.matrix import load
from archbench.report import render_latex
from archbench.result import Result, ResultStore
from archbench.result import load as load_result
from archbench.run import TimingStore, suite_key

pytestmark = [pytest.mark.docker, pytest.mark.emulated]


@dataclass
class Run:
    result: Result
    outcome: pipeline.TargetOutcome
    plan: pipeline.TargetPlan
    store: ResultStore
    recorder: Recorder


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    client: docker.DockerClient = engine.connect()
    m = load(CI_MATRIX)
    host = engine.engine_arch(client)
    (plan,) = pipeline.plan(m, m.select(["ci-ppc64le"]), {"local": host})
    store = ResultStore(tmp_path_factory.mktemp("ppc64le-results"))
    ws = pipeline.Workspace(store=store, run_id="20261201T000000Z-ppc64le", work_dir=WORK)
    recorder = Recorder()
    (outcome,) = pipeline.execute({"local": client}, [plan], ws, {"local": host}, reporter=recorder)
    assert outcome.ok, outcome.message
    assert outcome.result_path is not None
    yield Run(load_result(outcome.result_path), outcome, plan, store, recorder)


def test_ppc64le_measures_every_thesis_row_on_debian_12(run: Run) -> None:
    setup = run.result.harness.setup
    assert setup.machine == "ppc64le"
    assert run.result.execution is not None and run.result.execution.emulated is True
    assert setup.os == "Debian GNU/Linux 12 (bookworm)"
    assert (setup.packages["libgnunetutil"] or "").startswith("0.19.")
    assert setup.packages["libgcrypt"] and setup.packages["libsodium"]
    got = {(r.scheme, r.key_bits, r.operation) for r in run.result.harness.rows}
    assert got == {("CS", None, op) for op in CS_OPS} | {("RSA", 1024, op) for op in RSA_OPS}
    for row in run.result.harness.rows:
        assert row.valid, row.invalid_reason
        assert len(row.samples_ns) == 2 and min(row.samples_ns) > 0
    latex = render_latex([run.result])
    assert "Debian GNU/Linux 12 (bookworm)" in latex
    assert "libgnunetutil:ppc64el version: 0.19." in latex


def test_ppc64le_run_reports_progress_and_stores_the_suite_duration(run: Run) -> None:
    texts = [text for text, _ in run.recorder.progressed]
    assert any(t.startswith("blindsig 0/2 CS, RSA-1024") for t in texts), texts
    assert any(t.startswith("blindsig 2/2 RSA-1024 repetition 2/2") for t in texts), texts
    assert {"base", "image", "run"} <= set(run.outcome.seconds)
    duration = run.result.harness.suites["blindsig"].duration_s
    assert run.plan.suites.blindsig is not None
    key = suite_key("local", "ci-ppc64le", "blindsig", run.plan.suites.blindsig)
    assert TimingStore(WORK).get(key) == duration
    # The next run of the same suite and settings starts with that duration as its ETA.
    store = TimingStore(WORK)
    assert store.run_estimate("local", "ci-ppc64le", run.plan.suites) == duration
