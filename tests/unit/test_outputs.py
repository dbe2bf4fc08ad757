"""The report's outputs manifest: only archbench's own files go, and --no-plots keeps figures."""

from __future__ import annotations

from pathlib import Path

from archbench.report.writer import listed, replace_outputs


def _write(path: Path) -> Path:
    path.write_text("x")
    return path


def test_earlier_outputs_not_written_again_are_removed_but_kept_ones_stay(tmp_path: Path) -> None:
    first = [_write(tmp_path / n) for n in ("appendix.md", "fig-a.png", "fig-b.pdf", "old.csv")]
    mine = _write(tmp_path / "fig-mine.png")
    assert replace_outputs(tmp_path, first) == []
    # A --no-plots report: it writes the tables only and keeps the earlier figures.
    removed = replace_outputs(
        tmp_path, [tmp_path / "appendix.md"], keep=lambda n: n.startswith("fig-")
    )
    assert removed == [tmp_path / "old.csv"]
    assert (tmp_path / "fig-a.png").is_file() and (tmp_path / "fig-b.pdf").is_file()
    assert listed(tmp_path) == {"appendix.md", "fig-a.png", "fig-b.pdf"}
    # A report with plots that no longer draws fig-b: only archbench's fig-b goes.
    assert replace_outputs(tmp_path, [tmp_path / "appendix.md", first[1]]) == [
        tmp_path / "fig-b.pdf"
    ]
    assert mine.is_file()
