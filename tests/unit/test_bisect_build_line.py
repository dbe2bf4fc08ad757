"""What ``invoke bisect`` says after each step about how libgnunetutil was built
(archbench.cli.bisect.build_line), from the provenance a result records
(:meth:`archbench.images.IncrementalBuild.provenance`)."""

from __future__ import annotations

from archbench.cli.bisect import build_line


def test_an_incremental_build_names_its_tree_seconds_and_ccache() -> None:
    source: dict[str, str | bool | None] = {
        "kind": "git",
        "build_mode": "incremental",
        "build_reason": "",
        "build_tree": "archbench-gnunet-tree-amd64-5ae2af2c53c02f3ef59750e5",
        "ccache_hits": "4",
        "ccache_misses": "66",
        "build_seconds": "34.6",
    }
    assert build_line("amd64", source) == (
        "amd64: libgnunetutil incremental build in 34.6 s "
        "(tree archbench-gnunet-tree-amd64-5ae2af2c53c02f3ef59750e5, ccache 4 hits, 66 misses)"
    )


def test_a_clean_build_says_why() -> None:
    source: dict[str, str | bool | None] = {
        "build_mode": "clean",
        "build_reason": "new tree",
        "build_tree": "t",
        "ccache_hits": None,
        "ccache_misses": None,
        "build_seconds": "27.8",
    }
    assert build_line("riscv64", source) == (
        "riscv64: libgnunetutil clean build (new tree) in 27.8 s (tree t)"
    )


def test_a_build_inside_the_image_says_it_was_not_incremental() -> None:
    assert build_line("armv7", {"kind": "git", "commit": "c" * 40}) == (
        "armv7: libgnunetutil built inside the image build (not incremental)"
    )
