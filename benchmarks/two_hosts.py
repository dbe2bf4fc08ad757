"""Wall time of a run spread over two Docker hosts vs the same targets on one.

Prints, for the same three targets (two native amd64, one emulated riscv64)
with images already built on both engines: the wall time when the amd64
targets run on a second engine while riscv64 runs on the local one, the
wall time when all three run on the local engine, and their ratio.

The second engine can be any reachable amd64 Docker engine; on one machine,
start one on loopback (as root)::

    ip link add ab2 type bridge && ip addr add 172.31.254.1/24 dev ab2 && ip link set ab2 up
    dockerd --data-root /tmp/ab2/data --exec-root /tmp/ab2/x --pidfile /tmp/ab2/pid \\
        -H unix:///tmp/ab2/docker.sock -H tcp://127.0.0.1:23750 \\
        --bridge=ab2 --iptables=false --ip6tables=false &

(not ``--bridge=none``: dockerd would delete the first engine's docker0).
    .venv/bin/python benchmarks/two_hosts.py --second tcp://127.0.0.1:23750

On one machine both engines share its cores, so the ratio shows what the
pipeline overlaps (bootstrap, builds, emulated and native runs), not what
two machines would give.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from archbench import run as pipeline
from archbench.hosts import connect_host, engine_arch
from archbench.matrix import parse
from archbench.result import ResultStore

REPO = Path(__file__).resolve().parents[1]

MATRIX = """
version: 1
defaults:
  blindsig: {{iterations: 10, repetitions: 5, rsa_bits: [1024, 2048], warmup: 1}}
bases:
  debian-trixie: {{source: bootstrap, suite: trixie, variant: minbase}}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
hosts:
  second: {{url: "{url}", build_network: host}}
targets:
  - {{name: amd64-a, arch: amd64, base: debian-trixie{where}}}
  - {{name: amd64-b, arch: amd64, base: debian-trixie{where}}}
  - {{name: riscv64, arch: riscv64, base: debian-trixie}}
"""


def timed_run(url: str, where: str) -> float:
    """Plan and execute the three targets; returns the wall time in s."""
    m = parse(MATRIX.format(url=url, where=where), "two-hosts benchmark")
    names = sorted({t.host for t in m.targets})
    clients = {n: connect_host(m.host(n), n) for n in names}
    archs = {n: engine_arch(c) for n, c in clients.items()}
    plans = pipeline.plan(m, m.targets, archs)
    with tempfile.TemporaryDirectory() as tmp:
        ws = pipeline.Workspace(ResultStore(Path(tmp)), "bench", REPO / ".archbench" / "work")
        t0 = time.monotonic()
        outcomes = pipeline.execute(clients, plans, ws, archs)
        wall = time.monotonic() - t0
    failed = [o.message for o in outcomes if not o.ok]
    if failed:
        raise SystemExit(f"a target failed: {failed}")
    return wall


def main() -> int:
    """Warm both engines' caches, then time both layouts once; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--second", required=True, help="URL of the second engine (tcp://…)")
    opts = ap.parse_args()
    two, one = ", host: second", ""
    timed_run(opts.second, two)  # builds images on both engines
    two_s = timed_run(opts.second, two)
    one_s = timed_run(opts.second, one)
    print(f"{'layout':30} {'wall s':>8}")
    print(f"{'two hosts (amd64 x2 remote)':30} {two_s:8.1f}")
    print(f"{'one host (all local)':30} {one_s:8.1f}")
    print(f"{'one host / two hosts':30} {one_s / two_s:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
