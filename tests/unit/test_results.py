from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from archbench.errors import HarnessError, ResultsError
from archbench.result import (
    Result,
    ResultStore,
    load,
    new_run_id,
    parse_harness_output,
    write_atomic,
)


def harness_doc() -> dict[str, Any]:
    return {
        "format": "archbench-harness",
        "version": 1,
        "harness_version": "0.1.0",
        "started_at": "2026-11-29T22:00:00Z",
        "duration_s": 1.5,
        "parameters": {"iterations": 2, "repetitions": 3, "rsa_bits": [1024]},
        "setup": {
            "cpu_model": "Test CPU",
            "cores": 2,
            "machine": "x86_64",
            "kernel": "Linux 6.1.0 #1 SMP",
            "os": "Debian GNU/Linux 13 (trixie)",
            "packages": {"libsodium": "1.0.18-1", "libgcrypt": None},
            "future_field": "ignored",
        },
        "rows": [
            {
                "suite": "blindsig",
                "scheme": "CS",
                "key_bits": None,
                "operation": "signing",
                "ops_per_block": 2,
                "samples_ns": [100, 120, 110],
                "valid": True,
                "invalid_reason": None,
            }
        ],
    }


def stored(run_id: str = "20261129T220000Z-abcdef", name: str = "t1") -> dict[str, Any]:
    return {
        "format": "archbench-result",
        "version": 1,
        "run_id": run_id,
        "target": {
            "name": name,
            "arch": "amd64",
            "platform": "linux/amd64",
            "base": "debian-trixie",
            "profile": "slim",
        },
        "execution": {
            "emulated": False,
            "host_arch": "amd64",
            "host_cpu": "Test CPU",
            "image_id": "sha256:00",
            "image_tag": "archbench/bench:amd64-00",
        },
        "harness": harness_doc(),
    }


def test_harness_output_parses_and_ignores_new_fields() -> None:
    doc = parse_harness_output(json.dumps(harness_doc()))
    assert doc.rows[0].samples_ns == (100, 120, 110)
    assert doc.rows[0].label == "CS"
    assert doc.setup.packages["libgcrypt"] is None


def test_harness_output_of_another_version_is_refused_with_a_fix() -> None:
    bad = {**harness_doc(), "version": 2}
    with pytest.raises(HarnessError, match=r"version 2 is not supported .* \(invoke images\)"):
        parse_harness_output(json.dumps(bad))


def test_harness_output_that_is_not_json_shows_its_tail() -> None:
    with pytest.raises(HarnessError, match=r"not a JSON document.*Segmentation fault"):
        parse_harness_output("partial {\nSegmentation fault")


def test_harness_contract_violation_names_the_key() -> None:
    bad = harness_doc()
    bad["rows"][0]["operation"] = "teleport"
    with pytest.raises(
        HarnessError, match=r"at 'rows\[0\]': unknown blindsig operation 'teleport'"
    ):
        parse_harness_output(json.dumps(bad))


def test_round_trip_through_the_store(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    result = Result.model_validate(stored())
    path = store.save(result)
    assert path == tmp_path / "20261129T220000Z-abcdef" / "t1.json"
    assert load(path) == result
    assert store.runs() == ["20261129T220000Z-abcdef"]
    assert [p.name for p in path.parent.iterdir()] == ["t1.json"]  # no temp file left


def test_unknown_result_version_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "r" / "t.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**stored(), "version": 7}))
    with pytest.raises(ResultsError) as info:
        load(path)
    msg = str(info.value)
    assert str(path) in msg and "version 7 is not supported" in msg
    assert "reads version 2" in msg and "version 1 files are read too" in msg
    assert "re-measure" in msg


def test_bad_files_do_not_hide_good_ones(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.save(Result.model_validate(stored(name="good")))
    run = tmp_path / "20261129T220000Z-abcdef"
    (run / "broken.json").write_text("{not json")
    (run / "wrongkey.json").write_text(json.dumps({**stored(), "target": {"name": "x"}}))
    loaded, failures = store.load_all()
    assert [r.target.name for r in loaded] == ["good"]
    assert sorted(f.path.name for f in failures) == ["broken.json", "wrongkey.json"]
    assert any("at 'target.arch'" in f.message for f in failures)


def test_atomic_write_keeps_the_old_file_when_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.json"
    write_atomic(path, "old")

    def boom(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("os.replace", boom)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_run_ids_sort_by_time() -> None:
    import datetime as dt

    a = new_run_id(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    b = new_run_id(dt.datetime(2026, 1, 2, 3, 4, 6, tzinfo=dt.UTC))
    assert a.startswith("20260102T030405Z-") and len(a) == len("20260102T030405Z-") + 6
    assert sorted([b, a]) == [a, b]


def test_a_result_is_either_measured_or_reference() -> None:
    ref = {"source": "thesis-appendix-performance.tex, tab:comp-sign-POWER9", "citation": "thesis"}
    both = {**stored(), "reference": ref}
    with pytest.raises(ValueError, match="exactly one of 'execution' and 'reference'"):
        Result.model_validate(both)
    only_ref = {k: v for k, v in both.items() if k != "execution"}
    r = Result.model_validate(only_ref)
    assert r.reference is not None and r.execution is None and r.emulated is False


def _repeat(index: int, samples: list[int], count: int = 2) -> Result:
    doc = stored()
    doc["execution"] = {**doc["execution"], "repeat_index": index, "repeat_count": count}
    doc["harness"]["rows"][0]["samples_ns"] = samples
    return Result.model_validate(doc)


def test_repeated_runs_are_stored_apart_and_merged_on_load(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    p2 = store.save(_repeat(2, [200, 220, 210]))
    p1 = store.save(_repeat(1, [100, 120, 110]))
    assert (p1.name, p2.name) == ("t1.json", "t1.repeat-2.json")
    (merged,), failures = store.load_all()
    assert failures == []
    row = merged.harness.rows[0]
    assert row.samples_ns == (100, 120, 110, 200, 220, 210)
    assert row.run_medians_ns == (110.0, 210.0)
    raw, _ = store.load_all(merge=False)
    assert len(raw) == 2


def test_runs_calibrated_to_other_block_sizes_pool_per_operation(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.save(_repeat(1, [100, 100]))  # blocks of 2 ops: 50 ns/op
    other = _repeat(2, [260, 240])  # blocks of 4 ops: 65 and 60 ns/op
    rows = (other.harness.rows[0].model_copy(update={"ops_per_block": 4}),)
    store.save(
        other.model_copy(update={"harness": other.harness.model_copy(update={"rows": rows})})
    )
    (merged,), failures = store.load_all()
    row = merged.harness.rows[0]
    assert failures == [] and row.ops_per_block == 2
    assert row.samples_ns == (100, 100, 130, 120)
    assert row.run_medians_ns == (100.0, 125.0)


def test_runs_with_different_rows_are_not_pooled(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.save(_repeat(1, [100]))
    other = _repeat(2, [200])
    rows = (other.harness.rows[0].model_copy(update={"operation": "verifying"}),)
    other = other.model_copy(update={"harness": other.harness.model_copy(update={"rows": rows})})
    store.save(other)
    store.save(Result.model_validate(stored(name="fine")))
    loaded, failures = store.load_all()
    assert [r.target.name for r in loaded] == ["fine"]
    assert len(failures) == 1 and "measured different rows" in failures[0].message


def test_written_files_are_readable_by_others(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_atomic(path, "{}")
    assert path.stat().st_mode & 0o044 == 0o044


def test_latest_run_is_the_one_written_last_not_the_last_id(tmp_path: Path) -> None:
    import os

    from helpers import result, row

    from archbench.result import ResultStore

    store = ResultStore(tmp_path)
    named = store.save(
        result("t", "amd64", "x86_64", "Xeon", [row("CS", "signing", [5])], run_id="imp-b")
    )
    stamped = store.save(
        result(
            "t", "amd64", "x86_64", "Xeon", [row("CS", "signing", [5])],
            run_id="20261201T103708Z-e70d37",
        )
    )  # fmt: skip
    os.utime(named, (1_000_000, 1_000_000))
    os.utime(stamped, (2_000_000, 2_000_000))
    assert store.runs() == ["20261201T103708Z-e70d37", "imp-b"]
    assert store.latest_run() == "20261201T103708Z-e70d37"
