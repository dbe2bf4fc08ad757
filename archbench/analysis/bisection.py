"""Exact bisection of a row's instruction count over a commit graph (``invoke bisect``).

Instruction counts are exact and repeat from run to run (same binary, same QEMU CPU
model, fixed inputs), so one count per commit decides whether a row moved: the
verdict of two counts is :func:`archbench.analysis.comparison.count_change`, the one
rule ``invoke compare``, ``history`` and the gate use (by the row's kind: an
``exact+extra`` row on its constant, from the blocks each count keeps). That makes a
bisection on counts exact where asv's ``find`` and the Phoronix
Test Suite's bisect work on noisy times.

The graph is the commits between ``good`` and ``bad`` as git sees them
(``git rev-list good..bad`` with parents, plus ``good``): :class:`Graph`. Nothing here
runs git or a container; the caller measures the :class:`Probe` that
:func:`next_probe` asks for and records it, and :func:`searches` tells, from the
measurements alone (in the order they were taken), what is known. So a bisection
resumes from its stored steps by replaying them.

Per architecture the measurements define **searches**, as ``git bisect`` keeps one:
the candidates are the ancestors of the search's ``bad`` commit (inclusive) that are
not ancestors of any of its ``good`` commits. A measured candidate

* at the good level (no significant change to the good commit's count) becomes good:
  its ancestors leave the candidates;
* at the bad level becomes the new ``bad``: the candidates shrink to its ancestors;
* at a third level shows that the row moved in **several** commits: the search splits
  into one from the good level to this commit and one from this commit to the bad
  level, each bisected on (so every move is found, each in O(log n) builds);
* that did not build or run is skipped, as ``git bisect skip`` does: it stays a
  candidate but is never probed again on that architecture.

A search is **done** when its candidates other than ``bad`` are all skipped: with none,
``bad`` is the commit that moved the row (exact); else the move lies among the
remaining candidates, which are reported as the range that could not be split. The
next probe is the commit that best halves the largest open search (the ``git bisect``
rule: maximise ``min(ancestors among the candidates, the rest)``), measured on every
architecture with an open search that contains it.

**A move is measured against the commit's own parents**, as ``git bisect`` reasons (a
commit is the first bad one when it is bad and its parents are good), never against a
measured neighbour on another branch. A range is not always a line: a branch forked
before ``good`` and merged after it has commits whose parent lies outside
``good..bad``, and a merge of an unrelated history brings commits without any parent.
So the graph holds those outside parents too (:attr:`Graph.boundary`: never candidates,
measured only as a parent) and knows the commits with no parent (:attr:`Graph.roots`).
When a search narrows to one commit, its parents are measured where they were not
(:func:`next_probe`), and :func:`against_parent` says what the commit did: moved the row
(its count differs from every parent's), only carried a parent's count (a branch that
kept the level from before ``good``: no move in the range), or started a history of its
own (no parent to move from). A record made before parents were kept
(:attr:`Graph.complete` False) is read as before.

Graph sizes are small (hundreds of commits), so ancestor sets are Python integers used
as bit sets.

**Time** (``--metric time``, native targets only) has no level a single run can give:
a commit's time means something only against the ends measured beside it. The bad end
is timed in interleaved rounds with the good one, a probe in rounds with both, and each
ratio gets the Student-t interval of the per-round log ratios and the verdict
``invoke compare`` gives (:func:`archbench.analysis.rounds.round_t_interval`,
:func:`archbench.analysis.comparison.verdict`). :func:`time_move` says whether bad
moved from good, :func:`time_end` also whether its rounds can tell yet (an undecided end
gets more rounds, and is never taken as "no move"); :func:`time_decision` whether a probe
is like good, like bad or undecided; :func:`time_level` turns that into the
:class:`Count` the graph logic above replays (good 1, bad its ratio to good, undecided
None: skipped, so the commit stays in the range a bisection reports as not split, never
taken as a verdict).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from archbench.analysis.comparison import (
    DEFAULT_THRESHOLD,
    count_change,
    verdict,
)
from archbench.analysis.counting import Count
from archbench.analysis.rounds import TInterval
from archbench.analysis.stats import DEFAULT_CONFIDENCE
from archbench.result import BisectCount

MAX_COMMITS: Final = 20_000
"""The largest graph bisected (GNUnet has about 33 000 commits in all)."""


@dataclass(frozen=True)
class Graph:
    """Commits in topological order (every parent before its children), as indices.

    ``parents[i]``: indices of commit ``i``'s parents inside the graph (parents outside
    it are ancestors of ``good`` and left out). Index 0 is ``good``; ``bad`` is
    :attr:`bad` (the last commit, which every other commit is an ancestor of).
    """

    parents: tuple[tuple[int, ...], ...]
    boundary: frozenset[int] = frozenset()
    """Commits outside ``good..bad`` (ancestors of ``good``) that are parents of commits in
    it: never candidates, measured only as a move's own parent. Their own parents are
    left out."""
    roots: frozenset[int] = frozenset()
    """Commits of the range that have no parent at all (an unrelated history merged in)."""
    complete: bool = False
    """Every commit of the range has all its parents in the graph (``boundary``
    included), so a move can be checked against its own parents; False for a record
    that kept only the parents inside the range."""

    def __post_init__(self) -> None:
        n = len(self.parents)
        if not 2 <= n <= MAX_COMMITS:
            raise ValueError(f"a bisection needs 2 to {MAX_COMMITS} commits, got {n}")
        for i, ps in enumerate(self.parents):
            for p in ps:
                if not 0 <= p < i:
                    raise ValueError(f"commit {i}: parent {p} is not an earlier commit")
        for i in self.boundary | self.roots:
            if not 0 < i < n - 1 or self.parents[i]:
                raise ValueError(f"commit {i}: a boundary or root commit has no parent inside")
        if self.boundary & self.roots:
            raise ValueError("a commit is either outside the range (boundary) or a root")
        anc = self.ancestors
        if anc[-1] != (1 << n) - 1:
            raise ValueError("every commit must be an ancestor of the last one (bad)")

    @property
    def bad(self) -> int:
        """The index of ``bad``: the last commit."""
        return len(self.parents) - 1

    @property
    def ancestors(self) -> tuple[int, ...]:
        """Bit set of each commit's ancestors inside the graph, itself included."""
        cached: tuple[int, ...] | None = self.__dict__.get("_anc")
        if cached is None:
            out: list[int] = []
            for i, ps in enumerate(self.parents):
                bits = 1 << i
                for p in ps:
                    bits |= out[p]
                out.append(bits)
            cached = tuple(out)
            object.__setattr__(self, "_anc", cached)
        return cached

    @classmethod
    def linear(cls, n: int) -> Graph:
        """A chain of ``n`` commits, each the parent of the next."""
        return cls(tuple(() if i == 0 else (i - 1,) for i in range(n)))


Measurement = Mapping[str, Count | None]
"""Architecture -> its count of a commit, or None when it did not build or run there."""


def same_level(a: Count, b: Count) -> bool:
    """Whether two counts show no significant change: the one verdict of a counted row
    (:func:`archbench.analysis.comparison.count_change`), so an ``exact+extra`` pair is
    compared on its lower level (a one-level side read both ways), as compare, history
    and the gate do; counts without blocks (older records) by their spread."""
    return count_change(a, b).verdict == "no significant change"


def stored_count(c: BisectCount) -> Count | None:
    """A bisection record's count of a commit on one architecture as the logic's
    :class:`Count` (None: skipped): with its blocks where the record kept them, else its
    median and spread alone (records made before blocks were kept, read as then). A
    timed step (``c.time``) stands for the level it decided (None: undecided)."""
    if c.time is not None:
        return None if c.time.level is None else Count(c.time.level)
    if c.instructions is None:
        return None
    return Count(c.instructions, c.spread, c.blocks, c.ops_per_block)


@dataclass(frozen=True)
class Search:
    """One move being bisected on one architecture.

    ``goods``: commits whose ancestors are known to precede the move, the first of
    them measured at the level the move starts from; ``bad``: the earliest
    commit known at the level it ends at. ``candidates``: bit set of commits that may
    be the first at the new level (``bad`` included). ``skipped``: candidates that did
    not build or run on this architecture.
    """

    arch: str
    goods: tuple[int, ...]
    bad: int
    candidates: int
    skipped: frozenset[int] = field(default_factory=frozenset)

    @property
    def probeable(self) -> list[int]:
        """The candidates worth measuring: not ``bad``, not skipped."""
        return [i for i in _members(self.candidates) if i != self.bad and i not in self.skipped]

    @property
    def done(self) -> bool:
        """Nothing left to probe: the move is at ``bad`` or among the skipped candidates."""
        return not self.probeable

    @property
    def exact(self) -> bool:
        """Done, and ``bad`` alone is left: the commit that moved the row."""
        return self.candidates == 1 << self.bad

    @property
    def range(self) -> tuple[int, ...]:
        """The commits the move may be in (``bad`` and skipped candidates), in order."""
        return tuple(_members(self.candidates))


@dataclass(frozen=True)
class Probe:
    """The next commit to measure, and on which architectures."""

    commit: int
    archs: tuple[str, ...]


Status = Literal["unmeasured", "no move", "moved", "failed"]


@dataclass(frozen=True)
class ArchState:
    """What the measurements say on one architecture.

    ``status``: ``unmeasured`` (good or bad not measured yet), ``failed`` (good or bad
    did not build or run: nothing can be bisected), ``no move`` (good and bad at the
    same level) or ``moved`` (``searches`` holds one search per move found so far, in
    commit order of their ``bad``).
    """

    arch: str
    status: Status
    searches: tuple[Search, ...] = ()

    @property
    def done(self) -> bool:
        """Nothing more to measure on this architecture."""
        return self.status in ("no move", "failed") or (
            self.status == "moved" and all(s.done for s in self.searches)
        )


def _members(bits: int) -> list[int]:
    """The set bits of ``bits`` in order (one pass over its binary digits: linear)."""
    return [i for i, b in enumerate(bin(bits)[:1:-1]) if b == "1"]


def _candidates(graph: Graph, goods: Sequence[int], bad: int) -> int:
    anc = graph.ancestors
    excluded = 0
    for g in goods:
        excluded |= anc[g]
    for b in graph.boundary:  # ancestors of good: never where a move in the range is
        excluded |= 1 << b
    return anc[bad] & ~excluded


def _measured(arch: str, steps: Sequence[tuple[int, Measurement]]) -> dict[int, Count | None]:
    """Each commit's first measurement on ``arch`` (None: did not build or run)."""
    seen: dict[int, Count | None] = {}
    for commit, measured in steps:
        if arch in measured and commit not in seen:
            seen[commit] = measured[arch]
    return seen


OwnVerdict = Literal["moved", "unmeasured", "parent skipped", "inherited", "root", "unchecked"]


@dataclass(frozen=True)
class OwnParent:
    """What a commit a search narrowed to did, against its own parents (:func:`against_parent`).

    ``verdict``: ``moved`` (its count differs from each parent's; ``parent`` is the first
    parent, the count before the move), ``inherited`` (it has the count of ``parent``:
    it moved nothing, the level came with that parent), ``root`` (no parent at all: a
    history of its own), ``unmeasured`` (``parent`` is to be measured first), ``parent
    skipped`` (``parent`` did not build or run: not checked), or ``unchecked`` (a record
    without every parent, :attr:`Graph.complete`).
    """

    verdict: OwnVerdict
    parent: int | None = None


def against_parent(
    graph: Graph, arch: str, steps: Sequence[tuple[int, Measurement]], commit: int
) -> OwnParent:
    """``commit``'s count on ``arch`` against its own parents', as ``git bisect`` reasons
    (module docs): never against a neighbour measured on another branch."""
    if not graph.complete:
        return OwnParent("unchecked")
    if commit in graph.roots:
        return OwnParent("root")
    seen = _measured(arch, steps)
    mine = seen.get(commit)
    parents = graph.parents[commit]
    if mine is None or not parents:
        return OwnParent("unchecked")
    for p in parents:
        if p not in seen:
            return OwnParent("unmeasured", p)
    for p in parents:
        if seen[p] is None:
            return OwnParent("parent skipped", p)
    for p in parents:
        level = seen[p]
        if level is not None and same_level(level, mine):
            return OwnParent("inherited", p)
    return OwnParent("moved", parents[0])


def _parent_probes(
    graph: Graph, archs: Sequence[str], states: Sequence[ArchState],
    steps: Sequence[tuple[int, Measurement]],
) -> dict[int, list[str]]:  # fmt: skip
    """Parent -> the architectures whose search narrowed to a child of it that is still
    to be checked against that parent."""
    wanted: dict[int, list[str]] = {}
    for st in states:
        for s in st.searches:
            if s.exact:
                own = against_parent(graph, st.arch, steps, s.bad)
                if own.verdict == "unmeasured" and own.parent is not None:
                    wanted.setdefault(own.parent, [])
                    if st.arch not in wanted[own.parent]:
                        wanted[own.parent].append(st.arch)
    return {p: [a for a in archs if a in got] for p, got in wanted.items()}


def arch_state(graph: Graph, arch: str, steps: Sequence[tuple[int, Measurement]]) -> ArchState:
    """Replay ``steps`` (commit, measurement), in the order measured, on one architecture.

    The first measurements of ``good`` (index 0) and ``bad`` (:attr:`Graph.bad`) set the
    two levels; every later measurement of a commit refines the searches (module
    docs). A commit measured again keeps its first measurement.
    """
    seen: dict[int, Count | None] = {}
    order: list[int] = []
    for commit, measured in steps:
        if not 0 <= commit <= graph.bad:
            raise ValueError(f"step of commit {commit}: not in the graph (0-{graph.bad})")
        if arch in measured and commit not in seen:
            seen[commit] = measured[arch]
            order.append(commit)
    if 0 not in seen or graph.bad not in seen:
        return ArchState(arch, "unmeasured")
    good, bad = seen[0], seen[graph.bad]
    if good is None or bad is None:
        return ArchState(arch, "failed")
    if same_level(good, bad):
        return ArchState(arch, "no move")
    searches = [Search(arch, (0,), graph.bad, _candidates(graph, (0,), graph.bad))]
    level: dict[int, Count] = {0: good, graph.bad: bad}
    for commit in order:
        if commit in (0, graph.bad):
            continue
        measured_c = seen[commit]
        for k, s in enumerate(searches):
            if not (s.candidates >> commit) & 1 or commit == s.bad:
                continue
            if measured_c is None:
                searches[k] = Search(arch, s.goods, s.bad, s.candidates, s.skipped | {commit})
                break
            level[commit] = measured_c
            at_good = same_level(level[s.goods[0]], measured_c)
            at_bad = same_level(level[s.bad], measured_c)
            if at_good and not at_bad:
                goods = (*s.goods, commit)
                new = [Search(arch, goods, s.bad, _candidates(graph, goods, s.bad), s.skipped)]
            elif at_bad and not at_good:
                cand = _candidates(graph, s.goods, commit)
                new = [Search(arch, s.goods, commit, cand, _within(s.skipped, cand))]
            else:
                # A third level (or both, when the spreads overlap both): the row moved
                # before and after this commit; bisect both moves.
                first = _candidates(graph, s.goods, commit)
                # goods[0] carries a search's start level: this commit's, now.
                goods2 = (commit, *s.goods)
                second = _candidates(graph, goods2, s.bad)
                new = [
                    Search(arch, s.goods, commit, first, _within(s.skipped, first)),
                    Search(arch, goods2, s.bad, second, _within(s.skipped, second)),
                ]
            searches[k : k + 1] = new
            break
    searches.sort(key=lambda s: s.bad)
    return ArchState(arch, "moved", tuple(searches))


def _within(skipped: frozenset[int], candidates: int) -> frozenset[int]:
    return frozenset(i for i in skipped if (candidates >> i) & 1)


def _below(graph: Graph, search: Search) -> dict[int, int]:
    """Each commit of the search's span (its first candidate to ``bad``) -> how many of
    its ancestors (itself included) are candidates, in one pass in commit order.

    A commit with one parent has that parent's ancestors and itself, so its figure is the
    parent's plus one if it is a candidate (a commit before the span has no candidate
    among its ancestors: 0); only a merge needs its ancestor set counted
    (``int.bit_count``). So the cost is linear in the span on a line, plus ``n/64`` words
    per merge in it, where counting every commit's ancestors was quadratic (20,000
    commits: 2.6 s a probe, ``benchmarks/probe_choice.py``)."""
    cand = search.candidates
    flags = bin(cand)[:1:-1]  # flags[i] == "1": commit i is a candidate
    lo = len(flags) - len(flags.lstrip("0"))
    anc, parents = graph.ancestors, graph.parents
    below: dict[int, int] = {}
    for i in range(lo, len(flags)):
        inside = flags[i] == "1"
        ps = parents[i]
        if len(ps) == 1:
            below[i] = below.get(ps[0], 0) + inside
        elif ps:
            below[i] = (anc[i] & cand).bit_count()
        else:
            below[i] = int(inside)
    return below


def _left(total: int, score: int) -> int:
    """``ceil(log2)`` of the candidates left at worst after a probe whose split score is
    ``score`` (bad: its ancestors among the ``total`` candidates; good: the rest): the
    probes plain bisection needs after it, at worst, on a line."""
    return max(total - score - 1, 0).bit_length()


def last_built(steps: Sequence[tuple[int, Measurement]]) -> int | None:
    """The commit measured last that built on some architecture (a count, not a skip):
    the one the persistent build trees hold now; None before any."""
    for commit, measured in reversed(steps):
        if any(c is not None for c in measured.values()):
            return commit
    return None


def next_probe(
    graph: Graph, archs: Sequence[str], steps: Sequence[tuple[int, Measurement]]
) -> Probe | None:
    """The next commit to measure, or None when every architecture is done.

    Good and bad come first (each on the architectures that lack it). Then a halving
    point of the largest open search, measured on every architecture whose open searches
    contain it as a probeable candidate: ``git bisect``'s rule (the commit that best
    halves the candidates; ties: the earlier commit), except that among the commits that
    leave as few steps as that one at worst (:func:`_left`: ``ceil(log2)`` of the
    larger side) the one nearest, in commit order, to the commit built last
    (:func:`last_built`) is taken, so that the incremental build tree
    (:mod:`archbench.images.incremental`) recompiles less; ties: the better halving, then
    the earlier commit. On a line that never adds a step at worst: each probe still
    leaves at most ``2**(k-1)`` of ``2**k`` candidates.
    """
    for end in (0, graph.bad):
        missing = tuple(a for a in archs if not any(c == end and a in m for c, m in steps))
        if missing:
            return Probe(end, missing)
    states = [arch_state(graph, a, steps) for a in archs]
    open_searches = [s for st in states for s in st.searches if not s.done]
    if not open_searches:
        # Every search narrowed: each commit found is measured against its own parents.
        parents = _parent_probes(graph, archs, states, steps)
        if parents:
            first = min(parents)
            return Probe(first, tuple(parents[first]))
        return None
    widest = max(open_searches, key=lambda s: (s.candidates.bit_count(), -s.bad))
    total = widest.candidates.bit_count()
    below = _below(graph, widest)
    # Each candidate's split score, once: min(its ancestors among the candidates, the rest).
    score = {c: min(below[c], total - below[c]) for c in widest.probeable}
    best = max(score, key=lambda c: (score[c], -c))
    near = last_built(steps)
    if near is not None:
        bound = _left(total, score[best])
        best = min(
            (c for c in score if _left(total, score[c]) <= bound),
            key=lambda c: (abs(c - near), -score[c], c),
        )
    wanting = tuple(
        a for a in archs if any(s.arch == a and best in s.probeable for s in open_searches)
    )
    return Probe(best, wanting)


def remaining_probes(
    graph: Graph, archs: Sequence[str], steps: Sequence[tuple[int, Measurement]]
) -> int:
    """An estimate of the probes still to come (for the ETA): the unmeasured ends, plus
    ``ceil(log2(probeable + 1))`` per open search (the moves not found yet are unknown)."""
    ends = sum(
        1
        for end in (0, graph.bad)
        if any(not any(c == end and a in m for c, m in steps) for a in archs)
    )
    if ends:
        return ends + math.ceil(math.log2(graph.bad + 1))
    total = 0
    states = [arch_state(graph, a, steps) for a in archs]
    for st in states:
        for s in st.searches:
            if not s.done:
                total += math.ceil(math.log2(len(s.probeable) + 1))
    return total + len(_parent_probes(graph, archs, states, steps))


TimeDecision = Literal["like good", "like bad", "undecided"]
"""A timed probe against the two ends measured in the same rounds."""
GOOD_LEVEL: Final = 1.0
"""The level a timed bisection gives the good end: times are ratios to it."""


def time_move(bad_vs_good: TInterval, threshold: float = DEFAULT_THRESHOLD) -> str:
    """``slower``, ``faster`` or ``no significant change``: bad/good as ``invoke compare``
    decides it (the interval excludes 1 and the ratio is beyond ``threshold``).

    Raises:
        ValueError: ``threshold`` negative or not finite.
    """
    return verdict(bad_vs_good.ratio, bad_vs_good.low, bad_vs_good.high, threshold)


EndDecision = Literal["slower", "faster", "no significant change", "undecided"]
"""The bad end timed against the good one (:func:`time_end`)."""


def time_end(bad_vs_good: TInterval | None, threshold: float = DEFAULT_THRESHOLD) -> EndDecision:
    """Whether the bad end moved from good, or whether its rounds cannot tell yet.

    ``slower``/``faster``: :func:`time_move`'s verdict (the interval excludes 1 and the
    ratio is beyond ``threshold``); ``no significant change``: the whole interval lies
    within ``[1 / (1 + threshold), 1 + threshold]``, so no move the rounds allow reaches
    the threshold; ``undecided``: anything else (an interval that holds 1 and reaches
    beyond the threshold, such as 6.08× in [0.71, 52.2] from three rounds beside another
    job), or no interval at all. An undecided end gets more rounds, as an undecided probe
    does, and is never reported as "no move": more rounds narrow the interval (by about
    ``√n`` and the Student-t quantile), and a decided end stays decided as it narrows. The
    interval of each look is at :func:`end_confidence`, so the looks together call a move
    that is not there no more often than one look at 95 % does.

    Raises:
        ValueError: ``threshold`` negative or not finite.
    """
    if bad_vs_good is None:
        if not math.isfinite(threshold) or threshold < 0:
            raise ValueError(f"threshold must be a fraction >= 0, got {threshold}")
        return "undecided"
    said = time_move(bad_vs_good, threshold)
    if said == "slower":
        return "slower"
    if said == "faster":
        return "faster"
    if 1 / (1 + threshold) <= bad_vs_good.low and bad_vs_good.high <= 1 + threshold:
        return "no significant change"
    return "undecided"


def end_confidence(first: int, cap: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The confidence of each look at the bad end's interval when it may be looked at after
    ``first``, ``first + 1``, …, ``cap`` rounds (:func:`time_end`, one more round while
    undecided): ``1 - (1 - confidence) / looks`` (Bonferroni over the looks), so that an
    end that did not move is called a move in at most ``1 - confidence`` of bisections
    however many looks it gets. Looking again at 95 % each time would call an A/A pair a
    move far more often (12 % over four looks in ``tests/unit/test_bisect_time.py``'s
    loaded-machine model).

    Raises:
        ValueError: ``first`` < 1, ``cap`` < ``first`` or ``confidence`` outside (0, 1).
    """
    if first < 1 or cap < first or not 0 < confidence < 1:
        raise ValueError(f"need 1 <= first <= cap and 0 < confidence < 1: {first}, {cap}")
    return 1 - (1 - confidence) / (cap - first + 1)


def time_decision(
    vs_good: TInterval,
    vs_bad: TInterval,
    move: str,
    threshold: float = DEFAULT_THRESHOLD,
) -> TimeDecision:
    """Whether a probe P, timed in the same interleaved rounds as good G and bad B, is
    like good, like bad or undecided.

    ``vs_good``: P/G; ``vs_bad``: P/B (each :func:`archbench.analysis.rounds.round_t_interval`);
    ``move``: :func:`time_move` of B/G, ``slower`` or ``faster``. Like bad: P moved
    from G the way B did (that verdict on P/G) and P/B shows no significant change;
    like good: P moved from B the other way and P/G shows no significant change.
    Anything else is undecided: an interval too wide for either, or P apart from both
    (a third level), which a timed bisection does not try to split.

    Raises:
        ValueError: ``move`` is not ``slower`` or ``faster``, or a bad ``threshold``.
    """
    if move not in ("slower", "faster"):
        raise ValueError(f"bad did not move from good ({move!r}): nothing to decide")
    back = "faster" if move == "slower" else "slower"
    from_good = verdict(vs_good.ratio, vs_good.low, vs_good.high, threshold)
    from_bad = verdict(vs_bad.ratio, vs_bad.low, vs_bad.high, threshold)
    if from_good == move and from_bad == "no significant change":
        return "like bad"
    if from_bad == back and from_good == "no significant change":
        return "like good"
    return "undecided"


def time_level(decision: TimeDecision, bad_level: float) -> Count | None:
    """The :class:`Count` a timed probe stands for in :func:`arch_state`: the good end's
    level (:data:`GOOD_LEVEL`), the bad end's (``bad_level``, its ratio to good), or None
    when undecided (replayed as a skip)."""
    if decision == "like good":
        return Count(GOOD_LEVEL)
    if decision == "like bad":
        return Count(bad_level)
    return None
