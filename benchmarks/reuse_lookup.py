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

Usage::

    .venv/bin/python benchmarks/reuse_lookup.py --result results/RUN/ci-amd64.instructions.json
        [--runs 200] [--repeat 5]

Exit status 0 after printing; 2 when the result is not a count of a git commit.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

from archbench.result import ResultStore, RunManifest, load
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
        for label, key in (("newest", keys[-1]), ("oldest", keys[0]), ("miss", miss)):
            ms = _time(store, key, args.repeat)
            named = "tags" if args.tags else "commits"
            print(
                f"{args.runs} runs ({named}), {label:6s}: median {statistics.median(ms):8.1f} ms "
                f"(range {min(ms):.1f}-{max(ms):.1f} ms over {args.repeat})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
