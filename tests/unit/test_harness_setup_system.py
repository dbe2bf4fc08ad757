"""The harness's system facts (harness/abh/setup_system.py): os-release, dpkg,
GNUnet's build info and the kernel string."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from abh import setup_system

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
    info = setup_system.parse_os_release(OS_RELEASE_TRIXIE)
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

    assert setup_system.read_os_name([tmp_path / "missing", pretty]) == "Ubuntu 24.04 LTS"
    assert setup_system.read_os_name([no_pretty, pretty]) == "Debian GNU/Linux 12 (bookworm)"
    assert setup_system.read_os_name([tmp_path / "missing"]) == "unknown"


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
    assert setup_system.parse_dpkg_search(text, arch) == package


def test_parse_build_info() -> None:
    text = "cc\tcc\ncflags\t-O2 -Wall -Wextra -Werror\nldflags\t\nno tab here\n"
    assert setup_system.parse_build_info(text) == {
        "cc": "cc",
        "cflags": "-O2 -Wall -Wextra -Werror",
        "ldflags": "",
    }


def test_kernel_string_matches_uname_srv() -> None:
    uname = os.uname_result(("Linux", "host", "6.1.0-28-amd64", "#1 SMP Debian", "x86_64"))
    assert setup_system.kernel_string(uname) == "Linux 6.1.0-28-amd64 #1 SMP Debian"
