"""``archbench.results`` and ``archbench.export`` stay the public faces of their split modules.

The result models, store, loading and merging live in ``archbench/result/``,
the tidy frame in ``archbench/tidy.py``; every name callers imported before
the split must still come from the old modules, as the very same object.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from archbench import export, results, tidy

PACKAGE = Path(results.__file__).resolve().parent / "result"

# Every public name archbench/results.py defined before the split (1,026 lines).
RESULTS_NAMES = {
    "RESULT_FORMAT", "RESULT_VERSION", "Metric", "METRICS", "HARNESS_FORMAT",
    "HARNESS_VERSION", "Operation", "Scheme", "MAX_NS", "MAX_KEY_BITS", "MAX_RESULT_BYTES",
    "RUN_ID", "FILE_NAME", "check_run_id", "inside", "APPENDIX_SUITES", "CalibrationBlock",
    "StopReason", "MedianCi", "RowNoise", "Row", "Parameters", "CpuLimits", "Setup",
    "Calibration", "SuiteRun", "CountCalibration", "Counting", "HarnessDocument",
    "TargetInfo", "ArchiveRef", "Execution", "Reference", "Result", "new_run_id",
    "parse_harness_output", "migrate", "load", "write_atomic", "MANIFEST_NAME",
    "RunManifest", "LoadFailure", "ResultStore", "result_key", "merge_repeats",
}  # fmt: skip

# archbench/export.py's public names before the split (527 lines).
EXPORT_NAMES = {
    "CSV_FILE", "JSON_FILE", "GNUPG_CSV_FILE", "GNUPG_COLUMNS", "REFERENCE_IGNORED_FLAGS",
    "COLUMNS", "thesis_ops", "row_id", "clock_resolution_ns", "tidy_frame", "frame_records",
    "gnupg_frame", "SPREAD_COLUMNS", "UNPUBLISHED_COLUMNS", "UNKNOWN_TEXT", "export_frame",
    "write_exports",
}  # fmt: skip

# The order of archbench/result/__init__.py: a module imports only modules before it.
LAYERS = ("base", "row", "document", "paths", "versions", "model", "loading", "merge", "store")


def test_results_exports_every_old_name_from_its_new_home() -> None:
    # write_texts came with the split: the writers of results, exports and reports share it.
    assert set(results.__all__) == RESULTS_NAMES | {"write_texts"}
    for name in RESULTS_NAMES:
        value = getattr(results, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            home = value.__module__
            assert home.startswith("archbench.result."), (name, home)
            assert getattr(importlib.import_module(home), name) is value
    assert results.Row.__module__ == "archbench.result.row"
    assert results.ResultStore.__module__ == "archbench.result.store"


def test_export_keeps_its_names_and_the_tidy_ones_are_the_same_objects() -> None:
    assert set(export.__all__) == EXPORT_NAMES
    for name in ("COLUMNS", "REFERENCE_IGNORED_FLAGS", "thesis_ops", "row_id", "tidy_frame"):
        assert getattr(export, name) is getattr(tidy, name)
    assert export.clock_resolution_ns is tidy.clock_resolution_ns
    assert export.frame_records is tidy.frame_records


def _archbench_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("archbench")}


@pytest.mark.parametrize("layer", LAYERS)
def test_result_modules_import_only_lower_layers_and_stay_small(layer: str) -> None:
    path = PACKAGE / f"{layer}.py"
    allowed = {f"archbench.result.{lower}" for lower in LAYERS[: LAYERS.index(layer)]}
    inside = {m for m in _archbench_imports(path) if m.startswith("archbench.result")}
    assert inside <= allowed, f"{layer} imports {sorted(inside - allowed)}: a cycle in waiting"
    assert "archbench.results" not in _archbench_imports(path)
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 400


def test_every_result_module_is_listed_in_the_layers() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert modules == set(LAYERS)


def test_the_split_modules_never_load_docker() -> None:
    code = (
        "import sys, archbench.results, archbench.export, archbench.tidy\n"
        "print(sorted(m for m in sys.modules if m == 'docker' or m.startswith('docker.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"
