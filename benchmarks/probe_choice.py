#!/usr/bin/env python3
"""What choosing a bisection's next probe costs on a long range (issue 39's review).

``archbench.analysis.next_probe`` scores every probeable candidate of the widest search by
its ancestors among the candidates. It used to count each candidate's ancestor set
(``bin(...).count("1")`` of an ``n``-bit integer, three times a candidate): quadratic in
the range, 2.6 s a probe on a 20,000-commit line. It now counts them in one pass in commit
order (a commit with one parent has its parent's figure plus itself; only a merge counts
its set). This script times both on a line and on a graph with a merge every ``--merge``
commits, for the first probe after the two ends (the widest search, the worst case), and
checks that both choose the same commit. The quadratic one is written out here as it was
(``_quadratic``), for the comparison only.

Prints per size the median and range over ``--repeat`` of each, in ms, and the ratio
quadratic / linear of the medians with its range (slowest over fastest and fastest over
slowest), beside the load average.

Usage::

    .venv/bin/python benchmarks/probe_choice.py [--sizes 1000,5000,20000] [--repeat 5]

Exit status 0 after printing; 1 when the two choose different commits.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

from archbench.analysis import Count, Graph, Measurement, arch_state, next_probe


def _quadratic(graph: Graph, steps: list[tuple[int, Measurement]]) -> int:
    """The probe as it was chosen before (every candidate's ancestor set counted)."""
    (search,) = [s for s in arch_state(graph, "a", steps).searches if not s.done]
    total = bin(search.candidates).count("1")

    def score(c: int) -> int:
        below = bin(graph.ancestors[c] & search.candidates).count("1")
        return min(below, total - below)

    def left(c: int) -> int:
        return max(total - score(c) - 1, 0).bit_length()

    best = max(search.probeable, key=lambda c: (score(c), -c))
    near = steps[-1][0]  # the commit built last: the bad end, measured second
    return min(
        (c for c in search.probeable if left(c) <= left(best)),
        key=lambda c: (abs(c - near), -score(c), c),
    )


def _graph(n: int, merge: int) -> Graph:
    """A line of ``n`` commits; with ``merge`` > 0 every ``merge``-th commit also merges a
    two-commit side branch forked just before it (commits i-2 and i-1 then form the branch
    and the line: the merge's ancestor set differs from its first parent's)."""
    parents: list[tuple[int, ...]] = [()]
    for i in range(1, n):
        if merge and i % merge == 0 and i >= 3:
            parents.append((i - 1, i - 2))
            parents[i - 1] = (i - 3,)  # i - 1 forks from i - 3: a side branch
        else:
            parents.append((i - 1,))
    return Graph(tuple(parents))


def _times(fn: Callable[[], int], repeat: int) -> tuple[list[float], int]:
    out, got = [], -1
    for _ in range(repeat):
        t0 = time.perf_counter()
        got = fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out, got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--merge", type=int, default=50, help="a merge every N commits")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at start")
    print("graph    commits  linear ms (median, range)   quadratic ms (median, range)   ratio")
    for shape, merge in (("line", 0), (f"merge/{args.merge}", args.merge)):
        for n in (int(x) for x in args.sizes.split(",")):
            graph = _graph(n, merge)
            graph.ancestors  # noqa: B018  # built once per graph, as a bisection does
            steps: list[tuple[int, Measurement]] = [
                (0, {"a": Count(100.0)}),
                (graph.bad, {"a": Count(200.0)}),
            ]

            def linear(g: Graph = graph, s: list[tuple[int, Measurement]] = steps) -> int:
                probe = next_probe(g, ["a"], s)
                assert probe is not None
                return probe.commit

            def quadratic(g: Graph = graph, s: list[tuple[int, Measurement]] = steps) -> int:
                return _quadratic(g, s)

            new, a = _times(linear, args.repeat)
            old, b = _times(quadratic, args.repeat)
            if a != b:
                print(f"{shape} {n}: linear chose {a}, quadratic {b}", file=sys.stderr)
                return 1
            ratio = statistics.median(old) / statistics.median(new)
            print(
                f"{shape:<9}{n:>7}  {statistics.median(new):9.1f} "
                f"({min(new):.1f}-{max(new):.1f})   {statistics.median(old):12.1f} "
                f"({min(old):.1f}-{max(old):.1f})   {ratio:7.1f}x "
                f"({min(old) / max(new):.1f}-{max(old) / min(new):.1f})"
            )
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
