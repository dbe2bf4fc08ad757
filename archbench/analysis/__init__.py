"""analysis."""

from __future__ import annotations

from archbench.analysis.compare import RowComparison, counts
from archbench.analysis.counting import median_per_op, spread
from archbench.analysis.noise import noise_cause_text
from archbench.analysis.stats import (
    DEFAULT_CI_TARGET,
    DEFAULT_CV_THRESHOLD,
    DEFAULT_RESOLUTION_FACTOR,
    median_interval,
    order_statistics,
    repeatability,
    slowdown,
    summarize,
)

__all__ = [
    "DEFAULT_CI_TARGET",
    "DEFAULT_CV_THRESHOLD",
    "DEFAULT_RESOLUTION_FACTOR",
    "RowComparison",
    "counts",
    "median_interval",
    "median_per_op",
    "noise_cause_text",
    "order_statistics",
    "repeatability",
    "slowdown",
    "spread",
    "summarize",
]
