"""The ``sodium`` suite: libsodium primitives timed like pycryptopp's benchmark.

pycryptopp (Tahoe-LAFS's crypto library, 2012) timed each operation on its own
many times and printed best, Nth-best, mean, Nth-worst and worst per row: µs (ms
on slow boards) per operation for key generation, signing and verification, ns
per byte for ciphers and hashes at small / medium / large messages (1000, 10000,
100000 B). This suite measures the same kind of rows with libsodium through the
C driver ``sodium_bench`` (``sodium_bench.c``, built by ``make -C harness
sodium_bench`` when libsodium-dev is installed):

========  ==============  ==========  ==========================================
scheme    operation       param       libsodium call timed
========  ==============  ==========  ==========================================
Ed25519   key_generation  None        ``crypto_sign_keypair``
Ed25519   sign            None        ``crypto_sign_detached`` (32-byte message)
Ed25519   verify          None        ``crypto_sign_verify_detached``
X25519    derive          None        ``crypto_scalarmult`` (shared secret)
XSalsa20  stream          ``"N B"``   ``crypto_stream_xsalsa20_xor`` of N bytes
SHA-256   hash            ``"N B"``   ``crypto_hash_sha256`` of N bytes
SHA-512   hash            ``"N B"``   ``crypto_hash_sha512`` of N bytes
========  ==============  ==========  ==========================================

Settings (``normalize_config``): ``repetitions`` (timed samples per row, 64),
``warmup`` (discarded samples per row, 4), ``sizes`` (message bytes of the
per-byte rows, ``[1000, 10000, 100000]``), ``ops_per_sample`` (calls per timed
sample, 1 like pycryptopp, or ``"auto"``: the driver grows it per row until a
sample lasts 100 clock ticks / clock-read costs), ``nth`` (which Nth best / worst
the summary reports, 3), ``driver`` (path of ``sodium_bench``, default next to
this module), ``timeout_s`` (limit for the whole driver run, s, 900).

The driver's line protocol is documented at the top of ``sodium_bench.c``;
:func:`parse_driver_output` reads it and :func:`build_outcome` turns it into
rows, both without running anything.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import suite_counting
from counting import CountError
from suite_common import Progress, SuiteError, SuiteOutcome, check_keys, make_row, run_command

SUITE = "sodium"

DEFAULT_REPETITIONS = 64
DEFAULT_WARMUP = 4
DEFAULT_SIZES = (1000, 10000, 100000)
DEFAULT_NTH = 3
DEFAULT_TIMEOUT_S = 900.0
MAX_REPETITIONS = 1_000_000
MAX_FIXED_OPS = 10_000_000
MAX_SIZES = 32
MAX_SIZE_BYTES = 64 * 1024 * 1024
DRIVER_NAME = "sodium_bench"
PROFILE_PACKAGE = "libsodium-dev"

ALLOWED_KEYS = ("repetitions", "warmup", "sizes", "ops_per_sample", "nth", "driver", "timeout_s")

SIGNATURE_ROWS = (
    ("Ed25519", "key_generation"),
    ("Ed25519", "sign"),
    ("Ed25519", "verify"),
    ("X25519", "derive"),
)
PER_BYTE_ROWS = (("XSalsa20", "stream"), ("SHA-256", "hash"), ("SHA-512", "hash"))
KNOWN_ROWS = frozenset(SIGNATURE_ROWS + PER_BYTE_ROWS)
BLOCK_KINDS = ("calib", "warmup", "sample")


def default_driver_path() -> str:
    """Path of the ``sodium_bench`` binary next to this module (where make builds it)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), DRIVER_NAME)


def _int_setting(config: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise SuiteError(f"{SUITE}: {key} = {value!r}; allowed: a whole number in {lo}..{hi}")
    return value


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the suite's settings and fill defaults.

    Args:
        config: settings from the host (JSON object); keys in ``ALLOWED_KEYS``.

    Returns:
        ``{"repetitions": int, "warmup": int, "sizes": [bytes, ...],
        "ops_per_sample": int | "auto", "nth": int, "driver": str, "timeout_s": float}``.

    Raises:
        SuiteError: unknown key or a value outside what is allowed (the message names
            the key, the value and the allowed range).
    """
    check_keys(SUITE, config, ALLOWED_KEYS)
    repetitions = _int_setting(config, "repetitions", DEFAULT_REPETITIONS, 1, MAX_REPETITIONS)
    warmup = _int_setting(config, "warmup", DEFAULT_WARMUP, 0, MAX_REPETITIONS)
    nth = _int_setting(config, "nth", DEFAULT_NTH, 1, MAX_REPETITIONS)
    if nth > repetitions:
        raise SuiteError(
            f"{SUITE}: nth = {nth} but repetitions = {repetitions}; "
            "allowed: nth between 1 and repetitions"
        )
    sizes = config.get("sizes", list(DEFAULT_SIZES))
    if (
        not isinstance(sizes, list)
        or not 1 <= len(sizes) <= MAX_SIZES
        or any(
            isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= MAX_SIZE_BYTES
            for s in sizes
        )
        or len(set(sizes)) != len(sizes)
    ):
        raise SuiteError(
            f"{SUITE}: sizes = {sizes!r}; allowed: a list of 1..{MAX_SIZES} distinct "
            f"message sizes in bytes, each in 1..{MAX_SIZE_BYTES}"
        )
    ops = config.get("ops_per_sample", 1)
    if ops != "auto" and (
        isinstance(ops, bool) or not isinstance(ops, int) or not 1 <= ops <= MAX_FIXED_OPS
    ):
        raise SuiteError(
            f"{SUITE}: ops_per_sample = {ops!r}; allowed: a whole number in "
            f'1..{MAX_FIXED_OPS} or "auto"'
        )
    driver = config.get("driver", default_driver_path())
    if not isinstance(driver, str) or not driver:
        raise SuiteError(f"{SUITE}: driver = {driver!r}; allowed: a path to {DRIVER_NAME}")
    timeout = config.get("timeout_s", DEFAULT_TIMEOUT_S)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise SuiteError(f"{SUITE}: timeout_s = {timeout!r}; allowed: seconds > 0")
    return {
        "repetitions": repetitions,
        "warmup": warmup,
        "sizes": list(sizes),
        "ops_per_sample": ops,
        "nth": nth,
        "driver": driver,
        "timeout_s": float(timeout),
    }


def order_statistics(samples_ns: Sequence[int], ops_per_block: int, nth: int) -> dict[str, float]:
    """Best, Nth-best, mean, Nth-worst and worst time per operation, in ns.

    This is the pycryptopp convention (pyutil's ``benchutil.rep_bench``, which
    pycryptopp's benchmark printed as ``best: …, 3th-best: …, mean: …, 3th-worst:
    …, worst: … (of 8)``): every sample is one timed block; it is divided by the
    operations in the block, the per-operation times are sorted, and the k-th
    smallest is the "k-th best". Differences, on purpose: ``nth`` is chosen by the
    caller (pyutil derived it from the sample count, m = n // 4, and printed
    element m under the label m + 1); when fewer than ``nth`` samples exist the
    last one is used (pyutil's older ``min(m, n)`` rule), so with one sample all
    five figures are equal. For ns per byte divide by ``bytes_per_op``.

    Args:
        samples_ns: wall time of each timed block, ns (positive).
        ops_per_block: operations per block (>= 1).
        nth: which best / worst to report (>= 1; 3 in pycryptopp's 8-sample rows).

    Returns:
        ``{"best", "nth_best", "mean", "nth_worst", "worst"}``, ns per operation
        (floats); ``mean`` is the arithmetic mean.

    Raises:
        ValueError: no samples, a sample <= 0, ``ops_per_block`` < 1 or ``nth`` < 1.
    """
    if not samples_ns:
        raise ValueError("order_statistics needs at least one sample")
    if any(s <= 0 for s in samples_ns):
        raise ValueError("order_statistics: samples must be positive ns values")
    if ops_per_block < 1 or nth < 1:
        raise ValueError(
            f"order_statistics: ops_per_block = {ops_per_block} and nth = {nth} must be >= 1"
        )
    per_op = sorted(s / ops_per_block for s in samples_ns)
    k = min(nth, len(per_op))
    return {
        "best": per_op[0],
        "nth_best": per_op[k - 1],
        "mean": math.fsum(per_op) / len(per_op),
        "nth_worst": per_op[-k],
        "worst": per_op[-1],
    }


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


def _meta_number(meta: Mapping[str, str], key: str) -> float | None:
    try:
        return float(meta[key])
    except (KeyError, ValueError):
        return None


def _row_label(row: DriverRow) -> str:
    param = "" if row.size is None else f" {row.size} B"
    return f"{row.scheme} {row.operation}{param}"


def build_outcome(
    parsed: DriverOutput, config: Mapping[str, Any], warn: Callable[[str], None]
) -> SuiteOutcome:
    """Rows, tools and extra data from parsed driver output (nothing is run).

    A row whose check failed, or with a timed sample that read 0 ns (clock too coarse),
    becomes an invalid row; it keeps its positive timed samples, or, without any, its
    last non-zero warmup or calibration block (the contract's rule for blindsig); a
    row with no non-zero block at all is left out with a warning. ``extra`` holds the
    clock probe, libsodium's CPU features, each row's discarded blocks and a
    pycryptopp-style ``summary`` (:func:`order_statistics` of the valid rows, in µs per
    operation, or ns per byte for rows with ``bytes_per_op``).

    Args:
        parsed: from :func:`parse_driver_output`.
        config: normalized settings (:func:`normalize_config`).
        warn: receives one line per warning (missing row, samples near the clock's
            resolution, header / library version mismatch).

    Returns:
        The suite's :class:`SuiteOutcome`; ``tools["libsodium"]`` is the library's
        run-time version.
    """
    meta = parsed.meta
    version = meta["sodium_version"]
    header = meta.get("sodium_header_version")
    if header is not None and header != version:
        warn(f"{SUITE}: {DRIVER_NAME} was built against libsodium {header} but runs {version}")
    min_sample_ns = _meta_number(meta, "min_sample_ns")
    fixed_ops = config["ops_per_sample"] != "auto"
    rows: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    seen: set[tuple[str, str, int | None]] = set()
    for drow in parsed.rows:
        seen.add((drow.scheme, drow.operation, drow.size))
        label = _row_label(drow)
        timed = drow.blocks["sample"]
        reason = drow.invalid_reason
        zeros = sum(1 for _, ns in timed if ns == 0)
        if reason is None and zeros:
            reason = f"below clock resolution: {zeros} of {len(timed)} timed samples read 0 ns"
        if reason is None and not timed:
            reason = "the driver printed no timed sample"
        kept = [(ops, ns) for ops, ns in timed if ns > 0]
        if not kept and reason is not None:
            discarded = [b for b in drow.blocks["calib"] + drow.blocks["warmup"] if b[1] > 0]
            kept = discarded[-1:]
        if not kept:
            warn(f"{SUITE}: {label} left out: {reason}")
            continue
        ops_per_block = kept[0][0]
        samples = [ns for _, ns in kept]
        rows.append(
            make_row(
                SUITE,
                drow.scheme,
                drow.operation,
                samples,
                ops_per_block,
                param=None if drow.size is None else f"{drow.size} B",
                bytes_per_op=drow.size,
                valid=reason is None,
                invalid_reason=reason,
                repetitions_requested=config["repetitions"],
            )
        )
        details.append(
            {
                "scheme": drow.scheme,
                "operation": drow.operation,
                "param": rows[-1]["param"],
                "warmup_samples_ns": [ns for _, ns in drow.blocks["warmup"]],
                "calibration_blocks": [
                    {"ops_per_block": ops, "ns": ns} for ops, ns in drow.blocks["calib"]
                ],
            }
        )
        if reason is not None:
            continue
        if fixed_ops and min_sample_ns is not None and min(samples) < min_sample_ns:
            warn(
                f"{SUITE}: {label}: best sample {min(samples)} ns is under "
                f"{min_sample_ns:g} ns (100 clock ticks or clock-read costs), so clock "
                'reading weighs in; ops_per_sample "auto" avoids this'
            )
        stats = order_statistics(samples, ops_per_block, config["nth"])
        scale = 1000.0 if drow.size is None else float(drow.size)
        summary.append(
            {
                "scheme": drow.scheme,
                "operation": drow.operation,
                "param": rows[-1]["param"],
                "unit": "µs/op" if drow.size is None else "ns/B",
                "count": len(samples),
                "nth": min(config["nth"], len(samples)),
                **{k: v / scale for k, v in stats.items()},
            }
        )
    expected = [(s, o, None) for s, o in SIGNATURE_ROWS] + [
        (s, o, size) for s, o in PER_BYTE_ROWS for size in config["sizes"]
    ]
    for scheme, operation, size in expected:
        if (scheme, operation, size) not in seen:
            param = "" if size is None else f" {size} B"
            warn(f"{SUITE}: {DRIVER_NAME} printed nothing for {scheme} {operation}{param}")
    features = meta.get("runtime_features", "-")
    clock = {
        "clock": meta.get("clock"),
        "resolution_ns": _meta_number(meta, "clock_res_ns"),
        "observed_tick_ns": _meta_number(meta, "clock_tick_ns"),
        "pair_overhead_ns": _meta_number(meta, "clock_pair_overhead_ns"),
        "probe_reads": _meta_number(meta, "clock_probe_reads"),
        "min_sample_ns": min_sample_ns,
    }
    return SuiteOutcome(
        rows=rows,
        parameters=dict(config),
        tools={"libsodium": version},
        extra={
            "clock": clock,
            "runtime_features": [] if features == "-" else features.split(","),
            "sign_message_bytes": _meta_number(meta, "sign_message_bytes"),
            "rows": details,
            "summary": summary,
        },
    )


def driver_argv(config: Mapping[str, Any]) -> list[str]:
    """Command line of the driver for normalized settings."""
    return [
        config["driver"],
        "--repetitions",
        str(config["repetitions"]),
        "--warmup",
        str(config["warmup"]),
        "--sizes",
        ",".join(str(s) for s in config["sizes"]),
        "--ops-per-sample",
        str(config["ops_per_sample"]),
    ]


def run(
    config: dict[str, Any],
    warn: Callable[[str], None],
    count: suite_counting.CountSession | None = None,
) -> SuiteOutcome:
    """Run ``sodium_bench`` with normalized settings and build the suite's rows.

    With ``count`` (``--count-with``) the driver runs under the counting QEMU
    with ``--count-markers`` and valid rows get ``instructions``
    (:func:`suite_counting.attach_sodium`).

    Raises:
        SuiteError: the driver is missing (add libsodium-dev to the target's profile so
            that make builds it), fails, times out, or prints unreadable output.
    """
    driver = config["driver"]
    if not (os.path.isfile(driver) and os.access(driver, os.X_OK)):
        raise SuiteError(
            f"{SUITE}: driver {driver} is missing; add {PROFILE_PACKAGE} to the target's "
            f"profile so that 'make -C harness {DRIVER_NAME}' builds it"
        )
    Progress(SUITE, 1).step(
        f"{DRIVER_NAME}: {config['repetitions']} samples per operation, "
        f"sizes {', '.join(str(s) for s in config['sizes'])} B"
    )
    argv, count_out = driver_argv(config), None
    if count is not None:
        argv, count_out = count.command(argv, SUITE)
    result = run_command(argv, config["timeout_s"])
    if result.returncode != 0:
        tail = result.stderr.strip().splitlines()[-3:]
        raise SuiteError(
            f"{SUITE}: {DRIVER_NAME} exited with status {result.returncode}: "
            + (" | ".join(tail) or "no message")
        )
    outcome = build_outcome(parse_driver_output(result.stdout), config, warn)
    if count is not None and count_out is not None:
        try:
            suite_counting.attach_sodium(outcome.rows, result.stdout, count.read(count_out))
        except CountError as exc:
            raise SuiteError(f"{SUITE}: counting: {exc}") from exc
    return outcome
