"""Symbol files for stripped libraries: used only when their code is the installed code.

The libraries are compiled here with the host's gcc and stripped as Debian's dh_strip
does (``strip --strip-unneeded``): the unstripped build is the symbol file, the stripped
one the installed library, as in the counting layer (``docs/counting.md``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from abh.suites import count_symbols as S
from hypothesis import given, settings
from hypothesis import strategies as st

SOURCE = """
static unsigned long __attribute__((noinline)) field_mul(unsigned long a, unsigned long b)
{
    unsigned long r = 0;
    for (int i = 0; i < 64; i++)
        r ^= (b >> i & 1) ? a << i : 0;
    return r * %(k)d;
}
unsigned long api_mul(unsigned long a, unsigned long b) { return field_mul(a, b) + 1; }
"""

pytestmark = pytest.mark.skipif(
    shutil.which("gcc") is None or shutil.which("strip") is None, reason="needs gcc and binutils"
)


def build(folder: Path, k: int = 3, flags: tuple[str, ...] = ("-O2",)) -> Path:
    """An unstripped shared library (``-g``, a build-id), its internal ``field_mul``
    multiplying by ``k``."""
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "lib.c"
    src.write_text(SOURCE % {"k": k}, encoding="utf-8")
    out = folder / "libdemo.so.1"
    subprocess.run(
        ["gcc", *flags, "-g", "-fPIC", "-shared", "-Wl,--build-id=sha1", "-o", out, src],
        check=True,
    )
    return out


def stripped(lib: Path, folder: Path) -> Path:
    """``lib`` stripped as dh_strip does: the installed library."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / lib.name
    subprocess.run(["strip", "--strip-unneeded", "-o", out, lib], check=True)
    return out


def elf(path: Path) -> S.ElfLayout:
    return S.parse_elf(path.read_bytes(), path)


def internal_address(unstripped: Path) -> int:
    syms = S.read_elf(unstripped)
    return syms.starts[syms.names.index("field_mul")]


def symbolize(installed: Path, store: S.SymbolStore | None, vaddr: int) -> tuple[str, str]:
    """Locate ELF address ``vaddr`` of ``installed`` mapped whole at 0x10000 (guest base 0)."""
    size = installed.stat().st_size
    maps = [S.MapEntry(0x10000, 0x10000 + size, 0, str(installed))]
    reader = S.read_elf if store is None else store.reader
    loads = S.read_elf(installed).loads
    offset = next(o + vaddr - v for o, v, n in loads if v <= vaddr < v + n)
    return S.Symbolizer(maps, 0, reader=reader).locate(0x10000 + offset)


def test_a_rebuild_with_the_same_code_names_the_internal_function(tmp_path: Path) -> None:
    unstripped = build(tmp_path / "build")
    installed = stripped(unstripped, tmp_path / "usr")
    at = internal_address(unstripped)
    # Stripped: the internal function has no name of its own (today's fallback).
    library, function = symbolize(installed, None, at)
    assert library == "libdemo.so.1" and function.startswith(S.NO_SYMBOL)
    store_dir = tmp_path / "symbols"
    store_dir.mkdir()
    shutil.copy(unstripped, store_dir / installed.name)
    origin = {"source": "demo", "version": "1.0-1", "arch": "amd64", "release": "trixie"}
    (store_dir / S.SYMBOLS_MANIFEST).write_text(
        json.dumps({"files": {installed.name: origin}}), encoding="utf-8"
    )
    store = S.SymbolStore(store_dir)
    assert symbolize(installed, store, at) == ("libdemo.so.1", "field_mul")
    check = store.provenance()["libdemo.so.1"]
    assert check["status"] == "used" and check["match"] == "code"
    assert check["file"] == "libdemo.so.1" and check["origin"] == origin
    assert S.code_digest(elf(installed)) == S.code_digest(elf(unstripped)) is not None


@pytest.mark.parametrize(
    ("k", "flags", "reason"),
    [
        (5, ("-O2",), "its code differs from the installed library's"),
        (3, ("-O0",), "its code sections have other addresses or sizes"),
    ],
)
def test_a_rebuild_whose_code_differs_is_refused_and_the_fallback_kept(
    tmp_path: Path, k: int, flags: tuple[str, ...], reason: str
) -> None:
    installed = stripped(build(tmp_path / "a"), tmp_path / "usr")
    other = build(tmp_path / "b", k, flags)
    store_dir = tmp_path / "symbols"
    store_dir.mkdir()
    shutil.copy(other, store_dir / installed.name)
    store = S.SymbolStore(store_dir)
    at = internal_address(build(tmp_path / "c"))
    assert symbolize(installed, store, at) == symbolize(installed, None, at)
    assert symbolize(installed, store, at)[1].startswith(S.NO_SYMBOL)
    check = store.provenance()["libdemo.so.1"]
    assert check["status"] == "refused"
    assert reason in str(check["reason"]), check


def test_a_separate_debug_file_is_matched_by_build_id(tmp_path: Path) -> None:
    unstripped = build(tmp_path / "build")
    installed = stripped(unstripped, tmp_path / "usr")
    bid = S.build_id(elf(installed))
    assert bid is not None and bid == S.build_id(elf(unstripped))
    store_dir = tmp_path / "symbols"
    debug = store_dir / ".build-id" / bid[:2] / f"{bid[2:]}.debug"
    debug.parent.mkdir(parents=True)
    subprocess.run(["objcopy", "--only-keep-debug", unstripped, debug], check=True)
    # A debug file carries no code: the digest cannot be compared, the build-id is.
    assert S.code_digest(elf(debug)) is None
    store = S.SymbolStore(store_dir)
    assert symbolize(installed, store, internal_address(unstripped))[1] == "field_mul"
    check = store.provenance()["libdemo.so.1"]
    assert check["status"] == "used" and check["match"] == "build-id"
    assert check["file"] == f".build-id/{bid[:2]}/{bid[2:]}.debug"


def test_a_debug_file_of_another_build_is_refused(tmp_path: Path) -> None:
    installed = stripped(build(tmp_path / "a"), tmp_path / "usr")
    bid = S.build_id(elf(installed))
    assert bid is not None
    other = build(tmp_path / "b", 5)
    store_dir = tmp_path / "symbols"
    debug = store_dir / ".build-id" / bid[:2] / f"{bid[2:]}.debug"
    debug.parent.mkdir(parents=True)
    subprocess.run(["objcopy", "--only-keep-debug", other, debug], check=True)
    store = S.SymbolStore(store_dir)
    assert S.read_elf(installed).table == "dynsym"
    syms = store.reader(installed)
    assert syms.table == "dynsym"
    check = store.provenance()["libdemo.so.1"]
    assert check["status"] == "refused" and "build-id" in str(check["reason"])


def test_a_symbol_file_without_symtab_or_unreadable_is_refused(tmp_path: Path) -> None:
    unstripped = build(tmp_path / "build")
    installed = stripped(unstripped, tmp_path / "usr")
    store_dir = tmp_path / "symbols"
    store_dir.mkdir()
    shutil.copy(installed, store_dir / installed.name)
    store = S.SymbolStore(store_dir)
    assert store.reader(installed).table == "dynsym"
    assert store.provenance()["libdemo.so.1"]["reason"] == "it has no .symtab"
    (store_dir / installed.name).write_bytes(b"\x7fELF" + b"\0" * 10)
    store = S.SymbolStore(store_dir)
    assert store.reader(installed).table == "dynsym"
    check = store.provenance()["libdemo.so.1"]
    assert check["status"] == "refused" and str(check["reason"]).startswith("unreadable")


def test_no_store_or_no_candidate_records_nothing(tmp_path: Path) -> None:
    installed = stripped(build(tmp_path / "build"), tmp_path / "usr")
    store = S.SymbolStore(tmp_path / "absent")
    assert store.reader(installed).table == "dynsym"
    assert store.provenance() == {}


@functools.cache
def demo_pair() -> tuple[bytes, bytes]:
    """(installed, unstripped) bytes of the demo library, built once per session."""
    with tempfile.TemporaryDirectory(prefix="archbench-symbols-") as tmp:
        unstripped = build(Path(tmp) / "build")
        installed = stripped(unstripped, Path(tmp) / "usr")
        return installed.read_bytes(), unstripped.read_bytes()


@settings(max_examples=150)
@given(st.data())
def test_one_flipped_code_byte_is_refused(data: st.DataObject) -> None:
    installed_bytes, unstripped_bytes = demo_pair()
    candidate = S.parse_elf(unstripped_bytes)
    text = [s for s in candidate.sections if s.flags & 0x4 and s.size and s.kind != 8]
    section = data.draw(st.sampled_from(text))
    at = data.draw(st.integers(section.offset, section.offset + section.size - 1))
    flip = data.draw(st.integers(1, 255))
    mutated = bytearray(unstripped_bytes)
    mutated[at] ^= flip
    check = S.check_symbol_file(
        S.parse_elf(installed_bytes), S.parse_elf(bytes(mutated)), "libdemo.so.1", "x"
    )
    assert check.status == "refused" and "code differs" in check.reason


@settings(max_examples=300)
@given(st.data())
def test_damaged_elf_files_raise_value_error_or_parse(data: st.DataObject) -> None:
    """Any damage to a symbol file's headers is a ValueError or a file that parses; its
    check then refuses or uses it, never crashes."""
    installed_bytes, unstripped_bytes = demo_pair()
    mutated = bytearray(unstripped_bytes)
    for _ in range(data.draw(st.integers(1, 8))):
        # Headers and tables sit at the start (ELF and program headers) and the end
        # (section headers, symbol and string tables): damage there.
        where = data.draw(
            st.one_of(st.integers(0, 255), st.integers(len(mutated) - 4096, len(mutated) - 1))
        )
        mutated[where] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(mutated)))
    blob = bytes(mutated[: cut or len(mutated)])
    try:
        candidate = S.parse_elf(blob)
    except ValueError:
        return
    installed = S.parse_elf(installed_bytes)
    check = S.check_symbol_file(installed, candidate, "libdemo.so.1", "x")
    assert check.status in ("used", "refused")
    if check.status == "used":
        # Its code is the installed code, or (code unreadable) it is the same build.
        assert S.code_digest(candidate) == S.code_digest(installed) or (
            S.build_id(candidate) == S.build_id(installed) is not None
        )
    with contextlib.suppress(ValueError):
        S.symbols_of(candidate)
    S.build_id(candidate)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_are_not_elf_or_parse(blob: bytes) -> None:
    try:
        layout = S.parse_elf(b"\x7fELF" + blob)
    except ValueError:
        return
    S.build_id(layout)
    S.code_digest(layout)
