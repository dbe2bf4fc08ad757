"""Reading ``rsa_large`` output for the ``rsa-large`` suite: parse it, check it, make rows.

The driver's line protocol is documented at the top of ``drivers/rsa_large.c``.
parse_driver_output() checks the order of its lines, rows_from_output()
checks each size against the budget and calibration rules and builds the
rows; with ``--count-with``, attach_rsa_large() pairs the counts of the
blocks the driver marked (every ``keygen``, ``keygen_aborted``, ``calibrate``
and ``sample`` line, in print order) with the rows. Nothing here runs the
driver (``rsa_large`` does). Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from abh.suites.common import SuiteError, make_row
from abh.suites.counting import CountError, CountFile, counts_for, pair_counts

SUITE = "rsa-large"
DRIVER_FORMAT = "rsa-large"
DRIVER_FORMAT_VERSION = 1
SCHEME = "RSA"
OPERATIONS = ("key_generation", "sign", "verify")
TIMED_OPERATIONS = ("sign", "verify")

MIN_BITS = 1024


@dataclass
class SizeOutput:
    """Everything the driver printed about one modulus size.

    Attributes:
        bits: modulus size in bits.
        keygen_ns: wall time of each completed key generation, ns.
        keygen_aborted_ns: time spent in each generation the budget aborted, ns.
        keygen_taken: completed generations, per ``keygen_done``.
        keygen_exhausted: True when the keygen budget aborted a generation.
        calibration: operation -> [(ops, ns)] discarded calibration blocks, in order.
        samples: operation -> [(ops, ns)] timed blocks, in order.
        invalid: the driver's reason when the size must not be published.
        taken: timed repetitions, per ``done`` (None until then).
        exhausted: True when the ``max_time`` budget stopped the repetitions.
    """

    bits: int
    keygen_ns: list[int] = field(default_factory=list)
    keygen_aborted_ns: list[int] = field(default_factory=list)
    keygen_taken: int | None = None
    keygen_exhausted: bool = False
    calibration: dict[str, list[tuple[int, int]]] = field(
        default_factory=lambda: {op: [] for op in TIMED_OPERATIONS}
    )
    samples: dict[str, list[tuple[int, int]]] = field(
        default_factory=lambda: {op: [] for op in TIMED_OPERATIONS}
    )
    invalid: str | None = None
    taken: int | None = None
    exhausted: bool = False


@dataclass
class DriverOutput:
    """Parsed ``rsa_large`` output: ``meta`` key -> value, and sizes in output order."""

    meta: dict[str, str] = field(default_factory=dict)
    sizes: dict[int, SizeOutput] = field(default_factory=dict)


def _ints(fields: list[str], where: str, minimum: int = 0) -> list[int]:
    try:
        values = [int(f) for f in fields]
    except ValueError:
        raise SuiteError(f"{where}: expected integers, got {' '.join(fields)!r}") from None
    if any(v < minimum for v in values):
        raise SuiteError(f"{where}: values must be >= {minimum}, got {' '.join(fields)!r}")
    return values


def _flag(text: str, where: str) -> bool:
    if text not in ("0", "1"):
        raise SuiteError(f"{where}: budget flag must be 0 or 1, got {text!r}")
    return text == "1"


def parse_driver_output(text: str) -> DriverOutput:
    """Parse the stdout of ``rsa_large`` (protocol at the top of ``drivers/rsa_large.c``).

    Checks the line order the driver follows: per size, key generation lines,
    ``keygen_done``, then calibration and ``sample`` lines, then ``done``;
    one size at a time; ``end ok`` last.

    Args:
        text: the driver's whole stdout.

    Returns:
        The parsed output; ns values are ints, ``sample`` ns are > 0.

    Raises:
        SuiteError: wrong first line, unknown or malformed line (message names
            the line number), a block or verdict before the size's key
            generation or after its ``done``, counts that disagree with
            ``keygen_done``/``done``, a size left without ``done``, or a
            missing ``end ok`` (truncated output).
    """
    lines = text.splitlines()
    header = f"{DRIVER_FORMAT} {DRIVER_FORMAT_VERSION}"
    if not lines or lines[0].strip() != header:
        first = lines[0] if lines else ""
        raise SuiteError(f"rsa_large output starts with {first!r}, expected {header!r}")
    out = DriverOutput()
    current: SizeOutput | None = None
    ended = False
    for number, line in enumerate(lines[1:], start=2):
        where = f"rsa_large output line {number}"
        if ended:
            raise SuiteError(f"{where}: text after 'end ok': {line!r}")
        kind, _, rest = line.partition(" ")
        if kind == "meta":
            key, _, value = rest.partition(" ")
            if not key or not value:
                raise SuiteError(f"{where}: malformed meta line {line!r}")
            out.meta[key] = value
            continue
        if kind == "end":
            if rest != "ok":
                raise SuiteError(f"{where}: malformed end line {line!r}")
            if current is not None:
                raise SuiteError(f"rsa_large output: {current.bits} bits has no 'done' line")
            ended = True
            continue
        fields = rest.split(" ")
        if kind == "invalid":
            fields = rest.split(" ", 1)
        bits = _ints(fields[:1], where, MIN_BITS)[0] if fields and fields[0] else None
        if bits is None:
            raise SuiteError(f"{where}: malformed line {line!r}")
        if current is None or current.bits != bits:
            if kind not in ("keygen", "keygen_aborted"):
                raise SuiteError(f"{where}: {kind} for {bits} bits before its key generation")
            if current is not None:
                raise SuiteError(f"{where}: {bits} bits starts before {current.bits} is done")
            if bits in out.sizes:
                raise SuiteError(f"{where}: {bits} bits appears twice")
            current = out.sizes[bits] = SizeOutput(bits=bits)
        size = current
        keygen_open = size.keygen_taken is None
        if kind in ("keygen", "keygen_aborted") and len(fields) == 2 and keygen_open:
            ns = _ints(fields[1:], where, 1)[0]
            (size.keygen_ns if kind == "keygen" else size.keygen_aborted_ns).append(ns)
        elif kind == "keygen_done" and len(fields) == 3 and keygen_open:
            size.keygen_taken = _ints(fields[1:2], where)[0]
            size.keygen_exhausted = _flag(fields[2], where)
            if size.keygen_taken != len(size.keygen_ns):
                raise SuiteError(
                    f"{where}: keygen_done says {size.keygen_taken} generations, "
                    f"the output has {len(size.keygen_ns)}"
                )
            if size.keygen_exhausted != bool(size.keygen_aborted_ns):
                raise SuiteError(f"{where}: keygen budget flag disagrees with aborted generations")
        elif kind in ("calibrate", "sample") and len(fields) == 4 and not keygen_open:
            if not size.keygen_ns:
                raise SuiteError(f"{where}: {kind} for {bits} bits without a generated key")
            if size.invalid is not None:
                raise SuiteError(f"{where}: {kind} after the size was declared invalid")
            operation = fields[1]
            if operation not in TIMED_OPERATIONS:
                raise SuiteError(f"{where}: unknown operation {operation!r}")
            ops, ns = _ints(fields[2:], where, 1 if kind == "sample" else 0)
            if ops < 1:
                raise SuiteError(f"{where}: block of {ops} operations")
            target = size.samples if kind == "sample" else size.calibration
            target[operation].append((ops, ns))
        elif kind == "invalid" and len(fields) == 2 and size.invalid is None and not keygen_open:
            size.invalid = fields[1] or "invalid (no reason given)"
        elif kind == "done" and len(fields) == 3 and not keygen_open:
            size.taken = _ints(fields[1:2], where)[0]
            size.exhausted = _flag(fields[2], where)
            for operation in TIMED_OPERATIONS:
                if len(size.samples[operation]) != size.taken:
                    raise SuiteError(
                        f"{where}: done says {size.taken} repetitions, the output has "
                        f"{len(size.samples[operation])} {operation} samples"
                    )
            current = None
        else:
            raise SuiteError(f"{where}: unexpected or malformed line {line!r}")
    if not ended:
        raise SuiteError("rsa_large output has no 'end ok' line: the driver was cut short")
    return out


def _check_valid_size(size: SizeOutput, config: Mapping[str, Any]) -> None:
    """Check a size the driver did not declare invalid against the requested run.

    Raises:
        SuiteError: repetition counts that the budgets do not explain, blocks of
            different sizes, or a timed block size calibration did not arrive at.
    """
    label = f"rsa_large {size.bits} bits"
    taken, wanted = size.taken or 0, config["repetitions"]
    if not (taken == wanted or (size.exhausted and 1 <= taken < wanted)):
        raise SuiteError(f"{label}: {taken} of {wanted} repetitions (budget flag {size.exhausted})")
    ktaken, kwanted = size.keygen_taken or 0, config["keygen_repetitions"]
    if not (ktaken == kwanted or (size.keygen_exhausted and 1 <= ktaken < kwanted)):
        raise SuiteError(f"{label}: {ktaken} of {kwanted} key generations")
    for operation in TIMED_OPERATIONS:
        sizes = {ops for ops, _ in size.samples[operation]}
        calibration = size.calibration[operation]
        if len(sizes) != 1:
            raise SuiteError(f"{label} {operation}: blocks of sizes {sorted(sizes)}")
        expected = [2**i for i in range(len(calibration))]
        if not calibration or [ops for ops, _ in calibration] != expected:
            raise SuiteError(f"{label} {operation}: calibration is not 1, 2, 4, ... operations")
        if calibration[-1][0] != next(iter(sizes)):
            raise SuiteError(
                f"{label} {operation}: timed {next(iter(sizes))} operations per block, "
                f"calibration arrived at {calibration[-1][0]}"
            )


def rows_from_output(
    output: DriverOutput, config: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Turn parsed driver output into rows: per size key_generation, sign, verify.

    ``key_generation`` rows have one sample per generation (``ops_per_block``
    1); ``sign``/``verify`` rows one sample per timed block of the calibrated
    size. Rows of a size the driver declared invalid carry its reason; when
    such a row has no timed block it keeps the last discarded one (for key
    generation: the time spent before the budget aborted it) so the failure
    stays visible, and a row with nothing at all is left out with a warning.

    Args:
        output: parsed driver output.
        config: normalized settings (``bits``, ``repetitions``, ``keygen_repetitions``).

    Returns:
        (rows in ``config["bits"]`` order, one-line warnings).

    Raises:
        SuiteError: a requested size missing from the output, an unrequested
            one present, or a valid size that fails the checks of the budget
            and calibration rules.
    """
    extra_sizes = sorted(set(output.sizes) - set(config["bits"]))
    if extra_sizes:
        raise SuiteError(f"rsa_large measured {extra_sizes} bits, which were not requested")
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for bits in config["bits"]:
        size = output.sizes.get(bits)
        if size is None:
            raise SuiteError(f"rsa_large output has nothing for {bits} bits")
        reason = size.invalid
        if reason is None:
            _check_valid_size(size, config)
        keygen_samples = size.keygen_ns
        keygen_reason = reason
        if not keygen_samples and size.keygen_aborted_ns:
            keygen_samples = size.keygen_aborted_ns[-1:]
            keygen_reason = f"{reason}; the sample is the time spent before the abort"
        common = {"key_bits": bits, "valid": reason is None}
        if keygen_samples:
            rows.append(
                make_row(
                    SUITE,
                    SCHEME,
                    "key_generation",
                    keygen_samples,
                    1,
                    invalid_reason=keygen_reason,
                    repetitions_requested=config["keygen_repetitions"],
                    budget_exhausted=size.keygen_exhausted,
                    **common,
                )
            )
        else:
            warnings.append(f"RSA-{bits} key_generation: no sample; row omitted")
        for operation in TIMED_OPERATIONS:
            blocks = size.samples[operation]
            if not blocks and reason is not None:
                blocks = [b for b in size.calibration[operation] if b[1] > 0][-1:]
            if not blocks:
                warnings.append(f"RSA-{bits} {operation}: no sample before the failure; omitted")
                continue
            rows.append(
                make_row(
                    SUITE,
                    SCHEME,
                    operation,
                    [ns for _, ns in blocks],
                    blocks[0][0],
                    invalid_reason=reason,
                    repetitions_requested=config["repetitions"],
                    budget_exhausted=size.exhausted,
                    **common,
                )
            )
    return rows, warnings


RsaKey = tuple[int, str, str, int]
"""rsa_large block: (modulus bits, operation, line kind, index among its kind)."""


def rsa_large_blocks(stdout: str) -> list[RsaKey]:
    """The marked blocks of one ``rsa_large`` run, in print order.

    ``keygen``/``keygen_aborted`` lines are ``key_generation`` blocks; each
    kind's index counts from 0 per size and operation.

    Raises:
        CountError: a block line with too few fields or a non-numeric size.
    """
    keys: list[RsaKey] = []
    seen: dict[tuple[int, str, str], int] = {}
    for line in stdout.splitlines():
        f = line.split(" ")
        if f[0] in ("keygen", "keygen_aborted"):
            if len(f) != 3 or not f[1].isdigit():
                raise CountError(f"rsa_large line {line!r}: not a key generation")
            where = (int(f[1]), "key_generation", f[0])
        elif f[0] in ("calibrate", "sample"):
            if len(f) != 5 or not f[1].isdigit():
                raise CountError(f"rsa_large line {line!r}: not a block")
            where = (int(f[1]), f[2], f[0])
        else:
            continue
        index = seen.get(where, 0)
        seen[where] = index + 1
        keys.append((*where, index))
    return keys


def attach_rsa_large(rows: Sequence[dict[str, Any]], stdout: str, counts: CountFile) -> bool:
    """Set ``instructions`` of the valid rows of one ``rsa_large`` run (one size).

    A size the driver declared invalid (an ``invalid`` line) gets no counts:
    its failed block was marked without a line, so counts and lines cannot be
    paired, and invalid rows carry no counts anyway.

    Returns:
        True when counts were attached, False for an invalid size.

    Raises:
        CountError: counts and block lines of a valid size differ in
            number, or a valid row's block has no count.
    """
    if any(line.startswith("invalid ") for line in stdout.splitlines()):
        return False
    paired = pair_counts(rsa_large_blocks(stdout), counts)
    for row in rows:
        if not row.get("valid") or row.get("suite") != "rsa-large":
            continue
        bits, op = int(row["key_bits"]), str(row["operation"])
        kind = "keygen" if op == "key_generation" else "sample"
        keys = [(bits, op, kind, i) for i in range(len(row["samples_ns"]))]
        row["instructions"] = counts_for(paired, keys, f"rsa-large RSA-{bits} {op}")
    return True
