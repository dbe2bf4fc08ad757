"""The tidy frame: its records' columns and dtypes, built once for every output of a report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import load_tasks, result, row
from invoke.config import Config
from invoke.context import Context

from archbench.report import frame
from archbench.report.record import COLUMNS, DTYPES, Record
from archbench.result import AppendixRow, Result, ResultStore


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


def test_the_frame_is_its_records_in_their_declared_columns_and_dtypes() -> None:
    machines = [_machine("a"), _machine("b")]
    records = frame.tidy_records(machines)
    tidy = frame.frame_of(records)
    assert tuple(tidy.columns) == COLUMNS
    assert {c: str(tidy[c].dtype) for c in DTYPES} == DTYPES
    assert [r.target for r in records] == ["a", "a", "b", "b"]
    assert tidy["row_id"].tolist() == [r.row_id for r in records]
    assert tidy["thesis_ms"].tolist() == [r.thesis_ms for r in records]
    assert [r.thesis_ms for r in records] == pytest.approx([0.077, 34.0] * 2)
    assert records[1].appendix_row == AppendixRow("signing", 10, "RSA", 2048)
    empty = frame.frame_of([])
    assert empty.empty and {c: str(empty[c].dtype) for c in DTYPES} == DTYPES
