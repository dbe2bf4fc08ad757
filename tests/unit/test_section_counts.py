"""An emulated machine's section: counts beside its emulator times, and † causes named."""

from __future__ import annotations

from helpers import result, row

from archbench.analysis import noise_summary
from archbench.report import ReportOptions, prepare
from archbench.report.chapter import build
from archbench.report.formats import render_markdown_chapter
from archbench.result import Counting, Result, RowNoise

RUN = "20261202T010000Z-abcdef"
COUNTING = {
    "instrument": "qemu-tcg-plugin",
    "qemu": "qemu-riscv64",
    "qemu_version": "qemu-riscv64 version 7.2.22",
    "qemu_package": "1:7.2+dfsg-7+deb12u18",
    "cpu_model": "rv64",
    "plugin_version": "1",
    "plugin_api": 1,
    "calibration": {
        "iterations": 100000,
        "instructions_per_iteration": 2,
        "counts": [200021, 400021],
        "expected_difference": 200000,
        "difference": 200000,
        "overhead": 21,
        "exact": True,
    },
}
LOADED = RowNoise(repetitions=3, load_max=5.2, cpus=2, involuntary_switches=40)


def timed() -> Result:
    rows = [
        # CV far above 5 %: noisy, with the load and preemption the harness read.
        row("CS", "signing", [10_000_000, 14_000_000, 19_000_000]).model_copy(
            update={"noise": LOADED}
        ),
        row("CS", "verifying", [20_000_000, 20_100_000, 20_050_000]),
    ]
    return result("riscv64-trixie", "riscv64", "riscv64", "EPYC", rows, emulated=True, run_id=RUN)


def counted(name: str, arch: str, signing: int, verifying: int, run_id: str = RUN) -> Result:
    base = result(name, arch, arch, "EPYC", [], emulated=arch != "amd64", run_id=run_id)
    rows = (
        row("CS", "signing", [5, 5, 5]).model_copy(update={"instructions": (signing,) * 3}),
        row("CS", "verifying", [5, 5, 5]).model_copy(update={"instructions": (verifying,) * 3}),
    )
    counting = Counting.model_validate({**COUNTING, "qemu": f"qemu-{arch}"})
    harness = base.harness.model_copy(update={"rows": rows, "counting": counting})
    return Result.model_validate(
        {**base.model_dump(), "harness": harness.model_dump(), "metric": "instructions"}
    )


def test_emulated_section_shows_counts_with_the_ratio_to_amd64_and_why() -> None:
    counts = [
        counted("riscv64-trixie", "riscv64", 14_000_000, 9_000_000),
        counted("amd64-trixie", "amd64", 7_000_000, 6_000_000),
    ]
    chapter = build(prepare([timed()]), ReportOptions(), (), counts)
    (section,) = chapter.sections
    table = section.extra_tables[0]
    assert table.header == ("Signature Scheme", "Operation", "Instructions", "× amd64")
    assert [row[2:] for row in table.rows] == [
        ("1 400 000", table.rows[0][3]),
        ("900 000", table.rows[1][3]),
    ]
    ratios = [row[3] for row in table.rows]
    assert [getattr(r, "value", None) for r in ratios] == [2.0, 1.5]
    text = render_markdown_chapter(chapter)
    assert "| CS                 | signing     |      1 400 000 |     2.00× |" in text
    assert "Instructions per operation of riscv64-trixie, riscv64 (median over blocks" in text
    assert "-cpu rv64, QEMU 7.2.22)" in text
    assert "the figure to compare riscv64 by" in text
    # The counts come right after the emulator times, in the same section.
    assert text.index("| CS                 | 10x signing") < text.index(
        "Instructions per operation"
    )


def test_without_an_amd64_count_there_is_no_ratio_column() -> None:
    counts = [counted("riscv64-trixie", "riscv64", 14_000_000, 9_000_000)]
    (section,) = build(prepare([timed()]), ReportOptions(), (), counts).sections
    assert section.extra_tables[0].header == ("Signature Scheme", "Operation", "Instructions")
    # Counts of another run are not this machine's.
    other = [counted("riscv64-trixie", "riscv64", 1, 1, run_id="20261201T000000Z-000000")]
    (section,) = build(prepare([timed()]), ReportOptions(), (), other).sections
    assert section.extra_tables == ()


def test_the_noisy_legend_names_what_the_run_recorded() -> None:
    chapter = build(prepare([timed()]), ReportOptions())
    (section,) = chapter.sections
    assert section.table.noise_cause == (
        "emulation (QEMU user mode on the amd64 host: its times, not the target CPU's) in the "
        "one noisy row; load up to 5.2 on 2 CPUs in the one noisy row; "
        "more than one involuntary context switch per repetition in the one noisy row"
    )
    text = render_markdown_chapter(chapter)
    assert "- † noisy: coefficient of variation above 5%; recorded: emulation (QEMU" in text


def test_noise_summary_counts_rows_per_cause() -> None:
    quiet = RowNoise(repetitions=3, load_max=0.5, cpus=2)
    stolen = RowNoise(repetitions=3, steal=0.12, load_max=3.0, cpus=2)
    assert noise_summary([]) is None
    assert noise_summary([(quiet, None), (stolen, None), (None, "keygen_cap")]) == (
        "key generation (its time varies from key to key) in 1 of 3; steal up to 12 % in 1 of 3; "
        "load up to 3.0 on 2 CPUs in 1 of 3; cause unknown in 1 of 3"
    )
    assert noise_summary([(quiet, None), (quiet, None)], emulated_on="amd64") == (
        "emulation (QEMU user mode on the amd64 host: its times, not the target CPU's) "
        "in all 2 rows"
    )
