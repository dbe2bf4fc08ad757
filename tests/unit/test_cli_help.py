"""``invoke --list`` and ``invoke --help TASK`` print exactly what the golden files hold.

The golden files in ``tests/golden/cli-help/`` were recorded from ``tasks.py`` as it
was before its task bodies moved to ``archbench/cli/`` (the split must change no
flag, default or help text). They come from the real command line: invoke's own
program loads ``tasks.py`` from the repository, as ``.venv/bin/invoke`` does. After
an intended change to a flag, regenerate with
``ARCHBENCH_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_cli_help.py`` and
review the diff.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from helpers import GOLDEN, REPO, assert_golden

TASKS = [
    "archive",
    "bench",
    "bisect",
    "ci-matrix",
    "clean",
    "compare",
    "doctor",
    "history",
    "images",
    "import",
    "publish",
    "report",
]

# One interpreter prints them all (each one a fresh load of tasks.py by invoke's
# loader): nine separate processes would cost seconds of imports each.
_PRINT_ALL = """
import contextlib, io, json, sys
from invoke.main import program
texts = {}
for args in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            program.run(["invoke", *args], exit=True)
        except SystemExit as exc:
            assert exc.code in (0, None), (args, exc.code)
    texts[" ".join(args)] = out.getvalue()
print(json.dumps(texts))
"""


def _golden_name(args: list[str]) -> str:
    return "list.txt" if args == ["--list"] else f"{args[1]}.txt"


@pytest.fixture(scope="module")
def printed() -> dict[str, str]:
    """``' '.join(args)`` -> what ``invoke ARGS`` printed, for --list and every task's --help."""
    argv = [["--list"], *(["--help", name] for name in TASKS)]
    # COLUMNS: invoke wraps help to the terminal's width; 80 is what it assumes without one.
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run(
        [sys.executable, "-c", _PRINT_ALL, json.dumps(argv)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    texts: dict[str, str] = json.loads(done.stdout)
    return texts


@pytest.mark.parametrize("args", [["--list"], *(["--help", name] for name in TASKS)], ids=str)
def test_help_matches_its_golden_file(args: list[str], printed: dict[str, str]) -> None:
    text = printed[" ".join(args)]
    assert_golden(f"cli-help/{_golden_name(args)}", text)


def test_every_task_has_a_golden_file(printed: dict[str, str]) -> None:
    """A task added or removed shows in ``--list`` and needs its own golden help."""
    # A task's line starts with two spaces; its wrapped docstring with more.
    listed = [m.group(1) for m in re.finditer(r"^  (\S+)", printed["--list"], re.MULTILINE)]
    assert sorted(listed) == TASKS
    assert sorted(p.stem for p in (GOLDEN / "cli-help").glob("*.txt") if p.stem != "list") == TASKS
    assert "--rsa-bits=STRING" in printed["--help bench"]


HEAVY = ("pandas", "numpy", "matplotlib", "plotly", "scipy", "docker")
"""Libraries a command imports when it works, never while invoke lists or parses tasks."""


def test_listing_the_tasks_imports_no_command_module_nor_a_heavy_library() -> None:
    # Each of these costs every invoke call (and every test that runs one) its import time:
    # about 2.5 s together on the 2-core machine.
    probe = "import json, sys, tasks; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(done.stdout))
    assert "archbench.cli.flags" in loaded  # the probe did import the tasks
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    commands = {f"archbench.cli.{m}" for m in ("archive", "bench", "bisect", "history")}
    commands |= {f"archbench.cli.{m}" for m in ("bisect_time", "hosts", "publish", "report")}
    assert not loaded & commands, sorted(loaded & commands)
