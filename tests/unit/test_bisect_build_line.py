"""What ``invoke bisect`` says after each step about how libgnunetutil was built
(archbench.cli.bisect.build_line), from the provenance a result records
(:meth:`archbench.images.IncrementalBuild.provenance`)."""

from __future__ import annotations

from pathlib import Path

from archbench.cli.bisect import build_line, build_lines
from archbench.result import BisectCount, BisectStep, ResultStore


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


def test_a_step_whose_run_stored_no_result_is_told_from_its_build_log(tmp_path: Path) -> None:
    # The good end of --metric time is built but not timed alone: no result, a log.
    run_id = "20261207T174451Z-7f9e0e"
    logs = tmp_path / run_id / "logs"
    logs.mkdir(parents=True)
    (logs / "ci-amd64.gnunet.log").write_text(
        "build-incremental.sh: clean (no stamp)\nbuild-libgnunetutil.sh: syncing\n"
    )
    count = BisectCount(arch="amd64", target="ci-amd64", run_id=run_id, verdict="good")
    step = BisectStep(
        index=0, commit="9" * 40, subject="s", date="2024-10-29", counts=(count,),
        seconds=28.0, finished_at="2026-12-07T17:45:19Z",
    )  # fmt: skip
    store = ResultStore(tmp_path)
    assert build_lines(store, step) == [
        f"amd64: libgnunetutil clean (no stamp) build (log {logs / 'ci-amd64.gnunet.log'})"
    ]
    # A count reused from an earlier run built nothing; a run without log says nothing.
    reused = count.model_copy(update={"reused": True})
    assert build_lines(store, step.model_copy(update={"counts": (reused,)})) == []
    other = count.model_copy(update={"run_id": "20261207T174451Z-000000"})
    assert build_lines(store, step.model_copy(update={"counts": (other,)})) == []
