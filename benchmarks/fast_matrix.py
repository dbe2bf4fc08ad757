"""The default matrix from an empty engine, and the overhead of a warm rerun (issue 14, "Fast").

Runs ``invoke bench`` on the whole default matrix (matrix.yml) against the engine in
``DOCKER_HOST`` with a fresh work directory (so every base is bootstrapped with
debootstrap and every image built), times it, prints the stage table (base /
image / run seconds per target, :mod:`benchmarks.stage_table`) and the total;
then runs ``invoke bench --arch amd64`` ``--warm`` times on the now warm engine
and prints, for each, its wall time minus the harness's own duration (the
``duration_s`` the harness records), the overhead the goal bounds at 2 s.
Every figure is printed with the load average before and after it (the machine
is shared). Measure on an engine of its own, for example a second dockerd::

    dockerd --data-root /tmp/fe/data --exec-root /tmp/fe/x --pidfile /tmp/fe/pid \\
        -H unix:///tmp/fe/docker.sock --bridge=<a bridge of its own> \\
        --iptables=false --ip6tables=false &
    DOCKER_HOST=unix:///tmp/fe/docker.sock .venv/bin/python benchmarks/fast_matrix.py

Builds on such an engine reach the package mirror through the apt cache
(``apt_proxy: auto``, apt-cacher-ng from ``scripts/setup-host.sh``), since a
bridge without iptables has no NAT. ``--skip-matrix`` only measures warm reruns;
``--matrix-run RUN_ID`` prints the stage table of an earlier run instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from archbench.result import ResultStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stage_table  # the sibling script, not a package

REPO = Path(__file__).resolve().parents[1]


def load() -> str:
    """The 1/5/15-minute load averages, as ``/proc/loadavg`` prints them."""
    return " ".join(Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3])


def invoke(args: list[str], env: dict[str, str], log: Path, cwd: Path = REPO) -> float:
    """Run ``invoke ARGS`` in the repository; return its wall time in s.

    Raises:
        subprocess.CalledProcessError: invoke failed (its output is in ``log``).
    """
    python = cwd / ".venv" / "bin" / "python"  # the checkout's own archbench
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        subprocess.run(
            [str(python if python.is_file() else sys.executable), "-m", "invoke", *args],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=True,
        )
    return time.monotonic() - start


def newest_run(results: Path) -> str:
    """The run id written last under ``results``."""
    runs = [p for p in results.iterdir() if (p / "run.json").is_file()]
    return max(runs, key=lambda p: (p / "run.json").stat().st_mtime).name


def main(argv: list[str] | None = None) -> int:
    """Measure and print; 1 when a run fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="fast-matrix-")))
    parser.add_argument("--warm", type=int, default=5, help="warm amd64 reruns")
    parser.add_argument("--skip-matrix", action="store_true")
    parser.add_argument("--matrix-run", default="", help="stage table of this earlier run")
    parser.add_argument(
        "--warm-args", default="", help="extra flags of the warm reruns, e.g. '--rsa-bits 1024'"
    )
    parser.add_argument(
        "--checkout",
        type=Path,
        default=REPO,
        help="run the warm reruns in this checkout (e.g. main, for a before/after figure)",
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results, work = args.out / "results", args.out / "work"
    env = {
        **os.environ,
        "INVOKE_ARCHBENCH_RESULTS": str(results),
        "INVOKE_ARCHBENCH_WORK": str(work),
    }
    env.setdefault("INVOKE_ARCHBENCH_APT_PROXY", "auto")
    print(f"engine: {os.environ.get('DOCKER_HOST', 'default')}; out: {args.out}")
    summary: dict[str, object] = {}
    if not args.skip_matrix and not args.matrix_run:
        before = load()
        try:
            wall = invoke(["bench"], env, args.out / "matrix.log")
        except subprocess.CalledProcessError:
            print(f"invoke bench failed; see {args.out / 'matrix.log'}", file=sys.stderr)
            return 1
        summary["matrix"] = {"wall_s": round(wall, 1), "load_before": before, "load_after": load()}
        print(f"default matrix from an empty engine: {wall:.0f} s ({wall / 60:.1f} min); "
              f"load before {before}, after {load()}")  # fmt: skip
    run_id = args.matrix_run or (newest_run(results) if results.is_dir() else "")
    if run_id:
        store = ResultStore(results if not args.matrix_run else Path("results"))
        table = stage_table.rows(store, run_id)
        header = ["run", "target", "arch", "mode", "base s", "image s", "run s", "sum s", "RSA"]
        print(tabulate(table, headers=header, tablefmt="pipe", disable_numparse=True))
    overheads = []
    for i in range(args.warm):
        before = load()
        warm = ["bench", "--arch", "amd64", *args.warm_args.split()]
        wall = invoke(warm, env, args.out / f"warm-{i}.log", args.checkout)
        loaded, _ = ResultStore(results).load_all([newest_run(results)])
        harness_s = max((r.harness.duration_s or 0.0) for r in loaded)
        overheads.append(wall - harness_s)
        print(f"warm rerun {i + 1}: wall {wall:.2f} s, harness {harness_s:.2f} s, overhead "
              f"{wall - harness_s:.2f} s; load before {before}, after {load()}")  # fmt: skip
    if overheads:
        summary["warm_overhead_s"] = {
            "median": round(statistics.median(overheads), 2),
            "all": [round(x, 2) for x in overheads],
        }
        print(f"warm rerun overhead: median {statistics.median(overheads):.2f} s (goal <= 2 s)")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
