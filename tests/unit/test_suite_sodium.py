"""Unit tests of the sodium suite on recorded ``sodium_bench`` output (no Docker)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from abh.suites import sodium
from abh.suites.common import SuiteError
from abh.suites.sodium import driver_argv, normalize_config
from abh.suites.sodium_output import parse_driver_output
from abh.suites.sodium_rows import build_outcome, order_statistics
from helpers import HARNESS_DIR, REPO

FIXTURES = REPO / "tests" / "fixtures" / "sodium"
HOST_DEFAULT = "host-debian12-amd64-default.txt"
TRIXIE_AUTO = "trixie-amd64-auto.txt"
RISCV_AUTO = "trixie-riscv64-qemu-auto.txt"
SHIM = "host-debian12-amd64-accept-all-shim.txt"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def outcome_of(
    name: str, **settings: Any
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    warnings: list[str] = []
    out = build_outcome(
        parse_driver_output(fixture(name)), normalize_config(settings), warnings.append
    )
    return out.rows, {"tools": out.tools, "extra": out.extra}, warnings


def find(rows: list[dict[str, Any]], scheme: str, operation: str, param: str | None = None) -> Any:
    hits = [
        r for r in rows if (r["scheme"], r["operation"], r["param"]) == (scheme, operation, param)
    ]
    assert len(hits) == 1
    return hits[0]


# ---- order_statistics -------------------------------------------------------------


def test_order_statistics_hand_computed() -> None:
    # Blocks of 2 operations: per-op times sorted are 5, 6, 7, 10, 50 ns.
    stats = order_statistics([20, 14, 100, 10, 12], 2, 2)
    assert stats == {"best": 5.0, "nth_best": 6.0, "mean": 15.6, "nth_worst": 10.0, "worst": 50.0}


def test_order_statistics_eight_samples_third_best_like_pycryptopp() -> None:
    stats = order_statistics([8, 1, 7, 2, 6, 3, 5, 4], 1, 3)
    assert (stats["best"], stats["nth_best"], stats["nth_worst"], stats["worst"]) == (1, 3, 6, 8)
    assert stats["mean"] == 4.5


def test_order_statistics_fewer_samples_than_nth_uses_the_last() -> None:
    assert order_statistics([30, 10], 1, 3) == {
        "best": 10.0,
        "nth_best": 30.0,
        "mean": 20.0,
        "nth_worst": 10.0,
        "worst": 30.0,
    }
    assert set(order_statistics([7], 1, 3).values()) == {7.0}


@pytest.mark.parametrize(
    ("samples", "ops", "nth", "message"),
    [
        ([], 1, 3, "at least one sample"),
        ([5, 0], 1, 3, "positive"),
        ([5], 0, 3, "ops_per_block = 0"),
        ([5], 1, 0, "nth = 0"),
    ],
)
def test_order_statistics_refuses_bad_input(
    samples: list[int], ops: int, nth: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        order_statistics(samples, ops, nth)


# ---- normalize_config ---------------------------------------------------------------


def test_defaults_follow_pycryptopp_sizes() -> None:
    config = normalize_config({})
    assert config["repetitions"] == 64
    assert config["warmup"] == 4
    assert config["sizes"] == [1000, 10000, 100000]
    assert config["ops_per_sample"] == 1
    assert config["nth"] == 3
    assert config["timeout_s"] == 900.0
    # Where the Makefile builds it: the harness folder, beside archbench_harness.py.
    assert config["driver"] == str(HARNESS_DIR / "sodium_bench")


def test_driver_argv() -> None:
    config = normalize_config(
        {"repetitions": 8, "warmup": 0, "sizes": [64, 1024], "ops_per_sample": "auto"}
    )
    assert driver_argv(config)[1:] == [
        "--repetitions",
        "8",
        "--warmup",
        "0",
        "--sizes",
        "64,1024",
        "--ops-per-sample",
        "auto",
    ]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"reps": 3}, "unknown setting.*reps"),
        ({"repetitions": 0}, r"repetitions = 0; allowed: a whole number in 1\.\.1000000"),
        ({"repetitions": True}, "repetitions = True"),
        ({"warmup": -1}, "warmup = -1"),
        ({"sizes": []}, r"sizes = \[\]"),
        ({"sizes": [64, 64]}, "distinct"),
        ({"sizes": [0]}, r"sizes = \[0\]"),
        ({"sizes": "1000"}, "sizes = '1000'"),
        ({"ops_per_sample": "fast"}, "ops_per_sample = 'fast'.*\"auto\""),
        ({"ops_per_sample": 0}, "ops_per_sample = 0"),
        ({"nth": 5, "repetitions": 4}, "nth = 5 but repetitions = 4"),
        ({"timeout_s": 0}, "timeout_s = 0"),
        ({"driver": ""}, "driver = ''"),
    ],
)
def test_bad_settings(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        normalize_config(settings)


# ---- recorded output ---------------------------------------------------------------


def test_host_default_run_rows_and_values() -> None:
    rows, other, warnings = outcome_of(HOST_DEFAULT)
    assert len(rows) == 4 + 3 * 3
    assert all(r["valid"] and r["suite"] == "sodium" for r in rows)
    assert [(r["scheme"], r["operation"], r["param"]) for r in rows[:5]] == [
        ("Ed25519", "key_generation", None),
        ("Ed25519", "sign", None),
        ("Ed25519", "verify", None),
        ("X25519", "derive", None),
        ("XSalsa20", "stream", "1000 B"),
    ]
    sign = find(rows, "Ed25519", "sign")
    assert sign["samples_ns"][:2] == [12961, 12912]
    assert len(sign["samples_ns"]) == 64 and sign["ops_per_block"] == 1
    assert sign["bytes_per_op"] is None and sign["repetitions_requested"] == 64
    sha = find(rows, "SHA-256", "hash", "100000 B")
    assert sha["bytes_per_op"] == 100000 and sha["samples_ns"][0] == 246611
    assert other["tools"] == {"libsodium": "1.0.18"}
    assert other["extra"]["clock"]["pair_overhead_ns"] == 16.78
    assert other["extra"]["clock"]["min_sample_ns"] == 1700
    assert "avx2" in other["extra"]["runtime_features"]
    assert other["extra"]["sign_message_bytes"] == 32
    assert len(other["extra"]["rows"][1]["warmup_samples_ns"]) == 4
    # One call on 1000 B takes 860..1181 ns: under 100 x the 16.78 ns clock-read cost.
    assert warnings == [
        "sodium: XSalsa20 stream 1000 B: best sample 860 ns is under 1700 ns (100 clock "
        'ticks or clock-read costs), so clock reading weighs in; ops_per_sample "auto" '
        "avoids this"
    ]


def test_host_default_summary_is_pycryptopp_style() -> None:
    _, other, _ = outcome_of(HOST_DEFAULT)
    summary = {(s["scheme"], s["operation"], s["param"]): s for s in other["extra"]["summary"]}
    sign = summary[("Ed25519", "sign", None)]
    # Sorted samples (awk over the fixture): 12773, _, 12813 ... 16176, _, 16919; sum 855502.
    assert sign["unit"] == "µs/op" and sign["count"] == 64 and sign["nth"] == 3
    assert sign["best"] == pytest.approx(12.773)
    assert sign["nth_best"] == pytest.approx(12.813)
    assert sign["mean"] == pytest.approx(855502 / 64 / 1000)
    assert sign["nth_worst"] == pytest.approx(16.176)
    assert sign["worst"] == pytest.approx(16.919)
    sha = summary[("SHA-256", "hash", "100000 B")]
    assert sha["unit"] == "ns/B"
    assert sha["best"] == pytest.approx(2.40374)
    assert sha["nth_best"] == pytest.approx(2.42409)
    assert sha["mean"] == pytest.approx(16011121 / 64 / 100000)
    assert sha["worst"] == pytest.approx(2.77533)


def test_auto_calibrated_run_divides_by_block_size() -> None:
    rows, other, warnings = outcome_of(
        TRIXIE_AUTO, repetitions=16, warmup=2, sizes=[64, 1024, 65536], ops_per_sample="auto"
    )
    assert len(rows) == 13 and all(r["valid"] for r in rows)
    stream = find(rows, "XSalsa20", "stream", "64 B")
    assert stream["ops_per_block"] == 10 and len(stream["samples_ns"]) == 16
    details = next(d for d in other["extra"]["rows"] if d["param"] == "64 B")
    assert details["calibration_blocks"] == [
        {"ops_per_block": 1, "ns": 8733},
        {"ops_per_block": 1, "ns": 221},
        {"ops_per_block": 10, "ns": 1851},
        {"ops_per_block": 10, "ns": 1832},
    ]
    summary = next(s for s in other["extra"]["summary"] if s["param"] == "64 B")
    # Best block 1819 ns of 10 calls of 64 B; the sum of the 16 blocks is 191214 ns.
    assert summary["best"] == pytest.approx(1819 / 10 / 64)
    assert summary["mean"] == pytest.approx(191214 / 16 / 10 / 64)
    assert summary["worst"] == pytest.approx(144515 / 10 / 64)
    assert find(rows, "SHA-512", "hash", "64 B")["ops_per_block"] == 8
    assert warnings == []


def test_emulated_riscv64_run() -> None:
    rows, other, warnings = outcome_of(
        RISCV_AUTO, repetitions=8, warmup=1, sizes=[1000, 10000], ops_per_sample="auto"
    )
    assert len(rows) == 4 + 3 * 2 and all(r["valid"] for r in rows)
    assert find(rows, "Ed25519", "verify")["samples_ns"][:2] == [171149, 166502]
    assert find(rows, "XSalsa20", "stream", "1000 B")["ops_per_block"] == 3
    assert other["extra"]["runtime_features"] == []
    assert other["extra"]["clock"]["observed_tick_ns"] == 150
    assert other["extra"]["clock"]["min_sample_ns"] == 16500
    assert warnings == []


def test_failed_check_makes_invalid_rows_and_keeps_others() -> None:
    # Recorded with an LD_PRELOAD shim whose verify accepts everything (see README.txt).
    rows, _, warnings = outcome_of(SHIM, repetitions=4, warmup=1, sizes=[64])
    ed = [r for r in rows if r["scheme"] == "Ed25519"]
    assert len(ed) == 3
    for row in ed:
        assert not row["valid"]
        assert row["invalid_reason"] == "signature verifies a message with one bit flipped"
    # No timed sample: the failing warmup block is carried, as the contract does.
    assert find(rows, "Ed25519", "sign")["samples_ns"] == [13357]
    assert all(r["valid"] for r in rows if r["scheme"] != "Ed25519")
    assert find(rows, "X25519", "derive")["samples_ns"] == [31579, 34805, 33799, 31525]
    # Fixed one-call samples of 64 B messages are under min_sample_ns (1700 ns here).
    assert any("XSalsa20 stream 64 B: best sample 212 ns" in w for w in warnings)


def test_zero_ns_sample_makes_row_invalid() -> None:
    text = fixture(RISCV_AUTO).replace(
        "sample Ed25519 verify - 0 1 171149", "sample Ed25519 verify - 0 1 0"
    )
    warnings: list[str] = []
    config = normalize_config({"repetitions": 8, "sizes": [1000, 10000]})
    rows = build_outcome(parse_driver_output(text), config, warnings.append).rows
    verify = find(rows, "Ed25519", "verify")
    assert not verify["valid"]
    assert verify["invalid_reason"] == ("below clock resolution: 1 of 8 timed samples read 0 ns")
    assert len(verify["samples_ns"]) == 7


def test_missing_row_and_version_mismatch_warn() -> None:
    text = "\n".join(
        line
        for line in fixture(RISCV_AUTO).splitlines()
        if not line.startswith(("sample SHA-512", "warmup SHA-512", "calib SHA-512"))
    ).replace("meta sodium_header_version 1.0.18", "meta sodium_header_version 1.0.19")
    warnings: list[str] = []
    config = normalize_config({"repetitions": 8, "sizes": [1000, 10000], "ops_per_sample": "auto"})
    build_outcome(parse_driver_output(text), config, warnings.append)
    assert warnings == [
        "sodium: sodium_bench was built against libsodium 1.0.19 but runs 1.0.18",
        "sodium: sodium_bench printed nothing for SHA-512 hash 1000 B",
        "sodium: sodium_bench printed nothing for SHA-512 hash 10000 B",
    ]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("\nend\n", "\n"), "no 'end' line"),
        (lambda t: t + "sample X25519 derive - 0 1 5\n", "line 132: text after 'end'"),
        (lambda t: t.replace("meta sodium_version 1.0.18\n", ""), "no 'meta sodium_version'"),
        (
            lambda t: t.replace("sample X25519 derive - 0 1 ", "sample X448 derive - 0 1 ", 1),
            "unknown row X448 derive",
        ),
        (
            lambda t: t.replace("sample X25519 derive - 0 1 ", "sample X25519 derive - 0 x ", 1),
            "operation count 'x' is not a number",
        ),
        (
            lambda t: t.replace("sample X25519 derive - 0 1 ", "sample X25519 derive - 0 2 ", 1),
            "timed samples of 2 and 1 operations",
        ),
        (
            lambda t: t.replace("SHA-256 hash 1000 1000 ", "SHA-256 hash 1000 999 ", 1),
            "size 1000 and bytes_per_op 999 is inconsistent",
        ),
        (
            lambda t: t.replace("SHA-256 hash 1000 1000 ", "SHA-256 hash - 0 ", 1),
            "SHA-256 hash needs a size",
        ),
        (lambda t: t.replace("meta clock CLOCK", "clock CLOCK"), "line 4: cannot read"),
    ],
)
def test_malformed_output_is_refused(edit: Any, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        parse_driver_output(edit(fixture(RISCV_AUTO)))


# ---- run() without the real driver -------------------------------------------------


def test_missing_driver_names_the_package(tmp_path: Path) -> None:
    config = normalize_config({"driver": str(tmp_path / "sodium_bench")})
    with pytest.raises(SuiteError, match="add libsodium-dev to the target's profile"):
        sodium.run(config, lambda _: None)


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "sodium_bench"
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_run_replays_recorded_output(tmp_path: Path) -> None:
    driver = _script(tmp_path, f"cat '{FIXTURES / RISCV_AUTO}'\n")
    config = normalize_config(
        {"driver": driver, "repetitions": 8, "warmup": 1, "sizes": [1000, 10000]}
    )
    outcome = sodium.run(config, lambda _: None)
    assert len(outcome.rows) == 10
    assert outcome.parameters == config


def test_failing_driver_reports_its_message(tmp_path: Path) -> None:
    driver = _script(tmp_path, "echo 'sodium_bench: sodium_init() failed' >&2\nexit 1\n")
    with pytest.raises(SuiteError, match=r"status 1: sodium_bench: sodium_init\(\) failed"):
        sodium.run(normalize_config({"driver": driver}), lambda _: None)


def test_row_without_timed_samples_or_blocks() -> None:
    lines = fixture(RISCV_AUTO).splitlines()
    kept = [
        line
        for line in lines
        if not line.startswith(("sample SHA-512 hash 10000 ", "warmup SHA-512 hash 10000 "))
        and " X25519 " not in line
    ]
    kept.insert(-1, "invalid X25519 derive - 0 crypto_scalarmult_base failed")
    warnings: list[str] = []
    config = normalize_config({"repetitions": 8, "sizes": [1000, 10000], "ops_per_sample": "auto"})
    rows = build_outcome(parse_driver_output("\n".join(kept)), config, warnings.append).rows
    sha = find(rows, "SHA-512", "hash", "10000 B")
    assert not sha["valid"]
    assert sha["invalid_reason"] == "the driver printed no timed sample"
    assert sha["samples_ns"] == [51434]  # the last calibration block
    assert not any(r["scheme"] == "X25519" for r in rows)
    assert warnings == ["sodium: X25519 derive left out: crypto_scalarmult_base failed"]
