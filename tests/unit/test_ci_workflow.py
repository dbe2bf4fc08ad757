"""The GitHub Actions workflow users copy (docs/ci/archbench-matrix.yml).

Validated offline against GitHub's published workflow schema, which
``check-jsonschema`` ships built in (``vendor.github-workflows``), and
checked against what ``invoke ci-matrix`` prints.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO, run_invoke

WORKFLOW = REPO / "docs" / "ci" / "archbench-matrix.yml"
MATRIX_KEYS = {"target", "arch", "platform", "runs-on", "emulated"}


def _check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_workflow_matches_githubs_schema() -> None:
    done = _check_jsonschema(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok -- validation done" in done.stdout


def test_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    """The validator is not a rubber stamp: a misspelt runs-on fails it."""
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text(encoding="utf-8")
    broken.write_text(text.replace("runs-on: ${{ matrix.runs-on }}", "run-on: x", 1))
    done = _check_jsonschema(broken)
    assert done.returncode == 1
    assert "'runs-on' is a required property" in done.stdout


@pytest.fixture(scope="module")
def ci_matrix() -> dict[str, Any]:
    done = run_invoke("ci-matrix", timeout=120)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


@pytest.mark.slow
def test_ci_matrix_keys_are_what_the_workflow_references(ci_matrix: dict[str, Any]) -> None:
    include = ci_matrix["include"]
    assert sorted(e["arch"] for e in include) == ["amd64", "arm64", "armv7", "ppc64le", "riscv64"]
    assert all(set(e) == MATRIX_KEYS for e in include)
    bench = _workflow()["jobs"]["bench"]
    referenced = set(re.findall(r"\bmatrix\.([A-Za-z0-9_-]+)", json.dumps(bench)))
    assert referenced == MATRIX_KEYS
    assert bench["runs-on"] == "${{ matrix.runs-on }}"
    assert bench["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert bench["strategy"]["fail-fast"] is False


@pytest.mark.slow
def test_runners_native_where_github_has_them(ci_matrix: dict[str, Any]) -> None:
    runners = {e["arch"]: (e["runs-on"], e["emulated"]) for e in ci_matrix["include"]}
    assert runners == {
        "amd64": ("ubuntu-24.04", False),
        "arm64": ("ubuntu-24.04-arm", False),
        "armv7": ("ubuntu-24.04", True),
        "ppc64le": ("ubuntu-24.04", True),
        "riscv64": ("ubuntu-24.04", True),
    }


def _runs(job: dict[str, Any]) -> list[str]:
    return [str(step["run"]) for step in job["steps"] if "run" in step]


def _uses(job: dict[str, Any]) -> list[str]:
    return [str(step["uses"]) for step in job["steps"] if "uses" in step]


def test_jobs_fan_out_and_collect() -> None:
    jobs = _workflow()["jobs"]
    assert list(jobs) == ["plan", "bench", "report"]
    plan = jobs["plan"]
    assert any("invoke ci-matrix" in r and "GITHUB_OUTPUT" in r for r in _runs(plan))
    assert plan["outputs"]["matrix"] == "${{ steps.matrix.outputs.matrix }}"

    bench = jobs["bench"]
    assert bench["needs"] == "plan"
    emulation = [s for s in bench["steps"] if "doctor --fix" in str(s.get("run", ""))]
    assert len(emulation) == 1 and emulation[0]["if"] == "${{ matrix.emulated }}"
    assert any("invoke bench --target" in r for r in _runs(bench))
    assert "actions/upload-artifact@v4" in _uses(bench)
    # QEMU comes from archbench's own setup, not from a registry image.
    assert not any("setup-qemu" in u or "docker://" in u for u in _uses(bench))

    report = jobs["report"]
    assert report["needs"] == "bench" and report["if"] == "${{ !cancelled() }}"
    download = next(s for s in report["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"] == {
        "pattern": "results-*",
        "path": "results/",
        "merge-multiple": True,
    }
    assert ".venv/bin/invoke report --all-runs" in _runs(report)
    upload = next(s for s in report["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "reports/out/"
