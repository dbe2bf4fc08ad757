"""Units and number formatting: the one place a figure becomes text.

Speeds are stored in ns per operation (:func:`archbench.export.tidy_frame`);
a table shows them in ms or µs (of the appendix's block of 10 operations) or
as operations per second. Formatting follows the appendix: three decimals
below 5, whole numbers from 5 on, digits grouped from 10 000 on.
"""

from __future__ import annotations

import math
from typing import Final, Literal

from archbench.errors import ReportError

Unit = Literal["ms", "us", "ops/s"]

UNITS: Final[dict[str, Unit]] = {"ms": "ms", "us": "us", "µs": "us", "μs": "us", "ops/s": "ops/s"}
"""Accepted spellings of ``--unit``: milliseconds, microseconds, operations per second."""

NS_PER_MS: Final = 1_000_000
NS_PER_S: Final = 1_000_000_000

THREE_DECIMALS_BELOW: Final = 5
"""Speeds below this print three decimals ("3.332 ms"), from here on integers ("5 ms", "34 ms")."""

GROUP_DIGITS_FROM_MS: Final = 10_000
"""Numbers from here on get a thousands separator.

The appendix groups five-digit values ("10 000 ms") but prints four-digit ones
plainly ("2684 ms", "8000 ms"), as SI typography does; we follow the appendix.
"""

SCIENTIFIC_FROM: Final = 1e12
"""From here on numbers print as ``1.00e+30``: a float has ~16 significant digits, and a
speed of 10^12 is no measurement anyway. Non-zero values that would print ``0.000`` also
switch to it (``4.00e-05``)."""


def parse_unit(text: str) -> Unit:
    """``"ms"``, ``"us"``/``"µs"`` or ``"ops/s"``.

    Raises:
        ReportError: any other text; the message lists the choices.
    """
    try:
        return UNITS[text.strip()]
    except KeyError:
        raise ReportError(f"--unit {text!r} is not one of: ms, us (µs), ops/s") from None


def format_number(value: float, thousands_sep: str = " ") -> str:
    """A number as the appendix prints speeds: three decimals below 5, integers from 5.

    Values too small to show in three decimals (``0.00004`` -> ``"4.00e-05"``,
    not ``"0.000"``) or from :data:`SCIENTIFIC_FROM` on (``1e30`` ->
    ``"1.00e+30"``, not 31 invented digits) print in scientific notation
    with three significant digits.

    ``0.2044`` -> ``"0.204"``, ``4.9996`` -> ``"5"`` (decided on the rounded
    text), ``2684.4`` -> ``"2684"``, ``10000.4`` -> ``"10 000"``: from
    :data:`GROUP_DIGITS_FROM_MS` on, groups of three digits are separated by
    ``thousands_sep`` (LaTeX passes the thin space ``\\,``). Rounding is
    Python's round-half-even on the binary value.

    Raises:
        ValueError: ``value`` is NaN or infinite; such a value must never
            reach a table.
    """
    if not math.isfinite(value):
        raise ValueError(f"cannot format a non-finite number: {value!r}")
    if value != 0 and (float(f"{value:.3f}") == 0 or abs(value) >= SCIENTIFIC_FROM):
        # "0.000" would claim zero, and 30 digits of a float would invent 14.
        return f"{value:.2e}"
    decimals = f"{value:.3f}"
    if abs(float(decimals)) < THREE_DECIMALS_BELOW:
        return decimals
    whole = f"{value:.0f}"
    if abs(int(whole)) < GROUP_DIGITS_FROM_MS:
        return whole
    return f"{value:,.0f}".replace(",", thousands_sep)


def unit_label(unit: Unit, micro: str = "µ") -> str:
    """``"ms"``, ``"µs"`` (``micro`` + ``"s"``; LaTeX passes ``\\textmu{}``) or ``"ops/s"``."""
    return f"{micro}s" if unit == "us" else unit


def format_speed(
    value: float, unit: Unit = "ms", thousands_sep: str = " ", micro: str = "µ"
) -> str:
    """``value`` (already in ``unit``) with its unit: ``"0.204 ms"``, ``"10 000 ms"``.

    Raises:
        ValueError: ``value`` is not finite.
    """
    return f"{format_number(value, thousands_sep)} {unit_label(unit, micro)}"


def format_ms(value_ms: float, thousands_sep: str = " ") -> str:
    """A speed in ms as the appendix prints it: ``"0.204 ms"``, ``"2684 ms"``, ``"10 000 ms"``.

    Raises:
        ValueError: ``value_ms`` is not finite.
    """
    return format_speed(value_ms, "ms", thousands_sep)


def format_ratio(value: float, thousands_sep: str = " ") -> str:
    """A ratio to three significant digits, never in exponent notation.

    ``3.0195`` -> ``"3.02"``, ``0.0000760`` -> ``"0.0000760"``, ``13157.9``
    -> ``"13 158"`` (grouped from :data:`GROUP_DIGITS_FROM_MS` on).

    Raises:
        ValueError: ``value`` is not positive and finite.
    """
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"a ratio must be positive and finite, got {value!r}")
    if value >= SCIENTIFIC_FROM or value < 1e-12:
        return f"{value:.2e}"
    decimals = max(0, 2 - math.floor(math.log10(value)))
    text = f"{value:.{decimals}f}"
    # Rounding may add a digit (9.996 -> "10.00"); redo with the new magnitude.
    decimals = max(0, 2 - math.floor(math.log10(float(text))))
    text = f"{value:.{decimals}f}"
    if float(text) >= GROUP_DIGITS_FROM_MS:
        return f"{value:,.{decimals}f}".replace(",", thousands_sep)
    return text


def unit_value(thesis_ms: float, ops_per_s: float, unit: Unit) -> float:
    """A row's figure in ``unit``: ``thesis_ms`` in ms or µs, or ``ops_per_s`` (one operation)."""
    if unit == "ms":
        return thesis_ms
    if unit == "us":
        return thesis_ms * 1000
    return ops_per_s


def per_op_ns_in(per_op_ns: float, thesis_ops: int, unit: Unit) -> float:
    """ns per operation as a table shows it: ms or µs of ``thesis_ops`` operations, or ops/s."""
    if unit == "ops/s":
        return NS_PER_S / per_op_ns
    return per_op_ns * thesis_ops / NS_PER_MS * (1000 if unit == "us" else 1)
