"""``invoke report`` builds the tidy frame once for the chapter, the exports and the plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import load_tasks, result, row
from invoke.config import Config
from invoke.context import Context

from archbench.report import export, frame
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
    original = frame.tidy_frame

    def counting(results: Any) -> pd.DataFrame:
        calls.append(len(results))
        return original(results)

    # export imported the name: it is patched where each module looks it up.
    monkeypatch.setattr(export, "tidy_frame", counting)
    monkeypatch.setattr(frame, "tidy_frame", counting)
    settings = {"results": str(tmp_path / "results"), "reports": str(tmp_path / "out")}
    tasks.report(Context(config=Config(overrides={"archbench": settings})), all_runs=True)
    assert calls == [2]
    assert (tmp_path / "out" / "results.csv").is_file()
    assert (tmp_path / "out" / "fig-signing.png").is_file()
    assert "| a (amd64, Debian 13, GNUnet " in (tmp_path / "out" / "appendix.md").read_text()
