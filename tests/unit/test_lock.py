"""The virtualenv's lock files (requirements/*.lock, written by scripts/lock.sh) agree
with pyproject.toml: every declared dependency is pinned there, at a version its
specifier admits, with hashes; a dependency added without refreshing the lock fails here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from helpers import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)(?: ; ([^\\]+?))? \\$", re.MULTILINE)


def pins(lock: Path) -> dict[str, list[tuple[Version, str]]]:
    """``{name: [(version, marker), …]}`` of a uv ``--universal`` lock file."""
    found: dict[str, list[tuple[Version, str]]] = {}
    for name, version, marker in PIN.findall(lock.read_text(encoding="utf-8")):
        found.setdefault(canonicalize_name(name), []).append((Version(version), marker))
    return found


def declared(extra: str | None) -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    if extra:
        reqs += [Requirement(r) for r in project["optional-dependencies"][extra]]
    build = REPO / "requirements" / "build.in"
    reqs += [
        Requirement(line)
        for line in build.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return reqs


@pytest.mark.parametrize(("lock", "extra"), [("main.lock", None), ("dev.lock", "dev")])
def test_every_declared_dependency_is_pinned_at_an_admitted_version(
    lock: str, extra: str | None
) -> None:
    locked = pins(REPO / "requirements" / lock)
    for req in declared(extra):
        name = canonicalize_name(req.name)
        assert name in locked, f"{name} is in pyproject.toml, not in {lock}: bash scripts/lock.sh"
        for version, _marker in locked[name]:
            assert req.specifier.contains(version, prereleases=True), (
                f"{lock} pins {name}=={version}, outside {req.specifier}: bash scripts/lock.sh"
            )


def test_every_pin_carries_hashes_and_main_is_within_dev() -> None:
    for lock in ("main.lock", "dev.lock"):
        text = (REPO / "requirements" / lock).read_text(encoding="utf-8")
        blocks = re.split(r"\n(?=[A-Za-z0-9_.-]+==)", text.split("\n", 2)[2])
        assert len(blocks) > 20
        for block in blocks:
            assert "--hash=sha256:" in block, f"{lock}: {block.splitlines()[0]} has no hash"
    main, dev = pins(REPO / "requirements/main.lock"), pins(REPO / "requirements/dev.lock")
    # The dev lock is a superset: a test run uses what the first command uses.
    assert {n: v for n, v in dev.items() if n in main} == main
