"""``invoke report`` builds the tidy records (and their frame) once for every output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import load_tasks, result, row
from invoke.config import Config
from invoke.context import Context

from archbench.report import frame
from archbench.report.record import Record
from archbench.result import Result, ResultStore


def _machine(name: str) -> Result:
    rows = [row("CS", "signing", [77_000, 78_000, 76_000])]
    rows.append(row("RSA", "signing", [34_000_000, 34_100_000, 33_900_000], 2048))
    return result(name, "amd64", "x86_64", "Ryzen", rows)


def test_report_builds_the_tidy_frame_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = load_tasks("archbench_tasks_once")
    store = ResultStore(tmp_path / "results")
    store.save(_machine("a"))
    store.save(_machine("b"))
    calls: list[int] = []
    original = frame.tidy_records

    def counting(results: Any) -> list[Record]:
        calls.append(len(results))
        return original(results)

    # Every frame is made of tidy_records' records (export's tidy_frame calls it too).
    monkeypatch.setattr(frame, "tidy_records", counting)
    settings = {"results": str(tmp_path / "results"), "reports": str(tmp_path / "out")}
    tasks.report(Context(config=Config(overrides={"archbench": settings})), all_runs=True)
    assert calls == [2]
    assert (tmp_path / "out" / "results.csv").is_file()
    assert (tmp_path / "out" / "fig-signing.png").is_file()
    assert "| a (amd64, Debian 13, GNUnet " in (tmp_path / "out" / "appendix.md").read_text()
