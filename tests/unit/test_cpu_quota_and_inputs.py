"""CPU quota (``cpus`` / ``--cpus``) and blindsig's measurement option (``fresh_items``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from abh.cli import make_parser
from abh.suites.blindsig import driver_arguments
from helpers import REPO, load_module, result, row, run_invoke
from hypothesis import given
from hypothesis import strategies as st

from archbench.analysis.overhead import (
    paired_ratio_interval,
    pooled_ratio_interval,
    samples_for_half_width,
)
from archbench.errors import MatrixError
from archbench.matrix import check_cpus, check_cpus_fit, nano_cpus, parse, parse_cpus
from archbench.platforms import Arch
from archbench.report import render_markdown, render_markdown_table
from archbench.report.sections import FRESH_ITEMS_NOTE, blindsig_notes
from archbench.result import Parameters, Result
from archbench.run import plan
from archbench.run.containers import harness_command


def _matrix_with(line: str) -> str:
    text = (REPO / "matrix.yml").read_text(encoding="utf-8")
    return text.replace("    arch: amd64\n", f"    arch: amd64\n{line}", 1)


# ----------------------------------------------------------------- CPU quota


@given(st.floats(min_value=0.01, max_value=1024.0, allow_nan=False))
def test_every_quota_in_range_is_taken_as_given(cpus: float) -> None:
    assert check_cpus("--cpus", cpus) == cpus
    assert check_cpus("--cpus", repr(cpus)) == cpus
    assert nano_cpus(cpus) == round(cpus * 1_000_000_000)


@given(
    st.one_of(
        st.floats().filter(lambda x: not (math.isfinite(x) and 0.01 <= x <= 1024)),
        st.integers().filter(lambda x: not 1 <= x <= 1024),
        st.booleans(),
        st.text().filter(lambda t: not _is_quota_text(t)),
    )
)
def test_anything_else_is_refused_with_our_error(value: object) -> None:
    with pytest.raises(MatrixError, match=r"^--cpus: "):
        check_cpus("--cpus", value)


def _is_quota_text(text: str) -> bool:
    try:
        value = float(text.strip())
    except ValueError:
        return False
    return math.isfinite(value) and 0.01 <= value <= 1024


def test_quota_messages_name_the_range_and_the_engine() -> None:
    with pytest.raises(MatrixError, match=r"--cpus: 0 CPUs is out of range; give 0.01 to 1024"):
        check_cpus("--cpus", "0")
    with pytest.raises(MatrixError, match=r"'half' is not a number of CPUs"):
        check_cpus("--cpus", "half")
    with pytest.raises(MatrixError, match=r"3 CPUs is more than the engine's 2 CPU\(s\)"):
        check_cpus_fit(3.0, 2, "--cpus")
    check_cpus_fit(2.0, 2, "--cpus")
    check_cpus_fit(64.0, 0, "--cpus")  # unknown count: left to the engine
    assert parse_cpus("--cpus", None) is None


def test_matrix_key_cpus_reaches_the_plan_and_the_flag_wins() -> None:
    m = parse(_matrix_with("    cpus: 1.5\n"))
    (p,) = plan(m, m.select(archs=[Arch.AMD64]), {"local": Arch.AMD64})
    assert p.cpus == 1.5
    (p,) = plan(m, m.select(archs=[Arch.AMD64]), {"local": Arch.AMD64}, cpus=0.5)
    assert p.cpus == 0.5
    (p,) = plan(m, m.select(archs=[Arch.ARM64]), {"local": Arch.AMD64})
    assert p.cpus is None


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("true", "expected a number of CPUs such as 0.5, got True"),
        ('"0.5"', "cpus must be a number such as 0.5, not the text '0.5'"),
        ("0", "0 CPUs is out of range"),
        ("2000.5", "2000.5 CPUs is out of range"),
        (".inf", "'inf' is not a number of CPUs"),
    ],
)
def test_matrix_key_cpus_is_validated(value: str, fragment: str) -> None:
    with pytest.raises(MatrixError, match=rf"targets\[0\] \(amd64-trixie\)\.cpus: {fragment}"):
        parse(_matrix_with(f"    cpus: {value}\n"))


@pytest.mark.slow
def test_bench_flag_cpus_gives_our_error_before_anything_runs() -> None:
    done = run_invoke("bench", "--cpus", "-1", timeout=120)
    assert done.returncode != 0
    assert "--cpus: -1 CPUs is out of range; give 0.01 to 1024" in done.stderr
    assert "Traceback" not in done.stderr


# ------------------------------------------------------ measurement option


def test_fresh_items_reaches_driver_and_parameters() -> None:
    m = parse(_matrix_with(""))
    (p,) = plan(m, m.select(archs=[Arch.AMD64]), {"local": Arch.AMD64}, {"fresh_items": True})
    assert "--fresh-items" in harness_command(p.suites)
    (p,) = plan(m, m.select(archs=[Arch.AMD64]), {"local": Arch.AMD64})
    assert "--fresh-items" not in harness_command(p.suites)
    args = make_parser().parse_args(["--fresh-items"])
    assert driver_arguments(args, [1024])[-1] == "--fresh-items"
    args = make_parser().parse_args([])
    assert "--fresh-items" not in driver_arguments(args, [1024])


@pytest.mark.parametrize("value", ["1", '"yes"', "null", "[true]"])
def test_fresh_items_must_be_a_boolean(value: str) -> None:
    text = _matrix_with("").replace("    fresh_items: false ", f"    fresh_items: {value} ", 1)
    assert f"fresh_items: {value}" in text
    with pytest.raises(MatrixError, match="fresh_items"):
        parse(text)


def _with_fresh_items(fresh: bool | None) -> Result:
    res = result("amd64", "amd64", "x86_64", "AMD", [row("CS", "signing", [1000, 1100])])
    params = Parameters(iterations=10, repetitions=3, rsa_bits=(), fresh_items=fresh)
    return res.model_copy(update={"harness": res.harness.model_copy(update={"parameters": params})})


def test_reports_name_fresh_items_and_only_then() -> None:
    fresh = _with_fresh_items(True)
    assert blindsig_notes(fresh) == (FRESH_ITEMS_NOTE,)
    assert "fresh_items: every operation of a block" in render_markdown_table(fresh)
    for default in (_with_fresh_items(False), _with_fresh_items(None)):
        assert blindsig_notes(default) == ()
        assert "fresh_items" not in render_markdown_table(default)


# ------------------------------------------------------- overhead interval


def test_paired_ratio_interval_is_the_median_with_order_statistics() -> None:
    few = paired_ratio_interval([0.95, 1.05, 1.0, 0.98, 1.03, 1.01])
    many = paired_ratio_interval([0.95, 1.05, 1.0, 0.98, 1.03, 1.01] * 8)
    # n = 6: the 95 % interval is [min, max] (coverage 1 - 2/64 = 96.9 %).
    assert (few.ratio, few.low, few.high, few.rounds) == (1.005, 0.95, 1.05, 6)
    assert many.half_width < few.half_width and many.rounds == 48
    # A streak of disturbed rounds (a quarter of them 30 % low) leaves the median at 1.
    streak = paired_ratio_interval([1.0 + k / 1000 for k in range(-15, 15)] + [0.7] * 10)
    assert 0.99 < streak.ratio < 1.0 and streak.low > 0.98 and streak.high < 1.01
    assert math.isnan(paired_ratio_interval([1.0, 1.1, 1.0, 1.0, 1.0]).low)
    with pytest.raises(ValueError, match="positive finite"):
        paired_ratio_interval([1.0, 0.0, 1.0])


def test_pooled_ratio_interval_of_key_generation_narrows_with_keys() -> None:
    # Key-to-key spread like RSA key generation's (a CV of about 0.5), same distribution.
    rng = np.random.default_rng(3)
    few = pooled_ratio_interval(
        rng.lognormal(0, 0.5, 100).tolist(), rng.lognormal(0, 0.5, 100).tolist()
    )
    many = pooled_ratio_interval(
        rng.lognormal(0, 0.5, 3000).tolist(), rng.lognormal(0, 0.5, 3000).tolist()
    )
    assert few.low < 1 < few.high and many.low < 1 < many.high
    assert many.half_width < few.half_width / 3  # sqrt(30) = 5.5 times narrower, roughly
    assert (few.rounds, many.rounds) == (100, 3000)
    # The 1/sqrt(n) estimate of how many keys reach ±3 % agrees with what 3000 keys gave.
    need = samples_for_half_width(few, 100, many.half_width)
    assert 1500 < need < 6000
    slower = pooled_ratio_interval(
        rng.lognormal(0.2, 0.5, 2000).tolist(), rng.lognormal(0, 0.5, 2000).tolist()
    )
    assert slower.low > 1.1 and slower.ratio == pytest.approx(math.exp(0.2), rel=0.05)
    assert math.isnan(pooled_ratio_interval([1.0, 2.0], [1.0, 2.0, 3.0]).low)
    with pytest.raises(ValueError, match="bare times"):
        pooled_ratio_interval([1.0], [0.0])


def _benchmark(name: str) -> Any:
    return load_module(REPO / "benchmarks" / f"{name}.py", name)


def test_overhead_table_has_every_row_with_its_interval() -> None:
    ov = _benchmark("harness_overhead")
    rounds = [
        {
            "harness": {"CS signing": [10, [1000 + k, 1010, 990]], "RSA-2048 signing": [2, [4e6]]},
            "bare": {"CS signing": [20, [2000, 2000, 2000]], "RSA-2048 signing": [2, [2e6]]},
        }
        for k in range(6)
    ]
    ratios = ov.per_round_ratios(rounds, "median")
    assert ratios["CS signing"] == pytest.approx([1 + k / 1000 for k in range(6)])
    # The default compares the fastest blocks: 990 ns / 10 ops vs 2000 ns / 20 ops.
    assert ov.per_round_ratios(rounds)["CS signing"] == pytest.approx([0.99] * 6)
    assert ratios["RSA-2048 signing"] == [2.0] * 6
    table, ok = ov.format_table(rounds, "median")
    lines = table.splitlines()
    assert lines[2].startswith("CS signing") and "met" in lines[2]
    assert lines[3].startswith("RSA-2048 signing") and "MISSED" in lines[3]
    assert not ok
    # Key generation pools every key of each program (4 rounds x 2 keys, twice as slow).
    keys = [
        {
            "harness": {"RSA-1024 key_generation": [1, [2e7 + k, 2.2e7]]},
            "bare": {"RSA-1024 key_generation": [1, [1e7, 1.1e7 + k]]},
        }
        for k in range(4)
    ]
    table, ok = ov.format_table(keys)
    line = table.splitlines()[2]
    assert line.startswith("RSA-1024 key_generation") and "pooled 8 keys each" in line
    assert " 2.0" in line and "MISSED" in line and not ok


def test_aa_ab_summary_counts_only_rows_with_a_verdict() -> None:
    aa = _benchmark("compare_aa_ab")
    counts = {"no significant change": 9, "faster": 1, "too few samples": 4}
    text = aa._summary("A/A", counts, "no significant change", 0.25)
    assert text.startswith("A/A: 9 of 10 rows with a verdict are 'no significant change' (90%)")
    assert text.endswith("median interval ±25%")


def test_setup_box_names_the_quota() -> None:
    res = result("amd64", "amd64", "x86_64", "AMD", [row("CS", "signing", [1000, 1100])])
    assert "CPU quota" not in render_markdown([res])
    assert res.execution is not None
    quota = res.model_copy(update={"execution": res.execution.model_copy(update={"cpus": 0.5})})
    assert "native, CPU quota 0.5 (Docker --cpus)" in render_markdown([quota])
