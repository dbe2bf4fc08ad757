"""Work beside a target: its own row only when it takes a while, its result or error handed on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from archbench.errors import BaseImageError
from archbench.images import Builder
from archbench.run import SilentReporter, TimingStore
from archbench.run.target import side_by_side


def builder(tmp_path: Path) -> Builder:
    # The work below never touches the engine: no client is needed.
    return Builder(client=None, work_dir=tmp_path, log_dir=tmp_path)  # type: ignore[arg-type]


def test_quick_work_shows_no_row_and_hands_on_its_result(tmp_path: Path) -> None:
    reporter = SilentReporter()
    future = side_by_side(reporter, "riscv64-trixie", "count tools", builder(tmp_path), lambda b: 7)
    assert future.result(timeout=5) == 7
    time.sleep(0.1)
    assert reporter.events == []


def test_slow_work_has_a_row_and_its_duration_is_the_next_eta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import archbench.run.target as target

    monkeypatch.setattr(target, "SIDE_QUIET_S", 0.05)
    monkeypatch.setattr(target, "SIDE_REUSED_S", 0.1)
    reporter = SilentReporter()
    store = TimingStore(tmp_path)

    def work(b: Builder) -> str:
        time.sleep(0.3)
        return "built"

    future = side_by_side(
        reporter, "t", "count tools", builder(tmp_path), work, (store, "image/local/x/amd64", "r")
    )
    assert future.result(timeout=5) == "built"
    assert reporter.events[0] == ("t · count tools", "stage", "build")
    assert reporter.events[1][:2] == ("t · count tools", "ok")
    seconds = store.get("image/local/x/amd64")
    assert seconds is not None and 0.3 <= seconds < 3


def test_a_failure_shows_even_when_quick_and_reaches_whoever_waits(tmp_path: Path) -> None:
    reporter = SilentReporter()

    def work(b: Builder) -> None:
        raise BaseImageError("mmdebstrap failed with exit code 1")

    future = side_by_side(reporter, "t", "build base", builder(tmp_path), work)
    with pytest.raises(BaseImageError, match="exit code 1"):
        future.result(timeout=5)
    assert reporter.events == [
        ("t · build base", "stage", "build"),
        ("t · build base", "failed", "mmdebstrap failed with exit code 1"),
    ]
