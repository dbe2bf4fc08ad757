#!/usr/bin/env python3
"""Incremental libgnunetutil builds: the same code as a clean build, and how long they take.

Issue 37 (items 1-2). For each architecture (natively amd64; riscv64 through its cross
stage) this script, with archbench's own functions (:mod:`archbench.images.incremental`):

1. builds a chain of real commits of the shared history
   (``../shared/gnunet/gnunet-git-v0.21.2-v0.27.0.tar.gz``, ``--commits`` of them, spread
   evenly over ``--good..--bad`` on the first-parent line) one after the other in ONE
   persistent tree, as ``invoke bisect`` and ``invoke history`` do;
2. builds each of them again from nothing: a fresh tree, ccache disabled;
3. in a working tree (a clone checked out at ``--bad``): a build, a one-line edit of
   ``src/lib/util/crypto_cs.c`` (a function appended), a build, the revert, a build; and
   a clean build of the edited tree;

and prints, per build, its mode (clean or incremental), wall time (s) and ccache hits,
and whether libgnunetutil's ``.text`` (the ELF section, :func:`library_code`) of every
incremental build equals that of the clean build of the same source (and the whole
shared object's bytes). The reverted tree's code must equal the unedited tree's.
Load averages are printed at the start and the end: times measured beside other work
say so.

Usage (bases bootstrapped by an earlier ``invoke bench``; one build at a time)::

    .venv/bin/python benchmarks/incremental_build.py [--arch amd64,riscv64] [--commits 5]
        [--good v0.21.2] [--bad v0.22.2] [--no-clean] [--json out.json]

Exit status 0 when every incremental build's code equals its clean build's; 1 when one
differs or a build of the working tree fails; 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import docker.errors

from archbench import REPO_ROOT
from archbench.errors import ImageBuildError
from archbench.hosts import connect
from archbench.images import (
    Builder,
    GnunetBuild,
    Toolchain,
    build_incremental,
    ensure_base,
    library_code,
    plan_toolchain,
    prepare_cross,
    tree_key,
    tree_volume,
)
from archbench.matrix import load, parse_gnunet
from archbench.platforms import Arch
from archbench.sources import pack_build_tree, prepare_build_tree, resolve_gnunet

SHARED = REPO_ROOT.parent / "shared" / "gnunet"
HISTORY = "gnunet-git-v0.21.2-v0.27.0.tar.gz"
MATRIX = REPO_ROOT / "tests" / "integration" / "matrix-ci.yml"
EDIT = (
    "\n/* archbench benchmark edit */\nint archbench_incremental_probe (void);\n"
    "int\narchbench_incremental_probe (void)\n{\n  return 37;\n}\n"
)


def shared_history() -> Path:
    """The shared git history tarball, beside the repository or its folder of worktrees."""
    for folder in (SHARED, REPO_ROOT.parent.parent / "shared" / "gnunet"):
        if (folder / HISTORY).is_file():
            return folder / HISTORY
    raise SystemExit(f"no {HISTORY} beside the repository (../shared/gnunet)")


def prepare(text: str, work: Path) -> GnunetBuild:
    """``text`` (``--gnunet`` form) resolved, prepared and packed, as ``invoke bench`` does."""
    resolved = resolve_gnunet(parse_gnunet(text), work)
    scratch_root = work / "gnunet-src" / "trees"
    scratch_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir=scratch_root))
    try:
        tree = prepare_build_tree(resolved, scratch / "src")
        packed = pack_build_tree(tree, work / "gnunet-src" / "packed")
        return GnunetBuild(resolved, packed, tree.build_system, tree.changes)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def git(repo: Path, *args: str) -> str:
    """``git -C repo ARGS``' output, stripped."""
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def toolchain_of(builder: Builder, arch: Arch, engine: Arch) -> Toolchain:
    """The toolchain of ``arch`` for the CI matrix's slim profile on debian-trixie."""
    m = load(MATRIX)
    base = m.bases["debian-trixie"]
    packages = m.profiles["slim"].packages
    if arch == engine:
        image = ensure_base(builder, "debian-trixie", base, arch)
        return plan_toolchain(arch, image.tag, image.image_id, None, perf=False, packages=packages)
    fake = GnunetBuild(prepare_stub(), b"", "meson")
    plan, build_base_id = prepare_cross(
        builder,
        base_name="debian-trixie",
        base=base,
        target_arch=arch,
        engine_arch=engine,
        packages=packages,
        emulated=True,
        gnunet_perf=False,
        gnunet=fake,
    )
    if plan is None:
        raise SystemExit(f"no cross stage for {arch.key} on this engine")
    return plan_toolchain(arch, plan.build_base, build_base_id, plan, perf=False)


def prepare_stub() -> Any:
    from archbench.sources import ResolvedSource

    return ResolvedSource(kind="tarball", version="0.0.0")


def clean_variant(gnunet: GnunetBuild, tag: str) -> GnunetBuild:
    """``gnunet`` under another repository identity: a tree of its own (built clean)."""
    resolved = dataclasses.replace(gnunet.resolved, location=f"{gnunet.resolved.location}#{tag}")
    return dataclasses.replace(gnunet, resolved=resolved)


def build(
    builder: Builder, gnunet: GnunetBuild, toolchain: Toolchain, label: str, *, clean: bool
) -> dict[str, Any]:
    """One build (``clean``: a fresh tree, ccache off); its mode, time, code hash."""
    if clean:
        toolchain = dataclasses.replace(
            toolchain, environment=(*toolchain.environment, ("CCACHE_DISABLE", "1"))
        )
        name = tree_volume(toolchain, tree_key(toolchain, gnunet))
        with contextlib.suppress(docker.errors.NotFound):
            builder.client.volumes.get(name).remove()
    started = time.monotonic()
    try:
        built = build_incremental(builder, gnunet, toolchain, f"bench-{label}.log")
    except ImageBuildError as exc:
        return {"label": label, "failed": str(exc).splitlines()[0][:200]}
    seconds = time.monotonic() - started
    assert built.prefix is not None and built.incremental is not None
    member, text = library_code(built.prefix)
    with built.prefix.path.open("rb") as f, tarfile.open(fileobj=f) as tar:
        extracted = tar.extractfile(member)
        assert extracted is not None
        whole = hashlib.sha256(extracted.read()).hexdigest()
    return {
        "label": label,
        "mode": built.incremental["build_mode"],
        "reason": built.incremental["build_reason"],
        "seconds": round(seconds, 1),
        "ccache_hits": built.incremental["ccache_hits"],
        "ccache_misses": built.incremental["ccache_misses"],
        "text_sha256": hashlib.sha256(text).hexdigest(),
        "so_sha256": whole,
    }


def show(row: dict[str, Any]) -> None:
    if "failed" in row:
        print(f"  {row['label']:<34} FAILED: {row['failed']}", flush=True)
        return
    print(
        f"  {row['label']:<34} {row['mode']:<11} {row['seconds']:>7.1f} s  "
        f"ccache {row['ccache_hits']}/{row['ccache_misses']} hits/misses  "
        f".text {row['text_sha256'][:12]}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--arch", default="amd64")
    ap.add_argument("--commits", type=int, default=5)
    ap.add_argument("--good", default="v0.21.2")
    ap.add_argument("--bad", default="v0.22.2")
    ap.add_argument("--no-clean", action="store_true", help="time only, no clean builds")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if not 2 <= args.commits <= 50:
        print("--commits: from 2 to 50", file=sys.stderr)
        return 2
    archs = [Arch.from_key(a) for a in args.arch.split(",")]
    client = connect()
    engine = Arch.from_machine(str(client.version().get("Arch", "")))
    work = REPO_ROOT / ".archbench" / "work"
    scratch = Path(tempfile.mkdtemp(prefix="incremental-bench-"))
    logs = scratch / "logs"
    builder = Builder(client, work, logs)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    rows: dict[str, list[dict[str, Any]]] = {}
    differs: list[str] = []
    try:
        with tarfile.open(shared_history()) as tar:
            tar.extractall(scratch / "repo", filter="data")
        (bare,) = (scratch / "repo").iterdir()
        line = git(bare, "rev-list", "--first-parent", "--reverse", f"{args.good}..{args.bad}")
        # Commits with a release tag behind them (others would call themselves 'unknown').
        commits = [
            c
            for c in line.split()
            if subprocess.run(
                ["git", "-C", str(bare), "describe", "--tags", "--match", "v[0-9]*", c],
                capture_output=True,
                check=False,
            ).returncode
            == 0
        ]
        step = max(1, len(commits) // args.commits)
        chosen = [*commits[::step][: args.commits - 1], commits[-1]]
        sources = [prepare(f"git+file://{bare}@{c}", work) for c in chosen]
        clone = scratch / "tree"
        subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
        git(clone, "checkout", "-q", args.bad)
        target = clone / "src" / "lib" / "util" / "crypto_cs.c"
        original = target.read_bytes()
        for arch in archs:
            toolchain = toolchain_of(builder, arch, engine)
            print(f"{arch.key}: toolchain {toolchain.spec.tag}", flush=True)
            out = rows.setdefault(arch.key, [])
            chain = [build(builder, g, toolchain, f"{arch.key}-{c[:8]}", clean=False)
                     for g, c in zip(sources, chosen, strict=True)]  # fmt: skip
            for row in chain:
                show(row)
            out += chain
            tree_rows = []
            for label, text in (("tree", original), ("tree-edited", original + EDIT.encode()),
                                ("tree-reverted", original)):  # fmt: skip
                target.write_bytes(text)
                tree_rows.append(build(builder, prepare(str(clone), work), toolchain,
                                       f"{arch.key}-{label}", clean=False))  # fmt: skip
                show(tree_rows[-1])
            out += tree_rows
            if tree_rows[0].get("text_sha256") != tree_rows[2].get("text_sha256"):
                differs.append(f"{arch.key}: the reverted tree's code differs from the unedited")
            if args.no_clean:
                continue
            for g, c, inc in zip(sources, chosen, chain, strict=True):
                ref = build(builder, clean_variant(g, "clean"), toolchain,
                            f"{arch.key}-{c[:8]}-clean", clean=True)  # fmt: skip
                show(ref)
                out.append(ref)
                if "failed" in ref or "failed" in inc:
                    if ("failed" in ref) != ("failed" in inc):
                        differs.append(f"{arch.key} {c[:12]}: one build failed, the other not")
                    continue
                same = ref["text_sha256"] == inc["text_sha256"]
                print(f"    {c[:12]}: .text identical: {same}; "
                      f"whole .so identical: {ref['so_sha256'] == inc['so_sha256']}")  # fmt: skip
                if not same:
                    differs.append(f"{arch.key} {c[:12]}")
            target.write_bytes(original + EDIT.encode())
            edited = clean_variant(prepare(str(clone), work), "clean")
            ref = build(builder, edited, toolchain, f"{arch.key}-tree-edited-clean", clean=True)
            show(ref)
            out.append(ref)
            same = ref.get("text_sha256") == tree_rows[1].get("text_sha256")
            print(f"    edited tree: .text identical: {same}", flush=True)
            if not same:
                differs.append(f"{arch.key} edited tree")
            target.write_bytes(original)
    finally:
        print(f"load average at end: {os.getloadavg()}", flush=True)
        if args.json is not None:
            args.json.write_text(json.dumps({"rows": rows, "differs": differs}, indent=2))
        shutil.rmtree(scratch, ignore_errors=True)
    for arch_key, arch_rows in rows.items():
        edits = [r for r in arch_rows if r["label"].endswith("tree-edited") and "seconds" in r]
        if edits:
            print(f"{arch_key}: one-line edit of crypto_cs.c -> libgnunetutil in "
                  f"{edits[0]['seconds']:.1f} s ({edits[0]['mode']})")  # fmt: skip
    if differs:
        print("DIFFERS: " + "; ".join(differs))
        return 1
    print("every incremental build's code equals its clean build's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
