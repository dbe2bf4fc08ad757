"""How foreign formats word our operations: the vocabulary's wording, plus named aliases.

The one wording table is :data:`archbench.result.vocabulary.OPERATION_WORDING`
(the thesis appendix's, ``harness/CONTRACT.md``). Every parser of a foreign
format looks operations up here instead of keeping a table of its own:

* the thesis's LaTeX tables word every operation exactly as the vocabulary
  does (:data:`THESIS_BLINDSIG_WORDING`, :data:`THESIS_HELPER_WORDING`);
* GNUnet's ``perf_crypto_rsa`` too (:data:`PERF_CRYPTO_RSA_WORDING`);
* GNUnet's ``perf_crypto_cs`` for key generation and the r derivation, and in
  its own words for the rest (:data:`PERF_CRYPTO_CS_ALIASES`, the strings of
  ``src/util/perf_crypto_cs.c``);
* Taler's ``test_helper_*`` print the kind in parentheses
  (``100 (sequential) signature operations``): :data:`TEST_HELPER_KINDS`.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from archbench.result import (
    HELPER_OPERATIONS,
    OPERATION_ORDER,
    OPERATION_WORDING,
    TALER_OPERATIONS,
    Operation,
)


def operations_by_wording(
    operations: Iterable[Operation], aliases: Mapping[str, Operation] | None = None
) -> dict[str, Operation]:
    """Wording -> operation id: the vocabulary wording of each of ``operations``, then aliases.

    An alias is a format's own spelling of an operation
    (``"signing blinded c"`` for ``signing``); it may not be the vocabulary
    wording of another operation.

    Raises:
        ValueError: an alias names another operation's vocabulary wording.
    """
    table = {OPERATION_WORDING[op]: op for op in operations}
    for alias, op in (aliases or {}).items():
        if table.get(alias, op) != op:
            raise ValueError(f"alias {alias!r} of {op} is the wording of {table[alias]}")
        table[alias] = op
    return table


BLINDSIG_OPERATIONS: Final[tuple[Operation, ...]] = tuple(
    op for op in OPERATION_ORDER if op not in HELPER_OPERATIONS and op not in TALER_OPERATIONS
)
"""CS's blind-signature operations in the appendix's order (RSA has a subset); not the
scheme-independent layer's, which no thesis table or upstream log has."""

RSA_OPERATIONS: Final[tuple[Operation, ...]] = (
    "key_generation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
)
"""RSA's blind-signature operations (one blinding call, no r derivation)."""

THESIS_BLINDSIG_WORDING: Final = operations_by_wording(BLINDSIG_OPERATIONS)
"""The thesis's ``10x …`` rows: the vocabulary wording, no alias."""

THESIS_HELPER_WORDING: Final = operations_by_wording(
    op for op in OPERATION_ORDER if op in HELPER_OPERATIONS
)
"""The thesis's security-module rows (``100 parallel signature operations``): no alias."""

PERF_CRYPTO_RSA_WORDING: Final = operations_by_wording(RSA_OPERATIONS)
"""``perf_crypto_rsa``'s ``10x 2048-signing``: the vocabulary wording, no alias."""

PERF_CRYPTO_CS_ALIASES: Final[dict[str, Operation]] = {
    "derive blinding secrets": "blinding_secret_derivation",
    "calculating the blinded c": "blinding",
    "signing blinded c": "signing",
    "unblinding s": "unblinding",
    "verifying signatures": "verifying",
}
"""``perf_crypto_cs``'s own words for the operations it does not word as the thesis does."""

PERF_CRYPTO_CS_WORDING: Final = operations_by_wording(
    ("key_generation", "r_derivation"), PERF_CRYPTO_CS_ALIASES
)
"""``perf_crypto_cs``'s ``10x …`` lines: two vocabulary wordings and the aliases."""

TEST_HELPER_KINDS: Final[dict[str, Operation]] = {
    "sequential": "helper_sequential_signing",
    "parallel": "helper_parallel_signing",
    "batch": "helper_batch_signing",
}
"""``test_helper_*``'s ``(kind)``: the vocabulary wording is ``"<kind> signature operations"``."""
