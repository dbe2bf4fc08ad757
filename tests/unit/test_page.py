"""The results page's data (:func:`archbench.report.page.assemble`) and its HTML.

Pure: synthetic results and a history manifest (``helpers.synthetic_history``), no
browser; ``tests/unit/test_page_browser.py`` opens the page in headless Chromium.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import result, row, synthetic_history

from archbench.cli.report import ReportRequest, render_report
from archbench.report import PAGE_FILE, write_page_from_store
from archbench.report.page import Page, assemble
from archbench.report.page_html import render_page
from archbench.result import ResultStore

ROWS = (
    "blindsig CS signing",
    "blindsig CS verifying",
    "blindsig RSA-2048 signing",
    "blindsig RSA-2048 verifying",
)


def _page() -> Page:
    manifest, results = synthetic_history()
    return assemble([], [(manifest, results)], generated_at="2026-12-01T12:00:00Z")


def test_every_version_run_has_its_tables_and_environment() -> None:
    page = _page()
    assert [r.run_id for r in page.runs] == ["20261201T100000Z-aaaaaa", "20261201T110000Z-bbbbbb"]
    for run in page.runs:
        titles = [t.title for t in run.tables]
        assert titles == ["Time per operation", "Instructions per operation"]
        timed, counts = run.tables
        assert timed.rows == ROWS and counts.rows == ROWS
        assert timed.columns == ("amd64-trixie (amd64)",)
        assert counts.columns == ("amd64-trixie (amd64)", "riscv64-trixie (riscv64, emulated)")
        env = dict(zip(run.environment.rows, run.environment.cells, strict=True))
        assert env["CPU"][2].text == "<script>alert(1)</script> RISC-V host"  # kept as read
        assert env["execution"][0].text == "native on amd64"
        assert env["execution"][2].text.startswith("emulated (QEMU 8.2.2")
        for field in (
            "kernel",
            "OS",
            "GNUnet version",
            "GNUnet source",
            "libgcrypt",
            "libsodium",
            "QEMU version",
        ):
            assert all(c.text for c in env[field]), field


def test_cells_show_time_and_counts_per_operation_and_link_to_their_samples() -> None:
    page = _page()
    anchors = {s.anchor for s in page.samples}
    timed, counts = page.runs[0].tables
    # helpers.row: 10 operations per block; CS signing blocks are 90 000..90 007 ns.
    assert timed.cells[0][0].text.startswith("9.00 µs ±")
    assert "not how far another run would lie" in timed.note
    # 300 000 instructions per block of 10: 30 000 per operation.
    assert counts.cells[0][0].text == "30 000"
    links = [c.anchor for t in page.runs[0].tables for line in t.cells for c in line]
    assert links and all(a in anchors for a in links)


def test_history_figures_have_a_trace_per_target_and_a_point_per_version() -> None:
    page = _page()
    (history,) = page.histories
    assert [v[1] for v in history.versions] == ["Debian's libgnunet", "gnunet-0.27.0.tar.gz"]
    counted = [f for f in history.figures if "instructions" in f.title]
    assert [f.title.split(":")[0] for f in counted] == list(ROWS)
    for f in counted:
        assert f.x == ("v1 Debian's libgnunet", "v2 gnunet-0.27.0.tar.gz")
        assert [t.name for t in f.traces] == [
            "amd64-trixie (amd64)",
            "riscv64-trixie (riscv64, emulated)",
        ]
        for t in f.traces:
            assert [p.x for p in t.points] == list(f.x)
            second, first = t.points[1].y, t.points[0].y
            assert second / first == pytest.approx(1.1, rel=1e-3)
    timed = [f for f in history.figures if "time" in f.title]
    assert timed and all(len(f.traces) == 1 for f in timed)  # riscv64 is only counted
    anchors = {s.anchor for s in page.samples}
    assert all(p.anchor in anchors for f in page.figures for t in f.traces for p in t.points)


def test_samples_keep_every_block_and_name_their_file() -> None:
    manifest, results = synthetic_history()
    page = assemble(
        [], [(manifest, results)], json_path=lambda r: f"../results/{r.run_id}/{r.target.name}.json"
    )
    # 2 versions x (amd64 time, amd64 counts, riscv64 counts) x 4 rows.
    assert len(page.samples) == 24
    s = page.samples[0]
    assert s.blocks == tuple(range(90_000, 90_008)) and s.per_op[0] == 9000.0
    assert s.json_path == "../results/20261201T100000Z-aaaaaa/amd64-trixie.json"


def test_an_invalid_row_says_why_instead_of_a_number() -> None:
    bad = row("CS", "signing", [1, 2, 3], valid=False, reason="signature did not verify")
    page = assemble([result("t", "amd64", "x86_64", "cpu", [bad])])
    (cell,) = page.runs[0].tables[0].cells[0]
    assert cell.text == "invalid: signature did not verify"
    assert not page.figures


@pytest.mark.slow
def test_the_html_escapes_results_strings_and_inlines_plotly_once() -> None:
    text = render_page(_page())
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; RISC-V host" in text
    # plotly.js once, no file or address loaded from anywhere.
    assert text.count("Plotly=") <= 1 and len(re.findall(r"plotly\.js v\d", text)) == 1
    page_only = re.sub(r"<script>.*?</script>", "", text, count=1, flags=re.DOTALL)
    assert len(page_only) < 200_000  # the first script was plotly.js
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page_only)
    assert 4_000_000 < len(text.encode()) < 6_000_000


def test_without_figures_the_page_carries_no_plotly() -> None:
    bad = row("CS", "signing", [1, 2, 3], valid=False, reason="no")
    text = render_page(assemble([result("t", "amd64", "x86_64", "cpu", [bad])]))
    assert "plotly" not in text.lower() and len(text) < 20_000


@pytest.mark.slow
def test_invoke_report_writes_the_page_with_the_history_of_its_run(tmp_path: Path) -> None:
    manifest, results = synthetic_history()
    store = ResultStore(tmp_path / "results")
    for rs in results.values():
        for r in rs:
            store.save(r)
    store.save_history(manifest)
    out = tmp_path / "out"
    lines: list[str] = []
    paths = render_report(
        ReportRequest(
            results=store.root, out=out, runs=(manifest.versions[1].run_id,), plots=False
        ),
        lines.append,
    )
    assert out / PAGE_FILE in paths
    text = (out / PAGE_FILE).read_text(encoding="utf-8")
    assert f"History {manifest.history_id}" in text
    assert "Run 20261201T100000Z-aaaaaa" in text  # the history's other version
    assert 'href="../results/20261201T110000Z-bbbbbb/amd64-trixie.json"' in text
    assert PAGE_FILE in (out / ".archbench-outputs.json").read_text(encoding="utf-8")
    # invoke history's own call: exactly the history given.
    again = write_page_from_store(store, tmp_path / "h", histories=[(manifest, results)])
    assert again == [tmp_path / "h" / PAGE_FILE]


def test_reference_data_is_shown_as_printed_with_unknowns_and_notes() -> None:
    from archbench.upstream import reference

    loaded, failures = reference.load_reference()
    assert failures == []
    page = assemble(loaded, generated_at="2026-12-01T12:00:00Z")
    run = page.runs[0]
    timed = run.tables[0]
    texts = {c.text for line in timed.cells for c in line}
    # The thesis printed "10 000 ms" for ten RSA-4096 key generations: one digit, not "1.00 s".
    assert "1 s" in texts
    assert "20.4 µs" in texts
    assert not any("±" in t for t in texts)
    assert any(x.title.endswith("; printed as 10 000 ms per 10 operations") for x in page.samples)
    assert timed.note.startswith("Published figures per operation (the printed figure of a")
    env = run.environment
    cores = [c.text for c in env.cells[env.rows.index("cores")]]
    placeholders = sum("cores" in r.reference.placeholders for r in loaded if r.reference)
    assert cores.count("unknown (not printed)") == placeholders == 2
    notes = [c.text for c in env.cells[env.rows.index("notes")]]
    assert all(n.startswith("Figures as printed in the thesis") for n in notes)


def test_history_figures_mark_the_step_of_every_counted_row() -> None:
    """The synthetic second version executes 10 % more instructions on both
    architectures: each counted row's figure marks that step between v1 and v2, with
    the ratio of its counts (as ``invoke history``'s steps table prints it)."""
    (history,) = _page().histories
    for f in history.figures:
        if "instructions" not in f.title:
            continue
        assert sorted(m.text for m in f.marks) == [
            "step 1.1000× on amd64",
            "step 1.1000× on riscv64",
        ], f.title
        assert {(m.before, m.after, m.kind) for m in f.marks} == {
            ("v1 Debian's libgnunet", "v2 gnunet-0.27.0.tar.gz", "step")
        }


def test_a_change_point_over_the_whole_series_is_marked_where_the_level_changes() -> None:
    """Five versions, the counts 10 % higher from v4 on: a change point between v3 and
    v4 (PELT over the series) beside the pair's step; no mark elsewhere."""
    ids = tuple(f"20261201T1{i}0000Z-{c * 6}" for i, c in enumerate("abcde"))
    manifest, results = synthetic_history(run_ids=ids, scales=(1.0, 1.0, 1.0, 1.1, 1.1))
    (history,) = assemble([], [(manifest, results)]).histories
    figure = next(f for f in history.figures if f.title.startswith("blindsig CS signing: instr"))
    assert {(m.kind, m.before[:2], m.after[:2]) for m in figure.marks} == {
        ("step", "v3", "v4"),
        ("change", "v3", "v4"),
    }
    assert any(m.text == "change point 1.1000× on amd64" for m in figure.marks)
    # Drawn: a vertical line halfway between v3 and v4 (categories 2 and 3) per mark.
    from archbench.report.page_html import _mark_layout

    drawn = _mark_layout(figure)
    assert len(drawn) == len(figure.marks) == 4
    assert {shape["x0"] for shape, _ in drawn} == {2.5}
    assert [note["text"] if note else None for _, note in drawn] == [m.text for m in figure.marks]


def test_each_machine_column_links_to_its_environment() -> None:
    page = _page()
    for run in page.runs:
        ids = run.environment.column_ids
        assert len(ids) == len(set(ids)) == len(run.environment.columns)
        for table in run.tables:
            assert len(table.column_links) == len(table.columns)
            for column, link in zip(table.columns, table.column_links, strict=True):
                # The link lands on the same machine's column, same metric.
                landed = run.environment.columns[ids.index(link)]
                assert landed.startswith(column + ", ")
                metric = "time" if table.title.startswith("Time") else "instructions"
                assert landed == f"{column}, {metric}"
    (history,) = page.histories
    assert history.run_links == tuple(r.anchor for r in page.runs)


def test_marks_beyond_what_fits_at_one_place_are_counted_not_stacked() -> None:
    from archbench.report.page import Figure, Mark
    from archbench.report.page_html import MARKS_STACKED, _mark_layout

    marks = tuple(Mark("v1", "v2", "step", f"step 1.1000× on arch{i}") for i in range(12))
    drawn = _mark_layout(Figure("fig-x", "t", "y", "line", ("v1", "v2"), (), marks))
    notes = [note for _, note in drawn]
    assert len(drawn) == 12 and all(shape["x0"] == 0.5 for shape, _ in drawn)
    texts = [n["text"] for n in notes if n is not None]
    assert texts[: MARKS_STACKED - 1] == [m.text for m in marks[: MARKS_STACKED - 1]]
    assert texts[-1] == f"{12 - MARKS_STACKED + 1} more: listed below the figure"
    assert len(texts) == MARKS_STACKED
