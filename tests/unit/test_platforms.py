from __future__ import annotations

import pytest

from archbench.platforms import Arch, needs_emulation


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
    assert arch.qemu_name == qemu
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
