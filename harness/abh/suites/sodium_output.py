"""Reading ``sodium_bench`` output for the ``sodium`` suite (standard library only).

The driver's line protocol is documented at the top of ``drivers/sodium_bench.c``;
:func:`parse_driver_output` reads it without running anything and checks that
every row is one the suite knows (:data:`SIGNATURE_ROWS`, :data:`PER_BYTE_ROWS`).
With ``--count-with``, :func:`attach_sodium` pairs the counts of the blocks the
driver marked (every ``calib``, ``warmup`` and ``sample`` line, in print order)
with the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from abh.suites.common import SuiteError
from abh.suites.counting import CountError, CountFile, counts_for, pair_counts

DRIVER_NAME = "sodium_bench"

SIGNATURE_ROWS = (
    ("Ed25519", "key_generation"),
    ("Ed25519", "sign"),
    ("Ed25519", "verify"),
    ("X25519", "derive"),
)
PER_BYTE_ROWS = (("XSalsa20", "stream"), ("SHA-256", "hash"), ("SHA-512", "hash"))
KNOWN_ROWS = frozenset(SIGNATURE_ROWS + PER_BYTE_ROWS)
BLOCK_KINDS = ("calib", "warmup", "sample")


@dataclass
class DriverRow:
    """One row of driver output, as printed (no units converted).

    Attributes:
        scheme, operation: as printed (``Ed25519``, ``sign``).
        size: message bytes for per-byte rows, None otherwise.
        blocks: ``{"calib" | "warmup" | "sample": [(ops, ns), ...]}`` in print order.
        invalid_reason: the driver's reason when a check failed, else None.
    """

    scheme: str
    operation: str
    size: int | None
    blocks: dict[str, list[tuple[int, int]]] = field(
        default_factory=lambda: {kind: [] for kind in BLOCK_KINDS}
    )
    invalid_reason: str | None = None


@dataclass
class DriverOutput:
    """Parsed ``sodium_bench`` stdout: ``meta`` key -> value text, rows in print order."""

    meta: dict[str, str]
    rows: list[DriverRow]


def _parse_int(text: str, what: str, lineno: int) -> int:
    if not text.isdigit():
        raise SuiteError(f"{DRIVER_NAME} output line {lineno}: {what} {text!r} is not a number")
    return int(text)


def _row_key(fields: list[str], lineno: int) -> tuple[str, str, int | None]:
    scheme, operation, param, nbytes = fields[1:5]
    if (scheme, operation) not in KNOWN_ROWS:
        raise SuiteError(
            f"{DRIVER_NAME} output line {lineno}: unknown row {scheme} {operation} "
            "(driver and abh/suites/sodium_output.py do not match)"
        )
    per_byte = (scheme, operation) in PER_BYTE_ROWS
    if param == "-":
        if per_byte or nbytes != "0":
            raise SuiteError(
                f"{DRIVER_NAME} output line {lineno}: {scheme} {operation} needs a size"
            )
        return scheme, operation, None
    size = _parse_int(param, "size", lineno)
    if not per_byte or size < 1 or _parse_int(nbytes, "bytes_per_op", lineno) != size:
        raise SuiteError(
            f"{DRIVER_NAME} output line {lineno}: {scheme} {operation} with size {param} "
            f"and bytes_per_op {nbytes} is inconsistent"
        )
    return scheme, operation, size


def parse_driver_output(text: str) -> DriverOutput:
    """Read ``sodium_bench`` stdout (protocol at the top of ``drivers/sodium_bench.c``).

    Args:
        text: the whole stdout.

    Returns:
        The ``meta`` records and the rows in the order they first appear.

    Raises:
        SuiteError: a malformed or unknown line, a row whose timed samples change their
            operation count, a record after ``end``, no ``end`` line (the driver died),
            or no ``sodium_version``; the message names the line number.
    """
    meta: dict[str, str] = {}
    rows: dict[tuple[str, str, int | None], DriverRow] = {}
    ended = False
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if ended:
            raise SuiteError(f"{DRIVER_NAME} output line {lineno}: text after 'end'")
        fields = line.split(" ")
        kind = fields[0]
        if kind == "end" and len(fields) == 1:
            ended = True
        elif kind == "meta" and len(fields) >= 3:
            meta[fields[1]] = " ".join(fields[2:])
        elif kind in BLOCK_KINDS and len(fields) == 7:
            key = _row_key(fields, lineno)
            row = rows.setdefault(key, DriverRow(*key))
            ops = _parse_int(fields[5], "operation count", lineno)
            ns = _parse_int(fields[6], "time", lineno)
            if ops < 1:
                raise SuiteError(f"{DRIVER_NAME} output line {lineno}: operation count 0")
            timed = row.blocks["sample"]
            if kind == "sample" and timed and timed[0][0] != ops:
                raise SuiteError(
                    f"{DRIVER_NAME} output line {lineno}: {key[0]} {key[1]} timed samples "
                    f"of {timed[0][0]} and {ops} operations"
                )
            row.blocks[kind].append((ops, ns))
        elif kind == "invalid" and len(fields) >= 6:
            key = _row_key(fields, lineno)
            row = rows.setdefault(key, DriverRow(*key))
            row.invalid_reason = " ".join(fields[5:])
        else:
            raise SuiteError(f"{DRIVER_NAME} output line {lineno}: cannot read {line[:80]!r}")
    if not ended:
        raise SuiteError(f"{DRIVER_NAME} output has no 'end' line: the driver stopped early")
    if "sodium_version" not in meta:
        raise SuiteError(f"{DRIVER_NAME} output has no 'meta sodium_version' line")
    return DriverOutput(meta=meta, rows=list(rows.values()))


SodiumKey = tuple[str, str, int | None, str, int]
"""sodium_bench block: (scheme, operation, message bytes or None, line kind, index)."""


def sodium_blocks(stdout: str) -> list[SodiumKey]:
    """The marked blocks of a ``sodium_bench`` run, in print order.

    Raises:
        CountError: a block line with the wrong number of fields.
    """
    keys: list[SodiumKey] = []
    seen: dict[tuple[str, str, int | None, str], int] = {}
    for line in stdout.splitlines():
        f = line.split(" ")
        if f[0] not in ("calib", "warmup", "sample"):
            continue
        if len(f) != 7 or not (f[3] == "-" or f[3].isdigit()):
            raise CountError(f"sodium_bench line {line!r}: not a block")
        where = (f[1], f[2], None if f[3] == "-" else int(f[3]), f[0])
        index = seen.get(where, 0)
        seen[where] = index + 1
        keys.append((*where, index))
    return keys


def attach_sodium(rows: Sequence[dict[str, Any]], stdout: str, counts: CountFile) -> None:
    """Set ``instructions`` of the valid sodium rows: one count per timed sample.

    Every marked block prints exactly one line (also a block whose calls
    failed), so all blocks pair; invalid rows get no counts.

    Raises:
        CountError: counts and block lines differ in number, or a
            valid row's sample has no count.
    """
    paired = pair_counts(sodium_blocks(stdout), counts)
    for row in rows:
        if not row.get("valid") or row.get("suite") != "sodium":
            continue
        scheme, op, size = str(row["scheme"]), str(row["operation"]), row.get("bytes_per_op")
        keys = [(scheme, op, size, "sample", i) for i in range(len(row["samples_ns"]))]
        row["instructions"] = counts_for(paired, keys, f"sodium {scheme} {op}")
