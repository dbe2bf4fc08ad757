"""Settings paths start at the project directory, flags at the current one."""

from __future__ import annotations

import json

import pytest
from helpers import REPO, run_invoke


@pytest.mark.slow
def test_invoke_from_a_subdirectory_reads_the_projects_matrix() -> None:
    """`invoke ci-matrix` in docs/ reads matrix.yml of the project, not docs/matrix.yml."""
    top = run_invoke("ci-matrix")
    below = run_invoke("ci-matrix", cwd=REPO / "docs")
    assert top.returncode == 0, top.stderr
    assert below.returncode == 0, below.stderr
    assert below.stdout == top.stdout
    names = [entry["arch"] for entry in json.loads(top.stdout)["include"]]
    assert "riscv64" in names


@pytest.mark.slow
def test_a_relative_results_flag_starts_at_the_current_directory() -> None:
    """`--results here` given in docs/ is docs/here (absent), named in the error."""
    done = run_invoke("report", "--results", "here", cwd=REPO / "docs")
    assert done.returncode == 9
    assert "results directory here does not exist" in done.stderr
