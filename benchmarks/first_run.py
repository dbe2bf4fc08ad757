#!/usr/bin/env python3
"""A new user's first run, timed from zero: the README's first command on a pristine root.

Bootstraps a fresh Debian root (``tests/pristine.py``: mmdebstrap, its own Docker
engine inside, nothing of this host's but its apt cache), copies this tree in, runs the
README's first command word for word and prints the stage table: setup, the riscv64
target's stages (base, image, run, count, ...) from its progress lines, report, total.
Goal (issue 27): at most 8 minutes on a 2-core machine. The time of the root's own
bootstrap is printed apart: a user's machine comes with its root.

Needs root, a running dockerd and mmdebstrap (``scripts/setup-host.sh`` on the host).
Usage::

    .venv/bin/python benchmarks/first_run.py [--suite bookworm|trixie] [--log FILE]

Exit status: the first command's.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from pristine import (
    TARGET,
    machine,
    readme_commands,
    remove_image,
    root_image,
    stage_table,
)

from archbench.hosts import connect


def main(argv: list[str] | None = None) -> int:
    """Run the first command in a pristine root; print its stage table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="bookworm", choices=["bookworm", "trixie"])
    parser.add_argument("--log", type=Path, default=Path("first-run.log"))
    args = parser.parse_args(argv)
    client = connect()
    start = time.monotonic()
    tag = root_image(client, args.suite)
    print(f"pristine {args.suite} root bootstrapped in {time.monotonic() - start:.0f} s")
    first, _ = readme_commands()
    try:
        with machine(client, tag) as node:
            transcript = node.run(first, args.log)
    finally:
        remove_image(client, tag)
    parts = transcript.parts()
    print(f"exit {transcript.exit_code}; log: {args.log}; load {os.getloadavg()[0]:.1f}")
    if len(parts) == 3:
        stages = [s for s in transcript.stage_starts(TARGET) if s[1] > parts[0][1]]
        print(stage_table(parts, stages))
    else:
        print(f"the command stopped in part {len(parts)}: {parts}")
    silence, after = transcript.longest_silence()
    print(f"longest silence: {silence:.1f} s (before {after!r})")
    return transcript.exit_code or 0


if __name__ == "__main__":
    sys.exit(main())
