#!/usr/bin/env python3
"""How much of each counted blindsig row is named by a function, with and without symbol files.

Issue 37 (item 4): Debian strips libgcrypt, libsodium and libc, so most instructions of a
counted row were attributed to ``(no symbol) after <exported function>``. This script
counts the CI matrix's targets (``tests/integration/matrix-ci.yml``: blindsig, CS and
RSA-1024, 2 operations per block, 3 repetitions) through the pipeline with
``--metric instructions``, which builds (or reuses) the symbols image and the counting
layer, then runs the harness once more in the same counting layer with
``--no-symbol-files`` (the libraries' own tables: what counts named before), and prints
per architecture and row the share of the row's attributed instructions that a function
of its own names (not ``(no symbol)...``, not ``(unknown)``; ``(other functions)``, the
rest beyond the 25 largest, counted as unnamed: a lower bound), before and after, with
min / median / max over the rows, the rows below the goal (:data:`GOAL`, issue 37: every
blindsig row) and, for those, where their unnamed instructions went (the largest unnamed
entries: ``(no symbol) after ...`` of which library, ``(other functions)``, ``(unknown)``);
and the symbols images' build cost per step (from each image's layer history: each RUN's
creation time after the previous one; ``archbench/symbols-emulated`` for a package built
under QEMU), and the load.

Usage (the machine is shared: one target at a time)::

    .venv/bin/python benchmarks/symbol_coverage.py [--targets ci-amd64,ci-riscv64]
        [--matrix tests/integration/matrix-ci.yml]

Exit status 0 after printing; 1 when a run fails.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import itertools
import os
import statistics
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "harness"))

from archbench import run as pipeline  # noqa: E402
from archbench.hosts import connect, engine_arch  # noqa: E402
from archbench.images import COUNTER_IN_IMAGE  # noqa: E402
from archbench.matrix import load  # noqa: E402
from archbench.result import ResultStore, Row  # noqa: E402

GOAL = 0.95
"""Issue 37's goal: the named share of every counted blindsig row."""
CI_MATRIX = REPO / "tests" / "integration" / "matrix-ci.yml"
WORK = REPO / ".archbench" / "work"


def named_share(row: Row) -> float | None:
    """Share of ``row``'s attributed instructions named by a function of its own."""
    if not row.attribution:
        return None
    total = sum(f.instructions_per_op for f in row.attribution)
    named = sum(f.instructions_per_op for f in row.attribution if not f.function.startswith("("))
    return named / total if total else None


def unnamed(row: Row, limit: int = 3) -> str:
    """The ``limit`` largest unnamed entries of ``row`` with their share, in words."""
    attribution = row.attribution or ()
    total = sum(f.instructions_per_op for f in attribution) or 1.0
    worst = sorted(
        (f for f in attribution if f.function.startswith("(")),
        key=lambda f: -f.instructions_per_op,
    )[:limit]
    return "; ".join(
        f"{f.instructions_per_op / total:.1%} {f.library + ': ' if f.library else ''}{f.function}"
        for f in worst
    )


UNFOLD = """\
import sys
sys.path.insert(0, "/opt/archbench/harness")
from abh.suites import blindsig_counting
blindsig_counting.ATTRIBUTION_LIMIT = 1 << 30
"""
"""``sitecustomize`` of the unfolded layer: every function of a row in its attribution."""


@contextlib.contextmanager
def unfolded(client: Any, layer: str) -> Iterator[str]:
    """A COPY-only image over counting layer ``layer`` whose harness keeps every function of
    a row (no ``(other functions)`` beyond the 25 largest), so the named share is exact
    rather than a lower bound; the same harness, plugin, libraries and symbol files.
    Removed afterwards."""
    from abh.suites import blindsig_counting  # the harness the layer holds, read here

    if not hasattr(blindsig_counting, "ATTRIBUTION_LIMIT"):
        # Setting a name the harness no longer reads would leave every figure folded.
        raise SystemExit("abh.suites.blindsig_counting has no ATTRIBUTION_LIMIT to unfold")
    tag = f"archbench/symcov-unfolded:{layer.rsplit(':', 1)[-1]}"
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, text in (
            (
                "Dockerfile",
                f"FROM {layer}\nENV PYTHONPATH=/opt/symcov\n"
                "COPY sc.py /opt/symcov/sitecustomize.py\n",
            ),
            ("sc.py", UNFOLD),
        ):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True, pull=False)
    try:
        yield tag
    finally:
        client.images.remove(tag)


def layer_costs(client: Any, tag: str) -> list[tuple[float, str]]:
    """``(seconds, step)`` of each RUN layer of image ``tag`` (time since the layer before).

    The first RUN follows the base image, made at another time: its figure is left out."""
    history = list(reversed(client.api.history(tag)))
    out: list[tuple[float, str]] = []
    for before, layer in itertools.pairwise(history):
        step = str(layer.get("CreatedBy", ""))
        if "#(nop)" not in step and ("RUN" in step or "/bin/sh -c" in step):
            out.append((float(layer["Created"] - before["Created"]), step[-110:]))
    return out[1:]


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    return f"min {min(values):.1%}, median {statistics.median(values):.1%}, max {max(values):.1%}"


def main() -> int:
    """Count, count again without symbol files, print the shares and the build cost."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="ci-amd64,ci-riscv64")
    ap.add_argument(
        "--matrix",
        type=Path,
        default=CI_MATRIX,
        help="a matrix file whose targets --targets names (default: the CI matrix; for "
        "arm64 and armv7, which it lacks, a copy of ci-riscv64 with another arch:)",
    )
    opts = ap.parse_args()
    client = connect()
    host = engine_arch(client)
    loaded = load(opts.matrix)
    # Symbol files are a target's opt-in (``symbol_files: true``): on for every target here.
    targets = [t.model_copy(update={"symbol_files": True}) for t in loaded.targets]
    matrix = loaded.model_copy(update={"targets": type(loaded.targets)(targets)})
    print(f"load at start: {os.getloadavg()}")
    for name in opts.targets.split(","):
        store = ResultStore(WORK / "symbol-coverage" / name)
        run_id = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + "-symcov"
        plans = pipeline.plan(
            matrix,
            matrix.select([name]),
            {"local": host},
            metrics=("instructions",),
            suites=["blindsig"],
        )
        ws = pipeline.Workspace(store=store, run_id=run_id, work_dir=WORK)
        t0 = time.monotonic()
        (outcome,) = pipeline.execute({"local": client}, plans, ws, {"local": host})
        took = time.monotonic() - t0
        if not outcome.ok:
            print(f"{name}: {outcome.message}", file=sys.stderr)
            return 1
        after = next(
            r for r in store.load_all(merge=False, metric="instructions")[0] if r.run_id == run_id
        )
        assert after.execution is not None
        layer = after.execution.image_tag
        t1 = time.monotonic()
        count_args = ["--count-with", COUNTER_IN_IMAGE, "--count-cpu", plans[0].count_cpu]
        suites = plans[0].count_suites or plans[0].suites
        arch = plans[0].target.arch
        with unfolded(client, layer) as full:
            before_doc, _ = pipeline.run_harness(
                client, full, arch, suites, extra_args=[*count_args, "--no-symbol-files"]
            )
            after_doc, _ = pipeline.run_harness(client, full, arch, suites, extra_args=count_args)
        took_before = time.monotonic() - t1
        full_rows = {(r.scheme, r.key_bits, r.operation): r for r in after_doc.rows}
        counting = after.harness.counting
        extra = {
            "symbol_files": counting.symbol_files if counting is not None else {},
            "symbol_store": counting.symbol_store if counting is not None else {},
        }
        print(f"\n== {name} ({plans[0].target.arch.key}), counting layer {layer}")
        print(
            f"pipeline (build or reuse + count): {took:.0f} s; count again unfolded, without"
            f" and with symbol files: {took_before:.0f} s; load now {os.getloadavg()}"
        )
        for lib, check in sorted(extra.get("symbol_files", {}).items()):
            print(f"  {lib}: {check.get('status')} ({check.get('reason')})")
        print(f"  symbol store: {extra.get('symbol_store')}")
        before_rows = {(r.scheme, r.key_bits, r.operation): r for r in before_doc.rows}
        shares_before: list[float] = []
        shares_after: list[float] = []
        missing: list[tuple[str, float, str]] = []
        print(f"  {'row':40} {'before':>8} {'after':>8} {'top-25':>8}  largest unnamed after")
        for row in after.harness.rows:
            key = (row.scheme, row.key_bits, row.operation)
            folded = named_share(row)
            a = named_share(full_rows[key]) if key in full_rows else None
            b = named_share(before_rows[key]) if key in before_rows else None
            if a is None or b is None or folded is None:
                continue
            shares_after.append(a)
            shares_before.append(b)
            label = f"{row.scheme}{'-' + str(row.key_bits) if row.key_bits else ''} {row.operation}"
            print(f"  {label:40} {b:8.1%} {a:8.1%} {folded:8.1%}  {unnamed(full_rows[key], 1)}")
            if a < GOAL:
                missing.append((label, a, unnamed(full_rows[key])))
        print(f"  before: {summary(shares_before)}")
        print(f"  after:  {summary(shares_after)}")
        print(
            f"  per-row minimum after: {min(shares_after, default=float('nan')):.1%};"
            f" rows below {GOAL:.0%}: {len(missing)} of {len(shares_after)}"
        )
        for label, a, why in missing:
            print(f"    {label} {a:.1%}: unnamed {why}")
        # The amd64 image and, where a package is built under QEMU, its own-platform image.
        symbols_images = [
            t
            for repo in ("archbench/symbols", "archbench/symbols-emulated")
            for img in client.images.list(repo)
            for t in img.tags
            if t.startswith(f"{repo}:{plans[0].target.arch.key}-")
        ]
        for tag in symbols_images:
            costs = layer_costs(client, tag)
            print(f"  symbols image {tag}: {sum(c for c, _ in costs):.0f} s in RUN steps")
            for seconds, step in costs:
                print(f"    {seconds:6.0f} s  {step}")
    print(f"\nload at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
