"""The harness's whole document (harness/abh/document.py) against the versioned
schema (harness/schema-v1.json)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from harness_fakes import harness_document
from helpers import SCHEMA

# --------------------------------------------------------------------------
# Whole documents


def test_build_document_validates_against_schema() -> None:
    doc = harness_document()

    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["format"] == "archbench-harness"
    assert doc["version"] == 1
    assert doc["started_at"] == "2026-11-29T22:40:00Z"
    assert doc["duration_s"] == 12.346
    assert len(doc["rows"]) == 17
    assert [r["valid"] for r in doc["rows"][:7]] == [False] * 7
    # The schema is what the host checks too: make sure it would catch breakage.
    broken = json.loads(json.dumps(doc))
    broken["rows"][0]["samples_ns"] = [0]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(broken)


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    broken: dict[str, Any] = json.loads(json.dumps(doc))
    *parents, last = path.split(".")
    node: Any = broken
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[last] = value
    return broken


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("rows.0.calibrated", "yes"),
        ("rows.0.iterations_requested", 0),
        ("rows.0.repetitions_requested", 0),
        ("rows.0.budget_exhausted", None),
        ("rows.0.warmup_samples_ns", [-1]),
        ("rows.0.calibration_blocks", [{"ops_per_block": 0, "ns": 5}]),
        ("rows.0.calibration_blocks", [{"ops_per_block": 10}]),
        ("parameters.warmup", -1),
        ("parameters.max_time_s", 0),
        ("parameters.min_block_ns", -5),
        ("calibration.min_block_ns", None),
        ("calibration.pair_overhead_ns", "fast"),
        ("calibration.observed_tick_ns", 0),
        ("setup.cpu_flags", "fpu sse2"),
        ("setup.cpu_affinity", [-1]),
        ("setup.cpu_limits", {"cgroup": "v3"}),
        ("setup.cpu_limits.cpus", 0),
        ("setup.load_average", [1.0, 2.0]),
        ("setup.gcc_version", 14),
    ],
)
def test_schema_types_the_new_fields(path: str, value: Any) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(_set(harness_document(), path, value))


def test_schema_still_accepts_documents_without_the_new_fields() -> None:
    # Stored version 1 results from before calibration must stay valid.
    doc = harness_document()
    del doc["calibration"]
    for key in ("warmup", "max_time_s", "min_block_ns"):
        del doc["parameters"][key]
    for key in ("gcc_version", "cpu_flags", "cpu_affinity", "cpu_limits", "load_average"):
        del doc["setup"][key]
    for row in doc["rows"]:
        for key in (
            "iterations_requested",
            "calibrated",
            "repetitions_requested",
            "budget_exhausted",
            "warmup_samples_ns",
            "calibration_blocks",
        ):
            del row[key]
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def test_schema_allows_unknown_cpu_limits_and_no_load() -> None:
    doc = harness_document()
    doc["setup"]["cpu_limits"] = None
    doc["setup"]["load_average"] = None
    doc["setup"]["cpu_affinity"] = None
    doc["calibration"]["observed_tick_ns"] = None
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
