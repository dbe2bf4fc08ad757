"""``invoke publish``: run folders merged into one store, checked, idempotent, concurrent.

Run folders here are written by the real store (:class:`archbench.result.ResultStore`,
as ``invoke bench`` writes them); merges run in real processes where concurrency is the
point. The integration test of the workflow (tests/integration/test_ci_workflow_docker.py)
merges folders of real runs.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import counted, result, rewrite_result, row, run_invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archbench.errors import ResultsError
from archbench.report import pr_summary
from archbench.result import (
    PUBLISH_NAME,
    Provenance,
    Result,
    ResultStore,
    RunManifest,
    collect_runs,
    cpu_class,
    merge_runs,
    read_records,
    verify_run,
)

RUN_A = "20261201T100000Z-aaaaaa"
RUN_B = "20261201T110000Z-bbbbbb"


def _timed(
    run_id: str, name: str = "amd64-trixie", arch: str = "amd64", scale: float = 1.0
) -> Result:
    rows = [
        row("CS", "signing", [int(x * scale) for x in (1_000_000, 1_010_000, 990_000, 1_000_500)]),
        row("RSA", "signing", [int(x * scale) for x in (2_000_000, 2_020_000, 1_990_000)], 1024),
    ]
    machine = {"amd64": "x86_64", "riscv64": "riscv64"}[arch]
    return result(
        name,
        arch,
        machine,
        "AMD EPYC 7763 64-Core Processor",
        rows,
        run_id=run_id,
        emulated=arch != "amd64",
    )


def make_run(root: Path, run_id: str, targets: dict[str, str], *, signing: int = 50_000) -> Path:
    """A run folder as ``invoke bench`` leaves it: run.json, per target a timed and a
    counted file, and a build log."""
    store = ResultStore(root)
    for name, arch in targets.items():
        timed = _timed(run_id, name, arch)
        store.save(timed)
        store.save(counted(timed, {"signing": signing * 10}))
    store.save_manifest(
        RunManifest(
            run_id=run_id,
            started_at=run_id[:15],
            matrix_file="matrix.yml",
            matrix_text="version: 1\n",
            targets=tuple(targets),
        )
    )
    logs = root / run_id / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "amd64-trixie.build.log").write_text("Step 1/9\n")
    return root / run_id


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative name -> bytes), hidden ones included."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".archbench.lock"
    }


def test_a_run_is_merged_whole_with_its_record(tmp_path: Path) -> None:
    src = make_run(tmp_path / "job", RUN_A, {"amd64-trixie": "amd64", "riscv64-trixie": "riscv64"})
    store = tmp_path / "store"
    where = Provenance(branch="main", commit="2d16252969cf", runner=("ubuntu-24.04",))
    report = merge_runs([src], store, where, on_line=lambda _: None)
    assert [(line.run_id, line.status) for line in report.lines] == [(RUN_A, "merged")]
    merged = tree(store / RUN_A)
    for name, data in tree(src).items():
        assert merged[name] == data, name  # byte for byte, logs included
    record = read_records(store)[RUN_A]
    assert record.provenance == where and record.provenance.source == "ci"
    assert set(record.files) == {
        "run.json",
        "amd64-trixie.json",
        "amd64-trixie.instructions.json",
        "riscv64-trixie.json",
        "riscv64-trixie.instructions.json",
    }
    machines = {(m.target, m.metric): m for m in record.machines}
    assert machines["riscv64-trixie", "time"].emulated is True
    assert machines["riscv64-trixie", "time"].cpu == "AMD EPYC 7763 64-Core Processor"
    assert machines["riscv64-trixie", "instructions"].machine_class == (
        "instructions",
        "riscv64",
        "max",
    )
    assert machines["amd64-trixie", "time"].machine_class == (
        "time",
        "amd64",
        "native",
        "amd epyc 7763",
    )
    # The store reads as a results folder: the record is no results file.
    loaded, failures = ResultStore(store).load_all(metric=None)
    assert failures == [] and len(loaded) == 4


def test_merging_the_same_artifact_twice_changes_nothing(tmp_path: Path) -> None:
    src = make_run(tmp_path / "job", RUN_A, {"amd64-trixie": "amd64"})
    store = tmp_path / "store"
    merge_runs([src], store, Provenance(branch="main"), on_line=lambda _: None)
    before = tree(store)
    stamps = {p: p.stat().st_mtime_ns for p in store.rglob("*")}
    again = merge_runs([src], store, Provenance(branch="main"), on_line=lambda _: None)
    assert [line.status for line in again.lines] == ["unchanged"]
    assert tree(store) == before
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*")} == stamps
    # A store merged into another store (a job's artifact into the history) keeps the
    # record it was stamped with, and merging it again changes nothing either.
    history = tmp_path / "history"
    first = merge_runs(collect_runs([store]), history, on_line=lambda _: None)
    second = merge_runs(collect_runs([store]), history, on_line=lambda _: None)
    assert [line.status for line in first.lines] == ["merged"]
    assert [line.status for line in second.lines] == ["unchanged"]
    assert read_records(history)[RUN_A] == read_records(store)[RUN_A]


def test_same_id_other_content_is_a_conflict_never_overwritten(tmp_path: Path) -> None:
    store = tmp_path / "store"
    merge_runs(
        [make_run(tmp_path / "a", RUN_A, {"amd64-trixie": "amd64"})], store, on_line=lambda _: None
    )
    kept = tree(store)
    other = make_run(tmp_path / "b", RUN_A, {"amd64-trixie": "amd64"}, signing=60_000)
    report = merge_runs([other], store, on_line=lambda _: None)
    (line,) = report.lines
    assert line.status == "conflict"
    assert "amd64-trixie.instructions.json" in line.detail
    assert tree(store) == kept
    # Same files, another provenance: a conflict too.
    same = make_run(tmp_path / "c", RUN_A, {"amd64-trixie": "amd64"})
    (line,) = merge_runs([same], store, Provenance(branch="other"), on_line=lambda _: None).lines
    assert line.status == "conflict" and "branch None vs 'other'" in line.detail


def test_a_run_that_fails_its_checks_is_refused_and_the_others_merged(tmp_path: Path) -> None:
    make_run(tmp_path / "jobs", RUN_A, {"amd64-trixie": "amd64"})
    bad = make_run(tmp_path / "jobs", RUN_B, {"amd64-trixie": "amd64"})
    broken = bad / "amd64-trixie.json"
    data = json.loads(broken.read_text())
    data["harness"]["rows"][0]["samples_ns"] = "many"
    broken.write_text(json.dumps(data))
    store = tmp_path / "store"
    report = merge_runs(collect_runs([tmp_path / "jobs"]), store, on_line=lambda _: None)
    status = {line.run_id: line for line in report.lines}
    assert status[RUN_A].status == "merged"
    assert status[RUN_B].status == "refused"
    assert "amd64-trixie.json" in status[RUN_B].detail and "samples_ns" in status[RUN_B].detail
    assert not (store / RUN_B).exists()


def _renamed(run: Path) -> None:
    (run / "amd64-trixie.json").rename(run / "x86.json")


def _symlink(run: Path) -> None:
    os.symlink("/etc/passwd", run / "evil.json")


def _other_run(run: Path) -> None:
    # Run A's file copied into run B's folder: it must not pool with B's.
    shutil.copy(run / "amd64-trixie.json", run.parent / RUN_B / "amd64-trixie.repeat-2.json")


def _stray(run: Path) -> None:
    (run / "notes.txt").write_text("x")


@pytest.mark.parametrize(
    ("damage", "checked", "said"),
    [
        (_renamed, RUN_A, "x86.json: holds amd64-trixie.json"),
        (_symlink, RUN_A, "evil.json: not a regular file"),
        (_other_run, RUN_B, f"belongs to run {RUN_A!r}"),
        (_stray, RUN_A, "notes.txt: not a file of a run"),
    ],
    ids=["renamed", "symlink", "other-run", "stray"],
)
def test_checks_name_the_file_and_what_is_wrong(
    tmp_path: Path, damage: Callable[[Path], None], checked: str, said: str
) -> None:
    make_run(tmp_path / "jobs", RUN_B, {"amd64-trixie": "amd64"})
    damage(make_run(tmp_path / "jobs", RUN_A, {"amd64-trixie": "amd64"}))
    found, problems = verify_run(tmp_path / "jobs" / checked)
    assert found is None
    assert any(said in p for p in problems), problems


def test_a_stamped_artifact_changed_on_the_way_is_refused(tmp_path: Path) -> None:
    """What the job measured is what arrives: publish.json's digests are checked."""
    job_store = tmp_path / "artifact"
    merge_runs(
        [make_run(tmp_path / "job", RUN_A, {"amd64-trixie": "amd64"})],
        job_store,
        Provenance(runner=("ubuntu-24.04-riscv",)),
        on_line=lambda _: None,
    )
    counts = job_store / RUN_A / "amd64-trixie.instructions.json"
    data = json.loads(counts.read_text())
    data["harness"]["rows"][0]["instructions"] = [1, 1, 1]
    counts.write_text(json.dumps(data))
    report = merge_runs(collect_runs([job_store]), tmp_path / "history", on_line=lambda _: None)
    (line,) = report.lines
    assert line.status == "refused"
    assert "amd64-trixie.instructions.json: sha256" in line.detail


def test_a_run_benched_into_the_store_gets_its_record_in_place(tmp_path: Path) -> None:
    store = tmp_path / "results"
    run = make_run(store, RUN_A, {"amd64-trixie": "amd64"})
    before = tree(run)
    (line,) = merge_runs([run], store, Provenance(branch="main"), on_line=lambda _: None).lines
    assert (line.status, line.detail) == ("merged", "record added in place")
    after = tree(run)
    assert after.pop(PUBLISH_NAME)
    assert after == before
    (line,) = merge_runs([run], store, Provenance(branch="main"), on_line=lambda _: None).lines
    assert line.status == "unchanged"


def test_a_killed_merge_leaves_nothing_the_next_one_keeps(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / f".merge-{RUN_A}-dead").mkdir(parents=True)
    (store / f".merge-{RUN_A}-dead" / "amd64-trixie.json").write_text("{half")
    assert ResultStore(store).runs() == []  # a reader never sees it
    notes: list[str] = []
    merge_runs(
        [make_run(tmp_path / "job", RUN_A, {"amd64-trixie": "amd64"})], store, on_line=notes.append
    )
    assert not any(p.name.startswith(".merge-") for p in store.iterdir())
    assert any("killed merge" in n for n in notes)
    assert ResultStore(store).runs() == [RUN_A]


def _merge_in_process(args: tuple[list[str], str]) -> list[tuple[str, str]]:
    sources, store = args
    report = merge_runs([Path(s) for s in sources], Path(store), on_line=lambda _: None)
    return [(line.run_id, line.status) for line in report.lines]


def test_concurrent_merges_into_one_store_merge_each_run_once(tmp_path: Path) -> None:
    """Four processes merge overlapping sets of eight runs at once: each run lands once,
    whole, and every other merge of it finds it unchanged."""
    ids = [f"20261201T1{i:05d}Z-{i:06x}" for i in range(8)]
    runs = [make_run(tmp_path / "jobs", r, {"amd64-trixie": "amd64"}) for r in ids]
    store = tmp_path / "store"
    sets = [[str(p) for p in runs[i : i + 5]] + [str(runs[0])] for i in range(0, 8, 2)]
    # fork: four real processes without four imports of archbench (seconds each).
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        outcomes = pool.map(_merge_in_process, [(s, str(store)) for s in sets])
    merged = [r for out in outcomes for r, s in out if s == "merged"]
    assert sorted(merged) == sorted(set(merged)) == sorted(ids)
    assert all(s in ("merged", "unchanged") for out in outcomes for _, s in out)
    assert ResultStore(store).runs() == sorted(ids)
    assert not any(p.name.startswith(".") and p.name != ".archbench.lock" for p in store.iterdir())
    for r, src in zip(ids, runs, strict=True):
        assert tree(store / r).keys() - {PUBLISH_NAME} == tree(src).keys()


def test_a_store_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "store").write_text("x")
    with pytest.raises(ResultsError, match="is a file"):
        merge_runs(
            [make_run(tmp_path / "job", RUN_A, {"amd64-trixie": "amd64"})],
            tmp_path / "store",
            on_line=lambda _: None,
        )


@pytest.mark.parametrize(
    ("model", "cls"),
    [
        ("AMD EPYC 7763 64-Core Processor", "amd epyc 7763"),
        ("AMD EPYC 7763", "amd epyc 7763"),
        ("Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", "intel xeon platinum 8370c"),
        ("SpacemiT K1 (rv64imafdcv)", "spacemit k1 (rv64imafdcv)"),
        ("POWER9 (architected), altivec supported", "power9 (architected), altivec supported"),
        ("", "unknown"),
    ],
)
def test_cpu_classes(model: str, cls: str) -> None:
    assert cpu_class(model) == cls


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_cpu_class_is_stable_and_never_empty(model: str) -> None:
    once = cpu_class(model)
    assert once and cpu_class(once) == once


def test_publish_command_merges_summarises_and_renders(tmp_path: Path) -> None:
    """The command end to end: base on main, head on a branch, the summary names what
    moved and the gate fails with exit 13 after writing everything."""
    base = make_run(tmp_path / "base", RUN_A, {"riscv64-trixie": "riscv64"}, signing=50_000)
    make_run(tmp_path / "head", RUN_B, {"riscv64-trixie": "riscv64"}, signing=56_000)
    store, out, summary = tmp_path / "store", tmp_path / "page", tmp_path / "summary.md"
    first = run_invoke(
        "publish",
        "--merge",
        str(base),
        "--store",
        str(store),
        "--branch",
        "main",
        "--no-page",
        timeout=180,
    )
    assert first.returncode == 0, first.stderr
    assert f"merged {RUN_A}" in first.stdout
    summary.write_text("earlier step\n")
    done = run_invoke(
        "publish",
        "--merge",
        str(tmp_path / "head"),
        "--store",
        str(store),
        "--branch",
        "pr-7",
        "--commit",
        "abc1234",
        "--summary",
        str(summary),
        "--base-branch",
        "main",
        "--out",
        str(out),
        "--no-plots",
        "--fail-above",
        "1.02",
        timeout=300,
    )
    assert done.returncode == 13, done.stdout + done.stderr
    text = summary.read_text()
    assert text.startswith("earlier step\n## archbench: what moved")
    assert "### riscv64" in text
    assert f"base `{RUN_A}` (branch `main`)" in text
    assert f"head `{RUN_B}` (branch `pr-7`, commit `abc1234`)" in text
    assert "more instructions" in text and "count gate: **FAILED**" in text
    assert "1.1200×" in text
    assert (out / "results.html").is_file()
    assert "--fail-above 1.02: 2 counted row(s) grew beyond the limit" in done.stderr


def test_runs_are_found_in_downloaded_artifacts(tmp_path: Path) -> None:
    """``--merge artifacts``: a folder of artifacts, each a store holding a run."""
    for run_id, job in ((RUN_A, "run-amd64-native-time"), (RUN_B, "run-riscv64-native-time")):
        make_run(tmp_path / "artifacts" / job, run_id, {"amd64-trixie": "amd64"})
    (tmp_path / "artifacts" / "run-empty").mkdir()
    found = collect_runs([tmp_path / "artifacts", tmp_path / "artifacts" / "run-amd64-native-time"])
    assert [p.name for p in found] == [RUN_A, RUN_B]
    with pytest.raises(ResultsError, match="no such folder"):
        collect_runs([tmp_path / "missing"])


def _store_of(tmp_path: Path, runs: list[tuple[str, str, int, str]]) -> Path:
    """A store of riscv64 runs: (run id, branch, instructions per signing block, QEMU CPU)."""
    store = tmp_path / "store"
    for run_id, branch, signing, cpu in runs:
        folder = make_run(tmp_path / run_id, run_id, {"riscv64-trixie": "riscv64"}, signing=signing)
        counts = folder / "riscv64-trixie.instructions.json"
        data = json.loads(counts.read_text())
        data["harness"]["counting"]["cpu_model"] = cpu
        rewrite_result(counts, data)
        merge_runs([folder], store, Provenance(branch=branch), on_line=lambda _: None)
    return store


def test_the_summary_takes_the_latest_base_of_the_same_machine_class(tmp_path: Path) -> None:
    old, new, other_cpu, head = (
        "20261201T080000Z-000001",
        "20261201T090000Z-000002",
        "20261201T095000Z-000003",
        "20261201T100000Z-000004",
    )
    store = _store_of(
        tmp_path,
        [
            (old, "main", 40_000, "rv64"),
            (new, "main", 50_000, "rv64"),
            (other_cpu, "main", 90_000, "max"),  # newer, but counted on another CPU model
            (head, "pr", 50_000, "rv64"),
        ],
    )
    summary = pr_summary(ResultStore(store), read_records(store), [head], "main")
    counted = [p for p in summary.pairs if p.identity.metric == "instructions"]
    assert [(p.base_run, len(p.moved)) for p in counted] == [(new, 0)]
    timed = [p for p in summary.pairs if p.identity.metric == "time"]
    assert [p.base_run for p in timed] == [other_cpu]  # times: same host CPU class
    assert "count gate: not set" in summary.text
    # Only runs of the base branch are bases; none on a branch without runs.
    nothing = pr_summary(ResultStore(store), read_records(store), [head], "release")
    assert all(p.base_run is None for p in nothing.pairs)
    assert "no base run on this machine class yet" in nothing.text
