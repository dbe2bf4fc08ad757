"""The store's index (:mod:`archbench.result.index`): a derived cache of every results file.

A report over many runs reads the index instead of every whole file; an entry counts
only while its file's size and modification time are the ones recorded. These tests
check that a file is read once until it changes, that a stale, missing, corrupt or
unwritable index never changes what is read (and is said), that its entries hold what
the files hold (Hypothesis), that it fails the files :meth:`ResultStore.load_all` fails,
and that processes rebuilding it at once leave a whole index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import counted, result, row
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.result import (
    INDEX_FILE,
    IndexEntry,
    Result,
    ResultStore,
    numbers,
    row_key,
)
from archbench.result import index as index_module
from archbench.result import store as store_module

RUNS = ("20261201T100000Z-aaaaaa", "20261201T110000Z-bbbbbb", "20261201T120000Z-cccccc")


def _result(run_id: str, name: str = "amd64-trixie", base: int = 77_000) -> Result:
    rows = [
        row("CS", "signing", [base + i for i in range(8)]),
        row("RSA", "signing", [5_000_000 + i for i in range(8)], key_bits=2048),
        row("RSA", "verifying", [80_000], key_bits=2048, valid=False, reason="verify failed"),
    ]
    return result(name, "amd64", "x86_64", "AMD EPYC 7763", rows, run_id=run_id)


def _store(root: Path) -> ResultStore:
    store = ResultStore(root)
    for run_id in RUNS:
        store.save(_result(run_id))
    store.save(counted(_result(RUNS[-1]), {"signing": 300_000}))
    return store


class _Reads:
    """Counts the files read whole while building entries."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        original = index_module.read_entry

        def reading(root: Path, relative: str) -> tuple[IndexEntry, Result]:
            self.paths.append(relative)
            return original(root, relative)

        monkeypatch.setattr("archbench.result.store.read_entry", reading)


def test_a_file_is_read_once_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    reads = _Reads(monkeypatch)
    entries, failures = store.indexed()
    assert failures == [] and len(entries) == 4 and len(reads.paths) == 4
    assert (tmp_path / INDEX_FILE).is_file()
    assert [e.run_id for e in entries] == [*RUNS, RUNS[-1]]
    reads.paths.clear()
    again, _ = store.indexed()
    assert reads.paths == [] and again == entries
    # A file rewritten (other samples, so another size) is read again, and only it.
    store.save(_result(RUNS[0], base=91_000_000))
    changed, _ = store.indexed()
    assert reads.paths == [f"{RUNS[0]}/amd64-trixie.json"]
    first = changed[0].rows[0]
    assert numbers(first.samples_ns)[0] == 91_000_000
    # Same size, another modification time: read again too.
    reads.paths.clear()
    os.utime(tmp_path / RUNS[1] / "amd64-trixie.json", ns=(1, 1))
    store.indexed()
    assert reads.paths == [f"{RUNS[1]}/amd64-trixie.json"]
    # A file removed leaves the index.
    (tmp_path / RUNS[2] / "amd64-trixie.json").unlink()
    left, _ = store.indexed()
    kept = json.loads((tmp_path / INDEX_FILE).read_text())["files"]
    assert f"{RUNS[2]}/amd64-trixie.json" not in kept and len(kept) == len(left) == 3


def test_asking_for_some_runs_keeps_the_entries_of_the_others(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.indexed()
    mine, _ = store.indexed([RUNS[0]], metric="time")
    assert [e.run_id for e in mine] == [RUNS[0]]
    assert len(json.loads((tmp_path / INDEX_FILE).read_text())["files"]) == 4
    counts, _ = store.indexed(metric="instructions")
    assert [(e.run_id, e.metric) for e in counts] == [(RUNS[-1], "instructions")]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"{not json", "unreadable index"),
        (b'{"format": "archbench-index", "version": 99, "files": {}}', "unreadable index"),
        (b'{"format": "archbench-index", "version": 2, "files": {"x": {"path": 1}}}', "at files"),
        # Version 1 had no status-change times, inodes or digests: rebuilt, never trusted.
        (b'{"format": "archbench-index", "version": 1, "files": {}}', "at version"),
        (b"", "unreadable index"),
    ],
)
def test_a_corrupt_index_is_said_ignored_and_rebuilt(
    tmp_path: Path, content: bytes, said: str
) -> None:
    store = _store(tmp_path)
    expected, _ = store.indexed()
    (tmp_path / INDEX_FILE).write_bytes(content)
    notes: list[str] = []
    entries, failures = store.indexed(on_note=notes.append)
    assert failures == [] and entries == expected
    assert len(notes) == 1 and said in notes[0] and "rebuilding it" in notes[0]
    notes.clear()
    store.indexed(on_note=notes.append)
    assert notes == []  # rebuilt: read without a word


def test_an_entry_that_lies_about_its_file_is_not_believed(tmp_path: Path) -> None:
    """An entry copied under another file's name is no entry of that file."""
    store = _store(tmp_path)
    store.indexed()
    data = json.loads((tmp_path / INDEX_FILE).read_text())
    one, two = f"{RUNS[0]}/amd64-trixie.json", f"{RUNS[1]}/amd64-trixie.json"
    data["files"][two] = data["files"][one]
    (tmp_path / INDEX_FILE).write_text(json.dumps(data))
    entries, _ = store.indexed()
    assert [e.path for e in entries[:2]] == [one, two]
    assert entries[1].run_id == RUNS[1]


def test_an_index_that_cannot_be_written_is_said_and_the_files_are_read(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    (tmp_path / INDEX_FILE).mkdir()  # no file can be renamed over a folder
    notes: list[str] = []
    entries, failures = store.indexed(on_note=notes.append)
    assert failures == [] and len(entries) == 4
    assert any("cannot write the index" in n for n in notes), notes


def test_the_index_fails_the_files_load_all_fails(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (tmp_path / RUNS[0] / "broken.json").write_text("{")
    (tmp_path / RUNS[1] / "copy.json").write_bytes(
        (tmp_path / RUNS[1] / "amd64-trixie.json").read_bytes()
    )
    (tmp_path / RUNS[2] / os.fsdecode(b"t\xe9.json")).write_bytes(b"{}")
    moved = _result("20261201T130000Z-dddddd").model_dump_json()
    (tmp_path / RUNS[2] / "moved.json").write_text(moved)
    os.mkfifo(tmp_path / RUNS[2] / "fifo.json")
    loaded, expected = store.load_all(merge=False, metric=None)
    for _ in range(2):  # building the index, then reading it
        entries, failures = store.indexed()
        assert sorted(f.message for f in failures) == sorted(f.message for f in expected)
        assert [(e.run_id, e.target.name, e.metric) for e in entries] == [
            (r.run_id, r.target.name, r.metric) for r in loaded
        ]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["CS", "RSA"]),
            st.sampled_from(["signing", "verifying", "blinding"]),
            st.lists(st.integers(min_value=1, max_value=2**63 - 1), min_size=3, max_size=9),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
        unique_by=lambda t: (t[0], t[1]),
    )
)
def test_an_entry_holds_what_its_file_holds(
    tmp_path_factory: pytest.TempPathFactory, specs: list[tuple[str, str, list[int], bool]]
) -> None:
    rows = [
        row(s, op, blocks, key_bits=2048 if s == "RSA" else None, valid=ok,
            reason=None if ok else "failed")
        for s, op, blocks, ok in specs
    ]  # fmt: skip
    timed = result("t", "riscv64", "riscv64", "C920", rows, emulated=True)
    store = ResultStore(tmp_path_factory.mktemp("index"))
    store.save(timed)
    store.save(counted(timed, {op: 1000 + len(blocks) for _s, op, blocks, _ok in specs}))
    for _ in range(2):
        entries, failures = store.indexed()
        assert failures == []
        for entry in entries:
            file = next(r for r in store.load_all(metric=entry.metric)[0])
            assert entry.emulated and entry.target == file.target
            assert entry.execution == file.execution
            assert entry.setup.cpu_model == file.harness.setup.cpu_model == "C920"
            for got, want in zip(entry.rows, file.harness.rows, strict=True):
                assert row_key("t", got) == row_key("t", want)
                assert numbers(got.samples_ns) == want.samples_ns
                got_counts = numbers(got.instructions) if got.instructions else None
                assert got_counts == want.instructions
                assert (got.valid, got.invalid_reason) == (want.valid, want.invalid_reason)
                assert got.label == want.label


def test_many_files_are_read_in_parallel_into_the_same_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultStore(tmp_path / "results")
    for i in range(12):
        store.save(_result(f"20261201T10{i:02d}00Z-aaaaaa", base=77_000 + i))
    monkeypatch.setattr(store_module, "INDEX_IN_PARALLEL", 10**6)
    alone, _ = store.indexed()
    (tmp_path / "results" / INDEX_FILE).unlink()
    monkeypatch.setattr(store_module, "INDEX_IN_PARALLEL", 2)
    together, _ = store.indexed()
    assert together == alone


_REBUILD = """
import sys
from pathlib import Path
from archbench.result import INDEX_FILE, ResultStore
root = Path(sys.argv[1])
for _ in range(int(sys.argv[2])):
    (root / INDEX_FILE).unlink(missing_ok=True)
    entries, failures = ResultStore(root).indexed()
    assert not failures, failures
print(len(entries))
"""


def test_processes_rebuilding_the_index_at_once_leave_a_whole_one(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    for i in range(80):  # more than INDEX_IN_PARALLEL: each reads with its own workers
        store.save(_result(f"20261201T1{i:03d}0Z-aaaaaa", base=77_000 + i))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _REBUILD, str(tmp_path), "4"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    done = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err[-2000:] for _out, err in done]
    assert [out.strip() for out, _err in done] == ["80"] * 3
    entries, note = index_module.read_index(tmp_path)
    assert note is None and len(entries) in (0, 80)  # whole, or removed by a last round
    got, failures = store.indexed()
    assert failures == [] and len(got) == 80
    assert not list(tmp_path.glob(f".{INDEX_FILE}.*.tmp"))
