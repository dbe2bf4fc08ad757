"""What a blindsig block timed, named for reports' notes (``harness/CONTRACT.md``).

Pure: no docker, no I/O. The blindsig suite's default measurement is one call after
another on the same item, as GNUnet's own ``perf_crypto_*`` programs time it; the
matrix key ``fresh_items: true`` (driver ``--fresh-items``) is a deliberate difference
that every table of such a result names.
"""

from __future__ import annotations

from typing import Final

from archbench.result import Result

FRESH_ITEMS_NOTE: Final = (
    "fresh_items: every operation of a block ran on its own freshly prepared item, "
    "not one call after another on the same item as GNUnet's perf_crypto_* programs "
    "time it"
)
"""The note a table of a ``fresh_items: true`` result carries."""


def blindsig_notes(result: Result) -> tuple[str, ...]:
    """Notes naming a deliberate measurement difference of ``result``'s blindsig rows.

    Returns:
        ``(FRESH_ITEMS_NOTE,)`` when the harness recorded ``parameters.fresh_items``
        true, else ``()`` (the default measurement, reference data, or a document of
        a harness before the option, whose ``fresh_items`` is None).
    """
    parameters = result.harness.parameters
    if result.reference is None and parameters is not None and parameters.fresh_items:
        return (FRESH_ITEMS_NOTE,)
    return ()
