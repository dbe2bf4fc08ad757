#!/usr/bin/env python3
"""What looking for a reusable count costs, against a results folder of many runs.

Issue 29 (item 4): before a bisection step builds a commit, it searches the results
folder for an earlier run that counted the same commit with the same key
(:func:`archbench.run.find_count`): it reads every run's ``run.json`` (newest first) and
the counting result of the target of each run of the same repository. This script
writes ``--runs`` runs into a temporary results folder, each holding a copy of one real
counting result (``--result``, a ``<target>.instructions.json`` of a run built from a
git commit, e.g. a bisection step's) under its own commit, and times ``--repeat`` times
each: a hit in the newest run, a hit in the oldest (every run read) and a miss. Prints
the median and range in ms; a built step costs the libgnunetutil build, the image and
the counting run (minutes), which the issue's report gives beside these figures.

Issue 39 (item 3): every stored count is now read and its integrity digest checked before
it is reused, and every count of the key is read (a conflict is looked for), not only the
newest. The script also prints what that costs per stored run (a miss with ``--tags``,
where every run's counting result is read and checked, divided by ``--runs``) and the
digest check alone per file (canonical form and sha256 of the parsed file), each as the
median and range over ``--repeat`` (the digest: over 50 checks), beside the load average.

Usage::

    .venv/bin/python benchmarks/reuse_lookup.py --result results/RUN/ci-amd64.instructions.json
        [--runs 200] [--repeat 5]

Exit status 0 after printing; 2 when the result is not a count of a git commit.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from archbench.result import ResultStore, RunManifest, check_digest, load
from archbench.run import CountKey, find_count, stored_count_key


def _fill(store: ResultStore, template: Path, runs: int, tags: bool) -> list[CountKey]:
    """``runs`` runs of ``template``'s repository, run ``i`` at commit ``i`` (hex);
    returns their keys, oldest first; ``tags``: their run.json names a tag, not the commit."""
    res = load(template)
    assert res.execution is not None
    keys = []
    for i in range(runs):
        run_id = f"20260101T{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}Z-{i:06x}"
        commit = f"{i:040x}"
        source = {**(res.execution.gnunet_source or {}), "commit": commit}
        copy = res.model_copy(
            update={
                "run_id": run_id,
                "execution": res.execution.model_copy(update={"gnunet_source": source}),
            }
        )
        key = stored_count_key(copy)
        assert key is not None
        store.save_manifest(
            RunManifest(
                run_id=run_id,
                started_at="2026-01-01T00:00:00Z",
                matrix_file="matrix.yml",
                matrix_text="",
                targets=(res.target.name,),
                gnunet=f"git+{key.repository}@{f'v{i}' if tags else commit}",
            )
        )
        store.save(copy)
        keys.append(key)
    return keys


def _time(store: ResultStore, key: CountKey, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        find_count(store, key)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--result", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--tags",
        action="store_true",
        help="name each run's source by a tag, as a history's versions do (every result read)",
    )
    args = ap.parse_args()
    if stored_count_key(load(args.result)) is None:
        print(f"{args.result}: not a count of a clean git commit with a reuse key", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultStore(Path(tmp))
        keys = _fill(store, args.result, args.runs, args.tags)
        miss = dataclasses.replace(keys[0], commit="f" * 40)
        named = "tags" if args.tags else "commits"
        for label, key in (("newest", keys[-1]), ("oldest", keys[0]), ("miss", miss)):
            ms = _time(store, key, args.repeat)
            print(
                f"{args.runs} runs ({named}), {label:6s}: median {statistics.median(ms):8.1f} ms "
                f"(range {min(ms):.1f}-{max(ms):.1f} ms over {args.repeat})"
            )
            if label == "miss":
                per = [m / args.runs for m in ms]
                what = "its result read and checked" if args.tags else "its run.json read"
                print(
                    f"  per stored run ({what}): median {statistics.median(per):.2f} ms "
                    f"(range {min(per):.2f}-{max(per):.2f} ms)"
                )
        text = store.path_for(_first_run(store), keys[0].target, 1, "instructions").read_text()
        parsed = json.loads(text)
        checks = []
        for _ in range(50):
            t0 = time.perf_counter()
            check_digest(parsed, "bench")
            checks.append((time.perf_counter() - t0) * 1000)
        print(
            f"digest check of one {len(text) / 1024:.0f} kB result: median "
            f"{statistics.median(checks):.2f} ms (range {min(checks):.2f}-{max(checks):.2f} ms "
            f"over 50); load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
    return 0


def _first_run(store: ResultStore) -> str:
    return store.runs()[0]


if __name__ == "__main__":
    sys.exit(main())
