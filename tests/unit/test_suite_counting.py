"""Counting the rsa-large and sodium suites: pairing plugin counts with the drivers' block lines.

Driver outputs are as ``rsa_large --count-markers`` and ``sodium_bench
--count-markers`` print them (captured from real runs, times shortened); rows
are built by the suites' own parsers, so the pairing is checked against what
the harness really stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from abh.suites import COUNTED_SUITES as HARNESS_COUNTED
from abh.suites import counting as C
from abh.suites import rsa_large, rsa_large_output, sodium, sodium_output
from abh.suites.sodium_rows import build_outcome
from helpers import row as make_row
from hypothesis import given
from hypothesis import strategies as st
from test_counting import counted

from archbench.report import instructions
from archbench.result import Result
from archbench.suites import COUNTED_SUITES

HEADER = "archbench-count\t1\t1\tx86_64\n"

RSA_OUT = """rsa-large 1
meta openssl_version OpenSSL 3.0.19 27 Jan 2026
meta min_block_ns 0
meta max_block_ops 262144
keygen 1024 16735608
keygen_done 1024 1 0
calibrate 1024 sign 1 78757
calibrate 1024 verify 1 5168
sample 1024 sign 1 78106
sample 1024 verify 1 4978
sample 1024 sign 1 78146
sample 1024 verify 1 4978
done 1024 2 0
end ok
"""

SODIUM_OUT = """meta sodium_version 1.0.18
meta min_sample_ns 3000
sample Ed25519 key_generation - 0 1 40000
sample Ed25519 key_generation - 0 1 41000
warmup Ed25519 sign - 0 1 50000
sample Ed25519 sign - 0 1 50000
sample Ed25519 sign - 0 1 50100
sample SHA-256 hash 64 64 2 900
sample SHA-256 hash 64 64 2 910
sample SHA-256 hash 1000 1000 2 9000
sample SHA-256 hash 1000 1000 2 9100
end
"""


def count_file(counts: list[int]) -> C.CountFile:
    return C.parse_count_file(HEADER + "".join(f"block\t{i}\t{n}\n" for i, n in enumerate(counts)))


def rsa_rows(text: str) -> list[dict[str, Any]]:
    config = rsa_large.normalize_config({"bits": [1024], "repetitions": 2, "min_block_ns": 0})
    rows, _ = rsa_large_output.rows_from_output(rsa_large_output.parse_driver_output(text), config)
    return rows


def sodium_rows(text: str) -> list[dict[str, Any]]:
    config = sodium.normalize_config({"repetitions": 2, "warmup": 0, "sizes": [64, 1000], "nth": 1})
    return build_outcome(sodium_output.parse_driver_output(text), config, print).rows


def by_op(rows: list[dict[str, Any]]) -> dict[tuple[str, str | None], Any]:
    return {(r["operation"], r["param"]): r.get("instructions") for r in rows}


# ---------------------------------------------------------------- rsa-large


def test_rsa_large_blocks_are_every_timed_line_in_print_order() -> None:
    assert rsa_large_output.rsa_large_blocks(RSA_OUT) == [
        (1024, "key_generation", "keygen", 0),
        (1024, "sign", "calibrate", 0),
        (1024, "verify", "calibrate", 0),
        (1024, "sign", "sample", 0),
        (1024, "verify", "sample", 0),
        (1024, "sign", "sample", 1),
        (1024, "verify", "sample", 1),
    ]


def test_rsa_large_rows_get_the_counts_of_their_own_blocks() -> None:
    rows = rsa_rows(RSA_OUT)
    # keygen, then calibration (discarded), then sign/verify alternating.
    counts = count_file([9_000_000, 1111, 2222, 700_001, 40_001, 700_002, 40_002])
    assert rsa_large_output.attach_rsa_large(rows, RSA_OUT, counts)
    assert by_op(rows) == {
        ("key_generation", None): [9_000_000],
        ("sign", None): [700_001, 700_002],
        ("verify", None): [40_001, 40_002],
    }
    for row in rows:  # one count per sample, as Row validation demands
        assert len(row["instructions"]) == len(row["samples_ns"])


def test_rsa_large_count_and_line_numbers_must_agree() -> None:
    rows = rsa_rows(RSA_OUT)
    with pytest.raises(C.CountError, match="printed 7 blocks but the counter closed 6"):
        rsa_large_output.attach_rsa_large(rows, RSA_OUT, count_file([1, 2, 3, 4, 5, 6]))
    assert all("instructions" not in r for r in rows)


def test_an_invalid_rsa_size_gets_no_counts() -> None:
    # The verify block that failed was marked but printed no sample line.
    text = RSA_OUT.replace(
        "sample 1024 sign 1 78146\nsample 1024 verify 1 4978\ndone 1024 2 0\n",
        "invalid 1024 a signature did not verify in a timed block\ndone 1024 1 0\n",
    )
    rows = rsa_rows(text)
    assert not rsa_large_output.attach_rsa_large(rows, text, count_file([1, 2, 3, 4, 5, 6, 7]))
    assert all("instructions" not in r for r in rows)


# ---------------------------------------------------------------- sodium


def test_sodium_blocks_key_rows_by_scheme_operation_and_size() -> None:
    blocks = sodium_output.sodium_blocks(SODIUM_OUT)
    assert blocks[2] == ("Ed25519", "sign", None, "warmup", 0)
    assert blocks[3] == ("Ed25519", "sign", None, "sample", 0)
    assert blocks[-1] == ("SHA-256", "hash", 1000, "sample", 1)
    assert len(blocks) == 9


def test_sodium_rows_get_their_counts_and_warmups_are_skipped() -> None:
    rows = sodium_rows(SODIUM_OUT)
    counts = count_file([300_001, 300_002, 999, 200_001, 200_002, 4001, 4002, 30_001, 30_002])
    sodium_output.attach_sodium(rows, SODIUM_OUT, counts)
    assert by_op(rows) == {
        ("key_generation", None): [300_001, 300_002],
        ("sign", None): [200_001, 200_002],
        ("hash", "64 B"): [4001, 4002],
        ("hash", "1000 B"): [30_001, 30_002],
    }


def test_invalid_sodium_rows_get_no_counts() -> None:
    text = SODIUM_OUT.replace(
        "sample Ed25519 sign - 0 1 50100\n",
        "sample Ed25519 sign - 0 1 50100\ninvalid Ed25519 sign - 0 signature does not verify\n",
    )
    rows = sodium_rows(text)
    sodium_output.attach_sodium(rows, text, count_file(list(range(1, 10))))
    assert by_op(rows)[("sign", None)] is None
    assert by_op(rows)[("hash", "64 B")] == [6, 7]


@given(st.lists(st.integers(min_value=1, max_value=10**12), min_size=9, max_size=9))
def test_sodium_pairing_keeps_print_order(counts: list[int]) -> None:
    rows = sodium_rows(SODIUM_OUT)
    sodium_output.attach_sodium(rows, SODIUM_OUT, count_file(counts))
    found = [n for r in rows for n in r["instructions"]]
    assert found == counts[:2] + counts[3:]  # all but the warmup block


def test_malformed_block_lines_are_refused() -> None:
    with pytest.raises(C.CountError, match="not a block"):
        sodium_output.sodium_blocks("sample Ed25519 sign 1 40000\n")
    with pytest.raises(C.CountError, match="not a key generation"):
        rsa_large_output.rsa_large_blocks("keygen x 5\n")


# ---------------------------------------------------------------- session


def test_session_runs_a_driver_under_the_counter_with_markers(tmp_path: Path) -> None:
    counter = C.Counter(tmp_path, "qemu-riscv64", "7.2", "1:7.2", "1", "tools")
    calibration = {"exact": True}
    session = C.CountSession(counter, "rv64", tmp_path, calibration, "1", 1)
    cmd, out = session.command(["/opt/h/rsa_large", "--bits", "2048"], "rsa-large-2048")
    assert out == tmp_path / "rsa-large-2048.count"
    assert cmd[3:7] == [str(tmp_path / "qemu-riscv64"), "-L", "/", "-cpu"]
    assert cmd[-4:] == ["/opt/h/rsa_large", "--bits", "2048", "--count-markers"]
    with pytest.raises(ValueError, match="count label"):
        session.command(["/bin/true"], "a,b")
    with pytest.raises(C.CountError, match="counter output"):
        session.read(out)
    out.write_text(HEADER + "block\t0\t5\n", encoding="utf-8")
    assert session.read(out).blocks == ((0, 5),)
    doc = session.provenance()
    assert (doc["cpu_model"], doc["calibration"], doc["plugin_api"]) == ("rv64", calibration, 1)


def test_session_reuses_an_earlier_calibration_without_running_anything(tmp_path: Path) -> None:
    (tmp_path / "counter.json").write_text(
        '{"qemu": "qemu-x86_64", "qemu_version": "7.2", "qemu_package": "1:7.2",'
        ' "plugin_version": "1"}',
        encoding="utf-8",
    )
    for name in ("ld-linux-x86-64.so.2", "qemu-x86_64", "libarchbench_count.so"):
        (tmp_path / name).write_bytes(b"")
    session = C.start_session(
        tmp_path, "max", tmp_path / "no-such-program", {"exact": True}, ("1", 2)
    )
    assert (session.plugin_version, session.plugin_api) == ("1", 2)
    with pytest.raises(C.CountError, match="no counting layer"):
        C.start_session(tmp_path / "missing", "max", tmp_path / "x")


def test_only_our_drivers_are_counted() -> None:
    assert HARNESS_COUNTED == COUNTED_SUITES == ("blindsig", "rsa-large", "sodium", "taler-helper")


# ---------------------------------------------------------------- tables and exports


def counted_suites() -> Result:
    """A counting result with blindsig, rsa-large and sodium rows (two SHA-256 sizes)."""
    base = counted("amd64-trixie", "amd64", "max", [700, 700, 700], [1000, 1000, 1000])
    extra = [
        make_row("RSA", "sign", [5, 5], key_bits=2048, suite="rsa-large"),
        make_row("SHA-256", "hash", [5, 5], suite="sodium").model_copy(update={"param": "64 B"}),
        make_row("SHA-256", "hash", [5, 5], suite="sodium").model_copy(update={"param": "1000 B"}),
    ]
    counts = [(60_000_000, 60_000_000), (7_730, 7_750), (30_000, 30_000)]
    rows = base.harness.rows + tuple(
        r.model_copy(update={"instructions": c}) for r, c in zip(extra, counts, strict=True)
    )
    return base.model_copy(update={"harness": base.harness.model_copy(update={"rows": rows})})


def test_table_has_a_suite_column_and_names_what_is_not_counted() -> None:
    r = counted_suites()
    table = instructions.wide([r])
    assert table["Suite"].tolist() == ["blindsig", "blindsig", "rsa-large", "sodium", "sodium"]
    assert table["Scheme"].tolist()[2:] == ["RSA-2048", "SHA-256 1000 B", "SHA-256 64 B"]
    # ops_per_block is 10: 60 M per block = 6 M per signature.
    assert table["amd64-trixie"].tolist()[2:] == [6_000_000, 3_000, 774]
    md = instructions.render_instructions_markdown([r])
    assert "Not counted: openssl-speed, gnupg" in md
    assert "Not counted: openssl-speed, gnupg" in instructions.render_instructions_latex([r])


def test_export_joins_on_suite_and_param_and_leaves_foreign_suites_empty() -> None:
    r = counted_suites()
    export = pd.DataFrame(
        {
            "run_id": [r.run_id] * 4,
            "target": ["amd64-trixie"] * 4,
            "suite": ["sodium", "sodium", "openssl-speed", "rsa-large"],
            "scheme": ["SHA-256", "SHA-256", "RSA", "RSA"],
            "key_bits": [None, None, 2048, 2048],
            "param": ["64 B", "1000 B", None, None],
            "operation": ["hash", "hash", "sign", "sign"],
        }
    )
    out = instructions.add_export_column(export, [r])
    assert len(out) == 4  # no row doubled by the join
    values = out["instructions_per_op"].tolist()
    assert values[0] == 774.0 and values[1] == 3000.0 and values[3] == 6_000_000.0
    assert pd.isna(values[2])  # openssl speed is not counted
