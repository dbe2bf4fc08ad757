"""What counting costs: wall time of ``--metric instructions`` vs ``--metric time``.

Issue 10's goal: a counting run of the default matrix takes at most 3x the time
of the emulated timing run of the same rows. For each target of ``matrix.yml``
(or ``--target``), one after the other so that they do not share the two cores:

1. a timing run (``metrics=("time",)``, one container run), stage ``run``;
2. a counting run with ``--runs`` container runs (``metrics=("instructions",)``,
   ``repeat=runs``), stages ``count image`` and ``count [i/n]``.

The ratio is the first counting container run (stage ``count`` or
``count 1/n``) over the timing container run (stage ``run``); building the
counting layer (``count image``, seconds, once per image) is printed apart.
Image builds (stages ``base``/``image``) are left out of both sides. The host's
1-minute load average is printed before each run: the machine is shared.

Also printed, per target and counted run: instructions per operation of CS
signing and verifying and RSA-2048 signing and verifying (median over the
run's blocks) and their spread over the runs, (max - min) / median of the
run medians.

Usage (from the repository, images already built or built on the first run)::

    .venv/bin/python benchmarks/counting_cost.py [--target NAME ...] [--runs 3] [--out FILE]
        [--rsa-bits 2048] [--iterations N] [--repetitions N] [--warmup N]

The last four override blindsig's settings on both sides (as ``invoke bench``
does), for a measurement of fewer rows than the default matrix.

Each target's figures are appended as one JSON line to ``--out`` (default
``.archbench/counting_cost.jsonl``) as soon as they exist, so an interrupted
measurement keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from archbench import run as pipeline
from archbench.analysis import median_per_op
from archbench.hosts import connect, engine_arch
from archbench.matrix import load
from archbench.result import Result, ResultStore
from archbench.result import load as load_result

REPO = Path(__file__).resolve().parents[1]
ROWS = (
    ("CS", None, "signing"),
    ("CS", None, "verifying"),
    ("RSA", 2048, "signing"),
    ("RSA", 2048, "verifying"),
)


def counted_rows(result: Result) -> dict[str, float]:
    """``"CS signing"``, ``"RSA-2048 verifying"``... -> median instructions per operation."""
    out = {}
    for row in result.harness.rows:
        key = (row.scheme, row.key_bits, row.operation)
        if row.suite == "blindsig" and key in ROWS and row.instructions:
            label = row.scheme if row.key_bits is None else f"{row.scheme}-{row.key_bits}"
            out[f"{label} {row.operation}"] = median_per_op(row.instructions, row.ops_per_block)
    return out


def measure(
    name: str, runs: int, results: Path, overrides: dict[str, object] | None = None
) -> dict[str, object]:
    """Time and count one target; return its figures (seconds, load, counts)."""
    matrix = load(REPO / "matrix.yml")
    client = connect()
    host = engine_arch(client)
    store = ResultStore(results)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    figures: dict[str, object] = {"target": name, "runs": runs, "overrides": overrides or {}}
    seconds: dict[str, dict[str, float]] = {}
    for metric, repeat in (("time", 1), ("instructions", runs)):
        (plan,) = pipeline.plan(
            matrix,
            matrix.select([name]),
            {"local": host},
            overrides or None,
            repeat=repeat,
            metrics=(metric,),
        )
        ws = pipeline.Workspace(
            store=store, run_id=f"{stamp}-cost-{metric[:5]}", work_dir=REPO / ".archbench" / "work"
        )
        figures[f"load_before_{metric}"] = os.getloadavg()[0]
        (outcome,) = pipeline.execute({"local": client}, [plan], ws, {"local": host})
        if not outcome.ok:
            raise SystemExit(f"{name} {metric}: {outcome.message}")
        seconds[metric] = {k: round(v, 1) for k, v in outcome.seconds.items()}
        figures[f"seconds_{metric}"] = seconds[metric]
        figures[f"load_after_{metric}"] = os.getloadavg()[0]
        if metric == "instructions":
            counted = [load_result(p) for p in outcome.result_paths]
            figures["counts"] = [counted_rows(r) for r in counted]
    timing = seconds["time"]["run"]
    stages = seconds["instructions"]
    first = stages.get("count", stages.get(f"count 1/{runs}", 0.0))
    figures["ratio"] = round(first / timing, 2)
    return figures


def spread(values: list[float]) -> float:
    """(max - min) / median."""
    return (max(values) - min(values)) / statistics.median(values)


def main() -> int:
    """Measure each target and print one line per target; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", action="append", help="matrix target (default: all)")
    ap.add_argument("--runs", type=int, default=3, help="counting container runs per target")
    ap.add_argument("--out", type=Path, default=REPO / ".archbench" / "counting_cost.jsonl")
    ap.add_argument("--results", type=Path, default=REPO / ".archbench" / "counting-cost-results")
    ap.add_argument("--rsa-bits", help="blindsig RSA sizes, comma-separated (e.g. 2048)")
    for key in ("iterations", "repetitions", "warmup"):
        ap.add_argument(f"--{key}", type=int, help=f"blindsig {key} on both sides")
    opts = ap.parse_args()
    overrides: dict[str, object] = {
        key: getattr(opts, key)
        for key in ("iterations", "repetitions", "warmup")
        if getattr(opts, key) is not None
    }
    if opts.rsa_bits:
        overrides["rsa_bits"] = [int(b) for b in opts.rsa_bits.split(",")]
    names = opts.target or [t.name for t in load(REPO / "matrix.yml").targets]
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        figures = measure(name, opts.runs, opts.results, overrides)
        with opts.out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(figures) + "\n")
        counts = figures["counts"]
        assert isinstance(counts, list)
        rows = sorted({k for c in counts for k in c})
        cells = [
            f"{k}: {statistics.median(c[k] for c in counts):,.0f}"
            f" (spread {spread([c[k] for c in counts]) * 100:.3f} %)"
            for k in rows
        ]
        print(
            f"{name}: timing {figures['seconds_time']['run']:.0f} s, "  # type: ignore[index]
            f"counting {figures['seconds_instructions']}, ratio {figures['ratio']}, "
            f"load {figures['load_before_time']:.1f}/{figures['load_before_instructions']:.1f}; "
            + "; ".join(cells),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
