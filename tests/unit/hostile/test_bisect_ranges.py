"""Bisection refs and repositories, and ranges that are not a line (issue 39, kind 4).

Real git repositories made in a temporary folder: two refs that are one commit (a tag and
its id, full or short), swapped, unrelated or diverged ends, an ambiguous short id, a
shallow clone, a file where a repository should be; each is refused naming the refs the
user gave and what to give instead. A range that is not a line (a branch forked before
good and merged after it, an unrelated history merged in) is bisected as ``git bisect``
reasons: the commit a search narrows to is measured against its own parents, never
against a neighbour measured on another branch, and a commit that only carries its
parent's count, or has no parent, is never said to have moved the row.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import (
    Count,
    Graph,
    Measurement,
    against_parent,
    arch_state,
    next_probe,
)
from archbench.analysis import bisection as bisection_mod
from archbench.cli.bisect import graph_of, outcome_lines, steps_of
from archbench.errors import SourceError
from archbench.report import bisect_moves
from archbench.result import BisectCommit, BisectCount, BisectManifest, BisectStep
from archbench.sources import CommitInfo, commit_range

ARCH = "amd64"


def git(cwd: Path, *args: str) -> str:
    """git in ``cwd`` with a fixed identity and no user or system configuration."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    settings_ = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    done = subprocess.run(
        ["git", *settings_, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(root: Path, count: int, subject: str) -> str:
    """A commit whose row counts ``count`` instructions (its file ``count``)."""
    (root / "count").write_text(f"{count}\n", encoding="utf-8")
    (root / ".version").write_text("0.1.0\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", subject)
    return git(root, "rev-parse", "HEAD")


def merge(root: Path, other: str, count: int, subject: str, *flags: str) -> str:
    """A merge of ``other`` into the branch checked out, its count set to ``count``."""
    git(root, "merge", "-q", "--no-ff", "--no-commit", "-s", "ours", *flags, other)
    return commit(root, count, subject)


def new_repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def count_at(root: Path, sha: str) -> int:
    return int(git(root, "show", f"{sha}:count"))


# ---------------------------------------------------------------- refs and repositories


@pytest.fixture(scope="module")
def line(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """main: c0 (tag v0.1.0) .. c4 (tag v0.1.4); side: forked at c1; lone: no common commit."""
    root = new_repo(tmp_path_factory.mktemp("line") / "repo")
    shas = [commit(root, 100, f"c{i}") for i in range(5)]
    git(root, "tag", "v0.1.0", shas[0])
    git(root, "tag", "-a", "-m", "annotated", "v0.1.4", shas[4])
    git(root, "checkout", "-q", "-b", "side", shas[1])
    commit(root, 100, "side")
    git(root, "checkout", "-q", "--orphan", "lone")
    commit(root, 100, "lone")
    git(root, "checkout", "-q", "main")
    return root, shas


def _refused(root: Path, good: str, bad: str, work: Path) -> str:
    with pytest.raises(SourceError) as info:
        commit_range(f"file://{root}", good, bad, work)
    assert info.value.exit_code == 12
    return str(info.value)


def test_one_commit_named_twice_is_said_to_be_one(
    line: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, shas = line
    for bad in (shas[0], shas[0][:7], "v0.1.0"):
        message = _refused(root, "v0.1.0", bad, tmp_path)
        assert f"--good v0.1.0 and --bad {bad} are the same commit ({shas[0][:12]})" in message


def test_swapped_ends_are_said_to_be_swapped(line: tuple[Path, list[str]], tmp_path: Path) -> None:
    message = _refused(line[0], "v0.1.4", "v0.1.0", tmp_path)
    assert "the ends are swapped; give --good v0.1.0 --bad v0.1.4" in message


def test_unrelated_ends_are_said_to_share_no_commit(
    line: tuple[Path, list[str]], tmp_path: Path
) -> None:
    message = _refused(line[0], "v0.1.0", "lone", tmp_path)
    assert "--good v0.1.0" in message and "--bad lone" in message
    assert "they share no commit (unrelated histories)" in message


def test_diverged_ends_name_their_merge_base(line: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, shas = line
    message = _refused(root, "side", "v0.1.4", tmp_path)
    assert f"they diverged at {shas[1][:12]} (their merge base)" in message
    assert f"give --good {shas[1][:12]}" in message


def test_tag_branch_and_short_ids_name_the_same_range(
    line: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, shas = line
    forms = [("v0.1.0", "v0.1.4"), (shas[0][:7], "main"), (shas[0], shas[4][:10])]
    ranges = [[c.commit for c in commit_range(f"file://{root}", g, b, tmp_path)] for g, b in forms]
    assert ranges[0] == ranges[1] == ranges[2] == shas


def test_an_unknown_ref_and_a_file_are_refused_by_name(
    line: tuple[Path, list[str]], tmp_path: Path
) -> None:
    message = _refused(line[0], "v0.1.0", "v0.1.9", tmp_path)
    assert "ref 'v0.1.9' names no commit there" in message
    assert "did you mean 'v0.1.0'" in message or "v0.1.4" in message
    afile = tmp_path / "repo.git"
    afile.write_text("not a repository")
    assert "a file, not a folder" in _refused(afile, "a", "b", tmp_path)


def test_an_ambiguous_short_id_asks_for_more_digits(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "many")
    # 1200 commits in one git fast-import: some four hex digits begin two commits (about
    # 11 such pairs are expected), the case where git cannot pick one.
    stream = "".join(
        f"commit refs/heads/main\ncommitter t <t@x> {1_700_000_000 + i} +0000\n"
        f"data {len(str(i))}\n{i}\n"
        for i in range(1200)
    )
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=stream, text=True,
                   check=True)  # fmt: skip
    ids = sorted(git(root, "rev-list", "main").split())
    shared = next((a[:4] for a, b in itertools.pairwise(ids) if a[:4] == b[:4]), None)
    if shared is None:  # pragma: no cover - 1200 commits without a 4-digit twin
        pytest.skip("no two commits share four digits")
    message = _refused(root, shared, "main", tmp_path)
    assert f"ref '{shared}' names no commit there" in message
    assert f"objects start with {shared}: give more digits" in message


def test_a_shallow_clone_is_said_to_be_shallow(
    line: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, shas = line
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", "--branch", "main", f"file://{root}", str(shallow))
    message = _refused(shallow, shas[0], "main", tmp_path / "work")
    assert "the repository is shallow (cloned with --depth)" in message


# ---------------------------------------------------------------- ranges that are not a line


def _bisect(root: Path, good: str, bad: str, work: Path) -> BisectManifest:
    """Bisect the row whose count each commit's ``count`` file holds, to the end, as
    ``invoke bisect`` does (its probe order, its records), without building anything."""
    commits = commit_range(f"file://{root}", good, bad, work)
    manifest = _manifest(commits, good, bad)
    graph = graph_of(manifest)
    steps: list[BisectStep] = []
    while (probe := next_probe(graph, [ARCH], steps_of(manifest))) is not None:
        c = manifest.commits[probe.commit]
        assert len(steps) <= 2 * len(commits), "the bisection does not end"
        count = BisectCount(
            arch=ARCH, target="t", run_id=f"r{len(steps)}", instructions=count_at(root, c.commit)
        )
        steps.append(
            BisectStep(
                index=probe.commit,
                commit=c.commit,
                subject=c.subject,
                date=c.date,
                counts=(count,),
                seconds=1.0,
                finished_at="x",
            )
        )
        manifest = manifest.model_copy(update={"steps": tuple(steps)})
    return manifest


def _manifest(commits: list[CommitInfo], good: str, bad: str) -> BisectManifest:
    index = {c.commit: i for i, c in enumerate(commits)}
    return BisectManifest(
        bisect_id="20261207T120000Z-abcdef",
        created_at="x",
        matrix_file="matrix.yml",
        matrix_text="version: 1",
        repository="file:///r",
        good=good,
        bad=bad,
        row="CS signing",
        scheme="CS",
        operation="signing",
        targets={ARCH: "t"},
        commits=tuple(
            BisectCommit(
                commit=c.commit,
                parents=tuple(index[p] for p in c.parents),
                subject=c.subject,
                date=c.date,
                boundary=c.boundary,
                parent_count=c.parent_count,
            )
            for c in commits
        ),
    )


def _outcome(manifest: BisectManifest) -> str:
    graph = graph_of(manifest)
    states = [arch_state(graph, ARCH, steps_of(manifest))]
    return "\n".join(outcome_lines(manifest, states))


def test_a_branch_forked_before_good_carries_its_parents_count_not_a_move(tmp_path: Path) -> None:
    """P(100) → M1(120) → G(120) on main; S1..S6 (100, as P) forked at P, merged after G
    into J (120, main's); X (130) → B. Only X moved the row in good..bad: S1 has its own
    parent P's count, and J its parent G's."""
    root = new_repo(tmp_path / "repo")
    p = commit(root, 100, "P: fork point")
    commit(root, 120, "M1: main moves the row, before good")
    good = commit(root, 120, "G: good")
    git(root, "checkout", "-q", "-b", "side", p)
    side = [commit(root, 100, f"S{i}") for i in range(1, 7)]
    git(root, "checkout", "-q", "main")
    j = merge(root, "side", 120, "J: merge side")
    x = commit(root, 130, "X: moves the row")
    bad = commit(root, 130, "B: bad")
    manifest = _bisect(root, good, bad, tmp_path / "work")
    boundary = [c.commit for c in manifest.commits if c.boundary]
    assert boundary == [p]  # S1's own parent, outside good..bad, kept
    measured = {manifest.commits[s.index].commit for s in manifest.steps}
    assert p in measured and set(side) & measured  # the side branch was probed
    text = _outcome(manifest)
    assert f"first moved at {x}" in text and "(120.0 → 130.0, 1.083×)" in text
    assert f"{side[0][:12]} (S1) has the count of its own parent {p[:12]} (from before good" in text
    assert f"{j[:12]} (J: merge side) has the count of its own parent {good[:12]}" in text
    assert f"first moved at {side[0]}" not in text and f"first moved at {j}" not in text
    # The functions behind a move are taken against the commit's own parent only.
    moves = bisect_moves(manifest, [arch_state(graph_of(manifest), ARCH, steps_of(manifest))],
                         graph_of(manifest), lambda _run, _t: None)  # fmt: skip
    assert [(m.commit, m.neighbour, m.before, m.after) for m in moves] == [(x, j, 120.0, 130.0)]


def test_an_unrelated_history_merged_in_has_no_parent_to_move_from(tmp_path: Path) -> None:
    """G(100) → H(100); R1..R6 (200) a history of their own, merged into J (100); X (90)."""
    root = new_repo(tmp_path / "repo")
    good = commit(root, 100, "G: good")
    commit(root, 100, "H")
    git(root, "checkout", "-q", "--orphan", "other")
    git(root, "rm", "-q", "-rf", ".")
    foreign = [commit(root, 200, f"R{i}") for i in range(1, 7)]
    git(root, "checkout", "-q", "main")
    merge(root, "other", 100, "J: merge other", "--allow-unrelated-histories")
    x = commit(root, 90, "X: moves the row")
    bad = commit(root, 90, "B: bad")
    # git bisect's own order (no commit built last to stay near), which probes into the
    # foreign history here; the order near the last build reaches X without entering it.
    with mock.patch.object(bisection_mod, "last_built", return_value=None):
        manifest = _bisect(root, good, bad, tmp_path / "work")
    near = _bisect(root, good, bad, tmp_path / "work-near")
    assert f"first moved at {x}" in _outcome(near) and "no parent" not in _outcome(near)
    roots = [c.commit for c in manifest.commits[1:] if c.parent_count == 0]
    assert roots == [foreign[0]]
    text = _outcome(manifest)
    assert f"first moved at {x}" in text
    assert f"first moved at {foreign[0]}" not in text
    assert {s.commit for s in manifest.steps} >= {foreign[0], foreign[4]}  # R5 split it
    assert f"{foreign[0][:12]} (R1) has no parent (a history of its own" in text
    assert "moved in 3 commits" not in text  # one move: X


def test_a_line_costs_no_probe_more_than_before(tmp_path: Path) -> None:
    """On a line the parent of the commit found is always measured already."""
    root = new_repo(tmp_path / "repo")
    shas = [commit(root, 100 if i < 9 else 111, f"c{i}") for i in range(20)]
    manifest = _bisect(root, shas[0], shas[-1], tmp_path / "work")
    assert not any(c.boundary for c in manifest.commits)
    assert len(manifest.steps) == 2 + 5  # the ends, then ceil(log2(19)) probes
    assert f"first moved at {shas[9]}" in _outcome(manifest)


def test_a_record_without_parent_counts_reads_as_before() -> None:
    """A bisect.json written before parents were counted: no own-parent check, no probe."""
    graph = Graph.linear(5)
    assert not graph.complete
    steps: list[tuple[int, Measurement]] = [(0, {ARCH: Count(1.0)}), (4, {ARCH: Count(2.0)})]
    assert against_parent(graph, ARCH, steps, 4).verdict == "unchecked"


@st.composite
def histories(draw: st.DrawFn) -> tuple[Graph, dict[int, float]]:
    """A commit graph as commit_range makes it (good, boundary parents, the range with
    merges and roots, bad joining every tip) and each commit's count: a commit keeps its
    first parent's count or moves to another level; roots and boundary commits draw one."""
    n_boundary = draw(st.integers(0, 3))
    n_range = draw(st.integers(2, 24))
    parents: list[tuple[int, ...]] = [() for _ in range(1 + n_boundary)]
    roots: set[int] = set()
    for i in range(1 + n_boundary, 1 + n_boundary + n_range):
        kind = draw(st.sampled_from(["one", "one", "one", "merge", "root"]))
        if kind == "root" and i > 1 + n_boundary:
            parents.append(())
            roots.add(i)
            continue
        first = draw(st.integers(0, i - 1))
        if kind == "merge":
            second = draw(st.integers(0, i - 1))
            parents.append((first, second) if second != first else (first,))
        else:
            parents.append((first,))
    has_child = {p for ps in parents for p in ps}
    tips = tuple(i for i in range(len(parents)) if i not in has_child)
    parents.append(tips if tips else (len(parents) - 1,))
    levels: dict[int, float] = {}
    for i, ps in enumerate(parents):
        if not ps:
            levels[i] = float(draw(st.sampled_from([100, 120, 150])))
        elif draw(st.integers(0, 4)) == 0:
            levels[i] = float(draw(st.sampled_from([100, 120, 150, 200])))
        else:
            levels[i] = levels[ps[0]]
    graph = Graph(
        tuple(parents),
        boundary=frozenset(range(1, 1 + n_boundary)),
        roots=frozenset(roots),
        complete=True,
    )
    return graph, levels


def _run(graph: Graph, levels: Mapping[int, float]) -> list[tuple[int, Measurement]]:
    steps: list[tuple[int, Measurement]] = []
    while (probe := next_probe(graph, [ARCH], steps)) is not None:
        assert len(steps) <= 3 * len(graph.parents), "the bisection does not end"
        steps.append((probe.commit, {ARCH: Count(levels[probe.commit])}))
    return steps


@given(histories())
@settings(max_examples=150, deadline=None)
def test_every_move_said_is_a_move_against_the_commits_own_parents(
    history: tuple[Graph, dict[int, float]],
) -> None:
    graph, levels = history
    steps = _run(graph, levels)
    probed = {c for c, _m in steps}
    state = arch_state(graph, ARCH, steps)
    for s in state.searches:
        assert s.done
        if not s.exact:
            continue
        own = against_parent(graph, ARCH, steps, s.bad)
        assert own.verdict in ("moved", "inherited", "root")  # every parent was measured
        ps = graph.parents[s.bad]
        assert set(ps) <= probed
        if own.verdict == "moved":
            # Its count differs from each of its own parents', and the count before the
            # move is its first parent's: never a neighbour on another branch.
            assert all(levels[p] != levels[s.bad] for p in ps)
            assert own.parent == ps[0]
        elif own.verdict == "inherited":
            assert own.parent in ps and levels[own.parent] == levels[s.bad]
        else:
            assert s.bad in graph.roots and not ps
    # Boundary commits are ancestors of good: never candidates, measured only as parents.
    for b in graph.boundary & probed:
        assert any(b in graph.parents[s.bad] for s in state.searches if s.exact)
