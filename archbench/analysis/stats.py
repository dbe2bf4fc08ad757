"""Statistics of one measured row, from its raw per-block samples.

Pure and engine-free. Inputs are the samples of one row: wall-clock ns per
timed block of ``ops_per_block`` operations. Quartiles use linear
interpolation between order statistics (Hyndman & Fan type 7, the default
of numpy, pandas and R; ``statistics.quantiles(method="inclusive")``); the
standard deviation is the sample one (n - 1). Flags follow hyperfine's and
pyperf's practice of warning rather than silently publishing: a row is
``noisy`` when its coefficient of variation exceeds ``cv_threshold`` —
unless the 95 % confidence interval of its median lies within ``ci_target``
(±2 % by default) of the median: a median known that well is not noisy,
whatever the spread of single blocks (pyperf and criterion judge the estimate,
not the samples) — and ``near_resolution`` when its median block is shorter than
``resolution_factor`` clock ticks.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_CV_THRESHOLD = 0.05
DEFAULT_RESOLUTION_FACTOR = 100
DEFAULT_CI_TARGET = 0.02
"""Relative half-width of the median's interval that makes a row trustworthy (±2 %);
the harness's ``--ci-target`` default (``harness/abh/suites/blindsig_median_ci.py``)."""


@dataclass(frozen=True)
class RowStats:
    """Summary of one row. Block times in ns; ``per_op_ns`` = median block / ops.

    ``thesis_ms`` is the appendix's figure: the median time of ``thesis_ops``
    (10) operations in ms, derived from the per-operation time so that rows
    measured with calibrated, larger blocks still read like the thesis.
    """

    n: int
    ops_per_block: int
    median_ns: float
    min_ns: float
    max_ns: float
    mean_ns: float
    stdev_ns: float
    q1_ns: float
    q3_ns: float
    cv: float
    per_op_ns: float
    ops_per_s: float
    thesis_ms: float
    flags: tuple[str, ...]
    ci_half_width: float | None = None
    """``max(median - low, high - median) / median`` of the 95 % interval of the
    median (:func:`median_interval`); None with fewer than 6 samples."""

    @property
    def iqr_ns(self) -> float:
        """Interquartile range Q3 - Q1 in ns."""
        return self.q3_ns - self.q1_ns


def summarize(
    samples_ns: Sequence[int | float],
    ops_per_block: int,
    *,
    clock_resolution_ns: float | None = None,
    cv_threshold: float = DEFAULT_CV_THRESHOLD,
    resolution_factor: float = DEFAULT_RESOLUTION_FACTOR,
    thesis_ops: int = 10,
    ci_target: float = DEFAULT_CI_TARGET,
) -> RowStats:
    """Summarize the block samples of one row.

    ``ci_target``: a row whose median's 95 % interval has a relative
    half-width within it is not flagged ``noisy`` (see the module docstring).

    With one sample, stdev, CV and the IQR are 0 and the row is flagged
    ``single_sample``. Every returned number is finite.

    Raises:
        ValueError: no samples, a sample that is not a positive finite
            number, or ``ops_per_block`` < 1.
    """
    if not samples_ns:
        raise ValueError("no samples")
    if ops_per_block < 1:
        raise ValueError(f"ops_per_block must be >= 1, got {ops_per_block}")
    xs = [float(x) for x in samples_ns]
    if any(not math.isfinite(x) or x <= 0 for x in xs):
        raise ValueError(f"samples must be positive finite ns, got {list(samples_ns)!r}")
    n = len(xs)
    median = statistics.median(xs)
    mean = statistics.fmean(xs)
    if n > 1:
        stdev = statistics.stdev(xs)
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    else:
        stdev, q1, q3 = 0.0, xs[0], xs[0]
    cv = stdev / mean
    per_op = median / ops_per_block
    flags = []
    interval = median_interval(xs)
    half_width = (
        max(median - interval[0], interval[1] - median) / median if interval is not None else None
    )
    if n == 1:
        flags.append("single_sample")
    if cv > cv_threshold and (half_width is None or half_width > ci_target):
        flags.append("noisy")
    if clock_resolution_ns and median < resolution_factor * clock_resolution_ns:
        flags.append("near_resolution")
    return RowStats(
        n=n,
        ops_per_block=ops_per_block,
        median_ns=median,
        min_ns=min(xs),
        max_ns=max(xs),
        mean_ns=mean,
        stdev_ns=stdev,
        q1_ns=q1,
        q3_ns=q3,
        cv=cv,
        per_op_ns=per_op,
        ops_per_s=1e9 / per_op,
        thesis_ms=per_op * thesis_ops / 1e6,
        flags=tuple(flags),
        ci_half_width=half_width,
    )


DEFAULT_CONFIDENCE = 0.95
"""The confidence level of every interval archbench reports unless told otherwise (95 %;
``--confidence`` of ``invoke compare``), written here only."""


def median_interval(
    samples: Sequence[int | float], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float] | None:
    """Distribution-free confidence interval of the median: two order statistics.

    The interval ``[x_(j), x_(n+1-j)]`` of the sorted samples covers the
    population median with probability ``1 - 2 P(B <= j - 1)``, ``B`` ~
    Binomial(n, 1/2) (Conover, *Practical Nonparametric Statistics*, 3rd ed.,
    §3.2; the interval pyperf and criterion do not need a normal model for).
    ``j`` is the largest rank that still reaches ``confidence``. Units are
    those of ``samples``. Returns None when no such interval exists: n = 5
    reaches only 93.75 %, so a 95 % interval needs at least 6 samples.

    Raises:
        ValueError: ``confidence`` outside (0, 1), or no samples.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    n = len(samples)
    if n == 0:
        raise ValueError("no samples")
    best = median_rank(n, confidence)
    if best is None:
        return None
    xs = sorted(float(x) for x in samples)
    return xs[best - 1], xs[n - best]


@functools.lru_cache(maxsize=4096)
def median_rank(n: int, confidence: float = DEFAULT_CONFIDENCE) -> int | None:
    """The largest rank ``j`` whose interval ``[x_(j), x_(n+1-j)]`` of ``n`` sorted samples
    reaches ``confidence`` (:func:`median_interval`, which it serves); None when none does
    (n < 6 at 95 %). Cached: a report over 10,000 runs asks it for some 300,000 rows of a
    few dozen sizes."""
    # scipy.special's binomial CDF (bdtr), not scipy.stats.binom: importing
    # scipy.stats takes seconds, which every `invoke bench` paid for its table.
    from scipy.special import bdtr

    best = None
    for j in range(1, n // 2 + 1):
        coverage = 1 - 2 * float(bdtr(j - 1, n, 0.5))
        if coverage < confidence:
            break
        best = j
    return best


def slowdown(emulated_per_op_ns: float, native_per_op_ns: float) -> float:
    """Emulation slowdown factor of one operation: emulated / native per-op time.

    Raises:
        ValueError: either time is not positive and finite.
    """
    for v in (emulated_per_op_ns, native_per_op_ns):
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"per-operation times must be positive and finite, got {v}")
    return emulated_per_op_ns / native_per_op_ns


@dataclass(frozen=True)
class Repeatability:
    """Spread within and between independent container runs of one row.

    ``within_cv``: median over runs of each run's coefficient of variation of
    its block times. ``between_cv``: coefficient of variation of the runs'
    median block times (pyperf reports the same two levels as "values" and
    "runs").
    """

    runs: int
    within_cv: float
    between_cv: float


def repeatability(samples_ns: Sequence[int | float], run_sizes: Sequence[int]) -> Repeatability:
    """Split pooled ``samples_ns`` into runs of ``run_sizes`` and measure both spreads.

    Raises:
        ValueError: the sizes do not add up to the number of samples, fewer
            than two runs, or a run without samples.
    """
    if sum(run_sizes) != len(samples_ns) or len(run_sizes) < 2 or min(run_sizes) < 1:
        raise ValueError(
            f"run sizes {list(run_sizes)} do not split {len(samples_ns)} samples into >= 2 runs"
        )
    runs, start = [], 0
    for size in run_sizes:
        runs.append([float(x) for x in samples_ns[start : start + size]])
        start += size
    cvs = [statistics.stdev(r) / statistics.fmean(r) if len(r) > 1 else 0.0 for r in runs]
    medians = [statistics.median(r) for r in runs]
    return Repeatability(
        runs=len(runs),
        within_cv=statistics.median(cvs),
        between_cv=statistics.stdev(medians) / statistics.fmean(medians),
    )


@dataclass(frozen=True)
class OrderStatistics:
    """Best, Nth best, mean, Nth worst and worst time per operation, in ns."""

    best: float
    nth_best: float
    mean: float
    nth_worst: float
    worst: float


def order_statistics(
    samples_ns: Sequence[int | float], ops_per_block: int, nth: int
) -> OrderStatistics:
    """Order statistics of one row as pycryptopp reported them (pyutil ``rep_bench``).

    Each sample (a block of ``ops_per_block`` operations, ns) is divided by the
    block size, the per-operation times are sorted, and the k-th smallest is
    the "k-th best". When fewer than ``nth`` samples exist the last one is
    used (with one sample all five figures are equal). The harness's sodium
    suite documents the same rule (``harness/abh/suites/sodium_rows.py``); pyutil chose
    k = n // 4 itself, we take ``nth`` from the suite's settings (3, as in the
    seed's 8-sample rows).

    Raises:
        ValueError: no samples, a sample <= 0, ``ops_per_block`` < 1 or ``nth`` < 1.
    """
    if not samples_ns:
        raise ValueError("order_statistics needs at least one sample")
    if any(not math.isfinite(s) or s <= 0 for s in samples_ns):
        raise ValueError("order_statistics: samples must be positive finite ns values")
    if ops_per_block < 1 or nth < 1:
        raise ValueError(f"ops_per_block ({ops_per_block}) and nth ({nth}) must be >= 1")
    per_op = sorted(s / ops_per_block for s in samples_ns)
    k = min(nth, len(per_op))
    return OrderStatistics(
        best=per_op[0],
        nth_best=per_op[k - 1],
        mean=math.fsum(per_op) / len(per_op),
        nth_worst=per_op[-k],
        worst=per_op[-1],
    )
