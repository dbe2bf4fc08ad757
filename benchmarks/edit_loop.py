#!/usr/bin/env python3
"""The developer's loop: a one-line edit of ``crypto_cs.c`` in a working tree -> counts.

Issue 37 asks that a one-line edit of ``src/lib/util/crypto_cs.c`` in a working tree
give the counts of every blindsig row within 60 s once warm (about 6.5 min before, when
nothing of the previous build was reused). This script clones the shared history
(``../shared/gnunet/gnunet-git-v0.21.2-v0.27.0.tar.gz``) into a working tree at ``--ref``
and runs, timing each whole command (wall clock of ``invoke bench --gnunet TREE --metric
instructions`` on the CI matrix's ``--target``):

1. ``warm-up``: the tree as cloned (builds the tree, images and counting layers once);
2. ``edit`` ×``--rounds``: a line appended to ``crypto_cs.c`` (a different one each
   round, so each build has something to recompile), then the command again;
3. ``revert``: the file as cloned, the command again: its counts must equal the warm-up's
   on every CS row (the same code: incremental builds are the clean build's bits; the RSA
   rows differ between two runs of one image, libgcrypt's blinding and prime search being
   random, so ``incremental_build.py`` compares the code instead).

It prints each run's seconds with the load average beside it, the median and range of the
edit runs, and whether the reverted counts equal the warm-up's.

Usage (the base of the target bootstrapped already; one run at a time)::

    .venv/bin/python benchmarks/edit_loop.py [--target ci-amd64] [--ref v0.27.0] [--rounds 3]

Exit status 0 after printing; 1 when a run fails or the reverted counts differ.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from archbench import REPO_ROOT

SHARED = REPO_ROOT.parent / "shared" / "gnunet"
HISTORY = "gnunet-git-v0.21.2-v0.27.0.tar.gz"
MATRIX = REPO_ROOT / "tests" / "integration" / "matrix-ci.yml"


def history() -> Path:
    """The shared git history, beside the repository or its folder of worktrees."""
    for folder in (SHARED, REPO_ROOT.parent.parent / "shared" / "gnunet"):
        if (folder / HISTORY).is_file():
            return folder / HISTORY
    raise SystemExit(f"no {HISTORY} beside the repository (../shared/gnunet)")


def bench(tree: Path, target: str, results: Path) -> tuple[float, dict[str, list[int]], str]:
    """One ``invoke bench`` of ``tree``: its seconds, counts by row, and the build's mode."""
    before = set(results.glob("*/")) if results.is_dir() else set()
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "bench", "--matrix", str(MATRIX), "--target", target,
         "--gnunet", str(tree), "--metric", "instructions", "--ci-target", "off",
         "--rsa-bits", "1024", "--repetitions", "1"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "INVOKE_ARCHBENCH_RESULTS": str(results)},
    )  # fmt: skip
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"invoke bench failed ({done.returncode}):\n{done.stdout[-3000:]}")
    (run,) = set(results.glob("*/")) - before
    counts: dict[str, list[int]] = {}
    mode = "?"
    for path in run.glob("*.instructions.json"):
        doc = json.loads(path.read_text())
        source = (doc.get("execution") or {}).get("gnunet_source") or {}
        mode = f"{source.get('build_mode')} ({source.get('build_seconds')} s build)"
        for row in doc["harness"]["rows"]:
            if row.get("suite") == "blindsig" and row.get("instructions"):
                key = f"{row.get('scheme')} {row.get('operation')} {row.get('key_bits') or ''}"
                counts[key] = [int(n) for n in row["instructions"]]
    return seconds, counts, mode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--target", default="ci-amd64")
    ap.add_argument("--ref", default="v0.27.0")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="edit-loop-"))
    try:
        with tarfile.open(history()) as tar:
            tar.extractall(scratch / "repo", filter="data")
        (bare,) = (scratch / "repo").iterdir()
        tree = scratch / "tree"
        subprocess.run(["git", "clone", "-q", str(bare), str(tree)], check=True)
        subprocess.run(["git", "-C", str(tree), "checkout", "-q", args.ref], check=True)
        target = tree / "src" / "lib" / "util" / "crypto_cs.c"
        original = target.read_bytes()
        results = scratch / "results"

        def run(label: str) -> tuple[float, dict[str, list[int]]]:
            load = os.getloadavg()[0]
            seconds, counts, mode = bench(tree, args.target, results)
            print(f"{label:<10} {seconds:7.1f} s  load {load:.1f}  build {mode}  "
                  f"{len(counts)} counted rows", flush=True)  # fmt: skip
            return seconds, counts

        _, first = run("warm-up")
        edits = []
        for i in range(args.rounds):
            line = f"int archbench_edit_loop_{i} (void); int archbench_edit_loop_{i} (void) "
            target.write_bytes(original + (line + "{ return " + str(i) + "; }\n").encode())
            edits.append(run(f"edit {i + 1}")[0])
        target.write_bytes(original)
        _, last = run("revert")
        if edits:
            print(f"edit -> counts: median {statistics.median(edits):.1f} s "
                  f"(range {min(edits):.1f}-{max(edits):.1f} s over {len(edits)})")  # fmt: skip
        # The RSA rows' counts are not exact: two runs of one image differ (key generation
        # by up to 20 % as it searches random primes, the others by up to 0.6 % with
        # libgcrypt's random blinding; measured 7 December 2026). The CS rows repeat exactly.
        exact = sorted(k for k in first if k.startswith("CS "))
        differ = [k for k in exact if first.get(k) != last.get(k)]
        for key in differ:
            print(f"  differs: {key}: {first.get(key)} -> {last.get(key)}")
        inexact = sorted(set(first) - set(exact))
        print(f"reverted counts equal the warm-up's on {len(exact) - len(differ)} of "
              f"{len(exact)} CS rows (not compared, not exact: {', '.join(inexact)})")  # fmt: skip
        return 0 if exact and not differ else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
