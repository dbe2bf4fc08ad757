"""The bisection logic of ``invoke bisect`` (archbench.analysis.bisection) on simulated rows.

A simulated row's count at a commit is a level set by the "moving" commits among its
ancestors; commits that "do not build" give no count. The properties checked are what
the bisection promises: every move found at its commit when nothing is skipped, in
O(log n) probes per move; a move next to skipped commits reported as the range that
holds it; a row that never moves settled by the two ends alone.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

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
    same_level,
    stored_count,
)
from archbench.cli.bisect import graph_of, steps_of
from archbench.errors import ResultsError
from archbench.result import BisectManifest, ResultStore

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


# --- exact+extra rows: the blocks a step keeps -----------------------------------------

GOOD_BLOCKS = (158_856, 118_266, 158_856)
"""CS signing at 2 operations a block: a constant path plus libgcrypt's pool mix (40,590
instructions) in some blocks (docs/counting.md): exact+extra."""


def _record(blocks: dict[int, tuple[int, ...]], *, keep_blocks: bool) -> dict[str, object]:
    """A stored bisect.json of a 3-commit line, as a JSON object; ``keep_blocks`` False
    writes it as records were written before steps kept their blocks."""
    from archbench.analysis import median_per_op, spread

    commits = [
        {"commit": f"{i + 1:x}" * 40, "parents": [i - 1] if i else [], "subject": f"c{i}",
         "date": "2026-01-01"}
        for i in range(3)
    ]  # fmt: skip
    steps = []
    for k, (i, b) in enumerate(blocks.items()):
        count: dict[str, object] = {
            "arch": "amd64", "target": "ci-amd64", "run_id": f"2026120{k + 1}T000000Z-aaaaaa",
            "instructions": median_per_op(b, 2), "spread": spread(b),
        }  # fmt: skip
        if keep_blocks:
            count |= {"blocks": list(b), "ops_per_block": 2}
        steps.append(
            {"index": i, "commit": commits[i]["commit"], "subject": f"c{i}",
             "date": "2026-01-01", "counts": [count], "seconds": 1.0,
             "finished_at": "2026-01-01T00:00:00Z"}
        )  # fmt: skip
    return {
        "format": "archbench-bisect", "version": 1, "bisect_id": "20261203T000000Z-bbbbbb",
        "created_at": "2026-12-03T00:00:00Z", "matrix_file": "matrix.yml",
        "matrix_text": "version: 1\n", "repository": "file:///srv/gnunet.git",
        "good": "v0.22.2", "bad": "bisect-test", "row": "CS signing", "scheme": "CS",
        "operation": "signing", "targets": {"amd64": "ci-amd64"}, "commits": commits,
        "steps": steps,
    }  # fmt: skip


def _stored(tmp_path: Path, record: dict[str, object]) -> BisectManifest:
    folder = tmp_path / str(record["bisect_id"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bisect.json").write_text(json.dumps(record))
    return ResultStore(tmp_path).load_bisect(str(record["bisect_id"]))


def test_an_exact_extra_row_is_bisected_on_its_constant(tmp_path: Path) -> None:
    moved = tuple(x + 400 for x in GOOD_BLOCKS)  # +200 per operation: +0.34 % of the constant
    same = (118_266, 118_266, 158_856)  # the mixes fell elsewhere: the same constant
    manifest = _stored(tmp_path, _record({0: GOOD_BLOCKS, 2: moved, 1: same}, keep_blocks=True))
    steps = steps_of(manifest)
    ends = [m["amd64"] for _, m in steps]
    assert all(c is not None and c.blocks for c in ends)
    state = arch_state(graph_of(manifest), "amd64", steps)
    # Read by their range (±25 %: "random") the ends were one level and the move was lost;
    # on the constant they differ by 0.34 %, and commit 1 is at the good one.
    assert state.status == "moved" and [s.bad for s in state.searches] == [2]
    assert state.searches[0].exact


def test_an_old_record_without_blocks_loads_and_reads_as_it_did(tmp_path: Path) -> None:
    moved = tuple(x + 400 for x in GOOD_BLOCKS)
    manifest = _stored(tmp_path, _record({0: GOOD_BLOCKS, 2: moved}, keep_blocks=False))
    steps = steps_of(manifest)
    assert all(c is not None and not c.blocks for _, m in steps for c in m.values())
    # Its counts have only their median and range: a range of ±25 % is random, as before.
    assert arch_state(graph_of(manifest), "amd64", steps).status == "no move"
    # A resumed old record gains steps with blocks; a pair with a side without blocks is
    # still read by the range (nothing is decided from blocks one side lacks).
    good = stored_count(manifest.steps[0].counts[0])
    assert good is not None
    newer = Count(good.value, good.spread, moved, 2)
    assert same_level(good, newer)
    assert not same_level(Count(good.value, good.spread, GOOD_BLOCKS, 2), newer)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"instructions": 60_000.0}, "is not the median of its blocks"),
        ({"ops_per_block": 0}, "operations per block >= 1"),
        ({"blocks": [-1, 5, 5]}, "counts >= 0"),
    ],
)
def test_an_edited_count_is_refused_with_the_file_named(
    tmp_path: Path, edit: dict[str, object], message: str
) -> None:
    record = _record({0: GOOD_BLOCKS, 2: GOOD_BLOCKS}, keep_blocks=True)
    steps = record["steps"]
    assert isinstance(steps, list)
    steps[1]["counts"][0] |= edit
    with pytest.raises(ResultsError, match="unreadable bisection") as got:
        _stored(tmp_path, record)
    assert message in str(got.value) and "bisect.json" in str(got.value)
