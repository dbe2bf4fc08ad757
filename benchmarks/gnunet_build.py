#!/usr/bin/env python3
"""How long building libgnunetutil from source takes: natively on the engine vs cross for a target.

Issue 20 asks for the build time of libgnunetutil per architecture, cross vs native. This
script reruns ``images/gnunet-source/build-libgnunetutil.sh`` in images archbench already
built, so that nothing but the build is timed:

- ``--native IMAGE``: a native source image (``archbench/bench:amd64-…`` of a target with
  ``--gnunet``): its build dependencies are installed and the prepared tree is at
  ``/opt/archbench/gnunet-source/gnunet-src.tar``;
- ``--cross ARCH=IMAGE`` (repeatable): a cross stage (``archbench/cross:<arch>-…`` of an
  emulated target with ``--gnunet``), with the same tree, the target's ``-dev`` packages
  and its meson cross file at ``/opt/archbench/cross/meson-cross.ini``.

Each round runs every build once in a shuffled order (``--seed``), so that a busy
machine's drift lands on all of them; the script prints every build's median wall time
(s, of ``docker run``) and the script's own ``built in N s``, the ratio of each cross
build to the native one per round (median and range over rounds), and the load average.

Usage::

    .venv/bin/python benchmarks/gnunet_build.py --native archbench/bench:amd64-82f4… \\
        --cross riscv64=archbench/cross:riscv64-972a… [--rounds 3] [--seed 1]

Exit status 0 after printing; 2 for a bad argument; 1 when a build fails.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import time

from archbench.platforms import Arch

BUILD = (
    "set -e; mkdir /tmp/g; tar -xf /opt/archbench/gnunet-source/gnunet-src.tar -C /tmp/g; "
    "sh /opt/archbench/gnunet-source/build-libgnunetutil.sh {args} /tmp/g/src /tmp/g/b /tmp/p"
)
CROSS = {a.key: a for a in Arch if a is not Arch.AMD64}
"""What the amd64 build machine cross-compiles for, by ``--cross`` name."""


def _build(image: str, args: str) -> tuple[float, float]:
    """(wall s, the script's own ``built in`` s) of one build in a fresh container."""
    started = time.monotonic()
    done = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--entrypoint", "sh", image, "-c",
         BUILD.format(args=args)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"build in {image} failed:\n{done.stderr[-2000:]}")
    found = re.search(r"built in (\d+) s", done.stderr)
    return wall, float(found.group(1)) if found else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--native", required=True, help="a native source image (amd64)")
    parser.add_argument("--cross", action="append", default=[], help="ARCH=IMAGE of a cross stage")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    ns = parser.parse_args()
    builds = {"amd64 native": (ns.native, "")}
    for item in ns.cross:
        arch, _, image = item.partition("=")
        if arch not in CROSS or not image:
            parser.error(f"--cross {item!r}: ARCH=IMAGE with ARCH one of {', '.join(CROSS)}")
        deb_arch = CROSS[arch].debian_arch
        args = f"--cross-file /opt/archbench/cross/meson-cross.ini --deb-arch {deb_arch}"
        builds[f"{arch} cross"] = (image, args)
    rng = random.Random(ns.seed)  # noqa: S311  # an order of builds, not a secret
    walls: dict[str, list[float]] = {k: [] for k in builds}
    own: dict[str, list[float]] = {k: [] for k in builds}
    for index in range(1, ns.rounds + 1):
        order = list(builds)
        rng.shuffle(order)
        for name in order:
            wall, seconds = _build(*builds[name])
            walls[name].append(wall)
            own[name].append(seconds)
            print(f"round {index} {name}: {wall:.1f} s (script: {seconds:.0f} s), "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    print()
    print("| build | median wall s | median script s | ratio to native (median, range) |")
    print("|---|---:|---:|---|")
    for name in builds:
        ratios = [w / n for w, n in zip(walls[name], walls["amd64 native"], strict=True)]
        spread = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
        print(f"| {name} | {statistics.median(walls[name]):.1f} | "
              f"{statistics.median(own[name]):.0f} | {spread} |")  # fmt: skip


if __name__ == "__main__":
    main()
