"""The host's result models keep every field the harness sends, and their schema accepts it.

The harness document is built by the harness's own functions (as
``tests/harness_fakes.py`` builds it); the schema is generated from the host's
pydantic models (:class:`archbench.result.HarnessDocument`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from harness_fakes import calibrated_rows, harness_document
from helpers import result

from archbench.result import HarnessDocument, ResultStore, load
from archbench.result.contract import SCHEMA_FILE, harness_schema, schema_text


def _missing(sent: Any, kept: Any, path: str = "") -> list[str]:
    """Paths of ``sent`` that ``kept`` lacks or holds with another value."""
    if isinstance(sent, dict):
        if not isinstance(kept, dict):
            return [path or "."]
        out = []
        for key, value in sent.items():
            if key not in kept:
                out.append(f"{path}.{key}")
            else:
                out += _missing(value, kept[key], f"{path}.{key}")
        return out
    if isinstance(sent, list):
        if not isinstance(kept, list) or len(kept) != len(sent):
            return [path]
        return [
            m
            for i, (a, b) in enumerate(zip(sent, kept, strict=True))
            for m in _missing(a, b, f"{path}.{i}")
        ]
    return [] if sent == kept else [path]


def _document() -> dict[str, Any]:
    """A harness document whose CS rows were calibrated and warmed up (harness functions)."""
    doc = harness_document()
    calibrated, _ = calibrated_rows(1000)
    doc["rows"] = [*calibrated, *(r for r in doc["rows"] if r["scheme"] != "CS")]
    out: dict[str, Any] = json.loads(json.dumps(doc))
    return out


def test_the_document_has_the_fields_extra_ignore_used_to_drop() -> None:
    doc = _document()
    row = doc["rows"][0]
    assert row["warmup_samples_ns"] and row["calibration_blocks"]
    assert "build" in doc["setup"] and "max_block_ops" in doc["calibration"]


def test_host_models_keep_every_field_the_harness_sends() -> None:
    doc = _document()
    doc["setup"]["a_field_of_a_newer_harness"] = {"kept": [1, 2]}
    kept = HarnessDocument.model_validate(doc).model_dump(mode="json")
    assert _missing(doc, kept) == []


def test_saved_results_keep_warmups_calibration_blocks_and_build_info(tmp_path: Path) -> None:
    doc = _document()
    harness = HarnessDocument.model_validate(doc)
    base = result("box", "amd64", "x86_64", "Ryzen", [])
    stored = ResultStore(tmp_path).save(base.model_copy(update={"harness": harness}))
    again = load(stored).harness
    assert again.rows[0].warmup_samples_ns == tuple(doc["rows"][0]["warmup_samples_ns"])
    blocks = doc["rows"][0]["calibration_blocks"]
    assert again.rows[0].calibration_blocks is not None
    assert [b.model_dump() for b in again.rows[0].calibration_blocks] == blocks
    assert again.setup.build == doc["setup"]["build"]
    assert again.calibration is not None
    assert again.calibration.max_block_ops == doc["calibration"]["max_block_ops"]


def test_checked_in_schema_is_generated_from_the_host_models() -> None:
    # Regenerate with: python -m archbench.result.contract > harness/schema-v1.json
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text()


def test_schema_generated_from_the_host_models_accepts_the_harness_output() -> None:
    schema = harness_schema()
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(_document())
    broken = _document()
    broken["rows"][0]["samples_ns"] = [0]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(broken)
    broken = _document()
    broken["rows"][0]["calibration_blocks"] = [{"ops_per_block": 0, "ns": 5}]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(broken)
    # The vocabulary is part of the schema: an appendix row names a known operation.
    broken = _document()
    broken["rows"][0]["operation"] = "sign"
    with pytest.raises(jsonschema.ValidationError, match="'sign' is not one of"):
        validator.validate(broken)
    other = _document()
    other["rows"][0].update(suite="sodium", scheme="Ed25519", operation="sign")
    validator.validate(other)
