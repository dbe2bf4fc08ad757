"""The house rules of the layout, read from the real tree with ast (nothing here imports it).

``archbench/`` is a map of the pipeline: one package per stage or concern, each
with one face, its ``__init__``. The rules checked here:

* ``archbench/`` holds at most :data:`MAX_ENTRIES` entries;
* outside a package ``P``, code imports ``P``'s names from its face, and only the
  names the face makes public (its ``__all__``); a submodule itself
  (``from archbench.P import plots``) only inside the function that needs it,
  which is how heavy modules stay lazy. Tests may import submodules and the
  names a face does not export; a name the face exports they import from it;
* inside ``P``, modules import their siblings, never ``P``'s face;
* a face exports only names defined in its own package (no re-exports);
* module-level imports form no cycle;
* pure packages (:data:`PURE_PACKAGES`), planning and flag parsing never load
  ``docker`` at module level, nor anything that does; only :data:`HEAVY` modules
  load matplotlib or scipy at module level;
* the stage packages form a pipeline (:data:`STAGES`): a package imports only
  packages before it, never a later one; ``run`` never imports ``report``, ``matrix``
  and ``run`` never ``analysis`` (:data:`NEVER_READ`), not even lazily; ``result``
  reads none of the report's vocabulary (:data:`REPORT_VOCABULARY`); nothing imports
  ``cli``, the commands;
* the commands live only in ``cli/``: each command of the flag registry has its body
  in a module of ``archbench.cli`` (``cli/registry.py``), and no module outside ``cli``
  takes the command line's settings;
* only ``tasks.py`` knows invoke; the harness never imports the host package,
  docker or pandas;
* the paths the tests share are defined once, in ``tests/helpers.py``.
"""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from helpers import HARNESS_DIR, REPO

PACKAGE = REPO / "archbench"
MAX_ENTRIES = 16
"""Entries of ``archbench/`` (packages and modules, ``__init__.py`` included)."""
PURE_PACKAGES = (
    "inputs",
    "suites",
    "matrix",
    "result",
    "analysis",
    "report",
    "upstream",
    "sources",
)
"""Packages that never load docker: they parse, plan, compute and render; ``sources`` reads
files, git and HTTP, and hands the images a packed tree, never touching an engine."""
PURE_MODULES = (
    "archbench.run.planning",
    "archbench.cli.config",
    "archbench.cli.flags",
)
"""Planning and flag parsing, outside the pure packages, that never load docker either."""
STAGES = (
    "inputs",
    "suites",
    "result",
    "matrix",
    "upstream",
    "archive",
    "hosts",
    "sources",
    "images",
    "run",
    "analysis",
    "report",
    "cli",
)
"""The packages in pipeline order: each imports only packages before it. ``result`` (the
stored form every later stage reads and writes) comes before the matrix; the archive format
before the engines (``hosts`` saves and loads archived images); ``sources`` (a matrix's
GNUnet and exchange sources resolved, copied and packed) before the ``images`` built from
them; ``analysis`` (the statistics of stored results) after ``run``, which plans and
measures without them; ``report`` renders what ``run`` stored and never runs anything;
``cli``, the commands, drives them all and nothing imports it."""
NEVER_READ = {"matrix": "analysis", "run": "analysis"}
"""Floors that never import another, not even lazily, whatever order :data:`STAGES` gives:
the plan and the run need no statistics (a table of the plan's belongs to ``matrix`` or
:mod:`archbench.platforms`)."""
REPORT_VOCABULARY = {"PART_ORDER", "SUITE_TITLES", "suite_title", "report_rank", "count_rank"}
"""What the suites say only for reports (orders, titles) and ``result`` never reads: a stored
row's validity cannot depend on how a report arranges it. Nor any name with ``APPENDIX``."""
HEAVY = {"archbench.report.plots": "matplotlib", "archbench.analysis.overhead": "scipy"}
"""Modules that import a library slow to import at module level; callers import them lazily."""
HEAVY_LIBRARIES = {"matplotlib", "scipy", "plotly"}
HARNESS_NEVER = {"archbench", "docker", "pandas"}
"""What the harness, run inside containers with the standard library, never imports."""
SHARED_TEST_NAMES = {"REPO", "HARNESS_DIR", "GOLDEN", "SCHEMA", "CI_MATRIX", "WORK"}
"""Module-level names of ``tests/helpers.py`` that no other test module defines again."""


def module_name(path: Path) -> str:
    """``archbench/report/plots.py`` -> ``archbench.report.plots``; a package's ``__init__``
    is the package."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources(*roots: Path) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
        found += [p for p in paths if "__pycache__" not in p.parts]
    return found


MODULES = {module_name(p): p for p in _sources(PACKAGE)}
"""Every module of archbench, by dotted name."""
PACKAGES = {
    module_name(d / "__init__.py")
    for d in sorted(PACKAGE.iterdir())
    if (d / "__init__.py").is_file()
}
"""The stage packages, ``archbench.<P>``; their ``__init__`` is their face."""
CODE = _sources(PACKAGE, REPO / "tasks.py", REPO / "benchmarks")
TESTS = _sources(REPO / "tests")


@dataclass(frozen=True)
class Import:
    """One imported name (``from module import name``) or module (``import module``)."""

    path: Path
    line: int
    source: str
    """The importing module, dotted (``tasks``, ``tests.unit.test_layout``)."""
    module: str
    """The module the statement names, made absolute."""
    name: str | None
    """The name after ``import`` of a ``from`` import; None for ``import module``."""
    lazy: bool
    """Inside a function: runs when it is called, not when the module is imported."""
    typing: bool
    """Under ``if TYPE_CHECKING:``: never runs."""

    @property
    def runs_on_import(self) -> bool:
        return not self.lazy and not self.typing

    @property
    def target(self) -> str:
        """The module this import loads last: ``module.name`` when that is a submodule
        (and not a name the face binds), else ``module``."""
        if self.name is None or self.name in FACE_BOUND.get(self.module, set()):
            return self.module
        sub = f"{self.module}.{self.name}"
        return sub if sub in MODULES else self.module

    def __str__(self) -> str:
        what = self.module if self.name is None else f"{self.module} import {self.name}"
        return f"{self.path.relative_to(REPO)}:{self.line}: {what}"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path) -> list[Import]:
    """Every import statement of ``path``, one :class:`Import` per name, relative ones
    made absolute."""
    source = module_name(path)
    package = source.split(".") if path.name == "__init__.py" else source.split(".")[:-1]
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool, typing: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(
                Import(path, node.lineno, source, a.name, None, lazy, typing) for a in node.names
            )
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.extend(
                Import(path, node.lineno, source, module, a.name, lazy, typing) for a in node.names
            )
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.body:
                visit(stmt, lazy, True)
            for stmt in node.orelse:
                visit(stmt, lazy, typing)
        else:
            inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            for child in ast.iter_child_nodes(node):
                visit(child, inner, typing)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False, False)
    return found


def _bound(path: Path) -> dict[str, ast.stmt]:
    """Names bound at a module's top level -> the statement that binds them (the last)."""
    bound: dict[str, ast.stmt] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for a in node.names:
                bound[a.asname or a.name.split(".")[0]] = node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound[name.id] = node
    return bound


def _public(path: Path) -> set[str]:
    """A face's public names: its ``__all__``, or without one its names without ``_``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and "__all__" in {
            t.id
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(t, ast.Name)
        }:
            assert node.value is not None
            return set(ast.literal_eval(node.value))
    return {name for name in _bound(path) if not name.startswith("_")}


FACE_BOUND = {p: set(_bound(MODULES[p])) for p in PACKAGES}
PUBLIC = {p: _public(MODULES[p]) for p in PACKAGES}
IMPORTS = {path: imports(path) for path in [*CODE, *TESTS]}


def stage(module: str) -> str | None:
    """The stage package (``archbench.P``) ``module`` is or lies in; None for
    ``archbench`` itself, ``archbench.errors``, ``archbench.platforms`` and others."""
    head = ".".join(module.split(".")[:2])
    return head if head in PACKAGES else None


def _none(found: Iterable[object], fix: str = "") -> None:
    """Assert there are no violations in ``found`` (None is none), one per line if there are."""
    items = sorted({str(f) for f in found if f is not None})
    assert not items, "\n".join([f"{len(items)} found:", *items, *([fix] if fix else [])])


def _archbench(paths: list[Path]) -> Iterator[Import]:
    for path in paths:
        yield from (i for i in IMPORTS[path] if i.module.split(".")[0] == "archbench")


# --- the rooms ------------------------------------------------------------------------


def test_archbench_holds_few_entries() -> None:
    entries = sorted(e.name for e in PACKAGE.iterdir() if e.name != "__pycache__")
    assert len(entries) <= MAX_ENTRIES, entries


# --- faces ----------------------------------------------------------------------------


def _outside_violation(i: Import, test: bool) -> str | None:
    """Why ``i`` (from outside the stage package it imports from) breaks the rule, or None."""
    package = stage(i.module)
    if package is None or stage(i.source) == package:
        return None
    target = i.target
    if target == package:
        if i.name is None or i.name in PUBLIC[package]:
            return None
        return f"{i}: {i.name} is not public in {package} (not in its __all__)"
    if i.module == package or i.name is None:
        # The submodule itself: a test's, or a heavy module imported where it is needed.
        if test or i.lazy:
            return None
        return f"{i}: the submodule itself, at module level"
    if test and i.name not in PUBLIC[package]:
        return None
    if i.name in PUBLIC[package]:
        return f"{i}: import {i.name} from {package}, its face"
    return f"{i}: {i.name} is not public in {package}"


def test_code_outside_a_package_imports_its_public_names_from_its_face() -> None:
    found = [_outside_violation(i, test=False) for i in _archbench(CODE)]
    _none(
        found,
        "import the names from the package's face (its __all__); import a heavy submodule "
        "itself (from archbench.P import plots) inside the function that needs it",
    )


def test_tests_import_a_name_a_face_exports_from_the_face() -> None:
    found = [_outside_violation(i, test=True) for i in _archbench(TESTS)]
    _none(found)


def test_modules_inside_a_package_never_import_its_face() -> None:
    found = [
        str(i)
        for i in _archbench(CODE)
        if (package := stage(i.source)) is not None
        and i.source != package
        and i.module == package
        and i.target == package
    ]
    _none(found, "import the sibling module that defines the name")


def test_faces_export_only_names_of_their_own_package() -> None:
    found = []
    for package in sorted(PACKAGES):
        path = MODULES[package]
        bound = _bound(path)
        for name in sorted(PUBLIC[package]):
            node = bound.get(name)
            where = f"{path.relative_to(REPO)}: {name}"
            if node is None:
                found.append(f"{where} is in __all__ but not defined")
            elif isinstance(node, ast.ImportFrom):
                (module,) = {i.module for i in imports(path) if i.line == node.lineno}
                if module != package and not module.startswith(f"{package}."):
                    found.append(f"{where} comes from {module}: import it from there")
            elif isinstance(node, ast.Import):
                found.append(f"{where} is a module, not a name of the package")
    _none(found)


def test_no_face_exports_a_name_its_submodules_have() -> None:
    """``from archbench.analysis import compare`` must mean one thing: a face name that is
    also a submodule's hides the module from ``from P import sub`` (and from monkeypatch)."""
    found = [
        f"{package}: {name}"
        for package in sorted(PACKAGES)
        for name in sorted(PUBLIC[package])
        if f"{package}.{name}" in MODULES
    ]
    _none(found, "rename the module to what it holds (analysis/comparison.py) or the name")


# --- the import graph -----------------------------------------------------------------


def _graph() -> dict[str, set[str]]:
    """archbench module -> the archbench modules loading it loads (module level).

    Loading ``archbench.P.sub`` from outside ``P`` first runs the face ``archbench.P``,
    so that is an edge too; inside ``P`` the face is already being loaded.
    """
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for source, path in MODULES.items():
        for i in _archbench([path]):
            target = i.target
            if not i.runs_on_import or target not in MODULES or target == source:
                continue
            graph[source].add(target)
            parts = target.split(".")
            for n in range(2, len(parts)):
                parent = ".".join(parts[:n])
                if parent in MODULES and not f"{source}.".startswith(f"{parent}."):
                    graph[source].add(parent)
    return graph


GRAPH = _graph()


def _external(module: str) -> set[str]:
    """Top-level names of what ``module`` imports from outside archbench, at module level."""
    return {
        i.module.split(".")[0]
        for i in IMPORTS[MODULES[module]]
        if i.runs_on_import and i.module.split(".")[0] != "archbench"
    }


def _chains(start: str) -> dict[str, list[str]]:
    """Every module ``start`` loads -> the shortest import chain from ``start`` to it."""
    chains = {start: [start]}
    todo = [start]
    while todo:
        module = todo.pop(0)
        for dep in sorted(GRAPH[module]):
            if dep not in chains:
                chains[dep] = [*chains[module], dep]
                todo.append(dep)
    return chains


def test_module_level_imports_form_no_cycle() -> None:
    assert sum(map(len, GRAPH.values())) > len(GRAPH), "the graph lost its edges"
    try:
        graphlib.TopologicalSorter(GRAPH).prepare()
    except graphlib.CycleError as cycle:
        raise AssertionError(f"import cycle: {' -> '.join(cycle.args[1])}") from None


def test_pure_packages_planning_and_flag_parsing_never_load_docker() -> None:
    assert any("docker" in _external(m) for m in MODULES), "the scan no longer sees docker"
    missing = [m for m in PURE_MODULES if m not in MODULES]
    assert missing == [], "moved? name their new modules in PURE_MODULES"
    pure = [m for m in MODULES if (stage(m) or "").removeprefix("archbench.") in PURE_PACKAGES]
    assert {stage(m) for m in pure} == {f"archbench.{p}" for p in PURE_PACKAGES}
    found = set()
    for start in [*pure, *PURE_MODULES]:
        for module, chain in _chains(start).items():
            if "docker" in _external(module):
                found.add(" -> ".join([*chain, "docker"]))
    _none(found)


def test_only_heavy_modules_load_matplotlib_or_scipy_and_callers_load_them_lazily() -> None:
    assert set(HEAVY) <= set(MODULES), "moved? name the heavy modules in HEAVY"
    assert all(lib in _external(m) for m, lib in HEAVY.items())
    found = set()
    for start in sorted(set(MODULES) - set(HEAVY)):
        for module, chain in _chains(start).items():
            if module in HEAVY or _external(module) & HEAVY_LIBRARIES:
                found.add(" -> ".join(chain))
    _none(found)


# --- the pipeline ---------------------------------------------------------------------


def _rank(module: str) -> int | None:
    package = stage(module)
    return None if package is None else STAGES.index(package.removeprefix("archbench."))


def test_every_package_has_its_place_in_the_pipeline() -> None:
    assert sorted(STAGES) == sorted(p.removeprefix("archbench.") for p in PACKAGES)


def test_no_stage_package_imports_a_later_stage() -> None:
    found = [
        f"{source} -> {target}: {stage(source)} comes before {stage(target)}"
        for source, targets in GRAPH.items()
        for target in targets
        if (a := _rank(source)) is not None and (b := _rank(target)) is not None and b > a
    ]
    # Lazy imports too: a function that calls a later stage is that stage's work.
    found += [
        f"{i}: lazily, a later stage"
        for path in CODE
        if path.is_relative_to(PACKAGE)
        for i in _archbench([path])
        if (a := _rank(i.source)) is not None and (b := _rank(i.module)) is not None and b > a
    ]
    _none(found, "move the call into the later stage or into the command (cli/)")


def test_run_never_imports_report_not_even_lazily() -> None:
    found = [
        str(i)
        for path in CODE
        if stage(module_name(path)) == "archbench.run"
        for i in _archbench([path])
        if stage(i.module) == "archbench.report"
    ]
    _none(found, "the command (cli/) renders what run stored")


def test_the_plan_and_the_run_never_import_the_statistics() -> None:
    found = [
        f"{i}: {stage(i.source)} never imports {stage(i.module)}"
        for path in CODE
        if path.is_relative_to(PACKAGE)
        for i in _archbench([path])
        if (source := stage(i.source)) is not None
        and NEVER_READ.get(source.removeprefix("archbench.")) is not None
        and stage(i.module) == f"archbench.{NEVER_READ[source.removeprefix('archbench.')]}"
    ]
    _none(found, "move what it needs to a lower floor (matrix, platforms, result)")


def test_result_reads_none_of_the_reports_vocabulary() -> None:
    paths = [p for p in CODE if stage(module_name(p)) == "archbench.result"]
    assert len(paths) > 5, "the scan lost the result package"
    found = [
        str(i)
        for i in _archbench(paths)
        if i.name is not None and (i.name in REPORT_VOCABULARY or "APPENDIX" in i.name)
    ]
    found += [
        f"{p.relative_to(REPO)}:{node.lineno}: .{node.attr}"
        for p in paths
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in REPORT_VOCABULARY
    ]
    _none(found, "name the fact a stored row needs in suites or result, in its own words")


def _registry() -> dict[str, str]:
    """``cli/registry.py``'s BODIES: command name -> the module its body is in."""
    path = PACKAGE / "cli" / "registry.py"
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "BODIES":
            assert isinstance(node.value, ast.Dict)
            named = {
                ast.literal_eval(k): ast.literal_eval(v)
                for k, v in zip(node.value.keys, node.value.values, strict=True)
                if k is not None
            }
            return {name: target.partition(":")[0] for name, target in named.items()}
    raise AssertionError(f"{path}: no BODIES")


def _declared_commands() -> set[str]:
    """The names of the :class:`archbench.cli.flags.Command` declarations."""
    tree = ast.parse((PACKAGE / "cli" / "flags.py").read_text(encoding="utf-8"))
    return {
        ast.literal_eval(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Command"
    }


def test_command_bodies_live_only_in_cli() -> None:
    bodies = _registry()
    assert set(bodies) == _declared_commands(), "a command without a body, or the reverse"
    found = [f"{name}: {module}" for name, module in bodies.items() if module not in MODULES
             or stage(module) != "archbench.cli"]  # fmt: skip
    # A body takes the command line's settings; nothing outside cli/ does.
    found += [
        f"{path.relative_to(REPO)}:{node.lineno}: {node.name} takes Settings"
        for path in CODE
        if path.is_relative_to(PACKAGE) and stage(module_name(path)) != "archbench.cli"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
        and any(
            a.annotation is not None and "Settings" in ast.unparse(a.annotation)
            for a in node.args.args
        )
    ]
    _none(found)


# --- who knows what -------------------------------------------------------------------


def test_only_tasks_py_knows_invoke() -> None:
    knows = {
        str(p.relative_to(REPO))
        for p in CODE
        for i in IMPORTS[p]
        if i.module.split(".")[0] == "invoke"
    }
    assert sorted(knows) == ["tasks.py"]


def test_the_harness_never_imports_the_host_package_docker_or_pandas() -> None:
    paths = _sources(HARNESS_DIR)
    assert "archbench_harness.py" in {p.name for p in paths}
    found = [str(i) for p in paths for i in imports(p) if i.module.split(".")[0] in HARNESS_NEVER]
    _none(found)


def test_shared_test_paths_are_defined_once_in_helpers() -> None:
    helpers = REPO / "tests" / "helpers.py"
    assert set(_bound(helpers)) >= SHARED_TEST_NAMES
    found = [
        f"{p.relative_to(REPO)}:{node.lineno}: {name}"
        for p in TESTS
        if p != helpers
        for name, node in _bound(p).items()
        if name in SHARED_TEST_NAMES and not isinstance(node, ast.ImportFrom)
    ]
    _none(found, "import them from helpers")
