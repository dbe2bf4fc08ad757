"""Confidence interval of a median from order statistics, and the adaptive stopping rule.

Standard library only (``math.comb`` and exact fractions): this runs inside the
benchmark image. The host computes the same interval with scipy
(``archbench.analysis.stats.median_interval``); the unit tests hold the two against each
other, so the rule the harness stops on and the interval the reports print agree.

The interval ``[x_(j), x_(n+1-j)]`` of ``n`` sorted samples covers the
population median with probability ``1 - 2 P(B <= j - 1)``, ``B`` ~
Binomial(n, 1/2), whatever the distribution of the samples (Conover,
*Practical Nonparametric Statistics*, 3rd ed., §3.2). ``j`` is the largest rank
that still reaches the confidence level. A 95 % interval needs at least 6
samples (n = 5 reaches only 93.75 %).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from fractions import Fraction
from math import comb

DEFAULT_CONFIDENCE = 0.95
DEFAULT_CI_TARGET = 0.02
"""Default relative half-width of the interval the adaptive rule stops at (±2 %)."""
MIN_SAMPLES_95 = 6
"""Fewest samples with a 95 % order-statistic interval of the median."""


def coverage(n: int, j: int) -> Fraction:
    """Exact coverage ``1 - 2 P(B <= j - 1)`` of ``[x_(j), x_(n+1-j)]``, B ~ Binomial(n, 1/2).

    Raises:
        ValueError: ``j`` outside ``1 .. (n + 1) // 2``.
    """
    if not 1 <= j <= (n + 1) // 2:
        raise ValueError(f"rank j must lie in 1..{(n + 1) // 2} for n = {n}, got {j}")
    tail = sum(comb(n, i) for i in range(j))
    return 1 - Fraction(2 * tail, 2**n)


def median_rank(n: int, confidence: float = DEFAULT_CONFIDENCE) -> int | None:
    """The largest rank ``j`` (1-based) whose interval reaches ``confidence``; None if none.

    Raises:
        ValueError: ``confidence`` outside (0, 1) or ``n`` < 0.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    level = Fraction(confidence)
    best = None
    for j in range(1, n // 2 + 1):
        if coverage(n, j) < level:
            break
        best = j
    return best


def median_interval(
    samples: Sequence[int | float], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float] | None:
    """Distribution-free interval ``(low, high)`` of the median, in the samples' unit.

    None when ``len(samples)`` is too small to reach ``confidence``.

    Raises:
        ValueError: no samples, or ``confidence`` outside (0, 1).
    """
    if not samples:
        raise ValueError("no samples")
    j = median_rank(len(samples), confidence)
    if j is None:
        return None
    xs = sorted(float(x) for x in samples)
    return xs[j - 1], xs[len(xs) - j]


def relative_half_width(
    samples: Sequence[int | float], confidence: float = DEFAULT_CONFIDENCE
) -> float | None:
    """Largest distance of the interval's ends from the median, as a fraction of the median.

    ``max(median - low, high - median) / median``: the "±" a reader takes from
    "6.08 ms ±1.4 %". None when there is no interval yet.

    Raises:
        ValueError: no samples, a median <= 0, or ``confidence`` outside (0, 1).
    """
    interval = median_interval(samples, confidence)
    if interval is None:
        return None
    median = statistics.median(float(x) for x in samples)
    if median <= 0:
        raise ValueError(f"median must be > 0, got {median}")
    low, high = interval
    return max(median - low, high - median) / median


def target_reached(
    samples: Sequence[int | float],
    target: float,
    min_repetitions: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> bool:
    """The adaptive stopping rule for one row.

    True when at least ``min_repetitions`` samples are taken and the
    ``confidence`` interval of their median lies within ``target`` (a
    fraction: 0.02 = ±2 %) of the median, see relative_half_width().

    Raises:
        ValueError: ``target`` not in (0, 1), or as relative_half_width().
    """
    if not 0 < target < 1:
        raise ValueError(f"target must lie in (0, 1), got {target}")
    if len(samples) < max(min_repetitions, 1):
        return False
    width = relative_half_width(samples, confidence)
    return width is not None and width <= target
