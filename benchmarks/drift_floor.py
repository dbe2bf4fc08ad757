#!/usr/bin/env python3
"""How much this machine's speed drifts between back-to-back runs (``invoke compare``'s noise).

Two stored runs that were not interleaved differ by what the machine did between them
(other jobs, frequency, the neighbours of a cloud VM), which no interval computed inside
one run can see. This script measures that drift without Docker: it times ``--runs``
back-to-back "runs" of ``--seconds`` s each of one fixed CPU-bound operation on the host
(a 2048-bit modular exponentiation, ``pow(m, d, n)``: big-integer arithmetic like an RSA
signature, one operation per block), takes each run's median block time as archbench
takes a row's median, and prints:

- every run's median (ms) with the load average at its end;
- the ratios of consecutive runs' medians (what an A/A ``invoke compare`` of two stored
  runs would see) and the largest of them;
- ``between-run CV``: the coefficient of variation of the run medians
  (:func:`archbench.analysis.repeatability`'s ``between_cv``), the figure the noise
  models of ``benchmarks/coverage.py`` take for the spread between runs.

``--hog`` starts one busy shell loop (``sh -c 'while :; do :; done'``) for the duration and
stops it at the end, so a quiet machine can be measured with "one extra busy core".

Usage::

    .venv/bin/python benchmarks/drift_floor.py [--runs 8] [--seconds 15] [--gap 3] [--hog]

Exit status 0 after printing.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence


@contextlib.contextmanager
def hog(enabled: bool) -> Iterator[None]:
    """One busy core for the duration (a shell loop), stopped by its process id at the end."""
    if not enabled:
        yield
        return
    proc = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def one_run(seconds: float, rng: random.Random) -> list[float]:
    """Block times in ns of ``pow(m, d, n)`` with 2048-bit operands for ``seconds`` s."""
    n = rng.getrandbits(2048) | (1 << 2047) | 1
    d = rng.getrandbits(2048) % n
    m = rng.getrandbits(2040)
    blocks: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter_ns()
        m = pow(m, d, n) | 1
        blocks.append(float(time.perf_counter_ns() - t0))
    return blocks


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the drift between back-to-back runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=15.0, help="length of one run, s")
    parser.add_argument("--gap", type=float, default=3.0, help="pause between runs, s")
    parser.add_argument("--hog", action="store_true", help="start one busy core meanwhile")
    args = parser.parse_args(argv)
    rng = random.Random(0)  # noqa: S311 (operands of a timing loop, not secrets)
    medians: list[float] = []
    print(f"load at start {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    with hog(args.hog):
        for i in range(args.runs):
            blocks = one_run(args.seconds, rng)
            medians.append(statistics.median(blocks))
            print(
                f"run {i + 1}: {len(blocks)} blocks, median {medians[-1] / 1e6:.3f} ms,"
                f" load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
            time.sleep(args.gap)
    ratios = [b / a for a, b in itertools.pairwise(medians)]
    print("consecutive ratios B/A: " + ", ".join(f"{r:.3f}" for r in ratios))
    if ratios:
        worst = max(ratios, key=lambda r: abs(r - 1))
        print(f"largest change between consecutive runs: {worst:.3f}")
    if len(medians) > 1:
        cv = statistics.stdev(medians) / statistics.fmean(medians)
        print(f"between-run CV of the run medians: {cv:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
