"""The two programs ``harness_overhead.py`` compares, and counting their instructions.

The harness (``harness/archbench_harness.py`` with the blindsig driver) and the bare loop
(``benchmarks/harness_overhead.c``): building both in a container with the same flags,
the row vocabulary shared by both tables, and ``harness_overhead.py --instructions``:
counting both under the same QEMU plugin on the same fixed inputs and keys
(:func:`count`, in the counting layer) and the table of the counts
(:func:`format_instructions`, on the host). Standard library only: it runs inside the
image too.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HARNESS_DIR = REPO / "harness"
BARE_SOURCE = Path(__file__).resolve().parent / "harness_overhead.c"
CS_OPS = (
    "key_generation",
    "r_derivation",
    "blinding_secret_derivation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
)
RSA_OPS = ("key_generation", "blinding", "signing", "unblinding", "verifying")


class BenchmarkError(Exception):
    """Building or running one of the two programs failed; the message says which and why."""


def row_label(scheme: str, bits: int, operation: str) -> str:
    """``CS key_generation`` / ``RSA-2048 signing``."""
    return f"{scheme if scheme == 'CS' else f'RSA-{bits}'} {operation}"


# ----------------------------------------------------------- in the container


def run_program(argv: Sequence[str], what: str) -> str:
    """Run a command and return its stdout.

    Raises:
        BenchmarkError: it cannot be started or exits non-zero (stderr's tail included).
    """
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=3600)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BenchmarkError(f"{what}: {exc}") from exc
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-10:])
        raise BenchmarkError(f"{what} exited with {done.returncode}:\n{tail}")
    return done.stdout


def build(workdir: Path) -> tuple[Path, Path]:
    """Build the harness (its Makefile) and the bare loop (same flags) in ``workdir``.

    Returns:
        (harness script, bare loop executable).

    Raises:
        BenchmarkError: a tool is missing or a build fails.
    """
    for tool in ("make", "cc", "pkg-config"):
        if shutil.which(tool) is None:
            raise BenchmarkError(f"{tool} not found on PATH (install make, gcc, pkgconf)")
    harness = workdir / "harness"
    shutil.copytree(HARNESS_DIR, harness)
    run_program(["make", "-C", str(harness), "blindsig", "count_calibrate"], "make (harness)")
    cflags = run_program(
        ["make", "-s", "-C", str(harness), "print-cflags"], "make print-cflags"
    ).split()
    gnunet_cflags = run_program(
        ["pkg-config", "--cflags", "gnunetutil"], "pkg-config --cflags"
    ).split()
    gnunet_libs = run_program(
        ["pkg-config", "--libs", "gnunetutil", "libsodium"], "pkg-config --libs"
    ).split()
    bare = workdir / "harness_overhead"
    run_program(
        [
            "cc",
            *gnunet_cflags,
            *cflags,
            "-I",
            str(harness / "drivers"),
            "-o",
            str(bare),
            str(BARE_SOURCE),
            *gnunet_libs,
        ],
        "cc harness_overhead.c",
    )
    return harness / "archbench_harness.py", bare


def row_order(label: str) -> tuple[int, int, int]:
    scheme, _, op = label.partition(" ")
    bits = 0 if scheme == "CS" else int(scheme.removeprefix("RSA-"))
    ops = CS_OPS if scheme == "CS" else RSA_OPS
    return (0 if scheme == "CS" else 1, bits, ops.index(op))


COUNT_REPETITIONS = 2
COUNT_ITERATIONS = 10


Group = tuple[str, int, tuple[str, ...]]
"""(scheme, RSA modulus bits or 0 for CS, operations in chain order)."""


def count_groups(rsa_bits: Sequence[int]) -> list[Group]:
    """The bare loop's groups in blindsig's counting order: CS, then each RSA size as given."""
    return [("CS", 0, CS_OPS), *[("RSA", bits, RSA_OPS) for bits in rsa_bits]]


def bare_count_argv(
    key_dir: Path, groups: Sequence[Group], iterations: int = COUNT_ITERATIONS
) -> list[str]:
    """Arguments of the one counted bare-loop process over ``groups``.

    Blocks of ``iterations`` operations, ``COUNT_REPETITIONS`` timed repetitions
    after the bare loop's one warmup; fixed inputs (``--count-markers``) and the fixed RSA
    keys of ``key_dir`` (``--count-keys``), as blindsig is given them when counted.
    """
    argv = ["--count-markers", "--count-keys", str(key_dir)]
    for scheme, bits, ops in groups:
        argv += [scheme.lower(), *([str(bits)] if scheme == "RSA" else [])]
        argv += [",".join([str(iterations)] * len(ops)), str(COUNT_REPETITIONS)]
    return argv


def split_bare_counts(
    per_block: Sequence[int], groups: Sequence[Group], iterations: int = COUNT_ITERATIONS
) -> tuple[dict[str, float], dict[str, list[int]]]:
    """Assign the counted blocks (in the order run) to rows.

    The bare loop runs each group's repetitions one after the other, each repetition one
    block per operation in chain order; repetition 0 is the warmup and is dropped.

    Returns:
        (row label -> median count / ``iterations``, row label -> timed blocks' counts).

    Raises:
        BenchmarkError: the number of counts is not the number of blocks run.
    """
    expected = sum((COUNT_REPETITIONS + 1) * len(ops) for _, _, ops in groups)
    if len(per_block) != expected:
        raise BenchmarkError(f"bare loop: {len(per_block)} counted blocks, expected {expected}")
    ipo: dict[str, float] = {}
    blocks: dict[str, list[int]] = {}
    first = 0
    for scheme, bits, ops in groups:
        for j, op in enumerate(ops):
            timed = [per_block[first + r * len(ops) + j] for r in range(1, COUNT_REPETITIONS + 1)]
            blocks[row_label(scheme, bits, op)] = timed
            ipo[row_label(scheme, bits, op)] = statistics.median(timed) / iterations
        first += (COUNT_REPETITIONS + 1) * len(ops)
    return ipo, blocks


def count_bare(
    counter: Any,
    exe: Path,
    key_dir: Path,
    rsa_bits: Sequence[int],
    out: Path,
    iterations: int = COUNT_ITERATIONS,
) -> tuple[dict[str, float], dict[str, list[int]]]:
    """Count the bare loop under the counter (``counter``: ``counting.Counter``).

    One process runs CS and then every RSA size in ``rsa_bits`` order
    (:func:`bare_count_argv`), as blindsig runs its pairs when counted (sequential, CS
    first), so that both draw the same fixed inputs
    (``harness/drivers/counting/count_inputs.h``) for the same repetition and sign with
    the same fixed RSA keys.

    Returns:
        as :func:`split_bare_counts`.

    Raises:
        BenchmarkError: the number of counted blocks is not the number of blocks run.
        counting.CountError: QEMU or the program fails.
    """
    from abh.suites import counting  # the harness's own (on sys.path in the container)

    groups = count_groups(rsa_bits)
    argv = bare_count_argv(key_dir, groups, iterations)
    _, counts = counting.run_counted(counter, counting.DEFAULT_CPU, exe, argv, out)
    return split_bare_counts([n for _, n in counts.blocks], groups, iterations)


def count(args: argparse.Namespace) -> int:
    """In a counting layer (``archbench/count:amd64-*``): instructions per operation of the
    harness and of the bare loop for every row, one JSON line on stdout.

    Both run under the same counting QEMU and plugin (``harness/abh/suites/counting.py``), blocks of
    ``--count-iterations`` operations, one warmup and ``COUNT_REPETITIONS`` timed repetitions,
    the same fixed inputs and fixed RSA keys (:func:`count_bare`). The line holds, per row
    label, the median count / operations of each program (``harness``, ``bare``) and every
    timed block's count (``harness_blocks``, ``bare_blocks``).
    """
    rsa_bits = [int(b) for b in args.rsa_bits.split(",")]
    try:
        with tempfile.TemporaryDirectory(prefix="archbench-overhead-") as tmp:
            script, exe = build(Path(tmp))
            sys.path.insert(0, str(script.parent))
            from abh.suites import counting  # the harness's own, from the copy just built

            stdout = run_program(
                [
                    sys.executable,
                    str(script),
                    "--scheme",
                    "all",
                    "--rsa-bits",
                    args.rsa_bits,
                    "--iterations",
                    str(args.count_iterations),
                    "--repetitions",
                    str(COUNT_REPETITIONS),
                    # One warmup, as the bare loop's: both then draw the same fixed inputs
                    # (count_inputs.h) for the same repetition.
                    "--warmup",
                    "1",
                    "--count-with",
                    str(counting.COUNTER_DIR),
                ],
                "archbench_harness.py --count-with",
            )
            harness: dict[str, float] = {}
            harness_blocks: dict[str, list[int]] = {}
            for row in json.loads(stdout)["rows"]:
                if row.get("suite", "blindsig") == "blindsig" and row.get("instructions"):
                    label = row_label(row["scheme"], row["key_bits"] or 0, row["operation"])
                    harness[label] = statistics.median(row["instructions"]) / row["ops_per_block"]
                    harness_blocks[label] = [int(n) for n in row["instructions"]]
            try:
                bare, bare_blocks = count_bare(
                    counting.load_counter(),
                    exe,
                    script.parent / "drivers" / "counting",
                    rsa_bits,
                    Path(tmp) / "bare.count",
                    args.count_iterations,
                )
            except counting.CountError as exc:
                raise BenchmarkError(f"bare loop under the counter: {exc}") from exc
            line: dict[str, Any] = {"iterations": args.count_iterations, "rsa_bits": rsa_bits}
            line |= {"harness": harness, "bare": bare}
            line |= {"harness_blocks": harness_blocks, "bare_blocks": bare_blocks}
            print(json.dumps(line), flush=True)
    except BenchmarkError as exc:
        print(f"harness_overhead: error: {exc}", file=sys.stderr)
        return 1
    return 0


COUNT_GOAL = 0.005
"""Harness/bare instructions per operation must be within 0.5 % of 1 (key generation aside)."""


def _spread(blocks: Sequence[int]) -> str:
    """(max - min) / median of one program's block counts, in %; "" without blocks."""
    if not blocks:
        return ""
    return f"{(max(blocks) - min(blocks)) / statistics.median(blocks) * 100:.3f}%"


def format_instructions(counted: dict[str, Any]) -> str:
    """Harness and bare instructions per operation per row, their ratio, and the goal.

    ``counted`` is count()'s JSON line. The ratio is exact for the blocks counted; the
    spread columns, (max - min) / median of each program's block counts, show how much a
    row moves between blocks of one run (libgcrypt's pool mixing, its random RSA blinding
    factor, and the random key of key generation). Key generation rows have no goal: each
    block generates new random keys.
    """
    header = (
        f"{'row':<30} {'bare instr/op':>16} {'harness instr/op':>17} {'ratio':>8}"
        f" {'spread bare':>12} {'harness':>8}  goal"
    )
    lines = [header, "-" * len(header)]
    blocks_h = counted.get("harness_blocks", {})
    blocks_b = counted.get("bare_blocks", {})
    for label in sorted(counted["harness"], key=row_order):
        h, b = counted["harness"][label], counted["bare"].get(label)
        if b is None:
            continue
        if label.endswith("key_generation"):
            goal = "(random keys)"
        else:
            goal = "met" if abs(h / b - 1) <= COUNT_GOAL else "MISSED"
        lines.append(
            f"{label:<30} {b:>16,.1f} {h:>17,.1f} {h / b:>8.4f}"
            f" {_spread(blocks_b.get(label, [])):>12} {_spread(blocks_h.get(label, [])):>8}  {goal}"
        )
    lines.append(
        f"{counted.get('iterations', COUNT_ITERATIONS)} operations per block, median of"
        f" {COUNT_REPETITIONS} blocks;"
        " both under the same QEMU and plugin, marker overhead included in both;"
        " same fixed inputs and RSA keys; goal: ratio within 0.5 % of 1"
    )
    return "\n".join(lines)
