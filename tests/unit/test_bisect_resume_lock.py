"""Two ``invoke bisect --resume`` of one bisection at once (issue 39, item 3): the second
waits for the bisection's lock, then reads the record the first left, so no step is
measured twice and neither overwrites the other's record. The engines and the measuring
of a step are replaced (what is under test is the bookkeeping around them)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import CI_MATRIX

import archbench.cli.bisect as bisect_cli
from archbench import report
from archbench.cli.bisect import BisectOptions, measure_bisection
from archbench.platforms import Arch
from archbench.result import (
    BisectCommit,
    BisectCount,
    BisectManifest,
    BisectStep,
    ResultStore,
)
from archbench.run import SilentReporter

BISECT_ID = "20261207T120000Z-b1b1b1"
MOVED_AT = 5


def _manifest() -> BisectManifest:
    return BisectManifest(
        bisect_id=BISECT_ID,
        created_at="2026-12-07T12:00:00Z",
        matrix_file=str(CI_MATRIX),
        matrix_text=CI_MATRIX.read_text(),
        repository="file:///srv/gnunet.git",
        good="v1",
        bad="v2",
        row="CS signing",
        scheme="CS",
        operation="signing",
        targets={"amd64": "ci-amd64"},
        commits=tuple(
            BisectCommit(
                commit=f"{i:040x}", parents=(i - 1,) if i else (), subject=f"c{i}", date="2026"
            )
            for i in range(12)
        ),
    )


def test_two_resumes_at_once_measure_each_step_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[tuple[str, int]] = []

    def fake_measure(manifest: BisectManifest, _m: Any, index: int, *_rest: Any) -> BisectStep:
        measured.append((threading.current_thread().name, index))
        time.sleep(0.05)  # long enough for the other resume to be waiting
        level = 1000.0 if index < MOVED_AT else 1100.0
        return BisectStep(
            index=index,
            commit=manifest.commits[index].commit,
            subject="s",
            date="2026",
            counts=(
                BisectCount(
                    arch="amd64",
                    target="ci-amd64",
                    run_id=f"20261207T1300{index:02d}Z-a",
                    instructions=level,
                ),
            ),
            seconds=0.05,
            finished_at="2026-12-07T13:00:00Z",
        )

    monkeypatch.setattr(bisect_cli, "_measure", fake_measure)
    monkeypatch.setattr(
        bisect_cli, "connect_engines", lambda *_a: ({"local": None}, {"local": Arch.AMD64})
    )
    monkeypatch.setattr(bisect_cli, "resolve_apt_proxy", lambda *_a: None)
    # The command imports these from the reports when a step is measured.
    monkeypatch.setattr(report, "stored_rows", lambda *_a: {})
    monkeypatch.setattr(report, "bisect_moves", lambda *_a: ())
    store = ResultStore(tmp_path / "results")
    store.save_bisect(_manifest())
    waits: list[str] = []
    options = BisectOptions(
        matrix=CI_MATRIX,
        results=store.root,
        work=tmp_path / "work",
        resume=BISECT_ID,
        on_wait=waits.append,
    )
    errors: list[BaseException] = []

    def resume() -> None:
        try:
            measure_bisection(options, SilentReporter())
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    first = threading.Thread(target=resume, name="first")
    second = threading.Thread(target=resume, name="second")
    first.start()
    while not measured:  # the first holds the locks and measures
        time.sleep(0.01)
    second.start()
    first.join(30)
    second.join(30)
    assert errors == []
    indexes = [i for _, i in measured]
    assert len(indexes) == len(set(indexes)), measured  # no step measured twice
    assert {name for name, _ in measured} == {"first"}  # nothing left for the second
    assert any("waiting" in w for w in waits), waits
    record = store.load_bisect(BISECT_ID)
    assert [s.index for s in record.steps] == indexes  # neither record lost
    assert record.outcome.startswith(f"amd64: first moved at {MOVED_AT:040x}"), record.outcome
