"""The harness's Python modules: standard library only, acyclic, small.

The harness is copied flat into ``/opt/archbench/harness``
(``archbench.build.images.harness_files`` globs ``harness/*.py``) and run by the
distribution's ``python3``, so every import must be a sibling module or the
standard library (a module in a subfolder would not be copied), and the
modules must import each other without cycles.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from helpers import HARNESS_DIR

MAX_LINES = 500
"""The house rule: one concern per module, no module over ~500 lines."""

MODULES = {p.stem: p for p in sorted(HARNESS_DIR.glob("*.py"))}


def imports_of(path: Path) -> set[str]:
    """Top-level module names ``path`` imports (absolute imports only)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


GRAPH = {name: imports_of(path) & MODULES.keys() for name, path in MODULES.items()}


def test_imports_only_the_standard_library_and_siblings() -> None:
    foreign = {
        name: sorted(imports_of(path) - MODULES.keys() - set(sys.stdlib_module_names))
        for name, path in MODULES.items()
    }
    assert {name: found for name, found in foreign.items() if found} == {}


def test_no_import_cycles() -> None:
    done: set[str] = set()

    def visit(name: str, stack: list[str]) -> None:
        if name in stack:
            pytest.fail("import cycle: " + " -> ".join([*stack[stack.index(name) :], name]))
        if name in done:
            return
        for dependency in sorted(GRAPH[name]):
            visit(dependency, [*stack, name])
        done.add(name)

    for name in MODULES:
        visit(name, [])
    assert done == MODULES.keys()


def test_no_module_over_the_line_limit() -> None:
    lengths = {name: len(p.read_text(encoding="utf-8").splitlines()) for name, p in MODULES.items()}
    assert {name: n for name, n in lengths.items() if n > MAX_LINES} == {}
