"""The symbols image's pure parts: installed versions from dpkg status, its plan, manifest."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from archbench.images import symbols as Y
from archbench.platforms import Arch

STATUS = """Package: libgcrypt20
Status: install ok installed
Architecture: riscv64
Multi-Arch: same
Version: 1.11.0-7+deb13u1
Description: LGPL Crypto library - runtime library
 continuation line: Source: not-a-field

Package: libsodium23
Status: install ok installed
Architecture: riscv64
Source: libsodium
Version: 1.0.18-1+deb13u1

Package: libc6
Status: deinstall ok config-files
Version: 2.36-9

Package: libc6
Status: install ok installed
Source: glibc (2.41-12+deb13u5)
Version: 2.41-12+deb13u5
"""


def test_installed_versions_and_source_packages_are_read() -> None:
    found = Y.installed_packages(STATUS, ("libgcrypt20", "libsodium23", "libc6", "absent"))
    assert found == {
        "libgcrypt20": Y.Installed(
            "libgcrypt20", "1.11.0-7+deb13u1", "libgcrypt20", "1.11.0-7+deb13u1"
        ),
        "libsodium23": Y.Installed(
            "libsodium23", "1.0.18-1+deb13u1", "libsodium", "1.0.18-1+deb13u1"
        ),
        "libc6": Y.Installed("libc6", "2.41-12+deb13u5", "glibc", "2.41-12+deb13u5"),
    }


FIELD = st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=40)


@given(st.lists(st.tuples(st.sampled_from(["libgcrypt20", "libc6", "x"]), FIELD, FIELD, FIELD)))
def test_whatever_the_status_says_only_debian_names_and_versions_come_out(
    stanzas: list[tuple[str, str, str, str]],
) -> None:
    text = "\n\n".join(
        f"Package: {p}\nStatus: install ok installed\nVersion: {v}\nSource: {s}\n{extra}"
        for p, v, s, extra in stanzas
    )
    found = Y.installed_packages(text, ("libgcrypt20", "libc6"))
    for name, got in found.items():
        assert name == got.package
        for value in (got.version, got.source_version):
            assert Y._VERSION.match(value) and not set(value) & set(" '\"$;`\\\n")
        assert Y._NAME.match(got.source)


def test_the_plan_pins_the_installed_versions_and_cross_builds() -> None:
    found = Y.installed_packages(STATUS, ("libgcrypt20", "libsodium23", "libc6"))
    spec = Y.plan_symbols(Arch.RISCV64, "archbench-base/debian-trixie:amd64", "sha256:b", found)
    assert spec is not None
    assert spec.tag.startswith("archbench/symbols:riscv64-") and spec.arch == Arch.AMD64
    df = spec.dockerfile
    assert "crossbuild-essential-riscv64" in df and "dpkg --add-architecture riscv64" in df
    assert "rebuild riscv64 riscv64-linux-gnu /out libgcrypt20 1.11.0-7+deb13u1 libgcrypt20" in df
    assert "rebuild riscv64 riscv64-linux-gnu /out libsodium 1.0.18-1+deb13u1 libsodium23" in df
    assert "dbg riscv64 riscv64-linux-gnu /out libc6-dbg 2.41-12+deb13u5" in df
    native = Y.plan_symbols(Arch.AMD64, "archbench-base/debian-trixie:amd64", "sha256:b", found)
    assert native is not None and "crossbuild-essential" not in native.dockerfile
    # Another version of one library, another base: another image.
    newer = dict(found, libsodium23=Y.Installed("libsodium23", "1.0.18-2", "libsodium", "1.0.18-2"))
    others = {
        Y.plan_symbols(Arch.RISCV64, "t", "sha256:b", newer).content_hash,  # type: ignore[union-attr]
        Y.plan_symbols(Arch.RISCV64, "t", "sha256:c", found).content_hash,  # type: ignore[union-attr]
        spec.content_hash,
    }
    assert len(others) == 3
    assert Y.plan_symbols(Arch.RISCV64, "t", "sha256:b", {}) is None


def test_the_manifest_names_each_files_origin_and_the_failures() -> None:
    meta = Y.manifest(
        "libgcrypt.so.20.5.0\tlibgcrypt20\t1.11.0-7\triscv64\trebuilt\nbad line\n",
        "libsodium\t1.0.18-1\tdpkg-buildpackage failed: x\n",
    )
    assert meta == {
        "files": {
            "libgcrypt.so.20.5.0": {
                "source": "libgcrypt20",
                "version": "1.11.0-7",
                "arch": "riscv64",
                "how": "rebuilt",
            }
        },
        "failed": [
            {"package": "libsodium", "version": "1.0.18-1", "reason": "dpkg-buildpackage failed: x"}
        ],
    }
    json.dumps(meta)
