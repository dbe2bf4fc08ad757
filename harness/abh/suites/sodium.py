"""The ``sodium`` suite: libsodium primitives timed like pycryptopp's benchmark.

pycryptopp (Tahoe-LAFS's crypto library, 2012) timed each operation on its own
many times and printed best, Nth-best, mean, Nth-worst and worst per row: µs (ms
on slow boards) per operation for key generation, signing and verification, ns
per byte for ciphers and hashes at small / medium / large messages (1000, 10000,
100000 B). This suite measures the same kind of rows with libsodium through the
C driver ``sodium_bench`` (``drivers/sodium_bench.c``, built by ``make -C harness
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
the summary reports, 3), ``driver`` (path of ``sodium_bench``, default where the
Makefile builds it), ``timeout_s`` (limit for the whole driver run, s, 900).

The driver's line protocol is documented at the top of ``drivers/sodium_bench.c``;
:func:`parse_driver_output` reads it and :func:`build_outcome` turns it into
rows, both without running anything.

Modules: ``sodium_output`` (parsing), ``sodium_rows`` (rows and summary); this
module checks the settings and runs the driver.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any

from abh.suites import counting
from abh.suites.common import (
    Progress,
    SuiteError,
    SuiteOutcome,
    check_keys,
    driver_path,
    run_command,
)
from abh.suites.counting import CountError
from abh.suites.sodium_output import DRIVER_NAME, attach_sodium, parse_driver_output
from abh.suites.sodium_rows import SUITE, build_outcome

DEFAULT_REPETITIONS = 64
DEFAULT_WARMUP = 4
DEFAULT_SIZES = (1000, 10000, 100000)
DEFAULT_NTH = 3
DEFAULT_TIMEOUT_S = 900.0
MAX_REPETITIONS = 1_000_000
MAX_FIXED_OPS = 10_000_000
MAX_SIZES = 32
MAX_SIZE_BYTES = 64 * 1024 * 1024
PROFILE_PACKAGE = "libsodium-dev"

ALLOWED_KEYS = ("repetitions", "warmup", "sizes", "ops_per_sample", "nth", "driver", "timeout_s")


def default_driver_path() -> str:
    """Path of the ``sodium_bench`` binary, where the Makefile builds it."""
    return str(driver_path(DRIVER_NAME))


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
    count: counting.CountSession | None = None,
) -> SuiteOutcome:
    """Run ``sodium_bench`` with normalized settings and build the suite's rows.

    With ``count`` (``--count-with``) the driver runs under the counting QEMU
    with ``--count-markers`` and valid rows get ``instructions``
    (:func:`~abh.suites.sodium_output.attach_sodium`).

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
            attach_sodium(outcome.rows, result.stdout, count.read(count_out))
        except CountError as exc:
            raise SuiteError(f"{SUITE}: counting: {exc}") from exc
    return outcome
