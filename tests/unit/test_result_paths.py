"""Writing several files at once (:func:`archbench.result.paths.write_texts`) and its callers."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import result, row

from archbench.errors import ReportError, ResultsError
from archbench.result import ResultStore, RunManifest, write_texts


def test_write_texts_writes_in_order_and_returns_the_paths(tmp_path: Path) -> None:
    texts = {tmp_path / "b.csv": "b\n", tmp_path / "sub" / "a.json": "[]\n"}
    assert write_texts(texts, ReportError, "export") == list(texts)
    assert (tmp_path / "b.csv").read_text() == "b\n"
    assert (tmp_path / "sub" / "a.json").read_text() == "[]\n"


def test_write_texts_names_the_file_the_reason_and_the_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    texts = {tmp_path / "first.md": "1\n", blocker / "x.md": "2\n", tmp_path / "last.md": "3\n"}
    with pytest.raises(ReportError) as caught:
        write_texts(texts, ReportError, "report", "choose a writable output directory")
    assert str(caught.value) == (
        f"{blocker / 'x.md'}: cannot write report: File exists; choose a writable output directory"
    )
    assert (tmp_path / "first.md").read_text() == "1\n"
    assert not (tmp_path / "last.md").exists()
    assert blocker.read_text() == "a file, not a directory"


def test_the_store_reports_an_unwritable_run_directory(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    measured = result("box", "amd64", "x86_64", "CPU", [row("CS", "signing", [1_000, 1_100])])
    (root / measured.run_id).write_text("a file where the run directory goes")
    store = ResultStore(root)
    with pytest.raises(ResultsError) as caught:
        store.save(measured)
    assert str(caught.value) == (
        f"{root / measured.run_id / 'box.json'}: cannot write results: File exists"
    )
    manifest = RunManifest(
        run_id=measured.run_id, started_at="now", matrix_file="m.yml", matrix_text="", targets=()
    )
    expected = r"run\.json: cannot write the run manifest: File exists$"
    with pytest.raises(ResultsError, match=expected):
        store.save_manifest(manifest)
