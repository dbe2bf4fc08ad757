"""Build first, then measure (archbench.run.schedule) against the real engine (``--run-docker``).

Two native amd64 targets on one image, so the image is built at most once and
the test costs two short harness runs: every build of the build pass ends
before the first measurement starts, the two measurements never overlap, and
``build_only`` measures nothing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import docker
import pytest
from helpers import CI_MATRIX, WORK

from archbench import run as pipeline
from archbench.hosts import engine
from archbench.matrix import load
from archbench.platforms import Arch
from archbench.result import ResultStore
from archbench.result import load as load_result
from archbench.run import RunOptions, SilentReporter, TargetOutcome, TargetPlan

RUN_ID = "20261201T000000Z-schedule"

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def setup() -> tuple[docker.DockerClient, Arch, list[TargetPlan]]:
    client = engine.connect()
    host = engine.engine_arch(client)
    if host is not Arch.AMD64:
        pytest.skip("the CI matrix's native target is amd64")
    m = load(CI_MATRIX)
    (plan,) = pipeline.plan(m, m.select(["ci-amd64"]), {"local": host})
    twin = dataclasses.replace(
        plan, target=plan.target.model_copy(update={"name": "ci-amd64-twin"})
    )
    return client, host, [plan, twin]


def _schedule(
    setup: tuple[docker.DockerClient, Arch, list[TargetPlan]], tmp_path: Path, options: RunOptions
) -> tuple[ResultStore, list[TargetOutcome], list[tuple[str, str, str]]]:
    """Both targets built first, then measured, into a fresh store: (store, outcomes, events)."""
    client, host, plans = setup
    store = ResultStore(tmp_path / "results")
    ws = pipeline.Workspace(store=store, run_id=RUN_ID, work_dir=WORK)
    reporter = SilentReporter()
    outcomes = pipeline.execute(
        {"local": client}, plans, ws, {"local": host}, options, reporter=reporter
    )
    return store, outcomes, reporter.events


def test_builds_end_before_the_first_measurement(
    setup: tuple[docker.DockerClient, Arch, list[TargetPlan]], tmp_path: Path
) -> None:
    store, outcomes, events = _schedule(setup, tmp_path, RunOptions(build_first=True, build_jobs=2))
    assert [(o.name, o.ok) for o in outcomes] == [("ci-amd64", True), ("ci-amd64-twin", True)]
    # The build pass ends with one finish per target ("image ... (up to date|built)").
    finished = [i for i, (_, kind, text) in enumerate(events) if kind == "ok"]
    assert len(finished) == 4
    assert all(events[i][2].startswith("image archbench/") for i in finished[:2])
    runs = [i for i, (_, kind, stage) in enumerate(events) if kind == "stage" and stage == "run"]
    assert len(runs) == 2 and finished[1] < runs[0]
    for o in outcomes:
        assert set(o.seconds) >= {"base", "image", "run"}
        assert (
            load_result(store.path_for("20261201T000000Z-schedule", o.name)).target.name == o.name
        )
    (a_start, a_end), (b_start, b_end) = (o.run_windows[0] for o in outcomes)
    assert a_end <= b_start or b_end <= a_start  # one run slot on the local engine


def test_build_only_measures_nothing(
    setup: tuple[docker.DockerClient, Arch, list[TargetPlan]], tmp_path: Path
) -> None:
    store, outcomes, events = _schedule(
        setup, tmp_path, RunOptions(build_only=True, build_first=True)
    )
    assert [(o.name, o.ok, o.run_windows) for o in outcomes] == [
        ("ci-amd64", True, []),
        ("ci-amd64-twin", True, []),
    ]
    assert all(o.message.startswith("image archbench/") for o in outcomes)
    assert not any(kind == "stage" and stage == "run" for _, kind, stage in events)
    assert not any(store.root.rglob("*.json"))
