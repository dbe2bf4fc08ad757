#!/usr/bin/env python3
"""Issue 21's goals for ``invoke compare`` on a busy machine: verdict counts of two runs.

Given two run ids of the results store, prints for the timed rows and for the counted
rows apart: how many got each verdict, how the times were compared (interleaved over
how many rounds, or separate runs over their container runs, or no interval), and whether the
goal is met:

- ``--want no-change`` (A/A): at least 90 % of the timed rows with a verdict are
  "no significant change";
- ``--want slower`` (A/B, e.g. the CPU quota halved): every timed row with a verdict is
  "slower";

and, with ``--want-counts same|more``, that every counted row agrees.

``--bench TARGET`` measures the pair first, with one busy core started by this script
(``stress-ng --cpu 1`` when installed, else a shell loop; stopped by its process id at
the end): ``invoke bench --target TARGET`` twice (A/A), or with ``--cpus-b Q`` the second
run with ``--cpus Q`` (A/B), plus ``--bench-args``. For an interleaved session the lead's
runner measures both sides in one command: run it with the hog from :func:`hog` and
call :func:`goal` on the two run ids it stores.

Usage (from the repository, with the venv)::

    .venv/bin/python benchmarks/compare_busy.py RUN_A RUN_B [--want no-change]
    .venv/bin/python benchmarks/compare_busy.py --bench amd64-trixie [--cpus-b 0.5]

Exit status: 0 when the goal is met, 1 when it is not, 2 when a run or the comparison
failed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from archbench.analysis import RowComparison, compare, counts
from archbench.result import ResultStore

REPO = Path(__file__).resolve().parents[1]
RESULTS_LINE = re.compile(r"results: (\S+)/([0-9A-Za-z._-]+)\s")
DECIDED = ("faster", "slower", "no significant change")


@contextlib.contextmanager
def hog(enabled: bool = True) -> Iterator[str]:
    """One extra busy core while the block runs; yields what it started."""
    if not enabled:
        yield "none"
        return
    stress = shutil.which("stress-ng")
    cmd = [stress, "--cpu", "1", "--quiet"] if stress else ["sh", "-c", "while :; do :; done"]
    proc = subprocess.Popen(cmd)
    try:
        yield " ".join(cmd)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def rows_of(store: ResultStore, run_a: str, run_b: str) -> list[RowComparison]:
    """``invoke compare run_a run_b``'s rows at the default settings (both metrics).

    Raises:
        RuntimeError: a results file of either run could not be loaded.
    """
    sides = []
    for run_id in (run_a, run_b):
        loaded, failures = store.load_all([run_id], merge=False, metric=None)
        if failures:
            raise RuntimeError(f"run {run_id}: {failures[0].message}")
        sides.append(loaded)
    return compare(sides[0], sides[1])


def goal(rows: Sequence[RowComparison], want: str, want_counts: str | None = None) -> bool:
    """Print the verdict counts of ``rows`` and whether the goal ``want`` is met (module
    docstring); ``want_counts`` ``same`` or ``more`` checks the counted rows too."""
    timed = [r for r in rows if r.metric == "time"]
    counted = [r for r in rows if r.metric == "instructions"]
    rounds = sorted({r.rounds for r in timed if r.interleaved})
    spreads = sorted(
        {round(r.between_spread or 0.0, 3) for r in timed if r.spread_source == "repeats"}
    )
    how = f"interleaved over {rounds} rounds" if rounds else ""
    if spreads:
        how += ("; " if how else "") + f"not interleaved, container runs' spread {spreads}"
    if any(r.verdict == "no interval" for r in timed):
        how += ("; " if how else "") + "not interleaved: no interval"
    print(f"timed rows ({how or 'none'}): {dict(sorted(counts(timed).items()))}")
    decided = [r for r in timed if r.verdict in DECIDED]
    ok = True
    if decided:
        if want == "no-change":
            share = sum(r.verdict == "no significant change" for r in decided) / len(decided)
            ok = share >= 0.9
            print(f"A/A: {share:.0%} of {len(decided)} 'no significant change' (goal >= 90 %)")
        else:
            share = sum(r.verdict == "slower" for r in decided) / len(decided)
            ok = share == 1.0
            print(f"A/B: {share:.0%} of {len(decided)} 'slower' (goal 100 %)")
    if counted:
        print(f"counted rows: {dict(sorted(counts(counted).items()))}")
        if want_counts is not None:
            expected = "no significant change" if want_counts == "same" else "more instructions"
            agree = all(r.verdict == expected for r in counted if r.verdict != "invalid")
            print(f"counts: every row '{expected}': {agree}")
            ok = ok and agree
    for r in rows:
        if r.note:
            print(f"  {r.key.label} ({r.metric}): {r.note}")
    return ok


def bench(target: str, extra: Sequence[str]) -> str:
    """One ``invoke bench --target target``; returns its run id.

    Raises:
        RuntimeError: the run failed or printed no results line.
    """
    before = _load()
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "bench", "--target", target, *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    match = RESULTS_LINE.search(done.stdout)
    if done.returncode != 0 or match is None:
        raise RuntimeError(f"invoke bench exited {done.returncode}:\n{done.stderr[-2000:]}")
    print(f"run {match.group(2)} {' '.join(extra)}: load {before} -> {_load()}", flush=True)
    return match.group(2)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure (``--bench``) or reuse two runs, compare them, print whether the goal is met."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("runs", nargs="*", metavar="RUN", help="RUN_A RUN_B of the store")
    parser.add_argument("--want", choices=("no-change", "slower"), default=None)
    parser.add_argument("--want-counts", choices=("same", "more"), default=None)
    parser.add_argument("--results", default="results", help="results store of invoke.yaml")
    parser.add_argument("--bench", metavar="TARGET", help="measure A and B first, busy core on")
    parser.add_argument("--cpus-b", type=float, default=None, help="--bench: B's CPU quota")
    parser.add_argument("--bench-args", default="", help="--bench: more invoke bench flags")
    args = parser.parse_args(argv)
    try:
        if args.bench:
            extra = shlex.split(args.bench_args)
            with hog() as what:
                print(f"busy core: {what}; load {_load()}", flush=True)
                run_a = bench(args.bench, extra)
                quota = ["--cpus", f"{args.cpus_b:g}"] if args.cpus_b else []
                run_b = bench(args.bench, [*extra, *quota])
        elif len(args.runs) == 2:
            run_a, run_b = args.runs
        else:
            parser.error("give RUN_A RUN_B, or --bench TARGET")
        want = args.want or ("slower" if args.cpus_b else "no-change")
        rows = rows_of(ResultStore(REPO / args.results), run_a, run_b)
        print(f"A = {run_a}, B = {run_b}")
        met = goal(rows, want, args.want_counts)
    except RuntimeError as exc:
        print(f"compare_busy: error: {exc}", file=sys.stderr)
        return 2
    print("goal met" if met else "goal NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
