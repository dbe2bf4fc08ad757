from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archbench.analysis import median_interval, repeatability, slowdown, summarize


def test_odd_sample_count_by_hand() -> None:
    # samples 10, 20, 30, 40, 100 ns; blocks of 2 operations
    s = summarize([40, 10, 100, 30, 20], 2)
    assert s.n == 5
    assert s.median_ns == 30
    assert (s.min_ns, s.max_ns) == (10, 100)
    assert s.mean_ns == 40
    # sample variance: (900 + 400 + 100 + 0 + 3600) / 4 = 1250
    assert s.stdev_ns == pytest.approx(math.sqrt(1250))
    # type 7: positions 1 + 0.25 * 4 = 2 -> 20; 1 + 0.75 * 4 = 4 -> 40
    assert (s.q1_ns, s.q3_ns, s.iqr_ns) == (20, 40, 20)
    assert s.cv == pytest.approx(math.sqrt(1250) / 40)
    assert s.per_op_ns == 15
    assert s.ops_per_s == pytest.approx(1e9 / 15)
    assert s.thesis_ms == pytest.approx(15 * 10 / 1e6)
    assert s.flags == ("noisy",)


def test_even_sample_count_by_hand() -> None:
    s = summarize([1_000_000, 1_010_000, 1_020_000, 1_030_000], 10)
    assert s.median_ns == 1_015_000
    # type 7 on 4 values: q1 at position 1.75 -> 1_007_500, q3 at 3.25 -> 1_022_500
    assert s.q1_ns == pytest.approx(1_007_500)
    assert s.q3_ns == pytest.approx(1_022_500)
    assert s.per_op_ns == 101_500
    assert s.thesis_ms == pytest.approx(1.015)
    assert s.flags == ()  # CV ~1.3 % is below 5 %


def test_flags_for_too_fast_and_single_rows() -> None:
    s = summarize([900], 1, clock_resolution_ns=10)
    assert s.stdev_ns == 0 and s.cv == 0 and s.iqr_ns == 0
    assert set(s.flags) == {"single_sample", "near_resolution"}
    assert "near_resolution" not in summarize([1000, 1000], 1, clock_resolution_ns=10).flags


@pytest.mark.parametrize("bad", [[], [0], [-5], [float("nan")], [float("inf")]])
def test_bad_samples_are_refused(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        summarize(bad, 1)


def test_slowdown() -> None:
    assert slowdown(300.0, 10.0) == 30.0
    with pytest.raises(ValueError):
        slowdown(1.0, 0.0)


def test_repeatability_by_hand() -> None:
    # run 1: 100, 100 (cv 0); run 2: 110, 130 (cv = stdev 14.142 / mean 120)
    r = repeatability([100, 100, 110, 130], [2, 2])
    assert r.runs == 2
    assert r.within_cv == pytest.approx((0 + math.sqrt(200) / 120) / 2)
    # medians 100 and 120: stdev 14.142, mean 110
    assert r.between_cv == pytest.approx(math.sqrt(200) / 110)
    with pytest.raises(ValueError, match="do not split"):
        repeatability([1, 2, 3], [2, 2])
    with pytest.raises(ValueError, match="do not split"):
        repeatability([1, 2], [2])


# --- distribution-free interval of the median -------------------------------------------


def test_median_interval_ranks_follow_the_binomial() -> None:
    # n = 6: [x1, x6] covers with 1 - 2/64 = 96.9 %; n = 10: [x2, x9], 97.9 %
    # (x3..x8 would be 89.1 %); n = 5 reaches 93.75 % at best: no 95 % interval.
    assert median_interval([6, 1, 5, 2, 4, 3]) == (1.0, 6.0)
    assert median_interval(list(range(1, 11))) == (2.0, 9.0)
    assert median_interval([1, 2, 3, 4, 5]) is None
    assert median_interval([1, 2, 3, 4, 5], confidence=0.9) == (1.0, 5.0)
    assert median_interval(list(range(100)), confidence=0.95) == (39.0, 60.0)


def test_median_interval_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="confidence"):
        median_interval([1, 2, 3], confidence=1.0)
    with pytest.raises(ValueError, match="no samples"):
        median_interval([])


@given(st.lists(st.floats(min_value=1, max_value=1e12), min_size=6, max_size=200))
def test_median_interval_brackets_the_sample_median(xs: list[float]) -> None:
    interval = median_interval(xs)
    assert interval is not None
    low, high = interval
    assert min(xs) <= low <= statistics.median(xs) <= high <= max(xs)
