"""The results page built from hostile data (issue 32, kind 5).

Links are escaped for their context (a relative path always starts with ``./`` or
``../``, so a folder named ``javascript:x`` is a folder, not a scheme), a long string
from results is shown as text cut with an ellipsis and its whole value on hover, and a
page over many runs draws its figures as they come near the screen.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from helpers import result, row

from archbench.cli.report import ReportRequest, render_report
from archbench.report import PAGE_FILE
from archbench.report.page_html import MAX_EAGER_FIGURES, cut, relative_href
from archbench.result import ResultStore

RUN = "20261129T224000Z-1a2b3c"


def _save(store: ResultStore, name: str, run_id: str = RUN, cpu: str = "c") -> None:
    store.save(
        result(
            name,
            "amd64",
            "x86_64",
            cpu,
            [row("CS", "signing", [77_000, 78_000, 76_000, 77_500])],
            run_id=run_id,
        )
    )


def test_a_relative_link_never_reads_as_a_scheme() -> None:
    assert relative_href("javascript:alert(1)/r/a.json") == "./javascript%3Aalert%281%29/r/a.json"
    assert relative_href("../res/r/a b.json") == "../res/r/a%20b.json"
    assert relative_href("data:text/html,x") == "./data%3Atext/html%2Cx"


def test_a_long_string_is_cut_with_the_whole_value_on_hover() -> None:
    long = "<b>" + "x" * 500
    shown = str(cut(long))
    assert shown.startswith('<span class="cut" title="&lt;b&gt;xxx')
    assert shown.endswith("…</span>") and "<b>" not in shown
    assert str(cut("short <i>")) == "short &lt;i&gt;"


def test_a_results_folder_named_like_a_scheme_is_linked_as_a_folder(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "javascript:alert(1)")
    _save(store, "a", cpu="C" * 3000)
    render_report(ReportRequest(store.root, tmp_path, plots=False), lambda _line: None)
    text = (tmp_path / PAGE_FILE).read_text(encoding="utf-8")
    # plotly.js (the first script) has links of its own; the page's are the rest.
    text = re.sub(r"<script>.*?</script>", "", text, count=1, flags=re.DOTALL)
    links = re.findall(r'href="([^"#][^"]*)"', text)
    assert links and all(link.startswith(("./", "../")) for link in links), links
    assert 'href="./javascript%3Aalert%281%29/' in text
    # Shown as text cut to 120 characters; on hover the value as the outputs hold it
    # (cut to 200, the whole once in environments.json: kind 8).
    shown = re.sub(r'title="[^"]*"', "", text)
    assert "C" * 120 + "…" in shown and "C" * 121 not in shown
    assert 'title="' + "C" * 200 + '… (3000 chars; whole in environments.json)"' in text


def test_a_page_over_many_runs_draws_figures_on_demand(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    runs = [f"20261129T{h:02d}{m:02d}00Z-aaaaaa" for h in range(10) for m in range(5)]
    for run_id in runs:
        _save(store, "a", run_id)
    start = time.monotonic()
    # The runs named: each drawn in full (--all-runs draws them over time instead).
    render_report(ReportRequest(store.root, tmp_path / "out", runs=tuple(runs), plots=False), print)
    elapsed = time.monotonic() - start
    text = (tmp_path / "out" / PAGE_FILE).read_text(encoding="utf-8")
    figures = text.count('class="figure"')
    assert figures > MAX_EAGER_FIGURES
    deferred = text.count('<script type="application/x-archbench-deferred">')
    assert deferred == text.count("Plotly.newPlot(") == figures
    assert "new IntersectionObserver" in text
    print(f"\n{len(runs)} runs: {figures} figures, page {len(text) / 1e6:.1f} MB, {elapsed:.1f} s")


def test_outputs_stay_bounded_by_their_inputs(tmp_path: Path) -> None:
    """A long CPU model is repeated per row nowhere: cut there, stored once (kind 8)."""
    cpu = "Z" * 300_000
    rows = [row("RSA", "signing", [1000 + i, 1001, 1002], 512 + 8 * i) for i in range(150)]
    store = ResultStore(tmp_path / "results")
    store.save(result("a", "amd64", "x86_64", cpu, rows, run_id=RUN))
    size_in = sum(p.stat().st_size for p in (tmp_path / "results").rglob("*.json"))
    render_report(ReportRequest(store.root, tmp_path / "out", plots=False), lambda _line: None)
    written = {p.name: p.stat().st_size for p in (tmp_path / "out").iterdir()}
    total = sum(written.values()) - written.get(PAGE_FILE, 0)  # the page inlines plotly.js
    assert total < 3 * size_in, written  # was 150 x 300 kB in the CSV alone
    whole = json.loads((tmp_path / "out" / "environments.json").read_text())
    assert whole == {f"{RUN}/a": {"cpu_model": cpu}}
    csv = (tmp_path / "out" / "results.csv").read_text(encoding="utf-8")
    assert "300000 chars; whole in environments.json" in csv
    assert csv.count("Z" * 201) == 0
