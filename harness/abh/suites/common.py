"""Shared pieces of the harness's suites (standard library only).

Every suite module but blindsig's (``openssl_speed.py``, ``rsa_large.py``,
``gnupg.py``, ``sodium.py``, ``taler_helper.py``, ``gnunet_perf.py`` in
``abh/suites/``) exposes:

``SUITE``
    the suite's name as written in matrix.yml (``openssl-speed``).
``normalize_config(config: Mapping[str, Any]) -> dict[str, Any]``
    checks the suite's settings (sent by the host as JSON) and fills defaults;
    raises :class:`SuiteError` naming the key, the value and what is allowed.
``run(config: dict[str, Any], warn: Callable[[str], None]) -> SuiteOutcome``
    measures and returns rows built with :func:`make_row`; raises
    :class:`SuiteError` when the suite as a whole cannot run (tool missing,
    tool failed). A single impossible record becomes an invalid row with its
    reason instead, so the rest of the suite's rows are kept. A counted suite
    (``abh.suites.COUNTED_SUITES``) takes a third argument, the
    ``counting.CountSession`` of ``--count-with``.

The row shape is the ``rows[]`` entry of ``CONTRACT.md``; all suites share it
so that reports and comparisons work across suites. The drivers we build are
found with :func:`driver_path`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_DEVICE = "cpu"

HARNESS_DIR = Path(__file__).resolve().parents[2]
"""The harness's folder, the one of ``archbench_harness.py`` (``/opt/archbench/harness``
in the image); this module is ``abh/suites/common.py`` below it."""


def driver_path(name: str) -> Path:
    """Where the Makefile builds the driver ``name`` (``blindsig``, ``rsa_large``,
    ``sodium_bench``, ``count_calibrate``): in :data:`HARNESS_DIR`, from ``drivers/``."""
    return HARNESS_DIR / name


def warn(message: str) -> None:
    """One ``archbench-harness: warning: <message>`` line on stderr."""
    print(f"archbench-harness: warning: {message}", file=sys.stderr)


class SuiteError(Exception):
    """A suite cannot produce trustworthy rows; the message says what and how to fix it."""


class SuiteTimeout(SuiteError):
    """A command of a suite ran past its time limit (raised by :func:`run_command`)."""


@dataclass
class SuiteOutcome:
    """What one suite produced.

    Attributes:
        rows: row dicts from :func:`make_row`, in report order.
        parameters: the normalized settings the suite ran with (JSON-able).
        tools: tool name -> version text (``openssl version -a`` output, ``gpg --version``
            first line, ``libsodium 1.0.18``), recorded in ``setup.tools``.
        extra: suite-specific JSON-able data kept in the document
            (``suites[SUITE].extra``), e.g. raw tool output lines.
    """

    rows: list[dict[str, Any]] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    tools: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def make_row(
    suite: str,
    scheme: str,
    operation: str,
    samples_ns: Sequence[int],
    ops_per_block: int,
    *,
    key_bits: int | None = None,
    param: str | None = None,
    bytes_per_op: int | None = None,
    processes: int = 1,
    device: str = DEFAULT_DEVICE,
    valid: bool = True,
    invalid_reason: str | None = None,
    repetitions_requested: int | None = None,
    budget_exhausted: bool = False,
    block_ops: Sequence[int] | None = None,
) -> dict[str, Any]:
    """One ``rows[]`` entry: ``ops_per_block`` operations took each of ``samples_ns``.

    Args:
        suite: suite name (``openssl-speed``).
        scheme: algorithm family as the field names it (``RSA``, ``ECDSA``, ``Ed25519``,
            ``AES-128-GCM``, ``SHA-256``).
        operation: what was timed (``sign``, ``verify``, ``key_generation``, ``derive``,
            ``encrypt``, ``hash``, ``decrypt``).
        samples_ns: wall time of each timed block in ns (each > 0, at least one).
        ops_per_block: operations per block (>= 1). When blocks had different operation
            counts (``openssl speed`` counts), pass them in ``block_ops`` and give samples
            rescaled to ``ops_per_block`` operations (``t_i * ops_per_block / n_i``).
        key_bits: modulus size for RSA, None otherwise.
        param: curve or size (``P-256``, ``brainpoolP512r1``, ``16 B``), None when none.
        bytes_per_op: message bytes processed per operation, for throughput (MB/s) rows.
        processes: parallel processes whose aggregate throughput one block measures
            (``openssl speed -multi N``); 1 for single-process figures.
        device: where the private key operation ran; ``cpu`` unless a token is plugged in.
        valid: False when the row must not be published; then ``invalid_reason`` says why.
        repetitions_requested: blocks asked for (``len(samples_ns)`` is how many were taken).
        budget_exhausted: True when a time budget stopped the repetitions early.
        block_ops: the raw per-block operation counts, when they differ.

    Raises:
        SuiteError: inconsistent arguments (a bug in the calling suite).
    """
    if not samples_ns or any(int(s) <= 0 for s in samples_ns):
        raise SuiteError(f"{suite} {scheme} {operation}: samples must be positive ns values")
    if ops_per_block < 1 or processes < 1:
        raise SuiteError(f"{suite} {scheme} {operation}: ops_per_block and processes must be >= 1")
    if valid == (invalid_reason is not None):
        raise SuiteError(f"{suite} {scheme} {operation}: invalid_reason goes with valid=False")
    return {
        "suite": suite,
        "scheme": scheme,
        "key_bits": key_bits,
        "operation": operation,
        "ops_per_block": int(ops_per_block),
        "samples_ns": [int(s) for s in samples_ns],
        "valid": valid,
        "invalid_reason": invalid_reason,
        "repetitions_requested": repetitions_requested,
        "budget_exhausted": budget_exhausted,
        "param": param,
        "bytes_per_op": bytes_per_op,
        "processes": processes,
        "device": device,
        "block_ops": None if block_ops is None else [int(n) for n in block_ops],
    }


@dataclass(frozen=True)
class CommandResult:
    """A finished command: exit status, decoded stdout/stderr, wall time in ns."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    elapsed_ns: int


def run_command(
    argv: Sequence[str],
    timeout_s: float,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stdin: bytes | None = None,
) -> CommandResult:
    """Run ``argv`` and capture both streams (never raises on a non-zero exit).

    Args:
        argv: program and arguments (no shell).
        timeout_s: wall-clock limit in s.
        env: extra environment variables, added to the harness's own.
        cwd: working directory.
        stdin: bytes fed to standard input (None: no input).

    Raises:
        SuiteTimeout: the program ran past ``timeout_s`` (it is killed).
        SuiteError: the program is not installed or cannot be started.
    """
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    start = time.monotonic_ns()
    try:
        # argv is built by the suites, never a shell.
        proc = subprocess.run(
            list(argv),
            input=stdin,
            capture_output=True,
            timeout=timeout_s,
            env=full_env,
            cwd=cwd,
            check=False,
        )
    except FileNotFoundError:
        raise SuiteError(
            f"{argv[0]} is not installed in the image; add its package to the target's profile"
        ) from None
    except subprocess.TimeoutExpired:
        raise SuiteTimeout(f"{' '.join(argv)} did not finish within {timeout_s:g} s") from None
    except OSError as exc:
        raise SuiteError(f"cannot run {argv[0]}: {exc.strerror}") from None
    return CommandResult(
        argv=tuple(argv),
        returncode=proc.returncode,
        stdout=proc.stdout.decode("utf-8", "replace"),
        stderr=proc.stderr.decode("utf-8", "replace"),
        elapsed_ns=time.monotonic_ns() - start,
    )


def check_keys(suite: str, config: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """Refuse unknown settings.

    Raises:
        SuiteError: ``config`` has a key outside ``allowed``; the message lists them.
    """
    unknown = sorted(set(config) - set(allowed))
    if unknown:
        raise SuiteError(
            f"{suite}: unknown setting(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}"
        )


PROGRESS_PREFIX = "archbench-progress:"
"""Start of every progress line on stderr.

The host parses it in ``archbench/run/progress.py``.
"""


def progress_line(suite: str, done: int, total: int, elapsed_s: float, what: str) -> str:
    """``archbench-progress: <suite> <done>/<total> <elapsed>s <what>`` (one line, no newline).

    ``done`` counts the steps started so far (0 = the suite begins), ``elapsed_s`` is wall
    time in s since the suite began, ``what`` names the step (``ecdsap521 -multi 1``).
    """
    what = " ".join(what.split()) or "-"
    return f"{PROGRESS_PREFIX} {suite} {done}/{total} {elapsed_s:.1f}s {what}"


class Progress:
    """Progress of one suite on stderr: one :func:`progress_line` per step, as it starts.

    ``total`` is the number of steps the suite will take (>= 1). Creating it prints the
    ``0/total`` line, so the host knows which suite is running before its first step.
    """

    def __init__(self, suite: str, total: int, what: str = "starting") -> None:
        self.suite, self.total, self.done = suite, max(1, total), 0
        self.started = time.monotonic()
        self._emit(what)

    def step(self, what: str) -> None:
        """Announce the next step (``what`` it measures)."""
        self.done = min(self.done + 1, self.total)
        self._emit(what)

    def _emit(self, what: str) -> None:
        line = progress_line(
            self.suite, self.done, self.total, time.monotonic() - self.started, what
        )
        print(line, file=sys.stderr, flush=True)
