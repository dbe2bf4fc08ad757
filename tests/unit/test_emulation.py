from __future__ import annotations

import os
import shutil
import struct
import sys
from pathlib import Path

import pytest

from archbench.errors import EmulationError
from archbench.hosts import check_emulation, fix_emulation
from archbench.hosts.emulation import is_static_elf, parse_handler
from archbench.platforms import Arch

HANDLER = """enabled
interpreter /usr/libexec/qemu-binfmt/riscv64-binfmt-P
flags: POF
offset 0
magic 7f454c460201010000000000000000000200f300
"""


def _elf(path: Path, with_interp: bool) -> Path:
    """A minimal 64-bit little-endian ELF header with one program header."""
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    ptype = 3 if with_interp else 1
    phdr = struct.pack("<IIQQQQQQ", ptype, 0, 0, 0, 0, 0, 0, 0)
    path.write_bytes(header + phdr)
    return path


def test_parse_handler() -> None:
    h = parse_handler("qemu-riscv64", HANDLER)
    assert h.enabled and h.flags == "POF"
    assert h.interpreter == Path("/usr/libexec/qemu-binfmt/riscv64-binfmt-P")
    assert not parse_handler("x", "disabled\ninterpreter /q\nflags: \n").enabled


def test_static_detection(tmp_path: Path) -> None:
    assert is_static_elf(_elf(tmp_path / "s", with_interp=False)) is True
    assert is_static_elf(_elf(tmp_path / "d", with_interp=True)) is False
    assert is_static_elf(Path(sys.executable).resolve()) is False  # a dynamic python
    (tmp_path / "txt").write_text("#!/bin/sh\n")
    with pytest.raises(ValueError, match=r"not an ELF"):
        is_static_elf(tmp_path / "txt")


def _binfmt(tmp_path: Path, flags: str, interp: Path, enabled: str = "enabled") -> Path:
    d = tmp_path / "binfmt"
    d.mkdir()
    (d / "status").write_text("enabled\n")
    (d / "qemu-riscv64").write_text(f"{enabled}\ninterpreter {interp}\nflags: {flags}\n")
    return d


def test_check_reports_each_problem_with_its_fix(tmp_path: Path) -> None:
    with pytest.raises(EmulationError, match=r"binfmt_misc is not mounted.*mount -t binfmt_misc"):
        check_emulation(Arch.RISCV64, tmp_path)
    static = _elf(tmp_path / "qemu", with_interp=False)
    d = _binfmt(tmp_path, "PO", static)
    with pytest.raises(EmulationError, match=r"lacks the F .fix binary. flag"):
        check_emulation(Arch.RISCV64, d)
    with pytest.raises(
        EmulationError, match=r"no binfmt_misc handler qemu-aarch64.*qemu-user-static"
    ):
        check_emulation(Arch.ARM64, d)
    shutil.rmtree(d)
    d = _binfmt(tmp_path, "POF", _elf(tmp_path / "dyn", with_interp=True))
    with pytest.raises(EmulationError, match=r"dynamically linked"):
        check_emulation(Arch.RISCV64, d)
    shutil.rmtree(d)
    d = _binfmt(tmp_path, "POF", static, enabled="disabled")
    with pytest.raises(EmulationError, match=r"is disabled"):
        check_emulation(Arch.RISCV64, d)
    shutil.rmtree(d)
    d = _binfmt(tmp_path, "POF", static)
    assert check_emulation(Arch.RISCV64, d).handler.flags == "POF"


@pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/usr/lib/binfmt.d/qemu-riscv64.conf").exists(),
    reason="needs root and qemu-user-static's binfmt.d entries",
)
def test_fix_replaces_a_handler_without_the_f_flag(tmp_path: Path) -> None:
    static = _elf(tmp_path / "qemu", with_interp=False)
    d = _binfmt(tmp_path, "PO", static)
    actions = fix_emulation([Arch.RISCV64], d)
    assert actions == [
        "unregistered unusable qemu-riscv64",
        "registered qemu-riscv64 from /usr/lib/binfmt.d/qemu-riscv64.conf",
    ]
    # The kernel takes "-1" to drop a handler, then the conf line on "register".
    assert (d / "qemu-riscv64").read_text() == "-1\n"
    conf = Path("/usr/lib/binfmt.d/qemu-riscv64.conf").read_text().strip()
    assert (d / "register").read_text() == conf + "\n"
    assert "F" in conf.rsplit(":", 1)[1]
