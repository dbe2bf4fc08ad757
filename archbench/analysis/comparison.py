"""Compare two runs row by row: the ratio B/A of per-operation times and a verdict.

Pure and engine-free, like the reports. For every row both runs measured
(same target, suite, scheme, key size or parameter, operation and process
count), the ratio of the median per-operation times B/A comes with a
bootstrap confidence interval: both rows' per-operation samples are
resampled independently (``scipy.stats.bootstrap``, percentile method, a
fixed seed so that the same inputs print the same interval) and the
statistic is ``median(B) / median(A)``.

The verdict follows ``pyperf compare_to`` and ``asv compare``: a row is
``slower`` (or ``faster``) only when the whole interval lies above (below) 1
*and* the ratio differs from 1 by more than ``threshold`` (default 5 %, the
noise floor the issue tracker measured between identical runs on a 2-core
cloud VM); otherwise ``no significant change``. Rows with fewer than
:data:`MIN_SAMPLES` samples on either side, or invalid on either side, get
no verdict (``too few samples``, ``invalid``): an interval from two samples
would be a guess.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from archbench.result import Result, Row

if TYPE_CHECKING:
    import numpy as np

Verdict = Literal["faster", "slower", "no significant change", "too few samples", "invalid"]

MIN_SAMPLES: Final = 3
"""Fewest per-operation samples per side for an interval and a verdict."""
DEFAULT_CONFIDENCE: Final = 0.95
DEFAULT_THRESHOLD: Final = 0.05
DEFAULT_RESAMPLES: Final = 2000


@dataclass(frozen=True, order=True)
class RowKey:
    """What makes two rows of different runs the same measurement."""

    target: str
    suite: str
    scheme: str
    key_bits: int
    param: str
    operation: str
    processes: int

    @property
    def label(self) -> str:
        """Human-readable row name, e.g. ``blindsig RSA-2048 key generation``."""
        scheme = f"{self.scheme}-{self.key_bits}" if self.key_bits else self.scheme
        param = f" {self.param}" if self.param else ""
        procs = f" ×{self.processes}" if self.processes > 1 else ""
        return f"{self.suite} {scheme}{param} {self.operation.replace('_', ' ')}{procs}"


@dataclass(frozen=True)
class RowComparison:
    """One row of a comparison. Times are per operation in ns.

    ``ratio`` is ``b_ns / a_ns`` (above 1: B is slower); ``low``/``high``
    bound its confidence interval, NaN when no interval was computed.
    """

    key: RowKey
    a_ns: float
    b_ns: float
    n_a: int
    n_b: int
    ratio: float
    low: float
    high: float
    verdict: Verdict


def row_key(target: str, row: Row) -> RowKey:
    """The :class:`RowKey` of ``row`` measured on ``target``."""
    return RowKey(
        target=target,
        suite=row.suite,
        scheme=row.scheme,
        key_bits=row.key_bits or 0,
        param=row.param or "",
        operation=row.operation,
        processes=row.processes,
    )


def per_op_ns(row: Row) -> list[float]:
    """The row's samples as ns per operation (block time / ops per block)."""
    return [s / row.ops_per_block for s in row.samples_ns]


def ratio_interval(
    a_ns: Sequence[float],
    b_ns: Sequence[float],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``median(b) / median(a)`` with its bootstrap interval: ``(ratio, low, high)``.

    The two samples are resampled independently (they come from different
    runs); percentile interval at ``confidence``.

    Raises:
        ValueError: fewer than :data:`MIN_SAMPLES` values on a side, or a
            value that is not positive and finite.
    """
    for name, xs in (("a", a_ns), ("b", b_ns)):
        if len(xs) < MIN_SAMPLES:
            raise ValueError(f"{name}: {len(xs)} samples, need at least {MIN_SAMPLES}")
        if any(not math.isfinite(x) or x <= 0 for x in xs):
            raise ValueError(f"{name}: samples must be positive finite ns")
    ratio = statistics.median(b_ns) / statistics.median(a_ns)
    if len(set(a_ns)) == 1 and len(set(b_ns)) == 1:
        return ratio, ratio, ratio  # no spread to resample (exact counts, say)
    # Imported here: scipy takes about a second to import, which `invoke bench`
    # would otherwise pay (run.archives -> gnunet_perf_tables -> compare_tables -> here).
    import numpy as np
    from scipy import stats as sps

    def statistic(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.median(b, axis=axis) / np.median(a, axis=axis))

    res = sps.bootstrap(
        (np.asarray(a_ns, dtype=float), np.asarray(b_ns, dtype=float)),
        statistic,
        vectorized=True,
        paired=False,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    low = float(res.confidence_interval.low)
    high = float(res.confidence_interval.high)
    return ratio, min(low, ratio), max(high, ratio)


def verdict(ratio: float, low: float, high: float, threshold: float = DEFAULT_THRESHOLD) -> Verdict:
    """``slower``/``faster`` when the interval excludes 1 and the change exceeds ``threshold``.

    Raises:
        ValueError: ``threshold`` is negative or not finite.
    """
    if not math.isfinite(threshold) or threshold < 0:
        raise ValueError(f"threshold must be a fraction >= 0, got {threshold}")
    if low > 1 and ratio > 1 + threshold:
        return "slower"
    if high < 1 and ratio < 1 / (1 + threshold):
        return "faster"
    return "no significant change"


def _rows(result: Result) -> dict[RowKey, Row]:
    return {row_key(result.target.name, r): r for r in result.harness.rows}


def pair_targets(a: Sequence[Result], b: Sequence[Result]) -> list[tuple[Result, Result]]:
    """Pairs of results to compare: same target name; or, when each side has exactly
    one target and the names differ (``amd64-bookworm`` vs ``amd64-trixie``), those two.
    """
    by_name = {r.target.name: r for r in b}
    pairs = [(r, by_name[r.target.name]) for r in a if r.target.name in by_name]
    if not pairs and len(a) == 1 and len(b) == 1:
        pairs = [(a[0], b[0])]
    return pairs


def compare(
    a: Sequence[Result],
    b: Sequence[Result],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    threshold: float = DEFAULT_THRESHOLD,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> list[RowComparison]:
    """Compare every row measured in both ``a`` and ``b`` (see :func:`pair_targets`).

    Rows are keyed by A's target name. Rows only one side has are left out.
    """
    out: list[RowComparison] = []
    for ra, rb in pair_targets(a, b):
        rows_b = {row_key(ra.target.name, r): r for r in rb.harness.rows}
        for key, row_a in sorted(_rows(ra).items()):
            row_b = rows_b.get(key)
            if row_b is None:
                continue
            out.append(_compare_rows(key, row_a, row_b, confidence, threshold, n_resamples))
    return out


def _compare_rows(
    key: RowKey, row_a: Row, row_b: Row, confidence: float, threshold: float, n_resamples: int
) -> RowComparison:
    xa, xb = per_op_ns(row_a), per_op_ns(row_b)
    ratio = statistics.median(xb) / statistics.median(xa)
    low = high = float("nan")
    result: Verdict
    if not (row_a.valid and row_b.valid):
        result = "invalid"
    elif min(len(xa), len(xb)) < MIN_SAMPLES:
        result = "too few samples"
    else:
        ratio, low, high = ratio_interval(xa, xb, confidence=confidence, n_resamples=n_resamples)
        result = verdict(ratio, low, high, threshold)
    return RowComparison(
        key=key,
        a_ns=statistics.median(xa),
        b_ns=statistics.median(xb),
        n_a=len(xa),
        n_b=len(xb),
        ratio=ratio,
        low=low,
        high=high,
        verdict=result,
    )


def unmatched(a: Sequence[Result], b: Sequence[Result]) -> tuple[int, int]:
    """How many rows of ``a`` and of ``b`` :func:`compare` leaves out for want of a partner."""
    only_a = only_b = 0
    pairs = pair_targets(a, b)
    paired_a = {id(ra) for ra, _ in pairs}
    paired_b = {id(rb) for _, rb in pairs}
    for ra, rb in pairs:
        keys_a = set(_rows(ra))
        keys_b = {row_key(ra.target.name, r) for r in rb.harness.rows}
        only_a += len(keys_a - keys_b)
        only_b += len(keys_b - keys_a)
    only_a += sum(len(r.harness.rows) for r in a if id(r) not in paired_a)
    only_b += sum(len(r.harness.rows) for r in b if id(r) not in paired_b)
    return only_a, only_b


def counts(rows: Iterable[RowComparison]) -> dict[Verdict, int]:
    """How many rows got each verdict (only verdicts that occur)."""
    tally: dict[Verdict, int] = {}
    for r in rows:
        tally[r.verdict] = tally.get(r.verdict, 0) + 1
    return tally
