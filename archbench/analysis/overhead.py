"""Harness vs bare loop: a paired ratio with its confidence interval (issue 12).

``benchmarks/harness_overhead.py`` interleaves the harness and a bare C loop of the
same calls in rounds; each round gives one ratio per row (harness per-op time / bare
per-op time, each the median or fastest of the round's blocks). Rounds are the
independent units. On a VM the per-round ratios are a contaminated distribution: most
rounds agree within a percent or two, but a neighbour's burst of several seconds can
slow one program's whole run by 30-40 % for a streak of rounds (2026-12-01, quiet
machine: the bare loop's CS signing at 9.9 µs instead of 6.9 µs in 7 of 40 rounds
in a row). The estimate is therefore the median of the per-round ratios with the
distribution-free order-statistic interval archbench uses for every median
(:func:`archbench.analysis.stats.median_interval`), which a streak that size does not move,
where a 10 %-trimmed mean with a bootstrap interval did (0.96 with ±4-6 % on rows
whose rounds mostly read 1.00).

Pure: numpy and scipy, no docker.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import scipy.stats as sps

from archbench.analysis.stats import DEFAULT_CONFIDENCE, median_interval

SEED: Final = 12


@dataclass(frozen=True)
class RatioEstimate:
    """A ratio with its 95 % interval.

    Attributes:
        ratio: the point estimate (a median ratio).
        low, high: its 95 % interval; NaN when too few samples give one (6 for a median).
        rounds: how many samples (rounds, or keys for pooled key generation) it rests on.
    """

    ratio: float
    low: float
    high: float
    rounds: int

    @property
    def half_width(self) -> float:
        """Half the interval's width relative to the ratio (0.03 = ±3 %); NaN when unknown."""
        return (self.high - self.low) / 2 / self.ratio


def paired_ratio_interval(
    ratios: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> RatioEstimate:
    """The median of per-round ratios and its distribution-free interval.

    Formula: ``median(r)``; interval: the order statistics ``[r_(j), r_(n+1-j)]`` of
    :func:`archbench.analysis.stats.median_interval` (Conover §3.2), which need no model of the
    ratios' distribution and at least 6 rounds for 95 %.

    Args:
        ratios: one harness/bare ratio per round, each > 0.
        confidence: interval level.

    Raises:
        ValueError: no ratio, or a ratio that is not a positive finite number.
    """
    values = [float(x) for x in ratios]
    if not values or not all(math.isfinite(x) and x > 0 for x in values):
        raise ValueError(f"ratios must be positive finite numbers, got {values[:5]}")
    center = float(np.median(values))
    interval = median_interval(values, confidence)
    if interval is None:
        return RatioEstimate(center, math.nan, math.nan, len(values))
    return RatioEstimate(center, interval[0], interval[1], len(values))


POOLED_RESAMPLES: Final = 2999


def pooled_ratio_interval(
    harness: Sequence[float], bare: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> RatioEstimate:
    """median(harness) / median(bare) over all samples pooled, with a two-sample interval.

    For key generation: its time varies from key to key by tens of percent (the prime
    search), far more than from round to round, so a per-round ratio of a few keys is
    mostly key-to-key noise and pairing by round gains nothing. Every key of each
    program is one independent sample instead. Interval: ``scipy.stats.bootstrap`` over
    the two samples independently (percentile method, :data:`POOLED_RESAMPLES`
    resamples, fixed seed) of ``log median(h) - log median(b)``, exponentiated.
    ``rounds`` of the result is the smaller sample's size.

    Args:
        harness, bare: per-operation times (any one unit, e.g. ns), each > 0.
        confidence: interval level.

    Raises:
        ValueError: an empty sample or a value that is not a positive finite number.
    """
    h = np.asarray(list(harness), dtype=float)
    b = np.asarray(list(bare), dtype=float)
    for name, values in (("harness", h), ("bare", b)):
        if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
            raise ValueError(f"{name} times must be positive finite numbers")
    center = float(np.median(h) / np.median(b))
    n = int(min(h.size, b.size))
    if n < 3:
        return RatioEstimate(center, math.nan, math.nan, n)

    def log_ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.log(np.median(x, axis=axis)) - np.log(np.median(y, axis=axis)))

    res = sps.bootstrap(
        (h, b),
        log_ratio,
        confidence_level=confidence,
        n_resamples=POOLED_RESAMPLES,
        method="percentile",
        batch=200,
        rng=np.random.default_rng(SEED),
    )
    low, high = res.confidence_interval
    return RatioEstimate(center, math.exp(float(low)), math.exp(float(high)), n)


def samples_for_half_width(estimate: RatioEstimate, samples: int, goal: float) -> float:
    """Samples per program for a half-width of ``goal`` (0.03 = ±3 %), by 1/sqrt(n) scaling.

    ``samples * (half_width / goal) ** 2``: an interval's width shrinks with the square
    root of the sample size. NaN when the estimate has no interval.
    """
    return float(samples * (estimate.half_width / goal) ** 2)
