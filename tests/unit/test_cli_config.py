"""invoke.yaml's settings: relative paths start at the project directory (archbench.cli.config)."""

from __future__ import annotations

from pathlib import Path

import pytest

from archbench.cli import config


def test_defaults_read_relative_to_the_current_directory_at_the_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path.resolve()
    monkeypatch.chdir(project)
    s = config.resolve_settings({}, project)
    assert (s.matrix, s.results, s.reports, s.work) == (
        "matrix.yml",
        "results",
        "reports/out",
        ".archbench/work",
    )
    assert (s.apt_proxy, s.build_jobs) == ("", "2")


def test_from_a_subdirectory_paths_still_name_the_projects_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path.resolve()
    (project / "docs").mkdir()
    monkeypatch.chdir(project / "docs")
    s = config.resolve_settings(
        {"results": "data/results", "apt_proxy": None, "build_jobs": 3}, project
    )
    # Above the current directory: written absolute, so it cannot be misread as docs/...
    assert s.results == str(project / "data" / "results")
    assert s.matrix == str(project / "matrix.yml")
    assert (s.apt_proxy, s.build_jobs) == ("", "3")


def test_an_absolute_setting_is_kept_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    s = config.resolve_settings(
        {"work": "/var/tmp/ab-work", "apt_proxy": "off"}, tmp_path / "elsewhere"
    )
    assert s.work == "/var/tmp/ab-work"
    assert s.apt_proxy == "off"
    # tmp_path/elsewhere lies below the current directory: written relative to it.
    assert s.results == str(Path("elsewhere") / "results")
