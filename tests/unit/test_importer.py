"""Importing saved upstream benchmark output: parsing, the setup file, and ``invoke import``.

The logs in ``tests/fixtures/upstream-logs/`` were written by hand from the
print formats of GNUnet's ``perf_crypto_rsa``/``perf_crypto_cs`` and
Taler's ``test_helper_rsa``/``test_helper_cs``; their timings are invented.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from helpers import REPO, run_invoke

from archbench import upstream
from archbench.errors import MatrixError, ResultsError
from archbench.platforms import Arch
from archbench.result import Row, Setup, load
from archbench.upstream import (
    LogImport,
    build_result,
    import_logs,
    load_setup,
    log_paths,
    parse_duration,
    parse_log,
    parse_scheme,
    parse_setup,
    scan_files,
    scan_log,
)

LOGS = REPO / "tests" / "fixtures" / "upstream-logs"
US, MS, S = 1_000, 1_000_000, 1_000_000_000


def _rows(name: str) -> dict[tuple[int | None, str, int], Row]:
    path = LOGS / name
    rows = parse_log(path.read_text(encoding="utf-8"), str(path))
    keyed: dict[tuple[int | None, str, int], Row] = {
        (r.key_bits, r.operation, r.ops_per_block): r for r in rows
    }
    assert len(keyed) == len(rows), "one row per key size, operation and block"
    return keyed


def _setup(**fields: object) -> Setup:
    return parse_setup({"cpu_model": "Test CPU", "cores": 4, **fields}, "test", Arch.AMD64)


# --- the four formats -----------------------------------------------------------------


def test_perf_crypto_rsa_every_size_and_operation() -> None:
    rows = _rows("perf_crypto_rsa.log")
    operations = ["key_generation", "blinding", "signing", "unblinding", "verifying"]
    assert set(rows) == {(b, op, 10) for b in (1024, 2048, 3072, 4096) for op in operations}
    assert all(r.suite == "blindsig" and r.scheme == "RSA" and r.valid for r in rows.values())
    expected = {
        (2048, "signing"): (34 * MS, "34 ms", MS),
        (1024, "verifying"): (283 * US, "283 µs", US),
        (1024, "signing"): (4873 * US, "4873 µs", US),  # just below the switch to ms
        (3072, "blinding"): (5 * MS, "5 ms", MS),  # just above it: 5000..5999 µs
        (2048, "key_generation"): (2731 * MS, "2731 ms", MS),
        (3072, "key_generation"): (9 * S, "9 s", S),
        (4096, "key_generation"): (31 * S, "31 s", S),
        (4096, "verifying"): (2755 * US, "2755 µs", US),
    }
    for (bits, op), (ns, printed, width) in expected.items():
        row = rows[(bits, op, 10)]
        assert (row.samples_ns, row.printed, row.uncertainty_ns) == ((ns,), printed, width)


def test_perf_crypto_cs_wording_maps_to_operations() -> None:
    rows = _rows("perf_crypto_cs.log")
    got = {op: (r.samples_ns, r.printed, r.uncertainty_ns) for (_, op, _), r in rows.items()}
    assert got == {
        "key_generation": ((1043 * US,), "1043 µs", US),
        "r_derivation": ((4412 * US,), "4412 µs", US),
        "blinding_secret_derivation": ((941 * US,), "941 µs", US),
        "blinding": ((3307 * US,), "3307 µs", US),
        "signing": ((690 * US,), "690 µs", US),
        "unblinding": ((3 * US,), "3 µs", US),
        "verifying": ((11 * MS,), "11 ms", MS),
    }
    assert all(
        r.scheme == "CS" and r.key_bits is None and r.suite == "blindsig" and r.ops_per_block == 10
        for r in rows.values()
    )


def test_test_helper_rsa_sequential_parallel_clients_and_total() -> None:
    path = LOGS / "test_helper_rsa-2048.log"
    scan = scan_log(path.read_text(encoding="utf-8"), str(path))
    assert scan.tools == ("test_helper_rsa",)
    rows = {(r.key_bits, r.operation, r.ops_per_block): r for r in scan.rows}
    assert set(rows) == {
        (2048, "helper_sequential_signing", 100),
        (2048, "helper_parallel_signing", 100),
        (2048, "helper_parallel_signing", 800),
        (2048, "helper_batch_signing", 1),
        (2048, "helper_batch_signing", 4),
    }
    assert all(r.suite == "security-module" and r.scheme == "RSA" for r in rows.values())
    seq = rows[(2048, "helper_sequential_signing", 100)]
    assert (seq.samples_ns, seq.printed, seq.uncertainty_ns) == ((351 * MS,), "351 ms", MS)
    clients = rows[(2048, "helper_parallel_signing", 100)]
    # One sample per client process, in the order they finished; pooled, so no single text.
    assert clients.samples_ns == tuple(v * MS for v in (566, 571, 559, 580, 574, 562, 569, 577))
    assert clients.printed is None and clients.uncertainty_ns == MS
    total = rows[(2048, "helper_parallel_signing", 800)]
    assert (total.samples_ns, total.printed) == ((661 * MS,), "661 ms")
    # Each batch line is a row of its batch size (one request of that many signatures).
    batch = rows[(2048, "helper_batch_signing", 4)]
    assert (batch.samples_ns, batch.printed, batch.uncertainty_ns) == ((13 * MS,), "13 ms", MS)
    assert rows[(2048, "helper_batch_signing", 1)].samples_ns == (3121 * US,)
    # Helper chatter is ignored and counted.
    assert scan.skipped == ()
    assert scan.ignored == 6
    assert scan.notes == (
        "test_helper_rsa-2048.log: test_helper_rsa prints no key size; "
        "2048 bit from the file name 'test_helper_rsa-2048.log'.",
    )


def test_test_helper_cs() -> None:
    rows = _rows("test_helper_cs.log")
    seq = rows[(None, "helper_sequential_signing", 100)]
    assert (seq.scheme, seq.samples_ns, seq.printed, seq.uncertainty_ns) == (
        "CS",
        (2731 * US,),
        "2731 µs",
        US,
    )
    assert rows[(None, "helper_parallel_signing", 100)].samples_ns == tuple(
        v * MS for v in (13, 14, 12, 15, 13, 14, 13, 16)
    )
    assert rows[(None, "helper_parallel_signing", 800)].samples_ns == (19 * MS,)
    # The five batch sizes, one request each: 256 signatures in one batch took 61 ms.
    assert rows[(None, "helper_batch_signing", 256)].samples_ns == (61 * MS,)
    assert rows[(None, "helper_batch_signing", 16)].samples_ns == (4711 * US,)
    assert len(rows) == 8


# --- GNUnet's time strings ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ns", "width"),
    [
        ("712 µs", 712 * US, US),
        ("12 us", 12 * US, US),
        ("12 μs", 12 * US, US),  # Greek mu, as Unicode normalisation writes it
        ("34 ms", 34 * MS, MS),
        ("5 ms", 5 * MS, MS),
        ("4 ms", 4 * MS, US),  # printed in ms below 5 only when exactly 4000 µs
        ("9 s", 9 * S, S),
        ("4 s", 4 * S, MS),
        ("7 m", 7 * 60 * S, 60 * S),
        ("2 m", 2 * 60 * S, S),
        ("6 h", 6 * 3600 * S, 3600 * S),
        ("1 day", 86_400 * S, 3600 * S),
        ("6 days", 6 * 86_400 * S, 86_400 * S),
        ("0 ms", 0, US),
    ],
)
def test_parse_duration_value_and_truncation_width(text: str, ns: int, width: int) -> None:
    duration = parse_duration(text)
    assert (duration.ns, duration.uncertainty_ns, duration.printed) == (ns, width, text)


@pytest.mark.parametrize("text", ["forever", "12 ns", "ms", "1.5 ms", "-3 ms", "34 ms total"])
def test_parse_duration_refuses_other_text(text: str) -> None:
    with pytest.raises(ValueError, match="not a GNUnet time"):
        parse_duration(text)


def _gnunet_print(us: int) -> str:
    """GNUnet's rounding printer as documented in this module (for the property test)."""
    if us == 0:
        return "0 ms"
    value, unit = us, "µs"
    for divisor, limit, larger in (
        (1000, 5000, "ms"),
        (1000, 5000, "s"),
        (60, 300, "m"),
        (60, 300, "h"),
        (24, 120, "days"),
    ):
        if value <= limit and value % divisor:
            break
        value, unit = value // divisor, larger
    return f"{value} {'day' if unit == 'days' and value == 1 else unit}"


def test_every_printed_time_brackets_the_true_time() -> None:
    true_times = [
        *range(1, 20_001),
        *(m * 1000 + d for m in (59_999, 60_000, 299_999, 300_000, 300_001) for d in (0, 1)),
        *(h * 3_600_000_000 + d for h in (1, 4, 5, 6, 24, 119, 120, 121, 144) for d in (0, 1)),
    ]
    for us in true_times:
        d = parse_duration(_gnunet_print(us))
        assert d.ns <= us * 1000 < d.ns + d.uncertainty_ns, (us, d)
    # And no wider than needed: every µs of the interval prints the same text.
    seen: dict[str, list[int]] = {}
    for us in range(1, 20_001):
        seen.setdefault(_gnunet_print(us), []).append(us)
    for text, times in seen.items():
        if max(times) < 20_000:
            d = parse_duration(text)
            assert (d.ns, d.ns + d.uncertainty_ns) == (min(times) * US, (max(times) + 1) * US)


# --- lines in and out -----------------------------------------------------------------


def test_unknown_lines_are_ignored_but_counted() -> None:
    text = (
        "random chatter\n\n   \n"
        "[2024-03-01 10:00:00] 10x 2048-signing took 34 ms\r\n"
        "10x 2048-signing (GNUnet printed nothing else)\n"
        "Gauger: UTIL RSA 2048-signing 1927 ops/ms\n"
    )
    scan = scan_log(text, "mixed.log")
    assert [r.samples_ns for r in scan.rows] == [(34 * MS,)]
    assert scan.ignored == 3  # blank lines do not count
    assert scan.skipped == ()


def test_zero_and_forever_are_skipped_with_a_reason() -> None:
    scan = scan_log(
        "10x unblinding s took 0 ms\n10x verifying signatures took 11 ms\n"
        "10x key generation took forever\n",
        "cs.log",
    )
    assert [r.operation for r in scan.rows] == ["verifying"]
    assert [(s.line, s.reason.split(":")[0]) for s in scan.skipped] == [
        (1, "0 ms"),
        (3, "GNUnet printed no finite time"),
    ]
    with pytest.raises(ResultsError, match=r"only-zero\.log: .*0 ms: below GNUnet's 1 µs clock"):
        scan_log("10x unblinding s took 0 ms\n", "only-zero.log")


def test_file_with_nothing_recognised_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "openssl-speed.txt"
    path.write_text("sign    verify    sign/s verify/s\nrsa 2048 bits 0.000512s\n")
    with pytest.raises(ResultsError) as info:
        build_result(scan_files([path]), _setup(), "t", Arch.AMD64, "r")
    assert str(info.value).startswith(f"{path}: no timing of perf_crypto_cs, perf_crypto_rsa")
    assert "(2 other line(s) read)" in str(info.value)


def test_unreadable_time_in_a_known_line_names_file_and_line() -> None:
    with pytest.raises(ResultsError, match=r"bad\.log, line 2: '3,5 ms' is not a GNUnet time"):
        scan_log("noise\n10x 2048-signing took 3,5 ms\n", "bad.log")


def test_latin1_log_is_read(tmp_path: Path) -> None:
    path = tmp_path / "perf_crypto_cs.log"
    path.write_bytes("10x unblinding s took 3 µs\n".encode("latin-1"))
    (scan,) = scan_files([path])
    assert scan.rows[0].samples_ns == (3 * US,)


# --- which test_helper, which key size ------------------------------------------------

HELPER_LINES = "100 (sequential) signature operations took 351 ms\n"


def test_helper_scheme_must_be_known() -> None:
    with pytest.raises(ResultsError, match=r"run1\.log: .*pass --scheme cs or --scheme rsa"):
        scan_log(HELPER_LINES, "logs/run1.log")
    rows = parse_log(HELPER_LINES, "logs/run1.log", scheme="CS")
    assert [(r.scheme, r.key_bits) for r in rows] == [("CS", None)]


def test_helper_scheme_from_log_lines() -> None:
    text = "Mar 14 10:02:11-402113 taler-exchange-secmod-cs-41873 WARNING x\n" + HELPER_LINES
    scan = scan_log(text, "run1.log")
    assert scan.tools == ("test_helper_cs",) and scan.rows[0].scheme == "CS"
    with pytest.raises(ResultsError, match="--scheme rsa contradicts 'secmod-cs' in the log"):
        scan_log(text, "run1.log", scheme="RSA")


def test_helper_scheme_disagreement_and_eddsa_are_refused() -> None:
    text = "PASS: test_helper_cs\n" + HELPER_LINES
    with pytest.raises(ResultsError, match="cannot tell test_helper_cs from test_helper_rsa"):
        scan_log(text, "test_helper_rsa-2048.log")
    with pytest.raises(ResultsError, match="test_helper_eddsa output"):
        scan_log("PASS: test_helper_eddsa\n" + HELPER_LINES, "helper.log")


def test_helper_rsa_key_size() -> None:
    with pytest.raises(ResultsError, match=r"does not print its RSA key size .* --rsa-bits 2048"):
        scan_log(HELPER_LINES, "test_helper_rsa.log")
    rows = parse_log(HELPER_LINES, "test_helper_rsa.log", rsa_bits=3072)
    assert rows[0].key_bits == 3072
    scan = scan_log("[coin_1]\nRSA_KEYSIZE = 4096\n" + HELPER_LINES, "test_helper_rsa.log")
    assert scan.rows[0].key_bits == 4096
    assert "4096 bit from 'RSA_KEYSIZE = 4096' in the log" in scan.notes[0]
    with pytest.raises(ResultsError, match="--rsa-bits 1024 contradicts the file name"):
        scan_log(HELPER_LINES, "test_helper_rsa-2048.log", rsa_bits=1024)


def test_parse_scheme() -> None:
    assert (parse_scheme(""), parse_scheme("cs"), parse_scheme("RSA")) == (None, "CS", "RSA")
    with pytest.raises(MatrixError, match="--scheme 'eddsa': use cs or rsa"):
        parse_scheme("eddsa")


# --- several files, one result ----------------------------------------------------------


def test_repeated_runs_pool_into_samples(tmp_path: Path) -> None:
    one, two = tmp_path / "run1.log", tmp_path / "run2.log"
    one.write_text("10x 2048-signing took 34 ms\n10x 2048-verifying took 4 ms\n")
    two.write_text("10x 2048-signing took 36 ms\n10x 2048-verifying took 812 µs\n")
    result = build_result(scan_files([one, two]), _setup(), "pooled", Arch.AMD64, "r")
    signing, verifying = result.harness.rows
    assert (signing.samples_ns, signing.printed, signing.uncertainty_ns) == (
        (34 * MS, 36 * MS),
        None,
        MS,
    )
    # "4 ms" is exact to the µs, "812 µs" too: the row's width is the larger, 1 µs.
    assert (verifying.samples_ns, verifying.uncertainty_ns) == ((4 * MS, 812 * US), US)
    assert result.harness.parameters is not None
    assert result.harness.parameters.repetitions == 2


def test_a_file_named_twice_is_refused() -> None:
    path = LOGS / "perf_crypto_cs.log"
    with pytest.raises(ResultsError, match="named twice"):
        scan_files([path, LOGS / ".." / "upstream-logs" / "perf_crypto_cs.log"])


def test_log_paths_expands_patterns() -> None:
    spec = f"{LOGS}/perf_crypto_*.log,{LOGS / 'test_helper_cs.log'}"
    assert [p.name for p in log_paths(spec)] == [
        "perf_crypto_cs.log",
        "perf_crypto_rsa.log",
        "test_helper_cs.log",
    ]
    with pytest.raises(ResultsError, match=r"nothing\*\.log: no file matches"):
        log_paths(f"{LOGS}/nothing*.log")


def test_import_stores_a_reference_result_that_round_trips(tmp_path: Path) -> None:
    paths = tuple(sorted(LOGS.glob("*.log")))
    setup = load_setup(LOGS / "setup.yml", Arch.AMD64)
    request = LogImport(paths, setup, "ryzen-upstream", Arch.AMD64, "imp-1", tmp_path)
    imported = import_logs(request)
    result = imported.result
    assert [Path(scan.source) for scan in imported.scans] == list(paths)
    assert result.execution is None and result.reference is not None
    assert result.reference.source == (
        "perf_crypto_cs.log, perf_crypto_rsa.log, test_helper_cs.log, test_helper_rsa-2048.log"
    )
    assert result.reference.citation == (
        "imported from perf_crypto_cs, perf_crypto_rsa, test_helper_cs and test_helper_rsa output"
    )
    assert result.reference.notes.startswith(
        "values truncated toward zero; uncertainty_ns is one printed unit"
    )
    assert "2048 bit from the file name" in result.reference.notes
    assert (result.target.name, result.target.arch, result.target.platform) == (
        "ryzen-upstream",
        "amd64",
        "linux/amd64",
    )
    assert (result.target.base, result.target.profile) == (
        "Debian GNU/Linux 12 (bookworm)",
        "imported",
    )
    harness = result.harness
    assert harness.harness_version == "imported"
    assert harness.setup.cpu_model == "AMD Ryzen 7 PRO 5850U with Radeon Graphics"
    assert harness.setup.packages["libgnunetutil"] == "0.19.3-1"
    assert harness.setup.gnunet_version == "0.19.3"
    # CS and RSA: 3 helper rows each, and a row per batch size (5 and 2)
    assert len(harness.rows) == 7 + 20 + 3 + 5 + 3 + 2
    assert harness.parameters is not None
    assert harness.parameters.rsa_bits == (1024, 2048, 3072, 4096)
    assert (harness.parameters.iterations, harness.parameters.repetitions) == (800, 8)
    assert imported.path == tmp_path / "imp-1" / "ryzen-upstream.json"
    assert load(imported.path) == result
    with pytest.raises(ResultsError, match=r"ryzen-upstream\.json exists already"):
        import_logs(request)


def test_build_result_checks_names_and_machine() -> None:
    path = LOGS / "perf_crypto_cs.log"
    scans = scan_files([path])
    with pytest.raises(MatrixError, match="target name 'Ryzen 7'"):
        build_result(scans, _setup(), "Ryzen 7", Arch.AMD64, "r")
    with pytest.raises(MatrixError, match=r"run id '\.\./x'"):
        build_result(scans, _setup(), "t", Arch.AMD64, "../x")
    with pytest.raises(MatrixError, match="machine 'x86_64' does not match --arch riscv64"):
        build_result(scans, _setup(), "t", Arch.RISCV64, "r")
    unknown = Setup(cpu_model="C", cores=1, machine="unknown", kernel="k", os="o", packages={})
    assert build_result(scans, unknown, "t", Arch.ARM64, "r").harness.setup.machine == "aarch64"


# --- the setup file -------------------------------------------------------------------


def _setup_error(tmp_path: Path, text: str, arch: Arch | None = Arch.AMD64) -> str:
    path = tmp_path / "setup.yml"
    path.write_text(text)
    with pytest.raises(MatrixError) as info:
        load_setup(path, arch)
    return str(info.value)


def test_setup_file_fields_and_defaults(tmp_path: Path) -> None:
    setup = load_setup(LOGS / "setup.yml")
    assert (setup.cores, setup.machine, setup.os) == (8, "x86_64", "Debian GNU/Linux 12 (bookworm)")
    assert setup.packages == {
        "libgnunetutil": "0.19.3-1",
        "libsodium": "1.0.18-1",
        "libgcrypt": "1.10.1-3",
    }
    path = tmp_path / "minimal.yml"
    path.write_text("cpu_model: SiFive U74-MC\ncores: 4\n")
    minimal = load_setup(path, Arch.RISCV64)
    assert (minimal.machine, minimal.kernel, minimal.os, minimal.packages) == (
        "riscv64",
        "unknown",
        "unknown",
        {},
    )
    overridden = load_setup(path, Arch.RISCV64, {"cores": 2, "os": "Debian 13"})
    assert (overridden.cpu_model, overridden.cores, overridden.os) == (
        "SiFive U74-MC",
        2,
        "Debian 13",
    )


def test_setup_unknown_key_suggests_the_closest(tmp_path: Path) -> None:
    msg = _setup_error(tmp_path, "cpu: X\ncores: 2\n")
    assert msg.startswith(f"{tmp_path / 'setup.yml'}: invalid setup (2 problem(s)):")
    assert "cpu: unknown key 'cpu'; allowed: cpu_model, cores, machine, kernel, os" in msg
    assert "did you mean 'cpu_model'?" in msg
    assert "cpu_model: required key missing" in msg


def test_setup_types_and_values(tmp_path: Path) -> None:
    msg = _setup_error(tmp_path, "cpu_model: X\ncores: eight\ngnunet_version: 0.19\n")
    assert "cores: must be a whole number (got 'eight', a str)" in msg
    assert (
        "gnunet_version: must be a string (got 0.19, a float): YAML reads an unquoted 0.19 "
        "as a number; write it in quotes, e.g. '0.19'" in msg
    )
    assert "cores: must be at least 1" in _setup_error(tmp_path, "cpu_model: X\ncores: 0\n")
    assert "duplicate key 'cores'" in _setup_error(tmp_path, "cpu_model: X\ncores: 1\ncores: 2\n")
    assert "expected a mapping with cpu_model, cores" in _setup_error(tmp_path, "- a\n- b\n")
    assert "not valid YAML" in _setup_error(tmp_path, "cpu_model: [\n")
    assert (
        "machine 'aarch64' does not match --arch amd64 (whose uname -m prints x86_64)"
        in _setup_error(tmp_path, "cpu_model: X\ncores: 1\nmachine: aarch64\n")
    )
    with pytest.raises(MatrixError, match="cannot read the setup file"):
        load_setup(tmp_path / "missing.yml")


# --- the command line -----------------------------------------------------------------


def _invoke(*args: str, results: Path) -> subprocess.CompletedProcess[str]:
    return run_invoke(*args, settings={"results": results})


@pytest.mark.slow
def test_invoke_import_then_report(tmp_path: Path) -> None:
    results, out = tmp_path / "results", tmp_path / "out"
    done = _invoke(
        "import",
        f"{LOGS}/*.log",
        "--setup",
        str(LOGS / "setup.yml"),
        "--target",
        "ryzen-upstream",
        "--arch",
        "amd64",
        "--run",
        "imp-1",
        results=results,
    )
    assert done.returncode == 0, done.stderr
    stored = results / "imp-1" / "ryzen-upstream.json"
    assert f"wrote {stored}" in done.stdout
    assert "test_helper_cs.log: test_helper_cs, 15 timing line(s) -> 8 row(s)" in done.stdout
    assert "  test_helper_rsa-2048.log: test_helper_rsa prints no key size; 2048 bit" in done.stdout
    assert re.search(r"\|\s*RSA 2048 bit\s*\|\s*10x signing\s*\|\s*34 ms\s*\|", done.stdout)
    assert load(stored).harness.setup.cores == 8

    again = _invoke(
        "import",
        str(LOGS / "perf_crypto_cs.log"),
        "--cpu",
        "Test CPU",
        "--cores",
        "2",
        "--target",
        "ryzen-upstream",
        "--arch",
        "amd64",
        "--run",
        "imp-1",
        results=results,
    )
    assert again.returncode == 8 and "exists already" in again.stderr

    report = _invoke(
        "report", "--results", str(results), "--out", str(out), "--no-plots", results=results
    )
    assert report.returncode == 0, report.stderr
    markdown = (out / "appendix.md").read_text(encoding="utf-8")
    assert "— ryzen-upstream (reference data)" in markdown
    assert "perf_crypto_cs.log, perf_crypto_rsa.log, test_helper_cs.log" in markdown
    # A saved tool log is not a publication: it says so wherever the origin shows.
    assert "(imported log)" in markdown and "published figures)" not in markdown
    # Printed "31 s" is shown as the number in the table's unit (ms), not as printed.
    assert re.search(r"\|\s*RSA 4096 bit\s*\|\s*10x key generation\s*\|\s*31 000 ms\s*\|", markdown)
    assert re.search(
        r"\|\s*CS\s*\|\s*800 parallel signature operations\s*\|\s*19 ms\s*\|", markdown
    )
    csv = (out / "results.csv").read_text(encoding="utf-8")
    assert csv.count("ryzen-upstream") == 40
    frame = pd.read_csv(out / "results.csv")
    keygen = frame[(frame["key_bits"] == 4096) & (frame["operation"] == "key_generation")]
    # "31 s" truncated toward zero: the true time lies in [31 s, 32 s).
    assert keygen["uncertainty_ns"].tolist() == [1_000_000_000]


@pytest.mark.slow
def test_invoke_import_refuses_a_foreign_file_with_its_exit_code(tmp_path: Path) -> None:
    done = _invoke(
        "import",
        str(LOGS / "setup.yml"),
        "--cpu",
        "Test CPU",
        "--cores",
        "2",
        "--target",
        "t",
        "--arch",
        "amd64",
        results=tmp_path / "results",
    )
    assert done.returncode == 8
    assert f"{LOGS / 'setup.yml'}: no timing of perf_crypto_cs" in done.stderr
    assert not (tmp_path / "results").exists()
    missing = _invoke("import", "x.log", "--target", "t", "--arch", "amd64", results=tmp_path)
    assert missing.returncode == 2 and "no setup: pass --setup" in missing.stderr


def test_module_never_imports_docker() -> None:
    # The face and every module of archbench/upstream/.
    modules = [Path(upstream.__file__), *(REPO / "archbench" / "upstream").glob("*.py")]
    assert len(modules) >= 6
    for module in modules:
        source = module.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+docker\b", source, re.M), module
