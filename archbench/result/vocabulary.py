"""The host side's vocabulary: operation names, their wording, and the order rows appear in.

Operation ids are :data:`archbench.result.Operation`, the names the harness
(``harness/archbench_harness.py``) and the C driver (``harness/drivers/blindsig.c``)
emit; ``tests/unit/test_vocabulary.py`` checks both sides name the same set.
Wording is the thesis appendix's (``harness/CONTRACT.md``); parsers of foreign
formats read it through :mod:`archbench.upstream.wording`, which names their own
spellings (GNUnet's ``perf_crypto_cs``, Taler's ``test_helper_*``) as aliases.
"""

from __future__ import annotations

from typing import Final, NamedTuple, get_args

from archbench.result.row import HELPER_OPERATIONS, Operation, scheme_text

OPERATION_ORDER: Final[tuple[Operation, ...]] = get_args(Operation)
"""The thesis appendix's row order (the order :data:`archbench.result.Operation` lists
them in): operations in this order, CS before RSA, RSA by size."""

TALER_OPERATIONS: Final[tuple[Operation, ...]] = (
    "taler_key_generation",
    "taler_blinding_input",
    "taler_blinding",
    "taler_signing",
    "taler_unblinding",
    "taler_verifying",
)
"""GNU Taler's path: the calls of GNUnet's scheme-independent layer (0.21 and later).

Not thesis rows: reports put them in a table (and row group) of their own, never in
the appendix's tables, and each row's note says what work it holds relative to the
raw rows (``harness/drivers/blindsig_api.c``)."""

THESIS_OPS: Final = 10
"""Operations per figure in the appendix's blind-signature tables ("10x signing")."""

OPERATION_WORDING: Final[dict[str, str]] = {
    "key_generation": "key generation",
    "r_derivation": "r0, r1 derive and R1,R2 calculation",
    "blinding_secret_derivation": "derivation of blinding secrets",
    "blinding": "blinding",
    "signing": "signing",
    "unblinding": "unblinding",
    "verifying": "verifying",
    "helper_sequential_signing": "sequential signature operations",
    "helper_parallel_signing": "parallel signature operations",
    "helper_batch_signing": "batch signature operations",
    "taler_key_generation": "key generation (blind_sign_keys_create)",
    "taler_blinding_input": "blinding input values (get_blinding_input_values)",
    "taler_blinding": "blinding (message_blind_to_sign)",
    "taler_signing": "signing (blind_sign)",
    "taler_unblinding": "unblinding (blind_sig_unblind)",
    "taler_verifying": "verifying (blind_sig_verify)",
}
"""Operation id -> the thesis appendix's wording (``harness/CONTRACT.md``); the layer's
rows name the GNUnet call, since their work differs from the raw row's of that name."""

SHORT_WORDING: Final[dict[str, str]] = {
    **OPERATION_WORDING,
    "r_derivation": "r derivation",
    "blinding_secret_derivation": "blinding secrets",
    "taler_key_generation": "key generation",
    "taler_blinding_input": "blinding input",
    "taler_blinding": "blinding",
    "taler_signing": "signing",
    "taler_unblinding": "unblinding",
    "taler_verifying": "verifying",
}
"""Narrower wording for the cross-machine tables, whose columns are machines."""

OPERATION_GROUPS: Final[tuple[tuple[Operation, ...], ...]] = (
    ("key_generation",),
    ("r_derivation", "blinding_secret_derivation", "blinding"),
    ("signing",),
    ("unblinding",),
    ("verifying",),
    ("helper_sequential_signing",),
    ("helper_parallel_signing",),
    ("helper_batch_signing",),
    TALER_OPERATIONS,
)
"""The appendix's row groups, in order; tables separate them with an extra rule.

The layer's rows (:data:`TALER_OPERATIONS`) are one group after all the thesis's.

The security module's table also starts a group for each block size
("100 parallel" and "800 parallel signature operations").
"""

COMPARISON_ROWS: Final[tuple[tuple[str, tuple[Operation, ...], tuple[Operation, ...]], ...]] = (
    ("key generation", ("key_generation",), ("key_generation",)),
    (
        "derive R0, R1 & blinding",
        ("r_derivation", "blinding_secret_derivation", "blinding"),
        ("blinding",),
    ),
    ("signing", ("signing",), ("signing",)),
    ("unblinding", ("unblinding",), ("unblinding",)),
    ("verifying", ("verifying",), ("verifying",)),
)
"""(row, CS operations summed, RSA operations summed): the thesis's CS-vs-RSA comparison.

CS needs three calls where RSA needs one to blind a message, so the
discussion chapter compares their sum with RSA's blinding.
"""

SPEEDUP_HEADER: Final = "CS speedup"
"""Header of a ratio column comparing CS with RSA."""

SPEEDUP_DEFINITION: Final = (
    "A CS speedup is RSA time / CS time, the same as CS operations per second / RSA "
    "operations per second: above 1, CS is faster."
)
"""The one orientation of every CS-vs-RSA ratio, stated once in the chapter's opening."""

SPEEDUP_RSA_BITS: Final = 2048
"""RSA size of the per-machine speedup table (Taler's default denomination key size)."""

_GROUP_OF: Final[dict[str, int]] = {
    op: index for index, group in enumerate(OPERATION_GROUPS) for op in group
}
_RANK: Final[dict[str, int]] = {op: i for i, op in enumerate(OPERATION_ORDER)}


class AppendixRow(NamedTuple):
    """Where a row stands in the appendix's tables, the same on every machine.

    Not a measurement's identity (:class:`archbench.result.RowKey`): a table row
    gathers the machines' figures of one operation, block and scheme
    (``archbench.report.record.Record.appendix_row``).
    """

    operation: str
    ops: int
    """Operations per printed figure (10, or a security-module block: 100, 800)."""
    scheme: str
    key_bits: int
    """0 for CS."""


def sort_key(key: AppendixRow) -> tuple[int, int, bool, int]:
    """The appendix's order: operation, block size, CS before RSA, RSA by size."""
    operation, ops, scheme, bits = key
    return (_RANK.get(operation, len(_RANK)), ops, scheme != "CS", bits)


def group_key(key: AppendixRow) -> tuple[int, int]:
    """The row group (:data:`OPERATION_GROUPS`); each security-module block size is its own."""
    operation, ops, _, _ = key
    return (
        _GROUP_OF.get(operation, len(OPERATION_GROUPS)),
        ops if operation in HELPER_OPERATIONS else 0,
    )


def scheme_label(key: AppendixRow) -> str:
    """:func:`scheme_text` of an appendix row."""
    _, _, scheme, bits = key
    return scheme_text(scheme, bits)


def operation_label(key: AppendixRow, per_operation: bool, *, short: bool = False) -> str:
    """``"10x signing"``, ``"100 parallel signature operations"``; ``"signing"`` when
    ``per_operation`` (ops/s) or ``short`` (cross-machine tables)."""
    operation, ops, _, _ = key
    words = (SHORT_WORDING if short else OPERATION_WORDING)[operation]
    if operation in HELPER_OPERATIONS:
        return f"{ops} {words}"
    if per_operation or short:
        return words
    return f"{ops}x {words}"
