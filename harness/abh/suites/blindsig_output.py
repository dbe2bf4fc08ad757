"""The blindsig driver's stdout: its line format parsed into samples and verdicts.

The format is described at the top of ``drivers/blindsig.c``; CONTRACT.md says what
the harness makes of it. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from abh.suites.blindsig_rules import OPERATIONS, SchemeKey

DRIVER_NAME = "blindsig"
DRIVER_FORMAT = "archbench-blindsig"
DRIVER_FORMAT_VERSION = 2

STOP_REASONS: tuple[str, ...] = ("repetitions", "budget", "target", "invalid")
"""Why a pair stopped: all --repetitions taken, --max-time spent, the confidence
interval reached its target (--interactive), or a check failed."""

ROW_NOTE_PREFIX = "row_note:"
"""``meta row_note:<scheme>:<operation>``: the driver's note on a row whose GNUnet call
differs between blind-signature APIs (``drivers/blindsig_api.c``)."""

DiscardKind = Literal["calibration", "warmup"]
DISCARD_KINDS: tuple[DiscardKind, ...] = ("calibration", "warmup")


class HarnessError(Exception):
    """The run cannot produce a trustworthy document; main() exits with status 2."""


class DriverOutputError(HarnessError):
    """The driver's stdout is malformed, truncated or inconsistent with the request."""


@dataclass(frozen=True)
class Sample:
    """One timed block as reported by the driver.

    Attributes:
        scheme: "CS" or "RSA".
        key_bits: RSA modulus size in bits; None for CS.
        operation: operation id from CONTRACT.md.
        ops_per_block: operations inside the timed block.
        repetition: 0-based index of the block among the timed repetitions.
        ns: wall time of the block in nanoseconds (CLOCK_MONOTONIC); may be 0
            when the block was below clock resolution (the driver then marks
            the scheme invalid).
    """

    scheme: str
    key_bits: int | None
    operation: str
    ops_per_block: int
    repetition: int
    ns: int


@dataclass(frozen=True)
class Discard:
    """A block that was run and thrown away (calibration round or warmup).

    Attributes:
        scheme, key_bits, operation, ops_per_block, ns: as in Sample.
        kind: "calibration" or "warmup".
        index: 0-based index among the pair's blocks of that kind.
    """

    scheme: str
    key_bits: int | None
    operation: str
    kind: DiscardKind
    ops_per_block: int
    index: int
    ns: int


@dataclass(frozen=True)
class PairDone:
    """The driver's closing line for one (scheme, bits) pair.

    Attributes:
        taken: timed repetitions taken.
        budget_exhausted: the --max-time budget stopped it before --repetitions.
        elapsed_ns: the pair's time in ns (its repetitions', calibration and
            warmups included).
        stop: why it stopped, one of STOP_REASONS; None from drivers before
            the field was added.
    """

    taken: int
    budget_exhausted: bool
    elapsed_ns: int
    stop: str | None = None


@dataclass
class DriverOutput:
    """Parsed driver stdout.

    Attributes:
        meta: ``meta`` lines as key -> value (strings, possibly empty).
        samples: every ``sample`` line in output order.
        discards: every ``discard`` line in output order.
        done: (scheme, bits) -> its ``done`` line.
        invalid: (scheme, bits) -> reason for every ``invalid`` line.
    """

    meta: dict[str, str] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    discards: list[Discard] = field(default_factory=list)
    done: dict[SchemeKey, PairDone] = field(default_factory=dict)
    invalid: dict[SchemeKey, str] = field(default_factory=dict)


def _parse_int(text: str, what: str, lineno: int, minimum: int) -> int:
    """Parse a decimal integer field of driver output.

    Args:
        text: the field text.
        what: field name for the error message.
        lineno: 1-based line number for the error message.
        minimum: smallest accepted value.

    Returns:
        The value.

    Raises:
        DriverOutputError: not a plain decimal integer, or below ``minimum``.
    """
    if not text.isdigit():
        raise DriverOutputError(f"driver output line {lineno}: {what} {text!r} is not an integer")
    value = int(text)
    if value < minimum:
        raise DriverOutputError(f"driver output line {lineno}: {what} {value} < {minimum}")
    return value


def _parse_scheme_bits(scheme: str, bits_text: str, lineno: int) -> SchemeKey:
    """Validate a (scheme, bits) pair of driver output; CS's bits 0 become None.

    Raises:
        DriverOutputError: unknown scheme, non-zero bits for CS, bits < 1 for RSA.
    """
    if scheme not in OPERATIONS:
        raise DriverOutputError(f"driver output line {lineno}: unknown scheme {scheme!r}")
    if scheme == "CS":
        if bits_text != "0":
            raise DriverOutputError(f"driver output line {lineno}: CS with key bits {bits_text!r}")
        return (scheme, None)
    return (scheme, _parse_int(bits_text, "key bits", lineno, 1))


def _parse_operation(scheme: str, operation: str, lineno: int) -> str:
    if operation not in OPERATIONS[scheme]:
        raise DriverOutputError(
            f"driver output line {lineno}: {scheme} has no operation {operation!r}"
        )
    return operation


def _parse_stop(text: str, lineno: int) -> str:
    if text not in STOP_REASONS:
        raise DriverOutputError(
            f"driver output line {lineno}: stop reason {text!r} is not one of"
            f" {', '.join(STOP_REASONS)}"
        )
    return text


def parse_driver_output(text: str) -> DriverOutput:
    """Parse the blindsig driver's stdout (format described in drivers/blindsig.c).

    Args:
        text: the complete stdout of one driver run.

    Returns:
        The parsed meta, samples, discarded blocks, pair summaries and
        invalid verdicts.

    Raises:
        DriverOutputError: wrong header or format version, a missing ``end``
            line (truncated output), malformed or duplicate lines, or content
            after ``end``.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    expected_header = f"{DRIVER_FORMAT}\t{DRIVER_FORMAT_VERSION}"
    if not lines or lines[0] != expected_header:
        first = lines[0] if lines else ""
        raise DriverOutputError(
            f"driver output does not start with {expected_header!r} (got {first[:80]!r})"
        )
    out = DriverOutput()
    seen: set[tuple[str, int | None, str, str, int]] = set()
    ended = False
    for lineno, line in enumerate(lines[1:], start=2):
        if ended:
            raise DriverOutputError(f"driver output line {lineno}: content after 'end'")
        fields = line.split("\t")
        kind = fields[0]
        if kind == "meta" and len(fields) == 3:
            out.meta[fields[1]] = fields[2]
        elif kind == "sample" and len(fields) == 7:
            scheme, bits = _parse_scheme_bits(fields[1], fields[2], lineno)
            sample = Sample(
                scheme=scheme,
                key_bits=bits,
                operation=_parse_operation(scheme, fields[3], lineno),
                ops_per_block=_parse_int(fields[4], "ops per block", lineno, 1),
                repetition=_parse_int(fields[5], "repetition", lineno, 0),
                ns=_parse_int(fields[6], "nanoseconds", lineno, 0),
            )
            ident = (scheme, bits, sample.operation, "sample", sample.repetition)
            if ident in seen:
                raise DriverOutputError(f"driver output line {lineno}: duplicate sample")
            seen.add(ident)
            out.samples.append(sample)
        elif kind == "discard" and len(fields) == 8:
            scheme, bits = _parse_scheme_bits(fields[1], fields[2], lineno)
            discard_kind = fields[4]
            if discard_kind not in DISCARD_KINDS:
                raise DriverOutputError(
                    f"driver output line {lineno}: unknown discard kind {discard_kind!r}"
                )
            discard = Discard(
                scheme=scheme,
                key_bits=bits,
                operation=_parse_operation(scheme, fields[3], lineno),
                kind="calibration" if discard_kind == "calibration" else "warmup",
                ops_per_block=_parse_int(fields[5], "ops per block", lineno, 1),
                index=_parse_int(fields[6], "index", lineno, 0),
                ns=_parse_int(fields[7], "nanoseconds", lineno, 0),
            )
            ident = (scheme, bits, discard.operation, discard.kind, discard.index)
            if ident in seen:
                raise DriverOutputError(f"driver output line {lineno}: duplicate {discard_kind}")
            seen.add(ident)
            out.discards.append(discard)
        elif kind == "done" and len(fields) in (6, 7):
            key = _parse_scheme_bits(fields[1], fields[2], lineno)
            if key in out.done:
                raise DriverOutputError(f"driver output line {lineno}: second 'done' for {key}")
            if fields[4] not in ("0", "1"):
                raise DriverOutputError(
                    f"driver output line {lineno}: budget flag {fields[4]!r} is not 0 or 1"
                )
            out.done[key] = PairDone(
                taken=_parse_int(fields[3], "repetitions taken", lineno, 0),
                budget_exhausted=fields[4] == "1",
                elapsed_ns=_parse_int(fields[5], "elapsed ns", lineno, 0),
                stop=_parse_stop(fields[6], lineno) if len(fields) == 7 else None,
            )
        elif kind == "invalid" and len(fields) == 4:
            key = _parse_scheme_bits(fields[1], fields[2], lineno)
            if key in out.invalid:
                raise DriverOutputError(f"driver output line {lineno}: second verdict for {key}")
            out.invalid[key] = fields[3] or "invalid (no reason given)"
        elif kind == "end" and fields[1:] == ["ok"]:
            ended = True
        else:
            raise DriverOutputError(f"driver output line {lineno}: unexpected {line[:80]!r}")
    if not ended:
        raise DriverOutputError("driver output has no 'end' line (truncated)")
    return out


def meta_int(meta: dict[str, str], key: str) -> int | None:
    """A non-negative integer ``meta`` value of the driver, or None when absent or malformed."""
    value = meta.get(key, "")
    return int(value) if value.isdigit() else None


def row_notes(meta: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """The driver's notes on rows, from its ``meta row_note:<scheme>:<operation>`` lines.

    The driver writes one where the GNUnet API it was built against calls a row's
    operation differently from 0.19/0.20, or changed the work inside it (the text says
    which and whether the row's work stayed the same); a note holds for every key size.

    Returns:
        (scheme, operation) -> note text.

    Raises:
        DriverOutputError: a note for a scheme or operation the driver does not measure,
            or an empty note.
    """
    notes: dict[tuple[str, str], str] = {}
    for key, text in meta.items():
        if not key.startswith(ROW_NOTE_PREFIX):
            continue
        scheme, sep, operation = key.removeprefix(ROW_NOTE_PREFIX).partition(":")
        if not sep or scheme not in OPERATIONS or operation not in OPERATIONS[scheme]:
            raise DriverOutputError(
                f"driver meta {key!r}: no such row (expected {ROW_NOTE_PREFIX}<scheme>:<operation>)"
            )
        if not text.strip():
            raise DriverOutputError(f"driver meta {key!r} is empty")
        notes[(scheme, operation)] = text
    return notes


def join_notes(*notes: str | None) -> str | None:
    """One row ``note`` from several remarks (driver's, harness's), in order; None if none."""
    kept = [note for note in notes if note]
    return "; ".join(kept) if kept else None
