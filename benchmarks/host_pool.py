"""Wall time of a run whose targets a host pool shares, against the same targets on one host.

For ``--targets`` native targets of this machine's architecture (the blindsig suite,
``--repetitions`` each), with their images built on every member first, it times
``invoke bench``'s execution (every target built first, then measured; images up to
date) in interleaved rounds: the targets on a pool of the first member only, then on a
pool of every member, and so on (``--rounds`` of each). It prints each layout's median
wall time, the per-round ratio (one host / the pool) with its median and range, and the
load average before and after.

Members are any Docker engines of this machine's architecture (``--member URL``,
repeated: ``unix://…``, ``tcp://…``, ``ssh://…``). On one machine, a second engine on
loopback (as root; not ``--bridge=none``, which deletes the first engine's docker0)::

    ip link add ab2 type bridge && ip addr add 172.31.254.1/24 dev ab2 && ip link set ab2 up
    dockerd --data-root /tmp/ab2/data --exec-root /tmp/ab2/x --pidfile /tmp/ab2/pid \\
        -H unix:///tmp/ab2/docker.sock -H tcp://127.0.0.1:23750 \\
        --bridge=ab2 --iptables=false --ip6tables=false &
    .venv/bin/python benchmarks/host_pool.py --member unix:///var/run/docker.sock \\
        --member tcp://127.0.0.1:23750

What one machine can show: its engines share its cores, so the ratio is what the
scheduler overlaps (each member's harness runs on a core of its own while the machine
has one free, the requests of one member while another's harness runs), not what
machines of their own would give: with N idle machines a CPU-bound run of K >= N equal
targets takes about 1/N of the time, and the pool is worth its members only while
targets outnumber them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from archbench import run as pipeline
from archbench.matrix import parse
from archbench.platforms import Arch
from archbench.result import ResultStore

REPO = Path(__file__).resolve().parents[1]

MATRIX = """
version: 1
metrics: [time]
defaults:
  blindsig: {{iterations: 2, repetitions: {repetitions}, rsa_bits: [1024], warmup: 0}}
bases:
  debian-trixie: {{source: bootstrap, suite: trixie, variant: minbase}}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
hosts:
{hosts}
pools:
  one: [m0]
  all: [{members}]
targets:
{targets}
"""


def timed_run(urls: list[str], pool: str, targets: int, repetitions: int) -> float:
    """Plan and execute the targets on ``pool`` (``one`` or ``all``); the wall time in s."""
    arch = Arch.native().key
    text = MATRIX.format(
        repetitions=repetitions,
        hosts="".join(f'  m{i}: {{url: "{u}", build_network: host}}\n' for i, u in enumerate(urls)),
        members=", ".join(f"m{i}" for i in range(len(urls))),
        targets="".join(
            f"  - {{name: t{i}, arch: {arch}, base: debian-trixie, host: {pool}}}\n"
            for i in range(targets)
        ),
    )
    m = parse(text, "host-pool benchmark")
    clients, archs = pipeline.connect_engines(m, m.targets)
    plans = pipeline.plan(m, m.targets, archs)
    with tempfile.TemporaryDirectory() as tmp:
        ws = pipeline.Workspace(ResultStore(Path(tmp)), "bench", REPO / ".archbench" / "work")
        options = pipeline.RunOptions(build_first=True)
        t0 = time.monotonic()
        outcomes = pipeline.execute(clients, plans, ws, archs, options)
        wall = time.monotonic() - t0
    failed = [o.message for o in outcomes if not o.ok]
    if failed:
        raise SystemExit(f"a target failed: {failed}")
    return wall


def main() -> int:
    """Build on every member, then time both layouts in interleaved rounds."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--member", action="append", required=True, help="an engine URL (repeat)")
    ap.add_argument("--targets", type=int, default=4, help="targets of the run (default 4)")
    ap.add_argument("--repetitions", type=int, default=100, help="blindsig repetitions")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each layout (default 3)")
    opts = ap.parse_args()
    if len(opts.member) < 2:
        raise SystemExit("give at least two --member engines")
    load0 = os.getloadavg()
    # Builds (or finds) the images on every member: none is built in a timed run. A member
    # of another architecture is refused here (no member of the pool runs it).
    timed_run(opts.member, "all", len(opts.member) * 2, 1)
    one: list[float] = []
    pool: list[float] = []
    for _ in range(opts.rounds):
        one.append(timed_run(opts.member, "one", opts.targets, opts.repetitions))
        pool.append(timed_run(opts.member, "all", opts.targets, opts.repetitions))
    ratios = [a / b for a, b in zip(one, pool, strict=True)]
    load1 = os.getloadavg()
    members = len(opts.member)
    print(f"{opts.targets} targets, {opts.rounds} interleaved rounds of each layout")
    print(f"{'layout':32} {'median wall s':>14} {'range s':>16}")
    for name, walls in (("one host", one), (f"pool of {members} hosts", pool)):
        print(f"{name:32} {statistics.median(walls):14.1f} {min(walls):7.1f}-{max(walls):<8.1f}")
    print(
        f"one host / pool, per round: median {statistics.median(ratios):.2f} "
        f"(range {min(ratios):.2f}-{max(ratios):.2f})"
    )
    print(f"load average (1/5/15 min) before {load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}, "
          f"after {load1[0]:.1f}/{load1[1]:.1f}/{load1[2]:.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
