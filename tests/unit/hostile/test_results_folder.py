"""What stands in a results folder, and histories read as a whole (issue 32, kinds 2 and 4).

One reading of a results folder (:meth:`ResultStore.entries`) knows a run from a history,
a lock, a stray file or folder, a name that is not UTF-8 and a folder that cannot be
read; ``report`` and ``compare`` use it, say what they leave alone and go on. A
history's manifest is checked as a whole (the corpus has its cases), a version without
results is marked as such, ``--extend`` by one version is a series, and a compare does
not pair rounds on a session id the runs' own history contradicts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import REPO, result, row

from archbench.analysis import compare
from archbench.cli.history import HistoryOptions, measure_history, versions_of
from archbench.cli.report import CompareRequest, ReportRequest, compare_runs, render_report
from archbench.errors import ArchbenchError, MatrixError
from archbench.matrix import parse_gnunet
from archbench.platforms import Arch
from archbench.report import render_history_markdown
from archbench.result import (
    HistoryManifest,
    HistoryRound,
    HistoryVersion,
    Result,
    ResultStore,
    RunManifest,
)
from archbench.upstream import LogImport, import_logs, parse_setup

OLD = "20261129T220000Z-aaaaaa"
NEW = "20261130T220000Z-bbbbbb"
HIST = "20261201T220000Z-cccccc"


def _result(run_id: str, session: str | None = None, index: int = 1, base: int = 77_000) -> Result:
    r = result(
        "amd64-trixie",
        "amd64",
        "x86_64",
        "c",
        [row("CS", "signing", [base + i for i in range(12)])],
        run_id=run_id,
    )
    assert r.execution is not None
    return r.model_copy(
        update={
            "execution": r.execution.model_copy(
                update={"interleaved": session, "repeat_index": index}
            )
        }
    )


def _history(sessions: tuple[str, str], rounds: int = 3) -> HistoryManifest:
    versions = tuple(
        HistoryVersion(label=f"v{i}", gnunet="debian", run_id=run, session=session)
        for i, (run, session) in enumerate(zip((OLD, NEW), sessions, strict=True))
    )
    order = tuple(
        HistoryRound(session=s, round=k, order=tuple(v.run_id for v in versions if v.session == s))
        for s in dict.fromkeys(sessions)
        for k in range(1, rounds + 1)
    )
    return HistoryManifest(
        history_id=HIST,
        created_at="x",
        matrix_file="matrix.yml",
        matrix_text="version: 1",
        targets=("amd64-trixie",),
        rounds=rounds,
        seed=1,
        versions=versions,
        order=order,
    )


def _run_manifest(store: ResultStore, run_id: str, history: str | None) -> None:
    store.save_manifest(
        RunManifest(
            run_id=run_id,
            started_at="x",
            matrix_file="matrix.yml",
            matrix_text="version: 1",
            targets=("amd64-trixie",),
            history=history,
        )
    )


def _crowded(root: Path) -> ResultStore:
    """Two runs, a history over them, a lock, a stray file and folder, a Latin-1 name."""
    store = ResultStore(root)
    store.save(_result(OLD))
    store.save(_result(NEW))
    os.utime(root / NEW / "amd64-trixie.json", (1, 1))  # OLD's file is the newest
    store.save_history(_history((HIST, HIST)))
    (root / ".archbench.lock").write_bytes(b"")
    (root / "notes.txt").write_text("mine")
    (root / "my results:old").mkdir()
    (root / os.fsdecode(b"caf\xe9")).mkdir()
    (root / OLD / os.fsdecode(b"t\xe9.json")).write_bytes(b"{}")
    return store


def test_each_entry_of_a_results_folder_is_known_for_what_it_is(tmp_path: Path) -> None:
    store = _crowded(tmp_path)
    kinds = {e.name: e.kind for e in store.entries()}
    assert kinds[OLD] == kinds[NEW] == "run"
    assert kinds[HIST] == "history"
    assert kinds[".archbench.lock"] == "lock"
    assert kinds["notes.txt"] == kinds["my results:old"] == "stray"
    assert kinds[os.fsdecode(b"caf\xe9")] == "stray"
    assert store.runs() == [OLD, NEW] and store.histories() == [HIST]
    assert store.latest_run() == OLD  # never the history's folder
    notes = "\n".join(store.notes())
    assert "'caf\\\\xe9' is not a run id" in notes and "notes.txt' is a file" in notes
    notes.encode("utf-8")  # no lone surrogate reaches a message


def test_report_all_runs_goes_on_around_a_history_and_strays(tmp_path: Path) -> None:
    store = _crowded(tmp_path / "results")
    lines: list[str] = []
    request = ReportRequest(results=store.root, out=tmp_path / "out", runs=None, plots=False)
    with pytest.raises(Exception, match="rendered without 1 results file") as info:
        render_report(request, on_line=lines.append)
    assert type(info.value).__name__ == "ResultsError"  # the Latin-1 file, named
    said = "\n".join(lines)
    assert "history.json" not in said  # the history is not loaded as a results file
    assert "its name is not UTF-8 text" in said and "t\\\\xe9.json" in said
    assert "left alone" in said
    md = (tmp_path / "out" / "appendix.md").read_text(encoding="utf-8")
    assert "amd64-trixie" in md
    # Without --all-runs the latest run is a run, not the history's folder.
    lines.clear()
    request = ReportRequest(results=store.root, out=tmp_path / "out2", plots=False)
    with pytest.raises(Exception, match="rendered without 1 results file"):
        render_report(request, on_line=lines.append)
    assert f"rendering run {OLD}" in "\n".join(lines)


def test_a_run_named_by_a_history_id_is_said_to_be_a_history(tmp_path: Path) -> None:
    store = _crowded(tmp_path / "results")
    request = ReportRequest(results=store.root, out=tmp_path / "out", runs=(HIST,), plots=False)
    with pytest.raises(Exception, match=f"{HIST} is a history, not a run"):
        render_report(request, on_line=lambda _: None)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_an_unreadable_run_folder_is_named_and_the_rest_goes_on(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    store.save(_result(OLD))
    store.save(_result(NEW))
    (tmp_path / "results" / NEW).chmod(0)
    try:
        loaded, failures = store.load_all()
        assert [r.run_id for r in loaded] == [OLD]
        (failure,) = failures
        assert "cannot read this run folder" in failure.message and NEW in failure.message
        assert store.runs() == [OLD]
    finally:
        (tmp_path / "results" / NEW).chmod(0o755)


def test_a_version_without_results_is_marked(tmp_path: Path) -> None:
    manifest = _history((HIST, HIST))
    text = render_history_markdown(manifest, {OLD: [_result(OLD)], NEW: []})
    assert f"- v2: v1 (run {NEW}) — no results stored" in text
    assert "| no results" in text
    assert f"(run {OLD})\n" in text  # v1 has results: no mark


def test_extend_by_one_version_is_a_series() -> None:
    one = [parse_gnunet("debian")]
    assert len(versions_of(one, [], existing=2)) == 1
    with pytest.raises(MatrixError, match="at least two versions"):
        versions_of(one, [])
    with pytest.raises(MatrixError, match=r"\(32 stored, 1 new\)"):
        versions_of(one, [], existing=32)


def _two_runs_claiming_one_session(root: Path, sessions: tuple[str, str]) -> ResultStore:
    store = ResultStore(root)
    for run, base in ((OLD, 77_000), (NEW, 77_100)):
        for k in (1, 2, 3):
            store.save(_result(run, "s1", k, base + k * 3000))
    for run in (OLD, NEW):
        _run_manifest(store, run, HIST)
    store.save_history(_history(sessions))
    return store


@pytest.mark.parametrize(
    ("sessions", "trusted"),
    [(("s1", "s1"), True), (("s1", "s2"), False)],
)
def test_compare_checks_the_runs_history_before_pairing_rounds(
    tmp_path: Path, sessions: tuple[str, str], trusted: bool
) -> None:
    store = _two_runs_claiming_one_session(tmp_path / "results", sessions)
    lines: list[str] = []
    compare_runs(
        CompareRequest(results=store.root, out=tmp_path / "out", run_a=OLD, run_b=NEW),
        on_line=lines.append,
    )
    said = "\n".join(lines)
    assert ("says they ran in different sessions" in said) is not trusted
    a, _ = store.load_all([OLD], merge=False, metric=None)
    b, _ = store.load_all([NEW], merge=False, metric=None)
    (paired,) = compare(a, b)
    (unpaired,) = compare(a, b, interleaved=False)
    assert paired.rounds == 3 and unpaired.rounds == 0


def test_a_log_whose_name_is_not_utf8_is_imported_with_its_name_escaped(
    tmp_path: Path,
) -> None:
    log = tmp_path / os.fsdecode(b"perf_crypto_rsa_caf\xe9.log")
    log.write_text("10x 2048-signing took 34 ms\n")
    done = import_logs(
        LogImport(
            paths=(log,),
            setup=parse_setup({"cpu_model": "c", "cores": 2}, "cli", Arch.AMD64),
            target="box",
            arch=Arch.AMD64,
            run_id=OLD,
            results=tmp_path / "results",
        )
    )
    stored = done.path.read_text(encoding="utf-8")
    assert "perf_crypto_rsa_caf\\\\xe9.log" in stored


def test_extend_names_the_runs_its_history_has_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultStore(tmp_path / "results")
    store.save(_result(OLD))  # NEW's folder is gone
    manifest = _history((HIST, HIST)).model_copy(
        update={"matrix_text": (REPO / "matrix.yml").read_text(), "matrix_file": "m.yml"}
    )
    store.save_history(manifest)
    # No engine answers here: the history stops at connecting, after the note.
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'none.sock'}")
    lines: list[str] = []
    options = HistoryOptions(
        matrix=REPO / "matrix.yml",
        results=store.root,
        work=tmp_path / "work",
        sources=(parse_gnunet("debian"),),
        extend=HIST,
        on_wait=lines.append,
    )
    with pytest.raises(ArchbenchError):
        measure_history(options)
    assert any(f"names runs that are not in {store.root}: v2 {NEW}" in line for line in lines)


def test_a_history_that_does_not_hold_together_is_named_on_the_page(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    store.save(_result(OLD))
    store.save(_result(NEW))
    path = store.save_history(_history((HIST, HIST)))
    doc = json.loads(path.read_text())
    doc["versions"][1]["run_id"] = OLD  # one run twice: v1 v1, and NEW dropped
    path.write_text(json.dumps(doc))
    request = ReportRequest(results=store.root, out=tmp_path / "out", runs=(OLD,), plots=False)
    render_report(request, on_line=lambda _line: None)
    page = (tmp_path / "out" / "results.html").read_text(encoding="utf-8")
    assert "history left out" in page and f"name the same run {OLD}" in page
