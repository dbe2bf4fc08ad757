"""Many stored runs as series over time (:mod:`archbench.report.timeline`).

Statistics are computed for all rows at once (numpy); a row's median and interval must
be those of :func:`statistics.median` and :func:`archbench.analysis.median_interval` of
its blocks per operation (Hypothesis), a ``--repeat`` run's rows pooled, the latest run
of each machine class chosen by its start, and a long series drawn as groups of
consecutive runs that together hold every run once.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from helpers import counted, result, row
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import median_interval
from archbench.report import timeline
from archbench.result import IndexEntry, Result, ResultStore


def _entries(root: Path, results: list[Result]) -> list[IndexEntry]:
    store = ResultStore(root)
    for r in results:
        store.save(r)
    entries, failures = store.indexed()
    assert failures == []
    return entries


def _at(r: Result, started: str, repeat: int = 1) -> Result:
    assert r.execution is not None
    return r.model_copy(
        update={
            "harness": r.harness.model_copy(update={"started_at": started}),
            "execution": r.execution.model_copy(update={"repeat_index": repeat}),
        }
    )


def _run(i: int) -> str:
    return f"20261201T{i // 60:02d}{i % 60:02d}00Z-aaaaaa"


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(min_value=1, max_value=10**12), min_size=3, max_size=30),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.integers(min_value=1, max_value=10**15), min_size=3, max_size=3),
)
def test_each_row_has_the_median_and_interval_of_its_blocks(
    tmp_path_factory: pytest.TempPathFactory, blocks: list[list[int]], counts: list[int]
) -> None:
    ops = ["signing", "verifying", "blinding", "unblinding", "key_generation"]
    rows = [row("CS", op, b) for op, b in zip(ops, blocks, strict=False)]
    timed = result("a", "amd64", "x86_64", "c", rows)
    # Three blocks, so every row can carry counts: counts of 19 digits and more are
    # read by Python, not numpy (whose int64 would saturate).
    big = counted(timed, {op: counts[i % 3] * 10 ** (i * 3) for i, op in enumerate(ops)})
    entries = _entries(
        tmp_path_factory.mktemp("t"), [timed, big] if min(map(len, blocks)) >= 3 else [timed]
    )
    line = timeline.build(entries)
    v = line.values
    for i in range(len(v.run)):
        metric = timeline.METRICS[v.metric[i]]
        source = timed if metric == "time" else big
        key = line.keys[v.key[i]]
        want = next(r for r in source.harness.rows if r.operation == key.operation)
        per_op = [b / want.ops_per_block for b in (want.instructions or want.samples_ns)]
        # Counts beyond 2**53 per operation are divided as floats by the timeline and as
        # integers by Python here: the same median, up to the last bit.
        assert v.per_op[i] == pytest.approx(statistics.median(per_op), rel=1e-12)
        assert v.n[i] == len(per_op)
        interval = median_interval(per_op) if metric == "time" else None
        if interval is None:
            assert v.low[i] != v.low[i] and v.high[i] != v.high[i]  # NaN: none
        else:
            assert (v.low[i], v.high[i]) == interval


def test_a_repeated_run_pools_its_files_and_an_invalid_row_is_not_drawn(
    tmp_path: Path,
) -> None:
    first = result("a", "amd64", "x86_64", "c", [row("CS", "signing", [100, 110, 120])])
    second = result("a", "amd64", "x86_64", "c", [row("CS", "signing", [200, 210, 220])])
    bad = result("a", "amd64", "x86_64", "c", [row("CS", "signing", [1], valid=False, reason="x")])
    results = [_at(first, "2026-12-01T00:00:00Z"), _at(second, "2026-12-01T00:00:00Z", repeat=2)]
    later = _at(bad, "2026-12-02T00:00:00Z").model_copy(update={"run_id": _run(2)})
    line = timeline.build(_entries(tmp_path, [*results, later]))
    assert len(line.runs) == 2 and line.repeated
    v = line.values
    assert v.n.tolist() == [6, 1]
    assert v.per_op[0] == statistics.median([10, 11, 12, 20, 21, 22])
    assert line.values.reasons == {1: "x"}
    (series,) = timeline.row_series(line)
    assert [[p.first for p in points] for _m, points in series.series] == [[0]]
    rows = timeline.rows_frame(line)
    assert rows["valid"].tolist() == [True, False]
    assert rows["invalid_reason"].isna().tolist() == [True, False]
    assert rows["invalid_reason"][1] == "x"


def test_the_latest_run_of_each_machine_class_is_chosen_by_its_start(tmp_path: Path) -> None:
    def machine(name: str, cpu: str, i: int, started: str) -> Result:
        r = result(name, "amd64", "x86_64", cpu, [row("CS", "signing", [100, 101, 102])])
        return _at(r, started).model_copy(update={"run_id": _run(i)})

    results = [
        machine("a", "EPYC", 0, "2026-12-03T00:00:00Z"),  # the latest a on EPYC: oldest id
        machine("a", "EPYC", 1, "2026-12-01T00:00:00Z"),
        machine("a", "Xeon", 2, "2026-12-02T00:00:00Z"),  # another CPU: another class
        machine("b", "EPYC", 3, "unknown"),
        machine("b", "EPYC", 4, "2026-12-01T00:00:00Z"),
    ]
    results.append(counted(results[1], {"signing": 5000}))
    line = timeline.build(_entries(tmp_path, results))
    assert line.machines == ("a (amd64) on EPYC", "a (amd64) on Xeon", "b (amd64)")
    assert timeline.latest(line) == {
        (_run(0), "a", "time"),
        (_run(1), "a", "instructions"),
        (_run(2), "a", "time"),
        (_run(4), "b", "time"),
    }
    # A run whose start is no time is in the exports, not on a figure.
    assert len(timeline.runs_frame(line)) == 5
    (times, counts) = timeline.row_series(line)
    assert sum(len(points) for _m, points in times.series) == 4
    assert counts.metric == "instructions"


def test_a_long_series_is_drawn_as_groups_of_consecutive_runs(tmp_path: Path) -> None:
    results = [
        _at(
            result("a", "amd64", "x86_64", "c", [row("CS", "signing", [1000 + i] * 6)]),
            f"2026-12-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
        ).model_copy(update={"run_id": _run(i)})
        for i in range(45)
    ]
    line = timeline.build(_entries(tmp_path, results))
    (series,) = timeline.row_series(line, max_points=10)
    ((_machine, points),) = series.series
    assert len(points) == 10
    covered = [i for p in points for i in range(p.first, p.last + 1)]
    assert covered == list(range(45))  # every run once, in time order
    for p in points:
        medians = [(1000 + i) / 10 for i in range(p.first, p.last + 1)]
        assert p.value == statistics.median(medians)
        assert p.first <= p.at <= p.last
        interval = median_interval(medians)
        assert (p.low, p.high) == (interval if interval else (None, None))
    assert len(timeline.row_series(line)[0].series[0][1]) == 45  # under MAX_POINTS: each


def test_the_runs_exports_hold_every_run_and_row_once(tmp_path: Path) -> None:
    rows = [row("CS", "signing", [100, 101, 102]), row("RSA", "signing", [9, 9, 9], key_bits=2048)]
    results = [
        _at(result("a", "amd64", "x86_64", "c", rows), f"2026-12-0{1 + i}T00:00:00Z").model_copy(
            update={"run_id": _run(i)}
        )
        for i in range(3)
    ]
    results.append(counted(results[0], {"signing": 7000}))
    line = timeline.build(_entries(tmp_path, results))
    runs = timeline.runs_frame(line)
    assert runs.columns.tolist() == list(timeline.RUNS_COLUMNS)
    assert runs["run_id"].tolist() == [_run(0), _run(1), _run(2)]
    assert runs["files"][0] == f"{_run(0)}/a.json;{_run(0)}/a.instructions.json"
    values = timeline.rows_frame(line)
    assert values.columns.tolist() == list(timeline.ROWS_COLUMNS)
    assert len(values) == 3 * 2 + 2
    counted_rows = values[values["metric"] == "instructions"]
    assert counted_rows["instructions_per_op"].tolist()[0] == 700.0
    assert counted_rows["per_op_ns"].isna().all()
    assert values["row_id"].tolist()[:2] == ["blindsig:CS:signing", "blindsig:RSA 2048 bit:signing"]
