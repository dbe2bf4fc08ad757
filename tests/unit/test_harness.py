"""In-container harness (harness/archbench_harness.py): the parts that need no GNUnet.

The harness is a standalone script, not a package, so it is loaded by path.
Driver runs are simulated with small shell scripts that print canned output;
the real driver is exercised by tests/integration/test_harness_native.py.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest

HARNESS_DIR = Path(__file__).resolve().parents[2] / "harness"
SCHEMA = json.loads((HARNESS_DIR / "schema-v1.json").read_text(encoding="utf-8"))


def _load_harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "archbench_harness", HARNESS_DIR / "archbench_harness.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve string annotations through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


H = _load_harness()

CS_OPS = [
    "key_generation",
    "r_derivation",
    "blinding_secret_derivation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
]
RSA_OPS = ["key_generation", "blinding", "signing", "unblinding", "verifying"]


def driver_text(
    iterations: int = 10,
    repetitions: int = 2,
    rsa_bits: tuple[int, ...] = (1024,),
    invalid: dict[tuple[str, int], str] | None = None,
    end: bool = True,
) -> str:
    """Canned blindsig stdout: sample ns = 1000 * (1 + rep) + op index."""
    lines = [
        "archbench-blindsig\t1",
        "meta\tgnunet_build_version\t0.20.0",
        "meta\tclock\tCLOCK_MONOTONIC",
        "meta\tclock_resolution_ns\t1",
        "meta\tmessage_bytes\t64",
    ]
    pairs: list[tuple[str, int, list[str]]] = [("CS", 0, CS_OPS)]
    pairs += [("RSA", bits, RSA_OPS) for bits in rsa_bits]
    for scheme, bits, ops in pairs:
        for rep in range(repetitions):
            for index, op in enumerate(ops):
                ns = 1000 * (1 + rep) + index
                lines.append(f"sample\t{scheme}\t{bits}\t{op}\t{iterations}\t{rep}\t{ns}")
        if invalid and (scheme, bits) in invalid:
            lines.append(f"invalid\t{scheme}\t{bits}\t{invalid[(scheme, bits)]}")
    if end:
        lines.append("end\tok")
    return "\n".join(lines) + "\n"


def _never_warn(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


# --------------------------------------------------------------------------
# Driver output parsing


def test_parse_driver_output_reads_meta_samples_and_verdicts() -> None:
    text = driver_text(rsa_bits=(1024, 2048), invalid={("RSA", 2048): "sig 3 did not verify"})
    out = H.parse_driver_output(text)

    assert out.meta["gnunet_build_version"] == "0.20.0"
    assert out.meta["clock_resolution_ns"] == "1"
    assert len(out.samples) == 2 * (7 + 5 + 5)
    first = out.samples[0]
    assert (first.scheme, first.key_bits, first.operation) == ("CS", None, "key_generation")
    assert (first.ops_per_block, first.repetition, first.ns) == (10, 0, 1000)
    rsa = [s for s in out.samples if s.key_bits == 2048 and s.operation == "signing"]
    assert [(s.repetition, s.ns) for s in rsa] == [(0, 1002), (1, 2002)]
    assert out.invalid == {("RSA", 2048): "sig 3 did not verify"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "does not start with"),
        ("archbench-blindsig\t2\nend\tok\n", "does not start with"),
        ("archbench-blindsig\t1\nsample\tCS\t0\tsigning\t10\t0\t5\n", "truncated"),
        ("archbench-blindsig\t1\nsample\tCS\t0\tsigning\t10\t0\t-5\nend\tok\n", "not an integer"),
        ("archbench-blindsig\t1\nsample\tCS\t0\tsigning\t0\t0\t5\nend\tok\n", "ops per block 0"),
        ("archbench-blindsig\t1\nsample\tCS\t512\tsigning\t1\t0\t5\nend\tok\n", "CS with key bits"),
        (
            "archbench-blindsig\t1\nsample\tRSA\t1024\tr_derivation\t1\t0\t5\nend\tok\n",
            "no operation",
        ),
        ("archbench-blindsig\t1\nsample\tEC\t0\tsigning\t1\t0\t5\nend\tok\n", "unknown scheme"),
        ("archbench-blindsig\t1\nbogus\tline\nend\tok\n", "unexpected"),
        ("archbench-blindsig\t1\nend\tok\nmeta\tx\ty\n", "after 'end'"),
        (
            "archbench-blindsig\t1\nsample\tCS\t0\tsigning\t1\t0\t5\n"
            "sample\tCS\t0\tsigning\t1\t0\t6\nend\tok\n",
            "duplicate sample",
        ),
    ],
)
def test_parse_driver_output_rejects_untrustworthy_output(text: str, message: str) -> None:
    with pytest.raises(H.DriverOutputError, match=message):
        H.parse_driver_output(text)


def test_build_rows_gives_one_row_per_thesis_operation_in_order() -> None:
    out = H.parse_driver_output(driver_text(iterations=10, repetitions=2, rsa_bits=(1024, 2048)))
    expected = H.expected_scheme_keys(["CS", "RSA"], [1024, 2048])
    rows = H.build_rows(out, expected, 10, 2, _never_warn)

    keys = [(r["scheme"], r["key_bits"], r["operation"]) for r in rows]
    assert keys == (
        [("CS", None, op) for op in CS_OPS]
        + [("RSA", 1024, op) for op in RSA_OPS]
        + [("RSA", 2048, op) for op in RSA_OPS]
    )
    blinding = rows[CS_OPS.index("blinding")]
    assert blinding == {
        "suite": "blindsig",
        "scheme": "CS",
        "key_bits": None,
        "operation": "blinding",
        "ops_per_block": 10,
        "samples_ns": [1003, 2003],
        "valid": True,
        "invalid_reason": None,
    }


def test_build_rows_marks_every_row_of_an_invalid_pair() -> None:
    reason = "RSA-2048 signature 0 of repetition 0 did not verify (rc=-1)"
    out = H.parse_driver_output(driver_text(rsa_bits=(1024, 2048), invalid={("RSA", 2048): reason}))
    rows = H.build_rows(
        out, H.expected_scheme_keys(["CS", "RSA"], [1024, 2048]), 10, 2, _never_warn
    )

    by_bits: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        by_bits.setdefault(row["key_bits"], []).append(row)
    assert [r["valid"] for r in by_bits[2048]] == [False] * 5
    assert {r["invalid_reason"] for r in by_bits[2048]} == {reason}
    assert all(r["valid"] and r["invalid_reason"] is None for r in by_bits[1024] + by_bits[None])


def test_build_rows_drops_unusable_samples_of_invalid_rows_and_warns() -> None:
    # A failure in repetition 0 stops the driver: later blocks never ran, and
    # the unblinding block was below clock resolution.
    text = "\n".join(
        [
            "archbench-blindsig\t1",
            "sample\tRSA\t1024\tkey_generation\t3\t0\t900",
            "sample\tRSA\t1024\tblinding\t3\t0\t80",
            "sample\tRSA\t1024\tsigning\t3\t0\t70",
            "sample\tRSA\t1024\tunblinding\t3\t0\t0",
            "invalid\tRSA\t1024\tunblinding block of 3 ops measured 0 ns",
            "end\tok",
        ]
    )
    warnings: list[str] = []
    rows = H.build_rows(H.parse_driver_output(text), [("RSA", 1024)], 3, 5, warnings.append)

    assert [(r["operation"], r["samples_ns"], r["valid"]) for r in rows] == [
        ("key_generation", [900], False),
        ("blinding", [80], False),
        ("signing", [70], False),
    ]
    assert warnings == [
        "RSA-1024 unblinding: no samples before the failure; row omitted",
        "RSA-1024 verifying: no samples before the failure; row omitted",
    ]


@pytest.mark.parametrize(
    ("expected", "iterations", "repetitions", "message"),
    [
        ([("CS", None)], 10, 2, "not requested"),
        ([("CS", None), ("RSA", 1024)], 5, 2, "expected 5"),
        ([("CS", None), ("RSA", 1024)], 10, 3, r"valid but repetitions \[0, 1\]"),
        ([("CS", None), ("RSA", 1024), ("RSA", 4096)], 10, 2, "valid but repetitions \\[\\]"),
    ],
)
def test_build_rows_rejects_output_that_does_not_match_the_request(
    expected: list[tuple[str, int | None]], iterations: int, repetitions: int, message: str
) -> None:
    out = H.parse_driver_output(driver_text(iterations=10, repetitions=2, rsa_bits=(1024,)))
    with pytest.raises(H.DriverOutputError, match=message):
        H.build_rows(out, expected, iterations, repetitions, _never_warn)


def test_build_rows_rejects_zero_sample_in_valid_row() -> None:
    text = driver_text(repetitions=1, rsa_bits=()).replace("\t0\t1000\n", "\t0\t0\n")
    out = H.parse_driver_output(text)
    with pytest.raises(H.DriverOutputError, match="valid but a sample is 0 ns"):
        H.build_rows(out, [("CS", None)], 10, 1, _never_warn)


# --------------------------------------------------------------------------
# /proc/cpuinfo

CPUINFO_X86 = """\
processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 80
model name\t: AMD Ryzen 7 PRO 5850U with Radeon Graphics
stepping\t: 0
cpu MHz\t\t: 1900.000
flags\t\t: fpu vme de pse

processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD Ryzen 7 PRO 5850U with Radeon Graphics
"""

CPUINFO_RISCV64 = """\
processor\t: 0
hart\t\t: 1
isa\t\t: rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb
mmu\t\t: sv39
uarch\t\t: sifive,u74-mc
mvendorid\t: 0x489
marchid\t\t: 0x8000000000000007
mimpid\t\t: 0x4210427

"""

CPUINFO_RISCV64_NO_UARCH = """\
processor\t: 0
hart\t\t: 0
isa\t\t: rv64imafdch_zicsr_zifencei_zba_zbb_zbc_zbs_sstc
mmu\t\t: sv57

"""

CPUINFO_PPC64LE = """\
processor\t: 0
cpu\t\t: POWER9 (raw), altivec supported
clock\t\t: 2166.000000MHz
revision\t: 2.2 (pvr 004e 1202)

processor\t: 1
cpu\t\t: POWER9 (raw), altivec supported

timebase\t: 512000000
platform\t: PowerNV
model\t\t: 8335-GTH
machine\t\t: PowerNV 8335-GTH
firmware\t: OPAL
MMU\t\t: Radix
"""

CPUINFO_ARMV7 = """\
processor\t: 0
model name\t: ARMv7 Processor rev 3 (v7l)
BogoMIPS\t: 84.00
Features\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt
CPU implementer\t: 0x41
CPU architecture: 7
CPU variant\t: 0x0
CPU part\t: 0xc07
CPU revision\t: 3

Hardware\t: ODROID-XU4
Revision\t: 0100
Serial\t\t: 0000000000000000
"""

CPUINFO_ARMV6_OLD_KERNEL = """\
Processor\t: ARMv6-compatible processor rev 7 (v6l)
processor\t: 0
BogoMIPS\t: 697.95
Hardware\t: BCM2708
"""

CPUINFO_ARM64 = """\
processor\t: 0
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x0
CPU part\t: 0xd08
CPU revision\t: 3
"""


@pytest.mark.parametrize(
    ("text", "model"),
    [
        (CPUINFO_X86, "AMD Ryzen 7 PRO 5850U with Radeon Graphics"),
        (CPUINFO_RISCV64, "sifive,u74-mc"),
        (CPUINFO_RISCV64_NO_UARCH, "rv64imafdch_zicsr_zifencei_zba_zbb_zbc_zbs_sstc"),
        (CPUINFO_PPC64LE, "POWER9 (raw), altivec supported"),
        (CPUINFO_ARMV7, "ARMv7 Processor rev 3 (v7l)"),
        (CPUINFO_ARMV6_OLD_KERNEL, "ARMv6-compatible processor rev 7 (v6l)"),
        (CPUINFO_ARM64, "CPU implementer 0x41 part 0xd08"),
        ("", "unknown"),
        ("processor\t: 0\nmodel name\t:\n", "unknown"),
    ],
    ids=["x86", "riscv64", "riscv64-isa", "ppc64le", "armv7", "armv6", "arm64", "empty", "blank"],
)
def test_parse_cpuinfo(text: str, model: str) -> None:
    assert H.parse_cpuinfo(text) == model


def test_read_cpu_model_without_proc(tmp_path: Path) -> None:
    assert H.read_cpu_model(tmp_path / "missing") == "unknown"


# --------------------------------------------------------------------------
# os-release, dpkg, build info

OS_RELEASE_TRIXIE = """\
PRETTY_NAME="Debian GNU/Linux 13 (trixie)"
NAME="Debian GNU/Linux"
VERSION_ID="13"
VERSION="13 (trixie)"
VERSION_CODENAME=trixie
# a comment
ID=debian
HOME_URL='https://www.debian.org/'
QUOTED="say \\"hi\\" \\\\o/"
not a variable line
BAD KEY=x
"""


def test_parse_os_release() -> None:
    info = H.parse_os_release(OS_RELEASE_TRIXIE)
    assert info["PRETTY_NAME"] == "Debian GNU/Linux 13 (trixie)"
    assert info["VERSION_CODENAME"] == "trixie"
    assert info["VERSION_ID"] == "13"
    assert info["HOME_URL"] == "https://www.debian.org/"
    assert info["QUOTED"] == 'say "hi" \\o/'
    assert "BAD KEY" not in info and len(info) == 8


def test_read_os_name_falls_back(tmp_path: Path) -> None:
    no_pretty = tmp_path / "os-release"
    no_pretty.write_text('NAME="Debian GNU/Linux"\nVERSION="12 (bookworm)"\n', encoding="utf-8")
    pretty = tmp_path / "usr-os-release"
    pretty.write_text('PRETTY_NAME="Ubuntu 24.04 LTS"\n', encoding="utf-8")

    assert H.read_os_name([tmp_path / "missing", pretty]) == "Ubuntu 24.04 LTS"
    assert H.read_os_name([no_pretty, pretty]) == "Debian GNU/Linux 12 (bookworm)"
    assert H.read_os_name([tmp_path / "missing"]) == "unknown"


@pytest.mark.parametrize(
    ("text", "arch", "package"),
    [
        (
            "libgnunet0.20t64: /usr/lib/x86_64-linux-gnu/libgnunetutil.so.15\n"
            "libgnunet0.20t64: /usr/lib/x86_64-linux-gnu/libgnunetutil.so.15.0.0\n",
            "amd64",
            "libgnunet0.20t64",
        ),
        (
            "libsodium23:i386: /usr/lib/i386-linux-gnu/libsodium.so.23\n"
            "libsodium23:amd64: /usr/lib/x86_64-linux-gnu/libsodium.so.23\n",
            "amd64",
            "libsodium23:amd64",
        ),
        (
            "diversion by foo from: /usr/lib/libgcrypt.so.20\n"
            "libgcrypt20:riscv64: /usr/lib/riscv64-linux-gnu/libgcrypt.so.20\n",
            "riscv64",
            "libgcrypt20:riscv64",
        ),
        (
            "libsodium26:arm64: /usr/lib/aarch64-linux-gnu/libsodium.so.26\n",
            None,
            "libsodium26:arm64",
        ),
        ("", "amd64", None),
    ],
)
def test_parse_dpkg_search(text: str, arch: str | None, package: str | None) -> None:
    assert H.parse_dpkg_search(text, arch) == package


def test_parse_build_info() -> None:
    text = "cc\tcc\ncflags\t-O2 -Wall -Wextra -Werror\nldflags\t\nno tab here\n"
    assert H.parse_build_info(text) == {
        "cc": "cc",
        "cflags": "-O2 -Wall -Wextra -Werror",
        "ldflags": "",
    }


def test_kernel_string_matches_uname_srv() -> None:
    uname = H.os.uname_result(("Linux", "host", "6.1.0-28-amd64", "#1 SMP Debian", "x86_64"))
    assert H.kernel_string(uname) == "Linux 6.1.0-28-amd64 #1 SMP Debian"


@pytest.mark.parametrize(
    ("text", "value"),
    [("1024,2048", [1024, 2048]), ("4096", [4096]), (" 512 , 16384", [512, 16384])],
)
def test_parse_rsa_bits_accepts(text: str, value: list[int]) -> None:
    assert H.parse_rsa_bits(text) == value


@pytest.mark.parametrize(
    "text", ["", "1024,1024", "256", "20000", "2048,x", ",".join(["1024"] * 17)]
)
def test_parse_rsa_bits_rejects(text: str) -> None:
    with pytest.raises(H.argparse.ArgumentTypeError):
        H.parse_rsa_bits(text)


# --------------------------------------------------------------------------
# Whole documents


def _setup() -> dict[str, Any]:
    return {
        "cpu_model": "AMD Ryzen 7 PRO 5850U with Radeon Graphics",
        "cores": 8,
        "machine": "x86_64",
        "kernel": "Linux 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1",
        "os": "Debian GNU/Linux 13 (trixie)",
        "packages": {"libgnunetutil": "0.20.0-7", "libsodium": "1.0.18-1", "libgcrypt": None},
        "package_names": {
            "libgnunetutil": "libgnunet0.20t64",
            "libsodium": "libsodium23:amd64",
            "libgcrypt": None,
        },
        "gnunet_version": "0.20.0",
        "clock_resolution_ns": 1,
        "build": {"cflags": "-O2 -Wall -Wextra -Werror"},
    }


def test_build_document_validates_against_schema() -> None:
    out = H.parse_driver_output(
        driver_text(rsa_bits=(1024, 2048), invalid={("CS", 0): "CS signature 1 did not verify"})
    )
    rows = H.build_rows(out, H.expected_scheme_keys(["CS", "RSA"], [1024, 2048]), 10, 2, print)
    parameters = {
        "iterations": 10,
        "repetitions": 2,
        "rsa_bits": [1024, 2048],
        "schemes": ["CS", "RSA"],
        "message_bytes": 64,
    }
    started = H.datetime(2026, 11, 29, 22, 40, 0, 123456, tzinfo=H.UTC)
    doc = H.build_document(started, 12.34567, parameters, _setup(), rows)

    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["format"] == "archbench-harness"
    assert doc["version"] == 1
    assert doc["started_at"] == "2026-11-29T22:40:00Z"
    assert doc["duration_s"] == 12.346
    assert len(doc["rows"]) == 17
    assert [r["valid"] for r in doc["rows"][:7]] == [False] * 7
    # The schema is what the host checks too: make sure it would catch breakage.
    broken = json.loads(json.dumps(doc))
    broken["rows"][0]["samples_ns"] = [0]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(broken)


def _fake_driver(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "blindsig"
    script.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    script.chmod(0o700)
    return script


def _hermetic_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    versions = {"libgnunetutil": "0.20.0-7", "libsodium": "1.0.18-1+deb13u1", "libgcrypt": None}
    names = {"libgnunetutil": "libgnunet0.20t64", "libsodium": "libsodium23", "libgcrypt": None}
    monkeypatch.setattr(H, "package_versions", lambda: (versions, names))
    monkeypatch.setattr(H, "_run_quiet", lambda argv, timeout_s=60.0: None)


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
        "--scheme",
        "all",
        "--rsa-bits",
        "1024,3072",
    ]
    doc = json.loads(captured.out)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["parameters"] == {
        "iterations": 4,
        "repetitions": 2,
        "rsa_bits": [1024, 3072],
        "schemes": ["CS", "RSA"],
        "message_bytes": 64,
    }
    setup = doc["setup"]
    assert setup["packages"]["libgnunetutil"] == "0.20.0-7"
    assert setup["gnunet_version"] == "0.20.0"  # from the driver, pkg-config "failed"
    assert setup["build"] == {"cflags": "-O2 -Wall", "cc": "gcc"}
    assert setup["clock_resolution_ns"] == 1
    assert setup["cores"] >= 1
    assert len(doc["rows"]) == 7 + 5 + 5
    assert all(r["valid"] for r in doc["rows"])


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
        ("echo 'archbench-blindsig\t1'\nexit 3\n", "exited with status 3"),
        ("kill -SEGV $$\n", "killed by SIGSEGV"),
        (
            "printf 'archbench-blindsig\\t1\\nsample\\tCS\\t0\\tsigning\\t10\\t0\\t5\\n'\n",
            "truncated",
        ),
    ],
    ids=["exit-status", "signal", "truncated"],
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
