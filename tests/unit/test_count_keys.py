"""Fixed RSA test keys for counting (harness/drivers/counting/count-key-rsa-<bits>.key): checks,
provenance and that they reach the benchmark image."""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path

import pytest
from abh.suites import blindsig_counting as BC
from abh.suites.blindsig_output import HarnessError
from helpers import HARNESS_DIR
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.images import harness_files
from archbench.result import Counting

SIZES = (1024, 2048, 3072, 4096)
KEYS = HARNESS_DIR / "drivers" / "counting"


def test_committed_keys_are_gnunet_encoded_and_hashed() -> None:
    assert BC.KEY_DIR == KEYS
    found = BC.fixed_rsa_keys(KEYS, SIZES)
    assert list(found) == [f"count-key-rsa-{b}.key" for b in SIZES]
    for name, digest in found.items():
        data = (KEYS / name).read_bytes()
        assert digest == hashlib.sha256(data).hexdigest()
        # libgcrypt's S-expression: public and private part, modulus of the named size
        # (257 bytes with the sign byte for 2048 bits).
        assert data.startswith(b"(8:key-data") and b"(11:private-key" in data
        bits = int(name.removeprefix("count-key-rsa-").removesuffix(".key"))
        n_len = re.search(rb"\(1:n(\d+):", data)
        assert n_len is not None and int(n_len.group(1)) == bits // 8 + 1


def test_no_sizes_no_keys(tmp_path: Path) -> None:
    assert BC.fixed_rsa_keys(tmp_path, []) == {}


def test_missing_key_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"no fixed RSA-1536 key .*count-key-rsa-1536\.key"):
        BC.fixed_rsa_keys(KEYS, [2048, 1536])


@settings(deadline=None)
@given(
    st.one_of(
        st.just(b""),
        st.binary(max_size=64).filter(lambda b: not b.startswith(b"(8:key-data")),
        st.just(b"(8:key-data" + b"x" * BC.KEY_MAX_BYTES),
    )
)
def test_bad_key_files_are_refused(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "count-key-rsa-2048.key").write_bytes(data)
        with pytest.raises(HarnessError, match="not a GNUnet RSA private key"):
            BC.fixed_rsa_keys(Path(d), [2048])


def test_keys_go_into_the_image_with_the_sources() -> None:
    names = {n for n, _ in harness_files(HARNESS_DIR)}
    assert {f"harness/drivers/counting/count-key-rsa-{b}.key" for b in SIZES} <= names
    assert "harness/drivers/counting/count-keys.md" in names


def test_provenance_field_defaults_empty_for_older_results() -> None:
    cal = {
        "iterations": 1,
        "instructions_per_iteration": 2,
        "counts": [10, 12],
        "expected_difference": 2,
        "difference": 2,
        "overhead": 8,
        "exact": True,
    }
    base = {
        "instrument": "qemu-tcg-plugin",
        "qemu": "qemu-riscv64",
        "qemu_version": "qemu-riscv64 version 7.2.0",
        "qemu_package": "1:7.2+dfsg-7",
        "cpu_model": "rv64",
        "plugin_version": "1",
        "plugin_api": 1,
        "calibration": cal,
    }
    assert Counting.model_validate(base).fixed_rsa_keys == {}
    keys = {"count-key-rsa-2048.key": "ab" * 32}
    assert Counting.model_validate({**base, "fixed_rsa_keys": keys}).fixed_rsa_keys == keys
