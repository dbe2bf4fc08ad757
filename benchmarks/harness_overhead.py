#!/usr/bin/env python3
"""Harness overhead: every blindsig row's per-operation time vs a bare C loop (issue 12).

For every row of the blindsig suite (CS: key generation, r derivation,
blinding secret derivation, blinding, signing, unblinding, verifying; RSA of
each size in ``--rsa-bits``: key generation, blinding, signing, unblinding,
verifying) this compares the per-operation time measured by
``harness/archbench_harness.py`` (default measurement: one call after
another on the same item) with that of ``benchmarks/harness_overhead.c``,
which times the same calls with nothing else in the loop. Both run in the
same container of a native benchmark image, interleaved: each round runs the
harness once and the bare loop once, alternating which goes first, with the
bare loop given the harness's calibrated block sizes (of the same round, or
of the one before when it runs first).

Per row and round the ratio is fastest(harness blocks) / fastest(bare
blocks) per operation: the cost of the calls without preemption, which is
what harness overhead would add to (``--statistic median``: median block /
median block, as reports print; on a VM a neighbour's burst moves it). The
table gives, per row, the median of the per-round ratios with its
distribution-free 95 % interval over rounds
(``archbench.analysis.overhead.paired_ratio_interval``: order statistics, as every
archbench median; a streak of rounds in which one program's whole run was
slowed does not move it).
The goal: every interval narrower than ±3 % and containing a value within
0.97-1.03. It takes ``--max-rounds`` rounds, or fewer when ``--max-minutes``
is spent. RSA key generation rows get the same rounds as the others, with
one key per block (calibration gives one: a key takes more than 1 ms), but
their figure pools every key: median of all harness keys / median of all
bare keys, with a two-sample bootstrap interval
(``archbench.analysis.overhead.pooled_ratio_interval``). A key's time varies from key
to key by tens of percent (CV 0.5-0.7: the prime search), which dwarfs any
drift between rounds, so only the number of keys narrows the interval; the
table says how many keys each program would need for ±3 % (about 4,000-5,000
at that CV). ``--rsa-bits 1024 --repetitions 100`` gets there for RSA-1024 in
minutes; RSA-2048 to -4096 would take 0.2-3 h of quiet machine.

Run it on the host (needs Docker and a built native image; the checkout is
mounted read-only and everything is built in the container's /tmp)::

    .venv/bin/python benchmarks/harness_overhead.py [--image archbench/bench:amd64-...]
        [--rsa-bits 1024,2048,3072,4096] [--repetitions 5] [--max-rounds 30]
        [--max-minutes 30] [--raw out.jsonl]

``--instructions`` instead counts instructions per operation of both programs
(blocks of ``--count-iterations`` operations, default 10, one warmup and 2 timed
repetitions, markers of
``harness/drivers/counting/count_marker.h`` in both) under the same QEMU and plugin in a counting
layer (``--count-image``, default the newest ``archbench/count:amd64-*``;
``invoke bench --arch amd64 --metric instructions`` builds one). Both work on the
same inputs: blindsig, counted, runs CS and then the RSA sizes sequentially in one
process, and the bare loop runs the same groups in the same order in one process
(``harness_overhead --count-markers --count-keys DIR cs ... rsa 1024 ...``), so
that both draw the same fixed messages, nonces, blinding seeds and RSA blinding
key secrets for the same repetition (``harness/drivers/counting/count_inputs.h``), and both replace
the key of each RSA key generation block by the same fixed test key
(``harness/drivers/counting/count-key-rsa-<bits>.key``, loaded and swapped in by the same
``count_inputs.h`` code). Key generation itself stays random (libgcrypt's primes)
and has no goal; for every other row the goal is a harness/bare ratio within
0.5 % of 1. What still differs between the two programs: libgcrypt's random
blinding factor inside every RSA signature, and the phase of libgcrypt's entropy
pool mixing (a SHA-1 over the pool, about 40 600 instructions on amd64, after
every few hashes), which the random key generation and blindsig's untimed checks
(a flipped-bit verification per repetition) shift; the table's spread columns
show how far each program's blocks move. ``--raw FILE`` appends the JSON line
(per-row medians and every block's count); ``--from-raw FILE --instructions``
prints its table again. Measured 2026-12-01 (amd64, ``-cpu max``; raw lines in
``benchmarks/data/``): harness/bare 1.0000 for every CS row but unblinding (1.0036:
the harness's stage loop reloads the item's ``b`` and recomputes ``&bs[b]`` per call,
4 of 1 139 instructions), RSA-1024 0.9979/1.0002/0.9999/0.9998 (blinding, signing,
unblinding, verifying), RSA-2048 0.9998/1.0002/0.9999/1.0001 (10 operations per
block), RSA-3072 0.9997/1.0003/1.0000/0.9998 (``--count-iterations 2``), RSA-4096
0.9982/0.9989/1.0002/0.9969 (``--count-iterations 1``). With 1 or 2 operations per
block one pool mix is a large part of a cheap CS block, so CS is read from the
10-operation run; RSA key generation under QEMU dominates the run time (RSA-4096
with 1 operation per block: 7 minutes).

``--image`` defaults to the newest ``archbench/bench:amd64-*`` image. The
raw rounds are written to ``--raw`` (JSON lines) as they come, so nothing
measured is lost; ``--from-raw FILE`` prints the table of a file written
before. Inside the image the script runs as ``harness_overhead.py collect``
(standard library only). Building the two programs and the counting mode are in
``benchmarks/overhead_programs.py``.

Exit status: 0 after printing the table (whether or not the goal is met),
1 when building or running either program fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GOAL_HALF_WIDTH = 0.03
MOUNT = "/src"


# The two programs and the counting mode live in overhead_programs.py (a sibling module:
# this directory is on sys.path when the script runs, in the container as on the host).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead_programs import (  # noqa: E402
    COUNT_ITERATIONS,
    CS_OPS,
    RSA_OPS,
    BenchmarkError,
    build,
    count,
    format_instructions,
    row_label,
    row_order,
    run_program,
)

Blocks = dict[str, tuple[int, list[int]]]
"""Row label -> (operations per block, block times in ns)."""


def run_harness(script: Path, rsa_bits: Sequence[int], repetitions: int) -> Blocks:
    """One harness run of CS and every RSA size; every row's blocks.

    Raises:
        BenchmarkError: the harness fails or a row is missing or invalid.
    """
    stdout = run_program(
        [
            sys.executable,
            str(script),
            "--scheme",
            "all",
            "--rsa-bits",
            ",".join(map(str, rsa_bits)),
            "--iterations",
            "1",
            "--repetitions",
            str(repetitions),
            "--warmup",
            "1",
        ],
        "archbench_harness.py",
    )
    doc = json.loads(stdout)
    if doc["parameters"].get("fresh_items"):
        raise BenchmarkError("the harness measured fresh items; the bare loop repeats one item")
    found: Blocks = {}
    for row in doc["rows"]:
        if row.get("suite", "blindsig") != "blindsig":
            continue
        if not row["valid"]:
            raise BenchmarkError(f"harness: row {row['scheme']} {row['operation']} is invalid")
        label = row_label(row["scheme"], row["key_bits"] or 0, row["operation"])
        found[label] = (int(row["ops_per_block"]), [int(x) for x in row["samples_ns"]])
    return found


def run_bare(exe: Path, sizes: dict[str, int], rsa_bits: Sequence[int], repetitions: int) -> Blocks:
    """The bare loops of every row, with the block sizes ``sizes`` (row label -> ops).

    Raises:
        BenchmarkError: the program fails or prints something unexpected.
    """
    found: Blocks = {}
    groups: list[tuple[str, int, tuple[str, ...]]] = [("CS", 0, CS_OPS)]
    groups += [("RSA", bits, RSA_OPS) for bits in rsa_bits]
    for scheme, bits, ops in groups:
        n = [sizes[row_label(scheme, bits, op)] for op in ops]
        argv = [str(exe), scheme.lower()]
        argv += [str(bits)] if scheme == "RSA" else []
        argv += [",".join(map(str, n)), str(repetitions)]
        stdout = run_program(argv, f"harness_overhead {' '.join(argv[1:])}")
        blocks: dict[str, list[int]] = {op: [] for op in ops}
        for line in stdout.splitlines():
            op, _, ns = line.partition(" ")
            if op not in blocks or not ns.isdigit():
                raise BenchmarkError(f"harness_overhead: unexpected line {line[:80]!r}")
            blocks[op].append(int(ns))
        for op, k in zip(ops, n, strict=True):
            if len(blocks[op]) != repetitions:
                raise BenchmarkError(f"harness_overhead: {op}: expected {repetitions} blocks")
            found[row_label(scheme, bits, op)] = (k, blocks[op])
    return found


def collect(args: argparse.Namespace) -> int:
    """Rounds of harness and bare loop, one JSON line per round on stdout."""
    rsa_bits = [int(b) for b in args.rsa_bits.split(",")]
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="archbench-overhead-") as tmp:
            script, exe = build(Path(tmp))
            sizes = {k: v[0] for k, v in run_harness(script, rsa_bits, 1).items()}
            for round_ in range(1, args.rounds + 1):
                bare_first = round_ % 2 == 0
                bare: Blocks = {}
                if bare_first:
                    bare = run_bare(exe, sizes, rsa_bits, args.repetitions)
                harness = run_harness(script, rsa_bits, args.repetitions)
                if not bare_first:
                    sizes = {k: v[0] for k, v in harness.items()}
                    bare = run_bare(exe, sizes, rsa_bits, args.repetitions)
                sizes = {k: v[0] for k, v in harness.items()}
                line = {"round": round_, "bare_first": bare_first, "harness": harness}
                line["bare"] = bare
                print(json.dumps(line), flush=True)
                if time.monotonic() - started > args.max_seconds:
                    break
    except BenchmarkError as exc:
        print(f"harness_overhead: error: {exc}", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------ on the host


def _fastest(blocks: Sequence[float]) -> float:
    return min(blocks)


def _median(blocks: Sequence[float]) -> float:
    return float(statistics.median(blocks))


STATISTICS: dict[str, Callable[[Sequence[float]], float]] = {"median": _median, "min": _fastest}
"""How one round's blocks of one program become one figure (``--statistic``)."""


def per_round_ratios(
    rounds: Sequence[dict[str, Any]], statistic: str = "min"
) -> dict[str, list[float]]:
    """Row label -> per-round ratio stat(harness) / stat(bare), per operation.

    ``statistic`` is ``median`` (what reports print) or ``min`` (the fastest block: on a
    loaded machine the block that ran undisturbed, the cost both programs share).
    """
    of = STATISTICS[statistic]
    out: dict[str, list[float]] = {}
    for r in rounds:
        for label, (h_ops, h_ns) in r["harness"].items():
            if label not in r["bare"]:
                continue
            b_ops, b_ns = r["bare"][label]
            ratio = (of(h_ns) / h_ops) / (of(b_ns) / b_ops)
            out.setdefault(label, []).append(ratio)
    return out


def _per_op(rounds: Sequence[dict[str, Any]], side: str, label: str) -> list[float]:
    """Every block of ``label`` of ``side`` (harness or bare) over all rounds, ns per op."""
    return [ns / r[side][label][0] for r in rounds for ns in r[side][label][1]]


def format_table(rounds: Sequence[dict[str, Any]], statistic: str = "min") -> tuple[str, bool]:
    """The table of ``rounds`` (collect's JSON lines) and whether every row met the goal."""
    from archbench.analysis import overhead  # host only: scipy

    ratios = per_round_ratios(rounds, statistic)
    of = STATISTICS[statistic]
    header = (
        f"{'row':<36} {'ops/block':>9} {'bare µs/op':>11} {'harness µs/op':>14}"
        f" {'ratio':>6} {'95 % CI':>15} {'±':>6}  goal"
    )
    lines = [header, "-" * len(header)]
    all_ok = True
    for label in sorted(ratios, key=row_order):
        h = [of(r["harness"][label][1]) / r["harness"][label][0] for r in rounds]
        b = [of(r["bare"][label][1]) / r["bare"][label][0] for r in rounds]
        pooled = label.startswith("RSA-") and label.endswith(" key_generation")
        if pooled:  # every key one sample: key-to-key spread dwarfs round-to-round drift
            h_all, b_all = (_per_op(rounds, side, label) for side in ("harness", "bare"))
            est = overhead.pooled_ratio_interval(h_all, b_all)
            h, b = h_all, b_all
        else:
            est = overhead.paired_ratio_interval(ratios[label])
        ops = "/".join(sorted({str(r["harness"][label][0]) for r in rounds}, key=int))
        contains = est.low <= 1 + GOAL_HALF_WIDTH and est.high >= 1 - GOAL_HALF_WIDTH
        narrow = est.half_width <= GOAL_HALF_WIDTH
        ok = contains and narrow
        all_ok = all_ok and ok
        goal = "met" if ok else ("too wide" if contains else "MISSED")
        if pooled:
            need = overhead.samples_for_half_width(est, est.rounds, GOAL_HALF_WIDTH)
            goal += f" (pooled {est.rounds} keys each" + (
                f"; ~{need:.0f} for ±3 %)" if not narrow and math.isfinite(need) else ")"
            )
        lines.append(
            f"{label:<36} {ops:>9} {statistics.median(b) / 1000:>11.3f}"
            f" {statistics.median(h) / 1000:>14.3f} {est.ratio:>6.3f}"
            f" [{est.low:.3f}, {est.high:.3f}] {est.half_width * 100:>5.1f}%  {goal}"
        )
    lines.append(
        f"{len(rounds)} interleaved rounds; per round {statistic}(harness blocks) /"
        f" {statistic}(bare blocks) per op; ratio: median over rounds with its"
        " distribution-free 95 % interval; goal: ± <= 3 % and the interval touching 0.97-1.03;"
        " RSA key generation: median(every harness key) / median(every bare key), two-sample"
        " bootstrap (archbench.analysis.overhead.pooled_ratio_interval)"
    )
    return "\n".join(lines), all_ok


def _default_image(client: Any, repository: str) -> str:
    images: list[tuple[str, str]] = [
        (str(img.attrs.get("Created", "")), str(tag))
        for img in client.images.list(name=repository)
        for tag in img.tags
        if tag.startswith(f"{repository}:amd64-")
    ]
    if not images:
        how = "--metric instructions" if "count" in repository else "images"
        raise BenchmarkError(f"no {repository}:amd64-* image; run invoke {how} --arch amd64")
    return max(images)[1]


def _stream(args: argparse.Namespace, mode: str) -> Iterator[dict[str, Any]]:
    """Run ``mode`` (collect, count) in a container of the image; yield its JSON lines."""
    import docker  # host only

    client = docker.from_env()
    if mode == "count":
        image = args.count_image or _default_image(client, "archbench/count")
    else:
        image = args.image or _default_image(client, "archbench/bench")
    print(f"image {image}", file=sys.stderr)
    container = client.containers.run(
        image,
        entrypoint=["python3", f"{MOUNT}/benchmarks/harness_overhead.py"],
        command=[
            mode,
            "--rsa-bits",
            args.rsa_bits,
            "--repetitions",
            str(args.repetitions),
            "--rounds",
            str(args.max_rounds),
            "--max-seconds",
            str(args.max_minutes * 60),
            "--count-iterations",
            str(args.count_iterations),
        ],
        volumes={str(REPO): {"bind": MOUNT, "mode": "ro"}},
        network_mode="none",
        labels={"org.archbench.helper": "harness_overhead"},
        detach=True,
    )
    try:
        pending = ""
        for chunk in container.logs(stdout=True, stderr=False, stream=True, follow=True):
            pending += chunk.decode("utf-8", "replace")
            *done, pending = pending.split("\n")
            for line in done:
                if line.strip():
                    yield json.loads(line)
        status = container.wait()
        if status.get("StatusCode") != 0:
            err = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
            raise BenchmarkError(f"{mode} in {image} failed:\n{err[-2000:]}")
    finally:
        with contextlib.suppress(docker.errors.DockerException):
            container.remove(force=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure (or read ``--from-raw``) and print the table; 1 on failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("mode", nargs="?", choices=("host", "collect", "count"), default="host")
    parser.add_argument("--image", default="", help="native benchmark image (default: newest)")
    parser.add_argument("--rsa-bits", default="1024,2048,3072,4096")
    parser.add_argument("--repetitions", type=int, default=5, help="timed blocks per round")
    parser.add_argument("--rounds", type=int, default=30, help="collect: rounds at most")
    parser.add_argument("--max-rounds", type=int, default=30, help="rounds at most")
    parser.add_argument("--max-minutes", type=float, default=30.0, help="time budget")
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="collect: budget")
    parser.add_argument(
        "--statistic",
        choices=tuple(STATISTICS),
        default="min",
        help="per round and program: fastest block (default: the undisturbed cost) or median",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="instead: instructions per operation of both under archbench's QEMU counter",
    )
    parser.add_argument("--count-image", default="", help="counting layer (default: newest)")
    parser.add_argument(
        "--count-iterations",
        type=int,
        default=COUNT_ITERATIONS,
        help="--instructions: operations per block (fewer: less RSA key generation under QEMU)",
    )
    parser.add_argument("--raw", type=Path, default=None, help="append raw rounds (JSON lines)")
    parser.add_argument("--from-raw", type=Path, default=None, help="table of a raw file")
    args = parser.parse_args(argv)
    if min(args.repetitions, args.max_rounds, args.rounds, args.count_iterations) < 1:
        parser.error("--repetitions, --rounds, --max-rounds and --count-iterations must be >= 1")
    if args.mode == "collect":
        return collect(args)
    if args.mode == "count":
        return count(args)
    if args.instructions:
        try:
            if args.from_raw is not None:
                lines = args.from_raw.read_text(encoding="utf-8").splitlines()
                counted = json.loads([line for line in lines if line.strip()][-1])
            else:
                (counted,) = list(_stream(args, "count"))
                if args.raw is not None:
                    with args.raw.open("a", encoding="utf-8") as raw:
                        raw.write(json.dumps(counted) + "\n")
        except (BenchmarkError, OSError, ValueError, IndexError) as exc:
            print(f"harness_overhead: error: {exc}", file=sys.stderr)
            return 1
        print(format_instructions(counted))
        return 0
    try:
        if args.from_raw is not None:
            lines = args.from_raw.read_text(encoding="utf-8").splitlines()
            rounds = [json.loads(line) for line in lines if line.strip()]
        else:
            rounds = []
            raw = args.raw.open("a", encoding="utf-8") if args.raw else None
            for r in _stream(args, "collect"):
                rounds.append(r)
                if raw is not None:
                    raw.write(json.dumps(r) + "\n")
                    raw.flush()
                print(f"round {r['round']} done", file=sys.stderr)
            if raw is not None:
                raw.close()
    except (BenchmarkError, OSError, ValueError) as exc:
        print(f"harness_overhead: error: {exc}", file=sys.stderr)
        return 1
    if not rounds:
        print("harness_overhead: error: no round finished", file=sys.stderr)
        return 1
    table, _ = format_table(rounds, args.statistic)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
