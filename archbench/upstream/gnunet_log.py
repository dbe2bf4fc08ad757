"""Saved output of GNUnet's ``perf_crypto_*`` and Taler's ``test_helper_*``: lines to samples.

Four tools print timings that the thesis appendix quotes:

* GNUnet's ``perf_crypto_rsa`` (``src/util/perf_crypto_rsa.c``): per key size,
  ``10x 2048-signing took 34 ms`` for key generation, blinding, signing,
  unblinding and verifying;
* GNUnet's ``perf_crypto_cs`` (``src/util/perf_crypto_cs.c``):
  ``10x key generation took 1043 µs``, ``10x r0, r1 derive and R1,R2
  calculation took …``, ``10x derive blinding secrets took …``, ``10x
  calculating the blinded c took …`` (blinding), ``10x signing blinded c
  took …``, ``10x unblinding s took …``, ``10x verifying signatures took …``;
* GNU Taler's ``test_helper_rsa`` and ``test_helper_cs``
  (``src/util/test_helper_*.c`` of the exchange), on stderr:
  ``100 (sequential) signature operations took 355 ms``, one
  ``100 (parallel) signature operations took …`` per client process, then
  ``800 (parallel) signature operations took … (total real time)``. Newer
  releases also print ``   4 (batch) signature operations took …``, which
  no archbench operation matches: such lines are skipped with a reason.

Their operation words are looked up in :mod:`archbench.upstream.wording`
(the vocabulary's wording and named aliases), their times read by
:mod:`archbench.upstream.gnunet_time`, and which test_helper printed a line
found by :mod:`archbench.upstream.taler_helper`. ``0 ms`` (nothing
measurable on GNUnet's µs clock) and ``forever`` are skipped with a reason:
a stored sample must be positive.

Each importable line becomes one sample (``Row.samples_ns``) of the row of
its scheme, key size, operation and printed count (``ops_per_block``: 10
for ``10x``, 100 or 800 for the security module). Lines of the same row,
in one file or several, are pooled: the eight client lines of the parallel
helper benchmark, or repeated runs. A row of one sample keeps the text as
printed (``Row.printed``); ``Row.uncertainty_ns`` is the largest
truncation width of its samples.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from archbench.errors import ResultsError
from archbench.inputs import quote
from archbench.result import Operation, Row, Scheme
from archbench.upstream.gnunet_time import Duration, parse_duration, small_int
from archbench.upstream.taler_helper import helper_scheme_and_bits
from archbench.upstream.wording import (
    PERF_CRYPTO_CS_WORDING,
    PERF_CRYPTO_RSA_WORDING,
    TEST_HELPER_KINDS,
)

Tool = Literal["perf_crypto_cs", "perf_crypto_rsa", "test_helper_cs", "test_helper_rsa"]

_SUITE: Final[dict[Tool, str]] = {
    "perf_crypto_cs": "blindsig",
    "perf_crypto_rsa": "blindsig",
    "test_helper_cs": "security-module",
    "test_helper_rsa": "security-module",
}

MAX_OPS: Final = 1_000_000_000
"""Most operations one printed block may hold (perf_crypto_* run 10 to 10 000)."""
MIN_RSA_BITS: Final = 512
MAX_RSA_BITS: Final = 16_384

_BATCH: Final = "batch"
"""test_helper's ``(batch)`` lines: no archbench operation matches them."""


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_RSA_LINE: Final = re.compile(
    r"(?:^|\s)(?P<count>\d+)x (?P<bits>\d+)-"
    rf"(?P<what>{_alternatives(PERF_CRYPTO_RSA_WORDING)}) took (?P<time>.+?)\s*$"
)
_CS_LINE: Final = re.compile(
    r"(?:^|\s)(?P<count>\d+)x "
    rf"(?P<what>{_alternatives(PERF_CRYPTO_CS_WORDING)}) took (?P<time>.+?)\s*$"
)
_HELPER_LINE: Final = re.compile(
    rf"(?:^|\s)(?P<count>\d+) \((?P<kind>{_alternatives([*TEST_HELPER_KINDS, _BATCH])})\) "
    r"signature operations took (?P<time>[^()]+?)\s*(?P<total>\(total real time\))?\s*$"
)


@dataclass(frozen=True)
class Measurement:
    """One importable line: a sample of one row."""

    tool: Tool
    scheme: Scheme
    key_bits: int | None
    operation: Operation
    ops_per_block: int
    duration: Duration
    line: int
    """1-based line number in its file."""

    @property
    def key(self) -> tuple[str, Scheme, int | None, Operation, int]:
        """(suite, scheme, key bits, operation, ops per block): the row it belongs to."""
        return (_SUITE[self.tool], self.scheme, self.key_bits, self.operation, self.ops_per_block)


@dataclass(frozen=True)
class Skipped:
    """A line in a known format that gives no sample, and why."""

    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class LogScan:
    """What one log held: its samples, and the lines that gave none."""

    source: str
    measurements: tuple[Measurement, ...]
    skipped: tuple[Skipped, ...]
    ignored: int
    """Non-blank lines in no known format (build output, log lines, progress dots)."""
    notes: tuple[str, ...]
    """Provenance worth keeping, e.g. where a test_helper key size came from."""

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools whose output the file holds, in order of first appearance."""
        return tuple(dict.fromkeys(m.tool for m in self.measurements))

    @property
    def rows(self) -> list[Row]:
        """The rows of this file alone (see :func:`build_rows`)."""
        return build_rows(self.measurements)


def scan_log(
    text: str, source: str, *, scheme: Scheme | None = None, rsa_bits: int | None = None
) -> LogScan:
    """Every importable line of one saved log, tool by tool and line by line.

    ``source`` names the file in messages and is read for a scheme or key
    size hint (``test_helper_rsa-2048.log``). ``scheme`` and ``rsa_bits``
    apply to test_helper lines only, which print neither.

    Raises:
        ResultsError: no line of any known tool gives a sample (the message
            names ``source``); a known line's time is unreadable; the scheme
            or key size of test_helper lines is unknown or contradicted.
    """
    measurements: list[Measurement] = []
    skipped: list[Skipped] = []
    notes: list[str] = []
    ignored = 0
    helper: tuple[Scheme, int | None] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        tool: Tool
        found_scheme: Scheme
        bits: int | None
        operation: Operation
        if (match := _RSA_LINE.search(line)) is not None:
            tool, found_scheme, bits = "perf_crypto_rsa", "RSA", small_int(match.group("bits"))
            operation = PERF_CRYPTO_RSA_WORDING[match.group("what")]
        elif (match := _CS_LINE.search(line)) is not None:
            tool, found_scheme, bits = "perf_crypto_cs", "CS", None
            operation = PERF_CRYPTO_CS_WORDING[match.group("what")]
        elif (match := _HELPER_LINE.search(line)) is not None:
            if match.group("kind") == _BATCH:
                skipped.append(
                    Skipped(number, line.strip(), "batch signing has no archbench operation")
                )
                continue
            if helper is None:
                helper = helper_scheme_and_bits(text, source, scheme, rsa_bits, notes)
            found_scheme, bits = helper
            tool = "test_helper_rsa" if found_scheme == "RSA" else "test_helper_cs"
            operation = TEST_HELPER_KINDS[match.group("kind")]
        else:
            if line.strip():
                ignored += 1
            continue
        time = match.group("time").strip()
        if time == "forever":
            skipped.append(Skipped(number, line.strip(), "GNUnet printed no finite time"))
            continue
        try:
            duration = parse_duration(time)
        except ValueError as exc:
            raise ResultsError(f"{source}, line {number}: {exc}: {line.strip()!r}") from exc
        if duration.ns == 0:
            skipped.append(
                Skipped(number, line.strip(), "0 ms: below GNUnet's 1 µs clock step, no sample")
            )
            continue
        count = int(match.group("count")) if len(match.group("count")) <= 10 else MAX_OPS + 1
        if count < 1:
            raise ResultsError(f"{source}, line {number}: a block of 0 operations: {line!r}")
        if count > MAX_OPS:
            raise ResultsError(
                f"{source}, line {number}: {quote(match.group('count'))} operations "
                f"in one block is more than any benchmark runs (at most {MAX_OPS})"
            )
        if bits is not None and not MIN_RSA_BITS <= bits <= MAX_RSA_BITS:
            raise ResultsError(
                f"{source}, line {number}: RSA {bits} bit is not a key size archbench "
                f"stores ({MIN_RSA_BITS} to {MAX_RSA_BITS})"
            )
        measurements.append(
            Measurement(tool, found_scheme, bits, operation, count, duration, number)
        )
    if not measurements:
        why = (
            f"; {len(skipped)} known line(s) gave no sample ({skipped[0].reason})"
            if skipped
            else ""
        )
        raise ResultsError(
            f"{source}: no timing of perf_crypto_cs, perf_crypto_rsa, test_helper_cs or "
            f"test_helper_rsa found ({ignored} other line(s) read{why}); expected lines "
            "such as '10x 2048-signing took 34 ms' or "
            "'100 (sequential) signature operations took 355 ms'"
        )
    return LogScan(source, tuple(measurements), tuple(skipped), ignored, tuple(notes))


def describe(scan: LogScan) -> str:
    """One line on what a log gave: tools, timings, rows, and the lines left out.

    ``perf_crypto_rsa.log: perf_crypto_rsa, 20 timing line(s) -> 20 row(s); 2 other
    line(s) ignored``, followed by an indented line per reason lines were
    skipped for and per note (where a key size came from).
    """
    rows = len(scan.rows)
    text = (
        f"{Path(scan.source).name}: {', '.join(scan.tools)}, "
        f"{len(scan.measurements)} timing line(s) -> {rows} row(s); "
        f"{scan.ignored} other line(s) ignored"
    )
    reasons: dict[str, list[int]] = {}
    for skip in scan.skipped:
        reasons.setdefault(skip.reason, []).append(skip.line)
    for reason, lines in reasons.items():
        text += f"\n  skipped line(s) {', '.join(map(str, lines))}: {reason}"
    for note in scan.notes:
        text += f"\n  {note}"
    return text


def parse_log(
    text: str, source: str, *, scheme: Scheme | None = None, rsa_bits: int | None = None
) -> list[Row]:
    """The rows of one saved log (tool auto-detected per line), as :func:`build_rows` makes them.

    Raises:
        ResultsError: see :func:`scan_log`.
    """
    return scan_log(text, source, scheme=scheme, rsa_bits=rsa_bits).rows


def build_rows(measurements: Iterable[Measurement]) -> list[Row]:
    """One row per (suite, scheme, key size, operation, block size), in order of first line.

    Samples are the printed values in ns, in line order; ``printed`` is the
    text of a row's only sample (None when it pooled several), and
    ``uncertainty_ns`` the largest truncation width of its samples.
    """
    groups: dict[tuple[str, Scheme, int | None, Operation, int], list[Duration]] = {}
    for m in measurements:
        groups.setdefault(m.key, []).append(m.duration)
    rows: list[Row] = []
    for (suite, scheme, bits, operation, ops), durations in groups.items():
        rows.append(
            Row(
                suite=suite,
                scheme=scheme,
                key_bits=bits,
                operation=operation,
                ops_per_block=ops,
                samples_ns=tuple(d.ns for d in durations),
                valid=True,
                printed=durations[0].printed if len(durations) == 1 else None,
                uncertainty_ns=max(d.uncertainty_ns for d in durations),
            )
        )
    return rows
