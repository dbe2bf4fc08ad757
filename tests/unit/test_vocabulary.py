"""Contract: the host's operation vocabulary and the harness's name the same operations.

The host side is :mod:`archbench.result.vocabulary` (over
:data:`archbench.result.Operation`); the harness side is
``harness/archbench_harness.py`` and the C driver ``harness/blindsig.c`` (its operation
tables are in ``harness/blindsig_pairs.c``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

from helpers import load_harness

from archbench.result import Operation, vocabulary
from archbench.suites import SUITE_NAMES
from archbench.upstream import reference

HARNESS = Path(__file__).resolve().parents[2] / "harness"


def _c_names(variable: str) -> tuple[str, ...]:
    text = (HARNESS / "blindsig_pairs.c").read_text(encoding="utf-8")
    match = re.search(rf"{variable}\[[A-Z_]+\] = \{{(.*?)\}};", text, re.S)
    assert match is not None, f"{variable} not found in blindsig_pairs.c"
    return tuple(re.findall(r'"([a-z_]+)"', match.group(1)))


def test_harness_and_driver_name_the_host_operations_in_the_host_order() -> None:
    harness = load_harness()
    blindsig = [op for op in vocabulary.OPERATION_ORDER if op not in vocabulary.HELPER_OPERATIONS]
    assert list(harness.CS_OPERATIONS) == blindsig
    assert list(harness.RSA_OPERATIONS) == [op for op in blindsig if op in harness.RSA_OPERATIONS]
    assert set(harness.RSA_OPERATIONS) == set(blindsig) - {
        "r_derivation",
        "blinding_secret_derivation",
    }
    assert _c_names("cs_op_names") == harness.CS_OPERATIONS
    assert _c_names("rsa_op_names") == harness.RSA_OPERATIONS


def test_every_operation_has_wording_a_group_and_a_rank() -> None:
    operations = set(get_args(Operation))
    assert set(vocabulary.OPERATION_WORDING) == operations
    assert set(vocabulary.SHORT_WORDING) == operations
    grouped = [op for group in vocabulary.OPERATION_GROUPS for op in group]
    assert sorted(grouped) == sorted(operations)
    assert set(vocabulary.OPERATION_ORDER) == operations
    for _, cs, rsa in vocabulary.COMPARISON_ROWS:
        assert set(cs) | set(rsa) <= operations


def test_contract_and_reference_parser_use_the_host_wording() -> None:
    text = (HARNESS / "CONTRACT.md").read_text(encoding="utf-8")
    text = text.split("## Operations", 1)[1].split("\n## ", 1)[0]
    documented = dict(re.findall(r"^\| `([a-z_]+)` \| ([^|]+?) \|", text, re.M))
    blindsig = {
        op: words
        for op, words in vocabulary.OPERATION_WORDING.items()
        if op not in vocabulary.HELPER_OPERATIONS
    }
    assert documented == blindsig
    # The thesis's cells are read with the vocabulary's wording, every operation of it.
    for op, words in vocabulary.OPERATION_WORDING.items():
        helper = op in vocabulary.HELPER_OPERATIONS
        printed = f"100 {words}" if helper else f"10x {words}"
        assert reference.read_operation(printed, "test") == (
            op,
            100 if helper else 10,
            "security-module" if helper else "blindsig",
        )


def test_schema_enumerates_the_host_operations() -> None:
    schema = json.loads((HARNESS / "schema-v1.json").read_text(encoding="utf-8"))
    found: list[list[str]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            enum = node.get("enum")
            if isinstance(enum, list) and "signing" in enum:
                found.append(enum)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert found, "schema-v1.json enumerates no operations"
    for enum in found:
        assert set(enum) <= set(vocabulary.OPERATION_ORDER)
        assert set(load_harness().CS_OPERATIONS) <= set(enum)


def test_every_suite_has_a_title() -> None:
    assert set(SUITE_NAMES) <= set(vocabulary.SUITE_TITLES)
