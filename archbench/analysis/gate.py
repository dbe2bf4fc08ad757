"""The CI gate of ``--fail-above``: counted rows that grew beyond a limit.

Modelled on iai-callgrind's regression limits (``--regression='Ir=2'``: fail when
instructions grew by more than 2 %): only instruction counts gate, because only they
are exact enough for a machine to fail a commit on; a timed row never does. A counted
row fails only when its change was called for its kind
(:func:`archbench.analysis.counting.count_kind`): beyond 0.1 % for an exact row, beyond
1 % and three times its range for a varying one, beyond 0.1 % of its constant for an
``exact+extra`` one (a constant with whole extra events in some blocks, libgcrypt's pool
mixing: :func:`archbench.analysis.counting.count_constants`); a random row (key
generation, whose counts vary from key to key by far more than 2 %) is never called, so
never gated.

Besides one ratio for every row (``--fail-above``), matrix.yml's ``limits:`` sets one per
operation or per row (:class:`RowLimit`, :func:`parse_row_limit`): the most specific
limit that names a row applies to it (scheme and size, then scheme, then operation),
else ``--fail-above``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, TypeVar

from archbench.inputs import did_you_mean
from archbench.result import OPERATION_ORDER, Metric

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


def limit_for(
    scheme: str, key_bits: int, operation: str, limits: Sequence[RowLimit], default: float | None
) -> float | None:
    """The limit of a row: the most specific of ``limits`` that names it, else ``default``."""
    named = [lim for lim in limits if lim.matches(scheme, key_bits, operation)]
    return max(named, key=lambda lim: lim.rank).ratio if named else default


class Ratio(Protocol):
    """Anything with a metric and a ratio after/before: a row comparison or a step."""

    @property
    def metric(self) -> Metric:
        """``time`` or ``instructions``."""
        ...

    @property
    def ratio(self) -> float:
        """After over before (B/A)."""
        ...

    @property
    def changed(self) -> bool:
        """True when the change lies beyond the noise (a verdict or a step)."""
        ...


R = TypeVar("R", bound=Ratio)


def over_limit(items: Iterable[R], limit: float) -> list[R]:
    """The counted items (``metric == "instructions"``) that changed and exceed ``limit``.

    ``limit`` is a ratio (``1.02``: 2 % more instructions per operation). Call it with
    :class:`archbench.analysis.RowComparison` rows of ``invoke compare`` or with the
    :class:`archbench.analysis.Step` s of a history; NaN ratios (invalid rows) never
    exceed it.

    Raises:
        ValueError: ``limit`` is not a finite number above 0.
    """
    if not math.isfinite(limit) or limit <= 0:
        raise ValueError(f"limit must be a ratio above 0, got {limit}")
    return [i for i in items if i.metric == "instructions" and i.changed and i.ratio > limit]


class Named(Protocol):
    """A row's name: a :class:`archbench.result.RowKey`."""

    @property
    def scheme(self) -> str:
        """``CS`` or ``RSA``."""
        ...

    @property
    def key_bits(self) -> int:
        """RSA size, 0 for none."""
        ...

    @property
    def operation(self) -> str:
        """The operation id."""
        ...


def over_limits(
    items: Iterable[tuple[Named, R]], default: float | None, limits: Sequence[RowLimit]
) -> list[tuple[R, float]]:
    """The counted items that changed beyond their row's limit, each with that limit.

    ``items``: (row key, row comparison or step); a row's limit is :func:`limit_for`'s
    (matrix.yml's ``limits:``, else ``default``, ``--fail-above``); rows without one are
    not gated.
    """
    out = []
    for key, item in items:
        limit = limit_for(key.scheme, key.key_bits, key.operation, limits, default)
        if limit is not None and over_limit([item], limit):
            out.append((item, limit))
    return out
