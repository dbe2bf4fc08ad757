#!/usr/bin/env python3
"""A/A and A/B checks of ``invoke compare`` (issue 12): verdict counts and the machine's load.

Runs ``invoke bench`` four times on one native target with the same image and settings
(the matrix's, plus any ``--bench-args``):

- A1 and A2 with the CPU quota ``--cpus-a`` (default 1.0: one CPU, which the single-threaded
  blindsig driver fills, so the quota changes nothing yet bounds it), at the matrix's
  settings: ``invoke compare A1 A2`` is the A/A check ("no significant change" should be
  >= 90 % of the rows with a verdict);
- A3 with ``--cpus-a`` and B with ``--cpus-b`` (default half of ``--cpus-a``), both with
  timed blocks of at least ``--ab-block-ms`` (default 200 ms, through a copy of the
  matrix with ``min_block_ns`` set) and ``--ab-args`` (default 7 fixed repetitions):
  ``invoke compare A3 B`` is the A/B check (every row whose interval allows a verdict
  should be "slower").

and prints both verdict counts with the load average (1/5/15 min) before and after each
run. ``--reuse A1 A2 A3 B`` compares runs already in the results store instead.

Why the A/B pair has long blocks: ``--cpus`` is CFS bandwidth control, a budget of CPU
time per 100 ms period. A block much shorter than the period (blindsig's calibration
floor is 1 ms) usually runs entirely inside a budget at full speed, so the *median* of
such blocks, archbench's figure, rightly does not move: a quota limits how much CPU a
process gets, not what an operation costs (2026-12-01, quiet, 1 ms blocks: 10 of 27
rows "slower", the rest "no significant change"). A shorter period does not help: the
kernel throttles in bursts of about 5 ms whatever the period (measured: 2 ms / 1 ms left
0.6 ms blocks at full speed in the median, and 1 ms / 1 ms slowed a single thread's
2.4 ms blocks to 4.8 ms). Blocks of two periods or more each wait out about half their
time, so half the quota is then a true per-block slowdown of about 2x, which is what an
A/B check needs to see. On a loaded machine the quota may still not bind: with the load
average at 4 x the cores each runnable process gets about a quarter of a CPU, less than
half of ``--cpus-a`` (at load 8-12: 2 of 27 rows "slower"). Run it on a quiet machine.

Usage (from the repository, with the venv and a built native image)::

    .venv/bin/python benchmarks/compare_aa_ab.py [--target amd64-trixie]
        [--bench-args "--rsa-bits 1024,2048"] [--cpus-a 1.0] [--cpus-b 0.5]
        [--ab-block-ms 200]

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
import tempfile
from collections.abc import Sequence
from pathlib import Path

import yaml

from archbench.analysis import compare, counts
from archbench.report import select_results
from archbench.result import ResultStore, row_key

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


def long_block_matrix(source: Path, dest: Path, block_ms: float) -> Path:
    """``source`` (a matrix file) copied to ``dest`` with blindsig's ``min_block_ns`` set
    to ``block_ms`` ms under ``defaults`` (comments are not kept); returns ``dest``.

    Raises:
        CheckError: the matrix is not a mapping with a ``defaults`` mapping.
    """
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("defaults", {}), dict):
        raise CheckError(f"{source}: not a matrix with a defaults mapping")
    blindsig = data.setdefault("defaults", {}).setdefault("blindsig", {})
    blindsig["min_block_ns"] = round(block_ms * 1_000_000)
    dest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return dest


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


SHORT_BLOCK = "block shorter than --ab-block-ms"
"""The A/B pseudo-verdict of a row whose timed blocks in A stayed under ``--ab-block-ms``
(calibration stops at 100 000 operations per block: CS unblinding's is 9 ms), which a
quota cannot show in a median (module docstring)."""


def verdicts(
    store: ResultStore, run_a: str, run_b: str, min_block_ns: float = 0.0
) -> tuple[dict[str, int], float]:
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
        sides.append(select_results(loaded, suites=["blindsig"]))
    rows = compare(sides[0], sides[1])
    block_ns = {
        row_key(result.target.name, row): statistics.median(row.samples_ns)
        for result in sides[0]
        for row in result.harness.rows
    }
    short = [r for r in rows if block_ns.get(r.key, math.inf) < min_block_ns]
    rows = [r for r in rows if r not in short]
    widths = [(r.high - r.low) / 2 / r.ratio for r in rows if math.isfinite(r.low) and r.ratio > 0]
    half = statistics.median(widths) if widths else math.nan
    tally = {str(v): n for v, n in counts(rows).items()}
    if short:
        tally[SHORT_BLOCK] = len(short)
        for r in short:
            ms = block_ns[r.key] / 1e6
            print(f"  {r.key.label}: A's median block {ms:.1f} ms ({r.verdict}): not counted")
    return tally, half


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
    """Run (or reuse) A1, A2, A3 and B, compare, print the counts; 1 on failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--target", default="amd64-trixie", help="a native target of matrix.yml")
    parser.add_argument("--bench-args", default="", help="more invoke bench flags, one string")
    parser.add_argument("--cpus-a", type=float, default=1.0, help="quota of A1 and A2")
    parser.add_argument("--cpus-b", type=float, default=None, help="quota of B (default A/2)")
    parser.add_argument("--results", default="results", help="results store of invoke.yaml")
    parser.add_argument(
        "--ab-block-ms", type=float, default=200.0, help="A3 and B: shortest timed block, ms"
    )
    parser.add_argument(
        "--ab-args",
        default="--ci-target off --repetitions 7",
        help="more invoke bench flags for A3 and B only (default: 7 fixed repetitions; under"
        " the adaptive default, 200 ms blocks ran each pair to its 120 s budget: 8.5 min for A3)",
    )
    parser.add_argument("--matrix", default="matrix.yml", help="matrix of A1 and A2")
    parser.add_argument("--reuse", nargs=4, metavar=("A1", "A2", "A3", "B"), default=None)
    args = parser.parse_args(argv)
    cpus_b = args.cpus_b if args.cpus_b is not None else args.cpus_a / 2
    try:
        if args.reuse:
            a1, a2, a3, b = args.reuse
        else:
            extra = shlex.split(args.bench_args)
            print(f"load at start {_load()}", flush=True)
            a1 = bench(args.target, args.cpus_a, ["--matrix", args.matrix, *extra])
            a2 = bench(args.target, args.cpus_a, ["--matrix", args.matrix, *extra])
            with tempfile.TemporaryDirectory(prefix="archbench-ab-") as tmp:
                long = long_block_matrix(
                    REPO / args.matrix, Path(tmp) / "matrix-ab.yml", args.ab_block_ms
                )
                ab_extra = ["--matrix", str(long), *extra, *shlex.split(args.ab_args)]
                a3 = bench(args.target, args.cpus_a, ab_extra)
                b = bench(args.target, cpus_b, ab_extra)
        for run_a, run_b in ((a1, a2), (a3, b)):
            # The user's command, for its table and files; the counts come from the library.
            print(_invoke(["compare", run_a, run_b, "--target", args.target]), flush=True)
        store = ResultStore(REPO / args.results)
        aa, aa_half = verdicts(store, a1, a2)
        print(_summary(f"A/A {a1} vs {a2}", aa, "no significant change", aa_half))
        ab, ab_half = verdicts(store, a3, b, args.ab_block_ms * 1e6)
        name = f"A/B {a3} vs {b} (--cpus {cpus_b:g}, blocks >= {args.ab_block_ms:g} ms)"
        print(_summary(name, ab, "slower", ab_half))
        print(f"load at end {_load()}")
    except CheckError as exc:
        print(f"compare_aa_ab: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
