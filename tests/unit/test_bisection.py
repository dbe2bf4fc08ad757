"""The bisection logic of ``invoke bisect`` (archbench.analysis.bisection) on simulated rows.

A simulated row's count at a commit is a level set by the "moving" commits among its
ancestors; commits that "do not build" give no count. The properties checked are what
the bisection promises: every move found at its commit when nothing is skipped, in
O(log n) probes per move; a move next to skipped commits reported as the range that
holds it; a row that never moves settled by the two ends alone.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import (
    Count,
    Graph,
    Measurement,
    arch_state,
    next_probe,
    remaining_probes,
)

BASE = 48_911.0
"""CS signing's instructions per operation on riscv64, 0.27.0 (any positive value does)."""


def _simulate(
    graph: Graph,
    moves: dict[str, list[int]],
    skipped: frozenset[int] = frozenset(),
    factor: float = 1.25,
) -> tuple[list[tuple[int, Measurement]], int]:
    """Run the bisection to its end; moves: arch -> the commits that each raise the count
    by ``factor``. Returns the steps and the number of probes."""
    anc = graph.ancestors
    steps: list[tuple[int, Measurement]] = []
    probes = 0
    archs = sorted(moves)
    while (probe := next_probe(graph, archs, steps)) is not None:
        probes += 1
        assert probes <= 10 * graph.bad + 10, "the bisection does not end"
        measured: dict[str, Count | None] = {}
        for arch in probe.archs:
            if probe.commit in skipped:
                measured[arch] = None
                continue
            ups = sum(1 for m in moves[arch] if (anc[probe.commit] >> m) & 1)
            measured[arch] = Count(BASE * factor**ups)
        steps.append((probe.commit, measured))
    return steps, probes


@given(n=st.integers(2, 400), data=st.data())
@settings(max_examples=120, deadline=None)
def test_one_move_on_a_chain_is_found_at_its_commit_in_log_n_probes(
    n: int, data: st.DataObject
) -> None:
    move = data.draw(st.integers(1, n - 1))
    graph = Graph.linear(n)
    steps, probes = _simulate(graph, {"riscv64": [move]})
    state = arch_state(graph, "riscv64", steps)
    assert state.status == "moved" and state.done
    (search,) = state.searches
    assert search.exact and search.bad == move
    assert probes <= 2 + math.ceil(math.log2(n)) + 1


@given(n=st.integers(4, 300), data=st.data())
@settings(max_examples=100, deadline=None)
def test_several_moves_are_each_found_exactly(n: int, data: st.DataObject) -> None:
    moves = sorted(data.draw(st.sets(st.integers(1, n - 1), min_size=2, max_size=4)))
    graph = Graph.linear(n)
    steps, probes = _simulate(graph, {"armv7": moves})
    state = arch_state(graph, "armv7", steps)
    assert state.status == "moved"
    assert [s.bad for s in state.searches] == moves
    assert all(s.exact for s in state.searches)
    assert probes <= 2 + len(moves) * (math.ceil(math.log2(n)) + 1)


@given(n=st.integers(2, 300), data=st.data())
@settings(max_examples=60, deadline=None)
def test_a_row_that_never_moves_needs_only_the_two_ends(n: int, data: st.DataObject) -> None:
    graph = Graph.linear(n)
    steps, probes = _simulate(graph, {"amd64": []})
    assert probes == 2
    assert arch_state(graph, "amd64", steps).status == "no move"
    assert next_probe(graph, ["amd64"], steps) is None
    assert remaining_probes(graph, ["amd64"], steps) == 0


@given(n=st.integers(3, 200), data=st.data())
@settings(max_examples=150, deadline=None)
def test_skipped_commits_leave_the_move_in_a_range_of_skipped_commits(
    n: int, data: st.DataObject
) -> None:
    move = data.draw(st.integers(1, n - 1))
    skipped = frozenset(data.draw(st.sets(st.integers(1, n - 2), max_size=n // 2)))
    graph = Graph.linear(n)
    steps, _ = _simulate(graph, {"amd64": [move]}, skipped)
    state = arch_state(graph, "amd64", steps)
    (search,) = state.searches
    assert search.done and move in search.range
    # Everything in the range but its last commit did not build: that is why it stays.
    assert set(search.range[:-1]) <= skipped
    # Exact unless the move's commit or the one before it did not build.
    assert search.exact == (move not in skipped and move - 1 not in skipped)
    # A skipped commit is never probed twice.
    probed = [c for c, _ in steps]
    assert len(probed) == len(set(probed))


def test_a_move_behind_a_commit_that_does_not_build_is_a_range_of_two() -> None:
    graph = Graph.linear(10)
    steps, _ = _simulate(graph, {"amd64": [5]}, frozenset({4}))
    (search,) = arch_state(graph, "amd64", steps).searches
    assert search.range == (4, 5) and not search.exact and search.skipped == {4}


@given(n=st.integers(3, 120), data=st.data())
@settings(max_examples=120, deadline=None)
def test_a_move_in_a_graph_with_merges_is_found_at_its_commit(n: int, data: st.DataObject) -> None:
    # Commit i's first parent is i - 1 (so every commit is an ancestor of the last);
    # some get a second parent further back, as merges of side branches do.
    parents: list[tuple[int, ...]] = [()]
    for i in range(1, n):
        merged = data.draw(st.sets(st.integers(0, i - 2), max_size=1)) if i >= 2 else set()
        parents.append((i - 1, *sorted(merged)))
    graph = Graph(tuple(parents))
    move = data.draw(st.integers(1, n - 1))
    steps, probes = _simulate(graph, {"amd64": [move], "riscv64": [move]})
    for arch in ("amd64", "riscv64"):
        (search,) = arch_state(graph, arch, steps).searches
        assert search.exact and search.bad == move
    # The two architectures share every probe (one commit, both measured).
    assert all(set(m) == {"amd64", "riscv64"} for _, m in steps)
    assert probes <= 2 + math.ceil(math.log2(n)) + 2


def test_architectures_that_move_in_different_commits_are_bisected_apart() -> None:
    graph = Graph.linear(64)
    steps, _ = _simulate(graph, {"amd64": [10], "armv7": [40], "riscv64": []})
    assert [s.bad for s in arch_state(graph, "amd64", steps).searches] == [10]
    assert [s.bad for s in arch_state(graph, "armv7", steps).searches] == [40]
    assert arch_state(graph, "riscv64", steps).status == "no move"


def test_an_end_that_does_not_build_fails_that_architecture() -> None:
    graph = Graph.linear(8)
    steps: list[tuple[int, Measurement]] = [(0, {"amd64": None}), (7, {"amd64": Count(5.0)})]
    assert arch_state(graph, "amd64", steps).status == "failed"
    assert next_probe(graph, ["amd64"], steps) is None


def test_counts_within_their_spread_are_one_level() -> None:
    graph = Graph.linear(8)
    steps: list[tuple[int, Measurement]] = [
        (0, {"amd64": Count(1000.0, 0.02)}),
        (7, {"amd64": Count(1010.0, 0.0)}),
    ]
    assert arch_state(graph, "amd64", steps).status == "no move"


@pytest.mark.parametrize(
    ("parents", "message"),
    [
        (((),), "2 to"),
        (((), (1,)), "not an earlier commit"),
        (((), (0,), (0,)), "ancestor of the last"),
    ],
)
def test_a_malformed_graph_is_refused(parents: tuple[tuple[int, ...], ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Graph(parents)
