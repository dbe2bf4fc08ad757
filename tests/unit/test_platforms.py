from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import pytest
from abh import setup_cpu
from helpers import HARNESS_DIR, REPO

from archbench.images.cross import build_env, meson_cross_file
from archbench.matrix import Target
from archbench.platforms import Arch, ArchRecord, needs_emulation


@pytest.mark.parametrize(
    ("key", "platform", "debian", "qemu"),
    [
        ("amd64", "linux/amd64", "amd64", "x86_64"),
        ("arm64", "linux/arm64", "arm64", "aarch64"),
        ("riscv64", "linux/riscv64", "riscv64", "riscv64"),
        ("ppc64le", "linux/ppc64le", "ppc64el", "ppc64le"),
        ("armv7", "linux/arm/v7", "armhf", "arm"),
    ],
)
def test_platform_mapping(key: str, platform: str, debian: str, qemu: str) -> None:
    arch = Arch.from_key(key)
    assert arch.platform == platform
    assert arch.debian_arch == debian
    assert arch.value.qemu_name == qemu
    assert Arch.from_key(platform) is arch


@pytest.mark.parametrize(
    ("machine", "key"),
    [
        ("x86_64", "amd64"),
        ("aarch64", "arm64"),
        ("riscv64", "riscv64"),
        ("ppc64le", "ppc64le"),
        ("armv7l", "armv7"),
        ("armv8l", "armv7"),
        ("amd64", "amd64"),
    ],
)
def test_from_machine(machine: str, key: str) -> None:
    assert Arch.from_machine(machine).key == key


def test_unknown_names_are_refused_with_the_allowed_list() -> None:
    with pytest.raises(ValueError, match="allowed: amd64, arm64, riscv64, ppc64le, armv7"):
        Arch.from_key("mips")
    with pytest.raises(ValueError, match="unsupported machine 's390x'"):
        Arch.from_machine("s390x")


def test_emulation_is_derived_from_the_host_and_can_be_forced() -> None:
    assert needs_emulation(Arch.RISCV64, Arch.AMD64) is True
    assert needs_emulation(Arch.AMD64, Arch.AMD64) is False
    assert needs_emulation(Arch.AMD64, Arch.AMD64, force=True) is True
    assert needs_emulation(Arch.ARM64, Arch.ARM64, force=False) is False
    with pytest.raises(ValueError, match="cannot run natively on a amd64 host"):
        needs_emulation(Arch.ARM64, Arch.AMD64, force=False)


# --- one record per architecture ------------------------------------------------------

RECORDS = [a.value for a in Arch]
CALIBRATE = HARNESS_DIR / "drivers" / "counting" / "count_calibrate.c"
CONSUMERS = [
    p
    for root in (REPO / "archbench", REPO / "benchmarks")
    for p in sorted(root.rglob("*.py"))
    if p != REPO / "archbench" / "platforms.py"
] + [REPO / "tasks.py"]
"""Code that reads what an architecture is: every module but ``platforms.py`` itself."""


def _cpu_pattern() -> str:
    """The grammar of a target's ``cpu`` (QEMU model names), as matrix.yml checks it."""
    (pattern,) = [m.pattern for m in Target.model_fields["cpu"].metadata if hasattr(m, "pattern")]
    return str(pattern)


@pytest.mark.parametrize("arch", list(Arch), ids=Arch.keys())
def test_every_record_is_complete(arch: Arch) -> None:
    record = arch.value
    for f in fields(ArchRecord):
        value = getattr(record, f.name)
        if value is None:
            # Only where the record's docstring says None means something.
            assert f.name in {"build_qemu_cpu", "cpuinfo_model", "cpuinfo_flags", "runner"}, f
        elif isinstance(value, str | frozenset):
            assert value, f"{arch.key}: {f.name} is empty"
    assert record.platform.startswith("linux/")
    assert re.fullmatch(r"[a-z0-9_]+-linux-gnu(eabihf)?", record.triplet)
    assert re.fullmatch(r"__[a-z0-9_]+(__)?", record.cc_macro)
    assert re.match(_cpu_pattern(), record.qemu_cpu), "a counted target would refuse it"
    if record.build_qemu_cpu is not None:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+=,-]*", record.build_qemu_cpu)
    if record.runner is not None:
        assert record.runner.labels and record.runner.provider and record.runner.source
    assert Arch.from_key(record.key) is arch and Arch.from_key(record.platform) is arch
    assert all(Arch.from_machine(m) is arch for m in record.uname_machines)


def test_records_name_each_architecture_once() -> None:
    for name in ("key", "platform", "debian_arch", "triplet", "qemu_name", "cc_macro"):
        values = [getattr(r, name) for r in RECORDS]
        assert len(set(values)) == len(values), name
    machines = [m for r in RECORDS for m in r.uname_machines]
    assert len(set(machines)) == len(machines)


def test_the_counted_model_and_the_cross_file_come_from_the_record() -> None:
    target = Target.model_validate({"name": "t", "arch": "armv7", "base": "b"})
    assert target.count_cpu == Arch.ARMV7.value.qemu_cpu == "max"
    ini = meson_cross_file(Arch.ARMV7)
    assert "c = 'arm-linux-gnueabihf-gcc'" in ini
    assert "cpu_family = 'arm'\ncpu = 'armv7'\nendian = 'little'" in ini
    assert build_env(Arch.ARM64) == {"QEMU_CPU": "max,pauth-impdef=on"}
    assert build_env(Arch.PPC64LE) == {}


def test_count_calibrate_has_a_loop_for_every_record_and_no_other() -> None:
    """The C driver cannot read the records: its ``#if defined(<cc_macro>)`` branches
    must be exactly theirs, or an architecture's calibration stops at ``#error``."""
    branches = re.findall(r"^#(?:el)?if defined\((\w+)\)", CALIBRATE.read_text(), re.M)
    assert sorted(branches) == sorted(r.cc_macro for r in RECORDS)


@pytest.mark.parametrize("arch", list(Arch), ids=Arch.keys())
def test_setup_cpu_reads_the_cpuinfo_keys_of_every_record(arch: Arch) -> None:
    """The harness cannot read the records: the keys its ``/proc/cpuinfo`` parser knows
    must include each architecture's, or its CPU is "unknown" in every result."""
    record = arch.value
    if record.cpuinfo_model is not None:
        assert record.cpuinfo_model in setup_cpu.CPU_MODEL_KEYS
        assert setup_cpu.parse_cpuinfo(f"{record.cpuinfo_model}\t: Some CPU\n") == "Some CPU"
    if record.cpuinfo_flags is not None:
        assert record.cpuinfo_flags in setup_cpu.CPU_FLAG_KEYS
        assert setup_cpu.parse_cpu_flags(f"{record.cpuinfo_flags}\t: aes\n") == ["aes"]


def _parallel_tables(path: Path) -> Iterator[str]:
    """Dict displays of ``path`` keyed by two or more ``Arch`` members, or mapping two or
    more architecture names (short, Debian, QEMU) to names: a table beside the records.
    (A benchmark's goal per architecture, a number, is not what an architecture is.)"""
    names = {n for r in RECORDS for n in (r.key, r.debian_arch, r.qemu_name)}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Dict):
            continue
        members = [k for k in node.keys if isinstance(k, ast.Attribute) and _is_arch(k.value)]
        named = [
            k
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and k.value in names
            and isinstance(v, ast.Constant) and isinstance(v.value, str)
        ]  # fmt: skip
        if len(members) >= 2 or len(named) >= 2:
            yield f"{path.relative_to(REPO)}:{node.lineno}"


def _is_arch(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "Arch"


def test_no_table_per_architecture_remains_beside_the_records() -> None:
    assert len(CONSUMERS) > 100, "the scan lost the package"
    found = [hit for p in CONSUMERS for hit in _parallel_tables(p)]
    assert found == [], "read the architecture's record (archbench/platforms.py) instead"
