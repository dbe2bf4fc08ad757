"""The harness's CPU facts (harness/abh/setup_cpu.py): /proc/cpuinfo, CPU flags,
cgroup limits, affinity and load, read from canned files."""

from __future__ import annotations

from pathlib import Path

import pytest
from abh import setup_cpu

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
    assert setup_cpu.parse_cpuinfo(text) == model


def test_read_cpu_model_without_proc(tmp_path: Path) -> None:
    assert setup_cpu.read_cpu_model(tmp_path / "missing") == "unknown"


# --------------------------------------------------------------------------
# CPU flags, cgroup limits, affinity, load

CPUINFO_RISCV64_NEW = """\
processor\t: 0
hart\t\t: 2
isa\t\t: rv64imafdcv_zicbom_zicboz_zicntr_zicsr_zifencei_zihintpause_zihpm_zba_zbb_zbs
mmu\t\t: sv39
uarch\t\t: thead,c908

"""


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        (CPUINFO_X86, ["fpu", "vme", "de", "pse"]),
        (
            CPUINFO_ARM64,
            ["fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "cpuid"],
        ),
        (
            CPUINFO_ARMV7,
            [
                "half",
                "thumb",
                "fastmult",
                "vfp",
                "edsp",
                "neon",
                "vfpv3",
                "tls",
                "vfpv4",
                "idiva",
                "idivt",
            ],
        ),
        (
            CPUINFO_RISCV64,
            ["rv64imafdc", "zicntr", "zicsr", "zifencei", "zihpm", "zba", "zbb"],
        ),
        (
            CPUINFO_RISCV64_NEW,
            [
                "rv64imafdcv",
                "zicbom",
                "zicboz",
                "zicntr",
                "zicsr",
                "zifencei",
                "zihintpause",
                "zihpm",
                "zba",
                "zbb",
                "zbs",
            ],
        ),
        (CPUINFO_PPC64LE, []),
        ("", []),
        # Only the first CPU's line counts, and "vmx flags" is not "flags".
        ("vmx flags\t: ept vpid\nflags\t: sse sse2\n\nflags\t: sse\n", ["sse", "sse2"]),
    ],
    ids=["x86", "arm64", "armv7", "riscv64", "riscv64-new", "ppc64le", "empty", "first-cpu"],
)
def test_parse_cpu_flags(text: str, flags: list[str]) -> None:
    assert setup_cpu.parse_cpu_flags(text) == flags


def test_read_cpu_flags_without_proc(tmp_path: Path) -> None:
    assert setup_cpu.read_cpu_flags(tmp_path / "missing") == []


def test_parse_self_cgroup() -> None:
    v1 = "12:cpuset:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n"
    assert setup_cpu.parse_self_cgroup(v1) == {
        "cpuset": "/docker/abc",
        "cpu": "/docker/abc",
        "cpuacct": "/docker/abc",
        "name=systemd": "/docker/abc",
        "": "/",
    }
    assert setup_cpu.parse_self_cgroup("0::/user.slice/session-2.scope\ngarbage\n") == {
        "": "/user.slice/session-2.scope"
    }


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("150000 100000", (150000, 100000)),
        ("max 100000", (None, 100000)),
        ("max", (None, None)),
        ("", (None, None)),
        ("x y", (None, None)),
    ],
)
def test_parse_cpu_max(text: str, parsed: tuple[int | None, int | None]) -> None:
    assert setup_cpu.parse_cpu_max(text) == parsed


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def test_cpu_limits_cgroup_v2_container(tmp_path: Path) -> None:
    # docker run --cpus 1.5 --cpuset-cpus 0-1 on a cgroup v2 host: the
    # container's cgroup namespace makes its cgroup the root.
    _tree(tmp_path, {"fs/cpu.max": "150000 100000\n", "fs/cpuset.cpus.effective": "0-1\n"})
    _tree(tmp_path, {"self": "0::/\n"})
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "self") == {
        "cgroup": "v2",
        "quota_us": 150000,
        "period_us": 100000,
        "cpus": 1.5,
        "cpuset": "0-1",
    }


def test_cpu_limits_cgroup_v2_prefers_own_cgroup_and_reads_no_limit(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "fs/cpuset.cpus.effective": "0-63\n",
            "fs/user.slice/s.scope/cpu.max": "max 100000\n",
            "fs/user.slice/s.scope/cpuset.cpus.effective": "2,4-5\n",
            "self": "0::/user.slice/s.scope\n",
        },
    )
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "self") == {
        "cgroup": "v2",
        "quota_us": None,
        "period_us": 100000,
        "cpus": None,
        "cpuset": "2,4-5",
    }


def test_cpu_limits_cgroup_v1_container(tmp_path: Path) -> None:
    # Docker on cgroup v1 bind-mounts the container's cgroups at the
    # controller roots; /proc/self/cgroup still names /docker/<id>.
    _tree(
        tmp_path,
        {
            "fs/cpu,cpuacct/cpu.cfs_quota_us": "50000\n",
            "fs/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            "fs/cpuset/cpuset.cpus": "3\n",
            "self": "4:cpu,cpuacct:/docker/abc\n3:cpuset:/docker/abc\n0::/docker/abc\n",
        },
    )
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "self") == {
        "cgroup": "v1",
        "quota_us": 50000,
        "period_us": 100000,
        "cpus": 0.5,
        "cpuset": "3",
    }


def test_cpu_limits_cgroup_v1_unlimited_host(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "fs/cpu/cpu.cfs_quota_us": "-1\n",
            "fs/cpu/cpu.cfs_period_us": "100000\n",
            "fs/cpuset/cpuset.cpus": "0-3\n",
            "fs/cpuset/cpuset.effective_cpus": "0-1\n",
        },
    )
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "missing") == {
        "cgroup": "v1",
        "quota_us": None,
        "period_us": 100000,
        "cpus": None,
        "cpuset": "0-1",
    }


def test_cpu_limits_none_without_cgroups(tmp_path: Path) -> None:
    (tmp_path / "fs").mkdir()
    assert setup_cpu.read_cpu_limits(tmp_path / "fs", tmp_path / "missing") is None
    assert setup_cpu.read_cpu_limits(tmp_path / "nothing", tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("text", "load"),
    [
        ("1.30 0.95 0.65 4/127 15733\n", [1.3, 0.95, 0.65]),
        ("0.00 0.01 0.05 1/1 1", [0.0, 0.01, 0.05]),
        ("", None),
        ("1.0 2.0", None),
        ("a b c 1/1 1", None),
        ("nan 1 1 1/1 1", None),
    ],
)
def test_parse_loadavg(text: str, load: list[float] | None) -> None:
    assert setup_cpu.parse_loadavg(text) == load


def test_read_load_average_and_affinity_on_this_host(tmp_path: Path) -> None:
    assert setup_cpu.read_load_average(tmp_path / "missing") is None
    load = setup_cpu.read_load_average()
    assert load is None or (len(load) == 3 and all(x >= 0 for x in load))
    affinity = setup_cpu.read_cpu_affinity()
    assert affinity is None or (affinity == sorted(affinity) and len(affinity) >= 1)
