#!/usr/bin/env python3
"""What the counting plugin's function attribution costs, and where CS signing goes.

Issue 29 (item 3): plugin version 2 adds a second inline counter per translation
block and, at every marker, a walk over all translations, and the harness then
symbolises the addresses (``harness/abh/suites/count_symbols.py``). This script runs
blindsig's counting mode in one counting image (``archbench/count:<arch>-<hash>``,
built by ``invoke bench --metric instructions``) ``--runs`` times with its own
plugin (version 2) and as often, interleaved, with a version 1 plugin file mounted
over it (``--v1-plugin``: ``libarchbench_count.so`` out of a counting image built
before version 2), and prints the wall time of each container run, the median ratio
v2 / v1 with its range over the pairs, and the top functions of CS signing.

Usage (images built; one container at a time: the machine is shared)::

    .venv/bin/python benchmarks/attribution_overhead.py --image archbench/count:riscv64-...
        --cpu rv64 --v1-plugin /tmp/v1/libarchbench_count.so [--runs 3]
        [--harness-args "--iterations 2 --repetitions 3 --rsa-bits 1024"]

Exit status 0 after printing; 1 when a container run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import docker

PLUGIN_IN_IMAGE = "/opt/archbench/counter/libarchbench_count.so"


def run_once(
    client: docker.DockerClient, image: str, args: list[str], v1: Path | None
) -> tuple[float, dict[str, Any]]:
    """One container run: (wall seconds, the harness's JSON document)."""
    volumes = {str(v1): {"bind": PLUGIN_IN_IMAGE, "mode": "ro"}} if v1 else {}
    started = time.monotonic()
    container = client.containers.run(image, args, volumes=volumes, detach=True)
    try:
        status = container.wait()
        seconds = time.monotonic() - started
        out = container.logs(stdout=True, stderr=False).decode()
        if status["StatusCode"] != 0:
            err = container.logs(stdout=False, stderr=True).decode()[-2000:]
            raise SystemExit(f"{image}: the harness exited with {status['StatusCode']}: {err}")
    finally:
        container.remove(force=True)
    return seconds, json.loads(out)


def main() -> int:
    """Parse arguments, run the pairs, print times, ratio and CS signing's top functions."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", required=True)
    ap.add_argument("--cpu", required=True, help="QEMU CPU model (max, rv64)")
    ap.add_argument("--v1-plugin", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--harness-args", default="--iterations 2 --repetitions 3 --rsa-bits 1024")
    ap.add_argument("--top", type=int, default=5)
    opts = ap.parse_args()
    if not opts.v1_plugin.is_file():
        print(f"--v1-plugin {opts.v1_plugin}: no such file", file=sys.stderr)
        return 1
    client = docker.from_env()
    args = [
        *shlex.split(opts.harness_args),
        "--count-with",
        "/opt/archbench/counter",
        "--count-cpu",
        opts.cpu,
    ]
    times: dict[str, list[float]] = {"v1": [], "v2": []}
    doc: dict[str, Any] = {}
    for k in range(opts.runs):
        for label in ("v1", "v2") if k % 2 == 0 else ("v2", "v1"):
            load1 = os.getloadavg()[0]
            seconds, got = run_once(
                client, opts.image, args, opts.v1_plugin if label == "v1" else None
            )
            times[label].append(seconds)
            if label == "v2":
                doc = got
            print(f"run {k + 1} {label}: {seconds:7.2f} s (load {load1:.1f})", flush=True)
    ratios = [b / a for a, b in zip(times["v1"], times["v2"], strict=True)]
    print(
        f"{opts.image}: v1 median {statistics.median(times['v1']):.2f} s, "
        f"v2 median {statistics.median(times['v2']):.2f} s; v2/v1 median "
        f"{statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f}, "
        f"{len(ratios)} pairs)"
    )
    for row in doc.get("rows", []):
        if (row.get("scheme"), row.get("operation")) != ("CS", "signing"):
            continue
        # The attribution is the mean over the row's blocks (a block with one of
        # libgcrypt's entropy-pool mixes counts more), so shares are of that mean.
        per_op = sum(f["instructions_per_op"] for f in row.get("attribution", []))
        print(f"CS signing: {per_op:,.0f} instructions per operation (mean); top functions:")
        for f in row.get("attribution", [])[: opts.top]:
            n = f["instructions_per_op"]
            print(f"  {n:12,.0f} {n / per_op:6.1%}  {f['library']}  {f['function']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
