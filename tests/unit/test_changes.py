"""Issue 30: change points over a history's whole series, counts and times (PELT)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import result, row
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import (
    SeriesPoint,
    count_changes,
    find_steps,
    time_changes,
    whole_series,
)
from archbench.result import Result


def test_a_slow_creep_no_pair_shows_is_a_change_over_the_whole_counted_series() -> None:
    # Ten versions, each 0.06 % more instructions: no neighbour differs by 0.1 %.
    values = [1e6 * 1.0006**i for i in range(10)]
    labels = [f"v{i}" for i in range(10)]
    pairs = [SeriesPoint(label, v, "instructions") for label, v in zip(labels, values, strict=True)]
    assert find_steps(pairs) == []
    found = count_changes(labels, values, [0.0] * 10)
    assert found, "the creep of 0.54 % is not found"
    assert all(c.ratio > 1.001 and c.metric == "instructions" for c in found)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=3, max_value=12),
    data=st.data(),
    factor=st.floats(min_value=1.005, max_value=3.0),
    down=st.booleans(),
)
def test_one_planted_count_step_is_the_one_change_point(
    n: int, data: st.DataObject, factor: float, down: bool
) -> None:
    at = data.draw(st.integers(min_value=1, max_value=n - 1))
    step = 1 / factor if down else factor
    values = [2e5 * (step if i >= at else 1.0) for i in range(n)]
    labels = [f"v{i}" for i in range(n)]
    (found,) = count_changes(labels, values, [0.0] * n)
    assert (found.index, found.before, found.after) == (at, f"v{at - 1}", f"v{at}")
    assert found.ratio == pytest.approx(step)
    assert count_changes(labels, [2e5] * n, [0.0] * n) == []


def session(
    rng: np.random.Generator, versions: int, rounds: int, step_at: int | None, step: float
) -> list[list[float]]:
    """ns per operation [version][round]: round drift 10 % common to all, 3 % own noise."""
    drift = rng.lognormal(0.0, 0.10, rounds)
    return [
        [
            1e5
            * drift[r]
            * rng.lognormal(0.0, 0.03)
            * (step if step_at is not None and v >= step_at else 1)
            for r in range(rounds)
        ]
        for v in range(versions)
    ]


def test_timed_change_points_find_a_10_percent_step_through_the_drift_and_rarely_a_false_one() -> (
    None
):
    rng = np.random.default_rng(30)
    labels = [f"v{i}" for i in range(8)]
    found = false = 0
    for _ in range(100):
        hits = time_changes(labels, session(rng, 8, 8, 4, 1.10))
        found += [c.index for c in hits] == [4]
        false += bool(time_changes(labels, session(rng, 8, 8, None, 1.0)))
    assert found >= 90
    assert false <= 10


def test_time_changes_refuse_ragged_rounds() -> None:
    with pytest.raises(ValueError, match="same rounds, at least two"):
        time_changes(["a", "b", "c"], [[1.0, 2.0], [1.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match="positive finite"):
        time_changes(["a", "b", "c"], [[1.0, 2.0], [1.0, -2.0], [1.0, 2.0]])


def _version(label: str, counts: int, times: list[float], run_id: str) -> list[Result]:
    out = []
    for r, level in enumerate(times, 1):
        base = result(
            "amd64-trixie",
            "amd64",
            "x86_64",
            "Xeon",
            [row("CS", "signing", [round(level)] * 3)],
            run_id=run_id,
        )
        assert base.execution is not None
        ex = base.execution.model_copy(update={"repeat_index": r, "interleaved": "S1"})
        out.append(base.model_copy(update={"execution": ex}))
    counted = result(
        "amd64-trixie", "amd64", "x86_64", "Xeon", [row("CS", "signing", [5, 5, 5])], run_id=run_id
    )
    rows = tuple(x.model_copy(update={"instructions": (counts,) * 3}) for x in counted.harness.rows)
    counted = counted.model_copy(
        update={
            "harness": counted.harness.model_copy(update={"rows": rows}),
            "metric": "instructions",
        }
    )
    return [*out, counted]


def test_whole_series_reads_counts_and_the_sessions_rounds_of_stored_runs() -> None:
    drift = [1.0, 1.3, 0.9, 1.1]
    runs = []
    for i in range(6):
        level = 1.25 if i >= 3 else 1.0
        count = 1200 if i >= 2 else 1000
        times = [1e4 * d * level * (1 + 0.002 * ((i + r) % 3)) for r, d in enumerate(drift)]
        runs.append((f"v{i}", _version(f"v{i}", count, times, f"20261203T00000{i}Z-aaaaaa")))
    found = {(c.metric, c.index): c for _, _, c in whole_series(runs)}
    assert set(found) == {("instructions", 2), ("time", 3)}
    assert found[("instructions", 2)].ratio == pytest.approx(1.2)
    assert math.isclose(found[("time", 3)].ratio, 1.25, rel_tol=0.01)


def test_the_history_prints_its_change_points() -> None:
    from archbench.analysis import ChangePoint
    from archbench.report import render_changes_markdown
    from archbench.result import RowKey

    assert "No row changes level over the series." in render_changes_markdown([])
    key = RowKey("amd64", "blindsig", "CS", 0, "", "signing", 1)
    text = render_changes_markdown(
        [("amd64", key, ChangePoint(2, "0.21", "0.22", 1.2, "instructions"))]
    )
    assert "| amd64  | CS signing | instructions | 0.21 → 0.22 | 1.2000× |" in text
