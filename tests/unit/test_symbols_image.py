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
    # The target's libc6-dev, for dpkg-shlibdeps, whatever the packages' build dependencies.
    assert "libc6-dev:riscv64" in df
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


def test_only_armv7s_libgcrypt_is_built_under_emulation() -> None:
    # One declared place: amd64 builds natively, armv7's libgcrypt under QEMU (its cross
    # build's interworking stubs differ from Debian's), everything else cross.
    assert {(a, p): Y.build_method(a, p) for a in Arch for p, _ in Y.REBUILT} == {
        (a, p): "native"
        if a == Arch.AMD64
        else "emulated"
        if (a, p) == (Arch.ARMV7, "libgcrypt20")
        else "cross"
        for a in Arch
        for p, _ in Y.REBUILT
    }
    rebuilt = {p for p, _ in Y.REBUILT}
    assert all(pkgs <= rebuilt and a != Arch.AMD64 for a, pkgs in Y.EMULATED.items())


def test_armv7s_libgcrypt_is_built_from_its_own_base_and_the_rest_cross() -> None:
    found = Y.installed_packages(STATUS, ("libgcrypt20", "libsodium23", "libc6"))
    amd64, target = "archbench-base/debian-trixie:amd64", "archbench-base/debian-trixie:armv7"
    gcrypt = "RUN build-symbols.sh rebuild armhf arm-linux-gnueabihf /out libgcrypt20 "
    sodium = "RUN build-symbols.sh rebuild armhf arm-linux-gnueabihf /out libsodium "
    cross = Y.plan_symbols(Arch.ARMV7, amd64, "sha256:b", found)
    assert cross is not None and cross.tag.startswith("archbench/symbols:armv7-")
    assert (
        cross.platform == "linux/amd64"
        and f"FROM --platform=linux/amd64 {amd64}\n" in cross.dockerfile
    )
    assert sodium in cross.dockerfile and gcrypt not in cross.dockerfile
    assert "crossbuild-essential-armhf libc6-dev:armhf" in cross.dockerfile
    assert "libc6-dbg" in cross.dockerfile
    # libgcrypt: an image of armv7's own platform over its own base, Debian's native tool
    # chain (no cross tools, no foreign architecture), nothing else in it.
    emulated = Y.plan_emulated(Arch.ARMV7, target, "sha256:t", found)
    assert emulated is not None and emulated.tag.startswith("archbench/symbols-emulated:armv7-")
    df = emulated.dockerfile
    assert emulated.platform == "linux/arm/v7" and emulated.arch == Arch.ARMV7
    assert df.startswith("# archbench symbol files for linux/arm/v7 (built natively under QEMU")
    assert f"FROM --platform=linux/arm/v7 {target}\n" in df and "build-essential" in df
    assert "crossbuild" not in df and "--add-architecture" not in df
    assert gcrypt in df and sodium not in df and "libc6-dbg" not in df
    # The target base is an input: another armv7 base, another image; same base, same one.
    again = Y.plan_emulated(Arch.ARMV7, target, "sha256:t", found)
    other = Y.plan_emulated(Arch.ARMV7, target, "sha256:u", found)
    assert again == emulated and other is not None and other.content_hash != emulated.content_hash
    # Nothing to build under emulation: no image.
    no_gcrypt = {k: v for k, v in found.items() if k != "libgcrypt20"}
    assert Y.plan_emulated(Arch.ARMV7, target, "sha256:t", no_gcrypt) is None
    assert Y.plan_emulated(Arch.RISCV64, target, "sha256:t", found) is None


def test_the_cross_built_image_keeps_its_text_where_nothing_is_emulated() -> None:
    # The template's emulated branch renders nothing for the cross and native images:
    # their Dockerfile (and so their hash, and their cached image) is what it was.
    found = Y.installed_packages(STATUS, ("libgcrypt20", "libsodium23", "libc6"))
    spec = Y.plan_symbols(Arch.RISCV64, "archbench-base/debian-trixie:amd64", "sha256:b", found)
    assert spec is not None
    lines = spec.dockerfile.splitlines()
    assert lines[:2] == [
        "# archbench symbol files for linux/riscv64 (cross-built on linux/amd64)",
        "FROM --platform=linux/amd64 archbench-base/debian-trixie:amd64",
    ]
    assert "emulat" not in spec.dockerfile.lower()


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
