"""``invoke report`` time and memory against the number of results files (issue 23).

For each count N (default 1,000, 4,000 and 10,000) one run of N one-row results files
(N targets, one CS signing row each) is written to a temporary results folder; then
``--repeats`` times a fresh Python process renders it as ``invoke report`` does
(:func:`archbench.cli.report.render_report`, figures included unless ``--no-plots``) into a
fresh output folder, and reports its wall time and peak RSS. Printed per N: the median
time with min-max, ms per file, and the ratio of ms per file to that of the smallest N
(1.0 when report time is linear in the files) with its min-max over the repeats.

Goal: 10,000 files in under 30 s on the 2-core VM, and ratios near 1.

Usage::

    .venv/bin/python benchmarks/report_scaling.py [--files 1000,4000,10000] [--repeats 3]
        [--no-plots] [--repo DIR]

``--repo`` measures another checkout (e.g. a worktree of the commit before a change)
with the same inputs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUN_ID = "20261129T224000Z-1a2b3c"

_WORKER = """
import json, resource, sys, time
from pathlib import Path
from archbench.cli.report import ReportRequest, render_report
request = ReportRequest(results=Path(sys.argv[1]), out=Path(sys.argv[2]), plots=sys.argv[3] == "1")
start = time.perf_counter()
render_report(request, on_line=lambda line: None)
seconds = time.perf_counter() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss_mb}))
"""


def _document(target: str, sample: int) -> str:
    """One results file of one CS signing row (format ``archbench-result`` version 1)."""
    doc = {
        "format": "archbench-result",
        "version": 1,
        "run_id": RUN_ID,
        "target": {
            "name": target,
            "arch": "amd64",
            "platform": "linux/amd64",
            "base": "debian:trixie",
            "profile": "thesis",
        },
        "execution": {
            "emulated": False,
            "host_arch": "amd64",
            "host_cpu": "AMD EPYC 7763 64-Core Processor",
            "image_id": "sha256:0123456789ab",
            "image_tag": f"archbench/{target}:latest",
        },
        "harness": {
            "format": "archbench-harness",
            "version": 1,
            "harness_version": "0.1.0",
            "started_at": "2026-11-29T22:40:00Z",
            "duration_s": 12.5,
            "setup": {
                "cpu_model": "AMD EPYC 7763 64-Core Processor",
                "cores": 8,
                "machine": "x86_64",
                "kernel": "Linux 6.1.0-28-amd64",
                "os": "Debian GNU/Linux 13 (trixie)",
                "packages": {"libgnunetutil": "0.21.1-1"},
            },
            "rows": [
                {
                    "suite": "blindsig",
                    "scheme": "CS",
                    "key_bits": None,
                    "operation": "signing",
                    "ops_per_block": 10,
                    "samples_ns": [sample, sample + 1000, sample - 1000],
                    "valid": True,
                }
            ],
        },
    }
    return json.dumps(doc, indent=2) + "\n"


def write_results(root: Path, count: int) -> None:
    """``count`` one-row results files of run :data:`RUN_ID` under ``root``."""
    run = root / RUN_ID
    run.mkdir(parents=True)
    for i in range(count):
        name = f"t{i:05d}"
        (run / f"{name}.json").write_text(_document(name, 770_000 + i), encoding="utf-8")


def measure(repo: Path, results: Path, out: Path, plots: bool) -> dict[str, float]:
    """One report in a fresh process: {"seconds": wall time, "rss_mb": peak RSS in MiB}."""
    env = {**os.environ, "PYTHONPATH": str(repo), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", _WORKER, str(results), str(out), "1" if plots else "0"],
        cwd=repo, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"report failed:\n{done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", default="1000,4000,10000", help="counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-plots", action="store_true", help="render without figures")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure")
    args = parser.parse_args()
    counts = sorted(int(n) for n in args.files.split(","))
    print(f"checkout {args.repo}, figures {'off' if args.no_plots else 'on'}, load "
          f"{os.getloadavg()[0]:.2f}, {args.repeats} repeat(s)")  # fmt: skip
    print(f"{'files':>7} {'median s':>9} {'min-max s':>13} {'ms/file':>8} "
          f"{'ratio':>6} {'min-max':>11} {'RSS MiB':>8}")  # fmt: skip
    base: list[float] | None = None
    with tempfile.TemporaryDirectory(prefix="archbench-scaling-") as tmp:
        for count in counts:
            results = Path(tmp) / f"results-{count}"
            write_results(results, count)
            runs = [
                measure(args.repo, results, Path(tmp) / f"out-{count}-{i}", not args.no_plots)
                for i in range(args.repeats)
            ]
            per_file = [r["seconds"] * 1000 / count for r in runs]
            base = base or per_file
            ratios = [p / statistics.median(base) for p in per_file]
            seconds = [r["seconds"] for r in runs]
            print(
                f"{count:>7} {statistics.median(seconds):>9.1f} "
                f"{min(seconds):>6.1f}-{max(seconds):<6.1f} {statistics.median(per_file):>8.2f} "
                f"{statistics.median(ratios):>6.2f} {min(ratios):>5.2f}-{max(ratios):<5.2f} "
                f"{max(r['rss_mb'] for r in runs):>8.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
