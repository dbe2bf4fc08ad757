"""The results page in a real browser: Debian's ``chromium``, headless, from disk.

The page is built from synthetic results and a history manifest
(``helpers.synthetic_history``) in a results store of the test's own, as ``invoke
report`` builds it. Chromium is driven with its command line only (no DevTools
client): ``--dump-dom`` prints the DOM after the scripts ran, ``--enable-logging=stderr``
prints every console message (``INFO:CONSOLE``, uncaught exceptions included),
``--screenshot`` writes a PNG. Every host name resolves to nothing
(``--host-resolver-rules``), so a page that needed the network would log a failed load.
Skipped where ``chromium`` is missing, except in CI (``CI`` set), which installs it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import chromium_run, find_chromium, synthetic_history

from archbench.cli.report import ReportRequest, render_report
from archbench.report import PAGE_FILE
from archbench.result import ResultStore

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE = "<script>alert(1)</script> RISC-V host"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``invoke report``'s page of the synthetic history's second run, in a tmp dir."""
    root = tmp_path_factory.mktemp("page")
    manifest, results = synthetic_history(hostile_cpu=HOSTILE)
    store = ResultStore(root / "results")
    for rs in results.values():
        for r in rs:
            store.save(r)
    store.save_history(manifest)
    request = ReportRequest(
        results=store.root, out=root / "out", runs=(manifest.versions[1].run_id,), plots=False
    )
    render_report(request, lambda _line: None)
    return root / "out" / PAGE_FILE


def test_the_page_renders_every_row_and_version_without_console_errors(
    page: Path, tmp_path: Path
) -> None:
    done = chromium_run(find_chromium(), tmp_path / "profile", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, "\n".join(console)
    # plotly drew every figure: two per run (time, counts) and four rows x two metrics
    # of the history, each an SVG with a legend entry per target.
    assert dom.count('class="main-svg"') >= 2 * (2 * 2 + 4 * 2)
    legend = set(re.findall(r'class="legendtext"[^>]*>([^<]+)<', dom))
    assert legend >= {"amd64-trixie (amd64)", "riscv64-trixie (riscv64, emulated)"}
    for text in (
        "blindsig CS signing",
        "blindsig CS verifying",
        "blindsig RSA-2048 signing",
        "blindsig RSA-2048 verifying",
        "v1 Debian's libgnunet",
        "v2 gnunet-0.27.0.tar.gz",
        "Run 20261201T100000Z-aaaaaa",
        "Run 20261201T110000Z-bbbbbb",
        "QEMU 8.2.2",
        "Debian GNU/Linux 13 (trixie)",
        "1.11.0-7",
    ):
        assert text.replace("'", "&#39;") in dom or text in dom, text
    # The hostile CPU model is text in the DOM, not an element: the dump escapes it.
    assert "&lt;script&gt;alert(1)&lt;/script&gt; RISC-V host" in dom
    assert "<script>alert(1)</script>" not in dom
    # The history's counted figures mark the 10 % step of both architectures: a line
    # (a shape of plotly's) and its annotation on each of the four, listed below too.
    drawn = re.findall(r'class="annotation-text"[^>]*>(step [^<]+)<', dom)
    assert sorted(set(drawn)) == ["step 1.1000× on amd64", "step 1.1000× on riscv64"]
    assert len(drawn) == 2 * 4
    assert dom.count('class="mark-step"') == 2 * 4
    assert len(re.findall(r'<path data-index="\d+"[^>]*stroke: rgb\(192, 28, 40\)', dom)) == 8
    # Each machine's column heads links to its environment, in its run's section.
    env_links = re.findall(r'class="env-link" href="#(env-[0-9a-f]{12})"', dom)
    assert len(env_links) == 2 * (1 + 2)  # two runs: amd64 timed; amd64 and riscv64 counted
    # Every link into the page lands on an element of the page.
    ids = set(re.findall(r'\sid="([^"]+)"', dom))
    targets = set(re.findall(r'href="#([^"]+)"', dom))
    assert targets and targets <= ids, sorted(targets - ids)[:5]


def test_the_page_can_be_looked_at(page: Path, tmp_path: Path) -> None:
    """A screenshot of the page's history, steps marked (``$ARCHBENCH_ARTIFACTS`` when
    set keeps it as ``results-history.png``)."""
    import os
    import shutil

    shot = tmp_path / "results-history.png"
    done = chromium_run(
        find_chromium(),
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1280,2400",
        page.as_uri(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 50_000
    if os.environ.get("ARCHBENCH_ARTIFACTS"):
        shutil.copy(shot, Path(os.environ["ARCHBENCH_ARTIFACTS"]) / shot.name)


MEASURE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const b = document.body, plots = [...document.querySelectorAll(".js-plotly-plot")];
  const inside = (r, box) => r.left >= box.left - 1 && r.right <= box.right + 1
    && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
  b.setAttribute("data-plot-heights", plots.map(
    p => Math.round(p.querySelector(".nsewdrag").getBoundingClientRect().height)).join(","));
  b.setAttribute("data-legend-shown", plots.map(p => {
    const box = p.querySelector(".main-svg").getBoundingClientRect();
    const shown = [...p.querySelectorAll(".legend .traces")]
      .filter(t => t.getBoundingClientRect().height > 0 && inside(t.getBoundingClientRect(), box));
    return shown.length + "/" + p.data.length;
  }).join(","));
  b.setAttribute("data-clipped-ticks", plots.map(p => {
    const box = p.querySelector(".main-svg").getBoundingClientRect();
    return [...p.querySelectorAll(".xtick text, .ytick text")]
      .filter(t => !inside(t.getBoundingClientRect(), box)).length;
  }).join(","));
  const target = document.querySelector(":target");
  if (target) {
    const r = target.getBoundingClientRect();
    b.setAttribute("data-target", target.id);
    b.setAttribute("data-target-box", [r.left, r.top, r.right, r.bottom].join(","));
  }
  b.setAttribute("data-scroll",
    document.documentElement.scrollWidth + "/" + document.documentElement.clientWidth);
}, 2000));
</script>"""


FIGURES_ONLY = """<style>
section.run > h3, section.run > p.note, section.run > div.scroll, nav, #samples { display: none; }
</style>"""


@pytest.mark.parametrize("machines", [1, 5, 11])
def test_a_reader_at_1280_px_sees_every_figure_whole(machines: int, tmp_path: Path) -> None:
    """The thesis's reference data on 1, 5 and 11 machines: every plot area at least
    300 px tall, the legend showing every machine, no tick label cut, no sideways scroll.
    A screenshot of each goes to ``$ARCHBENCH_ARTIFACTS`` when set (CI keeps it)."""
    import os
    import shutil

    from archbench.report.page import assemble
    from archbench.report.page_html import render_page
    from archbench.upstream import reference

    loaded, failures = reference.load_reference()
    assert failures == [] and len(loaded) >= machines
    html = render_page(assemble(loaded[:machines], generated_at="2026-12-03T08:00:00Z"))
    page = tmp_path / "results.html"
    page.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    chromium = find_chromium()
    done = chromium_run(
        chromium, tmp_path / "profile", "--window-size=1280,2000", "--dump-dom", page.as_uri()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = dict(
        re.findall(r'data-(plot-heights|legend-shown|clipped-ticks|scroll)="([^"]*)"', done.stdout)
    )
    heights = [int(h) for h in seen["plot-heights"].split(",")]
    assert heights and min(heights) >= 300, heights
    for shown in seen["legend-shown"].split(","):
        got, traces = shown.split("/")
        assert got == traces, seen["legend-shown"]
    assert set(seen["clipped-ticks"].split(",")) == {"0"}, seen["clipped-ticks"]
    width, viewport = seen["scroll"].split("/")
    assert int(width) <= int(viewport), seen["scroll"]
    # One click on the last machine's "environment" lands on its column, in view.
    links = re.findall(r'class="env-link" href="#(env-[0-9a-f]{12})"', done.stdout)
    assert len(links) == machines
    clicked = chromium_run(
        chromium,
        tmp_path / "profile",
        "--window-size=1280,2000",
        "--dump-dom",
        page.as_uri() + "#" + links[-1],
    )
    landed = dict(re.findall(r'data-(target|target-box)="([^"]*)"', clicked.stdout))
    assert landed["target"] == links[-1], landed
    left, top, right, bottom = (float(v) for v in landed["target-box"].split(","))
    assert left >= 0 and right <= 1280 and top >= 0 and bottom <= 2000, landed
    shot = tmp_path / f"results-{machines}-machines.png"
    done = chromium_run(
        chromium,
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1280,2400",
        page.as_uri(),
    )
    assert done.returncode == 0 and shot.read_bytes().startswith(b"\x89PNG")
    # And the figures, which the table pushes out of the first screenful: the same
    # page with the tables and environment hidden (a headless screenshot at a
    # fragment comes out blank above the target).
    only = tmp_path / "figures.html"
    only.write_text(html.replace("</head>", FIGURES_ONLY + "</head>"), encoding="utf-8")
    figures = tmp_path / f"results-{machines}-machines-figures.png"
    done = chromium_run(
        chromium,
        tmp_path / "profile",
        f"--screenshot={figures}",
        "--window-size=1280,2400",
        only.as_uri(),
    )
    assert done.returncode == 0 and figures.read_bytes().startswith(b"\x89PNG")
    if os.environ.get("ARCHBENCH_ARTIFACTS"):
        for kept in (shot, figures):
            shutil.copy(kept, Path(os.environ["ARCHBENCH_ARTIFACTS"]) / kept.name)


OVER_TIME_CLICK = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const b = document.body, button = document.querySelector("[data-detail]");
  b.setAttribute("data-figures-drawn",
    document.querySelectorAll(".over-time-figure .main-svg").length);
  b.setAttribute("data-clicked", button.getAttribute("data-detail"));
  button.click();
}, 1000));
</script>"""


def test_a_page_over_many_runs_draws_over_time_and_loads_a_runs_detail_when_clicked(
    tmp_path: Path,
) -> None:
    """30 runs of two machines: the first figure over time is drawn when the page opens,
    and a run's detail, read from the file beside the page when its button is clicked,
    shows its rows and environment."""
    from helpers import result, row

    store = ResultStore(tmp_path / "results")
    for i in range(30):
        for name, arch in (("amd64-trixie", "amd64"), ("riscv64-trixie", "riscv64")):
            r = result(
                name,
                arch,
                arch,
                HOSTILE,
                [row("CS", "signing", [90_000 + 100 * i + k for k in range(8)])],
                emulated=arch == "riscv64",
                run_id=f"20261201T{i:02d}0000Z-{arch[:6]}",
            )
            store.save(
                r.model_copy(
                    update={
                        "harness": r.harness.model_copy(
                            update={"started_at": f"2026-12-{1 + i // 24:02d}T{i % 24:02d}:00:00Z"}
                        )
                    }
                )
            )
    out = tmp_path / "out"
    render_report(ReportRequest(store.root, out, runs=None, plots=False), lambda _line: None)
    page = out / PAGE_FILE
    page.write_text(
        page.read_text(encoding="utf-8").replace("</body>", OVER_TIME_CLICK + "</body>"),
        encoding="utf-8",
    )
    done = chromium_run(find_chromium(), tmp_path / "profile", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, "\n".join(console)
    dom = done.stdout
    seen = dict(re.findall(r'data-(figures-drawn|clicked)="([^"]*)"', dom))
    assert int(seen["figures-drawn"]) >= 1, seen
    legend = set(re.findall(r'class="legendtext"[^>]*>([^<]+)<', dom))
    assert {"amd64-trixie (amd64)", "riscv64-trixie (riscv64, emulated)"} <= legend
    detail = re.search(rf'data-detail-of="{seen["clicked"]}">(.*?)</div>', dom, flags=re.DOTALL)
    assert detail is not None, dom[-3000:]
    shown = detail.group(1)
    assert "<table>" in shown and "blindsig CS signing" in shown and "µs ±" in shown
    assert "results file" in shown and "environment" in shown
    # The hostile CPU model is text in the detail, as everywhere on the page.
    assert "&lt;script&gt;alert(1)&lt;/script&gt; RISC-V host" in shown
    assert "<script>alert(1)</script>" not in dom
