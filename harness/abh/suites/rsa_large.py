"""The ``rsa-large`` suite: RSA key generation, sign and verify up to 16384-bit moduli.

``openssl speed rsa`` stops at 15360 bits; this suite runs ``rsa_large``
(built from ``drivers/rsa_large.c`` by the harness's Makefile, against
libcrypto) which times RSASSA-PKCS1-v1_5 SHA-256 signing and verifying
through ``EVP_PKEY_sign``/``EVP_PKEY_verify`` on a precomputed digest (as
comparable to ``openssl speed rsa`` as a real signature can be; see the
comment at the top of ``drivers/rsa_large.c``), plus key generation timed on its own
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
    path of the ``rsa_large`` executable (default: where the Makefile builds it,
    :func:`~abh.suites.common.driver_path`).

Parsing the driver's output and building rows: ``rsa_large_output``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from abh.suites import counting
from abh.suites.common import (
    Progress,
    SuiteError,
    SuiteOutcome,
    SuiteTimeout,
    check_keys,
    driver_path,
    run_command,
)
from abh.suites.counting import CountError
from abh.suites.rsa_large_output import (
    MIN_BITS,
    SUITE,
    attach_rsa_large,
    parse_driver_output,
    rows_from_output,
)

DRIVER_NAME = "rsa_large"
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
    """Path of the ``rsa_large`` executable, where the Makefile builds it."""
    return str(driver_path(DRIVER_NAME))


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
    count: counting.CountSession | None = None,
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
            (:func:`~abh.suites.rsa_large_output.attach_rsa_large`).

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
                attach_rsa_large(size_rows, result.stdout, count.read(count_out))
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
