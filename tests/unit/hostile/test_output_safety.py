"""Outputs that could be destroyed, written twice at once, or read as commands (issue 23).

Each test is one kind: figures through a symlink, two writers of one folder, output
names built from ids with dots, FIFOs named like results files, empty path settings,
escape sequences and formulas from results files, and a terminal that cannot encode µ.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO, result, rewrite_result, row

from archbench.cli import safe_text
from archbench.cli.report import CompareRequest, ReportRequest, compare_runs, render_report
from archbench.errors import ReportError, ResultsError
from archbench.result import ResultStore, folder_lock

RUN = "20261129T224000Z-1a2b3c"


@pytest.fixture(autouse=True)
def _alarm() -> Iterator[None]:
    # A read or lock that blocked would hang pytest: end the test instead.
    signal.alarm(60)
    yield
    signal.alarm(0)


def _store(root: Path, names: list[str], run_id: str = RUN, cpu: str = "c") -> ResultStore:
    store = ResultStore(root)
    for i, name in enumerate(names):
        store.save(
            result(
                name,
                "amd64",
                "x86_64",
                cpu,
                [row("CS", "signing", [77_000 + i, 78_000, 76_000, 77_500, 76_500, 77_200])],
                run_id=run_id,
            )
        )
    return store


def test_a_symlink_at_a_figure_name_is_replaced_not_followed(tmp_path: Path) -> None:
    _store(tmp_path / "results", ["a", "b"])
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    (out / "fig-signing.png").symlink_to(victim)
    render_report(ReportRequest(tmp_path / "results", out), on_line=lambda line: None)
    assert victim.read_text(encoding="utf-8") == "keep me"
    figure = out / "fig-signing.png"
    assert not figure.is_symlink()
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.glob(".*.tmp"))


def test_more_machines_than_a_chart_can_label_get_no_figures_and_a_line(tmp_path: Path) -> None:
    _store(tmp_path / "results", [f"t{i:02d}" for i in range(61)])
    lines: list[str] = []
    paths = render_report(ReportRequest(tmp_path / "results", tmp_path / "out"), lines.append)
    assert not [p for p in paths if p.name.startswith("fig-")]
    assert any("figures not drawn: 61 machines" in line for line in lines)
    assert "fig-" not in (tmp_path / "out" / "appendix.md").read_text(encoding="utf-8")


def test_a_second_report_into_one_out_waits_and_says_so(tmp_path: Path) -> None:
    _store(tmp_path / "results", ["a"])
    out = tmp_path / "out"
    lines: list[str] = []
    waiting = threading.Event()

    def on_line(line: str) -> None:
        lines.append(line)
        if line.startswith("waiting: another archbench is writing"):
            waiting.set()

    request = ReportRequest(tmp_path / "results", out, plots=False)
    with folder_lock(out, ReportError, "--out", lambda line: None):
        second = threading.Thread(target=render_report, args=(request, on_line))
        second.start()
        assert waiting.wait(30)
        # While the first holds the folder, the second wrote nothing.
        assert not (out / "appendix.md").exists()
    second.join(30)
    assert not second.is_alive()
    assert (out / "appendix.md").is_file()
    assert any(line.startswith("wrote ") for line in lines)


def test_the_lock_dies_with_its_holder_kill_9(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from archbench.errors import ReportError; from archbench.result import folder_lock\n"
            "with folder_lock(Path(sys.argv[1]), ReportError, '--out', print):\n"
            "    print('held', flush=True); time.sleep(600)",
            str(tmp_path / "out"),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.kill()  # SIGKILL: no cleanup runs
    holder.wait()
    waited: list[str] = []
    with folder_lock(tmp_path / "out", ReportError, "--out", waited.append):
        pass
    assert waited == []


def test_out_that_is_a_file_is_not_a_directory(tmp_path: Path) -> None:
    _store(tmp_path / "results", ["a"])
    (tmp_path / "out").write_text("notes", encoding="utf-8")
    with pytest.raises(ReportError, match="is a file, not a directory"):
        render_report(ReportRequest(tmp_path / "results", tmp_path / "out"), lambda line: None)
    assert (tmp_path / "out").read_text(encoding="utf-8") == "notes"


def test_compare_names_with_dots_never_collide(tmp_path: Path) -> None:
    for run_id in ("v1.0", "v1.1", "v1.2"):
        _store(tmp_path / "results", ["a"], run_id=run_id)
    out = tmp_path / "out"
    first = compare_runs(CompareRequest(tmp_path / "results", out, "v1.0", "v1.1"), print)
    second = compare_runs(CompareRequest(tmp_path / "results", out, "v1.0", "v1.2"), print)
    assert [p.name for p in first] == ["compare-v1.0-vs-v1.1.tex", "compare-v1.0-vs-v1.1.csv"]
    assert [p.name for p in second] == ["compare-v1.0-vs-v1.2.tex", "compare-v1.0-vs-v1.2.csv"]
    assert "v1.1" in first[1].read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["report", "compare", "archive"])
def test_a_fifo_named_like_a_results_file_blocks_nothing(tmp_path: Path, command: str) -> None:
    store = _store(tmp_path / "results", ["a"])
    os.mkfifo(tmp_path / "results" / RUN / "b.json")
    if command == "report":
        lines: list[str] = []
        with pytest.raises(ResultsError, match="rendered without 1 results file"):
            render_report(ReportRequest(tmp_path / "results", tmp_path / "out"), lines.append)
        assert any("a FIFO (named pipe), not a regular file" in line for line in lines)
    elif command == "compare":
        lines = []
        compare_runs(CompareRequest(tmp_path / "results", tmp_path / "out", RUN, RUN), lines.append)
        assert any("b.json" in line and "FIFO" in line for line in lines)
    else:
        loaded, failures = store.load_all([RUN], merge=False)
        assert [r.target.name for r in loaded] == ["a"]
        assert "FIFO" in failures[0].message


def test_escape_sequences_from_results_files_reach_no_output_raw(tmp_path: Path) -> None:
    evil = "\x1b]0;pwned\x07\x1b[2J\u202eCPU\x7f\x85"
    _store(tmp_path / "results", ["a"], cpu="plain")
    path = tmp_path / "results" / RUN / "a.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["harness"]["setup"]["cpu_model"] = evil
    rewrite_result(path, doc)
    lines: list[str] = []
    render_report(ReportRequest(tmp_path / "results", tmp_path / "out"), lines.append)
    for name in ("appendix.md", "appendix.tex", "results.csv", "results.json"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert not any(ch in text for ch in "\x1b\x07\x7f\x85\u202e"), name
    # Visible instead: the CSV cell shows what the file held.
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\u202eCPU\\x7f\\x85" in (
        tmp_path / "out" / "results.csv"
    ).read_text(encoding="utf-8")


def test_text_cells_of_results_csv_are_not_formulas(tmp_path: Path) -> None:
    _store(tmp_path / "results", ["a"], cpu='=HYPERLINK("http://x")')
    render_report(ReportRequest(tmp_path / "results", tmp_path / "out"), lambda line: None)
    csv = (tmp_path / "out" / "results.csv").read_text(encoding="utf-8")
    # Quoted by the CSV writer (the cell holds quotes), and protected inside the quotes.
    assert '"\'=HYPERLINK(""http://x"")"' in csv
    assert ",=HYPERLINK" not in csv and ',"=HYPERLINK' not in csv


@pytest.mark.parametrize(
    ("text", "encoding", "shown"),
    [
        ("34 µs", "ascii", "34 us"),
        ("34 µs", "utf-8", "34 µs"),
        ("a\x1b[2Jb\rc\u202e", "utf-8", "a\\x1b[2Jb\\x0dc\\u202e"),
        ("1.02× ≤ 2", "ascii", "1.02x <= 2"),
        ("snow ☃", "ascii", "snow ?"),
        ("line\n\ttab", "ascii", "line\n\ttab"),
    ],
)
def test_the_terminal_guard(text: str, encoding: str, shown: str) -> None:
    assert safe_text(text, encoding) == shown


def test_empty_path_settings_are_refused_on_the_command_line() -> None:
    # INVOKE_ARCHBENCH_REPORTS=$UNSET: once the project directory itself.
    env = {**os.environ, "INVOKE_ARCHBENCH_REPORTS": ""}
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "report"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "setting 'archbench.reports' is '': a path setting must name a path" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (REPO / "appendix.md").exists()


def test_a_terminal_that_cannot_encode_micro_gets_us(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "LC_ALL": "C", "PYTHONUTF8": "0"}
    done = subprocess.run(
        [sys.executable, "-c", "from archbench.cli import show; show('412 \\u00b5s per 10x')"],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "412 us per 10x\n"


_KILLER = """
import sys
from pathlib import Path
from archbench.cli.report import ReportRequest, render_report
print("start", flush=True)
render_report(ReportRequest(Path(sys.argv[1]), Path(sys.argv[2])), on_line=lambda line: None)
"""


def _whole(path: Path) -> bool:
    data = path.read_bytes()
    if path.suffix == ".png":
        return data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82")
    if path.suffix == ".pdf":
        return data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
    return data.endswith(b"\n")


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.0])
def test_kill_9_of_a_report_while_it_writes_leaves_only_whole_files(
    tmp_path: Path, delay: float
) -> None:
    _store(tmp_path / "results", ["a", "b"])
    out = tmp_path / "out"
    render_report(ReportRequest(tmp_path / "results", out), on_line=lambda line: None)
    before = {p.name for p in out.iterdir()}
    writer = subprocess.Popen(
        [sys.executable, "-c", _KILLER, str(tmp_path / "results"), str(out)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "start"
    time.sleep(delay)
    writer.kill()  # SIGKILL, at whatever point it has reached
    writer.wait()
    for path in out.iterdir():
        if not path.name.startswith("."):
            assert _whole(path), path.name
    assert before <= {p.name for p in out.iterdir()}
    # The next report works and clears what the killed one left.
    render_report(ReportRequest(tmp_path / "results", out), on_line=lambda line: None)
    assert not list(out.glob(".*.tmp"))
    assert all(_whole(p) for p in out.iterdir() if not p.name.startswith("."))
