"""matrix.yml's ``limits:``: the CI gate's limit per operation, scheme or row.

``--fail-above`` gives one ratio for every counted row; ``limits:`` one per operation
(``signing: 1.02``), per scheme's operation (``CS signing``) or per row (``RSA-4096 key
generation: 1.5``). The gate itself, which row changed beyond which limit, is
:mod:`archbench.analysis.gate`.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Final

from archbench.inputs import did_you_mean
from archbench.result import OPERATION_ORDER

MAX_LIMIT: Final = 100.0
"""Largest limit a ratio may be given (as ``--fail-above``)."""
_ROW: Final = re.compile(r"(?:(CS|RSA)(?:-(\d{3,5}))?\s+)?([a-z][a-z _]*[a-z])")


@dataclass(frozen=True)
class RowLimit:
    """A limit of one operation (``scheme`` and ``key_bits`` None), of one scheme's
    operation, or of one row (scheme and RSA size); ``ratio`` after/before, above 1."""

    operation: str
    ratio: float
    scheme: str | None = None
    key_bits: int | None = None

    def matches(self, scheme: str, key_bits: int, operation: str) -> bool:
        """True when this limit names the row ``scheme``/``key_bits`` (0: none)/``operation``."""
        return (
            self.operation == operation
            and self.scheme in (None, scheme)
            and self.key_bits in (None, key_bits)
        )

    @property
    def rank(self) -> int:
        """How specific the limit is: 2 a row, 1 a scheme's operation, 0 an operation."""
        return (self.scheme is not None) + (self.key_bits is not None)


def parse_row_limit(name: str, ratio: object) -> RowLimit:
    """The limit ``name: ratio`` of matrix.yml's ``limits:``.

    ``name``: an operation (``signing``, ``key generation`` or ``key_generation``), a
    scheme's operation (``CS signing``) or a row (``RSA-2048 signing``); ``ratio``: a
    number in (1, 100].

    Raises:
        ValueError: a name of another form or an unknown operation (the message lists
            the operations), or a ratio that is not a number in (1, 100].
    """
    got = _ROW.fullmatch(name.strip())
    operation = got.group(3).replace(" ", "_") if got else ""
    if got is None or operation not in OPERATION_ORDER:
        raise ValueError(
            f"{name!r} is not an operation or row; give an operation "
            f"({', '.join(o.replace('_', ' ') for o in OPERATION_ORDER)}), optionally after "
            "a scheme or row: 'CS signing', 'RSA-2048 signing'"
            + did_you_mean(
                operation.replace("_", " "), [o.replace("_", " ") for o in OPERATION_ORDER]
            )
        )
    if got.group(2) and got.group(1) != "RSA":
        raise ValueError(f"{name!r}: only RSA rows have a key size; write 'CS {got.group(3)}'")
    if (
        isinstance(ratio, bool)
        or not isinstance(ratio, int | float)
        or not math.isfinite(ratio)
        or not 1 < ratio <= MAX_LIMIT
    ):
        raise ValueError(
            f"{name!r}: limit {ratio!r} is not a ratio in (1, {MAX_LIMIT:g}], e.g. 1.02"
        )
    return RowLimit(
        operation,
        float(ratio),
        got.group(1),
        int(got.group(2)) if got.group(2) else None,
    )
