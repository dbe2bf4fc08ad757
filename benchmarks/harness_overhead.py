#!/usr/bin/env python3
"""Harness overhead: our harness's per-operation time vs a bare C loop (issue 3).

For CS signing (``GNUNET_CRYPTO_cs_sign_derive``) and RSA-2048 signing
(``GNUNET_CRYPTO_rsa_sign_blinded`` on prepared blinded messages), prints the
per-operation time measured by ``harness/archbench_harness.py`` (median
timed block / ``ops_per_block``, calibrated as by default) next to the
per-operation time of ``benchmarks/harness_overhead.c``, which times the same
call N times between one pair of clock reads with nothing else in the loop.
N is the harness's calibrated block size for that row, and both take the
same number of timed repetitions after one warmup. The goal is
harness / bare <= 1.03.

Each ``--runs`` round runs the harness once and the bare loop once per row,
alternating which goes first, so that drift (thermal, frequency, other
load) hits both alike; the table shows the medians over rounds and the
range of the per-round ratios, which is the noise floor a ratio must be
read against. The bare loop uses the block size of the harness run of the
same round, or of the one before when it runs first (calibrated sizes can
differ between runs, e.g. 200 or 500 for CS signing).

Both programs are compiled from this checkout with the flags of
``harness/Makefile`` against the libgnunetutil that ``pkg-config
gnunetutil`` finds, in a temporary directory. Standard library only; needs
make, a C compiler, pkg-config and libgnunet-dev.

Usage, natively on the host::

    .venv/bin/python benchmarks/harness_overhead.py [--runs 5] [--repetitions 7]

Inside a built benchmark image (``docker images archbench/bench``; it has
gcc, make, pkgconf, libgnunet-dev and python3; everything is built in a
temporary directory, so the checkout can be mounted read-only)::

    docker run --rm -v "$PWD":/src:ro --entrypoint python3 \\
        archbench/bench:<tag> /src/benchmarks/harness_overhead.py

Exit status: 0 after printing the table (whether or not the goal is met),
1 when building or running either program fails.
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
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HARNESS_DIR = REPO / "harness"
BARE_SOURCE = Path(__file__).resolve().parent / "harness_overhead.c"
HARNESS_SOURCES = ("blindsig.c", "Makefile", "archbench_harness.py")
GOAL = 1.03
RSA_BITS = 2048


class BenchmarkError(Exception):
    """Building or running one of the two programs failed; the message says which and why."""


@dataclass(frozen=True)
class BenchRow:
    """One compared row.

    Attributes:
        label: how the table names it.
        scheme: harness scheme, "CS" or "RSA".
        key_bits: RSA modulus bits; None for CS.
        bare_command: harness_overhead subcommand and its leading arguments.
    """

    label: str
    scheme: str
    key_bits: int | None
    bare_command: tuple[str, ...]


ROWS = (
    BenchRow("CS signing", "CS", None, ("cs-sign",)),
    BenchRow(f"RSA-{RSA_BITS} signing", "RSA", RSA_BITS, ("rsa-sign", str(RSA_BITS))),
)


@dataclass(frozen=True)
class Measurement:
    """The timed blocks of one row in one round.

    Attributes:
        ops_per_block: operations per timed block.
        blocks_ns: wall time of each timed block, ns.
    """

    ops_per_block: int
    blocks_ns: tuple[int, ...]

    @property
    def per_op_ns(self) -> float:
        """Median block time / ops_per_block, ns."""
        return statistics.median(self.blocks_ns) / self.ops_per_block

    @property
    def best_per_op_ns(self) -> float:
        """Fastest block time / ops_per_block, ns."""
        return min(self.blocks_ns) / self.ops_per_block


def _run(argv: Sequence[str], what: str, cwd: Path | None = None) -> str:
    """Run a command and return its stdout.

    Raises:
        BenchmarkError: it cannot be started or exits non-zero (stderr's tail included).
    """
    try:
        done = subprocess.run(
            list(argv), cwd=cwd, capture_output=True, text=True, check=False, timeout=3600
        )
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
    harness.mkdir()
    for name in HARNESS_SOURCES:
        shutil.copy2(HARNESS_DIR / name, harness / name)
    _run(["make", "-C", str(harness)], "make (harness)")
    cflags = _run(["make", "-s", "-C", str(harness), "print-cflags"], "make print-cflags").split()
    gnunet_cflags = _run(["pkg-config", "--cflags", "gnunetutil"], "pkg-config --cflags").split()
    gnunet_libs = _run(["pkg-config", "--libs", "gnunetutil"], "pkg-config --libs").split()
    bare = workdir / "harness_overhead"
    _run(
        ["cc", *gnunet_cflags, *cflags, "-o", str(bare), str(BARE_SOURCE), *gnunet_libs],
        "cc harness_overhead.c",
    )
    return harness / "archbench_harness.py", bare


def run_harness(script: Path, repetitions: int) -> dict[str, Measurement]:
    """One harness run of CS and RSA-2048; the signing rows' per-op times by row label.

    Raises:
        BenchmarkError: the harness fails or a row is missing or invalid.
    """
    stdout = _run(
        [
            sys.executable,
            str(script),
            "--scheme",
            "all",
            "--rsa-bits",
            str(RSA_BITS),
            "--repetitions",
            str(repetitions),
            "--warmup",
            "1",
        ],
        "archbench_harness.py",
    )
    rows = {(r["scheme"], r["key_bits"], r["operation"]): r for r in json.loads(stdout)["rows"]}
    found: dict[str, Measurement] = {}
    for bench in ROWS:
        row = rows.get((bench.scheme, bench.key_bits, "signing"))
        if row is None or not row["valid"]:
            raise BenchmarkError(f"harness: {bench.label} missing or invalid: {row}")
        found[bench.label] = Measurement(int(row["ops_per_block"]), tuple(row["samples_ns"]))
    return found


def run_bare(exe: Path, bench: BenchRow, ops: int, repetitions: int) -> Measurement:
    """Time ``repetitions`` bare blocks of ``ops`` operations (after one warmup).

    Raises:
        BenchmarkError: the program fails or prints something other than block times.
    """
    stdout = _run([str(exe), *bench.bare_command, str(ops), str(repetitions)], bench.label)
    try:
        blocks = [int(line) for line in stdout.split()]
    except ValueError as exc:
        raise BenchmarkError(f"{bench.label}: unexpected output {stdout[:80]!r}") from exc
    if len(blocks) != repetitions or min(blocks) <= 0:
        raise BenchmarkError(f"{bench.label}: expected {repetitions} positive block times")
    return Measurement(ops, tuple(blocks))


def format_table(harness: dict[str, list[Measurement]], bare: dict[str, list[Measurement]]) -> str:
    """Render the comparison.

    Columns: the medians over rounds of each program's per-round median
    per-op time and their ratio; the ratio of the fastest blocks seen over
    all rounds ("best"), which for identical work is the least noisy
    estimate of a constant overhead; and the range of per-round ratios, the
    noise floor any ratio must be read against.

    Args:
        harness: row label -> the harness's measurement per round.
        bare: row label -> the bare loop's measurement per round (same rounds).
    """
    header = (
        f"{'row':<18} {'ops/block':>9} {'bare µs/op':>11} {'harness µs/op':>14}"
        f" {'ratio':>6} {'best':>6}  per-round ratios"
    )
    lines = [header, "-" * len(header)]
    for label in harness:
        h = [m.per_op_ns for m in harness[label]]
        b = [m.per_op_ns for m in bare[label]]
        ratios = [x / y for x, y in zip(h, b, strict=True)]
        ratio = statistics.median(h) / statistics.median(b)
        best = min(m.best_per_op_ns for m in harness[label]) / min(
            m.best_per_op_ns for m in bare[label]
        )
        ops = "/".join(sorted({str(m.ops_per_block) for m in harness[label]}, key=int))
        lines.append(
            f"{label:<18} {ops:>9} {statistics.median(b) / 1000:>11.3f}"
            f" {statistics.median(h) / 1000:>14.3f} {ratio:>6.3f} {best:>6.3f}"
            f"  {min(ratios):.3f}–{max(ratios):.3f}"
        )
    lines.append(f"goal: harness / bare <= {GOAL}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Build, measure and print the table; 1 on failure (message on stderr)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument(
        "--repetitions", type=int, default=7, help="timed blocks per row and round (default 7)"
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.repetitions < 1:
        parser.error("--runs and --repetitions must be >= 1")
    harness: dict[str, list[Measurement]] = {bench.label: [] for bench in ROWS}
    bare: dict[str, list[Measurement]] = {bench.label: [] for bench in ROWS}
    try:
        with tempfile.TemporaryDirectory(prefix="archbench-overhead-") as tmp:
            script, exe = build(Path(tmp))
            # The bare loop needs the harness's calibrated block sizes: a
            # first harness run (not counted) provides them, so that later
            # rounds can alternate which program runs first.
            sizes = {k: m.ops_per_block for k, m in run_harness(script, 1).items()}
            for round_ in range(1, args.runs + 1):
                bare_first = round_ % 2 == 0
                if bare_first:
                    for bench in ROWS:
                        ops = sizes[bench.label]
                        bare[bench.label].append(run_bare(exe, bench, ops, args.repetitions))
                measured = run_harness(script, args.repetitions)
                for bench in ROWS:
                    harness[bench.label].append(measured[bench.label])
                    sizes[bench.label] = measured[bench.label].ops_per_block
                    if not bare_first:
                        ops = sizes[bench.label]
                        bare[bench.label].append(run_bare(exe, bench, ops, args.repetitions))
                print(f"round {round_}/{args.runs} done", file=sys.stderr)
    except BenchmarkError as exc:
        print(f"harness_overhead: error: {exc}", file=sys.stderr)
        return 1
    print(format_table(harness, bare))
    return 0


if __name__ == "__main__":
    sys.exit(main())
