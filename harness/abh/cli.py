"""The harness's command line: argparse types and make_parser().

Every value that reaches the blindsig driver's command line or a suite is
checked here against its grammar (bounded decimal integers, finite seconds,
fractions in (0, 1), distinct RSA sizes, known suite names, a JSON object
of settings objects); a bad value is argparse's usage error (exit status 2)
naming the option and what is allowed. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from abh.suites import SUITES, blindsig_median_ci, counting
from abh.suites.blindsig_output import DRIVER_NAME
from abh.suites.blindsig_rules import (
    DEFAULT_RSA_BITS,
    MAX_ITERATIONS,
    MAX_MIN_BLOCK_NS,
    MAX_REPETITIONS,
    MAX_RSA_BITS,
    MAX_RSA_SIZES,
    MAX_TIME_S,
    MAX_WARMUP,
    MIN_BLOCK_TICKS,
    MIN_RSA_BITS,
)
from abh.suites.common import driver_path


def _bounded_int(low: int, high: int) -> Callable[[str], int]:
    """argparse type: a decimal integer in [low, high]."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not in {low}..{high}")
        return value

    return parse


def parse_seconds(text: str) -> float:
    """argparse type for --max-time: seconds, a finite number in (0, MAX_TIME_S].

    Raises:
        argparse.ArgumentTypeError: not a number, not finite, <= 0 or too large.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and 0 < value <= MAX_TIME_S):
        raise argparse.ArgumentTypeError(f"{text!r} is not in (0, {MAX_TIME_S:g}] seconds")
    return value


def parse_fraction(text: str) -> float:
    """argparse type for --ci-target: a fraction in (0, 1), e.g. 0.02 for ±2 %.

    Raises:
        argparse.ArgumentTypeError: not a number or outside (0, 1).
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and 0 < value < 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction in (0, 1), e.g. 0.02")
    return value


def parse_rsa_bits(text: str) -> list[int]:
    """argparse type for --rsa-bits: distinct comma-separated modulus sizes in bits.

    Raises:
        argparse.ArgumentTypeError: empty, non-integer, out of
            MIN_RSA_BITS..MAX_RSA_BITS, duplicate, or more than MAX_RSA_SIZES.
    """
    parse_one = _bounded_int(MIN_RSA_BITS, MAX_RSA_BITS)
    sizes = [parse_one(part.strip()) for part in text.split(",")]
    if len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError(f"duplicate size in {text!r}")
    if len(sizes) > MAX_RSA_SIZES:
        raise argparse.ArgumentTypeError(f"more than {MAX_RSA_SIZES} sizes")
    return sizes


def parse_suites(text: str) -> list[str]:
    """argparse type for --suites: distinct comma-separated names from SUITES.

    Raises:
        argparse.ArgumentTypeError: empty, unknown or duplicate name.
    """
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("no suite given")
    for name in names:
        if name not in SUITES:
            raise argparse.ArgumentTypeError(f"unknown suite {name!r}; known: {', '.join(SUITES)}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"duplicate suite in {text!r}")
    return names


def parse_suite_config(text: str) -> dict[str, dict[str, Any]]:
    """argparse type for --suite-config: a JSON object of suite name -> settings object.

    Raises:
        argparse.ArgumentTypeError: not JSON, not an object of objects, or an unknown suite.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise argparse.ArgumentTypeError("expected a JSON object: suite name -> settings object")
    for name in value:
        if name not in SUITES or name == "blindsig":
            raise argparse.ArgumentTypeError(
                f"unknown suite {name!r} in --suite-config; known: {', '.join(SUITES[1:])}"
            )
    return value


def _cpu_model(text: str) -> str:
    """argparse type for --count-cpu: a plain QEMU CPU model name."""
    try:
        return counting.check_cpu_model(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def make_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="archbench_harness.py",
        description="Run the blindsig driver and print one archbench-harness JSON document.",
    )
    parser.add_argument(
        "--iterations",
        type=_bounded_int(1, MAX_ITERATIONS),
        default=10,
        help="operations per timed block to start calibration from, never shrunk"
        " (default 10, the thesis' '10x')",
    )
    parser.add_argument(
        "--repetitions",
        type=_bounded_int(1, MAX_REPETITIONS),
        default=3,
        help="timed blocks per row (default 3; fewer when --max-time is spent)",
    )
    parser.add_argument(
        "--warmup",
        type=_bounded_int(0, MAX_WARMUP),
        default=1,
        help="repetitions run and discarded before the timed ones (default 1)",
    )
    parser.add_argument(
        "--min-block-ns",
        type=_bounded_int(0, MAX_MIN_BLOCK_NS),
        default=None,
        help="grow each block until it takes this many ns; 0 keeps --iterations"
        f" (default: max({MIN_BLOCK_TICKS} clock ticks, 1 ms))",
    )
    parser.add_argument(
        "--max-time",
        type=parse_seconds,
        default=None,
        metavar="SECONDS",
        help="budget per scheme and key size: no further repetition once spent,"
        " at least one is always taken (default: none)",
    )
    parser.add_argument(
        "--ci-target",
        type=parse_fraction,
        default=None,
        metavar="FRACTION",
        help="adaptive repetitions: stop a scheme/size once the 95 %% interval of every"
        " row's median is within this fraction of it (0.02 = ±2 %%); --repetitions is"
        " then the most taken (default: off, exactly --repetitions)",
    )
    parser.add_argument(
        "--min-repetitions",
        type=_bounded_int(1, MAX_REPETITIONS),
        default=blindsig_median_ci.MIN_SAMPLES_95,
        help="timed repetitions before --ci-target may stop a scheme/size"
        f" (default {blindsig_median_ci.MIN_SAMPLES_95}, the fewest with a 95 %% interval)",
    )
    parser.add_argument(
        "--order",
        choices=("interleaved", "sequential"),
        default=None,
        help="interleaved (driver default): schemes/sizes take turns, one repetition"
        " each, in an order shuffled per round; sequential: one after the other",
    )
    parser.add_argument(
        "--seed",
        type=_bounded_int(0, 2**63 - 1),
        default=None,
        help="seed of the interleaved order (default: from the clock; recorded)",
    )
    parser.add_argument(
        "--rsa-bits",
        type=parse_rsa_bits,
        default=list(DEFAULT_RSA_BITS),
        help="comma-separated RSA modulus sizes in bits (default 1024,2048,3072,4096)",
    )
    parser.add_argument("--scheme", choices=("cs", "rsa", "all"), default="all")
    parser.add_argument(
        "--suites",
        type=parse_suites,
        default=["blindsig"],
        help=f"comma-separated suites to run: {', '.join(SUITES)} (default blindsig)",
    )
    parser.add_argument(
        "--suite-config",
        type=parse_suite_config,
        default={},
        metavar="JSON",
        help="settings of the other suites as a JSON object: suite name -> settings",
    )
    parser.add_argument(
        "--driver",
        type=Path,
        default=driver_path(DRIVER_NAME),
        help="blindsig executable (default: next to this script)",
    )
    parser.add_argument(
        "--progress", action="store_true", help="driver reports each repetition on stderr"
    )
    parser.add_argument(
        "--fresh-items",
        action="store_true",
        help="every operation of a block on its own freshly prepared item (default: one call"
        " after another on the same item, as GNUnet's perf_crypto_* programs)",
    )
    parser.add_argument(
        "--count-with",
        type=Path,
        default=None,
        metavar="DIR",
        help="count instructions per block with the counting layer in DIR"
        " (/opt/archbench/counter) instead of timing natively",
    )
    parser.add_argument(
        "--count-cpu",
        type=_cpu_model,
        default=counting.DEFAULT_CPU,
        metavar="MODEL",
        help=f"QEMU -cpu model for --count-with (default {counting.DEFAULT_CPU})",
    )
    parser.add_argument(
        "--no-symbol-files",
        action="store_true",
        help="with --count-with: name functions from the counted libraries' own symbol"
        " tables only, not from the counting layer's symbol files (DIR/symbols)",
    )
    parser.add_argument(
        "--callgrind",
        action="store_true",
        help="with --count-with on amd64: run blindsig again under valgrind's callgrind"
        " and put its counts per row beside the plugin's (needs the callgrind layer)",
    )
    return parser
