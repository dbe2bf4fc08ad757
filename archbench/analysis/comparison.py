"""Compare two runs row by row: the ratio B/A per operation, its interval and a verdict.

Pure and engine-free, like the reports. For every row both runs measured (same target,
suite, scheme, key size or parameter, operation and process count) and every metric:

* **Timed rows of an interleaved session** (both runs' files carry the same
  ``Execution.interleaved`` id; ``repeat_index`` is the round): the rounds are paired
  and the ratio is the geometric mean of the per-round ratios of medians, with the
  Student-t interval of the per-round log ratios (:func:`archbench.analysis.rounds.
  round_t_interval`): it covers everything that varies from round to round.
* **Timed rows of two runs that were not interleaved**: the machine was another machine
  when B ran, and no block of either run can see by how much. Where a run has several
  container runs (``--repeat``), each container run's median is one draw of the run's
  level and the interval is the pooled two-sample t interval of the log medians
  (:func:`archbench.analysis.rounds.repeat_ratio_interval`) widened by a shift of the
  whole machine between the two invocations (another job started), which no container
  run of either can see: a documented prior, :data:`DEFAULT_BETWEEN_RUNS` (13 % per
  invocation), that ``--between-runs`` overrides. Without it the interval covered 27 %
  (issue 39, ``benchmarks/coverage.py``); with it at least 95 % in every model there,
  and the price is that only large changes are called. ``--between-runs 0`` keeps the
  container runs' interval, says it is not a 95 % interval and gives no verdict. Where neither run
  has two container runs, nothing measured says how far apart two runs lie: the row
  gets the ratio of the median per-operation times, no interval and the verdict
  ``no interval`` ("not interleaved: no interval").
* **Counted rows** (``metric == "instructions"``): the ratio of the median
  instructions per operation. A count is exact only where inputs, allocation and
  scheduling are, so each row is classified by its own repetitions (the larger relative
  range of the two rows, :func:`archbench.analysis.counting.count_kind`): ``exact``
  rows are called ``more instructions``/``fewer instructions`` beyond
  :data:`MIN_COUNT_EFFECT`, ``varying`` rows (allocator, timer, threads) beyond the
  larger of 1 % and three times their range, with ``low``/``high`` the ratio divided
  and multiplied by ``1 +`` that bound; ``random`` rows (a range above 5 %: random keys)
  get the Hodges–Lehmann ratio and its Mann–Whitney interval and are never called, so
  never gated (``count_kind`` and ``note`` say so). Rows whose blocks take two values
  on either side (a constant path with whole extra events in some blocks, libgcrypt's
  entropy-pool mixing: :func:`archbench.analysis.counting.count_constants`) are
  ``exact+extra``: ``a_instructions``/``b_instructions`` are the constants, called as an
  exact row's, whatever the range the extra events give the blocks.

The verdict of timed rows follows ``pyperf compare_to`` and ``asv compare``: ``slower``
(``faster``) only when the whole interval lies above (below) 1 *and* the ratio differs
from 1 by more than ``threshold`` (default 5 %); otherwise ``no significant change``.
One comparison tests every row at once (some 27 per target), so the timed rows' p-values
are controlled for false discoveries: a row is called only when its Benjamini–Hochberg
adjusted p-value (Benjamini & Hochberg, JRSS B 57, 1995; ``scipy.stats.
false_discovery_control``) is at most ``1 - confidence`` (5 %) as well, which keeps the
expected share of wrongly called rows among the called ones at 5 %. Each row keeps its
own (unadjusted) interval. Rows with fewer than :data:`MIN_SAMPLES` blocks on a side,
or invalid on a side, get no verdict (``too few samples``, ``invalid``). A row both
timed and counted whose verdicts disagree says so in its ``note``, and only what is
known.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

from archbench.analysis.counting import (
    Count,
    CountKind,
    constant_ratio,
    count_effect,
    count_reading,
    extra_levels,
    rank_ratio_interval,
)
from archbench.analysis.counting import spread as count_spread
from archbench.analysis.rounds import (
    MIN_ROUNDS,
    TInterval,
    repeat_ratio_interval,
    round_t_interval,
)
from archbench.analysis.stats import DEFAULT_CONFIDENCE
from archbench.result import METRICS, Metric, Result, Row, RowKey, merge_repeats, row_key

Verdict = Literal[
    "faster",
    "slower",
    "more instructions",
    "fewer instructions",
    "no significant change",
    "no interval",
    "too few samples",
    "invalid",
]
SpreadSource = Literal["repeats", "rounds", "counts"]

MIN_SAMPLES: Final = 3
"""Fewest per-operation samples per side for an interval and a verdict of timed rows."""
DEFAULT_THRESHOLD: Final = 0.05
MIN_COUNT_EFFECT: Final = 0.001
"""Smallest relative change of instructions per operation called a change (0.1 %).

Counts of a deterministic operation have no spread, so without a minimum one instruction
in a million would be a verdict. 0.1 % is a tenth of the narrowest time interval
archbench measures (±1.1 %, the median half-width of adaptive repetitions on the build
VM, ``docs/measurement.md``): a smaller change of the instructions cannot show in any
time we measure, and the gate's limits are percents (iai-callgrind's examples use 2 %)."""
DEFAULT_BETWEEN_RUNS: Final = 0.13
"""The spread of one invocation's level that its own container runs cannot see (a
relative standard deviation of the log level): the prior of separate runs' intervals
(:func:`archbench.analysis.rounds.repeat_ratio_interval`'s ``between``), which
``invoke compare --between-runs`` overrides. 0.13 is the CV of run medians measured on
the 2-core build VM at load 5.5-6.4 (``docs/measurement.md``); with it the interval
covers at least 95 % in every separate-run noise model of ``benchmarks/coverage.py``
(``runs-shift``: the whole machine 13 % apart between invocations), where the
container runs alone covered 0.27 (issue 39). The price: a change below some 35 %
gets no verdict from two separate runs; ``invoke history`` interleaves them and sees
a few percent."""
NO_INTERVAL: Final = "not interleaved: no interval"
NO_BETWEEN: Final = (
    "separate runs with --between-runs 0: the container runs' interval alone, not a 95 % "
    "interval (a shift of the machine between the runs is left out): no verdict; "
    "interleave them ('invoke history')"
)
"""The note of a timed row of two separate runs compared without a between-run spread."""
"""The note of a timed row of two separate runs without container runs to measure the
spread between runs from."""


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
    relative range of the two rows. ``between_runs``: separate runs only, the
    between-invocation spread the interval added (:data:`DEFAULT_BETWEEN_RUNS` or the
    user's). ``count_kind``: counted rows only, how the count behaves over the rows'
    own repetitions (:func:`archbench.analysis.counting.count_kind`). ``note``: what a
    reader must know about the row (counts and times disagree, too few rounds to pair, a
    random count), or empty.
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
    df: int = 0
    p_value: float = math.nan
    q_value: float = math.nan
    own_verdict: Verdict | None = None
    between_runs: float | None = None
    count_kind: CountKind | None = None

    @property
    def changed(self) -> bool:
        """True for a verdict of change: slower, faster, more or fewer instructions."""
        return self.verdict in ("slower", "faster", "more instructions", "fewer instructions")

    @property
    def interleaved(self) -> bool:
        """True when the interval was computed over paired rounds."""
        return self.rounds > 0


def per_op_ns(row: Row) -> list[float]:
    """The row's samples as ns per operation (block time / ops per block)."""
    return [s / row.ops_per_block for s in row.samples_ns]


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


def count_verdict(ratio: float, spread: float, min_effect: float = MIN_COUNT_EFFECT) -> Verdict:
    """``more``/``fewer instructions`` when ``ratio`` lies beyond ``1 + bound`` (either
    way), ``bound`` what the rows' kind allows (:func:`archbench.analysis.counting.
    count_effect`): ``min_effect`` for exact rows, the larger of 1 % and three times
    ``spread`` for varying ones; a random row (``spread`` above 5 %) is never called.

    ``spread``: the rows' larger relative range over their repetitions (0 for exact
    counts); ``min_effect``: the smallest change worth a verdict
    (:data:`MIN_COUNT_EFFECT`).

    Raises:
        ValueError: ``spread`` negative or not finite.
    """
    bound = count_effect(spread, min_effect)
    if bound is None:
        return "no significant change"
    if ratio > 1 + bound:
        return "more instructions"
    if ratio < 1 / (1 + bound):
        return "fewer instructions"
    return "no significant change"


def constant_verdict(
    a: tuple[float, float], b: tuple[float, float], min_effect: float = MIN_COUNT_EFFECT
) -> tuple[float, Verdict]:
    """B/A and the verdict of two ``exact+extra`` constants given as ranges
    (:func:`archbench.analysis.counting.count_constants`): the ratio of
    :func:`archbench.analysis.counting.constant_ratio`, called ``more``/``fewer
    instructions`` only when every pair of the ranges' ends lies beyond ``min_effect``
    on that side of 1."""
    ratio, lowest, highest = constant_ratio(a, b)
    if count_verdict(lowest, 0.0, min_effect) == "more instructions":
        return ratio, "more instructions"
    if count_verdict(highest, 0.0, min_effect) == "fewer instructions":
        return ratio, "fewer instructions"
    return ratio, "no significant change"


@dataclass(frozen=True)
class CountChange:
    """B/A of one counted row and its verdict (:func:`count_change`).

    ``kind``: the pair's :func:`archbench.analysis.counting.count_reading`; ``ratio``:
    the figure shown (an ``exact+extra`` pair's ratio of constants, 1.0 where one side's
    reading equals the other's); ``a``/``b``: the instructions per operation shown (the
    constants for ``exact+extra``); ``bound``: the relative change the kind allows before
    it is called (None: a random row, never called).
    """

    kind: CountKind
    ratio: float
    verdict: Verdict
    a: float
    b: float
    spread: float
    bound: float | None


def count_change(a: Count, b: Count, min_effect: float = MIN_COUNT_EFFECT) -> CountChange:
    """The one verdict of a counted row between two executions, by its kind: compare,
    history steps, the gate and bisection all decide here.

    The kind is :func:`archbench.analysis.counting.count_reading`'s: ``exact+extra`` (both
    sides kept their blocks, and they read as a constant with whole extra events) is
    compared on the constants (:func:`constant_verdict`: the lower level; a side of one
    level read both ways), beyond ``min_effect``; otherwise :func:`count_verdict` of the
    values' ratio with the larger spread (``exact`` beyond ``min_effect``, ``varying``
    beyond 1 % and three times its range, ``random`` never).
    """
    reading = count_reading((a, b))
    if reading.constants is not None:
        ca, cb = reading.constants
        ratio, said = constant_verdict(ca, cb, min_effect)
        # The figures shown: the measured values, or the shared reading (ratio 1).
        shown = (ca[1], cb[1]) if ratio != 1.0 else (max(set(ca) & set(cb)),) * 2
        bound = count_effect(0.0, min_effect)
        return CountChange(reading.kind, ratio, said, *shown, reading.spread, bound)
    ratio = b.value / a.value
    said = count_verdict(ratio, reading.spread, min_effect)
    bound = count_effect(reading.spread, min_effect)
    return CountChange(reading.kind, ratio, said, a.value, b.value, reading.spread, bound)


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


def compare(
    a: Sequence[Result],
    b: Sequence[Result],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    threshold: float = DEFAULT_THRESHOLD,
    control: bool = True,
    interleaved: bool = True,
    between_runs: float = DEFAULT_BETWEEN_RUNS,
) -> list[RowComparison]:
    """Compare every row measured in both ``a`` and ``b``, timed and counted.

    ``a`` and ``b`` are one run's results each, as stored (one file per repeat or round,
    both metrics) or already merged; targets pair as :func:`pair_targets` says, per
    metric. Rows are keyed by A's target name; rows only one side has are left out.
    Timed rows come first, then counted rows, each sorted by key. ``control``: decide
    the timed rows' verdicts under Benjamini–Hochberg over all of them
    (:func:`control_false_discoveries`); False leaves that to the caller (a history
    controls over all its pairs at once). ``interleaved`` False: the session ids the
    files carry are not trusted (the runs' own history says otherwise), so no rounds are
    paired. ``between_runs``: the between-invocation spread the interval of two runs
    that were not interleaved adds (:data:`DEFAULT_BETWEEN_RUNS`; 0: the container runs'
    spread alone, which ``benchmarks/coverage.py`` shows covering as little as 27 %).

    Raises:
        ResultsError: a target's repeats in one run measured different rows.
        ValueError: ``between_runs`` negative or not finite.
    """
    if not math.isfinite(between_runs) or between_runs < 0:
        raise ValueError(f"between-run spread must be a fraction >= 0, got {between_runs}")
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
                    out.append(_compare_counts(key, ra, rb, confidence))
                    continue
                in_a = round_samples(side_a.files, target, key)
                in_b = round_samples(side_b.files, target, key)
                rounds = None
                if paired:
                    rounds = [(in_a[i], in_b[i]) for i in sorted(in_a.keys() & in_b.keys())]
                levels = (
                    [statistics.median(xs) for xs in in_a.values() if xs],
                    [statistics.median(xs) for xs in in_b.values() if xs],
                )
                out.append(
                    _compare_times(key, ra, rb, rounds, levels, confidence, threshold, between_runs)
                )
    if control:
        out = control_false_discoveries(out, 1 - confidence, threshold)
    return _notes(out)


def control_false_discoveries(
    rows: Sequence[RowComparison],
    rate: float = 1 - DEFAULT_CONFIDENCE,
    threshold: float = (DEFAULT_THRESHOLD),
) -> list[RowComparison]:
    """``rows`` with the timed verdicts decided under Benjamini–Hochberg at ``rate``.

    Every timed row with a p-value gets its adjusted ``q_value``; a row stays ``slower``
    or ``faster`` only when ``q_value <= rate`` (and its own interval and ``threshold``
    call it); a row the control overrules keeps its interval's verdict in
    ``own_verdict``. Other rows pass unchanged. Benjamini & Hochberg (1995) hold the
    false discovery rate at ``rate`` for independent or positively dependent tests (rows
    of one machine slowed by one cause are positively dependent).

    Raises:
        ValueError: ``rate`` outside (0, 1).
    """
    if not 0 < rate < 1:
        raise ValueError(f"false discovery rate must lie in (0, 1), got {rate}")
    tested = [i for i, r in enumerate(rows) if r.metric == "time" and math.isfinite(r.p_value)]
    out = list(rows)
    if not tested:
        return out
    from scipy.stats import false_discovery_control

    qs = false_discovery_control([rows[i].p_value for i in tested], method="bh")
    for i, q in zip(tested, qs, strict=True):
        r = rows[i]
        own = verdict(r.ratio, r.low, r.high, threshold)
        said = own if float(q) <= rate else "no significant change"
        out[i] = replace(
            r, q_value=float(q), verdict=said, own_verdict=own if said != own else None
        )
    return out


def _compare_times(
    key: RowKey,
    row_a: Row,
    row_b: Row,
    rounds: list[tuple[list[float], list[float]]] | None,
    levels: tuple[list[float], list[float]],
    confidence: float,
    threshold: float,
    between_runs: float,
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
    got: TInterval | None
    if rounds is not None and len(rounds) >= MIN_ROUNDS:
        got = round_t_interval(rounds, confidence=confidence)
        source: SpreadSource = "rounds"
        note = ""
    else:
        got = (
            repeat_ratio_interval(*levels, confidence=confidence, between=between_runs)
            if all(levels)
            else None
        )
        source = "repeats"
        note = (
            f"interleaved, but only {len(rounds)} paired round(s) (need {MIN_ROUNDS}): "
            "compared as separate runs"
            if rounds is not None
            else ""
        )
    if got is None:
        text = "; ".join(n for n in (note, NO_INTERVAL) if n)
        return replace(base, verdict="no interval", note=text)
    said = verdict(got.ratio, got.low, got.high, threshold)
    p_value = got.p_value
    if source == "repeats" and between_runs == 0:
        # The container runs' interval alone: not a 95 % interval (module docstring).
        said, p_value = "no significant change", math.nan
        note = "; ".join(n for n in (note, NO_BETWEEN) if n)
    return replace(
        base,
        ratio=got.ratio,
        low=got.low,
        high=got.high,
        verdict=said,
        rounds=len(rounds) if source == "rounds" and rounds is not None else 0,
        between_spread=got.sd,
        between_runs=between_runs if source == "repeats" else None,
        spread_source=source,
        df=got.df,
        p_value=p_value,
        note=note,
    )


def _compare_counts(key: RowKey, row_a: Row, row_b: Row, confidence: float) -> RowComparison:
    nan = math.nan
    kind: CountKind | None = None
    change: CountChange | None = None
    low = high = p_value = nan
    note = ""
    if row_a.instructions is None or row_b.instructions is None:
        # A counting result's row without counts: the harness marked it invalid.
        a = b = ratio = nan
        result: Verdict = "invalid"
        spread = None
    else:
        change = count_change(_side(row_a), _side(row_b))
        a, b, ratio, result = change.a, change.b, change.ratio, change.verdict
        spread, kind = change.spread, change.kind
        if kind == "exact+extra":
            note = _extra_note(row_a.instructions, row_b.instructions, row_a.ops_per_block)
        if not (row_a.valid and row_b.valid):
            result = "invalid"
    if result != "invalid" and spread is not None and kind == "random":
        xa = [c / row_a.ops_per_block for c in row_a.instructions or ()]
        xb = [c / row_b.ops_per_block for c in row_b.instructions or ()]
        ratio, low, high, p_value = rank_ratio_interval(xa, xb, confidence)
        note = (
            f"the count is random by nature (its repetitions range ±{spread:.1%}: a draw, "
            "such as random keys): compared by rank (Hodges–Lehmann, Mann–Whitney "
            f"p = {p_value:.2g}), never called or gated"
        )
    elif result != "invalid" and spread is not None and change is not None:
        effect = change.bound or 0.0
        low, high = ratio / (1 + effect), ratio * (1 + effect)
    return RowComparison(
        key=key,
        a_ns=nan,
        b_ns=nan,
        n_a=len(row_a.instructions or ()),
        n_b=len(row_b.instructions or ()),
        ratio=ratio,
        low=low,
        high=high,
        verdict=result,
        metric="instructions",
        a_instructions=a,
        b_instructions=b,
        spread=spread,
        spread_source="counts" if result != "invalid" and spread is not None else None,
        note=note,
        p_value=p_value,
        count_kind=kind,
    )


def _side(row: Row) -> Count:
    """A counted row's :class:`archbench.analysis.counting.Count`: the median per
    operation, the blocks' relative range and the blocks."""
    blocks = tuple(row.instructions or ())
    return Count(
        statistics.median(blocks) / row.ops_per_block,
        count_spread(blocks),
        blocks,
        row.ops_per_block,
    )


def _extra_note(a: Sequence[int], b: Sequence[int], ops: int) -> str:
    """What an ``exact+extra`` row's comparison rests on, in words."""
    sizes = sorted({hi - lo for lo, hi in (extra_levels(a) or (0, 0), extra_levels(b) or (0, 0))})
    extra = " or ".join(f"{d:,}" for d in sizes if d)
    return (
        f"a constant with extra work in some blocks ({extra} instructions a block, "
        f"{ops} operations each, e.g. libgcrypt's pool mixing): compared on the constant"
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
        spread = f", spread ±{count_row.spread:.1%}" if count_row.spread else ""
        if count_row.verdict == "no significant change":
            text = (
                f"the counts did not change ({count_row.ratio:.4f}×{spread}); the times did "
                f"({time_row.verdict}, {time_row.ratio:.3f}×): a cause outside the counted "
                "instructions, such as the machine, the cache or memory"
            )
        else:
            text = (
                f"times say {time_row.verdict} ({time_row.ratio:.3f}×), instruction counts "
                f"say {count_row.verdict} ({count_row.ratio:.4f}×{spread})"
            )
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
