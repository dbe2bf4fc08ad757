"""Reading ``sodium_bench`` output for the ``sodium`` suite (standard library only).

The driver's line protocol is documented at the top of ``sodium_bench.c``;
:func:`parse_driver_output` reads it without running anything and checks that
every row is one the suite knows (:data:`SIGNATURE_ROWS`, :data:`PER_BYTE_ROWS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from suite_common import SuiteError

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
            "(driver and suite_sodium.py do not match)"
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
    """Read ``sodium_bench`` stdout (protocol at the top of ``sodium_bench.c``).

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
