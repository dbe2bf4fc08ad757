"""The harness's Python modules: standard library only, acyclic, layered.

The harness tree is copied into ``/opt/archbench/harness``
(``archbench.images.benchmark.harness_files``) and run by the distribution's
``python3`` as ``archbench_harness.py`` with its package ``abh`` beside it, so
every import must be the standard library or a harness module (never the host
package ``archbench``, pandas or docker), the modules must import each other
without cycles, and ``abh.suites`` never imports the modules above it
(``abh.cli``, ``abh.document``, ``abh.setup_*``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from helpers import HARNESS_DIR


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(HARNESS_DIR).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(HARNESS_DIR.rglob("*.py"))}


def imports_of(name: str, path: Path) -> set[str]:
    """Modules ``path`` imports: harness modules by full name, others by top-level name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{name}: relative import"
            assert node.module
            # ``from abh.suites import counting`` imports the module abh.suites.counting.
            found.update(
                f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}" in MODULES
                else node.module
                for alias in node.names
            )
    return {n if n in MODULES else n.partition(".")[0] for n in found}


GRAPH = {name: imports_of(name, path) & MODULES.keys() for name, path in MODULES.items()}


def test_the_harness_is_one_entry_point_and_the_abh_package() -> None:
    assert {name.partition(".")[0] for name in MODULES} == {"archbench_harness", "abh"}
    assert "abh.suites.gnupg" in MODULES and "abh.cli" in MODULES


def test_imports_only_the_standard_library_and_the_harness() -> None:
    foreign = {
        name: sorted(imports_of(name, path) - MODULES.keys() - set(sys.stdlib_module_names))
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


def test_suites_never_import_the_modules_above_them() -> None:
    upward = {
        name: sorted(d for d in deps if not d.startswith("abh.suites"))
        for name, deps in GRAPH.items()
        if name.startswith("abh.suites")
    }
    assert {name: found for name, found in upward.items() if found} == {}
