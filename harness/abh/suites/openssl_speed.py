"""``openssl-speed`` suite: the container's ``openssl speed -mr`` (standard library only).

Each measurement is one ``openssl speed -elapsed -mr -seconds S`` process for ONE
algorithm (and, for ``-evp`` ones, one buffer size via ``-bytes``), optionally with
``-multi N``. One algorithm per process keeps every record unambiguous: OpenSSL's
``+R`` lines carry the key size in bits but not the curve name (P-256 and
brainpoolP256r1 both print ``256``), the ``-evp`` ``+R`` line carries no buffer size,
and with ``-multi`` the children's lines interleave.

Modules: ``openssl_speed_algorithms`` (what can be selected),
``openssl_speed_output`` (record formats, the mapping of ``+R`` lines to
operations and the plausibility rule, parsed without running anything); this
module checks the settings, runs the processes and builds the rows.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from abh.suites.common import Progress, SuiteError, SuiteOutcome, check_keys, make_row, run_command
from abh.suites.openssl_speed_algorithms import (
    ALGORITHMS,
    DEFAULT_ALGORITHMS,
    DEFAULT_EVP_SIZES,
    Algorithm,
)
from abh.suites.openssl_speed_output import (
    Measurement,
    Result,
    extract_measurements,
    parse_speed_output,
)

SUITE = "openssl-speed"

CONFIG_KEYS = ("algorithms", "evp_sizes", "seconds", "multi", "repeat", "timeout_s")


# --------------------------------------------------------------------------- config


def _int_list(key: str, value: Any, what: str) -> list[int]:
    if not isinstance(value, list) or not value:
        raise SuiteError(f"{SUITE}: {key} = {value!r}: expected a non-empty list of {what}")
    out: list[int] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise SuiteError(f"{SUITE}: {key} item {item!r}: expected {what}")
        if item in out:
            raise SuiteError(f"{SUITE}: {key} lists {item} twice")
        out.append(item)
    return out


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SuiteError(f"{SUITE}: {key} = {value!r}: expected an integer >= 1")
    return value


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the suite's settings and fill defaults.

    Keys (all optional):
        algorithms: list of names from :data:`ALGORITHMS` (default
            :data:`DEFAULT_ALGORITHMS`).
        evp_sizes: buffer sizes in bytes for ``-evp`` algorithms, one process each
            (default 16, 64, 256, 1024, 8192, 16384).
        seconds: ``-seconds`` per test, integer s >= 1 (default 3).
        multi: process counts; 1 = a single process, N > 1 adds ``-multi N``
            (default [1]).
        repeat: how many times the whole run is repeated; each repetition is one
            sample of every row (default 1).
        timeout_s: wall-clock limit per ``openssl`` process in s (default 300).

    Returns:
        the settings with defaults filled in (JSON-able).

    Raises:
        SuiteError: unknown key, or a value of the wrong type or range; the message
            names the key, the value and what is allowed.
    """
    check_keys(SUITE, config, CONFIG_KEYS)
    algorithms = config.get("algorithms", list(DEFAULT_ALGORITHMS))
    if not isinstance(algorithms, list) or not algorithms:
        raise SuiteError(f"{SUITE}: algorithms = {algorithms!r}: expected a non-empty list")
    names: list[str] = []
    for name in algorithms:
        if name not in ALGORITHMS:
            raise SuiteError(
                f"{SUITE}: unknown algorithm {name!r} in algorithms; allowed: "
                + ", ".join(ALGORITHMS)
            )
        if name in names:
            raise SuiteError(f"{SUITE}: algorithms lists {name!r} twice")
        names.append(name)
    timeout = config.get("timeout_s", 300)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise SuiteError(f"{SUITE}: timeout_s = {timeout!r}: expected a number of s > 0")
    return {
        "algorithms": names,
        "evp_sizes": _int_list(
            "evp_sizes", config.get("evp_sizes", list(DEFAULT_EVP_SIZES)), "byte counts >= 1"
        ),
        "seconds": _positive_int("seconds", config.get("seconds", 3)),
        "multi": _int_list("multi", config.get("multi", [1]), "process counts >= 1"),
        "repeat": _positive_int("repeat", config.get("repeat", 1)),
        "timeout_s": timeout,
    }


# --------------------------------------------------------------------------- running


def speed_argv(algorithm: Algorithm, seconds: int, processes: int, size: int | None) -> list[str]:
    """The ``openssl speed`` command line for one measurement.

    ``-elapsed`` makes OpenSSL divide by wall-clock time instead of user CPU time.
    """
    argv = ["openssl", "speed", "-elapsed", "-mr", "-seconds", str(seconds)]
    if processes > 1:
        argv += ["-multi", str(processes)]
    if algorithm.kind == "evp":
        argv += ["-bytes", str(size), "-evp", algorithm.name]
    else:
        argv.append(algorithm.name)
    return argv


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty)"


@dataclass
class Cell:
    """One future row: one algorithm, operation, ``-multi`` count and buffer size.

    Attributes:
        results: one :data:`Result` per repetition, in order.
        wall_ns: the openssl process's wall time in ns per repetition (whole process,
            all its tests; only used for invalid rows without a measurement).
    """

    algorithm: Algorithm
    operation: str
    processes: int
    size: int | None
    results: list[Result] = field(default_factory=list)
    wall_ns: list[int] = field(default_factory=list)


def build_row(cell: Cell, repeat: int) -> dict[str, Any] | None:
    """Turn one cell's repetitions into a row (None: invalid with no time to carry).

    Counts differ between repetitions, so ``ops_per_block`` is the first repetition's
    count ``n_0`` and each sample is rescaled to it: ``t_i * n_0 / n_i`` (in ns), with
    the raw counts in ``block_ops`` when ``repeat`` > 1. An invalid repetition makes
    the row invalid; its samples are then the valid repetitions' times, or else the
    openssl processes' wall times with ``ops_per_block`` 1.
    """
    alg = cell.algorithm
    good = [r for r in cell.results if isinstance(r, Measurement)]
    reasons = [(i, r) for i, r in enumerate(cell.results) if isinstance(r, str)]
    kwargs: dict[str, Any] = {
        "key_bits": alg.key_bits,
        "param": alg.param if cell.size is None else f"{cell.size} B",
        "bytes_per_op": cell.size,
        "processes": cell.processes,
        "repetitions_requested": repeat,
    }
    if reasons:
        i, reason = reasons[0]
        kwargs["valid"] = False
        kwargs["invalid_reason"] = f"repetition {i}: {reason}" if repeat > 1 else reason
    if good:
        n0 = good[0].count
        samples = [round(m.seconds * 1e9 * n0 / m.count) for m in good]
        if repeat > 1:
            kwargs["block_ops"] = [m.count for m in good]
        return make_row(SUITE, alg.scheme, cell.operation, samples, n0, **kwargs)
    walls = [w for w in cell.wall_ns if w > 0]
    if not walls:
        return None
    return make_row(SUITE, alg.scheme, cell.operation, walls, 1, **kwargs)


def run(config: dict[str, Any], warn: Callable[[str], None]) -> SuiteOutcome:
    """Measure every configured algorithm, size and process count ``repeat`` times.

    Repetitions are the outer loop, so drift over the run spreads over all rows.

    Returns:
        rows (``samples_ns`` = wall ns per block of ``ops_per_block`` operations),
        ``tools["openssl"]`` = ``openssl version -a`` output, and ``extra["runs"]``
        with every process's argv and record lines.

    Raises:
        SuiteError: no ``openssl`` CLI (Debian package ``openssl``), a process exited
            non-zero (the message has its stderr tail) or timed out.
    """
    cfg = normalize_config(config)
    if shutil.which("openssl") is None:
        raise SuiteError(
            "openssl CLI not found; add the Debian package 'openssl' to the target's profile"
        )
    version = run_command(["openssl", "version", "-a"], 30)
    if version.returncode != 0:
        raise SuiteError(f"openssl version -a failed: {_tail(version.stderr)}")
    seconds: int = cfg["seconds"]
    cells: dict[tuple[str, str, int, int | None], Cell] = {}
    runs: list[dict[str, Any]] = []
    per_pass = sum(
        len(cfg["evp_sizes"]) if ALGORITHMS[name].kind == "evp" else 1 for name in cfg["algorithms"]
    )
    progress = Progress(SUITE, cfg["repeat"] * len(cfg["multi"]) * per_pass)
    for rep in range(cfg["repeat"]):
        for processes in cfg["multi"]:
            for name in cfg["algorithms"]:
                alg = ALGORITHMS[name]
                sizes: list[int | None] = list(cfg["evp_sizes"]) if alg.kind == "evp" else [None]
                for size in sizes:
                    argv = speed_argv(alg, seconds, processes, size)
                    progress.step(
                        f"{name}"
                        + (f" {size} B" if size is not None else "")
                        + (f" -multi {processes}" if processes > 1 else "")
                        + (f" (run {rep + 1})" if cfg["repeat"] > 1 else "")
                    )
                    res = run_command(argv, float(cfg["timeout_s"]))
                    if res.returncode != 0:
                        raise SuiteError(
                            f"{' '.join(argv)} exited with status {res.returncode}: "
                            f"{_tail(res.stderr)}"
                        )
                    output = parse_speed_output(res.stdout, res.stderr)
                    runs.append(
                        {
                            "argv": argv,
                            "repetition": rep,
                            "elapsed_ns": res.elapsed_ns,
                            "lines": output.lines,
                        }
                    )
                    found = extract_measurements(
                        alg, output, processes=processes, seconds=seconds, size=size
                    )
                    for op, result in found.items():
                        cell = cells.setdefault(
                            (name, op, processes, size), Cell(alg, op, processes, size)
                        )
                        cell.results.append(result)
                        cell.wall_ns.append(res.elapsed_ns)
    rows: list[dict[str, Any]] = []
    for cell in cells.values():
        row = build_row(cell, cfg["repeat"])
        if row is None:
            warn(f"{SUITE}: {cell.algorithm.name} {cell.operation}: no usable time; row omitted")
        else:
            rows.append(row)
    return SuiteOutcome(
        rows=rows,
        parameters=cfg,
        tools={"openssl": version.stdout.strip()},
        extra={"runs": runs},
    )
