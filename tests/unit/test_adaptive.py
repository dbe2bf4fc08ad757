"""Adaptive repetitions, intervals and noise readings of the in-container harness.

The interval the harness stops on (harness/abh/suites/blindsig_median_ci.py, stdlib) is held
against the host's (archbench.analysis.stats.median_interval, scipy); the /proc parsers
get property tests; the driver protocol is exercised end to end with a small
Python stand-in for blindsig that speaks ``--interactive``.
"""

from __future__ import annotations

import json
import statistics
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any, cast

import jsonschema
import pytest
from abh import setup_system
from abh.suites import blindsig_adaptive, blindsig_median_ci, blindsig_noise
from abh.suites.blindsig import RunRequest, build_rows
from abh.suites.blindsig_output import DriverOutputError, parse_driver_output
from helpers import CS_OPS, SCHEMA, load_harness
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.analysis import stats

H = load_harness("archbench_harness_adaptive")

samples_st = st.lists(st.integers(min_value=1, max_value=10**12), min_size=1, max_size=120)
confidence_st = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999]) | st.floats(
    min_value=0.01, max_value=0.999
)


@settings(max_examples=300, deadline=None)
@given(samples=samples_st, confidence=confidence_st)
def test_harness_interval_equals_the_hosts(samples: list[int], confidence: float) -> None:
    assert blindsig_median_ci.median_interval(samples, confidence) == stats.median_interval(
        samples, confidence
    )


@pytest.mark.parametrize(
    ("n", "rank"), [(1, None), (5, None), (6, 1), (8, 1), (9, 2), (10, 2), (20, 6), (100, 40)]
)
def test_median_rank_known_values(n: int, rank: int | None) -> None:
    # Conover's table A3: n = 20 -> x_(6) .. x_(15) at 95.86 %; n = 100 -> x_(40) .. x_(61).
    assert blindsig_median_ci.median_rank(n, 0.95) == rank


def test_coverage_is_exact() -> None:
    assert blindsig_median_ci.coverage(6, 1) == 1 - Fraction(2, 64)
    with pytest.raises(ValueError, match="rank"):
        blindsig_median_ci.coverage(6, 4)


@settings(max_examples=200, deadline=None)
@given(
    samples=st.lists(st.integers(min_value=1, max_value=10**9), min_size=6, max_size=80),
    target=st.floats(min_value=0.001, max_value=0.5),
)
def test_target_reached_matches_the_definition(samples: list[int], target: float) -> None:
    low, high = blindsig_median_ci.median_interval(samples) or (0.0, 0.0)
    median = statistics.median(samples)
    want = max(median - low, high - median) / median <= target
    assert blindsig_median_ci.target_reached(samples, target, 6) is want
    assert blindsig_median_ci.target_reached(samples, target, len(samples) + 1) is False


def test_target_reached_on_tight_and_loose_samples() -> None:
    tight = [1000, 1001, 999, 1000, 1002, 998, 1000]
    assert blindsig_median_ci.target_reached(tight, 0.02, 6)
    assert not blindsig_median_ci.target_reached(tight[:5], 0.02, 1)  # no 95 % interval below 6
    assert not blindsig_median_ci.target_reached([1000, 1500, 700, 1000, 2000, 900, 1100], 0.02, 6)
    with pytest.raises(ValueError, match="target"):
        blindsig_median_ci.target_reached(tight, 0.0, 6)


# ---------------------------------------------------------------- /proc parsers


cpu_numbers = st.lists(st.integers(min_value=0, max_value=2**40), min_size=4, max_size=10)


@given(numbers=cpu_numbers, per_cpu=st.lists(cpu_numbers, max_size=3))
def test_parse_proc_stat_reads_the_aggregate_line(
    numbers: list[int], per_cpu: list[list[int]]
) -> None:
    lines = ["cpu  " + " ".join(map(str, numbers))]
    lines += [f"cpu{i} " + " ".join(map(str, xs)) for i, xs in enumerate(per_cpu)]
    lines += ["intr 12 3 4", "ctxt 99", "btime 1700000000"]
    got = blindsig_noise.parse_proc_stat("\n".join(lines) + "\n")
    padded = numbers + [0] * (10 - len(numbers))
    assert got == blindsig_noise.CpuTimes(total=sum(padded[:8]), iowait=padded[4], steal=padded[7])


@given(text=st.text(max_size=200))
def test_parse_proc_stat_never_raises(text: str) -> None:
    got = blindsig_noise.parse_proc_stat(text)
    assert got is None or got.total >= got.steal


def test_parse_proc_stat_rejects_garbage() -> None:
    assert blindsig_noise.parse_proc_stat("cpu  1 2 x 4\n") is None
    assert blindsig_noise.parse_proc_stat("cpu0 1 2 3 4\n") is None
    assert blindsig_noise.parse_proc_stat("") is None


@given(count=st.integers(min_value=0, max_value=2**63), other=st.integers(min_value=0))
def test_parse_involuntary_switches(count: int, other: int) -> None:
    text = (
        f"Name:\tblindsig\nvoluntary_ctxt_switches:\t{other}\n"
        f"nonvoluntary_ctxt_switches:\t{count}\n"
    )
    assert blindsig_noise.parse_involuntary_switches(text) == count
    assert blindsig_noise.parse_involuntary_switches("Name:\tx\n") is None


@given(cpus=st.sets(st.integers(min_value=0, max_value=300), min_size=1))
def test_parse_cpu_list_round_trips(cpus: set[int]) -> None:
    ordered = sorted(cpus)
    parts, start = [], ordered[0]
    for prev, cur in zip(ordered, [*ordered[1:], None], strict=True):
        if cur != prev + 1 if cur is not None else True:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = cur if cur is not None else start
    assert blindsig_noise.parse_cpu_list(",".join(parts)) == ordered
    assert blindsig_noise.parse_cpu_list("3-1") is None
    assert blindsig_noise.parse_cpu_list("a") is None


def test_noise_tally_fractions_and_maxima() -> None:
    def snap(
        total: int, iowait: int, steal: int, switches: int, load: float, freq: int
    ) -> blindsig_noise.Snapshot:
        return blindsig_noise.Snapshot(
            blindsig_noise.CpuTimes(total, iowait, steal), switches, load, (freq,)
        )

    tally = blindsig_noise.NoiseTally()
    tally.add(snap(1000, 10, 5, 3, 0.5, 2_000_000), snap(1100, 15, 17, 10, 1.5, 2_400_000))
    tally.add(snap(5000, 50, 50, 50, 3.1, 1_800_000), snap(5100, 50, 50, 52, 2.0, 2_000_000))
    got = tally.to_dict(2, ["performance"])
    assert got == {
        "repetitions": 2,
        "steal": 0.06,  # 12 of 200 jiffies
        "iowait": 0.025,
        "involuntary_switches": 9,
        "load_max": 3.1,
        "cpus": 2,
        "governors": ["performance"],
        "freq_mhz_min": 1800.0,
        "freq_mhz_max": 2400.0,
    }
    unknown = blindsig_noise.NoiseTally()
    unknown.add(
        blindsig_noise.Snapshot(None, None, None, ()), blindsig_noise.Snapshot(None, None, None, ())
    )
    assert unknown.to_dict(1, [])["steal"] is None


def test_governors_and_frequency_from_a_sysfs_tree(tmp_path: Path) -> None:
    for cpu, (gov, khz) in enumerate([("schedutil", 1_200_000), ("performance", 3_000_000)]):
        d = tmp_path / f"cpu{cpu}" / "cpufreq"
        d.mkdir(parents=True)
        (d / "scaling_governor").write_text(gov + "\n")
        (d / "scaling_cur_freq").write_text(f"{khz}\n")
    dirs = blindsig_noise.cpufreq_dirs(None, tmp_path)
    assert blindsig_noise.read_governors(dirs) == ["performance", "schedutil"]
    assert blindsig_noise.cpufreq_dirs([1, 7], tmp_path) == [tmp_path / "cpu1" / "cpufreq"]
    assert blindsig_noise.take_snapshot(None, dirs).freq_khz == (1_200_000, 3_000_000)


# ---------------------------------------------------------------- the protocol

FAKE_DRIVER = r"""
import sys
args = sys.argv[1:]
cap = int(args[args.index("--repetitions") + 1])
ops = __OPS__
def ns_of(op, i, rep):
    return __NS__
print("archbench-blindsig\t2")
for key, value in [("clock_resolution_ns", 1), ("min_block_ns", 0), ("max_block_ops", 100000),
                   ("max_time_ns", 0), ("message_bytes", 64)]:
    print(f"meta\t{key}\t{value}")
print("meta\torder\tinterleaved")
print("meta\torder_seed\t42")
interactive = "--interactive" in args
reuse = "--reuse-keys" in args
taken, keygens, skip, stop = 0, 0, False, "repetitions"
while taken < cap:
    if interactive:
        print("start\tCS\t0", flush=True)
        assert sys.stdin.readline().strip() == "go"
    for i, op in enumerate(ops):
        if op == "key_generation":
            if skip:
                continue  # as blindsig.c: no block, no line; its own count
            print(f"sample\tCS\t0\t{op}\t10\t{keygens}\t{ns_of(op, i, keygens)}")
            keygens += 1
        else:
            print(f"sample\tCS\t0\t{op}\t10\t{taken}\t{ns_of(op, i, taken)}")
    taken += 1
    if interactive:
        print(f"ask\tCS\t0\tsample\t{taken - 1}", flush=True)
        answer = sys.stdin.readline().strip()
        assert answer in ("more", "more nokeygen", "stop"), answer
        assert reuse or answer != "more nokeygen", "nokeygen without --reuse-keys"
        skip = answer == "more nokeygen"
        if answer == "stop":
            stop = "target"
            break
print(f"done\tCS\t0\t{taken}\t0\t{taken * 1000}\t{stop}")
print("end\tok")
"""
SPREAD_NS = "10_000 + (rep % 3) * __SPREAD__ + i"
"""Every operation: 10000, 10000 + spread, 10000 + 2 spread, ... (+ its index)."""


def _driver(tmp_path: Path, spread: int, ns: str = SPREAD_NS) -> Path:
    script = tmp_path / "blindsig"
    body = (
        FAKE_DRIVER.replace("__NS__", ns)
        .replace("__OPS__", repr(CS_OPS))
        .replace("__SPREAD__", str(spread))
    )
    script.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    script.chmod(0o700)
    return script


def _main(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spread: int,
    *extra: str,
    ns: str = SPREAD_NS,
) -> int:
    monkeypatch.setattr(setup_system, "package_versions", lambda: ({}, {}))
    monkeypatch.setattr(setup_system, "_run_quiet", lambda argv, timeout_s=60.0: None)
    driver = _driver(tmp_path, spread, ns)
    return int(H.main(["--scheme", "cs", "--iterations", "10", "--driver", str(driver), *extra]))


def test_target_stops_a_pair_after_the_minimum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Samples 10000, 10010, 10020, ...: the 95 % interval is within ±0.1 % from 6 on.
    code = _main(tmp_path, monkeypatch, 10, "--repetitions", "50", "--ci-target", "0.02")
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["parameters"]["ci_target"] == 0.02
    assert doc["parameters"]["order_seed"] == 42
    for row in doc["rows"]:
        assert len(row["samples_ns"]) == 6
        assert row["stop_reason"] == "target"
        assert row["ci_reached"] is True
        interval = row["median_ci"]
        assert interval["low_per_op_ns"] == min(row["samples_ns"]) / 10
        assert interval["high_per_op_ns"] == max(row["samples_ns"]) / 10
        assert 0 < interval["half_width"] <= 0.02
        assert row["noise"]["repetitions"] == 6
        assert row["noise"]["cpus"] >= 1


def test_wide_samples_run_to_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Samples alternate over 10000 .. 30000: never within ±2 %.
    code = _main(tmp_path, monkeypatch, 10_000, "--repetitions", "9", "--ci-target", "0.02")
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    keygen, row = doc["rows"][0], doc["rows"][1]
    assert (keygen["operation"], row["operation"]) == ("key_generation", "r_derivation")
    assert (len(row["samples_ns"]), row["stop_reason"], row["ci_reached"]) == (
        9,
        "repetitions",
        False,
    )
    assert row["median_ci"]["half_width"] > 0.02
    assert row["noise"]["repetitions"] == 9
    # Key generation left after min_repetitions (6) blocks: its own stop reason, no verdict
    # on the target, the interval as measured, and the noise of its own 6 repetitions.
    assert (len(keygen["samples_ns"]), keygen["stop_reason"], keygen["ci_reached"]) == (
        6,
        "keygen_cap",
        None,
    )
    assert keygen["median_ci"]["half_width"] > 0.02
    assert keygen["noise"]["repetitions"] == 6
    assert keygen["note"].startswith("key generation left the adaptive loop after 6 timed")
    assert "other 3 repetitions reused its last keys" in keygen["note"]
    assert "note" not in row


# Key generation always wide (10000 .. 30000); the other rows wide in their first four
# repetitions (every other one 10 % slower), then steady: their 95 % interval first lies
# within ±2 % at 12 samples ([x_(3), x_(10)], both 10000 + i; at 11 it is [x_(2), x_(10)]
# and x_(10) is one of the two slow ones).
KEYGEN_WIDE_NS = (
    "10_000 + i + ((rep % 3) * 10_000 if op == 'key_generation'"
    " else (1_000 if rep < 4 and rep % 2 else 0))"
)


def test_key_generation_leaves_after_the_minimum_and_the_pair_stops_on_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _main(
        tmp_path,
        monkeypatch,
        0,
        "--repetitions",
        "40",
        "--ci-target",
        "0.02",
        ns=KEYGEN_WIDE_NS,
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    rows = {row["operation"]: row for row in doc["rows"]}
    keygen = rows.pop("key_generation")
    assert keygen["samples_ns"] == [10_000, 20_000, 30_000, 10_000, 20_000, 30_000]
    assert (keygen["stop_reason"], keygen["ci_reached"]) == ("keygen_cap", None)
    assert keygen["median_ci"]["low_per_op_ns"] == 1_000.0
    assert keygen["median_ci"]["high_per_op_ns"] == 3_000.0
    assert "other 6 repetitions reused its last keys" in keygen["note"]
    for i, row in enumerate(rows.values(), start=1):
        assert len(row["samples_ns"]) == 12, row["operation"]
        assert row["noise"]["repetitions"] == 12
        assert (row["stop_reason"], row["ci_reached"]) == ("target", True)
        assert row["median_ci"]["half_width"] == 0.0
        assert row["median_ci"]["low_per_op_ns"] == (10_000 + i) / 10


def test_key_generation_stays_without_a_target_or_when_told_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without --ci-target no --reuse-keys is passed (the stand-in refuses "more nokeygen"
    # without it) and every row has every repetition.
    code = _main(tmp_path, monkeypatch, 0, "--repetitions", "8", ns=KEYGEN_WIDE_NS)
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert {len(row["samples_ns"]) for row in doc["rows"]} == {8}
    assert {row["stop_reason"] for row in doc["rows"]} == {"repetitions"}


def _samples(keygen: list[int], others: list[int]) -> dict[str, list[int]]:
    return {op: keygen if op == "key_generation" else others for op in CS_OPS}


def test_the_answer_after_a_timed_repetition() -> None:
    rule = blindsig_adaptive.AdaptiveRule(target=0.02, min_repetitions=6)
    wide, tight = [10_000, 20_000, 30_000] * 4, [10_000] * 12
    answer = blindsig_adaptive.answer_after_sample
    # Fewer than min_repetitions: key generation stays, nothing can stop.
    assert answer(_samples(wide[:5], wide[:5]), CS_OPS, rule) == "more"
    assert answer(_samples(tight[:5], tight[:5]), CS_OPS, rule) == "more"
    # Key generation has its 6 blocks: it leaves; the pair goes on for the others...
    assert answer(_samples(wide[:6], wide[:6]), CS_OPS, rule) == "more nokeygen"
    assert answer(_samples(wide[:6], wide[:9]), CS_OPS, rule) == "more nokeygen"
    # ... and stops as soon as they are all within the target, whatever key generation did.
    assert answer(_samples(wide[:6], tight[:6]), CS_OPS, rule) == "stop"
    assert answer(_samples(wide[:6], tight[:11]), CS_OPS, rule) == "stop"
    assert blindsig_adaptive.pair_reached(_samples(wide[:6], tight[:7]), CS_OPS, rule)
    # One other row still wide keeps the pair going.
    mixed = _samples(wide[:6], tight[:9]) | {"signing": wide[:9]}
    assert answer(mixed, CS_OPS, rule) == "more nokeygen"
    # Without a target, or with key generation kept in the loop, it never leaves.
    assert answer(_samples(wide[:6], tight[:6]), CS_OPS, blindsig_adaptive.AdaptiveRule()) == (
        "more"
    )
    stays = blindsig_adaptive.AdaptiveRule(target=0.02, keygen_leaves=False)
    assert not stays.reuses_keys
    assert answer(_samples(wide[:9], tight[:9]), CS_OPS, stays) == "more"
    assert answer(_samples(tight[:9], tight[:9]), CS_OPS, stays) == "stop"


def test_key_generation_blocks_must_be_the_ones_the_harness_allowed() -> None:
    lines = ["archbench-blindsig\t2"]
    for rep in range(8):
        for op in CS_OPS:
            if op != "key_generation" or rep < 7:
                lines.append(f"sample\tCS\t0\t{op}\t10\t{rep}\t{1000 + rep}")
    lines += ["done\tCS\t0\t8\t0\t8000\trepetitions", "end\tok", ""]
    output = parse_driver_output("\n".join(lines))
    request = RunRequest(iterations=10, repetitions=8)
    # The harness let key generation leave after 6 blocks, but the driver timed 7.
    with pytest.raises(DriverOutputError, match="key_generation: valid but repetitions"):
        build_rows(output, [("CS", None)], request, print, {("CS", None): 6})
    rows = build_rows(output, [("CS", None)], request, print, {("CS", None): 7})
    assert [len(r["samples_ns"]) for r in rows] == [7, 8, 8, 8, 8, 8, 8]
    # Without a nokeygen answer, every row needs every repetition.
    with pytest.raises(DriverOutputError, match="key_generation: valid but repetitions"):
        build_rows(output, [("CS", None)], request, print)


def test_without_a_target_the_harness_never_stops_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _main(tmp_path, monkeypatch, 10, "--repetitions", "7")
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    row = doc["rows"][0]
    assert (len(row["samples_ns"]), row["stop_reason"], row["ci_reached"]) == (
        7,
        "repetitions",
        None,
    )
    assert row["median_ci"] is not None


def test_a_false_target_stop_is_refused() -> None:
    text = "\n".join(
        ["archbench-blindsig\t2"]
        + [
            f"sample\tCS\t0\t{op}\t10\t{rep}\t{1000 + 500 * (rep % 2)}"
            for rep in range(6)
            for op in CS_OPS
        ]
        + ["done\tCS\t0\t6\t0\t6000\ttarget", "end\tok", ""]
    )
    output = parse_driver_output(text)
    assert output.done[("CS", None)].stop == "target"
    # annotate_rows() takes the rows as plain dicts, as run_blindsig() passes them.
    rows = cast(
        "list[dict[str, Any]]",
        build_rows(output, [("CS", None)], RunRequest(iterations=10, repetitions=50), print),
    )
    rule = blindsig_adaptive.AdaptiveRule(target=0.02)
    with pytest.raises(DriverOutputError, match="do not reach"):
        blindsig_adaptive.annotate_rows(rows, output, rule, None, 2, [], print)
    with pytest.raises(DriverOutputError, match="nobody set"):
        blindsig_adaptive.annotate_rows(
            rows, output, blindsig_adaptive.AdaptiveRule(), None, 2, [], print
        )


def test_unknown_stop_reason_is_refused() -> None:
    text = "archbench-blindsig\t2\ndone\tCS\t0\t1\t0\t10\tbored\nend\tok\n"
    with pytest.raises(DriverOutputError, match="stop reason 'bored'"):
        parse_driver_output(text)


_blocks_st = st.lists(st.integers(min_value=1, max_value=10**6), max_size=14)


@settings(max_examples=300, deadline=None)
@given(
    others=st.lists(_blocks_st, min_size=len(CS_OPS) - 1, max_size=len(CS_OPS) - 1),
    keygen=_blocks_st,
    other_keygen=_blocks_st,
    target=st.floats(min_value=0.001, max_value=0.5),
    min_repetitions=st.integers(min_value=1, max_value=8),
)
def test_key_generation_stops_counting_once_it_has_its_blocks(
    others: list[list[int]],
    keygen: list[int],
    other_keygen: list[int],
    target: float,
    min_repetitions: int,
) -> None:
    rule = blindsig_adaptive.AdaptiveRule(target=target, min_repetitions=min_repetitions)
    samples = dict(zip(CS_OPS[1:], others, strict=True)) | {"key_generation": keygen}
    answer = blindsig_adaptive.answer_after_sample(samples, CS_OPS, rule)
    rest_reached = all(
        blindsig_median_ci.target_reached(xs, target, min_repetitions) for xs in others
    )
    if len(keygen) >= min_repetitions:
        # Left: what its blocks were no longer matters, only the other rows do.
        assert answer == ("stop" if rest_reached else "more nokeygen")
        if len(other_keygen) >= min_repetitions:
            changed = samples | {"key_generation": other_keygen}
            assert blindsig_adaptive.answer_after_sample(changed, CS_OPS, rule) == answer
    else:
        # Still in the loop (it cannot have reached the target with fewer blocks).
        assert answer == "more"
