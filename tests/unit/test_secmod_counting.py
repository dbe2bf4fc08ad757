"""Counting Taler's security module: the plugin's process-mode output, the calls of the
signing and key-generation functions, the rows and their notes, the shadow prefix and
its wrapper, and the machine section's table of the secmod's counts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from abh.suites import count_symbols, taler_counting, taler_helper
from abh.suites import counting as C
from abh.suites.common import SuiteError
from helpers import REPO, result, row
from hypothesis import given
from hypothesis import strategies as st

from archbench.report import ReportOptions, prepare
from archbench.report.chapter import build
from archbench.report.formats import render_markdown_chapter
from archbench.report.page import assemble
from archbench.result import Counting, Result, Row

HEADER = "archbench-count\t3\t1\triscv64\n"
LIB = "/opt/gnunet/lib/libgnunetutil.so.16"
LOGS = REPO / "tests" / "fixtures" / "upstream-logs"


def process_text(vcpus: dict[int, int], execs: dict[int, tuple[int, int]]) -> str:
    lines = [f"base\t0\nmap\t1000\t9000\tr-xp\t0\t{LIB}\n"]
    lines += [f"vcpu\t{i}\t{n}\n" for i, n in vcpus.items()]
    lines += [f"exec\t{a:x}\t{n}\t{insns}\n" for a, (n, insns) in execs.items()]
    return HEADER + "".join(lines) + f"total\t{sum(vcpus.values())}\n"


@given(
    st.dictionaries(st.integers(0, 1023), st.integers(0, 2**62), max_size=20),
    st.dictionaries(
        st.integers(0, 2**48),
        st.tuples(st.integers(1, 2**30), st.integers(1, 2**40)),
        max_size=20,
    ),
)
def test_process_count_round_trips(
    vcpus: dict[int, int], execs: dict[int, tuple[int, int]]
) -> None:
    parsed = taler_counting.parse_process_count(process_text(vcpus, execs))
    assert parsed.vcpus == vcpus and parsed.execs == execs
    assert parsed.total == sum(vcpus.values())
    assert (parsed.plugin_version, parsed.plugin_api, parsed.target) == ("3", 1, "riscv64")
    assert parsed.guest_base == 0 and parsed.maps[0].path == LIB


def test_translations_of_one_address_add_up() -> None:
    text = process_text({0: 10}, {}).replace("total", "exec\t20\t2\t8\nexec\t20\t3\t12\ntotal")
    assert taler_counting.parse_process_count(text).execs == {0x20: (5, 20)}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("archbench-count\t3\n", "header"),
        (HEADER + "vcpu\t0\t5\n", "no total line"),
        (HEADER + "vcpu\t0\t5\ntotal\t6\n", "not the sum of its vCPUs"),
        (HEADER + "vcpu\tx\t5\ntotal\t5\n", "line 2: malformed"),
        (HEADER + "block\t0\t5\ntotal\t0\n", "line 2: malformed"),
        (HEADER + "error\tvCPU indices beyond 1024\ntotal\t0\n", "plugin error: vCPU"),
    ],
)
def test_bad_process_output_is_refused(text: str, message: str) -> None:
    with pytest.raises(C.CountError, match=message):
        taler_counting.parse_process_count(text)


def symbolizer() -> count_symbols.Symbolizer:
    symbols = count_symbols.functions_from(
        [
            ("GNUNET_CRYPTO_rsa_sign_blinded", 0x2000, 0x100),
            ("GNUNET_CRYPTO_rsa_private_key_create", 0x3000, 0x80),
            ("gcry_mpi_powm", 0x4000, 0x400),
        ],
        loads=[(0, 0, 0x8000)],
    )
    return count_symbols.Symbolizer(
        [count_symbols.MapEntry(0x1000, 0x9000, 0, LIB)], 0x1000, reader=lambda _: symbols
    )


def test_signatures_are_the_executions_of_the_functions_entry_block() -> None:
    # Entry blocks of signing (3 translations, 1527 runs) and key creation (10); a block
    # inside the signing function and one of another function are not calls.
    count = taler_counting.parse_process_count(
        process_text(
            {0: 855_000_000, 1: 20_000_000_000, 5: 674_877_551},
            {
                0x2000: (1500, 15_000),
                0x2040: (9999, 99_990),
                0x3000: (10, 300),
                0x4000: (50_000, 20_675_000_000),
            },
        ).replace("total", "exec\t2000\t27\t270\ntotal")
    )
    figures = taler_counting.secmod_counts(count, "RSA", symbolizer())
    assert figures["signatures"] == 1527 and figures["keys_generated"] == 10
    assert figures["main_thread"] == 855_000_000
    assert figures["other_threads"] == 20_674_877_551
    assert figures["threads"] == 3
    assert figures["top_functions"][0] == {
        "library": "libgnunetutil.so.16",
        "function": "gcry_mpi_powm",
        "instructions": 20_675_000_000,
    }


def runs(signatures: list[int], other: list[int]) -> list[dict[str, object]]:
    return [
        {"seconds": 61.2, "signatures": s, "other_threads": o, "keys_generated": 10,
         "main_thread": 855_357_864}
        for s, o in zip(signatures, other, strict=True)
    ]  # fmt: skip


def test_rows_divide_by_signatures_and_keys_and_say_what_was_counted() -> None:
    sign, keygen = taler_counting.counted_rows(
        "test_helper_rsa", 1024, runs([1527, 1527], [20_674_877_551, 20_674_000_000])
    )
    assert (sign["suite"], sign["scheme"], sign["key_bits"]) == ("taler-helper", "RSA", 1024)
    assert sign["operation"] == "secmod_signing" and sign["ops_per_block"] == 1527
    assert sign["instructions"] == [20_674_877_551, 20_674_000_000]
    assert sign["samples_ns"] == [61_200_000_000, 61_200_000_000]
    assert "taler-exchange-secmod-rsa's instructions per signature" in sign["note"]
    assert "other than the main one" in sign["note"]
    assert "GNUNET_CRYPTO_rsa_sign_blinded calls" in sign["note"]
    assert "deriving R" not in sign["note"]
    assert keygen["operation"] == "secmod_key_generation" and keygen["ops_per_block"] == 10
    assert keygen["instructions"] == [855_357_864, 855_357_864]
    assert "main thread per key it generated" in keygen["note"]
    assert "GNUNET_CRYPTO_rsa_private_key_create calls" in keygen["note"]
    (cs_sign, _) = taler_counting.counted_rows("test_helper_cs", None, runs([1508], [5]))
    assert cs_sign["key_bits"] is None and "deriving R on request" in cs_sign["note"]
    assert "GNUNET_CRYPTO_cs_sign_derive calls" in cs_sign["note"]


def test_a_run_with_other_signature_count_is_rescaled_to_the_first() -> None:
    sign, _ = taler_counting.counted_rows("test_helper_rsa", 2048, runs([1000, 2000], [10, 40]))
    assert sign["ops_per_block"] == 1000 and sign["instructions"] == [10, 20]


def test_a_run_without_signatures_is_an_error_naming_the_function() -> None:
    with pytest.raises(SuiteError, match="no GNUNET_CRYPTO_cs_sign_derive call"):
        taler_counting.counted_rows("test_helper_cs", None, runs([0], [5]))


def test_the_test_execs_the_secmod_through_the_wrapper_under_the_counting_qemu(
    tmp_path: Path,
) -> None:
    real = tmp_path / "taler"
    (real / "bin").mkdir(parents=True)
    (real / "share" / "taler").mkdir(parents=True)
    for name in ("taler-exchange-secmod-rsa", "taler-exchange-secmod-cs"):
        (real / "bin" / name).write_text("binary")
    # A counting layer whose "loader" records how it was started: the real wrapper's
    # command line and environment, run by sh as the test's exec would.
    layer = tmp_path / "counter"
    layer.mkdir()
    wrapper = layer / taler_counting.EXEC_COUNTED
    shutil.copy(REPO / "images" / "counter" / "exec-counted", wrapper)
    record = tmp_path / "loader.txt"
    loader = layer / "ld-linux-x86-64.so.2"
    loader.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n'
        f'echo "TALER_PREFIX=$TALER_PREFIX ${{ARCHBENCH_COUNT_OUT-unset}}" >> {record}\n'
    )
    loader.chmod(0o755)
    session = C.CountSession(
        C.Counter(layer, "qemu-riscv64", "7.2", "1:7.2", "3", ""), "rv64", tmp_path, {}, "3", 1
    )
    shadow = tmp_path / "run 1" / "p"
    taler_counting.make_shadow_prefix(real, shadow, ["taler-exchange-secmod-rsa"], wrapper)
    assert (shadow / "share").resolve() == (real / "share").resolve()
    assert (shadow / "bin" / "taler-exchange-secmod-cs").resolve() == (
        real / "bin" / "taler-exchange-secmod-cs"
    ).resolve()
    assert (shadow / "bin" / "taler-exchange-secmod-rsa").resolve() == wrapper.resolve()
    out = tmp_path / "run 1" / "secmod.count"
    env = taler_counting.wrapper_env(session, out, real, ["TALER_PREFIX"])
    done = subprocess.run(
        [str(shadow / "bin" / "taler-exchange-secmod-rsa"), "-c", "test_helper_rsa.conf"],
        env={"PATH": "/usr/bin:/bin", "TALER_PREFIX": str(shadow), **env},
        check=False,
    )
    assert done.returncode == 0
    *argv, last = record.read_text().splitlines()
    assert argv == [
        "--library-path", f"{layer}/lib", f"{layer}/qemu-riscv64", "-L", "/", "-cpu", "rv64",
        "-plugin", f"{layer}/libarchbench_count.so,out={out},process=on",
        str(real / "bin" / "taler-exchange-secmod-rsa"), "-c", "test_helper_rsa.conf",
    ]  # fmt: skip
    # The secmod sees the real prefix, and none of the wrapper's own variables.
    assert last == f"TALER_PREFIX={real} unset"
    with pytest.raises(SuiteError, match="secmod was not installed"):
        taler_counting.make_shadow_prefix(real, tmp_path / "s2", ["taler-exchange-x"], wrapper)
    with pytest.raises(ValueError, match="must not contain a comma"):
        taler_counting.wrapper_env(session, tmp_path / "a,b", real, ["TALER_PREFIX"])
    with pytest.raises(ValueError, match="prefix variables"):
        taler_counting.wrapper_env(session, out, real, ["LD_PRELOAD"])


COUNTING = {
    "instrument": "qemu-tcg-plugin",
    "qemu": "qemu-riscv64",
    "qemu_version": "qemu-riscv64 version 7.2.22",
    "qemu_package": "1:7.2+dfsg-7+deb12u18",
    "cpu_model": "rv64",
    "plugin_version": "3",
    "plugin_api": 1,
    "calibration": {
        "iterations": 100000,
        "instructions_per_iteration": 2,
        "counts": [200021, 400021],
        "expected_difference": 200000,
        "difference": 200000,
        "overhead": 21,
        "exact": True,
    },
}
RUN = "20261203T150000Z-abcdef"


def secmod_rows() -> list[Row]:
    found = []
    for test, bits, sign, keygen in (
        ("test_helper_cs", None, (1508, 553_945_043), (9, 13_842_562)),
        ("test_helper_rsa", 1024, (1527, 20_674_877_551), (10, 855_357_864)),
    ):
        for made in taler_counting.counted_rows(
            test,
            bits,
            [{"seconds": 30.0, "signatures": sign[0], "other_threads": sign[1],
              "keys_generated": keygen[0], "main_thread": keygen[1]}],
        ):  # fmt: skip
            found.append(Row.model_validate(made))
    return found


def test_emulated_section_shows_the_secmods_counts_and_what_they_are() -> None:
    timed = result(
        "riscv64-taler", "riscv64", "riscv64", "EPYC",
        [row("CS", "signing", [10_000_000, 11_000_000, 12_000_000])],
        emulated=True, run_id=RUN,
    )  # fmt: skip
    base = result("riscv64-taler", "riscv64", "riscv64", "EPYC", [], emulated=True, run_id=RUN)
    harness = base.harness.model_copy(
        update={"rows": tuple(secmod_rows()), "counting": Counting.model_validate(COUNTING)}
    )
    counted = Result.model_validate(
        {**base.model_dump(), "harness": harness.model_dump(), "metric": "instructions"}
    )
    options = ReportOptions()
    chapter = build(prepare([timed]), options, counted=[counted])
    text = render_markdown_chapter(chapter)
    table = text[text.index("Security module of riscv64-taler, riscv64") :]
    assert "-cpu rv64, QEMU 7.2.22" in table
    assert "measures QEMU user emulation and the host's IPC" in table
    cells = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in table.splitlines()
        if line.startswith("| ") and "secmod" in line
    ]
    assert cells == [
        ["CS", "secmod signing", "367 338", "1 508"],
        ["CS", "secmod key generation", "1 538 062", "9"],
        ["RSA 1024 bit", "secmod signing", "13 539 540", "1 527"],
        ["RSA 1024 bit", "secmod key generation", "85 535 786", "10"],
    ]
    assert "CS secmod signing: taler-exchange-secmod-cs's instructions per signature" in table
    assert "RSA secmod key generation: taler-exchange-secmod-rsa's main thread" in table


def test_the_results_page_says_what_emulated_secmod_times_and_its_counts_are() -> None:
    timed = result(
        "riscv64-taler", "riscv64", "riscv64", "EPYC",
        [row("CS", "helper_sequential_signing", [7_000_000, 7_100_000], suite="security-module")],
        emulated=True, run_id=RUN,
    )  # fmt: skip
    base = result("riscv64-taler", "riscv64", "riscv64", "EPYC", [], emulated=True, run_id=RUN)
    harness = base.harness.model_copy(
        update={"rows": tuple(secmod_rows()), "counting": Counting.model_validate(COUNTING)}
    )
    counted = Result.model_validate(
        {**base.model_dump(), "harness": harness.model_dump(), "metric": "instructions"}
    )
    (run,) = assemble([timed, counted]).runs
    times, counts = run.tables[:2]
    assert (
        "Security module on riscv64-taler (riscv64, emulated), emulated: a security-module "
        "time measures QEMU user emulation of the secmod" in times.note
    )
    assert "secmod signing is the security module's own instructions per signature" in counts.note
    assert "taler-helper RSA-1024 secmod signing" in counts.rows
    line = counts.cells[counts.rows.index("taler-helper RSA-1024 secmod signing")]
    assert line[0].text == "13 539 540"
    # A native run's secmod time needs no such note.
    assert timed.execution is not None
    native = timed.model_copy(
        update={"execution": timed.execution.model_copy(update={"emulated": False})}
    )
    (plain,) = assemble([native]).runs
    assert "Security module" not in plain.tables[0].note


def _fake_exchange(tmp_path: Path, lib: Path, error: bool) -> C.CountSession:
    """An exchange tree whose test execs its secmod from the prefix, and a counting layer
    whose "QEMU" writes a process-mode output naming ``lib``'s functions (or an error)."""
    util = tmp_path / "exchange" / "src" / "util"
    util.mkdir(parents=True)
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "taler-exchange-secmod-cs").write_text("binary")
    (tmp_path / "exchange" / "archbench-taler.txt").write_text(
        f"version\t0.14.0\nprefix\t{prefix}\nprefix_variable\tTALER_PREFIX\n"
    )
    test = util / "test_helper_cs"
    test.write_text(
        '#!/bin/sh\n"$TALER_PREFIX/bin/taler-exchange-secmod-cs" -c test_helper_cs.conf\n'
        f"cat '{LOGS / 'test_helper_cs.log'}' >&2\n"
    )
    test.chmod(0o755)
    (util / "test_helper_cs.conf").write_text("[taler-exchange-secmod-cs]\n")
    syms = count_symbols.read_elf(lib)
    sign = syms.starts[syms.names.index("GNUNET_CRYPTO_cs_sign_derive")]
    keygen = syms.starts[syms.names.index("GNUNET_CRYPTO_cs_private_key_generate")]
    layer = tmp_path / "counter"
    layer.mkdir()
    shutil.copy(REPO / "images" / "counter" / "exec-counted", layer / "exec-counted")
    body = (
        "error\\tcannot read /proc/self/maps\\n"
        if error
        else f"base\\t0\\nmap\\t10000\\t90000\\tr-xp\\t0\\t{lib}\\nvcpu\\t0\\t900\\n"
        f"vcpu\\t1\\t29000\\nvcpu\\t4\\t1000\\nexec\\t{0x10000 + sign:x}\\t3\\t30\\n"
        f"exec\\t{0x10000 + sign + 4:x}\\t3\\t30\\nexec\\t{0x10000 + keygen:x}\\t2\\t20\\n"
        "total\\t30900\\n"
    )
    loader = layer / "ld-linux-x86-64.so.2"
    loader.write_text(
        "#!/bin/sh\n"
        "for a; do case $a in *,out=*) o=${a#*,out=}; o=${o%,process=on};; esac; done\n"
        f'printf "archbench-count\\t3\\t1\\triscv64\\n{body}" > "$o"\n'
    )
    loader.chmod(0o755)
    return C.CountSession(
        C.Counter(layer, "qemu-riscv64", "7.2", "1:7.2", "3", ""), "rv64", tmp_path, {}, "3", 1
    )


@pytest.fixture
def gnunet_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shared library with libgnunetutil's signing and key functions (real ELF symbols)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build a library with real symbols")
    folder = tmp_path_factory.mktemp("lib")
    source = folder / "g.c"
    source.write_text(
        "int GNUNET_CRYPTO_cs_sign_derive (int a) { return a * 3 + 1; }\n"
        "int GNUNET_CRYPTO_cs_private_key_generate (int a) { return a ^ 5; }\n"
    )
    lib = folder / "libgnunetutil.so.16"
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(lib), str(source)], check=True)
    return lib


def test_counting_mode_runs_the_test_with_its_secmod_under_the_counter(
    tmp_path: Path, gnunet_lib: Path
) -> None:
    session = _fake_exchange(tmp_path, gnunet_lib, error=False)
    config = taler_helper.normalize_config({"tests": ["test_helper_cs"], "repetitions": 2})
    warnings: list[str] = []
    outcome = taler_helper.run(config, warnings.append, session, taler_dir=tmp_path)
    assert warnings == [] and outcome.extra["failures"] == []
    first = outcome.extra["runs"][0]["counts"]
    assert (first["signatures"], first["keys_generated"]) == (3, 2)
    assert (first["main_thread"], first["other_threads"], first["threads"]) == (900, 30000, 3)
    sign, keygen = outcome.rows
    assert (sign["operation"], sign["ops_per_block"], sign["instructions"]) == (
        "secmod_signing", 3, [30000, 30000]
    )  # fmt: skip
    assert (keygen["ops_per_block"], keygen["instructions"]) == (2, [900, 900])
    # The log is kept as in a timing run (the host's parser reads it from there).
    assert "signature operations took" in outcome.extra["runs"][1]["log"]


def test_a_run_whose_secmod_cannot_be_counted_fails_and_says_why(
    tmp_path: Path, gnunet_lib: Path
) -> None:
    session = _fake_exchange(tmp_path, gnunet_lib, error=True)
    config = taler_helper.normalize_config({"tests": ["test_helper_cs"], "repetitions": 1})
    warnings: list[str] = []
    with pytest.raises(SuiteError, match="plugin error: cannot read /proc/self/maps"):
        taler_helper.run(config, warnings.append, session, taler_dir=tmp_path)
    assert warnings == [
        "test_helper_cs (run 1): secmod counter output line 2: plugin error: "
        "cannot read /proc/self/maps"
    ]
