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
