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
  releases also print ``   4 (batch) signature operations took … (total real
  time)``: one batch request of 4 signatures (operation ``helper_batch_signing``).

Their operation words are looked up in :mod:`archbench.upstream.wording`
(the vocabulary's wording and named aliases). Their times are GNUnet's
``GNUNET_STRINGS_relative_time_to_string`` with rounding on: an integer in
µs, ms, s, m, h or days, truncated toward zero. A value moves to the next
unit when it is above 5 of it (5000 µs -> ms, 5000 ms -> s, 300 s -> m,
300 m -> h, 120 h -> days) or when it is an exact multiple of it. So
``34 ms`` is a time in [34 ms, 35 ms), while ``4 ms`` can only come from
exactly 4000 µs: the uncertainty of a value of 5 or more is one printed
unit, of a smaller value one unit of the next smaller unit (1 µs for ms),
:func:`parse_duration`. ``0 ms`` (nothing measurable on GNUnet's µs clock)
and ``forever`` are skipped with a reason: a stored sample must be positive.

GNU Taler's ``test_helper_cs`` and ``test_helper_rsa`` print the same lines,
and neither prints the RSA key size (``RSA_KEYSIZE`` of its configuration).
The scheme comes from an explicit argument, from the log itself
(``secmod-rsa`` or ``test-helper-cs`` in GNUnet log lines,
``RSA_KEYSIZE = 2048`` if the configuration was saved along) or from the file
name (``test_helper_rsa-2048.log``); a conflict between them is an error
(:func:`helper_scheme_and_bits`). ``test_helper_eddsa`` output (the same
lines) is refused.

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

from archbench.errors import MatrixError, ResultsError
from archbench.inputs import quote
from archbench.result import MAX_NS, Operation, Row, Scheme
from archbench.upstream.wording import (
    PERF_CRYPTO_CS_WORDING,
    PERF_CRYPTO_RSA_WORDING,
    TEST_HELPER_KINDS,
)

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

# Possessive (Python 3.11+): nothing is given back, so a match attempt is linear.
_DURATION: Final = re.compile(r"(\d++)\s*+(\S++)")


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
    match = _DURATION.fullmatch(text.strip())
    unit = _UNIT_SPELLINGS.get(match.group(2)) if match else None
    if match is None or unit is None:
        raise ValueError(
            f"{quote(text.strip())} is not a GNUnet time (an integer and µs, ms, s, m, h or days)"
        )
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


_HELPER_MARKER: Final = re.compile(
    r"(?:test[-_]helper|secmod|helper[-_]crypto)[-_](cs|rsa|eddsa)\b", re.IGNORECASE
)
_NAME_SCHEME: Final = re.compile(r"(?<![a-z])(cs|rsa|eddsa)(?![a-z])")
# Searched over a whole log: every repeat is bounded, so each attempt costs O(1).
_KEYSIZE_SETTING: Final = re.compile(r"\bRSA_KEYSIZE\s{0,64}+=\s{0,64}+(\d{1,64}+)", re.IGNORECASE)
_NAME_BITS: Final = (
    re.compile(r"rsa[-_.]?(\d{3,5})(?!\d)"),
    re.compile(r"(?<!\d)(\d{3,5})[-_.]?bits?(?![a-z])"),
)


def _helper_scheme(text: str, source: str, explicit: Scheme | None) -> Scheme:
    found: dict[str, str] = {}
    for match in _HELPER_MARKER.finditer(text):
        found.setdefault(match.group(1).lower(), f"{match.group(0)!r} in the log")
    for match in _NAME_SCHEME.finditer(Path(source).name.lower()):
        found.setdefault(match.group(1), f"the file name {Path(source).name!r}")
    if "eddsa" in found:
        raise ResultsError(
            f"{source}: this looks like test_helper_eddsa output ({found['eddsa']}); "
            "archbench stores CS and RSA blind signatures only, import test_helper_cs "
            "or test_helper_rsa logs"
        )
    if explicit is not None:
        other = [why for name, why in found.items() if name.upper() != explicit]
        if other:
            raise ResultsError(
                f"{source}: --scheme {explicit.lower()} contradicts {other[0]}; "
                "drop --scheme or import this file on its own"
            )
        return explicit
    if len(found) > 1:
        raise ResultsError(
            f"{source}: cannot tell test_helper_cs from test_helper_rsa output "
            f"({' and '.join(found.values())} disagree); pass --scheme cs or --scheme rsa"
        )
    if not found:
        raise ResultsError(
            f"{source}: test_helper_cs and test_helper_rsa print the same lines and this "
            "file names neither; pass --scheme cs or --scheme rsa, or put cs or rsa in "
            "the file name (test_helper_rsa-2048.log)"
        )
    return "CS" if "cs" in found else "RSA"


def _helper_bits(text: str, source: str, explicit: int | None) -> tuple[int, str]:
    """The RSA key size of a test_helper_rsa log, and where it came from."""
    name = Path(source).name
    found: dict[int, str] = {}
    for match in _KEYSIZE_SETTING.finditer(text):
        found.setdefault(small_int(match.group(1)), f"{quote(match.group(0))} in the log")
    for pattern in _NAME_BITS:
        for match in pattern.finditer(name.lower()):
            found.setdefault(int(match.group(1)), f"the file name {name!r}")
    if explicit is not None:
        other = [why for bits, why in found.items() if bits != explicit]
        if other:
            raise ResultsError(
                f"{source}: --rsa-bits {explicit} contradicts {other[0]}; "
                "drop --rsa-bits or import this file on its own"
            )
        return explicit, "--rsa-bits"
    if len(found) > 1:
        raise ResultsError(
            f"{source}: several RSA key sizes ({', '.join(map(str, found))}) in "
            f"{' and '.join(found.values())}; pass --rsa-bits"
        )
    if not found:
        raise ResultsError(
            f"{source}: test_helper_rsa does not print its RSA key size (RSA_KEYSIZE in "
            "test_helper_rsa.conf); pass --rsa-bits 2048, or name the file "
            "test_helper_rsa-2048.log"
        )
    ((bits, why),) = found.items()
    return bits, why


def helper_scheme_and_bits(
    text: str, source: str, scheme: Scheme | None, rsa_bits: int | None, notes: list[str]
) -> tuple[Scheme, int | None]:
    """Scheme and key size of a file's test_helper lines; a note says where the size came from.

    ``text`` is the whole log, ``source`` its file name (read for hints),
    ``scheme`` and ``rsa_bits`` what the user passed (None: not passed). The
    key size is None for CS; for RSA a line is appended to ``notes``.

    Raises:
        ResultsError: the scheme or key size is unknown, contradicted, or the
            log is test_helper_eddsa output; the message names ``source``.
    """
    found = _helper_scheme(text, source, scheme)
    if found == "CS":
        return found, None
    size, why = _helper_bits(text, source, rsa_bits)
    notes.append(f"{Path(source).name}: test_helper_rsa prints no key size; {size} bit from {why}.")
    return found, size


def parse_scheme(value: str) -> Scheme | None:
    """``--scheme``: ``cs`` or ``rsa`` (any case) as a :data:`Scheme`, ``""`` as None.

    Raises:
        MatrixError: any other value.
    """
    if not value.strip():
        return None
    upper = value.strip().upper()
    if upper == "CS":
        return "CS"
    if upper == "RSA":
        return "RSA"
    raise MatrixError(
        f"--scheme {quote(value)}: use cs or rsa (the test_helper the logs come from)"
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


_TOOK: Final = " took "
_HELPER_TAIL: Final = " signature operations"
_TOTAL: Final = "(total real time)"
_RSA_WORDS: Final = tuple(sorted(PERF_CRYPTO_RSA_WORDING, key=len, reverse=True))
_CS_WORDS: Final = tuple(sorted(PERF_CRYPTO_CS_WORDING, key=len, reverse=True))
_HELPER_KINDS: Final = tuple(sorted(TEST_HELPER_KINDS, key=len, reverse=True))


@dataclass(frozen=True)
class _Timing:
    """The fields of one timing line, as printed (digits still text)."""

    form: Literal["rsa", "cs", "helper"]
    count: str
    bits: str
    what: str
    time: str


def _trailing_digits(text: str) -> str:
    """The decimal digits (``\\d``) ``text`` ends with; linear in their number."""
    i = len(text)
    while i > 0 and text[i - 1].isdecimal():
        i -= 1
    return text[i:]


def _count_before(head: str) -> str | None:
    """The block count ``head`` ends with, when it starts the line or follows whitespace."""
    count = _trailing_digits(head)
    rest = head[: len(head) - len(count)]
    if not count or (rest and not rest[-1].isspace()):
        return None
    return count


def parse_timing_line(line: str) -> _Timing | None:
    """The timing of one line of perf_crypto_rsa, perf_crypto_cs or test_helper output.

    ``<count>x <bits>-<what> took <time>``, ``<count>x <what> took <time>`` and
    ``<count> (<kind>) signature operations took <time> [(total real time)]``,
    anywhere in the line after whitespace (a log prefix is allowed), ``<what>``
    and ``<kind>`` from the wording tables. None for any other line.

    Linear in ``len(line)`` by construction, whatever the line holds: one
    ``rfind`` of ``" took "``, then ``endswith`` tests over the finite wording
    tables and backward scans over digits; no regular expression, so nothing can
    backtrack (a line of 10^6 spaces costs one pass).
    """
    at = line.rfind(_TOOK)
    if at < 0:
        return None
    head, time = line[:at], line[at + len(_TOOK) :]
    if not time:
        return None
    for what in _RSA_WORDS:
        if head.endswith("-" + what):
            before = head[: len(head) - len(what) - 1]
            bits = _trailing_digits(before)
            before = before[: len(before) - len(bits)]
            if bits and before.endswith("x ") and (count := _count_before(before[:-2])):
                return _Timing("rsa", count, bits, what, time.strip())
    for what in _CS_WORDS:
        if head.endswith("x " + what) and (
            count := _count_before(head[: len(head) - len(what) - 2])
        ):
            return _Timing("cs", count, "", what, time.strip())
    if head.endswith(")" + _HELPER_TAIL):
        inner = head[: len(head) - len(_HELPER_TAIL) - 1]
        for kind in _HELPER_KINDS:
            if inner.endswith(" (" + kind) and (count := _count_before(inner[: -len(kind) - 2])):
                # As (?P<time>[^()]+?)\s*(\(total real time\))?\s*$ read it.
                body = time.rstrip()
                time = body.removesuffix(_TOTAL) if body.endswith(_TOTAL) else time
                if not time or "(" in time or ")" in time:
                    return None
                return _Timing("helper", count, "", kind, time.strip())
    return None


def log_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line number, text) of every printed line of a saved log.

    Lines end at ``\\n`` only (a ``\\r`` before it is dropped), as an editor
    numbers them; a line holding ``\\r`` progress updates gives each part it
    printed, all with that line's number. Form feeds, ``\\x1c``-``\\x1e`` and
    U+2028, at which ``str.splitlines`` would also split, stay inside the line.
    """
    out: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        out.extend((number, part) for part in line.split("\r"))
    return out


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


def _excerpt(line: str, limit: int = 200) -> str:
    """A line as :class:`Skipped` keeps it: stripped, at most ``limit`` characters."""
    text = line.strip()
    return text if len(text) <= limit else text[:limit] + "…"


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
    for number, line in log_lines(text):
        tool: Tool
        found_scheme: Scheme
        bits: int | None
        operation: Operation
        timing = parse_timing_line(line)
        if timing is None:
            if line.strip():
                ignored += 1
            continue
        if timing.form == "rsa":
            tool, found_scheme, bits = "perf_crypto_rsa", "RSA", small_int(timing.bits)
            operation = PERF_CRYPTO_RSA_WORDING[timing.what]
        elif timing.form == "cs":
            tool, found_scheme, bits = "perf_crypto_cs", "CS", None
            operation = PERF_CRYPTO_CS_WORDING[timing.what]
        else:
            if helper is None:
                helper = helper_scheme_and_bits(text, source, scheme, rsa_bits, notes)
            found_scheme, bits = helper
            tool = "test_helper_rsa" if found_scheme == "RSA" else "test_helper_cs"
            operation = TEST_HELPER_KINDS[timing.what]
        time = timing.time
        if time == "forever":
            skipped.append(Skipped(number, _excerpt(line), "GNUnet printed no finite time"))
            continue
        try:
            duration = parse_duration(time)
        except ValueError as exc:
            raise ResultsError(f"{source}, line {number}: {exc}: {quote(line.strip())}") from exc
        if duration.ns == 0:
            skipped.append(
                Skipped(number, _excerpt(line), "0 ms: below GNUnet's 1 µs clock step, no sample")
            )
            continue
        count = int(timing.count) if len(timing.count) <= 10 else MAX_OPS + 1
        if count < 1:
            raise ResultsError(
                f"{source}, line {number}: a block of 0 operations: {quote(line.strip())}"
            )
        if count > MAX_OPS:
            raise ResultsError(
                f"{source}, line {number}: {quote(timing.count)} operations "
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
