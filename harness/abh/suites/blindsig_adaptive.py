"""Adaptive repetitions and noise readings: the harness side of blindsig --interactive.

The driver runs with ``--interactive``: before each repetition it prints
``start <scheme> <bits>`` and waits for ``go``; after it, once its sample or
discard lines are out, ``ask <scheme> <bits> <kind> <index>`` and waits for
``more``, ``more nokeygen`` or ``stop``. At both points the harness takes a
noise Snapshot (``blindsig_noise``), so every repetition is framed by two
readings and nothing of the harness's own work falls inside a timed block.
After a timed repetition the harness answers ``stop`` when every operation of
the pair has reached the confidence-interval target
(``blindsig_median_ci.target_reached``); the driver still
applies its cap (``--repetitions``) and budget (``--max-time``) itself. The
decision whether an interval is narrow enough is therefore made in exactly
one place, this Python code, with the same function the tests hold against
the host's scipy interval; the C driver never computes a statistic.

Key generation leaves the loop early (``AdaptiveRule.keygen_leaves``): its
time varies from key to key by the prime search, so its interval rarely
narrows to the target, and its blocks are by far the longest (ten RSA-4096
keys take ~10 s natively). Once it has ``min_repetitions`` timed blocks the
harness answers ``more nokeygen`` (the driver runs with ``--reuse-keys``):
the pair's further repetitions skip the key generation block and run on the
keys of the last one, and the stop rule waits only for the other rows. The
key generation row keeps its blocks and interval, with ``stop_reason``
``keygen_cap`` (or ``target`` when it reached the target anyway) and a note.

Standard library only.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from abh.suites import blindsig_median_ci, blindsig_noise
from abh.suites.blindsig_noise import NoiseTally
from abh.suites.blindsig_output import DriverOutput, DriverOutputError, HarnessError, join_notes
from abh.suites.blindsig_rules import (
    KEY_GENERATIONS,
    OPERATIONS,
    TALER_LAYER_MEASURED,
    SchemeKey,
    run_operations,
)

PROTOCOL_START = "start"
PROTOCOL_ASK = "ask"
ANSWER_MORE = "more"
ANSWER_NOKEYGEN = "more nokeygen"
"""Go on, but skip the key generation block (the driver needs ``--reuse-keys``)."""
ANSWER_STOP = "stop"
KEY_GENERATION = "key_generation"
KEYGEN_CAP = "keygen_cap"
"""``stop_reason`` of a key generation row that left the loop without reaching the target."""


@dataclass(frozen=True)
class AdaptiveRule:
    """When the harness tells the driver to stop a pair early.

    Attributes:
        target: relative half-width the median's interval must reach (0.02 =
            ±2 %); None: never stop early (fixed repetitions, as before).
        min_repetitions: timed repetitions taken before the rule may stop a pair.
        confidence: level of the interval (0.95).
        keygen_leaves: with a target, key generation leaves the loop after
            ``min_repetitions`` timed blocks (see the module docstring);
            False: it stays until its pair stops, like every other row.
    """

    target: float | None = None
    min_repetitions: int = blindsig_median_ci.MIN_SAMPLES_95
    confidence: float = blindsig_median_ci.DEFAULT_CONFIDENCE
    keygen_leaves: bool = True

    @property
    def reuses_keys(self) -> bool:
        """True when the driver must keep keys (``--reuse-keys``) for ``more nokeygen``."""
        return self.target is not None and self.keygen_leaves


def keygen_left(samples: Mapping[str, Sequence[int]], rule: AdaptiveRule) -> bool:
    """True once key generation has left the loop: ``min_repetitions`` timed blocks taken.

    ``samples`` maps operation -> block times in ns taken so far. Always False
    without a target or with ``rule.keygen_leaves`` off.
    """
    blocks = len(samples.get(KEY_GENERATION, ()))
    return rule.reuses_keys and blocks >= max(rule.min_repetitions, 1)


def pair_reached(
    samples: Mapping[str, Sequence[int]], operations: Sequence[str], rule: AdaptiveRule
) -> bool:
    """True when every operation of one pair still in the loop has reached ``rule.target``.

    ``samples`` maps operation -> block times in ns taken so far (a time of 0
    ns never counts as reached: the driver declares such a pair invalid).
    Key generation (the raw row and the layer's, which leave together) no longer
    counts once it has left (:func:`keygen_left`).
    """
    if rule.target is None:
        return False
    for operation in operations:
        if operation in KEY_GENERATIONS and keygen_left(samples, rule):
            continue
        xs = samples.get(operation, [])
        if not xs or min(xs) <= 0:
            return False
        if not blindsig_median_ci.target_reached(
            xs, rule.target, rule.min_repetitions, rule.confidence
        ):
            return False
    return True


def answer_after_sample(
    samples: Mapping[str, Sequence[int]], operations: Sequence[str], rule: AdaptiveRule
) -> str:
    """The harness's answer to ``ask`` after a timed repetition of one pair.

    :data:`ANSWER_STOP` when :func:`pair_reached`; else :data:`ANSWER_NOKEYGEN`
    when the pair has a key generation row that has left the loop; else
    :data:`ANSWER_MORE`.
    """
    if pair_reached(samples, operations, rule):
        return ANSWER_STOP
    if KEY_GENERATION in operations and keygen_left(samples, rule):
        return ANSWER_NOKEYGEN
    return ANSWER_MORE


@dataclass
class InteractiveRun:
    """What one ``--interactive`` driver run left behind.

    Attributes:
        stdout: the driver's stdout without the protocol lines (for parse_driver_output()).
        noise: (scheme, bits) -> tally over its timed repetitions.
        stops: (scheme, bits) pairs the harness answered ``stop`` for.
        involuntary_switches: the driver's involuntary context switches in
            total (getrusage RUSAGE_CHILDREN after it exited); None if unknown.
        keygen_left: (scheme, bits) -> key generation blocks taken when the
            harness first answered ``more nokeygen`` for the pair.
        keygen_noise: (scheme, bits) -> tally over the timed repetitions that
            ran the key generation block.
    """

    stdout: str
    noise: dict[SchemeKey, NoiseTally] = field(default_factory=dict)
    stops: set[SchemeKey] = field(default_factory=set)
    involuntary_switches: int | None = None
    keygen_left: dict[SchemeKey, int] = field(default_factory=dict)
    keygen_noise: dict[SchemeKey, NoiseTally] = field(default_factory=dict)


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
    argv = [str(driver), *args, "--interactive"]
    if rule.reuses_keys:
        argv.append("--reuse-keys")
    try:
        proc = subprocess.Popen(
            argv,
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
    before: blindsig_noise.Snapshot | None = None
    skipping: set[SchemeKey] = set()  # pairs told to skip key generation next
    taler = False  # meta taler_layer (before any protocol line): the pair's rows
    assert proc.stdout is not None
    with proc:
        for line in proc.stdout:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == PROTOCOL_START and len(fields) == 3:
                _scheme_key(fields[1], fields[2])
                before = blindsig_noise.take_snapshot(proc.pid, freq_dirs)
                _answer(proc, "go")
            elif fields[0] == PROTOCOL_ASK and len(fields) == 5:
                after = blindsig_noise.take_snapshot(proc.pid, freq_dirs)
                key = _scheme_key(fields[1], fields[2])
                word = ANSWER_MORE
                if fields[3] == "sample":
                    if before is not None:
                        run.noise.setdefault(key, NoiseTally()).add(before, after)
                        if key not in skipping:
                            run.keygen_noise.setdefault(key, NoiseTally()).add(before, after)
                    got = samples.get(key, {})
                    word = answer_after_sample(got, run_operations(key[0], taler), rule)
                    if word == ANSWER_STOP:
                        run.stops.add(key)
                    elif word == ANSWER_NOKEYGEN:
                        skipping.add(key)
                        run.keygen_left.setdefault(key, len(got.get(KEY_GENERATION, [])))
                    if word != ANSWER_NOKEYGEN:
                        skipping.discard(key)
                before = None
                _answer(proc, word)
            else:
                kept.append(line)
                if fields[:2] == ["meta", "taler_layer"] and len(fields) == 3:
                    taler = fields[2] == TALER_LAYER_MEASURED
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


def keygen_note(blocks: int, taken: int, reached: bool, rule: AdaptiveRule) -> str:
    """The ``note`` of a key generation row that left the adaptive loop after ``blocks`` blocks.

    ``taken`` is the pair's timed repetitions (the other rows' samples).
    """
    note = f"key generation left the adaptive loop after {blocks} timed blocks"
    if taken > blocks:
        note += f"; the pair's other {taken - blocks} repetitions reused its last keys"
    note += "."
    if not reached and rule.target is not None:
        note += (
            f" Its interval is reported as measured: it is wider than ±{rule.target:.1%} by"
            " the nature of key generation (the prime search takes longer for some keys than"
            " for others), not by the machine's noise, so the target does not apply to it."
        )
    return note


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
    interval = blindsig_median_ci.median_interval(samples_ns, confidence)
    width = blindsig_median_ci.relative_half_width(samples_ns, confidence)
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
    may stop on its target only if each of its rows still in the loop reached
    it. A key generation row that left the loop (:func:`keygen_left`) gets its
    own ``stop_reason`` (``target`` if it reached the target, else
    :data:`KEYGEN_CAP` with ``ci_reached`` null: the target does not apply to
    it), a ``note`` saying so, and the noise of the repetitions that ran it.

    Raises:
        DriverOutputError: a pair stopped on its target although a row did not
            reach it, or a key generation row has other than the blocks the
            harness allowed it.
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
        left = run.keygen_left.get(key) if run is not None else None
        keygen_out = (
            row["operation"] in KEY_GENERATIONS
            and row["valid"]
            and keygen_left({KEY_GENERATION: samples}, rule)
            and (left is not None or stop == "target")
        )
        if (
            left is not None
            and row["operation"] in KEY_GENERATIONS
            and row["valid"]
            and len(samples) != left
        ):
            raise DriverOutputError(
                f"{label} {row['operation']}: {len(samples)} timed blocks, but the harness"
                f" let it leave after {left}"
            )
        if rule.target is not None and row["valid"]:
            reached = blindsig_median_ci.target_reached(
                samples, rule.target, rule.min_repetitions, rule.confidence
            )
            if keygen_out:
                taken = done.taken if done is not None else len(samples)
                if not reached or taken > len(samples):
                    row["note"] = join_notes(
                        row.get("note"), keygen_note(len(samples), taken, reached, rule)
                    )
                stop = "target" if reached else KEYGEN_CAP
                reached = reached or None
            elif stop == "target" and not reached:
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
        tally = None
        if run is not None:
            tally = (run.keygen_noise if keygen_out else run.noise).get(key)
        row["noise"] = tally.to_dict(cpus, governors) if tally is not None else None
    if run is not None:
        for key in run.stops:
            done = output.done.get(key)
            if done is not None and done.stop not in ("target", "invalid", None):
                warn(f"{key}: the harness said stop but the driver reports {done.stop}")
