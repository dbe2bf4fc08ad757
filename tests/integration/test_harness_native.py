"""The real harness on this host: compile blindsig against the local libgnunetutil and run it.

Skipped when ``pkg-config gnunetutil`` fails (install libgnunet-dev and
libsodium-dev to run it). Builds in a temporary copy of ``harness/`` so the
working tree stays clean.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from abh.suites.blindsig_rules import default_min_block_ns, next_block_size
from helpers import HARNESS_DIR, SCHEMA

from archbench.images import harness_files

pytestmark = pytest.mark.native


THESIS_ROWS = [
    ("CS", None, "key_generation"),
    ("CS", None, "r_derivation"),
    ("CS", None, "blinding_secret_derivation"),
    ("CS", None, "blinding"),
    ("CS", None, "signing"),
    ("CS", None, "unblinding"),
    ("CS", None, "verifying"),
    ("RSA", 1024, "key_generation"),
    ("RSA", 1024, "blinding"),
    ("RSA", 1024, "signing"),
    ("RSA", 1024, "unblinding"),
    ("RSA", 1024, "verifying"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary harness directory with its drivers compiled by its Makefile."""
    for tool in ("make", "cc", "pkg-config"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found on PATH")
    probe = subprocess.run(
        ["pkg-config", "--exists", "gnunetutil"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip("pkg-config cannot find gnunetutil: install libgnunet-dev and libsodium-dev")
    dest = tmp_path_factory.mktemp("harness")
    # What the image gets: every source of the harness (drivers, suites, Makefile).
    for path, data in harness_files(HARNESS_DIR):
        target = dest / Path(path).relative_to("harness")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    make = subprocess.run(["make", "-C", str(dest)], capture_output=True, text=True, check=False)
    assert make.returncode == 0, f"make failed:\n{make.stdout}\n{make.stderr}"
    return dest


def run_harness(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run archbench_harness.py from ``directory`` with the venv's Python."""
    return subprocess.run(
        [sys.executable, str(directory / "archbench_harness.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def rows_by_key(doc: dict[str, Any]) -> dict[tuple[str, int | None, str], dict[str, Any]]:
    """Index a document's rows by (scheme, key_bits, operation)."""
    return {(r["scheme"], r["key_bits"], r["operation"]): r for r in doc["rows"]}


def test_every_thesis_row_is_measured_and_valid(built: Path) -> None:
    # Calibration off: blocks of exactly --iterations, as in the thesis.
    done = run_harness(
        built,
        "--iterations",
        "2",
        "--repetitions",
        "5",
        "--rsa-bits",
        "1024",
        "--min-block-ns",
        "0",
        "--warmup",
        "0",
    )

    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    rows = rows_by_key(doc)
    assert sorted(rows, key=str) == sorted(THESIS_ROWS, key=str)
    assert len(doc["rows"]) == len(THESIS_ROWS)
    for key, row in rows.items():
        assert row["valid"] is True, (key, row["invalid_reason"])
        assert row["invalid_reason"] is None
        assert row["suite"] == "blindsig"
        assert row["ops_per_block"] == 2
        assert row["calibrated"] is False
        assert row["calibration_blocks"] == []
        assert row["warmup_samples_ns"] == []
        assert len(row["samples_ns"]) == 5
        assert all(isinstance(ns, int) and ns > 0 for ns in row["samples_ns"]), key

    # Cheap plausibility: a swapped or mislabelled block would break these by
    # an order of magnitude (thesis: RSA-1024 signing ~8x verifying, RSA key
    # generation ~100x signing, CS verifying ~15x signing). Comparing medians
    # of two blocks failed under load: one preempted block of two 20 µs
    # verifications outlasts a signing block. Load only adds time, so each
    # row's fastest of five blocks is its least disturbed, and the slower
    # operation need only take more than half the faster one's time (margin
    # 2): a real inversion (1/8 or less) still fails by 4x, while noise must
    # slow every block of the faster operation 16x to fail it.
    margin = 2

    def fastest(key: tuple[str, int | None, str]) -> int:
        samples: list[int] = rows[key]["samples_ns"]
        return min(samples)

    for slower, faster in [
        (("RSA", 1024, "signing"), ("RSA", 1024, "verifying")),
        (("RSA", 1024, "key_generation"), ("RSA", 1024, "signing")),
        (("CS", None, "verifying"), ("CS", None, "signing")),
    ]:
        assert fastest(slower) * margin > fastest(faster), (
            slower,
            rows[slower]["samples_ns"],
            faster,
            rows[faster]["samples_ns"],
        )

    setup = doc["setup"]
    modversion = subprocess.run(
        ["pkg-config", "--modversion", "gnunetutil"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert setup["gnunet_version"] == modversion
    assert setup["build"]["gnunet_version"] == modversion
    assert "-O2" in setup["build"]["cflags"].split()
    assert setup["machine"] == os.uname().machine
    assert setup["cores"] == os.cpu_count()
    assert doc["parameters"]["rsa_bits"] == [1024]
    assert doc["calibration"]["min_block_ns"] == 0


def test_calibrated_run_measures_sub_microsecond_unblinding(built: Path) -> None:
    # Default calibration target, a budget small enough to cut repetitions.
    done = run_harness(
        built, "--repetitions", "20", "--rsa-bits", "1024", "--max-time", "0.5", "--progress"
    )

    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    cal = doc["calibration"]
    tick = max(cal["resolution_ns"], cal["observed_tick_ns"])
    assert cal["min_block_ns"] == default_min_block_ns(
        cal["resolution_ns"], cal["observed_tick_ns"]
    )
    assert 0 < cal["pair_overhead_ns"] < 100_000
    rows = rows_by_key(doc)

    unblinding = rows[("CS", None, "unblinding")]
    assert unblinding["valid"], unblinding["invalid_reason"]
    median_block = statistics.median(unblinding["samples_ns"])
    assert median_block / unblinding["ops_per_block"] > 0
    assert median_block > 100 * tick
    assert unblinding["ops_per_block"] > 10
    assert unblinding["calibrated"] is True
    assert unblinding["calibration_blocks"][0]["ops_per_block"] == 10

    for key, row in rows.items():
        assert row["valid"], (key, row["invalid_reason"])
        assert row["iterations_requested"] == 10
        assert row["repetitions_requested"] == 20
        assert row["ops_per_block"] >= 10
        assert row["calibrated"] is (row["ops_per_block"] > 10)
        taken = len(row["samples_ns"])
        assert 1 <= taken <= 20
        assert row["budget_exhausted"] is (taken < 20)
        # A grown block was grown for a reason: some calibration block was short
        # (not necessarily the first: under load a later round can read shorter).
        if row["calibrated"]:
            shortest = min(b["ns"] for b in row["calibration_blocks"])
            assert shortest < cal["min_block_ns"], key
        else:
            assert row["ops_per_block"] == 10
    # An RSA-1024 repetition takes >= 0.1 s (10 key generations), so 20 of
    # them cannot fit into 0.5 s: the budget must have cut them.
    keygen = rows[("RSA", 1024, "key_generation")]
    assert keygen["budget_exhausted"] is True
    assert len(keygen["samples_ns"]) < 20
    assert "--max-time spent" in done.stderr
    assert "calibration round" in done.stderr

    setup = doc["setup"]
    assert setup["cpu_affinity"] == sorted(os.sched_getaffinity(0))
    assert setup["load_average"] is not None and len(setup["load_average"]) == 3
    if os.uname().machine in ("x86_64", "aarch64"):
        assert setup["cpu_flags"], "x86 and arm64 kernels list CPU flags"
    if shutil.which("dpkg-query"):
        for package in ("libgnunetutil", "libsodium", "libgcrypt", "openssl"):
            assert setup["packages"][package], package
    if shutil.which("gcc"):
        assert setup["gcc_version"].startswith("gcc")


def test_driver_calibration_rule_is_the_harness_rule(built: Path) -> None:
    driver = str(built / "blindsig")
    grid = itertools.product(
        (1, 2, 3, 7, 10, 99_999, 100_000),
        (0, 1, 17, 999, 250_000, 999_999, 1_000_000, 7_000_000),
        (0, 1_000_000, 100_000_000, 60_000_000_000),
        (37, 100_000, 1_000_000),
    )
    cases = [c for c in grid if c[0] <= c[3]]
    for ops, block_ns, min_block_ns, max_ops in cases:
        done = subprocess.run(
            [driver, "--next-block-size", f"{ops},{block_ns},{min_block_ns},{max_ops}"],
            capture_output=True,
            text=True,
            check=True,
        )
        want = next_block_size(ops, block_ns, min_block_ns, max_ops)
        assert int(done.stdout) == want, (ops, block_ns, min_block_ns, max_ops)


def test_failed_verification_marks_only_that_scheme_invalid(built: Path) -> None:
    # The driver's --inject-fault corrupts one RSA message before it is
    # verified; a wrapper passes it since the harness does not expose it.
    wrapper = built / "blindsig-faulty"
    wrapper.write_text(f'#!/bin/sh\nexec "{built / "blindsig"}" "$@" --inject-fault rsa\n')
    wrapper.chmod(0o700)

    done = run_harness(
        built,
        "--iterations",
        "2",
        "--repetitions",
        "2",
        "--rsa-bits",
        "1024",
        "--driver",
        str(wrapper),
    )

    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    rsa = [r for r in doc["rows"] if r["scheme"] == "RSA"]
    cs = [r for r in doc["rows"] if r["scheme"] == "CS"]
    assert [r["operation"] for r in rsa] == [
        "key_generation",
        "blinding",
        "signing",
        "unblinding",
        "verifying",
    ]
    assert all(r["valid"] is False for r in rsa)
    assert {r["invalid_reason"] for r in rsa} == {
        "RSA-1024 signature 0 of repetition 0 did not verify (rc=-1)"
    }
    # The driver stops an invalid pair after the failing repetition, here
    # the first calibration round: each row keeps that discarded block.
    assert all(len(r["samples_ns"]) == 1 for r in rsa)
    assert len(cs) == 7 and all(r["valid"] for r in cs)
    assert "RSA-1024 is invalid" in done.stderr


def test_driver_usage_errors_exit_64(built: Path) -> None:
    driver = str(built / "blindsig")
    for args in (
        ["--iterations", "0", "--repetitions", "1"],
        ["--iterations", "1", "--repetitions", "1", "--rsa-bits", "1024,1024"],
        ["--iterations", "1", "--repetitions", "1", "--scheme", "ec"],
        ["--iterations", "1"],
        ["--iterations", "1", "--repetitions", "1", "--warmup", "-1"],
        ["--iterations", "1", "--repetitions", "1", "--warmup", "1001"],
        ["--iterations", "1", "--repetitions", "1", "--min-block-ns", "60000000001"],
        ["--iterations", "1", "--repetitions", "1", "--max-time", "0"],
        ["--iterations", "1", "--repetitions", "1", "--max-time", "nan"],
        ["--iterations", "1", "--repetitions", "1", "--max-time", "1s"],
        ["--next-block-size", "0,1,1,1"],
        ["--next-block-size", "1,2,3"],
    ):
        done = subprocess.run([driver, *args], capture_output=True, text=True, check=False)
        assert done.returncode == 64, args
        assert done.stdout == "", args
        assert "blindsig:" in done.stderr


def test_build_info_is_written_next_to_the_driver(built: Path) -> None:
    info = dict(
        line.split("\t", 1)
        for line in (built / "build-info.txt").read_text(encoding="utf-8").splitlines()
    )
    printed = subprocess.run(
        ["make", "-s", "-C", str(built), "print-cflags"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert info["cflags"] == printed
    assert {"-O2", "-Wall", "-Wextra", "-Werror"} <= set(printed.split())
    assert "blindsig.c" in info["compile_command"]


def test_fixed_count_keys_are_checked_and_announced(built: Path, tmp_path: Path) -> None:
    driver = str(built / "blindsig")
    keys = built / "drivers" / "counting"
    run = ["--iterations", "1", "--repetitions", "1", "--warmup", "0", "--scheme", "rsa"]
    wrong = tmp_path / "count-key-rsa-1024.key"
    wrong.write_bytes((keys / "count-key-rsa-2048.key").read_bytes())
    (tmp_path / "count-key-rsa-3072.key").write_bytes(b"(8:key-data garbage")
    for args, message in (
        ([*run, "--count-keys", str(keys)], "--count-keys needs --count-markers"),
        (
            [*run, "--count-markers", "--rsa-bits", "1024,1536", "--count-keys", str(keys)],
            "cannot read fixed RSA-1536 key",
        ),
        (
            [*run, "--count-markers", "--rsa-bits", "1024", "--count-keys", str(tmp_path)],
            "has a 2048-bit modulus, not 1024",
        ),
        (
            [*run, "--count-markers", "--rsa-bits", "3072", "--count-keys", str(tmp_path)],
            "is not a GNUnet RSA private key",
        ),
    ):
        done = subprocess.run([driver, *args], capture_output=True, text=True, check=False)
        assert (done.returncode, done.stdout) == (64, ""), args
        assert message in done.stderr, (args, done.stderr)
    counted = [*run, "--count-markers", "--rsa-bits", "1024,2048", "--count-keys", str(keys)]
    for extra in ([], ["--fresh-items"]):
        done = subprocess.run(
            [driver, *counted, *extra],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "meta\tfixed_rsa_keys\t1024,2048\n" in done.stdout
        assert "end\tok\n" in done.stdout and "invalid" not in done.stdout
    plain = subprocess.run(
        [driver, *run, "--count-markers"], capture_output=True, text=True, check=False
    )
    assert plain.returncode == 0 and "fixed_rsa_keys" not in plain.stdout
