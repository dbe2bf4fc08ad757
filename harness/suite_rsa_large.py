"""The ``rsa-large`` suite: RSA key generation, sign and verify up to 16384-bit moduli.

``openssl speed rsa`` stops at 15360 bits; this suite runs ``rsa_large``
(built from ``rsa_large.c`` by the Makefile next to this module, against
libcrypto) which times RSASSA-PKCS1-v1_5 SHA-256 signing and verifying
through ``EVP_PKEY_sign``/``EVP_PKEY_verify`` on a precomputed digest (as
comparable to ``openssl speed rsa`` as a real signature can be; see the
comment at the top of ``rsa_large.c``), plus key generation timed on its own
with its own time budget. Every timed signature is verified outside the
timing and a tampered message must fail to verify; a size where that breaks
yields invalid rows.

The driver is run once per modulus size, so a size that hangs (a 16384-bit
key generation on a slow board) costs only its own rows.

Settings (``normalize_config``):

``bits``
    modulus sizes in bits, multiples of 8 in 1024..16384 (libcrypto's
    limit); default ``[2048, 4096, 8192, 16384]``.
``repetitions``
    timed sign blocks and verify blocks per size (default 3).
``max_time``
    time budget per size in s for calibration and repetitions, key
    generation excluded (default 60). Repetition r > 0 starts only if the time
    spent plus the previous repetition's duration fits; at least one runs.
``keygen_repetitions``
    key generations timed per size (default 1), one sample each.
``keygen_max_time``
    time budget per size in s for all its key generations (default 600: a
    16384-bit generation can take minutes); a generation still running then
    is aborted, and a size whose first generation is aborted is invalid.
``min_block_ns``
    calibration target in ns: blocks of 1, 2, 4, ... operations are tried
    until one lasts at least this long, and that size is timed (default
    1_000_000_000, i.e. 1 s: the clock's resolution and per-block overhead are
    below 1e-5 of a block, and 3 repetitions of sign plus verify stay a few
    seconds per size where one sign is fast). 0 times single operations.
``driver``
    path of the ``rsa_large`` executable (default: next to this module).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import suite_counting
from counting import CountError
from suite_common import (
    Progress,
    SuiteError,
    SuiteOutcome,
    SuiteTimeout,
    check_keys,
    make_row,
    run_command,
)

SUITE = "rsa-large"
DRIVER_NAME = "rsa_large"
DRIVER_FORMAT = "rsa-large"
DRIVER_FORMAT_VERSION = 1
SCHEME = "RSA"
OPERATIONS = ("key_generation", "sign", "verify")
TIMED_OPERATIONS = ("sign", "verify")

MIN_BITS = 1024
MAX_BITS = 16384
DEFAULT_BITS = (2048, 4096, 8192, 16384)
DEFAULT_REPETITIONS = 3
DEFAULT_MAX_TIME_S = 60.0
DEFAULT_KEYGEN_REPETITIONS = 1
DEFAULT_KEYGEN_MAX_TIME_S = 600.0
DEFAULT_MIN_BLOCK_NS = 1_000_000_000
MAX_MIN_BLOCK_NS = 10_000_000_000
MAX_REPETITIONS = 1000
MAX_TIME_S = 86400.0
# Slack on top of the budgets for the process timeout (see driver_timeout_s()).
TIMEOUT_SLACK_S = 120.0

ALLOWED_KEYS = (
    "bits",
    "repetitions",
    "max_time",
    "keygen_repetitions",
    "keygen_max_time",
    "min_block_ns",
    "driver",
)


def default_driver() -> str:
    """Path of the ``rsa_large`` executable next to this module."""
    return str(Path(__file__).resolve().parent / DRIVER_NAME)


def _int_setting(config: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SuiteError(f"{SUITE}: {key} = {value!r}; expected an integer in {low}..{high}")
    return value


def _seconds_setting(config: Mapping[str, Any], key: str, default: float) -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIME_S:
        raise SuiteError(
            f"{SUITE}: {key} = {value!r}; expected seconds, a number in (0, {MAX_TIME_S:g}]"
        )
    return float(value)


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the suite's settings and fill defaults (keys: see the module docstring).

    Returns:
        ``{"bits": [int], "repetitions": int, "max_time": float s,
        "keygen_repetitions": int, "keygen_max_time": float s,
        "min_block_ns": int ns, "driver": str path}``.

    Raises:
        SuiteError: unknown key, or a value of the wrong type or out of range;
            the message names the key, the value and what is allowed.
    """
    check_keys(SUITE, config, ALLOWED_KEYS)
    bits = config.get("bits", list(DEFAULT_BITS))
    allowed_bits = f"multiples of 8 in {MIN_BITS}..{MAX_BITS}"
    if not isinstance(bits, list) or not bits:
        raise SuiteError(f"{SUITE}: bits = {bits!r}; expected a non-empty list of {allowed_bits}")
    for b in bits:
        if isinstance(b, bool) or not isinstance(b, int) or not MIN_BITS <= b <= MAX_BITS:
            raise SuiteError(f"{SUITE}: bits contains {b!r}; allowed: {allowed_bits}")
        if b % 8:
            raise SuiteError(
                f"{SUITE}: bits contains {b}, not a multiple of 8; allowed: {allowed_bits}"
            )
    if len(set(bits)) != len(bits):
        raise SuiteError(f"{SUITE}: bits = {bits!r} lists a size twice")
    driver = config.get("driver", default_driver())
    if not isinstance(driver, str) or not driver:
        raise SuiteError(f"{SUITE}: driver = {driver!r}; expected the path of rsa_large")
    return {
        "bits": list(bits),
        "repetitions": _int_setting(config, "repetitions", DEFAULT_REPETITIONS, 1, MAX_REPETITIONS),
        "max_time": _seconds_setting(config, "max_time", DEFAULT_MAX_TIME_S),
        "keygen_repetitions": _int_setting(
            config, "keygen_repetitions", DEFAULT_KEYGEN_REPETITIONS, 1, MAX_REPETITIONS
        ),
        "keygen_max_time": _seconds_setting(config, "keygen_max_time", DEFAULT_KEYGEN_MAX_TIME_S),
        "min_block_ns": _int_setting(
            config, "min_block_ns", DEFAULT_MIN_BLOCK_NS, 0, MAX_MIN_BLOCK_NS
        ),
        "driver": driver,
    }


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
    """Parse the stdout of ``rsa_large`` (protocol at the top of ``rsa_large.c``).

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


def driver_argv(config: Mapping[str, Any], bits: int) -> list[str]:
    """The ``rsa_large`` command line measuring one size with the normalized ``config``."""
    return [
        config["driver"],
        "--bits",
        str(bits),
        "--repetitions",
        str(config["repetitions"]),
        "--min-block-ns",
        str(config["min_block_ns"]),
        "--max-time",
        repr(config["max_time"]),
        "--keygen-repetitions",
        str(config["keygen_repetitions"]),
        "--keygen-max-time",
        repr(config["keygen_max_time"]),
    ]


def driver_timeout_s(config: Mapping[str, Any]) -> float:
    """Wall-clock limit in s for one size's driver run.

    Key generation stops at ``keygen_max_time``; doubling calibration of sign
    and of verify each costs under 4 * ``min_block_ns`` (the blocks sum to
    about twice the last, which lasts under twice the target); repetitions stop
    within ``max_time`` plus one repetition. ``max_time`` is counted twice and
    ``TIMEOUT_SLACK_S`` added for hosts where one operation exceeds the target
    (a single 16384-bit sign under emulation).
    """
    min_block_s = config["min_block_ns"] / 1e9
    return float(
        config["keygen_max_time"] + 2 * config["max_time"] + 16 * min_block_s + TIMEOUT_SLACK_S
    )


def run(
    config: dict[str, Any],
    warn: Callable[[str], None],
    count: suite_counting.CountSession | None = None,
) -> SuiteOutcome:
    """Run ``rsa_large`` once per size and return its rows.

    A size whose run times out (see :func:`driver_timeout_s`) is reported
    through ``warn`` and left out; the others are kept.

    Args:
        config: normalized settings (see :func:`normalize_config`).
        warn: called with one-line warnings (omitted rows, timed-out sizes).
        count: counting mode (``--count-with``): each size runs under the
            counting QEMU with ``--count-markers``, blocks hold one operation
            (``min_block_ns`` 0) and valid rows get ``instructions``
            (:func:`suite_counting.attach_rsa_large`).

    Returns:
        Rows, ``tools["libcrypto"]`` = the OpenSSL version string the driver
        reports (``OpenSSL_version(OPENSSL_VERSION)``), ``parameters`` =
        ``config``, ``extra`` = driver ``meta`` lines, each size's raw stdout
        and the sizes that timed out.

    Raises:
        SuiteError: the driver is missing (install libssl-dev), exits non-zero,
            prints output that does not parse, or no size finished.
    """
    driver = config["driver"]
    if count is not None:
        config = {**config, "min_block_ns": 0}
    if not os.access(driver, os.X_OK):
        raise SuiteError(
            f"{SUITE}: driver {driver} is missing; add libssl-dev to the target's profile "
            "(harness/Makefile builds rsa_large only when pkg-config finds libcrypto)"
        )
    rows: list[dict[str, Any]] = []
    meta: dict[str, str] = {}
    stdout_by_size: dict[str, list[str]] = {}
    timed_out: list[int] = []
    progress = Progress(SUITE, len(config["bits"]))
    for bits in config["bits"]:
        progress.step(f"RSA-{bits} key generation, sign, verify")
        argv, count_out = driver_argv(config, bits), None
        if count is not None:
            argv, count_out = count.command(argv, f"rsa-large-{bits}")
        try:
            result = run_command(argv, driver_timeout_s(config))
        except SuiteTimeout as exc:
            # A missing or unstartable driver (plain SuiteError) still ends the suite.
            warn(f"{SUITE}: RSA-{bits} left out: {exc}")
            timed_out.append(bits)
            continue
        if result.returncode != 0:
            raise SuiteError(
                f"{SUITE}: rsa_large --bits {bits} exited with status {result.returncode}: "
                f"{result.stderr.strip()[-500:]}"
            )
        output = parse_driver_output(result.stdout)
        size_rows, warnings = rows_from_output(output, {**config, "bits": [bits]})
        for message in warnings:
            warn(f"{SUITE}: {message}")
        if count is not None and count_out is not None:
            try:
                suite_counting.attach_rsa_large(size_rows, result.stdout, count.read(count_out))
            except CountError as exc:
                raise SuiteError(f"{SUITE}: RSA-{bits}: counting: {exc}") from exc
        rows.extend(size_rows)
        meta.update(output.meta)
        stdout_by_size[str(bits)] = result.stdout.splitlines()
    if not stdout_by_size:
        raise SuiteError(f"{SUITE}: no size finished within its time limit")
    return SuiteOutcome(
        rows=rows,
        parameters=dict(config),
        tools={"libcrypto": meta.get("openssl_version", "unknown")},
        extra={"meta": meta, "driver_stdout": stdout_by_size, "timed_out_bits": timed_out},
    )
