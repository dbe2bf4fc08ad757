"""Our own overheads, printed as ratios (issue "Measurement you can trust").

One run prints, side by side:

* container overhead: per-op median of the signing rows (CS, RSA-2048) in a
  native container vs the same harness built and run directly on this host
  (goal <= 1.02). The container is Debian 12 like the host, so both use the
  same libgnunetutil;
* pipeline overhead: wall time of ``invoke bench`` for an already built
  image minus the harness's own measured duration (goal <= 2 s);
* stability: coefficient of variation of the per-op medians across
  ``--runs`` independent container runs, signing rows (goal <= 1 %).

Usage (as root, on an amd64 Debian 12 host with libgnunet-dev and a Docker
engine, e.g. after scripts/setup-host.sh)::

    .venv/bin/python benchmarks/pipeline_ratios.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from archbench.analysis import summarize
from archbench.hosts import connect
from archbench.images import Builder, ensure_base, ensure_image, plan_image
from archbench.matrix import load
from archbench.platforms import Arch
from archbench.result import HarnessDocument, ResultStore, parse_harness_output
from archbench.run import run_harness
from archbench.suites import Suites

REPO = Path(__file__).resolve().parents[1]
MATRIX = REPO / "benchmarks" / "matrix-bench.yml"
ROWS = (("CS", None, "signing"), ("RSA", 2048, "signing"))


def per_op(doc: HarnessDocument) -> dict[str, float]:
    """Per-operation median in ns of the signing rows, keyed ``CS``/``RSA-2048``."""
    out = {}
    for row in doc.rows:
        if (row.scheme, row.key_bits, row.operation) in ROWS:
            key = row.scheme if row.key_bits is None else f"{row.scheme}-{row.key_bits}"
            out[key] = summarize(row.samples_ns, row.ops_per_block).per_op_ns
    return out


def harness_args(iterations: int, repetitions: int) -> list[str]:
    """The harness command line of the benchmark (both sides identical)."""
    return [
        "--iterations", str(iterations), "--repetitions", str(repetitions),
        "--scheme", "all", "--rsa-bits", "2048", "--warmup", "1",
    ]  # fmt: skip


def native_runs(runs: int, args: list[str]) -> list[dict[str, float]]:
    """Build the harness on the host in a temporary copy and run it ``runs`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "harness"
        shutil.copytree(REPO / "harness", copy, ignore=shutil.ignore_patterns("blindsig", "*.txt"))
        subprocess.run(["make", "-s", "-C", str(copy)], check=True)
        out = []
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, str(copy / "archbench_harness.py"), *args],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            out.append(per_op(parse_harness_output(done.stdout)))
        return out


def main() -> int:
    """Run the three measurements and print their ratios; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="independent runs per side")
    opts = ap.parse_args()
    if Arch.native() is not Arch.AMD64:
        print("this benchmark compares against Debian 12 amd64; run it on an amd64 host")
        return 2
    m = load(MATRIX)
    (target,) = m.targets
    suite = target.suites.blindsig
    assert suite is not None  # the benchmark matrix defines it
    client = connect()
    builder = Builder(client, REPO / ".archbench" / "work", REPO / ".archbench" / "logs")
    base = ensure_base(builder, target.base, m.bases[target.base], Arch.AMD64)
    spec = plan_image(Arch.AMD64, target.profile, m.profiles[target.profile].packages,
                      base.tag, base.image_id)  # fmt: skip
    ensure_image(builder, spec, "bench-amd64.build.log")

    args = harness_args(suite.iterations, suite.repetitions)
    native = native_runs(opts.runs, args)
    container = [
        per_op(run_harness(client, spec.tag, Arch.AMD64, Suites(blindsig=suite))[0])
        for _ in range(opts.runs)
    ]

    print(f"{'measure':38} {'row':9} {'value':>12} {'goal':>8}")
    for key in ("CS", "RSA-2048"):
        n = statistics.median(r[key] for r in native)
        c = statistics.median(r[key] for r in container)
        print(f"{'container / host per-op (median)':38} {key:9} {c / n:12.4f} {'<= 1.02':>8}")
    for key in ("CS", "RSA-2048"):
        xs = [r[key] for r in container]
        cv = statistics.stdev(xs) / statistics.fmean(xs)
        print(
            f"{f'CV across {opts.runs} container runs':38} {key:9} {cv * 100:11.2f}% {'<= 1 %':>8}"
        )

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "INVOKE_ARCHBENCH_RESULTS": tmp}
        t0 = time.monotonic()
        subprocess.run(
            [str(Path(sys.executable).with_name("invoke")), "bench", "--matrix", str(MATRIX)],
            cwd=REPO, env=env, check=True, capture_output=True,
        )  # fmt: skip
        wall = time.monotonic() - t0
        loaded, _ = ResultStore(Path(tmp)).load_all()
        harness_s = loaded[0].harness.duration_s
    label = "invoke bench wall - harness duration"
    print(f"{label:38} {'all':9} {wall - harness_s:11.2f}s {'<= 2 s':>8}")
    print(json.dumps({"invoke_wall_s": round(wall, 3), "harness_s": round(harness_s, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
