"""Unit tests of the openssl-speed suite on recorded real ``openssl speed -mr`` output.

Fixtures (tests/fixtures/openssl-speed/, see README.txt there) hold each process's
stdout and stderr as recorded from OpenSSL 1.1.1w, 3.0.19 and 3.5.9.
"""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest
from abh.suites import openssl_speed as sos
from abh.suites import openssl_speed_algorithms as osa
from abh.suites import openssl_speed_output as oso
from abh.suites.common import CommandResult, SuiteError
from helpers import REPO

FIXTURES = REPO / "tests" / "fixtures" / "openssl-speed"


def load(name: str) -> tuple[str, str]:
    """(stdout, stderr) of fixture ``name``."""
    return (
        (FIXTURES / f"{name}.stdout").read_text(),
        (FIXTURES / f"{name}.stderr").read_text(),
    )


def measure(
    name: str, algorithm: str, *, processes: int = 1, size: int | None = None, seconds: int = 1
) -> dict[str, oso.Result]:
    out = oso.parse_speed_output(*load(name))
    return oso.extract_measurements(
        osa.ALGORITHMS[algorithm], out, processes=processes, seconds=seconds, size=size
    )


def ok(result: oso.Result) -> oso.Measurement:
    assert isinstance(result, oso.Measurement), result
    return result


def reason(result: oso.Result) -> str:
    assert isinstance(result, str), result
    return result


def parent_rates(stdout: str, prefix: str) -> list[float]:
    """The parent's aggregate ``+F`` values (the line without ``Got:``) after ``prefix``."""
    for line in stdout.splitlines():
        if line.startswith(prefix):
            return [float(v) for v in line[len(prefix) :].split(":")]
    raise AssertionError(f"no {prefix} line")


# ----------------------------------------------------------------- single process, per version


@pytest.mark.parametrize(
    ("fixture", "sign", "sign_s", "verify"),
    [
        ("openssl111-rsa2048", 1864, 1.00, 63230),
        ("openssl30-rsa2048", 3407, 1.00, 57182),
        ("openssl35-rsa2048", 1913, 1.00, 34222),
        ("openssl-riscv64-rsa2048", 183, 1.01, 8461),
    ],
)
def test_rsa_sign_verify_each_version(fixture: str, sign: int, sign_s: float, verify: int) -> None:
    got = measure(fixture, "rsa2048")
    assert set(got) == {"sign", "verify"}
    assert ok(got["sign"]).count == sign
    assert ok(got["sign"]).seconds == sign_s
    assert ok(got["verify"]).count == verify


def test_openssl35_extra_rsa_tests_are_parsed_but_not_reported() -> None:
    out = oso.parse_speed_output(*load("openssl35-rsa2048"))
    assert sorted({r.index for r in out.records if r.index is not None}) == [
        1,
        2,
        3,
        4,
        15,
        16,
        17,
        18,
        19,
        20,
    ]
    keygen = next(r for r in out.records if r.index == 15)
    assert (keygen.count, keygen.label, keygen.seconds) == (19, "rsa2048", 1.30)
    assert oso.header_operation("+DTP:rsa2048:keygen:1") is None
    assert oso.header_operation("+DTP:2048:public:rsa encrypt:1") is None
    assert out.malformed == []


@pytest.mark.parametrize(
    ("fixture", "algorithm", "expected"),
    [
        ("openssl111-ecdsabrp256r1", "ecdsabrp256r1", {"sign": 3789, "verify": 3967}),
        ("openssl30-ecdsap384", "ecdsap384", {"sign": 1514, "verify": 1745}),
        ("openssl35-ecdsap521", "ecdsap521", {"sign": 4111, "verify": 2324}),
        ("openssl35-ecdsabrp512r1", "ecdsabrp512r1", {"sign": 910, "verify": 922}),
        ("openssl111-ecdhx25519", "ecdhx25519", {"derive": 35834}),
        ("openssl30-ecdhbrp512r1", "ecdhbrp512r1", {"derive": 883}),
        ("openssl35-ecdhp256", "ecdhp256", {"derive": 14555}),
        ("openssl35-ecdhx25519", "ecdhx25519", {"derive": 35509}),
        ("openssl111-ed25519", "ed25519", {"sign": 29225, "verify": 10971}),
        ("openssl30-ed448", "ed448", {"sign": 6231, "verify": 6282}),
        ("openssl35-ed25519", "ed25519", {"sign": 27482, "verify": 10245}),
    ],
)
def test_ec_records_each_version(fixture: str, algorithm: str, expected: dict[str, int]) -> None:
    got = measure(fixture, algorithm)
    assert {op: ok(r).count for op, r in got.items()} == expected


def test_record_time_is_parsed() -> None:
    assert ok(measure("openssl35-ecdsabrp512r1", "ecdsabrp512r1")["verify"]).seconds == 1.02


@pytest.mark.parametrize(
    ("fixture", "algorithm", "size", "count"),
    [
        ("openssl111-sha256-16", "sha256", 16, 8217157),
        ("openssl30-aes-256-gcm-16", "aes-256-gcm", 16, 2380075),
        ("openssl35-aes-128-gcm-16", "aes-128-gcm", 16, 6807960),
    ],
)
def test_evp_each_version(fixture: str, algorithm: str, size: int, count: int) -> None:
    got = measure(fixture, algorithm, size=size)
    (m,) = got.values()
    assert ok(m).count == count
    assert ok(m).seconds == 1.0
    # the +F bytes/s summary OpenSSL printed agrees with count * size / time
    rate = float(load(fixture)[0].split()[-1].rsplit(":", 1)[1])
    assert count * size / ok(m).seconds == pytest.approx(rate, rel=1e-6)


# ----------------------------------------------------------------- -multi


def test_multi2_rsa_openssl35_matches_parent_aggregate() -> None:
    stdout, _ = load("openssl35-multi2-rsa2048")
    got = measure("openssl35-multi2-rsa2048", "rsa2048", processes=2)
    sign, verify = ok(got["sign"]), ok(got["verify"])
    assert sign.count == 1900 + 1564
    assert verify.count == 28816 + 33258
    assert sorted(sign.lines) == ["+R1:1564:2048:1.01", "+R1:1900:2048:1.00"]
    agg = parent_rates(stdout, "+F2:2:2048:")
    assert sign.count / sign.seconds == pytest.approx(agg[0], rel=1e-6)
    assert verify.count / verify.seconds == pytest.approx(agg[1], rel=1e-6)


def test_multi2_other_versions_match_parent_aggregate() -> None:
    ecdsa = measure("openssl30-multi2-ecdsap256", "ecdsap256", processes=2)
    agg = parent_rates(load("openssl30-multi2-ecdsap256")[0], "+F4:3:256:")
    assert ok(ecdsa["sign"]).count == 22156 + 28910
    assert ok(ecdsa["sign"]).count / ok(ecdsa["sign"]).seconds == pytest.approx(agg[0])
    assert ok(ecdsa["verify"]).count / ok(ecdsa["verify"]).seconds == pytest.approx(agg[1])
    rsa = measure("openssl111-multi2-rsa2048", "rsa2048", processes=2)
    assert ok(rsa["sign"]).count == 2362
    assert ok(rsa["verify"]).count == 106975


@pytest.mark.parametrize(
    ("fixture", "algorithm", "size", "prefix"),
    [
        ("openssl111-multi2-aes-128-gcm-1024", "aes-128-gcm", 1024, "+F:22:evp:"),
        ("openssl35-multi2-sha256-1024", "sha256", 1024, "+F:25:sha256:"),
    ],
)
def test_multi2_evp_matches_parent_aggregate(
    fixture: str, algorithm: str, size: int, prefix: str
) -> None:
    (m,) = measure(fixture, algorithm, processes=2, size=size).values()
    (rate,) = parent_rates(load(fixture)[0], prefix)
    assert ok(m).count * size / ok(m).seconds == pytest.approx(rate, rel=1e-6)


def test_multi_missing_child_line_is_invalid() -> None:
    stdout, stderr = load("openssl30-multi2-ecdsap256")
    stderr = stderr.replace("+R6:7120:256:1.00\n", "")
    got = oso.extract_measurements(
        osa.ALGORITHMS["ecdsap256"],
        oso.parse_speed_output(stdout, stderr),
        processes=2,
        seconds=1,
    )
    assert isinstance(got["sign"], oso.Measurement)
    assert reason(got["verify"]) == (
        "expected 2 +R6 record(s) (one per process), got 1: +R6:10809:256:1.00"
    )


# ----------------------------------------------------------------- impossible records


def tampered(name: str, old: str, new: str) -> oso.SpeedOutput:
    stdout, stderr = load(name)
    assert old in stderr
    return oso.parse_speed_output(stdout, stderr.replace(old, new))


def test_zero_count_is_invalid() -> None:
    out = tampered("openssl30-rsa2048", "+R1:3407:2048:1.00", "+R1:0:2048:1.00")
    got = oso.extract_measurements(osa.ALGORITHMS["rsa2048"], out, processes=1, seconds=1)
    assert reason(got["sign"]) == "record '+R1:0:2048:1.00': count 0 (expected >= 1)"
    assert ok(got["verify"]).count == 57182


@pytest.mark.parametrize("time", ["0.30", "9.00"])
def test_time_far_from_requested_is_invalid(time: str) -> None:
    out = tampered("openssl30-rsa2048", "+R1:3407:2048:1.00", f"+R1:3407:2048:{time}")
    got = oso.extract_measurements(osa.ALGORITHMS["rsa2048"], out, processes=1, seconds=1)
    assert reason(got["sign"]) == (
        f"record '+R1:3407:2048:{time}': time {float(time):g} s is outside [0.5, 3] s "
        "for -seconds 1"
    )


def test_long_single_operation_overrun_is_accepted() -> None:
    out = tampered("openssl30-rsa2048", "+R1:3407:2048:1.00", "+R1:2:2048:4.85")
    got = oso.extract_measurements(osa.ALGORITHMS["rsa2048"], out, processes=1, seconds=1)
    assert ok(got["sign"]).count == 2


def test_truncated_output_is_invalid() -> None:
    stdout, stderr = load("openssl111-rsa2048")
    cut = stderr[: stderr.index("+R2:") + 6]  # ends inside the verify record
    got = oso.extract_measurements(
        osa.ALGORITHMS["rsa2048"], oso.parse_speed_output(stdout, cut), processes=1, seconds=1
    )
    assert got["sign"] == got["verify"] == "malformed record line '+R2:63'"
    lost = stderr[: stderr.index("+DTP:2048:public")]
    got = oso.extract_measurements(
        osa.ALGORITHMS["rsa2048"], oso.parse_speed_output(stdout, lost), processes=1, seconds=1
    )
    assert ok(got["sign"]).count == 1864
    assert reason(got["verify"]) == "no +R record for rsa2048 verify in the output"


def test_unexpected_header_order_fails_loudly() -> None:
    out = tampered("openssl111-rsa2048", "+DTP:2048:public:rsa:1", "+DTP:2048:private:rsa:1")
    got = oso.extract_measurements(osa.ALGORITHMS["rsa2048"], out, processes=1, seconds=1)
    assert "unknown openssl speed layout" in reason(got["verify"])
    assert isinstance(got["sign"], oso.Measurement)


def test_record_for_other_key_size_is_invalid() -> None:
    got = measure("openssl30-ecdsap384", "ecdsap256")
    assert reason(got["sign"]) == "record '+R5:1514:384:1.00' is not for 256 bits (ecdsap256)"


def test_evp_wrong_name_or_size_is_invalid() -> None:
    (m,) = measure("openssl35-aes-128-gcm-16", "aes-256-gcm", size=16).values()
    assert reason(m) == "record '+R:6807960:AES-128-GCM:1.000000' is not aes-256-gcm"
    (m,) = measure("openssl35-aes-128-gcm-16", "aes-128-gcm", size=64).values()
    assert reason(m) == "header '+DT:AES-128-GCM:1:16' is not for 64-byte buffers"


# ----------------------------------------------------------------- rows


def test_build_row_rescales_repetitions_to_first_count() -> None:
    cell = sos.Cell(osa.ALGORITHMS["aes-128-gcm"], "encrypt", 2, 16)
    cell.results = [oso.Measurement(1000, 1.0, ()), oso.Measurement(1100, 1.0, ())]
    cell.wall_ns = [1, 1]
    row = sos.build_row(cell, 2)
    assert row is not None
    assert row["ops_per_block"] == 1000
    assert row["samples_ns"] == [1_000_000_000, 909_090_909]
    assert row["block_ops"] == [1000, 1100]
    assert (row["scheme"], row["param"], row["bytes_per_op"], row["processes"]) == (
        "AES-128-GCM",
        "16 B",
        16,
        2,
    )
    assert row["valid"] is True


def test_build_row_invalid_repetition_invalidates_row() -> None:
    cell = sos.Cell(osa.ALGORITHMS["rsa2048"], "sign", 1, None)
    cell.results = [oso.Measurement(3407, 1.0, ()), "record 'x': count 0 (expected >= 1)"]
    cell.wall_ns = [1_010_000_000, 1_020_000_000]
    row = sos.build_row(cell, 2)
    assert row is not None
    assert row["valid"] is False
    assert row["invalid_reason"] == "repetition 1: record 'x': count 0 (expected >= 1)"
    assert (row["key_bits"], row["ops_per_block"], row["samples_ns"]) == (2048, 3407, [10**9])
    cell.results = ["gone", "gone"]
    row = sos.build_row(cell, 2)
    assert row is not None
    assert (row["ops_per_block"], row["samples_ns"]) == (1, [1_010_000_000, 1_020_000_000])
    cell.wall_ns = []
    assert sos.build_row(cell, 2) is None


# ----------------------------------------------------------------- config


def test_defaults() -> None:
    cfg = sos.normalize_config({})
    assert cfg["seconds"] == 3
    assert cfg["multi"] == [1]
    assert cfg["repeat"] == 1
    assert cfg["evp_sizes"] == [16, 64, 256, 1024, 8192, 16384]
    assert "rsa2048" in cfg["algorithms"]
    assert all(name in osa.ALGORITHMS for name in cfg["algorithms"])


def test_unknown_algorithm_lists_allowed_names() -> None:
    with pytest.raises(SuiteError) as err:
        sos.normalize_config({"algorithms": ["rsa2048", "p256"]})
    msg = str(err.value)
    assert msg.startswith("openssl-speed: unknown algorithm 'p256' in algorithms; allowed: ")
    for name in ("rsa15360", "ecdsabrp512r1", "ecdhx25519", "ed448", "aes-256-gcm", "sha256"):
        assert name in msg


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"sekonds": 3}, "unknown setting(s) sekonds"),
        ({"seconds": 0}, "seconds = 0: expected an integer >= 1"),
        ({"seconds": True}, "seconds = True: expected an integer >= 1"),
        ({"multi": [1, 1]}, "multi lists 1 twice"),
        ({"multi": []}, "multi = []: expected a non-empty list of process counts >= 1"),
        ({"evp_sizes": [16, "64"]}, "evp_sizes item '64': expected byte counts >= 1"),
        ({"repeat": 0}, "repeat = 0: expected an integer >= 1"),
        ({"timeout_s": -1}, "timeout_s = -1: expected a number of s > 0"),
        ({"algorithms": ["sha256", "sha256"]}, "algorithms lists 'sha256' twice"),
    ],
)
def test_bad_config(config: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=re.escape(message)):
        sos.normalize_config(config)


def test_speed_argv() -> None:
    assert sos.speed_argv(osa.ALGORITHMS["rsa2048"], 3, 1, None) == [
        "openssl",
        "speed",
        "-elapsed",
        "-mr",
        "-seconds",
        "3",
        "rsa2048",
    ]
    assert sos.speed_argv(osa.ALGORITHMS["sha256"], 1, 2, 1024)[-7:] == [
        "1",
        "-multi",
        "2",
        "-bytes",
        "1024",
        "-evp",
        "sha256",
    ]


# ----------------------------------------------------------------- run() with a fake openssl


def fake_run_command(argv: list[str], timeout_s: float, **_: Any) -> CommandResult:
    """Recorded OpenSSL 1.1.1 output; the sha256 one (single process) also for -multi 2."""
    if argv[1] == "version":
        return CommandResult(tuple(argv), 0, "OpenSSL 1.1.1w  11 Sep 2023\n", "", 1)
    multi = "-multi" in argv
    if argv[-1] == "rsa2048":
        name = "openssl111-multi2-rsa2048" if multi else "openssl111-rsa2048"
        return CommandResult(tuple(argv), 0, *load(name), 1_000_000_000)
    if argv[-4:] == ["-bytes", "16", "-evp", "sha256"]:
        return CommandResult(tuple(argv), 0, *load("openssl111-sha256-16"), 1_000_000_000)
    return CommandResult(tuple(argv), 1, "", "speed: Unknown algorithm x\nfatal\n", 1)


def test_run_with_recorded_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(shutil, "which", lambda _: "/usr/bin/openssl")
    monkeypatch.setattr(sos, "run_command", fake_run_command)
    cfg = {"algorithms": ["rsa2048", "sha256"], "evp_sizes": [16], "seconds": 1, "multi": [1, 2]}
    out = sos.run(cfg, lambda _: None)
    assert out.tools == {"openssl": "OpenSSL 1.1.1w  11 Sep 2023"}
    key = [(r["scheme"], r["operation"], r["processes"], r["ops_per_block"]) for r in out.rows]
    assert key[:3] == [
        ("RSA", "sign", 1, 1864),
        ("RSA", "verify", 1, 63230),
        ("SHA-256", "hash", 1, 8217157),
    ]
    assert key[3:5] == [("RSA", "sign", 2, 2362), ("RSA", "verify", 2, 106975)]
    assert all(r["valid"] for r in out.rows[:5])
    multi_sha = out.rows[5]
    assert (multi_sha["valid"], multi_sha["processes"]) == (False, 2)
    assert multi_sha["invalid_reason"] == (
        "expected 2 +R (sha256) record(s) (one per process), got 1: +R:8217157:sha256:1.000000"
    )
    assert out.rows[0]["samples_ns"] == [1_000_000_000]
    assert out.extra["runs"][0]["lines"][0] == "+F2:2:2048:1864.000000:63230.000000"
    # One progress line per openssl process, k of n, as it starts (harness/CONTRACT.md).
    progress = [
        line.split(" ", 4)
        for line in capsys.readouterr().err.splitlines()
        if line.startswith("archbench-progress: openssl-speed ")
    ]
    assert [p[2] for p in progress] == ["0/4", "1/4", "2/4", "3/4", "4/4"]
    assert [p[4] for p in progress[1:]] == [
        "rsa2048",
        "sha256 16 B",
        "rsa2048 -multi 2",
        "sha256 16 B -multi 2",
    ]


def test_run_failed_process_raises_with_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda _: "/usr/bin/openssl")
    monkeypatch.setattr(sos, "run_command", fake_run_command)
    with pytest.raises(SuiteError, match=r"ed448 exited with status 1: speed: Unknown algorithm"):
        sos.run({"algorithms": ["ed448"]}, lambda _: None)


def test_run_without_openssl(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda _: None)
    with pytest.raises(SuiteError, match="add the Debian package 'openssl'"):
        sos.run({}, lambda _: None)
