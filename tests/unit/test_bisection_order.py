"""The probe order of ``invoke bisect`` (archbench.analysis.bisection.next_probe): near the
commit built last, never at the cost of a step.

Among the probes that leave as few steps at worst as ``git bisect``'s halving point, the
one nearest the commit built last is taken (the incremental build tree then recompiles
less). Checked here against plain bisection (the same function with no commit built last)
on every monotone good/bad assignment of a line, and on graphs with merges for every
commit as the first bad one: the same commit found, and never more probes at worst.
"""

from __future__ import annotations

import math
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import Count, Graph, Measurement, arch_state, next_probe
from archbench.analysis import bisection as bisection_mod
from archbench.analysis.bisection import _below, last_built

BASE = 79_498.0
"""CS signing's instructions per operation on amd64 at v0.21.2 (any positive value does)."""


def _bisect(graph: Graph, first_bad: int, *, plain: bool = False) -> tuple[int, list[int]]:
    """Bisect a row that moves at ``first_bad`` (bad: it and its descendants); the commit
    found and the probes after the two ends. ``plain``: no commit counts as built last."""
    anc = graph.ancestors
    steps: list[tuple[int, Measurement]] = []
    with mock.patch.object(bisection_mod, "last_built", return_value=None) if plain else (
        mock.patch.object(bisection_mod, "last_built", wraps=last_built)
    ):  # fmt: skip
        while (probe := next_probe(graph, ["amd64"], steps)) is not None:
            assert len(steps) <= graph.bad + 2, "the bisection does not end"
            bad = (anc[probe.commit] >> first_bad) & 1
            steps.append((probe.commit, {"amd64": Count(BASE * (1.5 if bad else 1.0))}))
    (search,) = arch_state(graph, "amd64", steps).searches
    assert search.exact
    return search.bad, [c for c, _ in steps[2:]]


@given(n=st.integers(2, 100))
@settings(max_examples=30, deadline=None)
def test_on_a_line_every_assignment_is_found_in_no_more_probes_than_plain_bisection(
    n: int,
) -> None:
    graph = Graph.linear(n)
    worst = 0
    for first_bad in range(1, n):
        found, probes = _bisect(graph, first_bad)
        assert found == first_bad
        worst = max(worst, len(probes))
    plain_worst = max(len(_bisect(graph, f, plain=True)[1]) for f in range(1, n))
    assert worst <= plain_worst == math.ceil(math.log2(n - 1))


@given(n=st.integers(3, 40), data=st.data())
@settings(max_examples=60, deadline=None)
def test_with_merges_every_first_bad_commit_is_found_in_no_more_probes_at_worst(
    n: int, data: st.DataObject
) -> None:
    # Commit i's first parent is i - 1 (every commit an ancestor of the last); some get a
    # second parent further back, as merges of side branches do.
    parents: list[tuple[int, ...]] = [()]
    for i in range(1, n):
        merged = data.draw(st.sets(st.integers(0, i - 2), max_size=1)) if i >= 2 else set()
        parents.append((i - 1, *sorted(merged)))
    graph = Graph(tuple(parents))
    near, plain = [], []
    for first_bad in range(1, n):
        found, probes = _bisect(graph, first_bad)
        assert found == first_bad
        near.append(len(probes))
        plain.append(len(_bisect(graph, first_bad, plain=True)[1]))
    assert max(near) <= max(plain)


def test_a_probe_next_to_the_commit_built_last_is_taken_when_it_costs_no_step() -> None:
    # 372 candidates after good (as v0.21.2..v0.22.2): plain bisection halves at 186;
    # 8 probes at worst either way, so after bad (371) was built the probe moves next
    # to it, as far as leaves 256 candidates at worst (2**8).
    graph = Graph.linear(373)
    steps: list[tuple[int, Measurement]] = [(0, {"amd64": Count(BASE)})]
    steps.append((372, {"amd64": Count(BASE / 2)}))
    probe = next_probe(graph, ["amd64"], steps)
    assert probe is not None and probe.commit == 256
    # A power of two leaves no choice: the midpoint.
    graph = Graph.linear(257)
    probe = next_probe(graph, ["amd64"], [(0, {"amd64": Count(BASE)}), (256, {"amd64": None})])
    assert probe is None  # bad did not build: that architecture failed
    steps = [(0, {"amd64": Count(BASE)}), (256, {"amd64": Count(BASE / 2)})]
    probe = next_probe(graph, ["amd64"], steps)
    assert probe is not None and probe.commit == 128


def test_the_commit_built_last_is_the_last_that_gave_a_count() -> None:
    assert last_built([]) is None
    steps: list[tuple[int, Measurement]] = [
        (0, {"amd64": Count(BASE)}),
        (9, {"amd64": Count(BASE)}),
        (4, {"amd64": None}),
    ]
    assert last_built(steps) == 9
    assert last_built([*steps, (5, {"amd64": None, "riscv64": Count(BASE)})]) == 5


def _branching(n: int, data: st.DataObject) -> Graph:
    """A graph of ``n`` commits whose commits fork from any earlier one and merge one or
    two earlier ones (side branches, not only a first-parent line), the last merging every
    tip so that all are its ancestors."""
    parents: list[tuple[int, ...]] = [()]
    for i in range(1, n - 1):
        chosen = data.draw(st.sets(st.integers(0, i - 1), min_size=1, max_size=2))
        parents.append(tuple(sorted(chosen)))
    children = {p for ps in parents for p in ps}
    parents.append(tuple(i for i in range(n - 1) if i not in children) or (n - 2,))
    return Graph(tuple(parents))


def _reference_probe(graph: Graph, steps: list[tuple[int, Measurement]]) -> int | None:
    """The probe choice as it was specified before it was made linear: every probeable
    candidate's ancestors among the candidates counted from its ancestor set; the best
    halving (ties: the earlier commit), then among those leaving as few steps at worst,
    the one nearest the commit built last (ties: the better halving, the earlier)."""
    state = arch_state(graph, "amd64", steps)
    open_searches = [s for s in state.searches if not s.done]
    if not open_searches:
        return None
    widest = max(open_searches, key=lambda s: (bin(s.candidates).count("1"), -s.bad))
    total = bin(widest.candidates).count("1")

    def score(c: int) -> int:
        below = bin(graph.ancestors[c] & widest.candidates).count("1")
        return min(below, total - below)

    def left(c: int) -> int:
        return max(total - score(c) - 1, 0).bit_length()

    best = max(widest.probeable, key=lambda c: (score(c), -c))
    near = last_built(steps)
    if near is None:
        return best
    return min(
        (c for c in widest.probeable if left(c) <= left(best)),
        key=lambda c: (abs(c - near), -score(c), c),
    )


@given(n=st.integers(3, 60), data=st.data())
@settings(max_examples=80, deadline=None)
def test_the_linear_probe_choice_is_the_one_specified(n: int, data: st.DataObject) -> None:
    # Graphs with branches and merges, bisected with counts drawn at random (good, bad, a
    # third level or a skip): at every step the probe is the one the per-commit ancestor
    # count chose.
    graph = _branching(n, data)
    steps: list[tuple[int, Measurement]] = []
    levels = st.sampled_from([BASE, BASE * 1.5, BASE * 2.0, None])
    while (probe := next_probe(graph, ["amd64"], steps)) is not None:
        assert len(steps) <= 2 * n + 2, "the bisection does not end"
        inner = probe.commit not in (0, graph.bad) and len(steps) >= 2
        if inner and arch_state(graph, "amd64", steps).status == "moved":
            assert probe.commit == _reference_probe(graph, steps)
        level = data.draw(levels) if probe.commit not in (0, graph.bad) else None
        if probe.commit == 0:
            level = BASE
        elif probe.commit == graph.bad:
            level = BASE * 2.0
        steps.append((probe.commit, {"amd64": None if level is None else Count(level)}))


@given(n=st.integers(2, 80), data=st.data())
@settings(max_examples=80, deadline=None)
def test_ancestors_among_the_candidates_are_counted_in_one_pass(
    n: int, data: st.DataObject
) -> None:
    graph = _branching(n, data)
    goods = tuple(data.draw(st.sets(st.integers(0, n - 2), min_size=1, max_size=4)))
    bad = graph.bad
    candidates = graph.ancestors[bad]
    for g in goods:
        candidates &= ~graph.ancestors[g]
    got = _below(graph, bisection_mod.Search("amd64", goods, bad, candidates))
    for c in range(min(got), bad + 1):
        assert got[c] == bin(graph.ancestors[c] & candidates).count("1"), c
