"""Change points over the whole series of a row (``invoke history``), not pair by pair.

:mod:`archbench.analysis.steps` compares each version with the one before it, so a slow
creep over many versions, or a step hidden by the noise of one pair, is not found. Here
each row's whole series is segmented at once, as asv's ``step_detect`` fits a piecewise
constant function to a benchmark's history: PELT (Killick, Fearnhead & Eckley, JASA 107,
2012; the ``ruptures`` implementation, Truong, Oudre & Vayatis 2020) with the ``l2``
cost on the log level of every version and the penalty of the Schwarz (BIC) criterion
for a change in mean of Gaussian noise with known variance, ``2 · σ² · ln n`` per change
point (Yao 1988), ``σ`` the noise of one version's log level. A change point is kept
only where its segments differ by more than the minimum effect.

* **counts** (instructions per operation): one value per version; ``σ`` is half the
  largest relative block-to-block range of the series, at least half
  :data:`archbench.analysis.comparison.MIN_COUNT_EFFECT`; the minimum effect is
  the larger of that range and what the row's kind allows
  (:func:`archbench.analysis.counting.count_effect`: 0.1 % exact, 1 % or three times
  the range varying); a random row (range above 5 %, random keys) has no change point;
  a series of ``exact+extra`` rows (a constant with whole extra events in some blocks)
  is segmented on its constants (:func:`archbench.analysis.counting.count_constants`),
  as an exact one;
* **times** of versions measured in one interleaved session: the log median of every
  version in every round, a two-way layout. Each round's mean over the versions is
  taken out (a busy round is busy for every version), and ``σ²`` of a version's mean
  over ``R`` rounds is the residual variance of the layout (``(V-1)(R-1)`` degrees of
  freedom) divided by ``R``; the minimum effect is ``--threshold`` (5 %). Versions of
  another session, or with fewer than two rounds, are left out of a timed series.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from archbench.analysis.comparison import (
    DEFAULT_THRESHOLD,
    MIN_COUNT_EFFECT,
    round_samples,
)
from archbench.analysis.counting import Count, count_effect, count_reading
from archbench.analysis.counting import spread as count_spread
from archbench.result import Metric, Result, RowKey, merge_repeats, row_key

MIN_POINTS: Final = 3
"""Fewest versions in a series for change points (with two, a step is the pair's)."""


@dataclass(frozen=True)
class ChangePoint:
    """The series changes level between ``before`` and ``after`` (labels of neighbours).

    ``ratio``: the geometric mean of the segment after over that of the segment before
    (above 1: slower, more instructions); ``index``: the first version of the new segment.
    """

    index: int
    before: str
    after: str
    ratio: float
    metric: Metric


def segment(log_levels: Sequence[float], sd: float, min_effect: float) -> list[int]:
    """The indices where a new segment of ``log_levels`` starts (PELT, module docstring).

    ``log_levels``: one natural-log level per point, in series order; ``sd``: the noise
    of one point's log level (> 0); ``min_effect``: the smallest relative change between
    neighbouring segments kept (a fraction). Returns [] for fewer than
    :data:`MIN_POINTS` points.

    Raises:
        ValueError: ``sd`` not positive and finite, or a level that is not finite.
    """
    if not math.isfinite(sd) or sd <= 0:
        raise ValueError(f"noise must be a positive fraction, got {sd}")
    if any(not math.isfinite(x) for x in log_levels):
        raise ValueError("log levels must be finite")
    n = len(log_levels)
    if n < MIN_POINTS:
        return []
    import numpy as np
    import ruptures

    signal = np.asarray(log_levels, dtype=float).reshape(-1, 1)
    algo = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(signal)
    ends = algo.predict(pen=2 * sd * sd * math.log(n))
    starts = [0, *ends[:-1]]
    kept: list[int] = []
    # Merge segments whose levels differ by less than the minimum effect.
    for start, end in zip(starts[1:], ends[1:], strict=True):
        left = kept[-1] if kept else 0
        before = statistics.fmean(log_levels[left:start])
        after = statistics.fmean(log_levels[start:end])
        if abs(after - before) > math.log1p(min_effect):
            kept.append(start)
    return kept


def _points(
    starts: list[int], labels: Sequence[str], logs: Sequence[float], metric: Metric
) -> list[ChangePoint]:
    bounds = [0, *starts, len(logs)]
    out = []
    for i, start in enumerate(starts, 1):
        before = statistics.fmean(logs[bounds[i - 1] : start])
        after = statistics.fmean(logs[start : bounds[i + 1]])
        out.append(
            ChangePoint(start, labels[start - 1], labels[start], math.exp(after - before), metric)
        )
    return out


def count_changes(
    labels: Sequence[str], values: Sequence[float], spreads: Sequence[float]
) -> list[ChangePoint]:
    """Change points of a counted series: instructions per operation and relative spreads.

    Raises:
        ValueError: lengths differ, or a value that is not positive and finite.
    """
    if not len(labels) == len(values) == len(spreads):
        raise ValueError("labels, values and spreads differ in length")
    if any(not math.isfinite(v) or v <= 0 for v in values):
        raise ValueError("instructions per operation must be positive and finite")
    bound = count_effect(max(spreads, default=0.0), MIN_COUNT_EFFECT)
    if bound is None:
        return []  # a random count (random keys): a draw per version, no level to change
    effect = max([bound, *spreads])
    logs = [math.log(v) for v in values]
    return _points(segment(logs, effect / 2, effect), labels, logs, "instructions")


def _settled(constants: Sequence[tuple[float, float]]) -> list[float]:
    """One value per ``exact+extra`` constant range (:func:`archbench.analysis.counting.
    count_constants`): a known constant as it is, an open one (a version that caught the
    extra event in every block or in none) the end nearest the nearest known one, so an
    unknown event count never makes a change point of its own."""
    known = [(i, lo) for i, (lo, hi) in enumerate(constants) if lo == hi]
    out = []
    for i, (lo, hi) in enumerate(constants):
        if lo == hi or not known:
            out.append(hi)
            continue
        _, ref = min(known, key=lambda k: abs(k[0] - i))
        out.append(min((lo, hi), key=lambda v: abs(math.log(v / ref))))
    return out


def time_changes(
    labels: Sequence[str], rounds: Sequence[Sequence[float]], threshold: float = DEFAULT_THRESHOLD
) -> list[ChangePoint]:
    """Change points of a timed series of one interleaved session.

    ``rounds[v][r]``: version ``v``'s median ns per operation in round ``r`` (the same
    rounds for every version, at least two). Returns [] when the residual variance is 0.

    Raises:
        ValueError: versions with different numbers of rounds, fewer than two rounds, or
            a time that is not positive and finite.
    """
    if len(labels) != len(rounds):
        raise ValueError("labels and rounds differ in length")
    if len({len(r) for r in rounds}) > 1 or (rounds and len(rounds[0]) < 2):
        raise ValueError("every version needs the same rounds, at least two")
    if any(not math.isfinite(x) or x <= 0 for r in rounds for x in r):
        raise ValueError("times must be positive finite ns")
    n_versions = len(rounds)
    if n_versions < MIN_POINTS:
        return []
    n_rounds = len(rounds[0])
    logs = [[math.log(x) for x in r] for r in rounds]
    round_mean = [statistics.fmean(logs[v][r] for v in range(n_versions)) for r in range(n_rounds)]
    version_mean = [statistics.fmean(row) for row in logs]
    grand = statistics.fmean(version_mean)
    resid = math.fsum(
        (logs[v][r] - version_mean[v] - round_mean[r] + grand) ** 2
        for v in range(n_versions)
        for r in range(n_rounds)
    )
    var = resid / ((n_versions - 1) * (n_rounds - 1))
    if var <= 0:
        return []
    sd = math.sqrt(var / n_rounds)
    return _points(segment(version_mean, sd, threshold), labels, version_mean, "time")


def whole_series(
    runs: Sequence[tuple[str, Sequence[Result]]], *, threshold: float = DEFAULT_THRESHOLD
) -> list[tuple[str, RowKey, ChangePoint]]:
    """Every change point of every row and architecture across ``runs``, in series order.

    ``runs``: (label, that run's results as stored) in series order, as for
    :func:`archbench.analysis.series`. Counts: every run that counted the row. Times:
    the runs of the first run's interleaved session that measured the row in the same
    rounds (at least two). Returns ``(architecture, row, change point)``; the row's
    ``target`` is the architecture.

    Raises:
        ResultsError: a run's repeats of one target measured different rows.
    """
    counted: dict[tuple[str, RowKey], list[tuple[str, Count]]] = {}
    timed: dict[tuple[str, RowKey], list[tuple[str, dict[int, float]]]] = {}
    session = None
    for label, results in runs:
        for res in merge_repeats([r for r in results if r.metric == "instructions"]):
            for row in res.harness.rows:
                if row.valid and row.instructions:
                    value = statistics.median(row.instructions) / row.ops_per_block
                    key = row_key(res.target.arch, row)
                    counted.setdefault((res.target.arch, key), []).append(
                        (
                            label,
                            Count(
                                value,
                                count_spread(row.instructions),
                                tuple(row.instructions),
                                row.ops_per_block,
                            ),
                        )
                    )
        files = [r for r in results if r.metric == "time" and r.execution is not None]
        ids = {f.execution.interleaved for f in files if f.execution is not None}
        if len(ids) != 1 or None in ids:
            continue
        (this,) = ids
        session = session or this
        if this != session:
            continue
        for res in merge_repeats(files):
            arch = res.target.arch
            mine = [f for f in files if f.target.arch == arch]
            for row in res.harness.rows:
                if not row.valid:
                    continue
                key = row_key(arch, row)
                levels = {
                    i: statistics.median(xs)
                    for i, xs in round_samples(mine, arch, key).items()
                    if xs
                }
                timed.setdefault((arch, key), []).append((label, levels))
    out: list[tuple[str, RowKey, ChangePoint]] = []
    for (arch, key), points in counted.items():
        values, spreads = [c.value for _, c in points], [c.spread for _, c in points]
        constants = count_reading([c for _, c in points]).constants
        if constants is not None:  # exact+extra: the constants, as exact counts
            values, spreads = _settled(constants), [0.0] * len(points)
        out += [(arch, key, c) for c in count_changes([p[0] for p in points], values, spreads)]
    for (arch, key), versions in timed.items():
        common = set.intersection(*(set(levels) for _, levels in versions))
        if len(common) < 2:
            continue
        shared = sorted(common)
        matrix = [[levels[i] for i in shared] for _, levels in versions]
        out += [
            (arch, key, c)
            for c in time_changes([label for label, _ in versions], matrix, threshold)
        ]
    return out
