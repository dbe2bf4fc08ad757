"""The plugin checked against callgrind: the part parser, name mapping and the agreement."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from abh.suites import callgrind as G
from abh.suites import count_symbols as S
from abh.suites.counting import CountError
from helpers import row
from hypothesis import given
from hypothesis import strategies as st

from archbench.analysis import callgrind_agreement
from archbench.analysis.counting import LIBRARY, TOTAL
from archbench.result import Row

# The head of a real part (callgrind 3.24.0, CS signing of 2 operations, cut down):
# compressed names, relative positions, a call's inclusive cost line after calls=.
PART = """# callgrind format
version: 1
creator: callgrind-3.24.0
part: 5
desc: Trigger: --dump-after=run_stage

positions: line
events: Ir
summary: 187

ob=(13) /opt/gnunet/lib/libgnunetutil.so.23.0.0
fl=(228) /tmp/gnunet/src/lib/util/crypto_cs.c
fn=(3006) GNUNET_CRYPTO_cs_sign_derive
286 4
+5 2
-5 2
cob=(12) /usr/lib/x86_64-linux-gnu/libsodium.so.23.3.0
cfi=(175) ???
cfn=(3012) crypto_core_ed25519_scalar_mul
calls=4 0
* 2770
* 2
fn=(3442) run_stage
10 16
ob=(12)
fl=(175)
fn=(3012)
0 100
fn=(99) 0x000000000001d300
0 40
ob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
fn=(958) __libc_start_main@@GLIBC_2.34
0 20
fn=(960) memcpy'2
* 1

totals: 187
"""


def test_a_part_gives_self_costs_that_add_up_to_its_summary() -> None:
    part = G.parse_part(PART)
    util, sodium, libc = (
        "/opt/gnunet/lib/libgnunetutil.so.23.0.0",
        "/usr/lib/x86_64-linux-gnu/libsodium.so.23.3.0",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    )
    assert part.total == 187
    assert part.functions == {
        # 4 + 2 + 2 + 2: the call's inclusive 2770 is not the caller's own cost
        (util, "GNUNET_CRYPTO_cs_sign_derive"): 10,
        (util, "run_stage"): 16,
        (sodium, "crypto_core_ed25519_scalar_mul"): 100,
        (sodium, S.NO_SYMBOL): 40,  # an address: outside every symbol
        (libc, "__libc_start_main"): 20,  # no symbol version
        (libc, "memcpy"): 1,  # no recursion level
    }


def test_a_part_whose_costs_do_not_add_up_is_refused() -> None:
    with pytest.raises(CountError, match="add up to 187, its summary says 188"):
        G.parse_part(PART.replace("summary: 187", "summary: 188"), "x")
    with pytest.raises(CountError, match="no Ir event"):
        G.parse_part(PART.replace("events: Ir", "events: Dr"))
    with pytest.raises(CountError, match="undefined name"):
        G.parse_part(PART.replace("fn=(3442) run_stage", "fn=(3443)"))


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["/lib/a.so.1", "/lib/b.so", "/bin/drv"]),
            st.sampled_from(["f", "g", "0x00000000004011a0", "h@GLIBC_2.2.5", "f'2"]),
            st.lists(st.tuples(st.integers(0, 50), st.integers(0, 10**9)), max_size=5),
            st.lists(st.integers(0, 10**9), max_size=3),
        ),
        max_size=12,
    )
)
def test_any_written_part_reads_back_exactly(
    entries: list[tuple[str, str, list[tuple[int, int]], list[int]]],
) -> None:
    """Write a part the way callgrind does (name compression, calls= lines), read it back."""
    lines = ["positions: line", "events: Ir"]
    ids: dict[str, int] = {}
    expected: dict[tuple[str, str], int] = {}

    def name(kind: str, text: str) -> str:
        if text in ids:
            return f"{kind}=({ids[text]})"
        ids[text] = len(ids)
        return f"{kind}=({ids[text]}) {text}"

    for ob, fn, costs, calls in entries:
        lines += [name("ob", ob), name("fn", fn)]
        plain = "(no symbol)" if fn.startswith("0x") else fn.split("@")[0].split("'")[0]
        for pos, cost in costs:
            lines.append(f"{pos} {cost}")
            expected[(ob, plain)] = expected.get((ob, plain), 0) + cost
        for inclusive in calls:
            lines += [name("cob", "/lib/c.so"), name("cfn", "callee")]
            lines += ["calls=1 0", f"* {inclusive}"]
    total = sum(expected.values())
    lines.insert(2, f"summary: {total}")
    part = G.parse_part("\n".join(lines) + "\n")
    assert part.total == total
    assert part.functions == {k: n for k, n in expected.items() if n}


def test_names_are_the_plugins_library_file_names_and_aliases(tmp_path: Path) -> None:
    """An alias (another name of the same range) becomes the name count_symbols keeps."""
    syms = S.functions_from([("__libc_free", 0x100, 50), ("free", 0x100, 50), ("g", 0x200, 8)])
    assert syms.aliases == {"__libc_free": "__libc_free", "free": "__libc_free", "g": "g"}
    part = G.Part(7, {("/nonexistent/libx.so.1", "free"): 3, ("/nonexistent/libx.so.1", "g"): 4})
    # An unreadable file keeps callgrind's names, under its file name.
    assert G.canonical([part])[0].functions == {("libx.so.1", "free"): 3, ("libx.so.1", "g"): 4}


def test_unnamed_code_is_merged_per_library_and_libraries_are_summed() -> None:
    f = {
        ("libsodium.so.23", "(no symbol) after crypto_hash_sha512"): 10,
        ("libsodium.so.23", "(no symbol)"): 5,
        ("libsodium.so.23", "sodium_add"): 3,
        ("libc.so.6", "malloc"): 2,
    }
    assert G.grouped(f) == {
        ("libsodium.so.23", "(no symbol)"): 15,
        ("libsodium.so.23", "sodium_add"): 3,
        ("libc.so.6", "malloc"): 2,
    }
    assert G.per_library(f, 2) == {"libsodium.so.23": 9.0, "libc.so.6": 1.0}


def test_the_command_collects_run_stage_only_and_dumps_after_each_call() -> None:
    cmd = G.callgrind_command(Path("/tmp/o"), Path("/d/blindsig"), ["--count-markers"])
    assert cmd[:6] == [
        "valgrind",
        "--tool=callgrind",
        "--collect-atstart=no",
        "--toggle-collect=run_stage",
        "--dump-after=run_stage",
        "--callgrind-out-file=/tmp/o",
    ]
    assert cmd[6:] == ["/d/blindsig", "--count-markers"]


def _checked(plugin_blocks: list[int], ops: int, cg: float, libs: dict[str, float]) -> Row:
    base = row("CS", "signing", [1000] * len(plugin_blocks))
    fc = [
        {"library": "libsodium.so.23", "function": "(no symbol)", "instructions_per_op": 900.0},
        {"library": "libsodium.so.23", "function": "sodium_add", "instructions_per_op": 100.0},
        {"library": "libc.so.6", "function": "free", "instructions_per_op": 5.0},
    ]
    return Row.model_validate(
        {
            **base.model_dump(),
            "ops_per_block": ops,
            "instructions": plugin_blocks,
            "callgrind": {
                "instructions_per_op": cg,
                "libraries": libs,
                "plugin_libraries": {"libsodium.so.23": 1000.0, "libc.so.6": 5.0},
                "functions": [{**fc[1], "instructions_per_op": 104.0}, fc[0]],
                "plugin_functions": fc,
            },
        }
    )


def test_agreement_within_tolerance_and_the_region_allowance() -> None:
    # 2 operations per block: callgrind may count 64 / 2 = 32 per operation more.
    r = _checked([2010, 2010], 2, 1005.0 + 2.01 + 32, {"libsodium.so.23": 1000.0})
    lines = callgrind_agreement(r)
    assert [(x.library, x.function) for x in lines] == [
        ("", TOTAL),
        ("libsodium.so.23", LIBRARY),
        ("libc.so.6", LIBRARY),
        ("libsodium.so.23", "sodium_add"),
        ("libc.so.6", "free"),
    ]
    assert lines[0].ok is True and lines[0].plugin == 1005.0
    assert lines[1].ok is True
    assert lines[2].ok is None and lines[2].callgrind == 0.0  # 0.5 % of the row: listed only
    assert lines[3].ok is True and math.isclose(lines[3].ratio, 1.04)
    assert lines[4].ok is None
    # Beyond: the total by one more instruction per operation, a library by 2 %.
    r = _checked([2010, 2010], 2, 1005.0 + 2.01 + 33, {"libsodium.so.23": 1052.0})
    lines = callgrind_agreement(r)
    assert lines[0].ok is False and lines[1].ok is False


def test_a_row_without_the_check_is_refused() -> None:
    with pytest.raises(ValueError, match="no callgrind check"):
        callgrind_agreement(row("CS", "signing", [1000]))
