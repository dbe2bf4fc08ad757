"""Harness vs bare loop: a paired ratio with its confidence interval (issue 12).

``benchmarks/harness_overhead.py`` interleaves the harness and a bare C loop of the
same calls in rounds; each round gives one ratio per row (harness per-op time / bare
per-op time, each the median of the round's blocks). Rounds are the independent units,
so the interval resamples them.

Pure: numpy and scipy, no docker.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import scipy.stats as sps

TRIM: Final = 0.1
"""Fraction cut from each end of the log ratios (``scipy.stats.trim_mean``)."""
RESAMPLES: Final = 9999
SEED: Final = 12


@dataclass(frozen=True)
class RatioEstimate:
    """A ratio with its 95 % interval.

    Attributes:
        ratio: exp of the 10 %-trimmed mean of the log ratios (a trimmed geometric mean).
        low, high: the 95 % BCa bootstrap interval of it; NaN below 3 rounds.
        rounds: how many per-round ratios it rests on.
    """

    ratio: float
    low: float
    high: float
    rounds: int

    @property
    def half_width(self) -> float:
        """Half the interval's width relative to the ratio (0.03 = ±3 %); NaN when unknown."""
        return (self.high - self.low) / 2 / self.ratio


def _trimmed_log_mean(logs: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(sps.trim_mean(logs, TRIM, axis=axis))


def paired_ratio_interval(ratios: Sequence[float], confidence: float = 0.95) -> RatioEstimate:
    """The trimmed geometric mean of per-round ratios and its bootstrap interval.

    Formula: ``exp(trim_mean(log r, 0.1))``; interval: ``scipy.stats.bootstrap`` (BCa,
    9999 resamples of the rounds, fixed seed), exponentiated. Logs make the interval
    of a ratio symmetric in "x % faster / slower"; trimming keeps one disturbed round
    (another process's burst) from moving it.

    Args:
        ratios: one harness/bare ratio per round, each > 0.
        confidence: interval level.

    Raises:
        ValueError: no ratio, or a ratio that is not a positive finite number.
    """
    values = np.asarray(list(ratios), dtype=float)
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"ratios must be positive finite numbers, got {list(ratios)[:5]}")
    logs = np.log(values)
    center = math.exp(float(_trimmed_log_mean(logs)))
    if values.size < 3 or np.ptp(logs) == 0:
        spread = math.nan if values.size < 3 else center
        return RatioEstimate(center, spread, spread, int(values.size))
    res = sps.bootstrap(
        (logs,),
        _trimmed_log_mean,
        confidence_level=confidence,
        n_resamples=RESAMPLES,
        method="BCa",
        rng=np.random.default_rng(SEED),
    )
    low, high = res.confidence_interval
    return RatioEstimate(center, math.exp(float(low)), math.exp(float(high)), int(values.size))


POOLED_RESAMPLES: Final = 2999


def pooled_ratio_interval(
    harness: Sequence[float], bare: Sequence[float], confidence: float = 0.95
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
