"""Import saved output of the upstream benchmarks into the results store.

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
  no archbench operation matches: such lines are skipped with a reason, and
  ``test_helper_eddsa`` output (the same lines) is refused.

Every time is GNUnet's ``GNUNET_STRINGS_relative_time_to_string`` with
rounding on: an integer in µs, ms, s, m, h or days, truncated toward zero.
A value moves to the next unit when it is above 5 of it (5000 µs -> ms,
5000 ms -> s, 300 s -> m, 300 m -> h, 120 h -> days) or when it is an exact
multiple of it. So ``34 ms`` is a time in [34 ms, 35 ms), while ``4 ms`` can
only come from exactly 4000 µs: the uncertainty of a value of 5 or more is
one printed unit, of a smaller value one unit of the next smaller unit (1 µs
for ms). ``0 ms`` (nothing measurable on GNUnet's µs clock) and
``forever`` are skipped with a reason: a stored sample must be positive.

Each importable line becomes one sample (``Row.samples_ns``) of the row of
its scheme, key size, operation and printed count (``ops_per_block``: 10
for ``10x``, 100 or 800 for the security module). Lines of the same row,
in one file or several, are pooled: the eight client lines of the parallel
helper benchmark, or repeated runs. A row of one sample keeps the text as
printed (``Row.printed``); ``Row.uncertainty_ns`` is the largest
truncation width of its samples.

``test_helper_cs`` and ``test_helper_rsa`` print the same lines, and
neither prints the RSA key size (``RSA_KEYSIZE`` of its configuration). The
scheme comes from an explicit argument, from the log itself (``secmod-rsa``
or ``test-helper-cs`` in GNUnet log lines, ``RSA_KEYSIZE = 2048`` if the
configuration was saved along) or from the file name
(``test_helper_rsa-2048.log``); a conflict between them is an error.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from archbench import messages, safe_load
from archbench.errors import MatrixError, ResultsError
from archbench.matrix import did_you_mean
from archbench.platforms import Arch
from archbench.results import (
    MAX_NS,
    HarnessDocument,
    Operation,
    Parameters,
    Reference,
    Result,
    Row,
    Scheme,
    Setup,
    TargetInfo,
)

Tool = Literal["perf_crypto_cs", "perf_crypto_rsa", "test_helper_cs", "test_helper_rsa"]

HARNESS_VERSION: Final = "imported"
"""``harness_version`` of every imported result."""

PROFILE: Final = "imported"
"""``target.profile`` of every imported result: no image profile built it."""

NOTES: Final = (
    "values truncated toward zero; uncertainty_ns is one printed unit "
    "(one unit of the next smaller unit for values below 5, which GNUnet prints "
    "in that unit only when exact)"
)
"""The caveat every imported result carries in ``reference.notes``."""

NAME_PATTERN: Final = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
"""Target names and run ids become file and directory names (as in matrix.yml)."""

_SUITE: Final[dict[Tool, str]] = {
    "perf_crypto_cs": "blindsig",
    "perf_crypto_rsa": "blindsig",
    "test_helper_cs": "security-module",
    "test_helper_rsa": "security-module",
}

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
MAX_OPS: Final = 1_000_000_000
"""Most operations one printed block may hold (perf_crypto_* run 10 to 10 000)."""
MIN_RSA_BITS: Final = 512
MAX_RSA_BITS: Final = 16_384
_EXACT_BELOW: Final = 5


def _small_int(digits: str) -> int:
    """``int(digits)``, or a value past every limit for absurdly long digit runs."""
    return int(digits) if len(digits) <= 12 else 10**12


"""GNUnet moves to a larger unit early only above 5 of it; smaller values there are exact."""

_DURATION: Final = re.compile(r"^(\d+)\s*(\S+)$")

_RSA_WORDS: Final[dict[str, Operation]] = {
    "key generation": "key_generation",
    "blinding": "blinding",
    "signing": "signing",
    "unblinding": "unblinding",
    "verifying": "verifying",
}
_CS_WORDS: Final[dict[str, Operation]] = {
    "key generation": "key_generation",
    "r0, r1 derive and R1,R2 calculation": "r_derivation",
    "derive blinding secrets": "blinding_secret_derivation",
    "calculating the blinded c": "blinding",
    "signing blinded c": "signing",
    "unblinding s": "unblinding",
    "verifying signatures": "verifying",
}


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_RSA_LINE: Final = re.compile(
    rf"(?:^|\s)(?P<count>\d+)x (?P<bits>\d+)-(?P<what>{_alternatives(_RSA_WORDS)}) "
    r"took (?P<time>.+?)\s*$"
)
_CS_LINE: Final = re.compile(
    rf"(?:^|\s)(?P<count>\d+)x (?P<what>{_alternatives(_CS_WORDS)}) took (?P<time>.+?)\s*$"
)
_HELPER_LINE: Final = re.compile(
    r"(?:^|\s)(?P<count>\d+) \((?P<kind>sequential|parallel|batch)\) signature operations "
    r"took (?P<time>[^()]+?)\s*(?P<total>\(total real time\))?\s*$"
)

_HELPER_MARKER: Final = re.compile(
    r"(?:test[-_]helper|secmod|helper[-_]crypto)[-_](cs|rsa|eddsa)\b", re.IGNORECASE
)
_NAME_SCHEME: Final = re.compile(r"(?<![a-z])(cs|rsa|eddsa)(?![a-z])")
_KEYSIZE_SETTING: Final = re.compile(r"\bRSA_KEYSIZE\s*=\s*(\d+)", re.IGNORECASE)
_NAME_BITS: Final = (
    re.compile(r"rsa[-_.]?(\d{3,5})(?!\d)"),
    re.compile(r"(?<!\d)(\d{3,5})[-_.]?bits?(?![a-z])"),
)


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
            f"{safe_load.quote(text.strip())} is longer than any run (at most {MAX_NS} ns, "
            "about 292 years)"
        )
    value = int(match.group(1))
    if value == 0:
        return Duration(text.strip(), 0, _NS_PER_UNIT["µs"])
    width = _NS_PER_UNIT[unit]
    if unit in _SMALLER and value < _EXACT_BELOW:
        width = _NS_PER_UNIT[_SMALLER[unit]]
    return Duration(text.strip(), value * _NS_PER_UNIT[unit], width)


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
        found.setdefault(
            _small_int(match.group(1)), f"{safe_load.quote(match.group(0))} in the log"
        )
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


def _helper(
    text: str, source: str, scheme: Scheme | None, rsa_bits: int | None, notes: list[str]
) -> tuple[Scheme, int | None]:
    """Scheme and key size of a file's test_helper lines; a note says where the size came from."""
    found = _helper_scheme(text, source, scheme)
    if found == "CS":
        return found, None
    size, why = _helper_bits(text, source, rsa_bits)
    notes.append(f"{Path(source).name}: test_helper_rsa prints no key size; {size} bit from {why}.")
    return found, size


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
            tool, found_scheme, bits = "perf_crypto_rsa", "RSA", _small_int(match.group("bits"))
            operation = _RSA_WORDS[match.group("what")]
        elif (match := _CS_LINE.search(line)) is not None:
            tool, found_scheme, bits = "perf_crypto_cs", "CS", None
            operation = _CS_WORDS[match.group("what")]
        elif (match := _HELPER_LINE.search(line)) is not None:
            if match.group("kind") == "batch":
                skipped.append(
                    Skipped(number, line.strip(), "batch signing has no archbench operation")
                )
                continue
            if helper is None:
                helper = _helper(text, source, scheme, rsa_bits, notes)
            found_scheme, bits = helper
            tool = "test_helper_rsa" if found_scheme == "RSA" else "test_helper_cs"
            if match.group("kind") == "sequential":
                operation = "helper_sequential_signing"
            else:
                operation = "helper_parallel_signing"
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
                f"{source}, line {number}: {safe_load.quote(match.group('count'))} operations "
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
    raise MatrixError(f"--scheme {value!r}: use cs or rsa (the test_helper the logs come from)")


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


# --- the Setup box --------------------------------------------------------------------


class SetupFile(BaseModel):
    """The setup YAML of an import: the machine the logs were recorded on.

    Only ``cpu_model`` and ``cores`` are required; ``machine`` (``uname -m``)
    defaults to the one of ``--arch``, the rest to ``unknown``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_model: StrictStr = Field(min_length=1)
    cores: StrictInt = Field(ge=1, le=65_536)
    machine: StrictStr | None = None
    kernel: StrictStr = "unknown"
    os: StrictStr = "unknown"
    packages: dict[StrictStr, StrictStr | None] = Field(default_factory=dict)
    """Package -> version as the distribution names it (``libgnunetutil``, ``libsodium``…)."""
    gnunet_version: StrictStr | None = None
    gcc_version: StrictStr | None = None


SETUP_KEYS: Final = tuple(SetupFile.model_fields)


def _setup_problem(err: dict[str, Any]) -> str:
    loc = [str(p) for p in err["loc"]]
    where = ".".join(loc) or "<top level>"
    if err["type"] == "extra_forbidden":
        key = loc[-1]
        hint = did_you_mean(key, SETUP_KEYS)
        return f"  {where}: unknown key {key!r}; allowed: {', '.join(SETUP_KEYS)}{hint}"
    if err["type"] == "missing":
        return f"  {where}: required key missing"
    msg = messages.problem(err)
    if err["type"] == "string_type" and isinstance(err.get("input"), int | float):
        # YAML reads 0.19 and 1.10 as numbers; versions must be quoted.
        msg = msg.removesuffix(")") + ": write it in quotes)"
    return f"  {where}: {msg}"


def _machine(setup_machine: str | None, arch: Arch | None, source: str) -> str:
    if setup_machine is None or setup_machine == "unknown":
        return sorted(arch.uname_machines)[0] if arch is not None else "unknown"
    if arch is not None:
        try:
            matches = Arch.from_machine(setup_machine) is arch
        except ValueError:
            matches = False
        if not matches:
            raise MatrixError(
                f"{source}: machine {setup_machine!r} does not match --arch {arch.key} "
                f"(whose uname -m prints {' or '.join(sorted(arch.uname_machines))}); "
                "fix 'machine' or --arch"
            )
    return setup_machine


def parse_setup(data: object, source: str, arch: Arch | None = None) -> Setup:
    """Validate setup fields (a YAML mapping or the command line's) into a :class:`Setup`.

    With ``arch``, a missing ``machine`` becomes its ``uname -m`` name and a
    given one must belong to it.

    Raises:
        MatrixError: not a mapping, an unknown key (with "did you mean …?"),
            a missing ``cpu_model`` or ``cores``, a wrong type, or a machine
            of another architecture; the message names ``source`` and keys.
    """
    if not isinstance(data, dict):
        raise MatrixError(
            f"{source}: expected a mapping with {', '.join(SETUP_KEYS)}, got {type(data).__name__}"
        )
    try:
        parsed = SetupFile.model_validate(data)
    except ValidationError as exc:
        lines = [_setup_problem(dict(e)) for e in exc.errors()]
        raise MatrixError(
            f"{source}: invalid setup ({exc.error_count()} problem(s)):\n" + "\n".join(lines)
        ) from exc
    return Setup(
        cpu_model=parsed.cpu_model,
        cores=parsed.cores,
        machine=_machine(parsed.machine, arch, source),
        kernel=parsed.kernel,
        os=parsed.os,
        packages=dict(parsed.packages),
        gnunet_version=parsed.gnunet_version,
        gcc_version=parsed.gcc_version,
    )


def load_setup(
    path: Path, arch: Arch | None = None, overrides: Mapping[str, object] | None = None
) -> Setup:
    """Read a setup YAML file (keys of :class:`SetupFile`); ``overrides`` replace its keys.

    Raises:
        MatrixError: the file is unreadable, not YAML, has duplicate keys, or
            fails :func:`parse_setup`.
    """
    text = safe_load.read_text(path, MatrixError, "the setup file", 256 * 1024)
    data = safe_load.load_yaml(text, str(path), MatrixError)
    if overrides and isinstance(data, dict):
        data = {**data, **overrides}
    return parse_setup(data, str(path), arch)


# --- the result -----------------------------------------------------------------------


def read_log(path: Path) -> str:
    """A log's text: UTF-8, or Latin-1 for a log saved in a legacy locale.

    Raises:
        ResultsError: the file cannot be read.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read the log: {exc.strerror}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # "µs" is b"\xb5s" in Latin-1; every byte decodes, so this never fails.
        return data.decode("latin-1")


def log_paths(spec: str) -> list[Path]:
    """The files of a comma-separated list whose items may be glob patterns (``logs/*.log``).

    A pattern is expanded (sorted) only when no file has its literal name.

    Raises:
        ResultsError: the list is empty or a pattern matches no file.
    """
    paths: list[Path] = []
    for item in (i.strip() for i in spec.split(",")):
        if not item:
            continue
        if any(ch in item for ch in "*?[") and not Path(item).exists():
            matches = sorted(glob.glob(item))
            if not matches:
                raise ResultsError(f"{item}: no file matches this pattern")
            paths.extend(Path(m) for m in matches)
        else:
            paths.append(Path(item))
    if not paths:
        raise ResultsError("no log to import; name one or more saved outputs")
    return paths


def scan_files(
    paths: Sequence[Path], *, scheme: Scheme | None = None, rsa_bits: int | None = None
) -> list[LogScan]:
    """:func:`scan_log` of each file, in order.

    Raises:
        ResultsError: no file, a file named twice, or any file fails
            :func:`read_log` or :func:`scan_log`.
    """
    if not paths:
        raise ResultsError("no log to import; name one or more saved outputs")
    seen: dict[Path, Path] = {}
    for path in paths:
        resolved = path.resolve()
        if resolved in seen:
            raise ResultsError(
                f"{path}: named twice (also as {seen[resolved]}); its samples would count twice"
            )
        seen[resolved] = path
    return [scan_log(read_log(p), str(p), scheme=scheme, rsa_bits=rsa_bits) for p in paths]


def _check_name(value: str, what: str) -> None:
    if not NAME_PATTERN.match(value) or len(value) > 64:
        raise MatrixError(
            f"{what} {value!r}: use lower-case letters, digits, '.', '_' and '-' "
            "(it becomes a file name), at most 64 characters"
        )


def _enumerate(words: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def build_result(
    scans: Sequence[LogScan], setup: Setup, target: str, arch: Arch, run_id: str
) -> Result:
    """The ``archbench-result`` of scanned logs, marked as reference data.

    ``reference.source`` lists the files, ``citation`` the tools
    (``imported from perf_crypto_rsa output``), ``notes`` the truncation
    caveat and where test_helper key sizes came from. A ``machine`` of
    ``unknown`` becomes the ``uname -m`` name of ``arch``.

    Raises:
        MatrixError: ``target`` or ``run_id`` is not a valid name, or the
            setup's machine is of another architecture.
        ResultsError: ``scans`` is empty.
    """
    _check_name(target, "target name")
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", run_id):
        raise MatrixError(
            f"run id {run_id!r}: use letters, digits, '.', '_' and '-' (it becomes a directory)"
        )
    if not scans:
        raise ResultsError("no log to import; name one or more saved outputs")
    machine = _machine(setup.machine, arch, "setup")
    if machine != setup.machine:
        setup = setup.model_copy(update={"machine": machine})
    try:
        return _result(scans, setup, target, arch, run_id)
    except ValidationError as exc:
        raise ResultsError(f"cannot store the import: {messages.describe(exc)}") from exc


def _result(scans: Sequence[LogScan], setup: Setup, target: str, arch: Arch, run_id: str) -> Result:
    rows = build_rows(m for s in scans for m in s.measurements)
    tools = list(dict.fromkeys(t for s in scans for t in s.tools))
    notes = " ".join([NOTES + ".", *(n for s in scans for n in s.notes)])
    return Result(
        run_id=run_id,
        target=TargetInfo(
            name=target,
            arch=arch.key,
            platform=arch.platform,
            base=setup.os,
            profile=PROFILE,
        ),
        reference=Reference(
            source=", ".join(Path(s.source).name for s in scans),
            kind="imported",
            citation=f"imported from {_enumerate(tools)} output",
            notes=notes,
        ),
        harness=HarnessDocument(
            format="archbench-harness",
            version=1,
            harness_version=HARNESS_VERSION,
            started_at="unknown",
            duration_s=0.0,
            parameters=Parameters(
                iterations=max(r.ops_per_block for r in rows),
                repetitions=max(len(r.samples_ns) for r in rows),
                rsa_bits=tuple(sorted({r.key_bits for r in rows if r.key_bits is not None})),
            ),
            setup=setup,
            rows=tuple(rows),
        ),
    )


def import_logs(
    paths: Sequence[Path],
    setup: Setup,
    target: str,
    arch: Arch,
    run_id: str,
    *,
    scheme: Scheme | None = None,
    rsa_bits: int | None = None,
) -> Result:
    """Read saved upstream logs into one result: :func:`scan_files`, then :func:`build_result`.

    Raises:
        ResultsError: a log is unreadable, names no known timing, or its
            test_helper scheme or key size is unknown or contradicted.
        MatrixError: an invalid target name or run id, or a machine of
            another architecture.
    """
    return build_result(
        scan_files(paths, scheme=scheme, rsa_bits=rsa_bits), setup, target, arch, run_id
    )


def add_taler_helper_rows(doc: HarnessDocument) -> HarnessDocument:
    """Parse the ``taler-helper`` suite's raw logs into ``security-module`` rows.

    The harness keeps ``test_helper_rsa``/``test_helper_cs`` output verbatim
    (``suites["taler-helper"].extra["logs"]``, test name -> text); this turns
    it into rows with :func:`parse_log`, the scheme from the test's name and
    the RSA size from ``extra["rsa_bits"]``. A log that cannot be parsed sets
    the suite's ``error`` instead of raising, so the other suites' rows stay.
    Documents without the suite come back unchanged.
    """
    run = doc.suites.get("taler-helper")
    logs = run.extra.get("logs") if run is not None and run.error is None else None
    if run is None or not isinstance(logs, dict):
        return doc
    bits = run.extra.get("rsa_bits")
    rows: list[Row] = []
    try:
        for test, text in logs.items():
            rsa = str(test).endswith("_rsa")
            rows += parse_log(
                str(text),
                f"{test}.log",
                scheme="RSA" if rsa else "CS",
                rsa_bits=int(bits) if rsa and isinstance(bits, int) else None,
            )
    except ResultsError as exc:
        failed = run.model_copy(update={"error": f"cannot parse the logs: {exc}"})
        return doc.model_copy(update={"suites": {**doc.suites, "taler-helper": failed}})
    return doc.model_copy(update={"rows": (*doc.rows, *rows)})


GNUNET_PERF_SUITE: Final = "gnunet-perf"


def add_gnunet_perf_rows(doc: HarnessDocument) -> HarnessDocument:
    """Parse the ``gnunet-perf`` suite's raw logs into rows of suite ``gnunet-perf``.

    The harness keeps each run of ``perf_crypto_rsa``/``perf_crypto_cs``
    verbatim (``suites["gnunet-perf"].extra["logs"]``, ``"<program>#<run>"`` ->
    stdout). Every timing line becomes a sample (:func:`scan_log`); the lines
    of one row in different runs pool, so a row has one sample per run, in ns
    per block of 10 operations, with GNUnet's truncation as ``uncertainty_ns``.
    A log that cannot be parsed sets the suite's ``error`` instead of raising,
    so the other suites' rows stay. Documents without the suite come back
    unchanged.
    """
    run = doc.suites.get(GNUNET_PERF_SUITE)
    logs = run.extra.get("logs") if run is not None and run.error is None else None
    if run is None or not isinstance(logs, dict):
        return doc
    measurements: list[Measurement] = []
    try:
        for name, text in logs.items():
            measurements += scan_log(str(text), f"{name}.log").measurements
    except ResultsError as exc:
        failed = run.model_copy(update={"error": f"cannot parse the logs: {exc}"})
        return doc.model_copy(update={"suites": {**doc.suites, GNUNET_PERF_SUITE: failed}})
    rows = [r.model_copy(update={"suite": GNUNET_PERF_SUITE}) for r in build_rows(measurements)]
    return doc.model_copy(update={"rows": (*doc.rows, *rows)})
