"""``invoke report --all-runs`` over many runs of the same machines (issue 40, item 3).

The chapter and ``results.csv`` show each machine's latest run and say how many others
there are; ``runs.csv`` and ``run-rows.csv`` hold every run; the page draws every row over
time and writes each run's detail beside it, to be read when asked for; a second report
reads the store's index instead of the files. A single run's report is as it was.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from helpers import counted, result, row

from archbench.cli.report import ReportRequest, render_report
from archbench.report import PAGE_FILE
from archbench.result import IndexEntry, Result, ResultStore
from archbench.result import index as index_module


def _run(i: int) -> str:
    return f"20261201T{i:02d}0000Z-abcdef"


def _machine(name: str, arch: str, i: int, scale: float = 1.0) -> Result:
    rows = [
        row("CS", "signing", [int(90_000 * scale) + k for k in range(8)]),
        row("RSA", "signing", [int(5_000_000 * scale) + k for k in range(8)], key_bits=2048),
    ]
    r = result(name, arch, arch, "C", rows, emulated=arch == "riscv64", run_id=_run(i))
    return r.model_copy(
        update={
            "harness": r.harness.model_copy(update={"started_at": f"2026-12-01T{i:02d}:00:00Z"})
        }
    )


def _history(root: Path, runs: int = 6) -> ResultStore:
    """``runs`` runs of amd64 and of riscv64 (counted too), one machine per run; the CS
    signing of the last amd64 run 10 % slower."""
    store = ResultStore(root)
    for i in range(runs):
        amd = _machine("amd64-trixie", "amd64", 2 * i, 1.1 if i == runs - 1 else 1.0)
        riscv = _machine("riscv64-trixie", "riscv64", 2 * i + 1)
        store.save(amd)
        store.save(riscv)
        store.save(counted(riscv, {"signing": 300_000 + i}))
    return store


def _report(store: ResultStore, out: Path, lines: list[str] | None = None) -> None:
    request = ReportRequest(results=store.root, out=out, runs=None, plots=False)
    render_report(request, on_line=(lines if lines is not None else []).append)


def test_the_chapter_shows_each_machines_latest_run_and_the_exports_every_run(
    tmp_path: Path,
) -> None:
    store = _history(tmp_path / "results")
    out = tmp_path / "out"
    lines: list[str] = []
    _report(store, out, lines)
    assert any("--all-runs: 12 runs of 2 machines" in line for line in lines)
    md = (out / "appendix.md").read_text(encoding="utf-8")
    assert "the 10 earlier runs of these machines are in runs.csv, run-rows.csv" in md
    sections = [line for line in md.splitlines() if line.startswith("## ") and " — " in line]
    assert len(sections) == 2 and "@" not in md  # one section per machine
    results = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    assert {r["run_id"] for r in results} == {_run(10), _run(11)}
    runs = list(csv.DictReader(io.StringIO((out / "runs.csv").read_text())))
    assert [r["run_id"] for r in runs] == [_run(2 * i) for i in range(6)] + [
        _run(2 * i + 1) for i in range(6)
    ]
    assert runs[0]["machine"] == "amd64-trixie (amd64)"
    assert (
        runs[6]["files"]
        == f"{_run(1)}/riscv64-trixie.json;{_run(1)}/riscv64-trixie.instructions.json"
    )
    values = list(csv.DictReader(io.StringIO((out / "run-rows.csv").read_text())))
    assert len(values) == 12 * 2 + 6 * 2  # two rows a run, and riscv64's counts
    last = [v for v in values if v["run_id"] == _run(10) and v["row_id"] == "blindsig:CS:signing"]
    assert float(last[0]["per_op_ns"]) == pytest.approx(9900.35)


def test_the_page_draws_every_run_and_keeps_each_runs_detail_beside_it(tmp_path: Path) -> None:
    store = _history(tmp_path / "results")
    out = tmp_path / "out"
    _report(store, out)
    page = (out / PAGE_FILE).read_text(encoding="utf-8")
    assert "Over time: 12 runs of 2 machines" in page
    data = json.loads(
        page.split('<script type="application/json" id="over-time-data">')[1].split("</script>")[0]
    )
    assert data["machines"] == ["amd64-trixie (amd64)", "riscv64-trixie (riscv64, emulated)"]
    titles = [f["title"] for f in data["figures"]]
    assert titles[0] == "blindsig CS signing: time per operation over time"
    assert "blindsig CS signing: instructions per operation over time" in titles
    cs = data["figures"][0]["lines"]
    assert [line["m"] for line in cs] == [0, 1] and len(cs[0]["y"]) == 6
    assert cs[0]["y"][-1] == pytest.approx(9900.35)
    # The latest runs are drawn in full too; the others only in the detail files.
    assert f"Run {_run(10)}" in page and f"Run {_run(0)}" not in page
    detail = (out / "results-runs-0.js").read_text(encoding="utf-8")
    assert detail.startswith("archbenchRuns(0,")
    runs = json.loads(detail.removeprefix("archbenchRuns(0,").removesuffix(");\n"))
    assert [r[0] for r in runs] == [r[0] for r in data["runs"]]
    first = runs[0][2][0]  # amd64's time file of its first run
    assert first[0] == "time" and first[2] == f"../results/{_run(0)}/amd64-trixie.json"
    assert ["CPU", "C"] in first[4]
    listed = json.loads((out / ".archbench-outputs.json").read_text())["files"]
    assert "results-runs-0.js" in listed and "runs.csv" in listed


def test_a_second_report_reads_the_index_not_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _history(tmp_path / "results")
    _report(store, tmp_path / "one")
    read: list[str] = []
    original = index_module.read_entry

    def reading(root: Path, relative: str) -> tuple[IndexEntry, Result]:
        read.append(relative)
        return original(root, relative)

    monkeypatch.setattr("archbench.result.store.read_entry", reading)
    _report(store, tmp_path / "two")
    assert read == []
    for name in ("runs.csv", "run-rows.csv", "results.csv", "appendix.md", "results-runs-0.js"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_detail_files_of_runs_no_longer_shown_are_removed(tmp_path: Path) -> None:
    store = _history(tmp_path / "results", runs=2)
    out = tmp_path / "out"
    _report(store, out)
    assert (out / "results-runs-0.js").is_file()
    for i in range(1, 4):  # one run of each machine left: nothing over time
        for path in (tmp_path / "results" / _run(i)).iterdir():
            path.unlink()
    lines: list[str] = []
    _report(store, out, lines)
    assert not (out / "results-runs-0.js").exists() and not (out / "runs.csv").exists()
    assert "Over time" not in (out / PAGE_FILE).read_text(encoding="utf-8")
    assert not any("--all-runs:" in line for line in lines)
