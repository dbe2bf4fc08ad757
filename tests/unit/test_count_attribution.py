"""Where the instructions went: the plugin's ``tb``/``map`` lines, ELF symbols, attribution."""

from __future__ import annotations

import ctypes.util
import dataclasses
import math
import subprocess
from pathlib import Path

import pytest
from abh.suites import blindsig_counting
from abh.suites import count_symbols as S
from abh.suites import counting as C
from helpers import counted, result, row
from hypothesis import given
from hypothesis import strategies as st

from archbench.analysis import RowComparison, function_changes, library_stem
from archbench.report import compare_tables, instructions, page
from archbench.report.compare_tables import function_lines
from archbench.result import FunctionCount, Result, Row, RowKey

LIB = "/usr/lib/libfoo.so.1"
BASE = 0x4000000000


@st.composite
def functions(draw: st.DrawFn) -> list[tuple[str, int, int]]:
    """Disjoint (name, start, size) ranges in ascending order, with gaps."""
    out = []
    at = draw(st.integers(0x1000, 0x10000))
    for k in range(draw(st.integers(1, 12))):
        at += draw(st.integers(0, 64))
        size = draw(st.integers(1, 300))
        out.append((f"f{k}", at, size))
        at += size
    return out


def symbolizer(funcs: list[tuple[str, int, int]], guest_base: int = 0) -> S.Symbolizer:
    """A library mapped at guest BASE, file offset = ELF vaddr (one PT_LOAD from 0)."""
    syms = S.functions_from(funcs, [(0, 0, 1 << 20)], "symtab")
    maps = [S.MapEntry(BASE + guest_base, BASE + guest_base + (1 << 20), 0, LIB)]
    return S.Symbolizer(maps, guest_base, reader=lambda _: syms)


@given(functions(), st.data(), st.sampled_from([0, 0x10000, 0x7F0000000000]))
def test_every_address_of_a_function_maps_to_it(
    funcs: list[tuple[str, int, int]], data: st.DataObject, guest_base: int
) -> None:
    sym = symbolizer(funcs, guest_base)
    name, start, size = data.draw(st.sampled_from(funcs))
    addr = data.draw(st.integers(start, start + size - 1))
    assert sym.locate(BASE + addr) == ("libfoo.so.1", name)


@given(functions(), st.integers(0, (1 << 20) - 1))
def test_addresses_outside_every_function_map_to_the_library(
    funcs: list[tuple[str, int, int]], addr: int
) -> None:
    inside = [f for f, s, n in funcs if s <= addr < s + n]
    before = [f for f, s, _ in funcs if s <= addr]
    if inside:
        expected = inside[0]
    elif before:
        expected = f"{S.NO_SYMBOL} after {before[-1]}"
    else:
        expected = S.NO_SYMBOL
    assert symbolizer(funcs).locate(BASE + addr) == ("libfoo.so.1", expected)


@given(functions(), st.integers(0, BASE - 1) | st.integers(BASE + (1 << 20), 2**64 - 1))
def test_addresses_outside_every_mapping_are_unknown(
    funcs: list[tuple[str, int, int]], addr: int
) -> None:
    assert symbolizer(funcs).locate(addr) == (S.UNKNOWN, S.UNKNOWN)


@given(
    st.lists(
        st.tuples(st.integers(0, 2000), st.integers(1, 3000)).map(lambda t: (f"f{t[0]}", *t)),
        max_size=30,
    ),
    st.integers(0, 6000),
)
def test_overlapping_ranges_find_the_innermost_holder_or_none(
    funcs: list[tuple[str, int, int]], addr: int
) -> None:
    syms = S.functions_from(funcs)
    holders = [(s, n) for n, s, size in funcs if s <= addr < s + size]
    found = syms.function(addr)
    if not holders:
        assert found is None
    else:
        # The latest-starting range that holds it (first name kept for a repeated range).
        start = max(s for s, _ in holders)
        assert found in {n for s, n in holders if s == start}


def test_file_offsets_go_through_the_load_segments() -> None:
    # The text segment at file offset 0x1000 is loaded at ELF vaddr 0x11000
    # (a lld-style layout): offset 0x1234 is vaddr 0x11234.
    syms = S.functions_from([("g", 0x11200, 0x100)], [(0, 0, 0x800), (0x1000, 0x11000, 0x2000)])
    maps = [S.MapEntry(0x5000, 0x6000, 0x1000, "/lib/libg.so")]
    sym = S.Symbolizer(maps, 0, reader=lambda _: syms)
    assert sym.locate(0x5234) == ("libg.so", "g")
    assert sym.locate(0x5100) == ("libg.so", S.NO_SYMBOL)
    assert sym.locate(0x5400) == ("libg.so", f"{S.NO_SYMBOL} after g")
    # A file that cannot be read is a library without symbols, and is said so.
    bad = S.Symbolizer(maps, 0, reader=S.read_elf)
    assert bad.locate(0x5234) == ("libg.so", S.NO_SYMBOL)
    assert bad.tables == {"libg.so": "unreadable"}


def test_a_real_library_names_its_exported_functions() -> None:
    path = ctypes.util.find_library("c")
    assert path is not None
    libc = next(
        Path(line.split()[-1])
        for line in subprocess.run(
            ["ldconfig", "-p"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        if line.strip().startswith(path + " ") and "x86-64" in line
    )
    syms = S.read_elf(libc)
    assert syms.table in ("dynsym", "symtab") and len(syms.names) > 1000
    # binutils agrees: every sized function nm lists is found at its address
    # (under its own name or an alias of the same range).
    nm = subprocess.run(
        ["nm", "-D", "--defined-only", "-S", str(libc)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ranges: dict[tuple[int, int], set[str]] = {}
    for fields in map(str.split, nm.splitlines()):
        if len(fields) == 4 and fields[2] in "TtiW" and int(fields[1], 16) > 0:
            start, size = int(fields[0], 16), int(fields[1], 16)
            ranges.setdefault((start, size), set()).add(fields[3].split("@")[0])
    assert len(ranges) > 1000
    for (start, size), names in ranges.items():
        assert syms.function(start) in names
        assert syms.function(start + size - 1) in names
    with pytest.raises(ValueError, match="not an ELF file"):
        S.read_elf(Path(__file__))


def test_top_functions_keep_the_total() -> None:
    attributed = {("libx.so", f"f{k}"): 10 * k + 1 for k in range(40)}
    top = S.top_functions(attributed, 5, ops=4)
    assert [e["function"] for e in top] == ["f39", "f38", "f37", "f36", "f35", S.OTHER]
    assert top[0]["instructions_per_op"] == 391 / 4
    assert sum(float(str(e["instructions_per_op"])) for e in top) == sum(attributed.values()) / 4
    assert S.top_functions({("l", "f"): 3}, 5) == [
        {"library": "l", "function": "f", "instructions_per_op": 3.0}
    ]
    with pytest.raises(ValueError):
        S.top_functions(attributed, 5, ops=0)


# ---------------------------------------------------------------- plugin output, rows

COUNT = (
    "archbench-count\t2\t1\tx86_64\n"
    "base\t0\n"
    f"map\t{BASE:x}\t{BASE + 0x100000:x}\tr--p\t0\t{LIB}\n"
    "tb\t0\t4000001170\t1998\n"
    "tb\t0\t4000001170\t2\n"
    "tb\t0\t7000000000\t100\n"
    "block\t0\t2100\n"
    "tb\t1\t4000001180\t700\n"
    "block\t1\t700\n"
)


def test_plugin_lines_are_parsed_and_blocks_must_sum() -> None:
    parsed = C.parse_count_file(COUNT)
    assert parsed.blocks == ((0, 2100), (1, 700))
    assert parsed.tbs == {0: {BASE + 0x1170: 2000, 0x7000000000: 100}, 1: {BASE + 0x1180: 700}}
    assert parsed.maps == (S.MapEntry(BASE, BASE + 0x100000, 0, LIB),)
    assert parsed.guest_base == 0
    with pytest.raises(C.CountError, match=r"line 7: block 0 counts 2101 .* sum to 2100"):
        C.parse_count_file(COUNT.replace("block\t0\t2100", "block\t0\t2101"))
    with pytest.raises(C.CountError, match="line 4: malformed"):
        C.parse_count_file(COUNT.replace("4000001170\t1998", "zz\t1998"))


def test_rows_get_their_blocks_functions_per_operation() -> None:
    parsed = C.parse_count_file(COUNT)
    keys: list[blindsig_counting.BlockKey] = [
        ("CS", None, "signing", "sample", 0),
        ("CS", None, "signing", "sample", 1),
    ]
    syms = S.functions_from([("sign", 0x1100, 0x90), ("other", 0x1190, 0x20)], [(0, 0, 1 << 20)])
    sym = S.Symbolizer(parsed.maps, 0, reader=lambda _: syms)
    attributed = {k: sym.attribute(parsed.tbs[i]) for i, k in enumerate(keys)}
    paired = C.pair_counts(keys, parsed)
    row: dict[str, object] = {
        "suite": "blindsig",
        "valid": True,
        "scheme": "CS",
        "key_bits": None,
        "operation": "signing",
        "ops_per_block": 2,
        "samples_ns": [5, 6],
    }
    blindsig_counting.attach_counts([row], paired, attributed)
    assert row["instructions"] == [2100, 700]
    # (2000 + 700) / 4 operations in "sign", 100 / 4 outside every mapping.
    assert row["attribution"] == [
        {"library": "libfoo.so.1", "function": "sign", "instructions_per_op": 675.0},
        {"library": S.UNKNOWN, "function": S.UNKNOWN, "instructions_per_op": 25.0},
    ]
    assert (2100 + 700) / 4 == 675.0 + 25.0
    base = {
        "suite": "blindsig",
        "scheme": "CS",
        "operation": "signing",
        "key_bits": None,
        "ops_per_block": 2,
        "samples_ns": [5, 6],
        "valid": True,
    }
    loaded = Row.model_validate({**base, "attribution": row["attribution"]})
    assert loaded.attribution == (
        FunctionCount(library="libfoo.so.1", function="sign", instructions_per_op=675.0),
        FunctionCount(library=S.UNKNOWN, function=S.UNKNOWN, instructions_per_op=25.0),
    )
    assert Row.model_validate(base).attribution is None  # files before attribution


# ---------------------------------------------------------------- compare: what moved


def fc(library: str, function: str, n: float) -> FunctionCount:
    return FunctionCount(library=library, function=function, instructions_per_op=n)


A_FUNCS = (
    fc("libgcrypt.so.20.4.1", "(no symbol) after gcry_is_secure", 60_000),
    fc("libgnunetutil.so.15.0.0", "GNUNET_CRYPTO_cs_sign_derive", 60),
    fc("libc.so.6", "free", 400),
    fc("", S.OTHER, 100),
)
B_FUNCS = (
    fc("libsodium.so.23.3.0", "(no symbol) after crypto_hash_sha512_statebytes", 19_500),
    fc("libgnunetutil.so.17.0.0", "GNUNET_CRYPTO_cs_sign_derive", 57),
    fc("libc.so.6", "free", 400),
    fc("", S.OTHER, 120),
)


def test_function_changes_pair_across_sonames_and_give_shares() -> None:
    changes = function_changes(A_FUNCS, B_FUNCS, limit=5)
    total = (19_500 + 57 + 400 + 120) - (60_000 + 60 + 400 + 100)
    assert [(c.library, c.function, c.delta) for c in changes] == [
        ("libgcrypt.so", "(no symbol) after gcry_is_secure", -60_000),
        ("libsodium.so", "(no symbol) after crypto_hash_sha512_statebytes", 19_500),
        ("libgnunetutil.so", "GNUNET_CRYPTO_cs_sign_derive", -3),
    ]  # free did not move; the remainder is never listed
    assert changes[0].share == pytest.approx(-60_000 / total)
    assert sum(c.delta for c in changes) + 20 == total  # + the remainder's change
    assert library_stem("libsodium.so.23.3.0") == "libsodium.so"
    assert library_stem("blindsig") == "blindsig"
    assert all(math.isnan(c.share) for c in function_changes(A_FUNCS, A_FUNCS[:1] + A_FUNCS[1:]))
    same_total = (fc("l", "f", 10), fc("l", "g", 0))
    moved = function_changes(same_total, (fc("l", "f", 0), fc("l", "g", 10)))
    assert [(c.function, c.delta, math.isnan(c.share)) for c in moved] == [
        ("f", -10, True),
        ("g", 10, True),
    ]


def test_compare_lists_the_functions_of_each_moved_counted_row() -> None:
    def side(funcs: tuple[FunctionCount, ...] | None, run_id: str) -> list[Result]:
        signing = row("CS", "signing", [5, 6]).model_copy(update={"attribution": funcs})
        return [result("ci-amd64", "amd64", "m", "cpu", [signing], run_id=run_id)]

    key = RowKey("ci-amd64", "blindsig", "CS", 0, "", "signing", 1)
    moved = RowComparison(
        key,
        math.nan,
        math.nan,
        3,
        3,
        0.2537,
        0.2537,
        0.2537,
        "fewer instructions",
        metric="instructions",
        a_instructions=60_560.0,
        b_instructions=20_077.0,
    )
    same = dataclasses.replace(moved, verdict="no significant change")
    a, b = side(A_FUNCS, "20261201T000000Z-aaaaaa"), side(B_FUNCS, "20261202T000000Z-bbbbbb")
    lines = function_lines([moved, same], [a, b], limit=2)
    assert lines[0] == (
        "where blindsig CS signing moved on ci-amd64 (-40,483 instructions per operation, 0.2537×):"
    )
    assert len(lines) == 3
    assert "-60,000" in lines[1] and "148.2%" in lines[1] and "libgcrypt.so" in lines[1]
    assert "+19,500" in lines[2] and "-48.2%" in lines[2] and "sha512" in lines[2]
    old = side(None, "20261201T000000Z-aaaaaa")
    assert function_lines([moved], [old, b])[-1].startswith(
        "no per-function counts for ci-amd64 blindsig CS signing"
    )
    # B's libgcrypt was named by a symbol file, A's was not: said before its functions.
    used = {"libgcrypt.so.20.5.0": {"status": "used", "match": "code", "reason": "identical"}}
    named_b = [counted_with(r, used) for r in b]
    lines = function_lines([moved], [a, named_b], limit=2)
    assert lines[0].startswith("note: on ci-amd64 symbol files named the functions of libgcrypt.so")
    assert lines[1].startswith("where blindsig CS signing moved") and len(lines) == 4
    refused = {"libgcrypt.so.20.5.0": {"status": "refused", "reason": "code differs"}}
    lines = function_lines([moved], [[counted_with(r, refused) for r in a], b], limit=2)
    assert not lines[0].startswith("note:")


def counted_with(r: Result, symbol_files: dict[str, dict[str, str]]) -> Result:
    """``r`` as a counted result whose counting says ``symbol_files``."""
    base = counted(r, {})
    assert base.harness.counting is not None
    counting = base.harness.counting.model_copy(update={"symbol_files": symbol_files})
    return base.model_copy(
        update={"harness": base.harness.model_copy(update={"counting": counting})}
    )


def test_compare_writes_the_functions_and_their_differential_figure(tmp_path: Path) -> None:
    def side(funcs: tuple[FunctionCount, ...] | None, run_id: str) -> list[Result]:
        signing = row("CS", "signing", [5, 6]).model_copy(update={"attribution": funcs})
        return [result("ci-amd64", "amd64", "m", "cpu", [signing], run_id=run_id)]

    key = RowKey("ci-amd64", "blindsig", "CS", 0, "", "signing", 1)
    moved = RowComparison(
        key, math.nan, math.nan, 3, 3, 0.3315, 0.3315, 0.3315, "fewer instructions",
        metric="instructions", a_instructions=60_560.0, b_instructions=20_077.0,
    )  # fmt: skip
    sides = [side(A_FUNCS, "A1"), side(B_FUNCS, "B2")]
    moves = compare_tables.compare_moves([moved], sides, "A1", "B2")
    (m,) = moves
    assert (m.arch, m.row, m.before_label, m.after_label) == ("ci-amd64", "CS signing", "A1", "B2")
    assert [f.change for f in m.functions] == [-60_000, 19_500, -3]
    paths = compare_tables.write([moved], "A1", "B2", tmp_path, 0.95, moves)
    assert [p.name for p in paths] == [
        "compare-A1-vs-B2.tex",
        "compare-A1-vs-B2.csv",
        "compare-A1-vs-B2-functions.csv",
        "compare-A1-vs-B2-functions.png",
        "compare-A1-vs-B2-functions.pdf",
    ]
    lines = paths[2].read_text().splitlines()
    assert lines[0].startswith("arch,row,before_label,after_label,row_before,row_after,rank,")
    assert lines[1].startswith("ci-amd64,CS signing,A1,B2,60560.0,20077.0,1,libgcrypt.so,")
    assert paths[3].read_bytes().startswith(b"\x89PNG")
    # Without attribution on a side: no functions, no figure.
    assert len(compare_tables.write([moved], "A1", "B2", tmp_path, 0.95, [])) == 2
    assert compare_tables.compare_moves([moved], [side(None, "A1"), sides[1]], "A1", "B2") == []


def test_report_lists_each_counted_rows_top_functions(tmp_path: Path) -> None:
    signing = row("CS", "signing", [5, 6]).model_copy(update={"attribution": B_FUNCS})
    unattributed = row("CS", "verifying", [5, 6])
    res = result("ci|amd64", "amd64", "m", "cpu", [signing, unattributed])
    f = instructions.functions_frame([res], limit=2)
    assert f.to_dict("records") == [
        {
            "target": "ci|amd64",
            "row": "CS signing",
            "rank": 1,
            "library": "libsodium.so.23.3.0",
            "function": "(no symbol) after crypto_hash_sha512_statebytes",
            "instructions_per_op": 19_500.0,
            "share": round(19_500 / 20_077, 4),
        },
        {
            "target": "ci|amd64",
            "row": "CS signing",
            "rank": 2,
            "library": "libc.so.6",
            "function": "free",
            "instructions_per_op": 400.0,
            "share": round(400 / 20_077, 4),
        },
    ]
    md = instructions.render_functions_markdown([res], limit=2)
    assert md.startswith("### Where the instructions went")
    assert "| ci\\|amd64 | CS signing |   1 | libsodium.so.23.3.0 |" in md
    assert "19 500 |   97.1% |" in md
    assert instructions.render_functions_markdown([result("t", "amd64", "m", "c", [])]) == ""


def test_results_page_shows_the_top_functions_of_a_counted_run() -> None:
    from test_counting import counted

    plain = counted("ci-amd64", "amd64", "max", [200, 200, 200], [300, 300, 300])
    rows = (
        plain.harness.rows[0].model_copy(update={"attribution": B_FUNCS}),
        *plain.harness.rows[1:],
    )
    res = plain.model_copy(update={"harness": plain.harness.model_copy(update={"rows": rows})})
    (section,) = page.assemble([res], generated_at="2026-12-03T12:00:00Z").runs
    table = next(t for t in section.tables if t.title == "Where the instructions went")
    assert table.rows[:2] == ("ci-amd64 · CS signing · 1", "ci-amd64 · CS signing · 2")
    assert [c.text for c in table.cells[0]] == [
        "libsodium.so.23.3.0",
        "(no symbol) after crypto_hash_sha512_statebytes",
        "19 500",
        "97.1%",
    ]
    (bare,) = page.assemble([plain], generated_at="2026-12-03T12:00:00Z").runs
    assert all(t.title != "Where the instructions went" for t in bare.tables)
