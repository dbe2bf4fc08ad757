#!/usr/bin/env python3
"""What ``invoke publish`` costs per run: merging run folders into a history store.

Issue 40 (item 2): a CI workflow merges every job's run into one store, which grows by a
few runs per commit. This script copies one real run folder (``--run``, e.g.
``results/RUN``: ``run.json``, its results files, its logs) ``--runs`` times under new run
ids, then times, ``--repeat`` times and interleaved (A, B, A, B): merging them into an
empty store (A) and into a store that already holds ``--stored`` runs (B), and merging
them again, unchanged (C: the idempotent re-run of a publish job). Each figure is
:func:`archbench.result.merge_runs` from the checks to the last rename, per run, in ms:
median and range over the repeats, and the ratio B/A with its range (the store's size
should not matter: a merge touches only the runs it merges).

Usage::

    .venv/bin/python benchmarks/publish_merge.py --run results/RUN [--runs 50] \\
        [--stored 1000] [--repeat 5]

Prints one line per case and the machine's load (``os.getloadavg``) before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from archbench.result import Provenance, merge_runs


def _copy(template: Path, dest_root: Path, run_id: str) -> Path:
    """``template`` as run ``run_id`` under ``dest_root``: its id replaced in every JSON
    file's bytes (it appears as the files' ``run_id``), logs copied."""
    dest = dest_root / run_id
    dest.mkdir(parents=True)
    old = template.name.encode()
    for f in template.iterdir():
        if f.is_dir():
            shutil.copytree(f, dest / f.name)
        elif f.suffix == ".json" and f.name != "publish.json":
            (dest / f.name).write_bytes(f.read_bytes().replace(old, run_id.encode()))
    return dest


def _ids(prefix: int, n: int) -> list[str]:
    return [
        f"2026{prefix:04d}T{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}Z-{i:06x}" for i in range(n)
    ]


def _timed(sources: list[Path], store: Path) -> tuple[float, list[str]]:
    start = time.perf_counter()
    report = merge_runs(sources, store, Provenance(branch="main"), on_line=lambda _: None)
    seconds = time.perf_counter() - start
    return seconds * 1000 / len(sources), [line.status for line in report.lines]


def _line(name: str, xs: list[float]) -> str:
    return (
        f"{name:44} median {statistics.median(xs):8.2f} ms/run  range {min(xs):.2f}-{max(xs):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a real run folder to copy")
    parser.add_argument("--runs", type=int, default=50, help="runs merged per case")
    parser.add_argument("--stored", type=int, default=1000, help="runs already in store B")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="publish-merge-") as tmp:
        root = Path(tmp)
        sources = [_copy(args.run, root / "src", run_id) for run_id in _ids(1201, args.runs)]
        # The store B already holds: run folders as ``invoke bench`` leaves them there (a
        # merge reads only the runs it merges, whatever else the store holds).
        full = root / "full"
        for run_id in _ids(1101, args.stored):
            _copy(args.run, full / "store", run_id)
        empty_ms, full_ms, again_ms = [], [], []
        for i in range(args.repeat):
            empty = root / f"empty-{i}"
            ms, status = _timed(sources, empty)
            assert set(status) == {"merged"}, status
            empty_ms.append(ms)
            store = root / f"full-{i}"
            shutil.copytree(full / "store", store)
            ms, status = _timed(sources, store)
            assert set(status) == {"merged"}, status
            full_ms.append(ms)
            ms, status = _timed(sources, store)
            assert set(status) == {"unchanged"}, status
            again_ms.append(ms)
            shutil.rmtree(empty)
            shutil.rmtree(store)
    files = sum(1 for _ in args.run.rglob("*") if _.is_file())
    print(
        f"run copied: {args.run} ({files} files); {args.runs} runs per merge, {args.repeat} repeats"
    )
    print(_line("A: into an empty store", empty_ms))
    print(_line(f"B: into a store of {args.stored} runs", full_ms))
    print(_line("C: the same runs again (unchanged)", again_ms))
    ratios = [b / a for a, b in zip(empty_ms, full_ms, strict=True)]
    print(
        f"{'B/A':44} median {statistics.median(ratios):8.2f}×        "
        f"range {min(ratios):.2f}-{max(ratios):.2f}"
    )
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
