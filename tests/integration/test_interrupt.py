"""Ctrl-C at the worst moments leaves no container of the run (``--run-docker``).

``KeyboardInterrupt`` is delivered to the main thread (``_thread.interrupt_main``)
exactly when a worker enters a stage, that is just before it creates that
stage's container: the window in which a sweep by label used to miss a
container created after it. Nothing of the run may exist afterwards, also a
few seconds later, when a worker that had not seen the interrupt would have
created its next container.
"""

from __future__ import annotations

import _thread
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.models.containers import Container, ContainerCollection
from helpers import CI_MATRIX, WORK

from archbench import run as pipeline
from archbench.hosts import engine
from archbench.matrix import load
from archbench.platforms import Arch
from archbench.result import ResultStore
from archbench.run import LABEL_RUN, SilentReporter

pytestmark = pytest.mark.docker


class _InterruptAt(SilentReporter):
    """Interrupts the main thread when a target enters ``stage`` (the n-th time)."""

    def __init__(self, stage: str, target: str) -> None:
        super().__init__()
        self.at, self.target = stage, target

    def stage(self, target: str, stage: str) -> None:
        super().stage(target, stage)
        if (target, stage) == (self.target, self.at):
            _thread.interrupt_main()


@pytest.fixture(autouse=True)
def python_sigint() -> Iterator[None]:
    """Python's SIGINT handler while a test runs: ``_thread.interrupt_main()`` does nothing
    while SIGINT is ignored, as it is in a process started from a background shell."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize(
    ("target", "stage", "slow_create"),
    [
        ("ci-amd64", "run", False),
        # The create request still in flight when the clean-up starts (a slow
        # or remote engine): the sweep must not miss the container it makes.
        ("ci-amd64", "run", True),
        ("ci-amd64", "image", False),
        pytest.param("ci-riscv64", "smoke", False, marks=pytest.mark.emulated),
    ],
)
def test_interrupt_before_a_create_leaves_nothing(
    target: str, stage: str, slow_create: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if slow_create:
        create = ContainerCollection.create

        def slow(self: ContainerCollection, *args: Any, **kwargs: Any) -> Container:
            time.sleep(1.5)
            return create(self, *args, **kwargs)

        monkeypatch.setattr(ContainerCollection, "create", slow)
    client: docker.DockerClient = engine.connect()
    m = load(CI_MATRIX)
    host = engine.engine_arch(client)
    if host is not Arch.AMD64:
        pytest.skip("the CI matrix's native target is amd64")
    # Two targets on one host: after the interrupted one, the next must not start.
    names = [target, "ci-amd64" if target != "ci-amd64" else "ci-riscv64"]
    # A harness that would run for minutes: Ctrl-C must not wait for it.
    plans = pipeline.plan(m, m.select(names), {"local": host}, {"repetitions": 500})
    plans.sort(key=lambda p: names.index(p.name))
    run_id = f"20261201T000000Z-int-{stage}{'-slow' if slow_create else ''}"
    ws = pipeline.Workspace(store=ResultStore(tmp_path), run_id=run_id, work_dir=WORK)
    mine: dict[str, str | list[str] | bool] = {"label": f"{LABEL_RUN}={run_id}"}
    reporter = _InterruptAt(stage, target)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        pipeline.execute({"local": client}, plans, ws, {"local": host}, reporter=reporter)
    stopped = time.monotonic() - t0
    assert client.api.containers(all=True, filters=mine) == []
    # Before the gate, a worker went on to create and wait for the harness,
    # and clean-up waited 30 s for it.
    assert stopped < 20, f"Ctrl-C took {stopped:.1f} s"
    time.sleep(5)  # a worker that missed the interrupt would have created one by now
    assert client.api.containers(all=True, filters=mine) == []
    assert (target, "stage", stage) in reporter.events
    # Work beside a target reports on rows of its own ("ci-riscv64 · build base").
    started = {t.split(" · ")[0] for t, kind, _ in reporter.events if kind == "stage"}
    assert started == {target}, reporter.events
