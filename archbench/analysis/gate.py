"""The CI gate of ``--fail-above``: counted rows that grew beyond a limit.

Modelled on iai-callgrind's regression limits (``--regression='Ir=2'``: fail when
instructions grew by more than 2 %): only instruction counts gate, because only they
are exact enough for a machine to fail a commit on; a timed row never does. A counted
row fails only when its change also lies beyond its own block-to-block spread (key
generation's counts vary from key to key by far more than 2 %).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Protocol, TypeVar

from archbench.result import Metric


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
