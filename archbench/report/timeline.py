"""Many stored runs of the same machines as series over time: the page's figures, the runs
exports.

A results folder that collects every commit's runs (CI artifacts merged into one history,
nightly runs, bisection steps) holds thousands of runs of a few machines. From the store's
index entries (:meth:`archbench.result.ResultStore.indexed`: no whole results file is
parsed again) this module makes:

- the machine classes (:class:`MachineClass`): a target name on one CPU model, native or
  emulated; a series is drawn per class, so a row is only ever compared like with like;
- per run and target (:class:`TimelineRun`), and per row and metric of it, the median per
  operation (ns, or instructions) of its blocks, pooled over the files of a ``--repeat K``
  run, with the 95 % interval of the median where the row has one (the order statistics of
  :func:`archbench.analysis.median_interval`, 6 blocks or more; counts have none: they are
  exact), held as columns (:class:`Values`: 10,000 runs have some 300,000);
- the latest run of each class (:func:`latest`): what the chapter shows of
  ``invoke report --all-runs``;
- per row and metric, each class's series (:func:`row_series`): a point per run, or, past
  :data:`MAX_POINTS` runs, per group of consecutive runs (the median of their medians and
  its 95 % interval, as asv's and rustc-perf's graphs aggregate a long history);
- the exports ``runs.csv`` (a line per run and target: its class and provenance) and
  ``run-rows.csv`` (a line per row of each: its statistics) (:func:`runs_frame`,
  :func:`rows_frame`): every run, each run's facts once.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from archbench.analysis import median_interval, median_rank
from archbench.report.record import row_id
from archbench.result import IndexEntry, RowKey, numbers, row_key

if TYPE_CHECKING:
    import pandas as pd

MAX_POINTS: Final = 200
"""Points per machine class on a figure over time; a class with more runs of a row is
drawn as this many groups of consecutive runs (1,000 runs of five classes: each run drawn;
10,000: groups of 10)."""
RUNS_CSV: Final = "runs.csv"
ROWS_CSV: Final = "run-rows.csv"
METRICS: Final = ("time", "instructions")
"""The metrics, in the order the page and the exports give them (:attr:`Values.metric`)."""


@dataclass(frozen=True, order=True, slots=True)
class MachineClass:
    """What a series is drawn per: a target name on one CPU model, native or emulated.

    ``cpu``: the CPU model the container saw (under emulation the host's, which is what
    an emulated time depends on). Two runs of one class are the same measurement on the
    same kind of machine; a target that moved to another CPU becomes another class.
    """

    target: str
    arch: str
    emulated: bool
    cpu: str

    def label(self, with_cpu: bool) -> str:
        """``ci-amd64 (amd64)``, ``ci-armv7 (armv7, emulated)``; with ``with_cpu`` the CPU
        model after it (when one target name ran on several)."""
        kind = ", emulated" if self.emulated else ""
        cpu = f" on {self.cpu}" if with_cpu else ""
        return f"{self.target} ({self.arch}{kind}){cpu}"


def machine_class(entry: IndexEntry) -> MachineClass:
    """The class of the file ``entry``."""
    return MachineClass(entry.target.name, entry.target.arch, entry.emulated, entry.setup.cpu_model)


@dataclass(frozen=True, slots=True)
class TimelineRun:
    """One target of one run: its files (both metrics, every ``--repeat``), its class
    (an index into :attr:`Timeline.machines`) and when it started."""

    run_id: str
    target: str
    machine: int
    started_at: str
    when: datetime | None
    """``started_at`` read as a time (None: not ISO 8601, e.g. ``unknown``)."""
    commit: str
    """The GNUnet commit (``execution.gnunet_source``), else its version; ``""``: none."""
    files: tuple[IndexEntry, ...]


Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Values:
    """Every row of every run in every metric, as columns of one length (a value each),
    in run order (the values of run ``i`` are ``start[i]:start[i + 1]``).

    ``run``: index into :attr:`Timeline.runs`; ``metric``: index into :data:`METRICS`;
    ``key``: index into :attr:`Timeline.keys`; ``n``: the blocks; ``per_op``: the median
    per operation (ns, or instructions; NaN without blocks); ``low``/``high``: the 95 %
    interval of that median (NaN: fewer than 6 blocks, or counts); ``reasons``: value
    index -> why the row is invalid (an invalid row is in the exports, never drawn).
    """

    run: Ints
    metric: Ints
    key: Ints
    ops_per_block: Ints
    n: Ints
    per_op: Floats
    low: Floats
    high: Floats
    start: Ints
    reasons: dict[int, str]


@dataclass(frozen=True)
class Timeline:
    """Every run of an index's entries, by class and then time, and their rows' values."""

    machines: tuple[str, ...]
    """The classes' labels, in order (:meth:`MachineClass.label`)."""
    classes: tuple[MachineClass, ...]
    runs: tuple[TimelineRun, ...]
    keys: tuple[RowKey, ...]
    """The rows (without their target) in order of first appearance."""
    row_ids: tuple[str, ...]
    """Per key, the exports' row id (:func:`archbench.report.record.row_id`)."""
    values: Values

    @property
    def repeated(self) -> bool:
        """True when a class has more than one run: there is something to draw over time."""
        return len({r.machine for r in self.runs}) < len(self.runs)


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _when(stamp: str) -> datetime | None:
    """``stamp`` as a time (UTC when it names no zone), None when it is none."""
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _commit(entry: IndexEntry) -> str:
    source = entry.execution.gnunet_source if entry.execution else None
    if source:
        for field in ("commit", "version", "ref"):
            value = source.get(field)
            if isinstance(value, str) and value:
                return value
    return entry.setup.gnunet_version or ""


def _runs(entries: Sequence[IndexEntry]) -> tuple[list[MachineClass], list[TimelineRun]]:
    """The classes (sorted) and the runs (by class, then start, then run id)."""
    groups: dict[tuple[str, str], list[IndexEntry]] = {}
    for e in entries:
        groups.setdefault((e.run_id, e.target.name), []).append(e)
    heads = {k: next((f for f in fs if f.metric == "time"), fs[0]) for k, fs in groups.items()}
    classes = sorted({machine_class(h) for h in heads.values()})
    number = {c: i for i, c in enumerate(classes)}
    runs = [
        TimelineRun(
            run_id,
            target,
            number[machine_class(head)],
            head.started_at,
            _when(head.started_at),
            _commit(head),
            tuple(groups[(run_id, target)]),
        )
        for (run_id, target), head in heads.items()
    ]
    runs.sort(key=lambda r: (r.machine, r.when is not None, r.when or _EPOCH, r.run_id))
    return classes, runs


@dataclass
class _Pending:
    """Values gathered before their statistics: per value its blocks per operation."""

    run: list[int]
    metric: list[int]
    key: list[int]
    ops: list[int]
    texts: list[str]
    """The blocks as :data:`archbench.result.index.Numbers` text ("" when none)."""
    pooled: dict[int, list[float]]
    """Value index -> per-operation blocks of a row pooled over ``--repeat`` files."""
    reasons: dict[int, str]


def build(entries: Sequence[IndexEntry]) -> Timeline:
    """The timeline of ``entries`` (:meth:`archbench.result.ResultStore.indexed`'s, any
    metric): runs by class label and then start time, each row's value.

    The medians and intervals of all rows are computed at once (numpy, rows grouped by
    their number of blocks); they are those of :func:`statistics.median` and
    :func:`archbench.analysis.median_interval` of the row's blocks per operation.
    """
    classes, runs = _runs(entries)
    cpus: dict[str, set[str]] = {}
    for c in classes:
        cpus.setdefault(c.target, set()).add(c.cpu)
    keys: dict[tuple[object, ...], int] = {}
    key_list: list[RowKey] = []
    ids: list[str] = []
    p = _Pending([], [], [], [], [], {}, {})
    start = [0]
    for i, run in enumerate(runs):
        for m, metric in enumerate(METRICS):
            files = sorted(
                (f for f in run.files if f.metric == metric), key=lambda f: f.repeat_index
            )
            at: dict[int, int] = {}  # key -> value index, to pool --repeat files
            for f in files:
                for row in f.rows:
                    fields = tuple(row[:9])
                    k = keys.get(fields)
                    if k is None:
                        k = keys[fields] = len(key_list)
                        key_list.append(row_key("", row))
                        ids.append(row_id(row))
                    text = (row.instructions if m else row.samples_ns) or ""
                    if k in at:  # a --repeat file's row: pooled per operation
                        v = at[k]
                        pooled = p.pooled.setdefault(v, _per_op(p.texts[v], p.ops[v]))
                        pooled += _per_op(text, row.ops_per_block)
                    else:
                        at[k] = v = len(p.run)
                        p.run.append(i)
                        p.metric.append(m)
                        p.key.append(k)
                        p.ops.append(row.ops_per_block)
                        p.texts.append(text)
                    if not row.valid:
                        p.reasons.setdefault(v, row.invalid_reason or "no reason given")
        start.append(len(p.run))
    return Timeline(
        tuple(c.label(len(cpus[c.target]) > 1) for c in classes),
        tuple(classes),
        tuple(runs),
        tuple(key_list),
        tuple(ids),
        _statistics(p, np.array(start, dtype=np.int64)),
    )


def _per_op(text: str, ops: int) -> list[float]:
    return [b / ops for b in numbers(text)] if text else []


_DIGIT_SHAPE: Final = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))


def _long_number(text: str) -> bool:
    """True when ``text`` (decimal integers) has one of 19 digits or more (digits mapped
    to ``0``, the rest to spaces, in C)."""
    return b"0" * 19 in text.encode("ascii", "replace").translate(_DIGIT_SHAPE)


def _statistics(p: _Pending, start: Ints) -> Values:
    """Median and interval of every pending value: rows of one size at a time, from the
    blocks of every row parsed at once (the rows' texts joined are one text of integers,
    which numpy reads at some 40 MB/s); a row pooled over ``--repeat`` files one by one."""
    size = len(p.run)
    ops = np.array(p.ops, dtype=np.int64)
    # numpy's int64 saturates silently: a count of 19 digits or more (valid, if absurd)
    # is read by Python, with its row.
    if _long_number(" ".join(p.texts)):
        for v, t in enumerate(p.texts):
            if v not in p.pooled and _long_number(t):
                p.pooled[v] = _per_op(t, p.ops[v])
    counts = np.array(
        [0 if v in p.pooled or not t else t.count(" ") + 1 for v, t in enumerate(p.texts)],
        dtype=np.int64,
    )
    text = " ".join(t for v, t in enumerate(p.texts) if counts[v])
    blocks = np.fromstring(text, dtype=np.int64, sep=" ") if text else np.zeros(0, np.int64)
    if len(blocks) != counts.sum():
        raise ValueError("the index's blocks are not the integers their rows say")
    offsets = np.concatenate(([0], np.cumsum(counts)))
    per_op = np.full(size, np.nan)
    low = np.full(size, np.nan)
    high = np.full(size, np.nan)
    metric = np.array(p.metric, dtype=np.int64)
    for n in np.unique(counts):
        if n == 0:
            continue
        rows = np.flatnonzero(counts == n)
        matrix = blocks[offsets[rows][:, None] + np.arange(n)] / ops[rows][:, None]
        matrix.sort(axis=1)
        # statistics.median's: the middle block, or the mean of the two middle ones.
        per_op[rows] = (matrix[:, (n - 1) // 2] + matrix[:, n // 2]) / 2
        rank = median_rank(int(n))
        if rank is not None:
            timed = metric[rows] == 0
            low[rows[timed]] = matrix[timed, rank - 1]
            high[rows[timed]] = matrix[timed, n - rank]
    for v, pooled in p.pooled.items():
        counts[v] = len(pooled)
        if pooled:
            per_op[v] = statistics.median(pooled)
            interval = median_interval(pooled) if metric[v] == 0 else None
            if interval is not None:
                low[v], high[v] = interval
    return Values(
        run=np.array(p.run, dtype=np.int64),
        metric=metric,
        key=np.array(p.key, dtype=np.int64),
        ops_per_block=ops,
        n=counts,
        per_op=per_op,
        low=low,
        high=high,
        start=start,
        reasons=p.reasons,
    )


def latest(timeline: Timeline) -> set[tuple[str, str, str]]:
    """(run id, target, metric) of the latest run of each class in each metric: by start
    time, then run id (a run whose start is not a time comes before those that are)."""
    best: dict[tuple[int, str], TimelineRun] = {}
    for run in timeline.runs:  # in time order within a class
        for metric in {f.metric for f in run.files}:
            best[(run.machine, metric)] = run
    return {(r.run_id, r.target, metric) for (_m, metric), r in best.items()}


@dataclass(frozen=True, slots=True)
class Point:
    """One point of a series: runs ``first``..``last`` (indices of :attr:`Timeline.runs`,
    one class's, consecutive in time), drawn at run ``at``'s start; ``value`` the median
    (of the run's blocks, or of the runs' medians), ``low``/``high`` its 95 % interval
    (None: fewer than 6 blocks or runs, or counts)."""

    first: int
    last: int
    at: int
    value: float
    low: float | None
    high: float | None


@dataclass(frozen=True)
class RowSeries:
    """A row in one metric over time: per class (index into :attr:`Timeline.machines`)
    its points."""

    metric: str
    key: RowKey
    series: tuple[tuple[int, tuple[Point, ...]], ...]


def row_series(timeline: Timeline, max_points: int = MAX_POINTS) -> list[RowSeries]:
    """Per row and metric (times first, rows in order of first appearance), each class's
    series of valid values (invalid rows and runs without a start time left out); a
    class with more than ``max_points`` values is drawn as ``max_points`` groups of
    consecutive runs (:class:`Point`)."""
    v = timeline.values
    machine = np.array([r.machine for r in timeline.runs], dtype=np.int64)
    dated = np.array([r.when is not None for r in timeline.runs], dtype=bool)
    valid = ~np.isin(np.arange(len(v.run)), list(v.reasons))
    shown = valid & ~np.isnan(v.per_op) & (dated[v.run] if len(v.run) else valid)
    out = []
    for m, metric in enumerate(METRICS):
        for k, key in enumerate(timeline.keys):
            mine = np.flatnonzero(shown & (v.metric == m) & (v.key == k))
            if not len(mine):
                continue
            classes = machine[v.run[mine]]
            series = tuple(
                (int(c), tuple(_points(v, mine[classes == c], max_points)))
                for c in np.unique(classes)
            )
            out.append(RowSeries(metric, key, series))
    return out


def _points(v: Values, rows: Ints, max_points: int) -> list[Point]:
    """The points of one class's values ``rows`` (in run order)."""
    runs: list[int] = v.run[rows].tolist()
    medians: list[float] = v.per_op[rows].tolist()
    if len(rows) <= max_points:
        lows: list[float] = v.low[rows].tolist()
        highs: list[float] = v.high[rows].tolist()
        return [
            Point(r, r, r, m, None if lo != lo else lo, None if hi != hi else hi)  # NaN: none
            for r, m, lo, hi in zip(runs, medians, lows, highs, strict=True)
        ]
    out = []
    for g in range(max_points):
        a, b = g * len(runs) // max_points, (g + 1) * len(runs) // max_points
        group = medians[a:b]
        interval = median_interval(group)
        out.append(
            Point(
                runs[a],
                runs[b - 1],
                runs[(a + b) // 2],
                float(statistics.median(group)),
                interval[0] if interval else None,
                interval[1] if interval else None,
            )
        )
    return out


RUNS_COLUMNS: Final = (
    "run_id",
    "target",
    "machine",
    "arch",
    "emulated",
    "cpu_model",
    "started_at",
    "gnunet_commit",
    "files",
)
"""The columns of ``runs.csv``, a line per run and target: its class (``machine``), its
start and GNUnet commit, and its results files (relative to the results folder, ``;``
between them)."""
ROWS_COLUMNS: Final = (
    "run_id",
    "target",
    "metric",
    "row_id",
    "ops_per_block",
    "n_blocks",
    "per_op_ns",
    "per_op_ns_ci_low",
    "per_op_ns_ci_high",
    "instructions_per_op",
    "valid",
    "invalid_reason",
)
"""The columns of ``run-rows.csv``, a line per row of a run and target in one metric,
keyed like ``results.csv`` by (``run_id``, ``target``, ``row_id``) and the ``metric``:
the median per operation (ns; or instructions, ``instructions_per_op``) of its blocks and
the 95 % interval of a time's median (empty with fewer than 6 blocks)."""


def runs_frame(timeline: Timeline) -> pd.DataFrame:
    """``runs.csv``'s frame (:data:`RUNS_COLUMNS`), runs by class and time."""
    import pandas as pd

    c = timeline.classes
    return pd.DataFrame(
        [
            (
                r.run_id,
                r.target,
                timeline.machines[r.machine],
                c[r.machine].arch,
                c[r.machine].emulated,
                c[r.machine].cpu,
                r.started_at,
                r.commit,
                ";".join(f.path for f in r.files),
            )
            for r in timeline.runs
        ],
        columns=list(RUNS_COLUMNS),
    )


def rows_frame(timeline: Timeline) -> pd.DataFrame:
    """``run-rows.csv``'s frame (:data:`ROWS_COLUMNS`): every value, in run order. A value
    nobody knows (an interval of fewer than 6 blocks, the time of a counted row) is
    missing."""
    import pandas as pd

    v = timeline.values
    counted = v.metric == 1
    run_ids = np.array([r.run_id for r in timeline.runs], dtype=object)
    targets = np.array([r.target for r in timeline.runs], dtype=object)
    reasons = np.full(len(v.run), None, dtype=object)
    for i, why in v.reasons.items():
        reasons[i] = why
    return pd.DataFrame(
        {
            "run_id": run_ids[v.run],
            "target": targets[v.run],
            "metric": np.array(METRICS, dtype=object)[v.metric],
            "row_id": np.array(timeline.row_ids, dtype=object)[v.key],
            "ops_per_block": v.ops_per_block,
            "n_blocks": v.n,
            "per_op_ns": np.where(counted, np.nan, v.per_op),
            "per_op_ns_ci_low": v.low,
            "per_op_ns_ci_high": v.high,
            "instructions_per_op": np.where(counted, v.per_op, np.nan),
            "valid": ~np.isin(np.arange(len(v.run)), list(v.reasons)),
            "invalid_reason": reasons,
        },
        columns=list(ROWS_COLUMNS),
    )
