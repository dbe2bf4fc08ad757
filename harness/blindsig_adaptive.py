"""Adaptive repetitions and noise readings: the harness side of blindsig --interactive.

The driver runs with ``--interactive``: before each repetition it prints
``start <scheme> <bits>`` and waits for ``go``; after it, once its sample or
discard lines are out, ``ask <scheme> <bits> <kind> <index>`` and waits for
``more`` or ``stop``. At both points the harness takes a noise Snapshot
(``noise.py``), so every repetition is framed by two readings and nothing of
the harness's own work falls inside a timed block. After a timed repetition
the harness answers ``stop`` when every operation of the pair has reached the
confidence-interval target (``median_ci.target_reached``); the driver still
applies its cap (``--repetitions``) and budget (``--max-time``) itself. The
decision whether an interval is narrow enough is therefore made in exactly
one place, this Python code, with the same function the tests hold against
the host's scipy interval; the C driver never computes a statistic.

Standard library only.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import median_ci
import noise
from blindsig_output import DriverOutput, DriverOutputError, HarnessError
from blindsig_rules import OPERATIONS, SchemeKey

PROTOCOL_START = "start"
PROTOCOL_ASK = "ask"


@dataclass(frozen=True)
class AdaptiveRule:
    """When the harness tells the driver to stop a pair early.

    Attributes:
        target: relative half-width the median's interval must reach (0.02 =
            ±2 %); None: never stop early (fixed repetitions, as before).
        min_repetitions: timed repetitions taken before the rule may stop a pair.
        confidence: level of the interval (0.95).
    """

    target: float | None = None
    min_repetitions: int = median_ci.MIN_SAMPLES_95
    confidence: float = median_ci.DEFAULT_CONFIDENCE


def pair_reached(
    samples: dict[str, list[int]], operations: Sequence[str], rule: AdaptiveRule
) -> bool:
    """True when every operation of one pair has reached ``rule.target``.

    ``samples`` maps operation -> block times in ns taken so far (a time of 0
    ns never counts as reached: the driver declares such a pair invalid).
    """
    if rule.target is None:
        return False
    for operation in operations:
        xs = samples.get(operation, [])
        if not xs or min(xs) <= 0:
            return False
        if not median_ci.target_reached(xs, rule.target, rule.min_repetitions, rule.confidence):
            return False
    return True


@dataclass
class InteractiveRun:
    """What one ``--interactive`` driver run left behind.

    Attributes:
        stdout: the driver's stdout without the protocol lines (for parse_driver_output()).
        noise: (scheme, bits) -> tally over its timed repetitions.
        stops: (scheme, bits) pairs the harness answered ``stop`` for.
        involuntary_switches: the driver's involuntary context switches in
            total (getrusage RUSAGE_CHILDREN after it exited); None if unknown.
    """

    stdout: str
    noise: dict[SchemeKey, noise.NoiseTally] = field(default_factory=dict)
    stops: set[SchemeKey] = field(default_factory=set)
    involuntary_switches: int | None = None


def _scheme_key(scheme: str, bits: str) -> SchemeKey:
    if scheme not in OPERATIONS or not bits.isdigit():
        raise DriverOutputError(f"driver protocol line names an unknown pair {scheme!r} {bits!r}")
    return (scheme, None if scheme == "CS" else int(bits))


def _answer(proc: subprocess.Popen[str], word: str) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(word + "\n")
        proc.stdin.flush()
    except BrokenPipeError:
        pass  # the driver died; wait() below reports how


def run_driver_interactive(
    driver: Path,
    args: Sequence[str],
    rule: AdaptiveRule,
    freq_dirs: Sequence[Path] = (),
) -> InteractiveRun:
    """Run the driver with ``--interactive``, answering it and reading the noise counters.

    Args:
        driver: path to the blindsig executable.
        args: driver arguments (without ``--interactive``).
        rule: when to answer ``stop``.
        freq_dirs: cpufreq directories to read the current frequency from.

    Returns:
        See InteractiveRun.

    Raises:
        HarnessError: the driver is missing, not executable, exits non-zero
            or dies from a signal.
        DriverOutputError: a malformed protocol line.
    """
    if not driver.is_file() or not os.access(driver, os.X_OK):
        raise HarnessError(f"driver {driver} is missing or not executable (build it with make)")
    switches0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_nivcsw
    try:
        proc = subprocess.Popen(
            [str(driver), *args, "--interactive"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            errors="replace",
            bufsize=1,
        )
    except OSError as exc:
        raise HarnessError(f"cannot run driver {driver}: {exc}") from exc
    run = InteractiveRun(stdout="")
    kept: list[str] = []
    samples: dict[SchemeKey, dict[str, list[int]]] = {}
    before: noise.Snapshot | None = None
    assert proc.stdout is not None
    with proc:
        for line in proc.stdout:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == PROTOCOL_START and len(fields) == 3:
                _scheme_key(fields[1], fields[2])
                before = noise.take_snapshot(proc.pid, freq_dirs)
                _answer(proc, "go")
            elif fields[0] == PROTOCOL_ASK and len(fields) == 5:
                after = noise.take_snapshot(proc.pid, freq_dirs)
                key = _scheme_key(fields[1], fields[2])
                word = "more"
                if fields[3] == "sample":
                    if before is not None:
                        run.noise.setdefault(key, noise.NoiseTally()).add(before, after)
                    if pair_reached(samples.get(key, {}), OPERATIONS[key[0]], rule):
                        word = "stop"
                        run.stops.add(key)
                before = None
                _answer(proc, word)
            else:
                kept.append(line)
                if fields[0] == "sample" and len(fields) == 7 and fields[6].isdigit():
                    key = _scheme_key(fields[1], fields[2])
                    samples.setdefault(key, {}).setdefault(fields[3], []).append(int(fields[6]))
    returncode = proc.wait()
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        raise HarnessError(f"driver {driver} was killed by {name}")
    if returncode != 0:
        raise HarnessError(f"driver {driver} exited with status {returncode}")
    run.stdout = "".join(kept)
    run.involuntary_switches = resource.getrusage(resource.RUSAGE_CHILDREN).ru_nivcsw - switches0
    return run


class MedianCiDict(TypedDict):
    """A row's ``median_ci``: the interval of its median per-operation time."""

    confidence: float
    low_per_op_ns: float
    high_per_op_ns: float
    half_width: float


def row_interval(
    samples_ns: Sequence[int], ops_per_block: int, confidence: float
) -> MedianCiDict | None:
    """The ``median_ci`` object of a row; None with too few samples for ``confidence``."""
    interval = median_ci.median_interval(samples_ns, confidence)
    width = median_ci.relative_half_width(samples_ns, confidence)
    if interval is None or width is None:
        return None
    return {
        "confidence": confidence,
        "low_per_op_ns": interval[0] / ops_per_block,
        "high_per_op_ns": interval[1] / ops_per_block,
        "half_width": round(width, 6),
    }


def annotate_rows(
    rows: Sequence[dict[str, Any]],
    output: DriverOutput,
    rule: AdaptiveRule,
    run: InteractiveRun | None,
    cpus: int,
    governors: list[str],
    warn: Callable[[str], None],
) -> None:
    """Add ``median_ci``, ``ci_target``, ``ci_reached``, ``stop_reason`` and ``noise`` to rows.

    Also holds every ``target`` stop of the driver against the rule: a pair
    may stop on its target only if each of its rows reached it.

    Raises:
        DriverOutputError: a pair stopped on its target although a row did not reach it.
    """
    for row in rows:
        key: SchemeKey = (row["scheme"], row["key_bits"])
        label = row["scheme"] if row["key_bits"] is None else f"{row['scheme']}-{row['key_bits']}"
        done = output.done.get(key)
        stop = done.stop if done is not None else None
        if stop is None:
            stop = (
                "invalid"
                if not row["valid"]
                else "budget"
                if row["budget_exhausted"]
                else "repetitions"
            )
        samples: list[int] = row["samples_ns"]
        reached: bool | None = None
        if rule.target is not None and row["valid"]:
            reached = median_ci.target_reached(
                samples, rule.target, rule.min_repetitions, rule.confidence
            )
            if stop == "target" and not reached:
                raise DriverOutputError(
                    f"{label} {row['operation']}: the driver stopped on its target, but"
                    f" {len(samples)} samples do not reach ±{rule.target:.1%}"
                )
        elif stop == "target":
            raise DriverOutputError(f"{label}: the driver stopped on a target nobody set")
        row["ci_target"] = rule.target
        row["ci_reached"] = reached
        row["stop_reason"] = stop
        row["median_ci"] = (
            row_interval(samples, row["ops_per_block"], rule.confidence) if row["valid"] else None
        )
        tally = run.noise.get(key) if run is not None else None
        row["noise"] = tally.to_dict(cpus, governors) if tally is not None else None
    if run is not None:
        for key in run.stops:
            done = output.done.get(key)
            if done is not None and done.stop not in ("target", "invalid", None):
                warn(f"{key}: the harness said stop but the driver reports {done.stop}")
