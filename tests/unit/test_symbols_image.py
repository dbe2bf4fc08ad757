"""The symbols image's pure parts: installed versions from dpkg status, its plan, manifest."""

from __future__ import annotations

import json

import pytest
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


def test_armv7_builds_libgcrypt_in_a_stage_of_its_own_base_and_the_rest_cross() -> None:
    found = Y.installed_packages(STATUS, ("libgcrypt20", "libsodium23", "libc6"))
    amd64, target = "archbench-base/debian-trixie:amd64", "archbench-base/debian-trixie:armv7"
    spec = Y.plan_symbols(Arch.ARMV7, amd64, "sha256:b", found, (target, "sha256:t"))
    assert (
        spec is not None
        and spec.arch == Arch.AMD64
        and spec.tag.startswith("archbench/symbols:armv7-")
    )
    df = spec.dockerfile
    stage, _, main = df.partition(f"FROM --platform=linux/amd64 {amd64}\n")
    assert stage.startswith("# linux/arm/v7 natively under QEMU")
    assert f"FROM --platform=linux/arm/v7 {target} AS emulated\n" in stage
    assert (
        "build-essential" in stage
        and "crossbuild" not in stage
        and "--add-architecture" not in stage
    )
    gcrypt = "RUN build-symbols.sh rebuild armhf arm-linux-gnueabihf /out libgcrypt20 "
    sodium = "RUN build-symbols.sh rebuild armhf arm-linux-gnueabihf /out libsodium "
    assert gcrypt in stage and sodium not in stage
    assert sodium in main and gcrypt not in main and "crossbuild-essential-armhf" in main
    assert "dbg armhf arm-linux-gnueabihf /out libc6-dbg" in main
    # The emulated stage's files come in last, its .tsv records appended to the main /out's.
    copy = main.index("COPY --from=emulated /out/ /emulated/")
    assert copy > main.index(sodium) and copy > main.index("libc6-dbg")
    assert 'cat "$f" >> "/out/$f"' in main[copy:] and "rm -rf /emulated" in main[copy:]
    # The target base is an input: another armv7 base, another image.
    other = Y.plan_symbols(Arch.ARMV7, amd64, "sha256:b", found, (target, "sha256:u"))
    assert other is not None and other.content_hash != spec.content_hash
    with pytest.raises(ValueError, match="armv7: libgcrypt20 is built under emulation"):
        Y.plan_symbols(Arch.ARMV7, amd64, "sha256:b", found)
    # Without libgcrypt installed nothing is emulated: no stage, no target base needed.
    no_gcrypt = {k: v for k, v in found.items() if k != "libgcrypt20"}
    cross_only = Y.plan_symbols(Arch.ARMV7, amd64, "sha256:b", no_gcrypt)
    assert cross_only is not None and "AS emulated" not in cross_only.dockerfile


def test_a_cross_built_architecture_ignores_the_target_base() -> None:
    # The other architectures' images keep their hash (and their cached image) whatever
    # target base is passed: only a build from it makes it an input.
    found = Y.installed_packages(STATUS, ("libgcrypt20", "libsodium23", "libc6"))
    for arch in (Arch.AMD64, Arch.ARM64, Arch.RISCV64, Arch.PPC64LE):
        plain = Y.plan_symbols(arch, "t", "sha256:b", found)
        given_base = Y.plan_symbols(arch, "t", "sha256:b", found, (f"base:{arch.key}", "sha256:t"))
        assert plain is not None and given_base is not None
        assert plain == given_base and "AS emulated" not in plain.dockerfile


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
