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
operation or per row (:class:`archbench.matrix.RowLimit`): the most specific limit that
names a row applies to it (scheme and size, then scheme, then operation), else
``--fail-above`` (:func:`limit_for`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from archbench.matrix import RowLimit
from archbench.result import Metric


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
