"""Where a series of runs steps, and what changed at each step (``invoke history``).

A series is one row on one architecture across ordered runs (GNUnet versions, Debian
releases). Each point is compared with the one before it, as rustc-perf compares every
artifact with its predecessor and asv's ``compare``/regression detection call a change
only beyond the noise of the levels on either side:

* **counts** (instructions per operation): a step where the ratio to the previous point
  lies beyond what the row's kind allows (the one verdict of a counted row,
  :func:`archbench.analysis.comparison.count_change`, from the two points' blocks and
  the larger of their own relative ranges): 0.1 % for an
  exact row, 1 % and three times the range for a varying one; a random row (a range
  above 5 %, random keys) never steps, so an A/A history (one build twice) has no count
  step on it; an ``exact+extra`` pair (a constant with whole extra events in some
  blocks, :func:`archbench.analysis.counting.count_constants`) steps where its
  constants differ beyond 0.1 %;
* **times**: a step where the interval of the ratio to the previous point excludes 1 and
  the ratio exceeds the threshold (:func:`archbench.analysis.comparison.verdict`); the
  interval is :func:`archbench.analysis.comparison.compare`'s: over paired rounds when
  the two runs were interleaved, over their container runs when they were not (no
  interval, so no step, without them). A history tests every row of every pair at
  once, so :func:`series` adjusts the p-values of all its timed points together
  (Benjamini–Hochberg, as ``invoke compare`` does over one comparison's rows) and a
  timed step needs its adjusted ``q_value`` at most ``1 - confidence`` as well.

Comparing neighbours, not fitting segments (asv's ``step_detect`` fits a piecewise
constant function with a penalty), suits series of a handful of well-measured points:
each point is a whole run with its own interval, and a slow creep over many versions
is not a step (the first-to-last ratio shows it). Each step carries the version pair
and the environment diff between the two runs (:func:`environment_diff`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from archbench.analysis.comparison import (
    DEFAULT_THRESHOLD,
    MIN_COUNT_EFFECT,
    compare,
    count_change,
    verdict,
)
from archbench.analysis.counting import Count
from archbench.analysis.counting import spread as count_spread
from archbench.analysis.environment import Change, Environment, environment_diff, environment_of
from archbench.analysis.stats import DEFAULT_CONFIDENCE
from archbench.result import METRICS, Metric, Result, RowKey, merge_repeats, row_key


@dataclass(frozen=True)
class SeriesPoint:
    """One run's value of a series.

    ``value``: instructions per operation (``metric`` ``instructions``) or the median ns
    per operation (``time``). ``spread``: counts only, the row's relative block-to-block
    range (0: exact). ``ratio``, ``low``/``high``: times only, this point over the
    previous one (B/A) as :func:`compare` gives it, with its interval; NaN for the first
    point or when none was computed (then ``value``'s ratio is used and there is no step).
    ``p_value``: times only, of "ratio = 1"; ``q_value`` its Benjamini–Hochberg adjusted
    value over the history's timed points (NaN: not controlled, the interval decides).
    ``blocks``, ``ops_per_block``: counts only, the row's instructions per block and
    operations per block (for ``exact+extra`` rows, :func:`archbench.analysis.counting.
    count_constants`; empty and 0 when not known).
    """

    label: str
    value: float
    metric: Metric
    spread: float = 0.0
    ratio: float = math.nan
    low: float = math.nan
    high: float = math.nan
    environment: Environment | None = None
    p_value: float = math.nan
    q_value: float = math.nan
    blocks: tuple[int, ...] = ()
    ops_per_block: int = 0


@dataclass(frozen=True)
class Step:
    """A step between ``points[index - 1]`` (``before``) and ``points[index]`` (``after``).

    ``ratio`` is after/before; ``direction`` ``up`` when it is above 1 (slower, more
    instructions). ``changes``: what differs between the two runs' environments (empty:
    nothing recorded differs).
    """

    index: int
    before: str
    after: str
    ratio: float
    metric: Metric
    direction: Literal["up", "down"]
    changes: tuple[Change, ...] = ()

    @property
    def changed(self) -> bool:
        """Always True: a step is a change beyond the noise (for :func:`over_limit`)."""
        return True

    @property
    def cause(self) -> str:
        """The changes as one line, or ``nothing recorded changed``."""
        return "; ".join(c.text for c in self.changes) or "nothing recorded changed"


def count_of(point: SeriesPoint) -> Count:
    """A counted point as the :class:`archbench.analysis.counting.Count` the one verdict
    (:func:`archbench.analysis.comparison.count_change`) and reading take."""
    known = point.ops_per_block >= 1  # blocks without their operations: not readable
    return Count(
        point.value,
        point.spread,
        point.blocks if known else (),
        point.ops_per_block if known else 0,
    )


def find_steps(
    points: Sequence[SeriesPoint],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    rate: float = 1 - DEFAULT_CONFIDENCE,
) -> list[Step]:
    """The steps of one series, in order (module docstring for the rules).

    All points must have the same ``metric``. ``threshold``: the smallest change of a
    timed series called a step (a fraction, as ``invoke compare --threshold``); counted
    series use their spread and :data:`MIN_COUNT_EFFECT` instead. A timed point without
    an interval is never a step; one with a ``q_value`` above ``rate`` neither.

    Raises:
        ValueError: points of mixed metrics, a value that is not positive and finite,
            or a negative spread.
    """
    metrics = {p.metric for p in points}
    if len(metrics) > 1:
        raise ValueError(f"a series has one metric, got {sorted(metrics)}")
    for p in points:
        if not math.isfinite(p.value) or p.value <= 0:
            raise ValueError(f"{p.label}: value {p.value} is not positive and finite")
        if p.spread < 0:
            raise ValueError(f"{p.label}: negative spread {p.spread}")
    steps = []
    for i in range(1, len(points)):
        before, after = points[i - 1], points[i]
        ratio = after.value / before.value
        if after.metric == "instructions":
            change = count_change(count_of(before), count_of(after), MIN_COUNT_EFFECT)
            ratio, said = change.ratio, change.verdict
            moved = said != "no significant change"
        else:
            if math.isnan(after.low) or math.isnan(after.high):
                continue
            ratio = after.ratio if math.isfinite(after.ratio) else ratio
            moved = verdict(ratio, after.low, after.high, threshold) in ("slower", "faster")
            moved = moved and not after.q_value > rate
        if not moved:
            continue
        changes: tuple[Change, ...] = ()
        if before.environment is not None and after.environment is not None:
            changes = tuple(environment_diff(before.environment, after.environment))
        steps.append(
            Step(
                index=i,
                before=before.label,
                after=after.label,
                ratio=ratio,
                metric=after.metric,
                direction="up" if ratio > 1 else "down",
                changes=changes,
            )
        )
    return steps


@dataclass(frozen=True, order=True)
class SeriesKey:
    """One series: a row (its key's ``target`` is the architecture) and a metric."""

    arch: str
    row: RowKey
    metric: Metric


def _by_arch(results: Sequence[Result], metric: Metric) -> dict[str, list[Result]]:
    out: dict[str, list[Result]] = {}
    for r in merge_repeats([r for r in results if r.metric == metric]):
        out.setdefault(r.target.arch, []).append(r)
    return out


def series(
    runs: Sequence[tuple[str, Sequence[Result]]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[SeriesKey, list[SeriesPoint]]:
    """Every row's series per architecture and metric across ``runs``, in their order.

    ``runs``: (label, that run's results as stored: both metrics, repeats or rounds as
    files) in series order. A run that lacks a row leaves it out of that row's series;
    its next point is compared with the last one it has. Timed points get the interval
    and p-value :func:`compare` gives the pair, and the p-values of all timed points are
    adjusted together (Benjamini–Hochberg, :func:`control_points`); an architecture
    with several targets in a run is left to :func:`compare`'s pairing by target name.

    Raises:
        ResultsError: a run's repeats of one target measured different rows.
    """
    out: dict[SeriesKey, list[SeriesPoint]] = {}
    last: dict[SeriesKey, int] = {}
    for metric_m in METRICS:
        per_run = [(label, _by_arch(results, metric_m)) for label, results in runs]
        cache: dict[tuple[int, int, str], dict[RowKey, tuple[float, float, float, float]]] = {}
        for i, (label, by_arch) in enumerate(per_run):
            for arch, results in sorted(by_arch.items()):
                for res in results:
                    for row in res.harness.rows:
                        if not row.valid:
                            continue
                        key = row_key(arch, row)
                        skey = SeriesKey(arch, key, metric_m)
                        env = environment_of(res)
                        if metric_m == "instructions":
                            if not row.instructions:
                                continue
                            value = sorted(row.instructions)[len(row.instructions) // 2]
                            point = SeriesPoint(
                                label,
                                float(value) / row.ops_per_block,
                                metric_m,
                                spread=count_spread(row.instructions),
                                environment=env,
                                blocks=tuple(row.instructions),
                                ops_per_block=row.ops_per_block,
                            )
                        else:
                            times = sorted(x / row.ops_per_block for x in row.samples_ns)
                            ratio = low = high = p_value = math.nan
                            if skey in last:
                                j = last[skey]
                                pair = cache.get((j, i, arch))
                                if pair is None:
                                    pair = _intervals(runs[j][1], runs[i][1], arch, confidence)
                                    cache[(j, i, arch)] = pair
                                ratio, low, high, p_value = pair.get(key, (math.nan,) * 4)
                            point = SeriesPoint(
                                label,
                                _median(times),
                                metric_m,
                                ratio=ratio,
                                low=low,
                                high=high,
                                environment=env,
                                p_value=p_value,
                            )
                        out.setdefault(skey, []).append(point)
                        last[skey] = i
    return control_points(dict(sorted(out.items())), 1 - confidence)


def control_points(
    all_series: dict[SeriesKey, list[SeriesPoint]], rate: float
) -> dict[SeriesKey, list[SeriesPoint]]:
    """``all_series`` with every timed point's ``q_value``: its p-value adjusted by
    Benjamini–Hochberg over all timed points that have one, at false discovery rate
    ``rate`` (``scipy.stats.false_discovery_control``).
    """
    where = [
        (k, i)
        for k, points in all_series.items()
        for i, p in enumerate(points)
        if p.metric == "time" and math.isfinite(p.p_value)
    ]
    if not where:
        return all_series
    from scipy.stats import false_discovery_control

    qs = false_discovery_control([all_series[k][i].p_value for k, i in where], method="bh")
    out = {k: list(points) for k, points in all_series.items()}
    for (k, i), q in zip(where, qs, strict=True):
        out[k][i] = dataclasses.replace(out[k][i], q_value=float(q))
    return out


def _median(xs: Sequence[float]) -> float:
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _intervals(
    a: Sequence[Result], b: Sequence[Result], arch: str, confidence: float
) -> dict[RowKey, tuple[float, float, float, float]]:
    """Row (keyed by ``arch``) -> B/A, its interval and p-value of the pair's timed rows on
    ``arch`` (not yet controlled for false discoveries)."""
    side_a = [r for r in a if r.target.arch == arch and r.metric == "time"]
    side_b = [r for r in b if r.target.arch == arch and r.metric == "time"]
    out = {}
    for c in compare(side_a, side_b, confidence=confidence, control=False):
        if not math.isnan(c.low):
            key = dataclasses.replace(c.key, target=arch)
            out[key] = (c.ratio, c.low, c.high, c.p_value)
    return out
