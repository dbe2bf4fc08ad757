#!/usr/bin/env python3
"""A/A and A/B checks of ``invoke compare`` (issue 12): verdict counts and the machine's load.

Runs ``invoke bench`` three times on one native target with the same image and settings
(the matrix's, plus any ``--bench-args``):

- A1 and A2 with the CPU quota ``--cpus-a`` (default 1.0: one CPU, which the single-threaded
  blindsig driver fills, so the quota changes nothing yet bounds it);
- B with ``--cpus-b`` (default half of ``--cpus-a``).

then ``invoke compare A1 A2`` (A/A: "no significant change" should be >= 90 % of the rows
with a verdict) and ``invoke compare A1 B`` (A/B: every row whose interval allows a verdict
should be "slower"), and prints both verdict counts with the load average (1/5/15 min)
before and after each run. ``--reuse A1 A2 B`` compares runs already in the results
store instead of running.

Note on what a quota does: Docker's ``--cpus`` is CFS bandwidth control, a budget of
quota × 100 ms of CPU per 100 ms period. A timed block much shorter than the period
(blindsig's default calibration floor is 1 ms) usually runs entirely inside one period's
budget at full speed; only blocks that hit the end of a budget wait out the period. So
under half the quota, short blocks are slower only in some samples and the median may
not move, while blocks longer than a period (key generation, or any row with
``--min-block-ns`` of 100 ms or more) take about twice as long. And on a loaded
machine the quota may not bind at all: with the load average at 4 × the cores, each
runnable process gets about a quarter of a CPU, less than half of ``--cpus-a``, so B
is not slowed by its quota (on 2026-12-01 at load 8-12: 2 of 27 rows "slower"). Run
the A/B check on a quiet machine.

Usage (from the repository, with the venv and a built native image)::

    .venv/bin/python benchmarks/compare_aa_ab.py [--target amd64-trixie]
        [--bench-args "--rsa-bits 1024,2048"] [--cpus-a 1.0] [--cpus-b 0.5]

Exit status: 0 after printing the counts (whatever they are), 1 when a run fails.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from archbench import compare as compare_mod
from archbench import reports
from archbench.results import ResultStore

REPO = Path(__file__).resolve().parents[1]
RESULTS_LINE = re.compile(r"results: (\S+)/([0-9A-Za-z._-]+)\s")


class CheckError(Exception):
    """A run or a comparison failed; the message says which."""


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _invoke(args: Sequence[str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "invoke", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr[-3000:]
        raise CheckError(f"invoke {' '.join(args)} exited {done.returncode}:\n{tail}")
    return done.stdout


def bench(target: str, cpus: float, extra: Sequence[str]) -> str:
    """One ``invoke bench`` run; returns its run id."""
    before = _load()
    out = _invoke(["bench", "--target", target, "--cpus", f"{cpus:g}", *extra])
    match = RESULTS_LINE.search(out)
    if match is None:
        raise CheckError(f"invoke bench printed no results line:\n{out[-2000:]}")
    run_id = match.group(2)
    print(f"run {run_id}: --cpus {cpus:g}; load before {before}, after {_load()}", flush=True)
    return run_id


def verdicts(store: ResultStore, run_a: str, run_b: str) -> tuple[dict[str, int], float]:
    """Verdict counts of ``invoke compare run_a run_b`` (default confidence and threshold)
    and the median relative half-width of the rows' intervals (0.1 = ±10 %; NaN: none).

    A wide interval says "no significant change" without being evidence of sameness: the
    half-width tells how much a row could have moved unnoticed.
    """
    sides = []
    for run_id in (run_a, run_b):
        loaded, failures = store.load_all([run_id])
        if failures:
            raise CheckError(f"run {run_id}: {failures[0].message}")
        sides.append(reports.select_results(loaded, suites=["blindsig"]))
    rows = compare_mod.compare(sides[0], sides[1])
    widths = [(r.high - r.low) / 2 / r.ratio for r in rows if math.isfinite(r.low) and r.ratio > 0]
    half = statistics.median(widths) if widths else math.nan
    return {str(v): n for v, n in compare_mod.counts(rows).items()}, half


def _summary(name: str, counts: dict[str, int], wanted: str, half_width: float) -> str:
    with_verdict = ("faster", "slower", "no significant change")
    decided = sum(n for v, n in counts.items() if v in with_verdict)
    hit = counts.get(wanted, 0)
    share = f"{hit / decided:.0%}" if decided else "n/a"
    detail = ", ".join(f"{v}: {n}" for v, n in sorted(counts.items()))
    return (
        f"{name}: {hit} of {decided} rows with a verdict are '{wanted}' ({share}); {detail};"
        f" median interval ±{half_width:.0%}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run (or reuse) A1, A2 and B, compare, print the counts; 1 on failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--target", default="amd64-trixie", help="a native target of matrix.yml")
    parser.add_argument("--bench-args", default="", help="more invoke bench flags, one string")
    parser.add_argument("--cpus-a", type=float, default=1.0, help="quota of A1 and A2")
    parser.add_argument("--cpus-b", type=float, default=None, help="quota of B (default A/2)")
    parser.add_argument("--results", default="results", help="results store of invoke.yaml")
    parser.add_argument("--reuse", nargs=3, metavar=("A1", "A2", "B"), default=None)
    args = parser.parse_args(argv)
    cpus_b = args.cpus_b if args.cpus_b is not None else args.cpus_a / 2
    try:
        if args.reuse:
            a1, a2, b = args.reuse
        else:
            extra = shlex.split(args.bench_args)
            print(f"load at start {_load()}", flush=True)
            a1 = bench(args.target, args.cpus_a, extra)
            a2 = bench(args.target, args.cpus_a, extra)
            b = bench(args.target, cpus_b, extra)
        for run_a, run_b in ((a1, a2), (a1, b)):
            # The user's command, for its table and files; the counts come from the library.
            print(_invoke(["compare", run_a, run_b, "--target", args.target]), flush=True)
        store = ResultStore(REPO / args.results)
        aa, aa_half = verdicts(store, a1, a2)
        print(_summary(f"A/A {a1} vs {a2}", aa, "no significant change", aa_half))
        ab, ab_half = verdicts(store, a1, b)
        print(_summary(f"A/B {a1} vs {b} (--cpus {cpus_b:g})", ab, "slower", ab_half))
        print(f"load at end {_load()}")
    except CheckError as exc:
        print(f"compare_aa_ab: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
