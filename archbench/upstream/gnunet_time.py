"""GNUnet's printed relative times (``GNUNET_STRINGS_relative_time_to_string``) in ns.

Every time GNUnet's ``perf_crypto_*`` and Taler's ``test_helper_*`` print is
``GNUNET_STRINGS_relative_time_to_string`` with rounding on: an integer in
µs, ms, s, m, h or days, truncated toward zero. A value moves to the next
unit when it is above 5 of it (5000 µs -> ms, 5000 ms -> s, 300 s -> m,
300 m -> h, 120 h -> days) or when it is an exact multiple of it. So
``34 ms`` is a time in [34 ms, 35 ms), while ``4 ms`` can only come from
exactly 4000 µs: the uncertainty of a value of 5 or more is one printed
unit, of a smaller value one unit of the next smaller unit (1 µs for ms).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from archbench.inputs import quote
from archbench.result import MAX_NS

_NS_PER_UNIT: Final[dict[str, int]] = {
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3_600 * 1_000_000_000,
    "days": 86_400 * 1_000_000_000,
}
_SMALLER: Final[dict[str, str]] = {"ms": "µs", "s": "ms", "m": "s", "h": "m", "days": "h"}
_UNIT_SPELLINGS: Final[dict[str, str]] = {
    "µs": "µs",  # U+00B5, what GNUnet's source writes
    "μs": "µs",  # U+03BC, after Unicode normalisation
    "us": "µs",
    "Âµs": "µs",  # UTF-8 read as Latin-1 and saved again
    "ms": "ms",
    "s": "s",
    "m": "m",
    "h": "h",
    "day": "days",
    "days": "days",
}
_EXACT_BELOW: Final = 5
"""GNUnet moves to a larger unit early only above 5 of it; smaller values there are exact."""

_DURATION: Final = re.compile(r"^(\d+)\s*(\S+)$")


def small_int(digits: str) -> int:
    """``int(digits)``, or a value past every limit for absurdly long digit runs."""
    return int(digits) if len(digits) <= 12 else 10**12


@dataclass(frozen=True)
class Duration:
    """One GNUnet relative time as printed, in ns."""

    printed: str
    """The text as printed, e.g. ``"34 ms"``."""
    ns: int
    """The printed value in ns (a lower bound: GNUnet truncates toward zero)."""
    uncertainty_ns: int
    """The true time lies in ``[ns, ns + uncertainty_ns)``."""


def parse_duration(text: str) -> Duration:
    """Read a time printed by ``GNUNET_STRINGS_relative_time_to_string`` (rounding on).

    ``"34 ms"`` is 34 000 000 ns with an uncertainty of 1 ms; ``"712 µs"``
    712 000 ns ± 1 µs; ``"4 ms"``, printed in ms only because it was exactly
    4000 µs, 4 000 000 ns with an uncertainty of 1 µs. ``"0 ms"`` is 0 ns
    (less than GNUnet's 1 µs clock step).

    Raises:
        ValueError: ``text`` is not an integer followed by µs, ms, s, m, h,
            day or days (``"forever"`` included).
    """
    match = _DURATION.match(text.strip())
    unit = _UNIT_SPELLINGS.get(match.group(2)) if match else None
    if match is None or unit is None:
        raise ValueError(f"{text!r} is not a GNUnet time (an integer and µs, ms, s, m, h or days)")
    if len(match.group(1)) > 19 or int(match.group(1)) * _NS_PER_UNIT[unit] > MAX_NS:
        raise ValueError(
            f"{quote(text.strip())} is longer than any run (at most {MAX_NS} ns, about 292 years)"
        )
    value = int(match.group(1))
    if value == 0:
        return Duration(text.strip(), 0, _NS_PER_UNIT["µs"])
    width = _NS_PER_UNIT[unit]
    if unit in _SMALLER and value < _EXACT_BELOW:
        width = _NS_PER_UNIT[_SMALLER[unit]]
    return Duration(text.strip(), value * _NS_PER_UNIT[unit], width)
