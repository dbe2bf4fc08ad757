"""The ratio B/A of two images measured in interleaved rounds, with its interval over rounds.

An interleaved session measures A and B in alternating rounds (A B B A …) on one engine,
so whatever the machine does in a round (another job, a frequency change, a noisy
neighbour) lands on both. The unit of the experiment is therefore the round, not the
block: blocks inside one round share that round's machine and are not independent
samples of the comparison.

The statistic is the geometric mean over rounds of the per-round ratio of medians,
``exp(mean_r log(median(B_r) / median(A_r)))``: a drift that multiplies both sides of a
round cancels in its ratio, and the mean of logs treats a 10 % change up and down alike.

Its interval is a two-stage (hierarchical) bootstrap, paired at the top: resample rounds
with replacement, each round bringing its A and its B; inside every drawn round, resample
A's blocks and B's blocks with replacement; take the statistic; the percentile interval
of ``n_resamples`` such replicates. This is the resampling of Kalibera & Jones,
"Rigorous Benchmarking in Reasonable Time" (ISMM 2013, §5: resample with replacement at
every level of the experiment), with the pairing of a paired bootstrap at the level where
A and B share a cause of variation. Resampling the lower level as well adds the within-
round variance a second time, which overstates the variance slightly (Davison & Hinkley,
*Bootstrap Methods and their Application*, 1997, §3.8): the conservative side, and the
one that keeps an interval honest with the few rounds (3 to 10) an interleaved session
affords, where resampling rounds alone would return the range of three numbers.

Rows of one round are resampled as per-operation times (ns), so rounds whose blocks were
calibrated to different sizes still compare. The seed is fixed: the same rounds always
give the same interval. numpy is imported inside the function (this module is imported
by :mod:`archbench.analysis.comparison`, which ``invoke bench`` loads).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Final

MIN_ROUNDS: Final = 3
"""Fewest paired rounds for an interval over rounds: two rounds resample to three values."""
MIN_BLOCKS: Final = 1
"""Fewest blocks per side in a round (one block is that round's median)."""

Round = tuple[Sequence[float], Sequence[float]]
"""One round: A's and B's per-operation times in ns."""


def _check(rounds: Sequence[Round]) -> None:
    if len(rounds) < MIN_ROUNDS:
        raise ValueError(f"{len(rounds)} paired rounds, need at least {MIN_ROUNDS}")
    for i, (a, b) in enumerate(rounds, 1):
        for name, xs in (("A", a), ("B", b)):
            if len(xs) < MIN_BLOCKS:
                raise ValueError(f"round {i}: {name} has no blocks")
            if any(not math.isfinite(x) or x <= 0 for x in xs):
                raise ValueError(f"round {i}: {name}'s times must be positive finite ns")


def round_ratios(rounds: Sequence[Round]) -> list[float]:
    """``median(B_r) / median(A_r)`` of every round, in round order (dimensionless).

    Raises:
        ValueError: as :func:`round_ratio_interval`.
    """
    _check(rounds)
    return [statistics.median(b) / statistics.median(a) for a, b in rounds]


def round_ratio(rounds: Sequence[Round]) -> float:
    """The geometric mean of :func:`round_ratios`: B/A with drift common to a round removed.

    Raises:
        ValueError: as :func:`round_ratio_interval`.
    """
    ratios = round_ratios(rounds)
    return math.exp(math.fsum(math.log(r) for r in ratios) / len(ratios))


def round_ratio_interval(
    rounds: Sequence[Round],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``(ratio, low, high)``: :func:`round_ratio` and its two-stage bootstrap interval.

    ``rounds``: one ``(a_ns, b_ns)`` pair per round, per-operation times in ns, any number
    of blocks per side. The interval is the percentile interval at ``confidence`` of
    ``n_resamples`` replicates (module docstring); ``low <= ratio <= high`` always holds.

    Raises:
        ValueError: fewer than :data:`MIN_ROUNDS` rounds, a side of a round without
            blocks, a time that is not positive and finite, or ``confidence`` outside
            (0, 1).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    ratio = round_ratio(rounds)
    import numpy as np

    rng = np.random.default_rng(seed)
    n_rounds = len(rounds)
    # Stage 2 first: for every round, n_resamples bootstrap medians of each side; a
    # replicate then draws rounds (stage 1) and, for each draw, one of its round's
    # pre-drawn stage-2 replicates at random, so a round drawn twice gets two.
    inner = np.empty((n_rounds, n_resamples))
    for r, (a, b) in enumerate(rounds):
        xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        ia = rng.integers(0, len(xa), size=(n_resamples, len(xa)))
        ib = rng.integers(0, len(xb), size=(n_resamples, len(xb)))
        inner[r] = np.log(np.median(xb[ib], axis=1)) - np.log(np.median(xa[ia], axis=1))
    drawn = rng.integers(0, n_rounds, size=(n_resamples, n_rounds))
    which = rng.integers(0, n_resamples, size=(n_resamples, n_rounds))
    replicates = np.exp(inner[drawn, which].mean(axis=1))
    alpha = (1 - confidence) / 2
    low, high = np.quantile(replicates, [alpha, 1 - alpha])
    return ratio, min(float(low), ratio), max(float(high), ratio)
