"""Statistics of measured rows: summaries, intervals, run comparisons, counts and noise.

Pure arithmetic on the raw samples a results file holds (block times in ns, or
instructions per block); the report and run stages call it, it never reads or
writes a file and never imports ``docker``:

* :mod:`~archbench.analysis.stats`: one row's summary (:func:`summarize`: median,
  quartiles, spread, flags ``noisy`` and ``near_resolution``), the
  distribution-free interval of a median (:func:`median_interval`), ratios of
  two per-operation times (:func:`slowdown`), within- and between-run spread
  (:func:`repeatability`) and order statistics;
* :mod:`~archbench.analysis.comparison`: two runs row by row, B/A with an interval
  and a verdict (:class:`RowComparison`, ``invoke compare``): over paired rounds for
  an interleaved session, over container runs (``--repeat``) for separate runs (no
  interval without them), exact for instruction counts; verdicts under
  Benjamini–Hochberg over the rows (:func:`control_false_discoveries`); the one verdict
  of a counted row between two executions, by its kind (:func:`count_change`), which
  compare, history steps, the gate and bisection all use;
* :mod:`~archbench.analysis.rounds`: the ratio of interleaved rounds and of separate
  runs' container runs, with Student-t intervals on the log scale
  (:func:`round_ratio_interval`, :func:`repeat_ratio_interval`);
* :mod:`~archbench.analysis.environment`: what a result was measured with and what
  changed between two (:func:`environment_diff`);
* :mod:`~archbench.analysis.steps`: where a series of runs steps and why
  (:func:`find_steps`, :func:`series`; ``invoke history``);
* :mod:`~archbench.analysis.changes`: change points over a history's whole series,
  counts and times (PELT, :func:`whole_series`);
* :mod:`~archbench.analysis.gate`: ``--fail-above`` and matrix.yml's per-row
  ``limits:``, counted rows beyond a limit (:func:`over_limit`, :func:`over_limits`);
* :mod:`~archbench.analysis.bisection`: exact bisection of a row's count over a
  commit graph, with skips and several moves (:func:`next_probe`, :func:`arch_state`;
  ``invoke bisect``), and a timed step's decision from interleaved rounds
  (:func:`time_end`, :func:`time_decision`, :func:`time_level`; ``--metric time``);
* :mod:`~archbench.analysis.counting`: ``--metric instructions`` and instructions per
  operation (:func:`median_per_op`, :func:`spread`), a count with its blocks
  (:class:`Count`) and the one reading of a row's counts over executions
  (:func:`count_reading`: ``exact``, ``exact+extra``, ``varying``, ``random``);
* :mod:`~archbench.analysis.noise`: why a noisy row was noisy, from the harness's
  noise readings (:func:`noise_cause_text`) and a table's summary of them
  (:func:`noise_summary`);
* :mod:`~archbench.analysis.overhead`: the harness against a bare loop, paired
  ratios with intervals (``benchmarks/harness_overhead.py``). It imports numpy and
  scipy at load time, so this face does not import it: callers import
  ``archbench.analysis.overhead`` where they need it. scipy is otherwise
  imported only inside the functions that need it (bootstrap, binomial tails).

Errors: ``ValueError`` for samples that are not positive finite numbers;
:class:`archbench.errors.MatrixError` for a ``--metric`` that is not allowed.
"""

from __future__ import annotations

from archbench.analysis.bisection import (
    GOOD_LEVEL,
    ArchState,
    EndDecision,
    Graph,
    Measurement,
    OwnParent,
    Probe,
    Search,
    TimeDecision,
    against_parent,
    arch_state,
    end_confidence,
    next_probe,
    remaining_probes,
    same_level,
    stored_count,
    time_decision,
    time_end,
    time_level,
    time_move,
)
from archbench.analysis.changes import ChangePoint, count_changes, time_changes, whole_series
from archbench.analysis.comparison import (
    DEFAULT_BETWEEN_RUNS,
    DEFAULT_THRESHOLD,
    MIN_COUNT_EFFECT,
    NO_BETWEEN,
    NO_INTERVAL,
    CountChange,
    RowComparison,
    compare,
    constant_verdict,
    control_false_discoveries,
    count_change,
    counts,
    round_samples,
    target_pairs,
    unmatched,
    verdict,
)
from archbench.analysis.counting import (
    RANDOM_SPREAD,
    VARYING_FACTOR,
    VARYING_FLOOR,
    Agreement,
    Count,
    CountKind,
    CountReading,
    FunctionChange,
    block_kind,
    callgrind_agreement,
    constant_ratio,
    count_constants,
    count_effect,
    count_kind,
    count_reading,
    extra_levels,
    function_changes,
    library_stem,
    median_per_op,
    metric_names,
    parse_metrics,
    rank_ratio_interval,
    spread,
)
from archbench.analysis.environment import Change, Environment, environment_diff, environment_of
from archbench.analysis.gate import limit_for, over_limit, over_limits
from archbench.analysis.noise import noise_cause_text, noise_summary
from archbench.analysis.rounds import (
    MIN_ROUNDS,
    TInterval,
    repeat_ratio_interval,
    round_ratio_interval,
    round_t_interval,
)
from archbench.analysis.stats import (
    DEFAULT_CI_TARGET,
    DEFAULT_CONFIDENCE,
    DEFAULT_CV_THRESHOLD,
    DEFAULT_RESOLUTION_FACTOR,
    median_interval,
    median_rank,
    order_statistics,
    repeatability,
    slowdown,
    summarize,
)
from archbench.analysis.steps import SeriesKey, SeriesPoint, Step, count_of, find_steps, series

__all__ = [
    "DEFAULT_BETWEEN_RUNS",
    "DEFAULT_CI_TARGET",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_CV_THRESHOLD",
    "DEFAULT_RESOLUTION_FACTOR",
    "DEFAULT_THRESHOLD",
    "GOOD_LEVEL",
    "MIN_COUNT_EFFECT",
    "MIN_ROUNDS",
    "NO_BETWEEN",
    "NO_INTERVAL",
    "RANDOM_SPREAD",
    "VARYING_FACTOR",
    "VARYING_FLOOR",
    "Agreement",
    "ArchState",
    "Change",
    "ChangePoint",
    "Count",
    "CountChange",
    "CountKind",
    "CountReading",
    "EndDecision",
    "Environment",
    "FunctionChange",
    "Graph",
    "Measurement",
    "OwnParent",
    "Probe",
    "RowComparison",
    "Search",
    "SeriesKey",
    "SeriesPoint",
    "Step",
    "TInterval",
    "TimeDecision",
    "against_parent",
    "arch_state",
    "block_kind",
    "callgrind_agreement",
    "compare",
    "constant_ratio",
    "constant_verdict",
    "control_false_discoveries",
    "count_change",
    "count_changes",
    "count_constants",
    "count_effect",
    "count_kind",
    "count_of",
    "count_reading",
    "counts",
    "end_confidence",
    "environment_diff",
    "environment_of",
    "extra_levels",
    "find_steps",
    "function_changes",
    "library_stem",
    "limit_for",
    "median_interval",
    "median_per_op",
    "median_rank",
    "metric_names",
    "next_probe",
    "noise_cause_text",
    "noise_summary",
    "order_statistics",
    "over_limit",
    "over_limits",
    "parse_metrics",
    "rank_ratio_interval",
    "remaining_probes",
    "repeat_ratio_interval",
    "repeatability",
    "round_ratio_interval",
    "round_samples",
    "round_t_interval",
    "same_level",
    "series",
    "slowdown",
    "spread",
    "stored_count",
    "summarize",
    "target_pairs",
    "time_changes",
    "time_decision",
    "time_end",
    "time_level",
    "time_move",
    "unmatched",
    "verdict",
    "whole_series",
]
