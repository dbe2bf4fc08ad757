"""The harness's entry script (harness/archbench_harness.py): ``main()`` loaded by path,
with the driver simulated by small shell scripts that print canned output; the real
driver is exercised by tests/integration/test_harness_native.py."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from abh import setup_cpu, setup_system
from harness_fakes import driver_text
from helpers import CS_OPS, SCHEMA, load_harness

H = load_harness()


def _fake_driver(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "blindsig"
    script.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    script.chmod(0o700)
    return script


def _hermetic_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = {"libgnunetutil": "0.20.0-7", "libsodium": "1.0.18-1+deb13u1", "libgcrypt": None}
    names = {"libgnunetutil": "libgnunet0.20t64", "libsodium": "libsodium23", "libgcrypt": None}
    monkeypatch.setattr(setup_system, "package_versions", lambda: (versions, names))
    monkeypatch.setattr(setup_system, "_run_quiet", lambda argv, timeout_s=60.0: None)
    monkeypatch.setattr(setup_cpu, "read_cpu_limits", lambda: None)
    monkeypatch.setattr(setup_cpu, "read_load_average", lambda: [0.5, 0.25, 0.125])


def test_main_prints_one_valid_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    canned = tmp_path / "canned.txt"
    canned.write_text(driver_text(iterations=4, repetitions=2, rsa_bits=(1024, 3072)), "utf-8")
    argv_log = tmp_path / "argv.txt"
    driver = _fake_driver(tmp_path, f'echo "$@" > {argv_log}\ncat {canned}\n')
    (tmp_path / "build-info.txt").write_text("cflags\t-O2 -Wall\ncc\tgcc\n", encoding="utf-8")
    _hermetic_setup(monkeypatch)

    code = H.main(
        [
            "--iterations",
            "4",
            "--repetitions",
            "2",
            "--rsa-bits",
            "1024,3072",
            "--driver",
            str(driver),
        ]
    )

    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert argv_log.read_text(encoding="utf-8").split() == [
        "--iterations",
        "4",
        "--repetitions",
        "2",
        "--warmup",
        "1",
        "--scheme",
        "all",
        "--rsa-bits",
        "1024,3072",
        "--interactive",
    ]
    doc = json.loads(captured.out)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["parameters"] == {
        "iterations": 4,
        "repetitions": 2,
        "rsa_bits": [1024, 3072],
        "schemes": ["CS", "RSA"],
        "message_bytes": 64,
        "warmup": 1,
        "max_time_s": None,
        "min_block_ns": None,
        "ci_target": None,
        "min_repetitions": 6,
        "confidence": 0.95,
        "order": "sequential",
        "order_seed": None,
        "driver_involuntary_switches": doc["parameters"]["driver_involuntary_switches"],
        "fresh_items": False,
    }
    assert isinstance(doc["parameters"]["driver_involuntary_switches"], int)
    assert doc["calibration"]["observed_tick_ns"] == 20
    assert doc["calibration"]["pair_overhead_ns"] == 18.5
    setup = doc["setup"]
    assert setup["packages"]["libgnunetutil"] == "0.20.0-7"
    assert setup["gnunet_version"] == "0.20.0"  # from the driver, pkg-config "failed"
    assert setup["gcc_version"] is None
    assert setup["build"] == {"cflags": "-O2 -Wall", "cc": "gcc"}
    assert setup["clock_resolution_ns"] == 1
    assert setup["cores"] >= 1
    assert setup["load_average"] == [0.5, 0.25, 0.125]
    assert setup["cpu_limits"] is None
    assert len(doc["rows"]) == 7 + 5 + 5
    assert all(r["valid"] and not r["calibrated"] for r in doc["rows"])


def test_main_passes_calibration_warmup_and_budget_to_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    canned = tmp_path / "canned.txt"
    canned.write_text(driver_text(iterations=3, repetitions=1, rsa_bits=()), "utf-8")
    argv_log = tmp_path / "argv.txt"
    driver = _fake_driver(tmp_path, f'echo "$@" > {argv_log}\ncat {canned}\n')
    _hermetic_setup(monkeypatch)

    code = H.main(
        [
            "--iterations=3",
            "--repetitions=1",
            "--scheme=cs",
            "--warmup=0",
            "--min-block-ns=0",
            "--max-time=2.5",
            "--progress",
            f"--driver={driver}",
        ]
    )

    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    args = argv_log.read_text(encoding="utf-8").split()
    assert args == [
        "--iterations",
        "3",
        "--repetitions",
        "1",
        "--warmup",
        "0",
        "--scheme",
        "cs",
        "--min-block-ns",
        "0",
        "--max-time",
        "2.5",
        "--progress",
        "--interactive",
    ]
    assert doc["parameters"]["max_time_s"] == 2.5
    assert doc["parameters"]["min_block_ns"] == 0
    assert doc["parameters"]["warmup"] == 0


def test_main_cs_only_reports_no_rsa_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    canned = tmp_path / "canned.txt"
    canned.write_text(driver_text(iterations=3, repetitions=1, rsa_bits=()), "utf-8")
    argv_log = tmp_path / "argv.txt"
    driver = _fake_driver(tmp_path, f'echo "$@" > {argv_log}\ncat {canned}\n')
    _hermetic_setup(monkeypatch)

    code = H.main(
        ["--iterations", "3", "--repetitions", "1", "--scheme", "cs", "--driver", str(driver)]
    )

    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert "--rsa-bits" not in argv_log.read_text(encoding="utf-8")
    assert doc["parameters"]["rsa_bits"] == []
    assert doc["parameters"]["schemes"] == ["CS"]
    assert [r["operation"] for r in doc["rows"]] == CS_OPS
    assert doc["setup"]["build"] == {}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("echo 'archbench-blindsig\t2'\nexit 3\n", "exited with status 3"),
        ("kill -SEGV $$\n", "killed by SIGSEGV"),
        (
            "printf 'archbench-blindsig\\t2\\nsample\\tCS\\t0\\tsigning\\t10\\t0\\t5\\n'\n",
            "truncated",
        ),
        ("printf 'archbench-blindsig\\t2\\nend\\tok\\n'\n", "lacks meta min_block_ns"),
    ],
    ids=["exit-status", "signal", "truncated", "no-calibration-meta"],
)
def test_main_driver_failure_exits_2_without_stdout(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    body: str,
    message: str,
) -> None:
    driver = _fake_driver(tmp_path, body)
    _hermetic_setup(monkeypatch)

    code = H.main(["--iterations", "10", "--repetitions", "1", "--driver", str(driver)])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert message in captured.err


def test_main_missing_driver_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = H.main(["--driver", str(tmp_path / "nope")])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert "missing or not executable" in captured.err
