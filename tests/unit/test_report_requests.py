"""The report stage's two commands as library calls: what they write, and every line they show."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import result, row

from archbench.cli.report import CompareRequest, ReportRequest, compare_runs, render_report
from archbench.errors import ReportError, ResultsError
from archbench.result import Result, ResultStore

RUN_A, RUN_B = "20261129T224000Z-aaaaaa", "20261130T224000Z-bbbbbb"


def _machine(name: str, run_id: str, scale: float = 1.0) -> Result:
    samples = [int(77_000 * scale * f) for f in (1.0, 1.01, 0.99, 1.02, 0.98, 1.0)]
    rows = [row("CS", "signing", samples)]
    rows.append(row("RSA", "signing", [34_000_000, 34_100_000, 33_900_000], 2048))
    return result(name, "amd64", "x86_64", "Ryzen", rows, run_id=run_id)


def test_render_report_writes_the_folder_and_shows_each_line_in_order(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    store.save(_machine("a", RUN_A))
    (tmp_path / "results" / RUN_A / "broken.json").write_text("{}\n", encoding="utf-8")
    out = tmp_path / "out"
    lines: list[str] = []
    request = ReportRequest(results=store.root, out=out, runs=(), plots=False)
    with pytest.raises(ResultsError, match="rendered without 1 results file"):
        render_report(request, lines.append)
    assert (
        lines[0]
        == f"rendering run {RUN_A}, the latest with results (--all-runs or --run for others)"
    )
    assert lines[1].startswith(f"warning: skipped {tmp_path / 'results' / RUN_A / 'broken.json'}")
    # Each phase says it starts (no figures: --no-plots), then every path written.
    assert lines[2:4] == [
        "writing the chapter, the exports and the suites' tables",
        "writing the results page",
    ]
    written = [line.removeprefix("wrote ") for line in lines[4:]]
    assert written[:4] == [
        str(out / name)
        for name in (
            "appendix.tex",
            "appendix-standalone.tex",
            "appendix.md",
            "archbench-appendix.sty",
        )
    ]
    assert all(Path(p).is_file() for p in written)
    assert (out / ".archbench-outputs.json").is_file()


def test_render_report_refuses_an_unknown_run_before_writing(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    store.save(_machine("a", RUN_A))
    request = ReportRequest(results=store.root, out=tmp_path / "out", runs=("nope",))
    with pytest.raises(ReportError, match=f"no run nope in .*; runs there: {RUN_A}"):
        render_report(request, print)
    assert not (tmp_path / "out").exists()


def test_compare_runs_shows_the_table_and_writes_tex_and_csv(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    store.save(_machine("a", RUN_A))
    store.save(_machine("a", RUN_B, scale=1.5))
    lines: list[str] = []
    request = CompareRequest(results=store.root, out=tmp_path / "out", run_a=RUN_A, run_b=RUN_B)
    written = compare_runs(request, lines.append)
    assert [p.suffix for p in written] == [".tex", ".csv"]
    assert lines[0] == "environment a: nothing recorded differs"
    assert lines[1].startswith(f"B/A per operation, A = {RUN_A}, B = {RUN_B}")
    assert lines[-2:] == [f"wrote {p}" for p in written]
    assert all(p.is_file() for p in written)
