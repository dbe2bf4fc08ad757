"""Host side of adaptive repetitions: noisy flags, their causes, result fields and exports."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from helpers import result, row
from hypothesis import given
from hypothesis import strategies as st

from archbench.analysis import noise_cause_text, summarize
from archbench.analysis.noise import KEYGEN_CAUSE, UNKNOWN, noise_causes
from archbench.report.frame import tidy_frame
from archbench.result import Row, RowNoise


def _noise(**kw: Any) -> RowNoise:
    base: dict[str, Any] = {"repetitions": 10, "cpus": 2}
    return RowNoise.model_validate({**base, **kw})


@pytest.mark.parametrize(
    ("readings", "causes"),
    [
        ({}, []),
        ({"steal": 0.12}, ["steal 12 %"]),
        ({"steal": 0.01, "iowait": 0.01, "load_max": 1.9}, []),
        ({"load_max": 3.14}, ["load 3.1 on 2 CPUs"]),
        ({"load_max": 1.5, "cpus": 1}, ["load 1.5 on 1 CPU"]),
        ({"involuntary_switches": 35}, ["35 involuntary context switches in 10 repetitions"]),
        ({"involuntary_switches": 10}, []),
        ({"iowait": 0.2}, ["iowait 20 %"]),
        ({"governors": ["performance"]}, []),
        ({"governors": ["powersave"]}, ["governor powersave"]),
        ({"freq_mhz_min": 1200.0, "freq_mhz_max": 3400.0}, ["frequency 1200-3400 MHz"]),
        ({"steal": 0.05, "load_max": 4.0}, ["steal 5 %", "load 4.0 on 2 CPUs"]),
    ],
)
def test_noise_causes(readings: dict[str, Any], causes: list[str]) -> None:
    assert noise_causes(_noise(**readings)) == causes


def test_noise_cause_text_only_for_noisy_rows() -> None:
    loaded = _noise(load_max=5.0)
    assert noise_cause_text(("noisy",), loaded) == "load 5.0 on 2 CPUs"
    assert noise_cause_text((), loaded) is None
    assert noise_cause_text(("noisy",), _noise()) == UNKNOWN
    assert noise_cause_text(("noisy", "near_resolution"), None) == UNKNOWN


def test_a_tight_median_is_not_noisy_whatever_its_cv() -> None:
    # 40 blocks: most at 1000 ns, a few preempted ones at 3000 ns; CV ~ 40 %.
    samples = [1000 + (i % 5) for i in range(34)] + [3000] * 6
    stats = summarize(samples, 10)
    assert stats.cv > 0.3
    assert stats.ci_half_width is not None and stats.ci_half_width < 0.01
    assert "noisy" not in stats.flags
    # The same spread in 5 blocks has no 95 % interval: still flagged.
    assert "noisy" in summarize([1000, 1001, 3000, 1002, 1000], 10).flags
    # A stricter target than the interval reached keeps the flag.
    wide = [1000, 1040, 960, 1100, 900, 1000, 1050, 950, 1300, 700]
    assert summarize(wide, 10, ci_target=0.5).flags == ()
    assert "noisy" in summarize(wide, 10, ci_target=0.01).flags


@given(samples=st.lists(st.integers(min_value=1, max_value=10**9), min_size=1, max_size=60))
def test_noisy_needs_a_wide_interval(samples: list[int]) -> None:
    stats = summarize(samples, 1)
    if "noisy" in stats.flags:
        assert stats.cv > 0.05
        assert stats.ci_half_width is None or stats.ci_half_width > 0.02


def test_old_rows_load_and_derive_their_stop_reason() -> None:
    old = row("CS", "signing", [1000, 1100, 1050])
    assert (old.stop_reason, old.median_ci, old.noise) == (None, None, None)
    assert old.stop == "repetitions"
    cut = Row.model_validate({**old.model_dump(), "budget_exhausted": True})
    assert cut.stop == "budget"
    broken = Row.model_validate({**old.model_dump(), "valid": False, "invalid_reason": "x"})
    assert broken.stop == "invalid"


def _adaptive_row(samples: list[int], **extra: Any) -> Row:
    base = row("RSA", "signing", samples, 2048).model_dump()
    return Row.model_validate(
        {
            **base,
            "stop_reason": "target",
            "ci_target": 0.02,
            "ci_reached": True,
            "median_ci": {
                "confidence": 0.95,
                "low_per_op_ns": min(samples) / 10,
                "high_per_op_ns": max(samples) / 10,
                "half_width": 0.01,
            },
            "noise": {
                "repetitions": len(samples),
                "steal": 0.12,
                "iowait": 0.0,
                "involuntary_switches": 3,
                "load_max": 3.1,
                "cpus": 2,
                "governors": [],
                "freq_mhz_min": None,
                "freq_mhz_max": None,
            },
            **extra,
        }
    )


def test_exports_carry_interval_stop_reason_and_noise() -> None:
    tight = _adaptive_row([1000, 1005, 995, 1002, 998, 1001, 999])
    loose = _adaptive_row([1000, 1500, 700, 1300, 900, 2000, 600], stop_reason="budget")
    frame = tidy_frame([result("amd64-native", "amd64", "x86_64", "cpu", [tight, loose])])
    first, second = frame.to_dict("records")
    assert first["stop_reason"] == "target"
    assert first["ci_reached"] is True
    assert first["ci_target"] == 0.02
    assert first["ci_half_width"] == pytest.approx(0.005)
    assert first["per_op_ns_ci_low"] == 99.5 and first["per_op_ns_ci_high"] == 100.5
    assert first["steal"] == 0.12 and first["load_max"] == 3.1
    assert first["flags"] == "" and pd.isna(first["noise_cause"])
    assert second["stop_reason"] == "budget"
    assert second["ci_reached"] is False
    assert second["flags"] == "noisy"
    assert second["noise_cause"] == "steal 12 %; load 3.1 on 2 CPUs"


def test_key_generation_that_left_the_loop_is_noisy_by_nature_not_failing_the_target() -> None:
    note = "key generation left the adaptive loop after 6 timed blocks; ..."
    samples = [1_000_000, 1_400_000, 800_000, 1_900_000, 1_100_000, 700_000]
    keygen = Row.model_validate(
        {
            **_adaptive_row(samples).model_dump(),
            "operation": "key_generation",
            "stop_reason": "keygen_cap",
            "ci_reached": None,
            "note": note,
        }
    )
    assert (keygen.stop, keygen.note) == ("keygen_cap", note)
    frame = tidy_frame([result("amd64-native", "amd64", "x86_64", "cpu", [keygen])])
    (record,) = frame.to_dict("records")
    assert record["stop_reason"] == "keygen_cap"
    assert record["ci_half_width"] > 0.02  # the interval is still reported ...
    assert pd.isna(record["ci_reached"])  # ... without a verdict on the target
    assert record["flags"] == "noisy"
    assert record["noise_cause"] == f"{KEYGEN_CAUSE}; steal 12 %; load 3.1 on 2 CPUs"
    assert noise_cause_text(("noisy",), None, "keygen_cap") == KEYGEN_CAUSE
    assert noise_cause_text((), None, "keygen_cap") is None
