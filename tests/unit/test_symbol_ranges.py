"""Function ranges of hand-written assembly: sizeless and untyped symbols (issue 37, item 4).

libgcrypt's amd64 SHA-2/AES code has ``.type`` but no ``.size`` (``st_size`` 0) and its
``_gcry_mpih_*`` no ``.type`` at all (``STT_NOTYPE``): in a full ``.symtab`` they reach to
the next function symbol or the section's end (:func:`count_symbols.function_ranges`);
in ``.dynsym`` they name nothing, and padding after a sized function stays unnamed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from abh.suites import count_symbols as S
from hypothesis import given
from hypothesis import strategies as st

TEXT = 1
OTHER = 2
BOUNDS = {TEXT: (0x1000, 0x2000), OTHER: (0x3000, 0x3100)}


def ranges(symbols: list[S.FunctionSymbol]) -> dict[str, tuple[int, int]]:
    """``{name: (start, end)}`` of :func:`S.function_ranges` over ``BOUNDS``."""
    return {n: (a, a + size) for n, a, size in S.function_ranges(symbols, BOUNDS)}


def test_a_sizeless_function_reaches_to_the_next_symbol() -> None:
    got = ranges(
        [
            S.FunctionSymbol("c_func", 0x1000, 0x40, TEXT),
            S.FunctionSymbol("sha512_transform_avx2", 0x1080, 0, TEXT),
            S.FunctionSymbol("_gcry_mpih_add_n", 0x1400, 0, TEXT, typed=False),
            S.FunctionSymbol("after", 0x1500, 0x10, TEXT),
        ]
    )
    assert got == {
        "c_func": (0x1000, 0x1040),
        "sha512_transform_avx2": (0x1080, 0x1400),
        "_gcry_mpih_add_n": (0x1400, 0x1500),
        "after": (0x1500, 0x1510),
    }


def test_the_last_sizeless_function_ends_at_its_sections_end() -> None:
    got = ranges(
        [
            S.FunctionSymbol("last", 0x1F00, 0, TEXT),
            # Another section's symbol does not end it, nor does it reach into that section.
            S.FunctionSymbol("init", 0x3000, 0, OTHER),
        ]
    )
    assert got == {"last": (0x1F00, 0x2000), "init": (0x3000, 0x3100)}


def test_a_sizeless_symbol_outside_a_known_code_section_names_nothing() -> None:
    assert ranges([S.FunctionSymbol("x", 0x2800, 0, TEXT), S.FunctionSymbol("y", 0x10, 0, 9)]) == {}


def test_a_sizeless_label_inside_a_sized_function_is_not_a_function() -> None:
    got = ranges(
        [
            S.FunctionSymbol("salsa20", 0x1000, 0x200, TEXT),
            S.FunctionSymbol("mainloop", 0x1100, 0, TEXT, typed=False),
            S.FunctionSymbol("next", 0x1300, 0x10, TEXT),
        ]
    )
    assert got == {"salsa20": (0x1000, 0x1200), "next": (0x1300, 0x1310)}


def test_a_sizeless_alias_takes_the_sized_range_and_the_typed_name_comes_first() -> None:
    out = S.function_ranges(
        [
            S.FunctionSymbol("_aes_encrypt_core", 0x1000, 337, TEXT, typed=False),
            S.FunctionSymbol("_gcry_aes_ssse3_encrypt_core", 0x1000, 0, TEXT),
        ],
        BOUNDS,
    )
    syms = S.functions_from(out)
    assert syms.names == ("_gcry_aes_ssse3_encrypt_core",)
    assert (syms.starts, syms.ends) == ((0x1000,), (0x1000 + 337,))
    assert syms.aliases["_aes_encrypt_core"] == "_gcry_aes_ssse3_encrypt_core"


@st.composite
def section_symbols(draw: st.DrawFn) -> list[S.FunctionSymbol]:
    """Symbols of ``TEXT`` (and a few of ``OTHER``): sized ones and sizeless ones, some at a
    sized one's start, inside it, or in gaps; addresses may repeat."""
    out = []
    for k in range(draw(st.integers(0, 14))):
        section = draw(st.sampled_from([TEXT, TEXT, TEXT, OTHER]))
        lo, hi = BOUNDS[section]
        start = draw(st.integers(lo, hi - 1))
        size = draw(st.sampled_from([0, 0, draw(st.integers(1, hi - start))]))
        out.append(S.FunctionSymbol(f"s{k}", start, size, section, draw(st.booleans())))
    return out


@given(section_symbols())
def test_ranges_follow_the_rule(symbols: list[S.FunctionSymbol]) -> None:
    out = S.function_ranges(symbols, BOUNDS)
    got = {n: (a, a + size) for n, a, size in out}
    assert len(got) == len(out)
    sized = [(s.start, s.start + s.size) for s in symbols if s.size > 0]
    kept_starts = {s.start for s in symbols if s.size > 0} | {
        s.start for s in symbols if s.name in got
    }
    for s in symbols:
        if s.size > 0:
            # Sized symbols are taken as they are.
            assert got[s.name] == (s.start, s.start + s.size)
            continue
        same = [r for r in sized if r[0] == s.start]
        holder = [r for r in sized if r[0] < s.start < r[1]]
        if same:
            assert got[s.name][0] == s.start and got[s.name] in same
        elif holder:
            assert s.name not in got
        else:
            lo, hi = BOUNDS[s.section]
            later = [
                t.start
                for t in symbols
                if t.section == s.section and t.start > s.start and t.start in kept_starts
            ]
            assert got[s.name] == (s.start, min([hi, *later]))
            assert lo <= s.start < got[s.name][1] <= hi


@given(section_symbols())
def test_no_sizeless_range_swallows_another_symbols_start(
    symbols: list[S.FunctionSymbol],
) -> None:
    out = S.function_ranges(symbols, BOUNDS)
    bare = {n for n, a, size in out if any(s.name == n and s.size == 0 for s in symbols)}
    sized = [(s.start, s.start + s.size) for s in symbols if s.size > 0]
    starts = {a for _, a, _ in out}
    for name, a, size in out:
        if name in bare and not any(r[0] == a for r in sized):
            assert not any(a < b < a + size for b in starts)


needs_gcc = pytest.mark.skipif(
    shutil.which("gcc") is None or shutil.which("strip") is None, reason="needs gcc and binutils"
)

# amd64 (and any GNU as target): a typed function without .size, an untyped label as
# libgcrypt's mpi/amd64/*.S have, an assembler-local label inside it, and an exported
# sized C function after them.
ASM = """
__asm__(
    ".text\\n"
    ".p2align 4\\n"
    ".type asm_nosize,@function\\n"
    "asm_nosize:\\n"
    "  nop\\n  nop\\n  nop\\n"
    "._loop:\\n"
    "  nop\\n"
    "  ret\\n"
    ".p2align 4\\n"
    ".globl asm_untyped\\n"
    "asm_untyped:\\n"
    "  nop\\n"
    "  ret\\n"
);
int exported(int x) { return x * 3 + 1; }
"""


@pytest.fixture(scope="module")
def asm_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("asm")
    src = folder / "asm.c"
    src.write_text(ASM, encoding="utf-8")
    out = folder / "libasm.so.1"
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-o", out, src], check=True)
    return out


@needs_gcc
def test_an_unstripped_librarys_assembly_is_named(asm_library: Path) -> None:
    syms = S.read_elf(asm_library)
    assert syms.table == "symtab"
    k = syms.names.index("asm_nosize")
    # It reaches to asm_untyped (the local ._loop label does not end it).
    assert syms.ends[k] == syms.starts[syms.names.index("asm_untyped")]
    assert syms.function(syms.starts[k] + 4) == "asm_nosize"
    assert "._loop" not in syms.aliases
    # The untyped one ends at the next symbol of its section or the section's end, never
    # in the sized C function that follows.
    u = syms.names.index("asm_untyped")
    e = syms.names.index("exported")
    assert syms.starts[u] < syms.ends[u]
    assert syms.ends[u] <= syms.starts[e] or syms.starts[e] < syms.starts[u]


@needs_gcc
def test_a_stripped_librarys_sizeless_exports_name_nothing(
    asm_library: Path, tmp_path: Path
) -> None:
    installed = tmp_path / asm_library.name
    subprocess.run(["strip", "--strip-unneeded", "-o", installed, asm_library], check=True)
    syms = S.read_elf(installed)
    assert syms.table == "dynsym"
    # asm_untyped is exported but has neither a type nor a size: no range; the sized
    # export keeps its own.
    assert "asm_untyped" not in syms.aliases
    full = S.read_elf(asm_library)
    at = full.starts[full.names.index("asm_untyped")]
    assert syms.function(at) is None
    assert "exported" in syms.names


def test_plt_stubs_are_no_symbol_not_after_the_init_section() -> None:
    # .init [0x1000, 0x1017) with _init (sizeless), .plt [0x1020, 0x1100) without
    # symbols, .text [0x1100, 0x2000) with a sized function and padding after it.
    code = {10: (0x1000, 0x1017), 11: (0x1020, 0x1100), 13: (0x1100, 0x2000)}
    ranges = S.function_ranges(
        [S.FunctionSymbol("_init", 0x1000, 0, 10), S.FunctionSymbol("f", 0x1100, 0x30, 13)],
        code,
    )
    syms = S.functions_from(ranges, code=code.values())
    assert syms.function(0x1010) == "_init"
    assert syms.function(0x1040) is None
    assert syms.nearest_before(0x1040) is None  # a PLT stub: "(no symbol)"
    assert syms.function(0x1138) is None
    assert syms.nearest_before(0x1138) == "f"  # padding or internal code after f
    # Without section bounds (as before), any function before it.
    assert S.functions_from(ranges).nearest_before(0x1040) == "_init"


@given(section_symbols(), st.integers(0x1000, 0x3100))
def test_an_address_is_never_said_after_a_function_of_another_section(
    symbols: list[S.FunctionSymbol], at: int
) -> None:
    syms = S.functions_from(S.function_ranges(symbols, BOUNDS), code=BOUNDS.values())
    before = syms.nearest_before(at)
    inside = [b for b in BOUNDS.values() if b[0] <= at < b[1]]
    if before is not None and inside:
        start = syms.starts[syms.names.index(before)]
        assert inside[0][0] <= start <= at


@needs_gcc
def test_init_is_named_and_a_stripped_librarys_sections_are_known(asm_library: Path) -> None:
    elf = S.parse_elf(asm_library.read_bytes(), asm_library)
    init = next(s for s in elf.sections if s.name == ".init")
    syms = S.read_elf(asm_library)
    # crti's _init has no size: it reaches to .init's end, not into .plt.
    assert syms.function(init.addr) == "_init"
    k = syms.names.index("_init")
    assert syms.ends[k] == init.addr + init.size
    assert (init.addr, init.addr + init.size) in syms.code


@needs_gcc
def test_a_file_without_symbol_tables_names_nothing_and_knows_its_code(tmp_path: Path) -> None:
    src = tmp_path / "asm.c"
    src.write_text(ASM, encoding="utf-8")
    obj = tmp_path / "asm.o"
    subprocess.run(["gcc", "-O2", "-c", "-o", obj, src], check=True)
    subprocess.run(["strip", "--strip-all", obj], check=True)
    syms = S.read_elf(obj)
    assert syms.table == "none" and syms.names == ()
    text = next(s for s in S.parse_elf(obj.read_bytes()).sections if s.name == ".text")
    assert syms.code == ((text.addr, text.addr + text.size),)
    assert syms.function(text.addr) is None and syms.nearest_before(text.addr) is None
