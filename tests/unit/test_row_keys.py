"""A row's key tells apart every pair of rows that are different measurements (issue 31).

Rows that differ only in their block of a security-module operation (Taler's 100
parallel signatures per forked client and the 800 of all clients), in the device a
GnuPG decryption ran on, or in the bytes each operation processed are different
measurements; :class:`archbench.result.RowKey` once left these fields out, so
``invoke compare``, the results page and a history kept one of such rows and dropped
the other. Rows whose block is only what calibration chose keep one key.
"""

from __future__ import annotations

from typing import Any

from helpers import result, row, synthetic_history

from archbench.analysis import compare
from archbench.report import render_history_markdown
from archbench.report.page import anchor, assemble
from archbench.result import Result, Row, RowKey, row_key

RUN_A = "20261201T100000Z-aaaaaa"
RUN_B = "20261201T110000Z-bbbbbb"


def _row(suite: str, scheme: str, operation: str, ops: int, ns: int, **more: Any) -> Row:
    return Row.model_validate(
        {
            "suite": suite,
            "scheme": scheme,
            "key_bits": more.pop("key_bits", None),
            "operation": operation,
            "ops_per_block": ops,
            "samples_ns": [ns + k for k in range(8)],
            "valid": True,
            **more,
        }
    )


def _security_module(run_id: str, scale: float) -> Result:
    """A run's security-module rows: CS parallel signing in blocks of 100 (about 14 ms)
    and 800 (about 19 ms), and batch signing of 4 and of 16 signatures."""
    rows = [
        _row("security-module", "CS", "helper_parallel_signing", 100, int(14_000_000 * scale)),
        _row("security-module", "CS", "helper_parallel_signing", 800, int(19_000_000 * scale)),
        _row("security-module", "CS", "helper_batch_signing", 4, int(1_309_000 * scale)),
        _row("security-module", "CS", "helper_batch_signing", 16, int(4_711_000 * scale)),
    ]
    return result("amd64-trixie", "amd64", "x86_64", "AMD EPYC 7763", rows, run_id=run_id)


def test_security_module_blocks_are_rows_of_their_own_with_labels_that_say_the_block() -> None:
    rows = _security_module(RUN_A, 1.0).harness.rows
    keys = [row_key("amd64-trixie", r) for r in rows]
    assert len(set(keys)) == 4
    assert [k.label for k in keys] == [
        "security-module CS helper parallel signing, 100 ops",
        "security-module CS helper parallel signing, 800 ops",
        "security-module CS helper batch signing, 4 ops",
        "security-module CS helper batch signing, 16 ops",
    ]
    assert len({k.across for k in keys}) == 4


def test_compare_pairs_each_block_with_the_same_block() -> None:
    a, b = _security_module(RUN_A, 1.0), _security_module(RUN_B, 1.5)
    rows = compare([a], [b], control=False)
    by_label = {r.key.label: r for r in rows}
    assert len(rows) == 4
    # Each block against its own: B is 1.5 times A for every row (per-op times
    # 140 000 vs 210 000 ns for the 100 block, 23 750 vs 35 625 ns for the 800 one).
    for r in rows:
        assert abs(r.ratio - 1.5) < 1e-3, r.key.label
    assert abs(by_label["security-module CS helper parallel signing, 100 ops"].a_ns - 140_000) < 1
    assert abs(by_label["security-module CS helper parallel signing, 800 ops"].a_ns - 23_750) < 1


def test_the_page_and_a_history_show_both_blocks() -> None:
    manifest, _ = synthetic_history((RUN_A, RUN_B), scales=(1.0, 1.1))
    results = {RUN_A: [_security_module(RUN_A, 1.0)], RUN_B: [_security_module(RUN_B, 1.1)]}
    page = assemble([], [(manifest, results)], generated_at="2026-12-01T12:00:00Z")
    (timed,) = page.runs[0].tables
    assert timed.rows == (
        "security-module CS helper parallel signing, 100 ops",
        "security-module CS helper parallel signing, 800 ops",
        "security-module CS helper batch signing, 4 ops",
        "security-module CS helper batch signing, 16 ops",
    )
    # Per operation: 14 ms / 100 and 19 ms / 800.
    assert timed.cells[0][0].text.startswith("140 µs")
    assert timed.cells[1][0].text.startswith("23.8 µs")
    assert len({s.anchor for s in page.samples}) == len(page.samples) == 8
    # One bar figure per operation; its categories are what tells its rows apart.
    assert [f.x for f in page.runs[0].figures] == [
        ("CS, 100 ops", "CS, 800 ops"),
        ("CS, 4 ops", "CS, 16 ops"),
    ]
    (history,) = page.histories
    assert len(history.tables[0].rows) == 4
    text = render_history_markdown(manifest, results)
    assert "CS helper parallel signing, 100 ops" in text
    assert "CS helper parallel signing, 800 ops" in text


def test_gnupg_rows_of_another_device_or_file_size_are_other_rows() -> None:
    base = {"key_bits": 2048, "bytes_per_op": 1_048_576}
    cpu = _row("gnupg", "RSA", "decrypt", 1, 30_000_000, **base)
    token = _row("gnupg", "RSA", "decrypt", 1, 300_000_000, device="yubikey4", **base)
    small = _row("gnupg", "RSA", "decrypt", 1, 29_000_000, key_bits=2048, bytes_per_op=16)
    keys = {row_key("t", r).label for r in (cpu, token, small)}
    assert keys == {
        "gnupg RSA-2048 1048576 B decrypt",
        "gnupg RSA-2048 1048576 B decrypt on yubikey4",
        "gnupg RSA-2048 16 B decrypt",
    }
    a = result("t", "amd64", "x86_64", "AMD EPYC 7763", [cpu], run_id=RUN_A)
    b = result("t", "amd64", "x86_64", "AMD EPYC 7763", [token], run_id=RUN_B)
    assert compare([a], [b]) == []  # a token is not the CPU measured again


def test_keys_of_rows_without_these_fields_stay_as_they_were() -> None:
    signing = row("CS", "signing", [90_000, 90_001])
    key = row_key("amd64", signing)
    assert key == RowKey("amd64", "blindsig", "CS", 0, "", "signing", 1)
    assert key.label == "blindsig CS signing"
    # A calibrated block is no identity: sodium rows of 1 000 and 4 000 operations per
    # block (calibration chose them) are one row, as are openssl-speed counts.
    small = _row("sodium", "Ed25519", "sign", 1_000, 20_000_000)
    large = _row("sodium", "Ed25519", "sign", 4_000, 80_000_000)
    assert row_key("t", small) == row_key("t", large)
    sized = _row("sodium", "AES-256-GCM", "encrypt", 512, 90_000, param="1024 B", bytes_per_op=1024)
    assert row_key("t", sized).label == "sodium AES-256-GCM 1024 B encrypt"


def test_page_ids_of_rows_without_these_fields_are_those_earlier_pages_had() -> None:
    # The results page hashes a key's printed form into the row's id: a key of seven
    # fields printed exactly as the seven-field dataclass did, and its id (computed with
    # the code before the three fields existed) unchanged.
    key = row_key("amd64", row("CS", "signing", [90_000, 90_001]))
    assert repr(key) == (
        "RowKey(target='amd64', suite='blindsig', scheme='CS', key_bits=0, param='', "
        "operation='signing', processes=1)"
    )
    assert anchor("samples", "20260101T000000Z", "time", key) == "samples-7593a1d2cedc"
    block = RowKey("amd64", "security-module", "CS", 0, "", "helper_parallel_signing", 1, 800)
    assert repr(block).endswith("processes=1, block=800)")
