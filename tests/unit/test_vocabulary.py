"""Contract: the host's operation vocabulary and the harness's name the same operations.

The host side is :mod:`archbench.result.vocabulary` (over
:data:`archbench.result.Operation`); the harness side is
``harness/abh/suites/blindsig_rules.py`` and the C driver ``harness/drivers/blindsig.c``
(its operation tables are in ``harness/drivers/blindsig_pairs.c``).
"""

from __future__ import annotations

import json
import re
from typing import get_args

from abh.suites.blindsig_rules import CS_OPERATIONS, RSA_OPERATIONS, TALER_OPERATIONS
from helpers import HARNESS_DIR

from archbench.result import HELPER_OPERATIONS, Operation, vocabulary
from archbench.suites import SUITE_NAMES, SUITE_TITLES
from archbench.upstream import reference


def _c_names(variable: str) -> tuple[str, ...]:
    """A driver operation table's names, with the layer's macro (TALER_OP_NAMES) expanded."""
    text = (HARNESS_DIR / "drivers" / "blindsig_pairs.c").read_text(encoding="utf-8")
    taler = re.search(r"#define TALER_OP_NAMES((?:.*\\\n)*.*)", text)
    assert taler is not None, "TALER_OP_NAMES not found in blindsig_pairs.c"
    match = re.search(rf"{variable}\[[A-Z_ +]+\] = \{{(.*?)\}};", text, re.S)
    assert match is not None, f"{variable} not found in blindsig_pairs.c"
    body = match.group(1).replace("TALER_OP_NAMES", taler.group(1))
    return tuple(re.findall(r'"([a-z_]+)"', body))


def test_harness_and_driver_name_the_host_operations_in_the_host_order() -> None:
    layer = set(vocabulary.TALER_OPERATIONS)
    blindsig = [
        op for op in vocabulary.OPERATION_ORDER if op not in HELPER_OPERATIONS and op not in layer
    ]
    assert list(CS_OPERATIONS) == blindsig
    # The layer's rows come last, in chain order, on both sides and in the driver.
    assert TALER_OPERATIONS == vocabulary.TALER_OPERATIONS == vocabulary.OPERATION_ORDER[-6:]
    assert list(RSA_OPERATIONS) == [op for op in blindsig if op in RSA_OPERATIONS]
    assert set(RSA_OPERATIONS) == set(blindsig) - {
        "r_derivation",
        "blinding_secret_derivation",
    }
    assert _c_names("cs_op_names") == CS_OPERATIONS + TALER_OPERATIONS
    assert _c_names("rsa_op_names") == RSA_OPERATIONS + TALER_OPERATIONS


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
    text = (HARNESS_DIR / "CONTRACT.md").read_text(encoding="utf-8")
    text = text.split("## Operations", 1)[1].split("\n## ", 1)[0]
    documented = dict(re.findall(r"^\| `([a-z_]+)` \| ([^|]+?) \|", text, re.M))
    blindsig = {
        op: words
        for op, words in vocabulary.OPERATION_WORDING.items()
        if op not in HELPER_OPERATIONS
    }
    assert documented == blindsig
    # The thesis's cells are read with the vocabulary's wording, every operation of it
    # (the thesis has no rows of the scheme-independent layer).
    for op, words in vocabulary.OPERATION_WORDING.items():
        if op in vocabulary.TALER_OPERATIONS:
            continue
        helper = op in HELPER_OPERATIONS
        printed = f"100 {words}" if helper else f"10x {words}"
        assert reference.read_operation(printed, "test") == (
            op,
            100 if helper else 10,
            "security-module" if helper else "blindsig",
        )


def test_schema_enumerates_the_host_operations() -> None:
    schema = json.loads((HARNESS_DIR / "schema-v1.json").read_text(encoding="utf-8"))
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
        assert set(CS_OPERATIONS) <= set(enum)


def test_every_suite_has_a_title() -> None:
    assert set(SUITE_NAMES) <= set(SUITE_TITLES)
