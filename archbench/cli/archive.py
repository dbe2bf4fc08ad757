"""``invoke archive``: one directory (or tar) with a run's images, matrix, results and report."""

from __future__ import annotations

from pathlib import Path

from archbench.archive import archiver
from archbench.cli.config import Settings
from archbench.result import ResultStore


def archive(s: Settings, *, run_id: str, out: str, tar: bool, plots: bool, results: str) -> None:
    """``invoke archive``: write run ``run_id`` to ``out`` (default ``archives/<run-id>``).

    Prints the path, size in MB, seconds taken, archive id and the sha256 of its
    ``manifest.json``, and the command that reruns it elsewhere.

    Raises:
        ArchiveError: ``out`` exists, or an image or file of the run cannot be saved.
        ResultsError: the run is unknown or its manifest cannot be read.
        EngineError: the engine cannot be reached to save the images.
    """
    store = ResultStore(Path(results or s.results))
    summary = archiver.create(
        store, run_id, Path(out or f"archives/{run_id}"), tar=tar, plots=plots
    )
    print(
        f"wrote {summary.path}: {summary.total_bytes / 1e6:.0f} MB in {summary.seconds:.1f} s, "
        f"archive {summary.archive_id}, manifest sha256 {summary.manifest_sha256}"
    )
    print(f"rerun elsewhere: invoke bench --from-archive {summary.path}")
