"""libgnunetutil built incrementally in a persistent tree is the clean build's code, and a
tree that is not whole is rebuilt, never used (issue 37, items 1 and 2).

On amd64 with the session's trixie base (the CI matrix's slim profile, whose package layer
the toolchain image shares with the benchmark images of source builds): three real commits
of the shared history past v0.21.2 built one after the other in one tree. The second is 189
commits after the first, across the change of libgnunetutil's soversion from 15 to 17 (the
tree's ``.version`` is the release tag, 0.21.2 for both, so meson is not set up again: the
build must regenerate itself and build the new file name). The third is one commit after the
second, whose ``meson.build`` adds ``nat.c`` to the library: that build compiles that unit
alone (not every unit, as ``git describe``'s per-commit version in ``gnunet_config.h``
made it). The last is built again from nothing (a fresh tree, ccache off): libgnunetutil's
``.text`` must be the same bytes. Then
the tree is damaged twice, as a killed build or a bad disk would leave it: a byte flipped in
an object file, and the stamp removed; each next build must say ``clean`` with the reason
and give the same code again. The chain over five commits, riscv64 and a working-tree edit
and its revert are ``benchmarks/incremental_build.py``'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

import docker
import docker.errors
import pytest
from helpers import CI_MATRIX, GNUNET_TARBALLS, WORK

from archbench.images import (
    Builder,
    GnunetBuild,
    build_incremental,
    ensure_base,
    library_code,
    plan_toolchain,
    tree_key,
    tree_volume,
)
from archbench.matrix import load, parse_gnunet
from archbench.platforms import Arch
from archbench.sources import pack_build_tree, prepare_build_tree, resolve_gnunet

pytestmark = pytest.mark.docker

HISTORY = GNUNET_TARBALLS / "gnunet-git-v0.21.2-v0.27.0.tar.gz"
COMMITS = (
    "227acb2c84956bebcb7e942df01221322b66caa9",  # v0.21.2-10: soversion 15
    "9c4f628f59e1b96f0af617c75426f5a468b21c2e",  # v0.21.2-199: soversion 17
    "0c51b669e864c60fafd4003b635c8b98581a0791",  # v0.21.2-200: adds nat.c to libgnunetutil
)


def _prepare(text: str, tmp_path: Path) -> GnunetBuild:
    resolved = resolve_gnunet(parse_gnunet(text), WORK)
    scratch = Path(tempfile.mkdtemp(dir=tmp_path))
    tree = prepare_build_tree(resolved, scratch / "src")
    packed = pack_build_tree(tree, WORK / "gnunet-src" / "packed")
    shutil.rmtree(scratch)
    return GnunetBuild(resolved, packed, tree.build_system, tree.changes)


def _damage(client: docker.DockerClient, volume: str, script: str) -> None:
    base = "archbench-base/debian-trixie:amd64"
    client.containers.run(
        base,
        ["sh", "-c", script],
        volumes={volume: {"bind": "/tree", "mode": "rw"}},
        network_disabled=True,
        remove=True,
    )


def test_an_incremental_chain_is_the_clean_builds_code_and_a_damaged_tree_is_rebuilt(
    engine_client: docker.DockerClient, tmp_path: Path
) -> None:
    if not HISTORY.is_file():
        pytest.skip(f"no {HISTORY} (issue 29's shared test data)")
    with tarfile.open(HISTORY) as tar:
        tar.extractall(tmp_path / "repo", filter="data")
    (bare,) = (tmp_path / "repo").iterdir()
    m = load(CI_MATRIX)
    builder = Builder(engine_client, WORK, tmp_path / "logs")
    base = ensure_base(builder, "debian-trixie", m.bases["debian-trixie"], Arch.AMD64)
    toolchain = plan_toolchain(
        Arch.AMD64,
        base.tag,
        base.image_id,
        None,
        perf=False,
        packages=m.profiles["slim"].packages,
    )
    # A repository of this test's own: its tree starts empty whatever ran before.
    sources = [_prepare(f"git+file://{bare}@{c}", tmp_path) for c in COMMITS]
    volume = tree_volume(toolchain, tree_key(toolchain, sources[0]))
    # The last commit from nothing: another tree, no ccache.
    fresh = dataclasses.replace(
        sources[-1],
        resolved=dataclasses.replace(
            sources[-1].resolved, location=f"{sources[-1].resolved.location}#clean"
        ),
    )
    no_cache = dataclasses.replace(
        toolchain, environment=(*toolchain.environment, ("CCACHE_DISABLE", "1"))
    )
    try:
        modes = []
        for source in sources:
            # Each commit is described as it is; its tree builds the release tag.
            assert re.fullmatch(r"0\.21\.2-[0-9]+-g[0-9a-f]+", str(source.resolved.version))
            assert source.resolved.build_version == "0.21.2"
            built = build_incremental(builder, source, toolchain, "chain.log")
            assert built.incremental is not None and built.prefix is not None
            modes.append(built.incremental["build_mode"])
        assert modes == ["clean", "incremental", "incremental"]
        assert built.incremental is not None and built.prefix is not None
        # One commit after the second: nat.c alone is compiled (a ccache hit or miss).
        compiled = [built.incremental["ccache_hits"], built.incremental["ccache_misses"]]
        assert sum(int(str(n)) for n in compiled) == 1, compiled
        assert built.incremental["build_tree"] == volume
        chained = library_code(built.prefix)

        clean = build_incremental(builder, fresh, no_cache, "clean.log")
        assert clean.incremental is not None and clean.prefix is not None
        assert clean.incremental["build_mode"] == "clean"
        assert library_code(clean.prefix) == chained
        # Same code, same packed prefix: the image that ADDs it is the same image.
        assert clean.prefix.path == built.prefix.path

        # A byte flipped in an object file of the tree: detected, rebuilt clean.
        _damage(
            engine_client,
            volume,
            "f=$(find /tree/b/meson -name '*.o' | sort | head -n 1) && "
            "printf '\\377' | dd of=\"$f\" bs=1 seek=64 conv=notrunc 2>/dev/null",
        )
        again = build_incremental(builder, sources[-1], toolchain, "flipped.log")
        assert again.incremental is not None and again.prefix is not None
        assert again.incremental["build_mode"] == "clean"
        assert "manifest" in str(again.incremental["build_reason"])
        assert library_code(again.prefix) == chained

        # A build that never finished (no stamp): detected, rebuilt clean.
        _damage(engine_client, volume, "rm /tree/STAMP")
        again = build_incremental(builder, sources[-1], toolchain, "unstamped.log")
        assert again.incremental is not None and again.prefix is not None
        assert again.incremental["build_mode"] == "clean"
        assert "no stamp" in str(again.incremental["build_reason"])
        assert library_code(again.prefix) == chained
    finally:
        for name in (volume, tree_volume(toolchain, tree_key(toolchain, fresh))):
            with contextlib.suppress(docker.errors.NotFound):
                engine_client.volumes.get(name).remove()
