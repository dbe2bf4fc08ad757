"""Layering: only tasks.py knows invoke; planning and flag parsing never need docker."""

from __future__ import annotations

import ast
from pathlib import Path

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


PURE = [
    "archbench.run.plan",
    "archbench.run.progress",
    "archbench.build.cross",
    "archbench.inputs.flags",
    "archbench.cli.config",
    "archbench.cli.options",
    "archbench.cli.helptext",
]
"""Planning, progress, cross-build decisions and flag parsing: modules that need no docker."""


def _source(module: str) -> Path | None:
    path = REPO / module.replace(".", "/")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def _face_names(package: str) -> dict[str, str]:
    """Name -> module of every ``from archbench.<module> import name`` in a package's face."""
    face = _source(package)
    assert face is not None and face.name == "__init__.py", package
    names = {}
    for node in ast.walk(ast.parse(face.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update({a.asname or a.name: node.module for a in node.names})
    return names


def _is_package(module: str) -> bool:
    path = _source(module)
    return path is not None and path.name == "__init__.py"


def _needs(module: str) -> set[str]:
    """Top-level packages ``module`` needs, through every archbench module it uses.

    A name imported from a package's face counts as an import of the module that
    defines it, not of the whole face: faces gather pure and docker-bound modules
    of one stage, while a pure module must need no docker itself.
    """
    seen: set[str] = set()
    todo, outside = [module], set()
    while todo:
        current = todo.pop()
        path = _source(current)
        if current in seen or path is None:
            continue
        seen.add(current)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                used = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                used = [node.module]
                if _is_package(node.module):
                    faces = _face_names(node.module)
                    subs = [f"{node.module}.{a.name}" for a in node.names]
                    used = [s if _source(s) else faces.get(s.rpartition(".")[2], s) for s in subs]
            else:
                continue
            for name in used:
                if name.split(".")[0] == "archbench":
                    todo.append(name)
                else:
                    outside.add(name.split(".")[0])
    return outside


def test_planning_and_flag_parsing_need_no_docker() -> None:
    """Pure stages: they, and every archbench module they use, import no docker or invoke."""
    assert {m: sorted(_needs(m) & {"docker", "invoke"}) for m in PURE} == {m: [] for m in PURE}
