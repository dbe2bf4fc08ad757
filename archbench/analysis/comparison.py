"""Compare two runs row by row: the ratio B/A per operation, its interval and a verdict.

Pure and engine-free, like the reports. For every row both runs measured (same target,
suite, scheme, key size or parameter, operation and process count) and every metric:

* **Timed rows of an interleaved session** (both runs' files carry the same
  ``Execution.interleaved`` id; ``repeat_index`` is the round): the rounds are paired
  and the ratio is the geometric mean of the per-round ratios of medians, with a
  two-stage bootstrap interval over rounds (:mod:`archbench.analysis.rounds`).
* **Timed rows of two runs that were not interleaved**: B/A of the median per-operation
  times, with a bootstrap interval of both rows' blocks resampled independently
  (``scipy.stats.bootstrap``, percentile method, fixed seed), *widened* by the spread
  between runs that no block of either run can see: the machine was another machine when
  B ran. The spread ``s`` (relative, a coefficient of variation of a run's level) is the
  larger of :data:`BETWEEN_RUN_FLOOR` (measured on this project's 2-core VM, see the
  constant) and the CV of the per-repeat medians where a run has ``--repeat`` runs. The
  log half-widths of the bootstrap interval and of the between-run term
  ``z · √2 · s`` (two runs, each off by ``s``) add in quadrature, as independent
  uncertainties do (JCGM 100:2008, *Guide to the expression of uncertainty in
  measurement*, §5.1.2).
* **Counted rows** (``metric == "instructions"``): the exact ratio of the median
  instructions per operation. Counts do not drift with load, so the only noise is the
  row's own block-to-block spread (:func:`archbench.analysis.counting.spread`, the
  relative range); a change is called ``more instructions``/``fewer instructions`` only
  beyond the larger of the two rows' spreads, and the row's ``low``/``high`` are the
  ratio divided and multiplied by ``1 + spread``.

The verdict of timed rows follows ``pyperf compare_to`` and ``asv compare``: ``slower``
(``faster``) only when the whole interval lies above (below) 1 *and* the ratio differs
from 1 by more than ``threshold`` (default 5 %); otherwise ``no significant change``.
Rows with fewer than :data:`MIN_SAMPLES` blocks on a side, or invalid on a side, get no
verdict (``too few samples``, ``invalid``). A row both timed and counted whose verdicts
disagree (times say slower, counts say identical) says so in its ``note``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, Literal

from archbench.analysis.counting import spread as count_spread
from archbench.analysis.rounds import MIN_ROUNDS, round_ratio_interval
from archbench.result import METRICS, Metric, Result, Row, merge_repeats

if TYPE_CHECKING:
    import numpy as np

Verdict = Literal[
    "faster",
    "slower",
    "more instructions",
    "fewer instructions",
    "no significant change",
    "too few samples",
    "invalid",
]
SpreadSource = Literal["floor", "repeats", "rounds", "counts"]

MIN_SAMPLES: Final = 3
"""Fewest per-operation samples per side for an interval and a verdict of timed rows."""
DEFAULT_CONFIDENCE: Final = 0.95
DEFAULT_THRESHOLD: Final = 0.05
DEFAULT_RESAMPLES: Final = 2000
BETWEEN_RUN_FLOOR: Final = 0.06
"""Relative spread (CV) of a run's level between two runs that were not interleaved.

Measured on the project's 2-core VM shared with other jobs (load average 5-6), with
``benchmarks/drift_floor.py`` (8 back-to-back runs of 12 s of a 2048-bit modular
exponentiation on the host, 2026-12-02): consecutive runs differed by up to 29 %
(a step when another job started), the CV of the eight run medians was 0.12; issue 21's
two ``invoke bench`` runs 28 s apart differed by 5-11 %. 0.06 makes the widened
95 % interval of an otherwise exact ratio ``×/÷ 1.18`` (``exp(1.96 · √2 · 0.06)``), which
covers the 5-20 % that back-to-back runs differ by here; a step as large as the 29 % one
is still called, as it should be when nothing but interleaving can tell it from a
change. ``docs/measurement.md`` has the figures."""


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
    """One row of a comparison.

    ``ratio`` is B/A (above 1: B is slower, or executes more instructions); ``low``/
    ``high`` bound its interval, NaN when none was computed. Timed rows (``metric``
    ``time``) have ``a_ns``/``b_ns``, the pooled median times per operation in ns;
    counted rows (``instructions``) have ``a_instructions``/``b_instructions``, the
    median instructions per operation, and NaN times. ``rounds``: paired rounds of an
    interleaved session (0: the runs were not interleaved). ``between_spread``: the
    relative between-run spread the interval was widened by (None: not widened; see
    ``spread_source``); for counted rows ``spread`` is the larger block-to-block
    relative range of the two rows. ``note``: what a reader must know about the row
    (counts and times disagree, too few rounds to pair), or empty.
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
    metric: Metric = "time"
    a_instructions: float = math.nan
    b_instructions: float = math.nan
    rounds: int = 0
    between_spread: float | None = None
    spread_source: SpreadSource | None = None
    spread: float | None = None
    note: str = ""

    @property
    def changed(self) -> bool:
        """True for a verdict of change: slower, faster, more or fewer instructions."""
        return self.verdict in ("slower", "faster", "more instructions", "fewer instructions")

    @property
    def interleaved(self) -> bool:
        """True when the interval was computed over paired rounds."""
        return self.rounds > 0


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
    runs); percentile interval at ``confidence``. This is the interval of the
    blocks alone: :func:`widen` adds what lies between two runs.

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


def widen(
    ratio: float, low: float, high: float, between: float, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """``(low, high)`` widened by a between-run spread ``between`` (relative, a CV).

    Each side's log half-width ``log(ratio/low)``, ``log(high/ratio)`` is combined in
    quadrature with ``z · √2 · between``, ``z`` the normal quantile of ``confidence``
    (two runs, each off by ``between``; independent uncertainties, JCGM 100:2008
    §5.1.2).

    Raises:
        ValueError: ``between`` negative or not finite, or an interval that does not
            hold ``ratio``.
    """
    if not math.isfinite(between) or between < 0:
        raise ValueError(f"between-run spread must be a fraction >= 0, got {between}")
    if not 0 < low <= ratio <= high:
        raise ValueError(f"interval [{low}, {high}] does not hold the ratio {ratio}")
    z = statistics.NormalDist().inv_cdf((1 + confidence) / 2)
    extra = z * math.sqrt(2) * math.log1p(between)
    down = math.hypot(math.log(ratio / low), extra)
    up = math.hypot(math.log(high / ratio), extra)
    return ratio * math.exp(-down), ratio * math.exp(up)


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


def count_verdict(ratio: float, spread: float) -> Verdict:
    """``more``/``fewer instructions`` when ``ratio`` lies beyond ``1 + spread`` (either way).

    ``spread``: the rows' relative block-to-block range (0 for exact counts: then any
    change is called).

    Raises:
        ValueError: ``spread`` negative or not finite.
    """
    if not math.isfinite(spread) or spread < 0:
        raise ValueError(f"spread must be a fraction >= 0, got {spread}")
    if ratio > 1 + spread:
        return "more instructions"
    if ratio < 1 / (1 + spread):
        return "fewer instructions"
    return "no significant change"


def pair_targets(a: Sequence[Result], b: Sequence[Result]) -> list[tuple[Result, Result]]:
    """Pairs of results to compare: same target name; or, when each side has exactly
    one target and the names differ (``amd64-bookworm`` vs ``amd64-trixie``), those two.

    ``a`` and ``b`` hold one result per target (merged repeats, one metric).
    """
    by_name = {r.target.name: r for r in b}
    pairs = [(r, by_name[r.target.name]) for r in a if r.target.name in by_name]
    if not pairs and len(a) == 1 and len(b) == 1:
        pairs = [(a[0], b[0])]
    return pairs


@dataclass(frozen=True)
class _Side:
    """One target's results of one metric in one run: merged, and the files per round."""

    merged: Result
    files: tuple[Result, ...]

    @property
    def session(self) -> str | None:
        ids = {f.execution.interleaved if f.execution else None for f in self.files}
        return ids.pop() if len(ids) == 1 else None


def _sides(results: Sequence[Result], metric: Metric) -> list[_Side]:
    """Per target, in order of first appearance: its merged result and its files.

    Raises:
        ResultsError: a target's repeats measured different rows (:func:`merge_repeats`).
    """
    groups: dict[str, list[Result]] = {}
    for r in results:
        if r.metric == metric:
            groups.setdefault(r.target.name, []).append(r)
    out = []
    for files in groups.values():
        files.sort(key=lambda f: f.execution.repeat_index if f.execution else 1)
        (merged,) = merge_repeats(files)
        out.append(_Side(merged, tuple(files)))
    return out


def _pair_sides(a: list[_Side], b: list[_Side]) -> list[tuple[_Side, _Side]]:
    pairs = pair_targets([s.merged for s in a], [s.merged for s in b])
    by_id = {id(s.merged): s for s in (*a, *b)}
    return [(by_id[id(ra)], by_id[id(rb)]) for ra, rb in pairs]


def target_pairs(
    a: Sequence[Result], b: Sequence[Result], metric: Metric = "time"
) -> list[tuple[Result, Result]]:
    """The targets :func:`compare` pairs for ``metric``, each as its merged result.

    ``a`` and ``b`` as for :func:`compare` (files as stored, or merged).

    Raises:
        ResultsError: as :func:`compare`.
    """
    return [(sa.merged, sb.merged) for sa, sb in _pair_sides(_sides(a, metric), _sides(b, metric))]


def round_samples(files: Sequence[Result], target: str, key: RowKey) -> dict[int, list[float]]:
    """Round -> per-operation times (ns) of row ``key`` in ``files`` (one run's files of
    one target), the round being ``Execution.repeat_index``; a file that is already a
    merge of repeats (rows with ``run_sizes``) is split into rounds 1..K in its order.
    Invalid rows and rows the files lack are left out.
    """
    out: dict[int, list[float]] = {}
    for f in files:
        row = next((r for r in f.harness.rows if row_key(target, r) == key), None)
        if row is None or not row.valid:
            continue
        xs = per_op_ns(row)
        if row.run_sizes:
            start = 0
            for i, size in enumerate(row.run_sizes, 1):
                out[i] = xs[start : start + size]
                start += size
        else:
            out[f.execution.repeat_index if f.execution else 1] = xs
    return out


def _repeat_spread(row: Row) -> float | None:
    medians = row.run_medians_ns
    if not medians or len(medians) < 2:
        return None
    return statistics.stdev(medians) / statistics.fmean(medians)


def between_run_spread(row_a: Row, row_b: Row, floor: float) -> tuple[float, SpreadSource]:
    """The relative spread between two runs' levels for a row, and where it comes from.

    The larger of ``floor`` and the root mean square of each side's CV of per-repeat
    medians (``Row.run_medians_ns``, set when a run has ``--repeat`` runs).
    """
    cvs = [cv for cv in (_repeat_spread(row_a), _repeat_spread(row_b)) if cv is not None]
    if cvs:
        repeats = math.sqrt(math.fsum(cv * cv for cv in cvs) / len(cvs))
        if repeats > floor:
            return repeats, "repeats"
    return floor, "floor"


def compare(
    a: Sequence[Result],
    b: Sequence[Result],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    threshold: float = DEFAULT_THRESHOLD,
    n_resamples: int = DEFAULT_RESAMPLES,
    floor: float = BETWEEN_RUN_FLOOR,
    interleaved: bool = True,
) -> list[RowComparison]:
    """Compare every row measured in both ``a`` and ``b``, timed and counted.

    ``a`` and ``b`` are one run's results each, as stored (one file per repeat or round,
    both metrics) or already merged; targets pair as :func:`pair_targets` says, per
    metric. Rows are keyed by A's target name; rows only one side has are left out.
    Timed rows come first, then counted rows, each sorted by key. ``floor``: the
    between-run spread of runs that were not interleaved (:data:`BETWEEN_RUN_FLOOR`).
    ``interleaved`` False: the session ids the files carry are not trusted (the runs'
    own history says otherwise), so no rounds are paired.

    Raises:
        ResultsError: a target's repeats in one run measured different rows.
    """
    out: list[RowComparison] = []
    for metric in METRICS:
        for side_a, side_b in _pair_sides(_sides(a, metric), _sides(b, metric)):
            target = side_a.merged.target.name
            rows_a = {row_key(target, r): r for r in side_a.merged.harness.rows}
            rows_b = {row_key(target, r): r for r in side_b.merged.harness.rows}
            session = side_a.session
            paired = interleaved and session is not None and session == side_b.session
            for key in sorted(rows_a.keys() & rows_b.keys()):
                ra, rb = rows_a[key], rows_b[key]
                if metric == "instructions":
                    out.append(_compare_counts(key, ra, rb))
                    continue
                rounds = None
                if paired:
                    in_a = round_samples(side_a.files, target, key)
                    in_b = round_samples(side_b.files, target, key)
                    rounds = [(in_a[i], in_b[i]) for i in sorted(in_a.keys() & in_b.keys())]
                out.append(
                    _compare_times(key, ra, rb, rounds, confidence, threshold, n_resamples, floor)
                )
    return _notes(out)


def _compare_times(
    key: RowKey,
    row_a: Row,
    row_b: Row,
    rounds: list[tuple[list[float], list[float]]] | None,
    confidence: float,
    threshold: float,
    n_resamples: int,
    floor: float,
) -> RowComparison:
    xa, xb = per_op_ns(row_a), per_op_ns(row_b)
    base = RowComparison(
        key=key,
        a_ns=statistics.median(xa),
        b_ns=statistics.median(xb),
        n_a=len(xa),
        n_b=len(xb),
        ratio=statistics.median(xb) / statistics.median(xa),
        low=math.nan,
        high=math.nan,
        verdict="invalid",
    )
    if not (row_a.valid and row_b.valid):
        return base
    if min(len(xa), len(xb)) < MIN_SAMPLES:
        return replace(base, verdict="too few samples")
    if rounds is not None and len(rounds) >= MIN_ROUNDS:
        ratio, low, high = round_ratio_interval(
            rounds, confidence=confidence, n_resamples=n_resamples
        )
        return replace(
            base,
            ratio=ratio,
            low=low,
            high=high,
            verdict=verdict(ratio, low, high, threshold),
            rounds=len(rounds),
            spread_source="rounds",
        )
    ratio, low, high = ratio_interval(xa, xb, confidence=confidence, n_resamples=n_resamples)
    between, source = between_run_spread(row_a, row_b, floor)
    low, high = widen(ratio, low, high, between, confidence)
    note = (
        f"interleaved, but only {len(rounds)} paired round(s) (need {MIN_ROUNDS}): "
        "compared as separate runs"
        if rounds is not None
        else ""
    )
    return replace(
        base,
        ratio=ratio,
        low=low,
        high=high,
        verdict=verdict(ratio, low, high, threshold),
        between_spread=between,
        spread_source=source,
        note=note,
    )


def _compare_counts(key: RowKey, row_a: Row, row_b: Row) -> RowComparison:
    nan = math.nan
    if row_a.instructions is None or row_b.instructions is None:
        # A counting result's row without counts: the harness marked it invalid.
        a = b = ratio = nan
        result: Verdict = "invalid"
        spread = None
    else:
        a = statistics.median(row_a.instructions) / row_a.ops_per_block
        b = statistics.median(row_b.instructions) / row_b.ops_per_block
        ratio = b / a
        spread = max(count_spread(row_a.instructions), count_spread(row_b.instructions))
        result = count_verdict(ratio, spread) if row_a.valid and row_b.valid else "invalid"
    exact = spread is not None and result != "invalid"
    return RowComparison(
        key=key,
        a_ns=nan,
        b_ns=nan,
        n_a=len(row_a.instructions or ()),
        n_b=len(row_b.instructions or ()),
        ratio=ratio,
        low=ratio / (1 + spread) if exact and spread is not None else nan,
        high=ratio * (1 + spread) if exact and spread is not None else nan,
        verdict=result,
        metric="instructions",
        a_instructions=a,
        b_instructions=b,
        spread=spread,
        spread_source="counts" if exact else None,
    )


_AGREES: Final[dict[Verdict, Verdict]] = {
    "slower": "more instructions",
    "faster": "fewer instructions",
    "no significant change": "no significant change",
}


def _notes(rows: list[RowComparison]) -> list[RowComparison]:
    """Mark rows whose times and counts disagree (module docstring)."""
    counted = {r.key: r for r in rows if r.metric == "instructions"}
    timed = {r.key: r for r in rows if r.metric == "time"}
    out = []
    for r in rows:
        other = (counted if r.metric == "time" else timed).get(r.key)
        time_row, count_row = (r, other) if r.metric == "time" else (other, r)
        if (
            time_row is None
            or count_row is None
            or time_row.verdict not in _AGREES
            or count_row.verdict not in _AGREES.values()
            or _AGREES[time_row.verdict] == count_row.verdict
        ):
            out.append(r)
            continue
        spread = f" (spread ±{count_row.spread:.1%})" if count_row.spread is not None else ""
        text = (
            f"times say {time_row.verdict} ({time_row.ratio:.3f}×), instruction counts say "
            f"{count_row.verdict} ({count_row.ratio:.4f}×{spread})"
        )
        if count_row.verdict == "no significant change":
            text += ": the machine changed, not the code"
        out.append(replace(r, note="; ".join(n for n in (r.note, text) if n)))
    return out


def unmatched(a: Sequence[Result], b: Sequence[Result]) -> tuple[int, int]:
    """How many rows of ``a`` and of ``b`` :func:`compare` leaves out for want of a partner.

    Counted per metric and target (repeats of one target count once).

    Raises:
        ResultsError: as :func:`compare`.
    """
    only_a = only_b = 0
    for metric in METRICS:
        sides_a, sides_b = _sides(a, metric), _sides(b, metric)
        pairs = _pair_sides(sides_a, sides_b)
        paired_a = {id(sa) for sa, _ in pairs}
        paired_b = {id(sb) for _, sb in pairs}
        for sa, sb in pairs:
            target = sa.merged.target.name
            keys_a = {row_key(target, r) for r in sa.merged.harness.rows}
            keys_b = {row_key(target, r) for r in sb.merged.harness.rows}
            only_a += len(keys_a - keys_b)
            only_b += len(keys_b - keys_a)
        only_a += sum(len(s.merged.harness.rows) for s in sides_a if id(s) not in paired_a)
        only_b += sum(len(s.merged.harness.rows) for s in sides_b if id(s) not in paired_b)
    return only_a, only_b


def counts(rows: Iterable[RowComparison]) -> dict[Verdict, int]:
    """How many rows got each verdict (only verdicts that occur)."""
    tally: dict[Verdict, int] = {}
    for r in rows:
        tally[r.verdict] = tally.get(r.verdict, 0) + 1
    return tally
