#!/usr/bin/env python3
"""Do archbench's 95 % intervals cover 95 %? Coverage and A/A false verdicts by simulation.

Draws A/A (true ratio 1) and A/B (true ratio ``--rho``, 1.10) experiments from noise
models of this project's 2-core VM and runs each through the comparison code, then
prints per method × rounds (or container runs) × noise model:

- ``coverage``: the share of intervals that hold the true ratio (A/A and A/B pooled);
- ``A/A false``: the share of A/A rows called ``slower`` or ``faster`` (threshold 5 %);
- ``A/B found``: the share of A/B rows called ``slower`` (power at a 10 % change);
- ``median ×/÷``: the median half-width of the interval, as a factor;

each rate with its Monte-Carlo standard error ``√(p(1-p)/N)``.

Methods, *after* (archbench's code, imported): ``t-rounds``
(:func:`archbench.analysis.rounds.round_t_interval`) for interleaved rounds,
``t-repeats+between`` (:func:`archbench.analysis.rounds.repeat_ratio_interval` with the
between-invocation prior :data:`archbench.analysis.DEFAULT_BETWEEN_RUNS`, issue 39) for
separate runs with container runs, and the verdict
:func:`archbench.analysis.comparison.verdict`. *Before* (the replaced code, kept here
only to show it): ``bootstrap-rounds``, the two-stage bootstrap over rounds;
``floor-separate``, the blocks' bootstrap interval widened by the fixed between-run
spread 0.06 (or the repeats' CV where larger); ``t-repeats``, the container runs' t
interval alone (issue 30 to issue 39: ``between=0``).

Noise models (each a level per round or container run, times lognormal blocks; the
figures are this machine's, from ``docs/measurement.md``):

- ``quiet``: blocks CV 2 %; a round drift common to A and B of 10 % (cancels); 1 % per
  side and round that does not;
- ``drift``: as quiet, with 5 % per side and round that does not cancel (issue 30's
  model, from the 5-16 % that neighbouring runs differ by);
- ``steps``: 2 % per side and round, and with probability 0.15 a side's round runs
  1.3× slower (another job started: the 30 % steps of ``benchmarks/drift_floor.py``);
- ``runs-iid`` (separate runs): every container run's level lognormal with CV 0.13 (the
  CV of run medians measured at load 5.5-6.4), blocks CV 2 %;
- ``runs-session`` (separate runs): container runs vary by 0.13 as in runs-iid, and each
  invocation's level by 0.10 more, which the repeats of one invocation cannot see;
- ``runs-shift`` (separate runs): the invocation's level varies by 0.13 and its
  container runs only 3 % about it: the worst case for an interval from repeats;
- ``runs-steps`` (separate runs, issue 39): invocation and container runs 3 %, and with
  probability 0.15 the whole invocation runs 1.3× slower (another job started for its
  whole duration: the 30 % steps of ``benchmarks/drift_floor.py``).

``--family`` also prints, for interleaved A/A comparisons of 27 independent rows (a
target's blindsig rows), the share of comparisons with at least one false verdict, with
and without Benjamini–Hochberg control (:func:`archbench.analysis.control_false_discoveries`).

Usage::

    .venv/bin/python benchmarks/coverage.py [--sims 1000] [--seed 1] [--no-before] [--family]
        [--between-runs 0.13]

Exit status 0 after printing.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from archbench.analysis import (
    DEFAULT_BETWEEN_RUNS,
    DEFAULT_THRESHOLD,
    RowComparison,
    control_false_discoveries,
    repeat_ratio_interval,
    round_t_interval,
    verdict,
)
from archbench.result import RowKey

BLOCKS = 6
"""Blocks per side and round (``min_repetitions``)."""
RUN_BLOCKS = 20
"""Blocks per container run of a separate run."""
Interval = tuple[float, float, float]
Rounds = list[tuple[list[float], list[float]]]


@dataclass(frozen=True)
class RoundModel:
    """Noise of an interleaved session: lognormal sds (relative) and steps."""

    name: str
    block_cv: float
    common: float
    own: float
    step_p: float = 0.0
    step: float = 1.3


ROUND_MODELS = (
    RoundModel("quiet", 0.02, 0.10, 0.01),
    RoundModel("drift", 0.02, 0.10, 0.05),
    RoundModel("steps", 0.02, 0.10, 0.02, step_p=0.15),
)


@dataclass(frozen=True)
class RunModel:
    """Noise of separate runs: the invocation's level, its container runs' levels."""

    name: str
    session: float
    container: float
    block_cv: float = 0.02
    step_p: float = 0.0
    step: float = 1.3


RUN_MODELS = (
    RunModel("runs-iid", 0.0, 0.13),
    RunModel("runs-session", 0.10, 0.13),
    RunModel("runs-shift", 0.13, 0.03),
    RunModel("runs-steps", 0.03, 0.03, step_p=0.15),
)


def draw_rounds(rng: np.random.Generator, m: RoundModel, n: int, rho: float) -> Rounds:
    """``n`` rounds of A and B (ns per operation) under ``m``, B's true level ``rho`` × A's."""
    out = []
    for _ in range(n):
        common = rng.lognormal(0.0, m.common)
        sides = []
        for scale in (1.0, rho):
            level = 1000.0 * scale * common * rng.lognormal(0.0, m.own)
            if rng.random() < m.step_p:
                level *= m.step
            sides.append(list(level * rng.lognormal(0.0, m.block_cv, BLOCKS)))
        out.append((sides[0], sides[1]))
    return out


def draw_run(rng: np.random.Generator, m: RunModel, k: int, level: float) -> list[list[float]]:
    """One run of ``k`` container runs (their per-operation times, ns) under ``m``."""
    session = level * rng.lognormal(0.0, m.session) if m.session else level
    if m.step_p and rng.random() < m.step_p:
        session *= m.step
    return [
        list(session * rng.lognormal(0.0, m.container) * rng.lognormal(0.0, m.block_cv, RUN_BLOCKS))
        for _ in range(k)
    ]


# --- the methods before issue 30 (copied from archbench 2026-12-02, for "before" only) --


def bootstrap_rounds(rounds: Rounds, n_resamples: int = 2000, seed: int = 0) -> Interval:
    """The former ``round_ratio_interval``: two-stage bootstrap, percentile, clamped."""
    ratio = math.exp(
        statistics.fmean(math.log(statistics.median(b) / statistics.median(a)) for a, b in rounds)
    )
    rng = np.random.default_rng(seed)
    n = len(rounds)
    inner = np.empty((n, n_resamples))
    for r, (a, b) in enumerate(rounds):
        xa, xb = np.asarray(a), np.asarray(b)
        ia = rng.integers(0, len(xa), size=(n_resamples, len(xa)))
        ib = rng.integers(0, len(xb), size=(n_resamples, len(xb)))
        inner[r] = np.log(np.median(xb[ib], axis=1)) - np.log(np.median(xa[ia], axis=1))
    drawn = rng.integers(0, n, size=(n_resamples, n))
    which = rng.integers(0, n_resamples, size=(n_resamples, n))
    reps = np.exp(inner[drawn, which].mean(axis=1))
    low, high = np.quantile(reps, [0.025, 0.975])
    return ratio, min(float(low), ratio), max(float(high), ratio)


def floor_separate(a: list[list[float]], b: list[list[float]], floor: float = 0.06) -> Interval:
    """The former separate-run interval: blocks' bootstrap widened by the between-run spread."""
    from scipy import stats

    xa = np.concatenate([np.asarray(x) for x in a])
    xb = np.concatenate([np.asarray(x) for x in b])
    ratio = float(np.median(xb) / np.median(xa))
    res = stats.bootstrap(
        (xa, xb),
        lambda p, q, axis=-1: np.median(q, axis=axis) / np.median(p, axis=axis),
        vectorized=True,
        paired=False,
        n_resamples=2000,
        method="percentile",
        rng=np.random.default_rng(0),
    )
    low = min(float(res.confidence_interval.low), ratio)
    high = max(float(res.confidence_interval.high), ratio)
    cvs = []
    for side in (a, b):
        if len(side) > 1:
            meds = [statistics.median(x) for x in side]
            cvs.append(statistics.stdev(meds) / statistics.fmean(meds))
    between = floor
    if cvs:
        between = max(floor, math.sqrt(math.fsum(c * c for c in cvs) / len(cvs)))
    extra = 1.959964 * math.sqrt(2) * math.log1p(between)
    down = math.hypot(math.log(ratio / low), extra)
    up = math.hypot(math.log(high / ratio), extra)
    return ratio, ratio * math.exp(-down), ratio * math.exp(up)


# --- the methods now ---------------------------------------------------------------------


def t_rounds(rounds: Rounds) -> Interval:
    """archbench's interval over interleaved rounds."""
    got = round_t_interval(rounds)
    return got.ratio, got.low, got.high


def t_repeats(
    a: list[list[float]], b: list[list[float]], between: float = DEFAULT_BETWEEN_RUNS
) -> Interval | None:
    """archbench's interval of separate runs over their container runs (None: none),
    with the between-invocation spread ``between`` (0: the method before issue 39)."""
    got = repeat_ratio_interval(
        [statistics.median(x) for x in a], [statistics.median(x) for x in b], between=between
    )
    return None if got is None else (got.ratio, got.low, got.high)


# --- the experiment ----------------------------------------------------------------------


@dataclass
class Tally:
    """Counts of one cell of the table."""

    covered: int = 0
    intervals: int = 0
    aa_false: int = 0
    aa: int = 0
    ab_found: int = 0
    ab: int = 0
    widths: list[float] | None = None

    def add(self, got: Interval | None, truth: float) -> None:
        aa = truth == 1.0
        if aa:
            self.aa += 1
        else:
            self.ab += 1
        if got is None:
            return
        ratio, low, high = got
        self.intervals += 1
        self.covered += low <= truth <= high
        if self.widths is None:
            self.widths = []
        self.widths.append(math.sqrt(high / low))
        said = verdict(ratio, low, high, DEFAULT_THRESHOLD)
        if aa:
            self.aa_false += said in ("slower", "faster")
        else:
            self.ab_found += said == "slower"


def rate(k: int, n: int) -> str:
    """``"0.950 ± 0.007"``: a share with its Monte-Carlo standard error; ``n/a`` for n = 0."""
    if n == 0:
        return "n/a"
    p = k / n
    return f"{p:.3f} ± {math.sqrt(p * (1 - p) / n):.3f}"


def row(method: str, size: str, model: str, t: Tally) -> list[str]:
    """One printed line of the table."""
    width = f"{statistics.median(t.widths):.3f}" if t.widths else "none"
    return [
        method,
        size,
        model,
        rate(t.covered, t.intervals),
        rate(t.aa_false, t.aa),
        rate(t.ab_found, t.ab),
        width,
    ]


def run_rounds(
    sims: int, seed: int, rho: float, before: bool, sizes: Sequence[int]
) -> list[list[str]]:
    """The interleaved rows of the table."""
    methods: list[tuple[str, Callable[[Rounds], Interval]]] = [("t-rounds (after)", t_rounds)]
    if before:
        methods.insert(0, ("bootstrap-rounds (before)", bootstrap_rounds))
    out = []
    for m in ROUND_MODELS:
        for n in sizes:
            tallies = {name: Tally() for name, _ in methods}
            rng = np.random.default_rng([seed, n, ROUND_MODELS.index(m)])
            for _ in range(sims):
                for truth in (1.0, rho):
                    rounds = draw_rounds(rng, m, n, truth)
                    for name, method in methods:
                        tallies[name].add(method(rounds), truth)
            out += [row(name, f"{n} rounds", m.name, tallies[name]) for name, _ in methods]
    return out


def run_separate(
    sims: int,
    seed: int,
    rho: float,
    before: bool,
    sizes: Sequence[int],
    between: float = DEFAULT_BETWEEN_RUNS,
) -> list[list[str]]:
    """The separate-run rows of the table."""
    out = []
    for m in RUN_MODELS:
        for k in sizes:
            floor_t, before_t, after_t = Tally(), Tally(), Tally()
            rng = np.random.default_rng([seed, k, 10 + RUN_MODELS.index(m)])
            for _ in range(sims):
                for truth in (1.0, rho):
                    a = draw_run(rng, m, k, 1000.0)
                    b = draw_run(rng, m, k, 1000.0 * truth)
                    if before:
                        floor_t.add(floor_separate(a, b), truth)
                        before_t.add(t_repeats(a, b, 0.0), truth)
                    after_t.add(t_repeats(a, b, between), truth)
            size = f"{k} container runs"
            if before:
                out.append(row("floor-separate (before #30)", size, m.name, floor_t))
                out.append(row("t-repeats (before #39)", size, m.name, before_t))
            out.append(row(f"t-repeats+between {between:g} (after)", size, m.name, after_t))
    return out


def family(sims: int, seed: int, rows: int = 27, rounds: int = 8) -> list[str]:
    """Shares of interleaved A/A comparisons of ``rows`` rows with a false verdict."""
    rng = np.random.default_rng([seed, 99])
    model = ROUND_MODELS[1]
    any_raw = any_bh = 0
    for _ in range(sims):
        compared = []
        for i in range(rows):
            got = round_t_interval(draw_rounds(rng, model, rounds, 1.0))
            key = RowKey("t", "blindsig", "CS", 0, "", f"op{i}", 1)
            said = verdict(got.ratio, got.low, got.high, 0.0)
            compared.append(
                RowComparison(
                    key, 1.0, 1.0, 6, 6, got.ratio, got.low, got.high, said, p_value=got.p_value
                )
            )
        any_raw += any(r.changed for r in compared)
        any_bh += any(r.changed for r in control_false_discoveries(compared, 0.05, 0.0))
    return [
        f"A/A, {rows} rows, {rounds} rounds, model {model.name}, threshold 0: share of "
        "comparisons with at least one false verdict",
        f"  each row's own interval: {rate(any_raw, sims)}",
        f"  Benjamini-Hochberg at 5 %: {rate(any_bh, sims)}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the flags, simulate, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sims", type=int, default=1000, help="experiments per cell and truth")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rho", type=float, default=1.10, help="true B/A of the A/B experiments")
    ap.add_argument("--no-before", action="store_true", help="skip the former methods")
    ap.add_argument("--family", action="store_true", help="also the 27-row A/A family")
    ap.add_argument("--rounds", default="3,5,8,10", help="rounds per session, comma-separated")
    ap.add_argument("--repeats", default="1,3,5", help="container runs per separate run")
    ap.add_argument(
        "--between-runs",
        type=float,
        default=DEFAULT_BETWEEN_RUNS,
        help="between-invocation spread of the after method (as invoke compare --between-runs)",
    )
    args = ap.parse_args(argv)
    if args.sims < 10:
        ap.error("--sims must be at least 10")
    from tabulate import tabulate

    sizes = [int(x) for x in args.rounds.split(",")]
    repeats = [int(x) for x in args.repeats.split(",")]
    lines = run_rounds(args.sims, args.seed, args.rho, not args.no_before, sizes)
    lines += run_separate(
        args.sims, args.seed, args.rho, not args.no_before, repeats, args.between_runs
    )
    headers = ["method", "n", "noise model", "coverage", "A/A false", "A/B found", "median ×/÷"]
    print(f"{args.sims} A/A and {args.sims} A/B (true ratio {args.rho}) experiments per cell")
    print(tabulate(lines, headers=headers, tablefmt="github", disable_numparse=True))
    if args.family:
        print()
        print("\n".join(family(max(args.sims // 5, 10), args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
