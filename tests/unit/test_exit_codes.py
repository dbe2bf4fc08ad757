"""The exit codes in docs/commands.md and archbench/errors.py: the same codes and classes."""

from __future__ import annotations

import re

import pytest
from helpers import REPO, run_invoke

from archbench import errors

ROW = re.compile(r"^\| (\d+) \| (.*) \|$")


def _table_rows() -> dict[int, str]:
    text = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    return {int(m.group(1)): m.group(2) for m in map(ROW.match, text.splitlines()) if m}


def test_every_error_class_is_in_the_exit_code_table_with_its_code() -> None:
    rows = _table_rows()
    classes = [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.ArchbenchError)
    ]
    assert len(classes) >= 13
    for cls in classes:
        if cls is errors.ArchbenchError:
            continue
        assert f"`{cls.__name__}`" in rows[cls.exit_code], (cls.__name__, cls.exit_code)


@pytest.mark.slow
def test_a_refused_report_flag_exits_2_like_a_refused_bench_flag() -> None:
    report = run_invoke("report", "--reference", "--unit", "furlongs", "--out", "/nonexistent/x")
    bench = run_invoke("bench", "--arch", "vax")
    assert (report.returncode, bench.returncode) == (2, 2)
    assert "--unit 'furlongs' is not one of: ms, us (µs), ops/s" in report.stderr
    assert "Traceback" not in report.stderr + bench.stderr
