"""The rsa-large suite (harness/abh/suites/rsa_large.py) on recorded rsa_large output.

The fixtures in tests/fixtures/rsa-large/ are real driver runs (see the
README.txt there); run() is exercised with a shell script standing in for
the driver that replays them, so no compiler or Docker is needed.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from abh.suites import rsa_large as R
from abh.suites import rsa_large_output as RO
from abh.suites.common import SuiteError
from helpers import REPO

FIXTURES = REPO / "tests" / "fixtures" / "rsa-large"
OPENSSL = "OpenSSL 3.5.9 29 Sep 2026"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def config(**overrides: Any) -> dict[str, Any]:
    return R.normalize_config(overrides)


def by_key(rows: list[dict[str, Any]]) -> dict[tuple[int, str], dict[str, Any]]:
    return {(r["key_bits"], r["operation"]): r for r in rows}


def ops_per_s(row: dict[str, Any]) -> list[float]:
    return [row["ops_per_block"] * 1e9 / ns for ns in row["samples_ns"]]


# ---------------------------------------------------------------- config


def test_defaults() -> None:
    c = R.normalize_config({})
    assert c["bits"] == [2048, 4096, 8192, 16384]
    assert (c["repetitions"], c["max_time"], c["keygen_repetitions"]) == (3, 60.0, 1)
    assert (c["keygen_max_time"], c["min_block_ns"]) == (600.0, 1_000_000_000)
    assert c["driver"].endswith("/harness/rsa_large")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"bits": [2048, 1000]}, "bits contains 1000; allowed: multiples of 8 in 1024..16384"),
        ({"bits": [16392]}, "bits contains 16392"),
        ({"bits": [2047]}, "bits contains 2047, not a multiple of 8"),
        ({"bits": ["2048"]}, "bits contains '2048'"),
        ({"bits": [True]}, "bits contains True"),
        ({"bits": []}, "expected a non-empty list"),
        ({"bits": 2048}, "bits = 2048; expected a non-empty list"),
        ({"bits": [2048, 2048]}, "lists a size twice"),
        ({"repetitions": 0}, "repetitions = 0; expected an integer in 1..1000"),
        ({"keygen_repetitions": 1.5}, "keygen_repetitions = 1.5"),
        ({"max_time": 0}, "max_time = 0; expected seconds"),
        ({"keygen_max_time": "10"}, "keygen_max_time = '10'"),
        ({"min_block_ns": 10**11}, "min_block_ns = 100000000000; expected an integer in 0.."),
        ({"driver": ""}, "driver = ''"),
        ({"bit": [2048]}, "unknown setting(s) bit; allowed: bits,"),
    ],
)
def test_bad_settings(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=None) as info:
        R.normalize_config(settings)
    assert message in str(info.value)


def test_argv_and_timeout() -> None:
    c = config(bits=[8192], max_time=20, keygen_max_time=110, min_block_ns=200_000_000)
    assert R.driver_argv(c, 8192)[1:] == [
        "--bits",
        "8192",
        "--repetitions",
        "3",
        "--min-block-ns",
        "200000000",
        "--max-time",
        "20.0",
        "--keygen-repetitions",
        "1",
        "--keygen-max-time",
        "110.0",
    ]
    # 110 + 2 * 20 + 16 * 0.2 + 120
    assert R.driver_timeout_s(c) == pytest.approx(273.2)


# ---------------------------------------------------------------- recorded output


def test_parse_2048_4096() -> None:
    out = RO.parse_driver_output(fixture("bits-2048-4096.txt"))
    assert out.meta["openssl_version"] == OPENSSL
    assert out.meta["min_block_ns"] == "100000000"
    assert list(out.sizes) == [2048, 4096]
    s2048 = out.sizes[2048]
    assert s2048.keygen_ns == [45665480, 79532409, 29050265]
    assert s2048.samples["sign"] == [(512, 160417641), (512, 157556818), (512, 157849978)]
    assert s2048.samples["verify"][0] == (8192, 143114903)
    assert s2048.calibration["sign"][0] == (1, 307133)
    assert [ops for ops, _ in s2048.calibration["sign"]][-1] == 512
    assert (s2048.taken, s2048.exhausted, s2048.invalid) == (3, False, None)


def test_rows_2048_4096() -> None:
    out = RO.parse_driver_output(fixture("bits-2048-4096.txt"))
    c = config(bits=[2048, 4096], keygen_repetitions=3, min_block_ns=100_000_000)
    rows, warnings = RO.rows_from_output(out, c)
    assert warnings == []
    assert [(r["key_bits"], r["operation"]) for r in rows] == [
        (b, op) for b in (2048, 4096) for op in ("key_generation", "sign", "verify")
    ]
    assert all(r["valid"] and r["scheme"] == "RSA" and r["processes"] == 1 for r in rows)
    rows_by = by_key(rows)
    keygen = rows_by[(4096, "key_generation")]
    assert (keygen["ops_per_block"], keygen["samples_ns"]) == (1, [48362254, 77100205, 290235160])
    assert keygen["repetitions_requested"] == 3
    sign = rows_by[(4096, "sign")]
    assert (sign["ops_per_block"], sign["samples_ns"][1]) == (64, 128258430)
    # 2048-bit: 512 signs in 157.6 ms = 3250 sign/s; 4096-bit: 64 in 117.3 ms = 546 sign/s.
    assert max(ops_per_s(rows_by[(2048, "sign")])) == pytest.approx(3249.6, abs=0.1)
    assert max(ops_per_s(sign)) == pytest.approx(545.7, abs=0.1)
    assert max(ops_per_s(rows_by[(2048, "verify")])) == pytest.approx(58623.4, abs=0.1)


def test_rows_8192() -> None:
    out = RO.parse_driver_output(fixture("bits-8192.txt"))
    rows, _ = RO.rows_from_output(out, config(bits=[8192]))
    rows_by = by_key(rows)
    assert rows_by[(8192, "key_generation")]["samples_ns"] == [5101261616]
    sign = rows_by[(8192, "sign")]
    assert (sign["ops_per_block"], sign["samples_ns"]) == (4, [238423860, 298460974, 327894416])
    assert rows_by[(8192, "verify")]["ops_per_block"] == 256


def test_budget_exhausted() -> None:
    out = RO.parse_driver_output(fixture("budget-exhausted-2048.txt"))
    rows, _ = RO.rows_from_output(out, config(bits=[2048], repetitions=20))
    sign = by_key(rows)[(2048, "sign")]
    assert sign["budget_exhausted"] is True
    assert (sign["repetitions_requested"], sign["samples_ns"]) == (20, [80043412])
    assert by_key(rows)[(2048, "key_generation")]["budget_exhausted"] is False


def test_budget_flag_must_explain_missing_repetitions() -> None:
    out = RO.parse_driver_output(fixture("bits-8192.txt"))
    with pytest.raises(SuiteError, match=r"8192 bits: 3 of 5 repetitions"):
        RO.rows_from_output(out, config(bits=[8192], repetitions=5))


def test_keygen_aborted() -> None:
    out = RO.parse_driver_output(fixture("keygen-aborted-16384.txt"))
    assert out.sizes[16384].keygen_aborted_ns == [2000163072]
    rows, warnings = RO.rows_from_output(out, config(bits=[16384]))
    assert len(rows) == 1
    keygen = rows[0]
    assert keygen["valid"] is False and keygen["budget_exhausted"] is True
    assert keygen["samples_ns"] == [2000163072]
    assert keygen["invalid_reason"] == (
        "key generation did not finish within the keygen budget of 2.000 s; "
        "the sample is the time spent before the abort"
    )
    assert warnings == [
        "RSA-16384 sign: no sample before the failure; omitted",
        "RSA-16384 verify: no sample before the failure; omitted",
    ]


def test_invalid_size_keeps_last_calibration_block() -> None:
    lines = fixture("budget-exhausted-2048.txt").splitlines()
    cut = [line for line in lines if not line.startswith(("sample", "done", "end"))]
    text = "\n".join([*cut, "invalid 2048 a signature verified for a tampered message"])
    text += "\ndone 2048 0 0\nend ok\n"
    rows, _ = RO.rows_from_output(RO.parse_driver_output(text), config(bits=[2048]))
    assert [r["valid"] for r in rows] == [False, False, False]
    sign = by_key(rows)[(2048, "sign")]
    assert (sign["ops_per_block"], sign["samples_ns"]) == (256, [77107710])
    assert sign["invalid_reason"] == "a signature verified for a tampered message"


# ---------------------------------------------------------------- bad output

GOOD = fixture("bits-8192.txt")


def mangled(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "starts with '', expected 'rsa-large 1'"),
        ("rsa-large 2\nend ok\n", "expected 'rsa-large 1'"),
        (
            mangled("sample 8192 sign 4 238423860", "sample 8192 sign four 1"),
            "line 21: expected integers, got 'four 1'",
        ),
        (mangled("sample 8192 sign 4 238423860", "sample 8192 sign 4 0"), "values must be >= 1"),
        (mangled("sample 8192 sign 4 238423860", "sample 8192 hash 4 5"), "unknown operation"),
        (mangled("sample 8192 sign 4 238423860", "sample 8192 sign 4"), "malformed line"),
        (mangled("keygen_done 8192 1 0", "keygen_done 8192 2 0"), "says 2 generations"),
        (mangled("done 8192 3 0", "done 8192 2 0"), "done says 2 repetitions"),
        (mangled("done 8192 3 0\n", ""), "8192 bits has no 'done' line"),
        (mangled("end ok\n", ""), "no 'end ok' line"),
        (mangled("end ok\n", "end ok\nsample 8192 sign 4 1\n"), "text after 'end ok'"),
        (
            mangled("keygen 8192 5101261616\n", ""),
            "line 7: keygen_done for 8192 bits before its key generation",
        ),
        (mangled("keygen_done 8192 1 0", "keygen_done 8192 1 0\nfrobnicate 8192"), "unexpected"),
        (
            "rsa-large 1\nsample 2048 sign 1 5\nend ok\n",
            "line 2: sample for 2048 bits before its key generation",
        ),
        (
            "rsa-large 1\nkeygen_aborted 2048 9\nkeygen_done 2048 0 1\nsample 2048 sign 1 5\n",
            "line 4: sample for 2048 bits without a generated key",
        ),
    ],
)
def test_bad_output(text: str, message: str) -> None:
    with pytest.raises(SuiteError) as info:
        RO.parse_driver_output(text)
    assert message in str(info.value)


def test_unrequested_or_missing_size() -> None:
    out = RO.parse_driver_output(GOOD)
    with pytest.raises(SuiteError, match=r"measured \[8192\] bits, which were not requested"):
        RO.rows_from_output(out, config(bits=[2048]))
    with pytest.raises(SuiteError, match="nothing for 2048 bits"):
        RO.rows_from_output(out, config(bits=[8192, 2048]))


def test_calibration_must_arrive_at_timed_size() -> None:
    text = GOOD.replace("sample 8192 sign 4 ", "sample 8192 sign 8 ")
    with pytest.raises(SuiteError, match="timed 8 operations per block, calibration arrived at 4"):
        RO.rows_from_output(RO.parse_driver_output(text), config(bits=[8192]))


# ---------------------------------------------------------------- run()


def fake_driver(tmp_path: Path, body: str) -> str:
    path = tmp_path / "rsa_large"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def replay(tmp_path: Path) -> str:
    """A driver that prints the recorded 2048/4096 run's lines for the size in --bits."""
    source = FIXTURES / "bits-2048-4096.txt"
    return fake_driver(
        tmp_path,
        f'[ "$2" = 16384 ] && sleep 5\n'
        f'awk -v b="$2" \'$1 == "rsa-large" || $1 == "meta" || $1 == "end" || $2 == b\' '
        f"'{source}'\n",
    )


def test_run_replays_driver(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c = config(bits=[2048, 4096], keygen_repetitions=3, driver=replay(tmp_path))
    warnings: list[str] = []
    outcome = R.run(c, warnings.append)
    err = capsys.readouterr().err
    assert "archbench-progress: rsa-large 1/2 " in err
    assert "s RSA-4096 key generation, sign, verify" in err.splitlines()[-1]
    assert warnings == []
    assert outcome.tools == {"libcrypto": OPENSSL}
    assert len(outcome.rows) == 6 and outcome.parameters == c
    assert outcome.extra["driver_stdout"]["4096"][-1] == "end ok"


def test_run_leaves_out_a_size_that_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(R, "driver_timeout_s", lambda _config: 1.0)
    c = config(bits=[2048, 16384], keygen_repetitions=3, driver=replay(tmp_path))
    warnings: list[str] = []
    outcome = R.run(c, warnings.append)
    assert [r["key_bits"] for r in outcome.rows] == [2048] * 3
    assert outcome.extra["timed_out_bits"] == [16384]
    assert len(warnings) == 1 and "RSA-16384 left out" in warnings[0]


def test_run_missing_driver(tmp_path: Path) -> None:
    c = config(driver=str(tmp_path / "rsa_large"))
    with pytest.raises(SuiteError, match="add libssl-dev to the target's profile"):
        R.run(c, lambda _msg: None)


def test_run_driver_failure(tmp_path: Path) -> None:
    c = config(bits=[2048], driver=fake_driver(tmp_path, "echo 'rsa_large: boom' >&2\nexit 70\n"))
    with pytest.raises(SuiteError, match="exited with status 70: rsa_large: boom"):
        R.run(c, lambda _msg: None)


def test_rows_16384_single_operation_blocks() -> None:
    out = RO.parse_driver_output(fixture("bits-16384-min-block-0.txt"))
    c = config(bits=[16384], repetitions=1, min_block_ns=0)
    rows_by = by_key(RO.rows_from_output(out, c)[0])
    # 44.8 s key generation, 0.215 s per sign (4.6 sign/s), 0.86 ms per verify.
    assert rows_by[(16384, "key_generation")]["samples_ns"] == [44780033298]
    assert rows_by[(16384, "sign")]["samples_ns"] == [215491782]
    assert rows_by[(16384, "verify")]["samples_ns"] == [859366]
    assert {r["ops_per_block"] for r in rows_by.values()} == {1}
