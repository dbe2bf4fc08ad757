"""``invoke bisect --metric time`` builds each end once per bisection: a later step's run
of an end is given the libgnunetutil built for it before (its packed prefix), so that only
the probe is built (issue 37, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CI_MATRIX

from archbench.cli import bisect_time
from archbench.images import GnunetBuild
from archbench.matrix import GnunetGit, load
from archbench.platforms import Arch
from archbench.result import ResultStore
from archbench.run import Workspace, plan
from archbench.sources import ContextFile, ResolvedSource

RESOLVED = ResolvedSource(kind="git", commit="a" * 40, version="0.22.0")


@pytest.fixture(autouse=True)
def _no_kept_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bisect_time, "_END_BUILDS", {})


def _version(tmp_path: Path, index: int, run_id: str) -> bisect_time._Version:
    m = load(CI_MATRIX)
    plans = plan(
        m,
        m.select(["ci-amd64"]),
        {"local": Arch.AMD64},
        suites=["blindsig"],
        metrics=("time",),
        gnunet=GnunetGit(git="file:///srv/gnunet.git", ref="a" * 40),
    )
    ws = Workspace(store=ResultStore(tmp_path / "results"), run_id=run_id, work_dir=tmp_path)
    return bisect_time._Version(index, run_id, plans, ws)


def _built(tmp_path: Path, name: str = "p.tar") -> GnunetBuild:
    prefix = tmp_path / name
    prefix.write_bytes(b"prefix")
    tree = tmp_path / "tree.tar"
    tree.write_bytes(b"tree")
    return GnunetBuild(
        RESOLVED,
        ContextFile(tree, 4),
        prefix=ContextFile(prefix, 6),
        incremental={"build_mode": "incremental", "build_seconds": "21.0"},
    )


def test_an_end_built_once_is_given_to_the_next_steps_run_with_its_origin(
    tmp_path: Path,
) -> None:
    first = _version(tmp_path, 0, "run-1")
    bisect_time._reuse_end("b1", first)  # nothing kept yet: the run builds
    assert first.workspace.gnunet_builds == {}
    built = _built(tmp_path)
    first.workspace.gnunet_builds["ci-amd64"] = built
    bisect_time._keep_end("b1", first)

    later = _version(tmp_path, 0, "run-2")
    bisect_time._reuse_end("b1", later)
    given = later.workspace.gnunet_builds["ci-amd64"]
    assert given.prefix == built.prefix and given.resolved == built.resolved
    # The provenance still says how it was built, and which run built it.
    assert given.incremental == {
        "build_mode": "incremental",
        "build_seconds": "21.0",
        "build_reused_from_run": "run-1",
    }
    # Another end, another bisection: nothing given.
    other = _version(tmp_path, 7, "run-3")
    bisect_time._reuse_end("b1", other)
    assert other.workspace.gnunet_builds == {}
    elsewhere = _version(tmp_path, 0, "run-4")
    bisect_time._reuse_end("b2", elsewhere)
    assert elsewhere.workspace.gnunet_builds == {}


def test_the_first_build_is_kept_and_a_missing_prefix_is_built_again(tmp_path: Path) -> None:
    first = _version(tmp_path, 5, "run-1")
    first.workspace.gnunet_builds["ci-amd64"] = _built(tmp_path, "one.tar")
    bisect_time._keep_end("b1", first)
    # A later run given it keeps the first record, not its own copy.
    again = _version(tmp_path, 5, "run-2")
    again.workspace.gnunet_builds["ci-amd64"] = _built(tmp_path, "two.tar")
    bisect_time._keep_end("b1", again)
    assert bisect_time._END_BUILDS[("b1", "ci-amd64", 5)][0] == "run-1"
    # A build inside docker build (no prefix) is not kept.
    plain = _version(tmp_path, 6, "run-3")
    plain.workspace.gnunet_builds["ci-amd64"] = GnunetBuild(RESOLVED, ContextFile(tmp_path, 0))
    bisect_time._keep_end("b1", plain)
    assert ("b1", "ci-amd64", 6) not in bisect_time._END_BUILDS
    # The packed prefix evicted from the work folder: the end is built again.
    (tmp_path / "one.tar").unlink()
    later = _version(tmp_path, 5, "run-4")
    bisect_time._reuse_end("b1", later)
    assert later.workspace.gnunet_builds == {}
