"""Layering: only tasks.py knows invoke; planning and flag parsing never load docker."""

from __future__ import annotations

import ast
import subprocess
import sys

from helpers import REPO

PACKAGE = REPO / "archbench"


def _imported(path: str) -> set[str]:
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_module_of_the_package_imports_invoke() -> None:
    modules = sorted(str(p.relative_to(REPO)) for p in PACKAGE.rglob("*.py"))
    assert "archbench/cli/bench.py" in modules
    assert [m for m in modules if "invoke" in _imported(m)] == []
    assert "invoke" in _imported("tasks.py")


def test_planning_and_flag_parsing_load_no_docker() -> None:
    """Pure stages: importing them (and all they import) leaves docker unloaded."""
    code = (
        "import sys\n"
        "import archbench.run.plan, archbench.cli.config, archbench.cli.options, "
        "archbench.cli.helptext\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('docker', 'invoke')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
