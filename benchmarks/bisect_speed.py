#!/usr/bin/env python3
"""The issue's bisection from a cold build cache: CS signing over v0.21.2..v0.22.2.

Issue 37 asks that ``invoke bisect … --good v0.21.2 --bad v0.22.2 --row "CS signing"``
take at most 10 min on amd64 and 15 min on riscv64, from a cold build cache with the
bases and cross stages present (61.8 min on amd64 before, beside other work; riscv64 was
abandoned). This script unpacks the shared history
(``../shared/gnunet/gnunet-git-v0.21.2-v0.27.0.tar.gz``) and, per ``--arch`` in turn, runs
that very command (``nice``'d, on the CI matrix's ``ci-<arch>`` target, 1024-bit RSA, one
repetition) with

* a results folder of its own (so no count of an earlier run is reused), and
* a cache namespace of its own (``ARCHBENCH_CACHE_NAMESPACE``, :func:`archbench.images.
  cache_namespace`): its build trees and ccache start empty, and nobody else's volumes are
  touched. They are removed afterwards (only those of the namespace).

It prints the total minutes, the number of steps, per step the commit, the build's mode
(clean or incremental: ``build_mode`` of the result's provenance), its seconds (the
libgnunetutil build in its tree) and the rest of the step (images, counting), the ccache
hits, then what the bisection found, with the load average at the start and end of each
run. The must-hold: it ends at 563fbba, with a26de76 unbuildable (skipped).

Usage (the bases bootstrapped and, for riscv64, its cross stage built by an earlier
``invoke bench``; one run at a time)::

    .venv/bin/python benchmarks/bisect_speed.py [--arch amd64,riscv64] [--keep]
        [--namespace NAME] [--json out.json]

Exit status 0 when every architecture's bisection ended at 563fbba with a26de76 skipped;
1 when one did not (or failed); 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import docker

from archbench import REPO_ROOT
from archbench.errors import ImageBuildError
from archbench.images import Builder, cache_namespace, remove_caches

SHARED = REPO_ROOT.parent / "shared" / "gnunet"
HISTORY = "gnunet-git-v0.21.2-v0.27.0.tar.gz"
MATRIX = REPO_ROOT / "tests" / "integration" / "matrix-ci.yml"
FOUND = "563fbba"
UNBUILDABLE = "a26de76"
GOAL_MINUTES = {"amd64": 10.0, "riscv64": 15.0}
NAMESPACE_VARIABLE = "ARCHBENCH_CACHE_NAMESPACE"


def history() -> Path:
    """The shared git history, beside the repository or its folder of worktrees."""
    for folder in (SHARED, REPO_ROOT.parent.parent / "shared" / "gnunet"):
        if (folder / HISTORY).is_file():
            return folder / HISTORY
    raise SystemExit(f"no {HISTORY} beside the repository (../shared/gnunet)")


def uptime() -> str:
    """``uptime``'s load averages (1, 5, 15 min)."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def provenance(results: Path, run_id: str, target: str) -> dict[str, Any]:
    """``execution.gnunet_source`` of ``target``'s counting result in run ``run_id``."""
    for path in sorted((results / run_id).glob(f"{target}*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        source = (doc.get("execution") or {}).get("gnunet_source")
        if isinstance(source, dict):
            return source
    return {}


def bisect(bare: Path, arch: str, namespace: str, scratch: Path) -> dict[str, Any]:
    """One cold ``invoke bisect`` on ``ci-<arch>``: its seconds, record and output."""
    results = scratch / f"results-{arch}"
    target = f"ci-{arch}"
    command = [
        "nice", "-n", "10", sys.executable, "-m", "invoke", "bisect",
        "--matrix", str(MATRIX), "--target", target, "--gnunet", f"git+file://{bare}",
        "--good", "v0.21.2", "--bad", "v0.22.2", "--row", "CS signing",
        "--rsa-bits", "1024", "--repetitions", "1",
    ]  # fmt: skip
    env = {
        **os.environ,
        NAMESPACE_VARIABLE: namespace,
        "INVOKE_ARCHBENCH_RESULTS": str(results),
        "INVOKE_ARCHBENCH_REPORTS": str(scratch / f"reports-{arch}"),
    }
    load_start = uptime()
    print(f"{arch}: started {time.strftime('%H:%M:%S')} ({load_start})", flush=True)
    started = time.monotonic()
    log = scratch / f"bisect-{arch}.log"
    with log.open("w") as out:
        # SIGINT as a terminal's Ctrl-C sends it (a script started in the background would
        # otherwise pass it on ignored): invoke bisect then removes its containers.
        proc = subprocess.Popen(  # our own interpreter and arguments
            command, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        try:
            returncode = proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=120)
            raise
    seconds = time.monotonic() - started
    text = log.read_text(errors="replace")
    shutil.copy(log, Path(tempfile.gettempdir()) / f"bisect-speed-{namespace}-{arch}.log")
    records = list(results.glob("*/bisect.json"))
    record = json.loads(records[0].read_text()) if records else {}
    steps = []
    for step in record.get("steps", []):
        for count in step.get("counts", []):
            source = (
                provenance(results, count["run_id"], count["target"]) if count.get("run_id") else {}
            )
            build = source.get("build_seconds")
            steps.append(
                {
                    "commit": step["commit"][:10],
                    "index": step["index"],
                    "seconds": step["seconds"],
                    "mode": source.get("build_mode") or ("reused" if count.get("reused") else "-"),
                    "reason": source.get("build_reason") or "",
                    "build_seconds": float(build) if build else None,
                    "ccache_hits": source.get("ccache_hits"),
                    "ccache_misses": source.get("ccache_misses"),
                    "instructions": count.get("instructions"),
                    "verdict": count.get("verdict") or count.get("skipped") or "",
                }
            )
    return {
        "arch": arch,
        "returncode": returncode,
        "seconds": seconds,
        "load_start": load_start,
        "load_end": uptime(),
        "steps": steps,
        "outcome": record.get("outcome") or "",
        "tail": text[-3000:],
    }


def held(run: dict[str, Any]) -> bool:
    """The must-hold: exit 0, ended at 563fbba (built and counted: a line that only names it
    among the commits that did not build is no end there), a26de76 measured and skipped."""
    return (
        run["returncode"] == 0
        and re.search(rf"\b{FOUND}", run["outcome"]) is not None
        and any(
            s["commit"].startswith(FOUND) and s["instructions"] is not None for s in run["steps"]
        )
        and any(
            s["commit"].startswith(UNBUILDABLE) and s["instructions"] is None for s in run["steps"]
        )
    )


def show(run: dict[str, Any]) -> bool:
    """Print one architecture's figures; True when the must-hold holds."""
    arch = run["arch"]
    steps = run["steps"]
    print(f"\n{arch}: {run['seconds'] / 60:.1f} min, {len(steps)} steps, exit "
          f"{run['returncode']} (goal <= {GOAL_MINUTES.get(arch, 0):.0f} min; "
          f"{run['load_start']} at start, {run['load_end']} at end)")  # fmt: skip
    print(f"  {'step':>4} {'commit':<10} {'mode':<12} {'build s':>8} {'rest s':>7} "
          f"{'ccache':>9}  verdict")  # fmt: skip
    builds, rests = [], []
    for n, s in enumerate(steps, 1):
        build = s["build_seconds"]
        rest = s["seconds"] - build if build is not None else s["seconds"]
        if build is not None:
            builds.append(build)
            rests.append(rest)
        hits = f"{s['ccache_hits']}/{s['ccache_misses']}" if s["ccache_hits"] else "-"
        mode = s["mode"] + (f" ({s['reason']})" if s["reason"] and s["mode"] == "clean" else "")
        print(f"  {n:>4} {s['commit']:<10} {mode[:24]:<12} "
              f"{'-' if build is None else f'{build:.1f}':>8} {rest:>7.1f} {hits:>9}  "
              f"{s['verdict'][:70]}")  # fmt: skip
    for label, values in (("build", builds), ("count and images", rests)):
        if values:
            low, high = min(values), max(values)
            print(f"  {label}: median {statistics.median(values):.1f} s "
                  f"(range {low:.1f}-{high:.1f} s over {len(values)} steps)")  # fmt: skip
    print("  found: " + run["outcome"].replace("\n", "\n         "))
    ok = held(run)
    if not ok:
        print(f"  MUST-HOLD FAILED: not ended at {FOUND} with {UNBUILDABLE} skipped")
        if run["returncode"] != 0:
            print("  " + run["tail"].replace("\n", "\n  "))
    return ok


def remove_namespace(namespace: str, scratch: Path) -> list[str]:
    """Remove the volumes of ``namespace`` (this script's own), returning their names."""
    work = scratch / "work"
    return remove_caches(Builder(docker.from_env(), work, work / "logs"), namespace)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--arch", default="amd64,riscv64")
    ap.add_argument("--namespace", default=f"bisect-speed-{secrets.token_hex(3)}")
    ap.add_argument("--keep", action="store_true", help="keep the namespace's volumes")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    # SIGTERM and a background SIGINT end the run as Ctrl-C does: volumes removed.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        # Each architecture gets NAME-ARCH: the longest must still be a namespace.
        cache_namespace({NAMESPACE_VARIABLE: f"{args.namespace}-riscv64"})
    except ImageBuildError as exc:
        ap.error(f"--namespace: {exc}")
    archs = [a.strip() for a in args.arch.split(",") if a.strip()]
    unknown = [a for a in archs if a not in GOAL_MINUTES]
    if unknown:
        ap.error(f"--arch: {', '.join(unknown)}; known: {', '.join(GOAL_MINUTES)}")
    print(f"cache namespace {args.namespace} (cold: new volumes, removed afterwards)")
    scratch = Path(tempfile.mkdtemp(prefix="bisect-speed-"))
    runs = []
    try:
        with tarfile.open(history()) as tar:
            tar.extractall(scratch / "repo", filter="data")
        (bare,) = (scratch / "repo").iterdir()
        for arch in archs:
            # Each architecture from a cold cache: a namespace of its own.
            runs.append(bisect(bare, arch, f"{args.namespace}-{arch}", scratch))
            show(runs[-1])
    finally:
        if not args.keep:
            for arch in archs:
                gone = remove_namespace(f"{args.namespace}-{arch}", scratch)
                if gone:
                    print(f"removed {len(gone)} volume(s) of {args.namespace}-{arch}")
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))
    print()
    ok = True
    for run in runs:
        kept = held(run)
        ok = ok and kept
        print(f"{run['arch']}: {run['seconds'] / 60:.1f} min over {len(run['steps'])} steps "
              f"(goal {GOAL_MINUTES[run['arch']]:.0f} min: ratio "
              f"{run['seconds'] / 60 / GOAL_MINUTES[run['arch']]:.2f}); must-hold "
              f"{'holds' if kept else 'FAILED'}")  # fmt: skip
    return 0 if ok and runs else 1


if __name__ == "__main__":
    sys.exit(main())
