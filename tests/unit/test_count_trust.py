"""Reused counts are trusted only when provably the same (issue 39, item 3): the integrity
digest inside every results file (written, checked on every read, by the index and by
``invoke publish``'s check too) and the reuse decision of :func:`archbench.run.find_count`
over edited, truncated, duplicated, conflicting, older-format and foreign runs."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import counted, result, row
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from archbench.errors import CountConflict, ResultsError
from archbench.images import PLUGIN_VERSION
from archbench.result import (
    DIGEST_KEY,
    Result,
    ResultStore,
    RunManifest,
    check_digest,
    content_digest,
    load,
    load_checked,
    parse_checked,
    verify_run,
)
from archbench.run import CountKey, find_count, stored_count_key

REPO_URL = "file:///srv/gnunet.git"
COMMIT = "993e1b272c58fbb9fdd7a61591b0ec8f60e48c41"
QEMU = "qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u16)"
KEY = CountKey(
    repository=REPO_URL,
    commit=COMMIT,
    target="ci-amd64",
    arch="amd64",
    definition="d" * 64,
    cpu_model="max",
    harness="h" * 64,
    plugin=PLUGIN_VERSION,
    qemu=QEMU,
)
SIGNING = ("CS", None, "signing")
TMP = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _run_id(i: int) -> str:
    return f"20261203T1{i:05d}Z-aaaaaa"


def _stored(key: CountKey, run_id: str, signing: tuple[int, ...], blinding: int = 500) -> Result:
    """A counting result of ``key.target`` under ``key``: CS signing counted ``signing``
    per block (10 operations a block), CS blinding ``blinding`` (varying: +10 in block 2)."""
    timed = result(
        key.target,
        key.arch,
        "x86_64",
        "AMD EPYC",
        [row("CS", "signing", [90_000, 90_001, 90_002]), row("CS", "blinding", [5, 6, 7])],
        run_id=run_id,
    )
    done = counted(timed, {"blinding": blinding})
    assert done.execution is not None and done.harness.counting is not None
    rows = tuple(
        r.model_copy(update={"instructions": signing, "samples_ns": r.samples_ns[: len(signing)]})
        if r.operation == "signing"
        else r
        for r in done.harness.rows
    )
    execution = done.execution.model_copy(
        update={
            "gnunet_source": {"kind": "git", "location": key.repository, "commit": key.commit,
                              "ref": "v0.22.2", "dirty": False},
            "harness_sha256": key.harness,
            "count_definition": key.definition,
        }
    )  # fmt: skip
    counting = done.harness.counting.model_copy(
        update={"cpu_model": key.cpu_model, "plugin_version": key.plugin, "qemu_version": key.qemu}
    )
    harness = done.harness.model_copy(update={"counting": counting, "rows": rows})
    return done.model_copy(update={"execution": execution, "harness": harness})


def _save(store: ResultStore, res: Result, gnunet: str | None = f"git+{REPO_URL}@{COMMIT}") -> Path:
    store.save_manifest(
        RunManifest(
            run_id=res.run_id, started_at="2026-12-03T10:00:00Z", matrix_file="m.yml",
            matrix_text="", targets=(res.target.name,), gnunet=gnunet,
        )
    )  # fmt: skip
    return store.save(res)


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to every number (not a bool) in a parsed JSON value."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [path]
    return []


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        data = data[step]
    data[path[-1]] = value


counts = st.integers(1_000, 10**9)


# ---------------------------------------------------------------- the digest


@TMP
@given(signing=counts, indent=st.sampled_from([None, 0, 1, 4]), ascii_=st.booleans())
def test_a_stored_result_carries_a_digest_that_survives_reformatting(
    tmp_path: Path, signing: int, indent: int | None, ascii_: bool
) -> None:
    """Written with a digest; read back as it was; reformatted (indentation, key order,
    escapes, a whole float written as an integer) it is the same content, the same digest."""
    store = ResultStore(tmp_path / "r")
    res = _stored(KEY, _run_id(0), (signing,) * 3)
    res = res.model_copy(update={"target": res.target.model_copy(update={"profile": "thèsis"})})
    path = _save(store, res)
    back, digest = load_checked(path)
    assert back == res
    data = json.loads(path.read_text())
    assert digest == data[DIGEST_KEY] == content_digest(data)
    assert list(data)[:3] == ["format", "version", DIGEST_KEY]
    data["harness"]["rows"][0]["ops_per_block"] = 10.0  # written 10.0, not 10
    path.write_text(json.dumps(data, indent=indent, sort_keys=True, ensure_ascii=ascii_))
    assert ("10.0" in path.read_text()) and (("\\u00e8" in path.read_text()) == ascii_)
    assert load_checked(path) == (res, digest)
    shutil.rmtree(tmp_path / "r")


@TMP
@given(data=st.data())
def test_any_edited_number_is_refused_naming_the_file(tmp_path: Path, data: st.DataObject) -> None:
    """Every number of the file (a count, a sample, a parameter, a calibration) is covered:
    changed by any amount, the file no longer loads, and the message says why."""
    store = ResultStore(tmp_path / "r")
    path = _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    doc = json.loads(path.read_text())
    where = data.draw(st.sampled_from(_leaves(doc)))
    old = doc
    for step in where:
        old = old[step]
    delta = data.draw(st.integers(-(10**6), 10**6).filter(bool))
    _set(doc, where, old + delta)
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(ResultsError) as caught:
        load(path)
    said = str(caught.value)
    assert str(path) in said
    # A value the model (or the header check) refuses is named as such; one it allows,
    # which only the digest can catch, is said to be an edit.
    plain = json.dumps({k: v for k, v in doc.items() if k != DIGEST_KEY}).encode()
    try:
        parse_checked(plain, path)
    except ResultsError:
        return
    assert "does not match its digest" in said and "edited or truncated" in said, said
    shutil.rmtree(tmp_path / "r")


@TMP
@given(cut=st.floats(0.0, 1.0, exclude_max=True))
def test_any_truncation_is_refused(tmp_path: Path, cut: float) -> None:
    """A file cut short (a half-synced copy) never loads: the JSON breaks, or, when what is
    left still parses, its digest does not match."""
    store = ResultStore(tmp_path / "r")
    path = _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    text = path.read_text().rstrip()
    path.write_text(text[: int(cut * len(text))])
    with pytest.raises(ResultsError, match=str(path.parent.name)):
        load(path)
    shutil.rmtree(tmp_path / "r")


def test_a_cut_list_that_still_parses_is_refused_by_its_digest(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    path = _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    doc = json.loads(path.read_text())
    (signing,) = [r for r in doc["harness"]["rows"] if r["operation"] == "signing"]
    signing["instructions"] = signing["instructions"][:2]  # two blocks of three
    signing["samples_ns"] = signing["samples_ns"][:2]
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(ResultsError, match="does not match its digest"):
        load(path)


@pytest.mark.parametrize(
    ("digest", "said"),
    [("sha256:" + "0" * 63, "64 lowercase"), (17, "64 lowercase"), ("md5:abc", "64 lowercase")],
)
def test_a_malformed_digest_is_refused_with_what_is_allowed(digest: object, said: str) -> None:
    with pytest.raises(ResultsError, match=said):
        check_digest({"format": "archbench-result", DIGEST_KEY: digest}, "x.json")


def test_an_older_file_without_a_digest_is_read_but_has_none(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    res = _stored(KEY, _run_id(0), (300_000,) * 3)
    path = _save(store, res)
    doc = json.loads(path.read_text())
    del doc[DIGEST_KEY]
    path.write_text(json.dumps(doc, indent=2))
    assert load_checked(path) == (res, None)
    loaded, failures = store.load_all(metric=None)
    assert loaded == [res] and failures == []


# ---------------------------------------------------------------- index and publish


def test_an_edited_file_is_never_served_from_the_index(tmp_path: Path) -> None:
    """A digit changed in place with the file's size and modification time put back (as
    ``touch -r`` does): the index reads it again (its status-change time moved), and the
    report is told the file was edited, rather than given the entry it indexed before."""
    store = ResultStore(tmp_path)
    path = _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    entries, failures = store.indexed()
    assert [e.digest for e in entries] == [json.loads(path.read_text())[DIGEST_KEY]]
    assert failures == []
    before = path.stat()
    text = path.read_text()
    assert "300000" in text
    path.write_text(text.replace("300000", "300001", 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    entries, failures = store.indexed()
    assert entries == []
    assert [f.path for f in failures] == [path]
    assert "does not match its digest" in failures[0].message


def test_publish_refuses_an_edited_file_and_notes_an_older_one(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    path = _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    run, problems = verify_run(path.parent)
    assert run is not None and problems == [] and run.notes == ()
    doc = json.loads(path.read_text())
    del doc[DIGEST_KEY]
    path.write_text(json.dumps(doc, indent=2))
    run, problems = verify_run(path.parent)
    assert run is not None and problems == []
    assert [n for n in run.notes if "no integrity digest" in n and str(path) in n]
    _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    path.write_text(path.read_text().replace("300000", "300001", 1))
    run, problems = verify_run(path.parent)
    assert run is None and len(problems) == 1 and "does not match its digest" in problems[0]


# ---------------------------------------------------------------- the reuse decision


def test_every_field_of_the_key_is_recorded_the_qemu_version_too() -> None:
    key = stored_count_key(_stored(KEY, _run_id(0), (300_000,) * 3))
    assert key == KEY
    other_qemu = dataclasses.replace(KEY, qemu="qemu-x86_64 version 10.0.13 (Debian 1:10.0.3)")
    assert stored_count_key(_stored(other_qemu, _run_id(0), (300_000,) * 3)) == other_qemu != KEY


@TMP
@given(values=st.lists(st.integers(1, 3), min_size=1, max_size=5), varying=st.booleans())
def test_stored_counts_of_one_key_agree_or_the_search_stops_naming_both(
    tmp_path: Path, values: list[int], varying: bool
) -> None:
    """Runs of one key whose exact signing counts are ``300_000 * v``: all equal, the newest
    is reused; any two different, :class:`CountConflict` names two of the files, whichever
    run is newest. A row whose repetitions differ by nature (``varying``) is never a conflict."""
    store = ResultStore(tmp_path / "r")
    paths = []
    for i, v in enumerate(values):
        signing = (300_000 * v, 300_000 * v + 7, 300_000 * v) if varying else (300_000 * v,) * 3
        # The varying CS blinding row differs in every run: never a conflict.
        paths.append(_save(store, _stored(KEY, _run_id(i), signing, blinding=500 + i)))
    if varying or len(set(values)) == 1:
        search = find_count(store, KEY, SIGNING)
        assert search.found is not None and search.found.run_id == _run_id(len(values) - 1)
        assert search.found.digest == json.loads(paths[-1].read_text())[DIGEST_KEY]
        assert search.notes == ()
    else:
        with pytest.raises(CountConflict) as caught:
            find_count(store, KEY, SIGNING)
        said = str(caught.value)
        assert sum(str(p) in said for p in paths) == 2, said
        assert "CS signing" in said and "disagree" in said
        assert CountConflict.exit_code == 15
    shutil.rmtree(tmp_path / "r")


def test_a_conflict_on_another_row_does_not_stop_a_bisection_of_this_one(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    _save(store, _stored(KEY, _run_id(1), (300_010,) * 3))
    blinding = ("CS", None, "blinding")
    search = find_count(store, KEY, blinding)
    assert search.found is not None and search.found.run_id == _run_id(1)
    with pytest.raises(CountConflict):
        find_count(store, KEY)  # every row: signing conflicts


@pytest.mark.parametrize("gnunet", [f"git+{REPO_URL}@{COMMIT}", f"git+{REPO_URL}@v0.22.2"])
def test_an_edited_count_of_the_commit_stops_the_search(tmp_path: Path, gnunet: str) -> None:
    """An edited file of a run of this commit, or of a ref of this repository that may be
    it, is not passed over quietly: it might be the very count asked for."""
    store = ResultStore(tmp_path)
    _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    path = _save(store, _stored(KEY, _run_id(1), (300_000,) * 3), gnunet)
    path.write_text(path.read_text().replace("300000", "290000", 1))
    with pytest.raises(CountConflict, match="does not match its digest") as caught:
        find_count(store, KEY, SIGNING)
    assert str(path) in str(caught.value) and "stops" in str(caught.value)


def test_damage_in_runs_of_other_sources_or_commits_changes_nothing(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    good = _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    other = dataclasses.replace(KEY, commit="1" * 40)
    for i, gnunet in enumerate(
        [f"git+{REPO_URL}@{'1' * 40}", "git+file:///elsewhere.git@v1", "debian"], start=1
    ):
        path = _save(store, _stored(other, _run_id(i), (1,) * 3), gnunet)
        path.write_text(path.read_text()[:100])
    search = find_count(store, KEY, SIGNING)
    assert search.found is not None and search.found.path == good and search.notes == ()


def test_a_damaged_file_of_a_run_of_the_matrix_source_is_noted_and_passed_over(
    tmp_path: Path,
) -> None:
    store = ResultStore(tmp_path)
    _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    path = _save(store, _stored(KEY, _run_id(1), (300_000,) * 3), None)
    path.write_text(path.read_text()[:-40])
    search = find_count(store, KEY, SIGNING)
    assert search.found is not None and search.found.run_id == _run_id(0)
    assert len(search.notes) == 1 and str(path) in search.notes[0]


def test_an_older_format_count_is_never_reused_and_said(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    path = _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    doc = json.loads(path.read_text())
    del doc[DIGEST_KEY]
    path.write_text(json.dumps(doc, indent=2))
    search = find_count(store, KEY, SIGNING)
    assert search.found is None
    assert search.notes == (
        f"not reused: {path} has no integrity digest (written before archbench stored one), "
        "so nothing proves it is the count that was measured",
    )


def test_a_copy_in_another_runs_folder_is_not_reused(tmp_path: Path) -> None:
    """A duplicated file (a run's count copied into another run's folder, digest intact)
    does not stand for the run it lies in."""
    store = ResultStore(tmp_path)
    path = _save(store, _stored(KEY, _run_id(0), (300_000,) * 3))
    _save(store, _stored(KEY, _run_id(1), (300_000,) * 3))
    copy = tmp_path / _run_id(1) / path.name
    shutil.copyfile(path, copy)
    search = find_count(store, KEY, SIGNING)
    assert search.found is not None and search.found.run_id == _run_id(0)
    assert len(search.notes) == 1 and "a copied file" in search.notes[0]


@settings(max_examples=60, deadline=None)
@given(field=st.sampled_from([f.name for f in dataclasses.fields(CountKey)]), value=st.text(
    "0123456789abcdef", min_size=1, max_size=64))  # fmt: skip
def test_a_foreign_count_of_another_key_is_never_the_one(field: str, value: str) -> None:
    assume(getattr(KEY, field) != value)
    other = dataclasses.replace(KEY, **{field: value})
    assert stored_count_key(_stored(other, _run_id(0), (300_000,) * 3)) != KEY
