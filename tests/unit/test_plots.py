"""Bar charts: files, number of bars, log scale, emulated bars hatched."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from helpers import result, row
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from archbench.analysis import stats
from archbench.report import Unit, plots
from archbench.result import Result
from archbench.upstream import reference


@pytest.fixture
def machines() -> list[Result]:
    reason = "unblinded signature 3 of 10 failed to verify"
    return [
        result(
            "amd64-native",
            "amd64",
            "x86_64",
            "AMD Ryzen 7 PRO 5850U",
            [
                row("CS", "signing", [77_000, 78_000, 76_000]),
                row("RSA", "signing", [7_000_000, 7_100_000, 6_900_000], 1024),
                row("RSA", "signing", [34_000_000, 34_100_000, 33_900_000], 2048),
                row("CS", "key_generation", [204_000, 205_000, 204_400]),
            ],
        ),
        result(
            "arm64-native",
            "arm64",
            "aarch64",
            "Cortex-A72",
            [
                row("CS", "signing", [321_000, 322_000, 320_000]),
                row("RSA", "signing", [263_000_000, 264_000_000], 2048, False, reason),
            ],
        ),
        result(
            "riscv64-emu",
            "riscv64",
            "riscv64",
            "AMD EPYC 7763 64-Core Processor",
            [
                row("CS", "signing", [1_697_000, 1_698_000]),
                row("RSA", "signing", [1_040_000_000, 1_041_000_000], 1024),
            ],
            emulated=True,
        ),
    ]


def bars(fig: Figure) -> list[Rectangle]:
    """Every bar of the chart's axes, series by series."""
    return [patch for container in fig.axes[0].containers for patch in container]


def test_operation_chart_has_one_bar_per_valid_row(machines: list[Result]) -> None:
    fig = plots.operation_figure(machines, "signing")
    assert fig is not None
    drawn = bars(fig)
    # amd64: CS, RSA 1024, RSA 2048; arm64: CS (RSA 2048 invalid); riscv64: CS, RSA 1024
    assert len(drawn) == 6
    heights = sorted(b.get_height() for b in drawn)
    assert heights == pytest.approx([0.077, 0.321, 1.6975, 7.0, 34.0, 1040.5])
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "amd64-native",
        "arm64-native",
        "riscv64-emu (emulated)",
    ]
    hatched = [b for b in drawn if b.get_hatch()]
    assert sorted(b.get_height() for b in hatched) == pytest.approx([1.6975, 1040.5])
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["CS", "RSA 1024 bit", "RSA 2048 bit", "emulated (QEMU): not comparable"]
    assert plots.operation_figure(machines, "verifying") is None


def test_operation_chart_in_operations_per_second(machines: list[Result]) -> None:
    fig = plots.operation_figure(machines[:1], "signing", unit="ops/s")
    assert fig is not None
    # 1e9 / 7 700 ns, 1e9 / 700 000 ns, 1e9 / 3 400 000 ns per operation
    assert [b.get_height() for b in bars(fig)] == pytest.approx(
        [1e9 / 7_700, 1e9 / 700_000, 1e9 / 3_400_000]
    )


def test_cs_vs_rsa_chart_of_the_thesis() -> None:
    loaded, _ = reference.load_reference()
    fig = plots.cs_vs_rsa_figure(loaded)
    assert fig is not None
    drawn = bars(fig)
    assert len(drawn) == 10 * 5  # ten machines (not the security module) x five rows
    # Ryzen 7, the first machine: key generation 903 / 0.204 ms, derive 3.012 / 3.870 ms
    assert drawn[0].get_height() == pytest.approx(903 / 0.204)
    assert drawn[10].get_height() == pytest.approx(3.012 / (0.444 + 0.094 + 3.332))
    assert not any(b.get_hatch() for b in drawn)


@pytest.mark.slow
def test_write_plots(tmp_path: Path, machines: list[Result]) -> None:
    paths = plots.write_plots(machines, tmp_path)
    assert [p.name for p in paths] == [
        "fig-key-generation.png",
        "fig-key-generation.pdf",
        "fig-signing.png",
        "fig-signing.pdf",
        "fig-cs-vs-rsa-2048.png",
        "fig-cs-vs-rsa-2048.pdf",
    ]
    for path in paths:
        assert path.stat().st_size > 1000
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"


TEXTWIDTHS_PT = (345.0, 360.0, 390.0)
"""\\textwidth of the standard classes at 10, 11 and 12 pt."""


@pytest.mark.slow
def test_figures_are_sized_for_textwidth_with_fonts_of_8_pt(machines: list[Result]) -> None:
    shipped, _ = reference.load_reference()
    charts = plots.figures([*machines, *shipped])
    assert len(charts) >= 8
    for stem, fig in charts:
        width_in, _ = fig.get_size_inches()
        assert width_in == plots.FIGURE_WIDTH_IN, stem
        fig.canvas.draw()  # ticks and legends exist only once drawn
        sizes = [
            float(t.get_fontsize())
            for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip()
        ]
        assert sizes and min(sizes) >= plots.MIN_FONT_PT, stem
        # At width=\linewidth the figure is scaled by textwidth / its width.
        for textwidth in TEXTWIDTHS_PT:
            assert min(sizes) * textwidth / (width_in * 72) >= 8.0, (stem, textwidth)


def test_log_axes_start_a_decade_below_the_smallest_bar(machines: list[Result]) -> None:
    assert plots.log_bottom([0.001, 5.0]) == pytest.approx(1e-4)
    assert plots.log_bottom([0.0035, 12.0]) == pytest.approx(1e-4)
    assert plots.log_bottom([0.01]) == pytest.approx(1e-3)
    with pytest.raises(ValueError, match="no positive value"):
        plots.log_bottom([0.0])
    fig = plots.operation_figure(machines, "signing")
    assert fig is not None
    smallest = min(b.get_height() for b in bars(fig))  # CS on arm64: 0.077 ms
    assert fig.axes[0].get_ylim()[0] == pytest.approx(plots.log_bottom([smallest])) == 0.001


@pytest.mark.slow
def test_pdfs_embed_truetype_not_type3(tmp_path: Path, machines: list[Result]) -> None:
    paths, listed = plots.write_listed(machines, tmp_path)
    assert [stem for stem, _ in listed] == [p.stem for p in paths if p.suffix == ".pdf"]
    assert dict(listed)["fig-signing"] == "10x signing"
    pdf = (tmp_path / "fig-signing.pdf").read_bytes()
    # pdf.fonttype 42: a TrueType font program is embedded (FontFile2); Type 3 would
    # draw glyphs as procedures (/Subtype /Type3).
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf


def test_bars_with_a_95_percent_interval_carry_error_bars() -> None:
    """A row of 11 samples has an order-statistic interval; the bar's error bar spans it.

    In ms per 10 operations: the interval of the blocks (ns per 10 operations) / 1e6;
    in ops/s the bounds swap (1e9 / ns per operation).
    """
    samples = [77_000 + 150 * i * i for i in range(11)]
    low, high = stats.median_interval(samples) or (0.0, 0.0)
    assert low < statistics.median(samples) < high
    many = result("amd64-native", "amd64", "x86_64", "AMD Ryzen 7", [row("CS", "signing", samples)])
    few = result("arm64-native", "arm64", "aarch64", "Cortex-A72", [row("CS", "signing", [1, 2])])
    cases: list[tuple[Unit, tuple[float, float]]] = [
        ("ms", (low / 1e6, high / 1e6)),
        ("ops/s", (1e9 * 10 / high, 1e9 * 10 / low)),
    ]
    for unit, expected in cases:
        fig = plots.operation_figure([many, few], "signing", unit=unit)
        assert fig is not None
        errorbars = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
        assert len(errorbars) == 1  # the 2-sample row has no interval, so no error bar
        segment = errorbars[0].lines[2][0].get_segments()[0]
        assert sorted(y for _, y in segment) == pytest.approx(expected)
