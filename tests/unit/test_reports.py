"""Reports: appendix row order, number formatting, flags, escaping, summaries,
CS-vs-RSA and baseline comparisons, selection, golden files.

Golden files live in ``tests/golden/``; regenerate them after an intended
change with ``ARCHBENCH_UPDATE_GOLDEN=1 pytest tests/unit/test_reports.py``
and review the diff. The fixtures' numbers are the thesis's Ryzen 7 figures
(``/work/shared/seeds/thesis-appendix-performance.tex``), so expected values
can be checked against the thesis by eye.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from helpers import assert_golden, result, row

from archbench.errors import ReportError
from archbench.report import (
    ReportOptions,
    format_ms,
    format_number,
    format_ratio,
    format_speed,
    latex_escape,
    machine_names,
    markdown_escape,
    parse_style,
    parse_unit,
    record,
    render_latex,
    render_markdown,
    render_markdown_table,
    render_standalone,
    select_results,
    write_reports,
)
from archbench.result import (
    LoadFailure,
    Result,
)
from archbench.upstream import reference

MS = 1_000_000  # ns per ms

RIGHT_ORDER = [
    ("CS", "10x key generation"),
    ("RSA 1024 bit", "10x key generation"),
    ("RSA 2048 bit", "10x key generation"),
    ("CS", "10x r0, r1 derive and R1,R2 calculation"),
    ("CS", "10x derivation of blinding secrets"),
    ("CS", "10x blinding"),
    ("RSA 1024 bit", "10x blinding"),
    ("RSA 2048 bit", "10x blinding"),
    ("CS", "10x signing"),
    ("RSA 1024 bit", "10x signing"),
    ("RSA 2048 bit", "10x signing"),
    ("CS", "10x unblinding"),
    ("RSA 1024 bit", "10x unblinding"),
    ("RSA 2048 bit", "10x unblinding"),
    ("CS", "10x verifying"),
    ("RSA 1024 bit", "10x verifying"),
    ("RSA 2048 bit", "10x verifying"),
]


@pytest.fixture
def native() -> Result:
    """amd64, CS + RSA 1024/2048, rows deliberately not in appendix order."""
    rows = [
        row("RSA", "verifying", [2_304_000, 2_300_000, 2_310_000], 2048),
        row("CS", "verifying", [1_358_000, 1_360_000, 1_350_000]),
        row("RSA", "verifying", [876_000, 870_000, 880_000], 1024),
        row("RSA", "signing", [34_000_000, 34_100_000, 33_900_000], 2048),
        row("RSA", "signing", [7_000_000, 7_100_000, 6_900_000], 1024),
        row("CS", "signing", [77_000, 78_000, 76_000]),
        row("RSA", "unblinding", [10_000_000, 10_200_000, 9_900_000], 2048),
        row("RSA", "unblinding", [2_991_000, 2_990_000, 2_995_000], 1024),
        row("CS", "unblinding", [1_000, 1_200, 900]),
        row("RSA", "blinding", [3_012_000, 3_010_000, 3_020_000], 2048),
        row("RSA", "blinding", [1_282_000, 1_280_000, 1_290_000], 1024),
        row("CS", "blinding", [3_332_000, 3_330_000, 3_340_000]),
        row("CS", "blinding_secret_derivation", [94_000, 95_000, 93_000]),
        row("CS", "r_derivation", [444_000, 445_000, 443_000]),
        # Even count: median is the mean of 10 000 123 456 and 10 000 124 456 ns.
        row(
            "RSA",
            "key_generation",
            [9_000_000_000, 10_000_123_456, 10_000_124_456, 12_000_000_000],
            2048,
        ),
        row("RSA", "key_generation", [126_000_000, 125_000_000, 127_000_000], 1024),
        row("CS", "key_generation", [204_400, 204_000, 205_000]),
    ]
    return result("amd64-native", "amd64", "x86_64", "AMD Ryzen 7 PRO 5850U", rows)


@pytest.fixture
def emulated() -> Result:
    """riscv64 under QEMU; the CPU name needs LaTeX escaping."""
    rows = [
        row("RSA", "signing", [1_040_000_000, 1_041_000_000, 1_039_000_000], 1024),
        row("CS", "signing", [1_697_000, 1_698_000]),
        row("CS", "key_generation", [4_144_000, 4_145_000, 4_143_000]),
        row("RSA", "key_generation", [2_923_456_789, 2_923_456_789, 2_923_456_789], 1024),
    ]
    return result(
        "riscv64-emu",
        "riscv64",
        "riscv64",
        "SiFive U74 R&D_rev2",
        rows,
        emulated=True,
        cores=4,
    )


@pytest.fixture
def invalid() -> Result:
    """arm64 whose RSA 2048 signatures failed to verify."""
    reason = "unblinded signature 3 of 10 failed to verify"
    rows = [
        row("CS", "signing", [321_000, 322_000, 320_000]),
        row("RSA", "signing", [57_000_000, 57_500_000, 56_000_000], 1024),
        row("RSA", "signing", [263_000_000, 264_000_000, 262_000_000], 2048, False, reason),
        row("RSA", "verifying", [15_000_000, 15_500_000, 14_000_000], 2048, False, reason),
    ]
    return result("arm64-native", "arm64", "aarch64", "Cortex-A72", rows)


@pytest.fixture
def failure() -> LoadFailure:
    path = Path("results/20261129T224000Z-1a2b3c/ppc64le.json")
    return LoadFailure(path, f"{path}: not valid JSON: Expecting value: line 1 column 1 (char 0)")


def table_lines(latex: str, target: str) -> list[str]:
    """The tabular body of one target's section, without the header row.

    ``target`` is a measured target's name, or a reference section's own
    ``\\section{…}`` line (published sections keep the thesis's titles).
    """
    start = target if target.startswith("\\section{") else f"({target})}}"
    section = latex.split(start, 1)[1].split(r"\end{table}", 1)[0]
    body = section.split(r"\textbf{Speed} \\\hline" + "\n", 1)[1]
    return body.split(r"\end{tabular}", 1)[0].splitlines()


RYZEN = r"\section{AMD Ryzen 7 PRO 5850U (Notebook)}"
"""The thesis's own title of its first section, kept verbatim."""


def section_of(text: str, start: str, end: str = r"\end{table}") -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


@pytest.fixture
def thesis() -> list[Result]:
    """The shipped reference dataset: the thesis's ten machines and its security module."""
    loaded, failures = reference.load_reference()
    assert failures == []
    return loaded


# --- golden files -----------------------------------------------------------


def test_latex_matches_golden(native: Result, emulated: Result, invalid: Result) -> None:
    assert_golden("appendix.tex", render_latex([native, emulated, invalid]))


def test_latex_booktabs_matches_golden(native: Result, emulated: Result, invalid: Result) -> None:
    options = ReportOptions(style="booktabs", baseline="amd64-native")
    assert_golden("appendix-booktabs.tex", render_latex([native, emulated, invalid], options))


def test_standalone_matches_golden() -> None:
    assert_golden("appendix-standalone.tex", render_standalone())


def test_markdown_matches_golden(
    native: Result, emulated: Result, invalid: Result, failure: LoadFailure
) -> None:
    assert_golden("appendix.md", render_markdown([native, emulated, invalid], failures=[failure]))


# --- formatting ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.2044, "0.204 ms"),
        (0.0005001, "0.001 ms"),
        (3.332, "3.332 ms"),
        (4.9994, "4.999 ms"),
        # rounds to 5.000, so it is printed as an integer, as the thesis's "5 ms"
        (4.9996, "5 ms"),
        (5.4, "5 ms"),
        (126.0, "126 ms"),
        (2684.1234, "2684 ms"),
        (9999.4, "9999 ms"),
        # rounds up into five digits, so it is grouped
        (9999.6, "10 000 ms"),
        (10_000.123956, "10 000 ms"),
        (174_000.4, "174 000 ms"),
        (1_234_567.891, "1 234 568 ms"),
    ],
)
def test_format_ms_as_the_thesis_prints(value: float, expected: str) -> None:
    assert format_ms(value) == expected


def test_format_ms_latex_thin_space() -> None:
    assert format_ms(600_000.0, thousands_sep=r"\,") == r"600\,000 ms"


def test_format_speed_units() -> None:
    assert format_speed(1.0, "us") == "1.000 µs"
    assert format_speed(77.0, "us", micro=r"\textmu{}") == r"77 \textmu{}s"
    # CS signing of the Ryzen 7: 7.7 µs per operation -> 1e9 / 7700 = 129 870.13 per second
    assert format_speed(1e9 / 7700, "ops/s") == "129 870 ops/s"
    assert format_number(-3.14159) == "-3.142"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3.870 / 1.282, "3.02"),
        (0.204 / 2684, "0.0000760"),
        (903 / 0.204, "4430"),
        (9.996, "10.0"),
        (10_000.123956 / 0.2044, "48 900"),
        (1.0, "1.00"),
    ],
)
def test_format_ratio_three_significant_digits(value: float, expected: str) -> None:
    assert format_ratio(value) == expected


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_formatting_refuses_non_finite(value: float) -> None:
    with pytest.raises(ValueError, match="non-finite"):
        format_ms(value)
    with pytest.raises(ValueError, match="positive and finite"):
        format_ratio(value)


def test_parse_unit_and_style() -> None:
    assert [parse_unit(u) for u in ("ms", "us", "µs", "ops/s")] == ["ms", "us", "us", "ops/s"]
    assert parse_style("booktabs") == "booktabs"
    with pytest.raises(ReportError, match="ms, us"):
        parse_unit("s")
    with pytest.raises(ReportError, match="thesis, booktabs"):
        parse_style("fancy")


def test_latex_escape_every_special_character() -> None:
    assert latex_escape("# $ % & _ { } ~ ^ \\") == (
        r"\# \$ \% \& \_ \{ \} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )
    assert latex_escape("Linux 6.1.0 #1 SMP x86_64\n  GNU/Linux") == (
        r"Linux 6.1.0 \#1 SMP x86\_64 GNU/Linux"
    )
    assert latex_escape("5 µs × 2 – † ‡ §") == (
        r"5 \textmu{}s \texttimes{} 2 -- \dag{} \ddag{} \S{}"
    )


def test_markdown_escape_keeps_words_readable() -> None:
    assert markdown_escape("x86_64 R&D a|b *x* _y_") == r"x86_64 R&D a\|b \*x\* \_y\_"
    assert markdown_escape("&amp; <b>") == r"\&amp; \<b\>"


# --- machine sections -----------------------------------------------------------


def test_latex_rows_and_groups_in_appendix_order(native: Result) -> None:
    lines = table_lines(render_latex([native]), "amd64-native")
    cells = [tuple(c.strip() for c in line.split("&")[:2]) for line in lines if "&" in line]
    assert cells == RIGHT_ORDER
    # An extra \hline line between the five appendix groups, nowhere else.
    separators = [i for i, line in enumerate(lines) if line == r"\hline"]
    assert [lines[i + 1] for i in separators] == [
        r"CS & 10x r0, r1 derive and R1,R2 calculation & 0.444 ms \\\hline",
        r"CS & 10x signing & 0.077 ms \\\hline",
        # [900, 1000, 1200] ns: CV 0.148 > 0.05, so the row is marked noisy
        r"CS & 10x unblinding & 0.001 ms\textsuperscript{\dag} \\\hline",
        r"CS & 10x verifying & 1.358 ms \\\hline",
    ]
    # median of an even count: (10 000 123 456 + 10 000 124 456) / 2 ns = 10 000.124 ms
    assert r"RSA 2048 bit & 10x key generation & 10\,000 ms\textsuperscript{\dag} \\\hline" in lines
    assert r"RSA 1024 bit & 10x signing & 7 ms \\\hline" in lines


def test_flagged_rows_carry_a_mark_and_the_table_a_legend(native: Result) -> None:
    table = section_of(render_latex([native]), "(amd64-native)}")
    assert table.count(r"\textsuperscript{\dag}") == 2 + 1  # two rows, one legend line
    assert r"\textsuperscript{\dag}\,noisy: coefficient of variation above 5\%" in table
    markdown = render_markdown_table(native)
    assert re.search(r"\| 10x unblinding +\| +0\.001 ms† \|", markdown)
    # The fixture's rows carry no noise readings: the legend says so.
    assert markdown.endswith(
        "- † noisy: coefficient of variation above 5%; recorded: cause unknown in all 2 rows"
    )


def test_single_sample_and_near_resolution_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    once = result(
        "once",
        "amd64",
        "x86_64",
        "AMD Ryzen 7 PRO 5850U",
        [row("CS", "signing", [77_000]), row("CS", "unblinding", [1_000, 1_000, 1_000])],
    )
    # The harness reports clock_getres; a 20 ns tick makes 1 000 ns blocks 50 ticks < 100.
    monkeypatch.setattr(record, "clock_resolution_ns", lambda _r: 20.0)
    lines = table_lines(render_latex([once]), "once")
    assert lines == [
        r"CS & 10x signing & 0.077 ms\textsuperscript{\S} \\\hline",
        r"\hline",
        r"CS & 10x unblinding & 0.001 ms\textsuperscript{\ddag} \\\hline",
    ]


def test_reference_rows_print_the_thesis_text_and_no_single_sample_flag(
    thesis: list[Result],
) -> None:
    latex = render_latex(thesis[:1])
    lines = table_lines(latex, RYZEN)
    assert r"RSA 4096 bit & 10x key generation & 10 000 ms \\\hline" in lines
    assert r"CS & 10x unblinding & 0.001 ms \\\hline" in lines
    assert r"\S" not in section_of(latex, RYZEN)
    arm = next(r for r in thesis if r.target.name == "thesis-arm64")
    assert r"CS & 10x verifying & 11ms \\\hline" in table_lines(
        render_latex([arm]), r"\section{arm64}"
    )


def test_reference_setup_box_is_the_thesis_box(thesis: list[Result]) -> None:
    latex = render_latex(thesis[:1])
    box = section_of(latex, r"\begin{bfhBox}[BFH-MediumBlue]{Setup}" + "\n", r"\end{bfhBox}")
    # Verbatim, as the seed prints it (\raggedright only lets long lines break).
    assert box.splitlines() == [
        r"\raggedright",
        r"CPU: 8-core AMD Ryzen 7 PRO 5850U \\",
        r"Architecture: amd64 \\",
        r"OS: Ubuntu 21.10 Linux 5.13.0-25-generic \#26-Ubuntu SMP Fri Jan 7 15:48:31 UTC 2022 "
        r"x86\_64 x86\_64 x86\_64 GNU/Linux \\",
        r"libsodium:amd64 version: 1.0.18-1build1 \\",
        r"libgcrypt:amd64 version: 1.8.7-5ubuntu2",
    ]
    assert RYZEN in latex
    # Our annotation sits beside the box, marked as ours, with the source.
    after = section_of(latex, r"\end{bfhBox}" + "\n", "\n")
    assert after.startswith(
        r"\archbenchNote{Source: thesis-appendix-performance.tex, tab:comp-sign-amd-ryzen-7 "
        "(published figures). Figures as printed"
    )
    assert (
        r"Detailed comparison of each operation can be found in table "
        r"\ref{tab:comp-sign-amd-ryzen-7}." in latex
    )


def test_security_module_table_is_headed_test(thesis: list[Result]) -> None:
    module = next(r for r in thesis if r.target.name == "thesis-security-module")
    latex = render_latex([module])
    assert r"\textbf{Signature Scheme} & \textbf{Test} & \textbf{Speed}" in latex
    body = section_of(latex, r"\textbf{Speed} \\\hline" + "\n", r"\end{tabular}").splitlines()
    # The scheme as the thesis printed it (archbench's note says it keeps 4092 so).
    assert body[4] == r"RSA 4092 & 100 sequential signature operations & 1811 ms \\\hline"
    assert "| RSA 4092 " in render_markdown([module])
    assert not any("RSA 4092 bit" in line for line in body)
    # 100 parallel and 800 parallel are separate groups, as printed
    assert [body[i + 1] for i, line in enumerate(body) if line == r"\hline"] == [
        r"CS & 100 parallel signature operations & 14 ms \\\hline",
        r"CS & 800 parallel signature operations & 19 ms \\\hline",
    ]


def test_only_present_rows_and_groups_are_printed(emulated: Result) -> None:
    lines = table_lines(render_latex([emulated]), "riscv64-emu")
    assert lines == [
        r"CS & 10x key generation & 4.144 ms \\\hline",
        r"RSA 1024 bit & 10x key generation & 2923 ms \\\hline",
        r"\hline",
        # two samples: (1 697 000 + 1 698 000) / 2 ns
        r"CS & 10x signing & 1.698 ms \\\hline",
        r"RSA 1024 bit & 10x signing & 1040 ms \\\hline",
    ]


def test_setup_box_is_generated_and_escaped(emulated: Result) -> None:
    latex = render_latex([emulated])
    # Emulated: /proc/cpuinfo is the host's, so the title names the emulation.
    assert r"\section{riscv64 on QEMU 8.2.2 (riscv64-emu)}" in latex
    box = section_of(latex, r"\begin{bfhBox}[BFH-MediumBlue]{Setup}" + "\n", r"\end{bfhBox}")
    assert box.splitlines() == [
        r"\raggedright",
        r"CPU: 4-core SiFive U74 R\&D\_rev2 (the host's CPU; riscv64 emulated by QEMU) \\",
        r"Architecture: riscv64 (uname -m: riscv64) \\",
        r"OS: Debian GNU/Linux 13 (trixie) Linux 6.1.0-28-amd64 \#1 SMP PREEMPT\_DYNAMIC "
        r"Debian 6.1.119-1 (2024-11-22) \\",
        r"libsodium:riscv64 version: 1.0.18-1+b2 \\",
        r"libgcrypt:riscv64 version: 1.11.0-7 \\",
        r"libgnunetutil:riscv64 version: 0.21.1-1 (Debian package) \\",
        r"Execution: emulated (QEMU 8.2.2) on amd64 host AMD EPYC 7763 64-Core Processor",
    ]


def test_package_arch_is_debians_name() -> None:
    armv7 = result(
        "armv7-emu",
        "armv7",
        "armv7l",
        "ARMv7 Processor rev 3 (v7l)",
        [row("CS", "signing", [481_000, 482_000, 480_000])],
    )
    assert r"libgcrypt:armhf version: 1.11.0-7 \\" in render_latex([armv7])


def test_emulated_says_so_in_caption_and_heading(native: Result, emulated: Result) -> None:
    latex = render_latex([native, emulated])
    assert r"\caption{Comparison on riscv64 on QEMU 8.2.2 (emulated on amd64)}" in latex
    assert r"\caption{Comparison on AMD Ryzen 7 PRO 5850U}" in latex
    assert r"\label{tab:comp-sign-riscv64-emu}" in latex
    assert r"\label{tab:comp-sign-amd64-native}" in latex
    markdown = render_markdown([native, emulated])
    # Headings name the GNUnet version (Debian's package here).
    assert "## riscv64 on QEMU 8.2.2 — riscv64-emu, GNUnet 0.21.1 (emulated on amd64)\n" in markdown
    assert "## AMD Ryzen 7 PRO 5850U — amd64-native, GNUnet 0.21.1\n" in markdown
    assert "- Execution: native\n" in markdown


def test_invalid_row_prints_no_number(invalid: Result) -> None:
    lines = table_lines(render_latex([invalid]), "arm64-native")
    assert lines == [
        r"CS & 10x signing & 0.321 ms \\\hline",
        r"RSA 1024 bit & 10x signing & 57 ms \\\hline",
        r"RSA 2048 bit & 10x signing & \textit{invalid}\textsuperscript{1} \\\hline",
        r"\hline",
        r"RSA 2048 bit & 10x verifying & \textit{invalid}\textsuperscript{1} \\\hline",
    ]
    latex = render_latex([invalid])
    assert "263" not in latex and "15 ms" not in latex
    assert (
        r"\textsuperscript{1}\,\textit{invalid}: RSA 2048 bit: "
        "unblinded signature 3 of 10 failed to verify\n" in latex
    )
    table = render_markdown_table(invalid)
    invalid_rows = [line for line in table.splitlines() if line.startswith("| RSA 2048 bit")]
    assert len(invalid_rows) == 2
    for line in invalid_rows:
        speed = line.rsplit("|", 2)[1].strip()
        assert speed == "invalid [1]"
        assert not re.search(r"\d ms", line)
    assert table.endswith("- [1] RSA 2048 bit: unblinded signature 3 of 10 failed to verify")


def test_markdown_table(native: Result) -> None:
    table = render_markdown_table(native).splitlines()
    assert table[0] == (
        "| Signature Scheme   | Operation                               |      Speed |"
    )
    # right-aligned Speed column in GitHub's syntax
    assert table[1].startswith("|:---") and table[1].endswith("---:|")
    assert table[2] == (
        "| CS                 | 10x key generation                      |   0.204 ms |"
    )
    assert table[4] == (
        "| RSA 2048 bit       | 10x key generation                      | 10 000 ms† |"
    )
    assert len([line for line in table if line.startswith("| ")]) == 1 + 17


@pytest.mark.parametrize(
    ("unit", "latex", "markdown"),
    [
        ("us", r"CS & 10x signing & 77 \textmu{}s \\\hline", "| CS                 | 10x signing"),
        # 1e9 / 7 700 ns per operation
        ("ops/s", r"CS & signing & 129\,870 ops/s \\\hline", "| CS                 | signing"),
    ],
)
def test_units(native: Result, unit: str, latex: str, markdown: str) -> None:
    options = ReportOptions(unit=parse_unit(unit))
    assert latex in table_lines(render_latex([native], options), "amd64-native")
    assert markdown in render_markdown([native], options=options)


def test_reference_rows_are_recomputed_in_other_units(thesis: list[Result]) -> None:
    lines = table_lines(render_latex(thesis[:1], ReportOptions(unit="us")), RYZEN)
    # "10 000 ms" carries one significant digit, "0.001 ms" one: no invented zeros or decimals.
    assert r"RSA 4096 bit & 10x key generation & 1e+07 \textmu{}s \\\hline" in lines
    assert r"CS & 10x unblinding & 1 \textmu{}s \\\hline" in lines
    assert r"CS & 10x key generation & 204 \textmu{}s \\\hline" in lines


# --- summary, CS vs RSA, comparison ------------------------------------------------


def test_summary_keeps_emulated_machines_apart(
    native: Result, emulated: Result, invalid: Result
) -> None:
    latex = render_latex([native, emulated, invalid])
    hardware = section_of(
        latex, r"\section{Summary across machines}", r"\label{tab:summary-blindsig-native-1}"
    )
    assert r"\rotatebox{90}{amd64-native (amd64, Debian 13, GNUnet 0.21.1)}" in hardware
    assert r"\rotatebox{90}{arm64-native (arm64, Debian 13, GNUnet 0.21.1)}" in hardware
    assert "riscv64" not in hardware
    assert "signing & CS & 0.077 & 0.321 \\\\\\hline" in hardware
    assert " & RSA 2048 bit & 34 & \\textit{invalid} \\\\\\hline" in hardware
    # a row only one machine has shows "--" for the other
    assert "key generation & CS & 0.204 & -- \\\\\\hline" in hardware
    emulated_table = section_of(
        latex, r"\label{tab:summary-blindsig-native-1}", r"\label{tab:summary-blindsig-emulated-1}"
    )
    assert "QEMU user emulation: not comparable with hardware" in emulated_table
    assert "signing & CS & 1.698 \\\\\\hline" in emulated_table
    assert "amd64-native" not in emulated_table


def test_summary_splits_many_machines_into_balanced_tables(thesis: list[Result]) -> None:
    latex = render_latex(thesis)
    assert "part 1 of 2" in latex and "part 2 of 2" in latex and "part 3" not in latex
    first = section_of(
        latex, r"\section{Summary across machines}", r"\label{tab:summary-blindsig-native-1}"
    )
    assert first.count(r"\rotatebox{90}") == 5  # 10 machines: 5 + 5
    assert "key generation & CS & 0.204 & 1.05 & 0.442 & 0.606 & 0.53" in first
    assert " & RSA 4096 bit & 10\\,000 & 11\\,000 & 11\\,000 & 40\\,000 & 37\\,000" in first


def test_cs_vs_rsa_sums_the_three_cs_blinding_operations(thesis: list[Result]) -> None:
    latex = render_latex(thesis[:1], ReportOptions(compare_bits=(1024, 3072)))
    table = section_of(latex, r"\section{CS compared with RSA}", r"\end{table}")
    # The unit stands in the stacked headers, not in every cell: the table fits the line.
    assert (
        r"\textbf{Operation} & \textbf{\shortstack[r]{CS\\(ms)}} & "
        r"\textbf{\shortstack[r]{RSA\\1024 bit\\(ms)}} & \textbf{\shortstack[r]{CS\\speedup}} & "
        r"\textbf{\shortstack[r]{RSA\\3072 bit\\(ms)}} & \textbf{\shortstack[r]{CS\\speedup}}"
    ) in table
    # the thesis: 0.444 + 0.094 + 3.332 = 3.870 ms (four digits); speedups RSA / CS keep the
    # digits of the coarser figure: 1.282 / 3.870 = 0.3313, 5 / 3.870 = 1 ("5 ms": one digit)
    assert (
        r"derive R0, R1 \& blinding & 3.870 & 1.282 & 0.3313\texttimes{} & 5 & "
        r"1\texttimes{} \\\hline" in table
    )
    # 126 / 0.204 = 617.6 and 2684 / 0.204 = 13 157: three digits, as "0.204 ms" has
    assert (
        r"key generation & 0.204 & 126 & 618\texttimes{} & 2684 & "
        r"13\,200\texttimes{} \\\hline" in table
    )
    markdown = render_markdown(thesis[:1], options=ReportOptions(compare_bits=(1024, 3072)))
    assert re.search(
        r"\| Operation +\| +CS \(ms\) \| +RSA 1024 bit \(ms\) \| +CS speedup \| "
        r"+RSA 3072 bit \(ms\) \| +CS speedup \|",
        markdown,
    )
    assert "RSA 2048" not in table and "RSA 4096" not in table


def test_speedup_over_rsa_2048_and_baseline_ratios(
    native: Result, emulated: Result, thesis: list[Result]
) -> None:
    options = ReportOptions(baseline="thesis-amd-ryzen-7")
    markdown = render_markdown([native, emulated, *thesis], options=options)
    speedup = markdown.split("**CS speedup over RSA 2048 bit per machine", 1)[1]
    # key generation 10 000.124 / 0.2044 ms, derive 3.012 / 3.870, signing 34 / 0.077,
    # unblinding 10 / 0.001, verifying 2.304 / 1.358: three significant digits (no interval)
    assert re.search(
        r"\| amd64-native \(amd64, Debian 13, GNUnet 0\.21\.1\) +\| +48 900× \| +0\.778× \| +442× "
        r"\| +10 000× \| +1\.70× \|",
        speedup,
    )
    # thesis Ryzen 7: 903 / 0.204 = 4426, to the three digits both figures have
    assert re.search(r"\| thesis-amd-ryzen-7 \(amd64\) +\| +4430× \|", speedup)
    native_part = speedup.split("**", 1)[0]
    assert "riscv64-emu" not in native_part
    relative = markdown.split("**Time of blind signatures relative to thesis-amd-ryzen-7", 1)[1]
    header = relative.split("\n")[2]
    # the baseline is the first machine column
    assert re.match(
        r"\| Operation +\| Scheme +\| +thesis-amd-ryzen-7 \(amd64\) \| +amd64-native", header
    )
    signing = next(line for line in relative.splitlines() if line.startswith("| signing"))
    # amd64-native 0.077 / 0.077, thesis i7 0.405 / 0.077 = 5.26: "0.077 ms" has two digits
    assert re.match(r"\| signing +\| CS +\| +1\.0× \| +1\.0× \| +5\.3× \|", signing)


def test_baseline_must_name_one_native_machine(native: Result, emulated: Result) -> None:
    with pytest.raises(ReportError, match=r"did you mean 'amd64-native'\?"):
        render_latex([native, emulated], ReportOptions(baseline="amd64-nativ"))
    with pytest.raises(ReportError, match="ran under QEMU emulation"):
        render_latex([native, emulated], ReportOptions(baseline="riscv64-emu"))


# --- selection, several runs, files ----------------------------------------------------


def test_select_by_target_arch_and_suite(
    native: Result, emulated: Result, thesis: list[Result]
) -> None:
    everything = [native, emulated, *thesis]
    assert [r.target.name for r in select_results(everything, archs=["riscv64"])] == [
        "riscv64-emu",
        "thesis-riscv64",
    ]
    assert [r.target.name for r in select_results(everything, targets=["amd64-native"])] == [
        "amd64-native"
    ]
    module = select_results(everything, suites=["security-module"])
    assert [r.target.name for r in module] == ["thesis-security-module"]
    assert len(module[0].harness.rows) == 15
    with pytest.raises(ReportError, match=r"architectures: amd64, .*riscv64"):
        select_results(everything, archs=["armv7"], targets=["amd64-native"])


def test_one_target_in_several_runs_gets_one_section_per_run(native: Result) -> None:
    again = native.model_copy(update={"run_id": "20261130T080000Z-abcdef"})
    names = [name for name, _ in machine_names([again, native])]
    assert names == [
        "amd64-native@20261129T224000Z-1a2b3c",
        "amd64-native@20261130T080000Z-abcdef",
    ]
    latex = render_latex([native, again])
    assert r"\label{tab:comp-sign-amd64-native-20261129t224000z-1a2b3c}" in latex
    assert r"\label{tab:comp-sign-amd64-native-20261130t080000z-abcdef}" in latex


def test_load_failure_is_listed_and_the_rest_renders(native: Result, failure: LoadFailure) -> None:
    markdown = render_markdown([native], failures=[failure])
    assert "## AMD Ryzen 7 PRO 5850U — amd64-native" in markdown
    assert "| CS                 | 10x signing" in markdown
    warning = markdown.split("## Warning: results that could not be loaded\n", 1)[1]
    assert (
        "- results/20261129T224000Z-1a2b3c/ppc64le.json: not valid JSON: "
        "Expecting value: line 1 column 1 (char 0)\n"
    ) in warning
    assert "Warning" not in render_markdown([native])
    latex = render_latex([native], failures=[failure])
    assert (
        "% skipped results/20261129T224000Z-1a2b3c/ppc64le.json: not valid JSON: "
        "Expecting value: line 1 column 1 (char 0)\n"
    ) in latex


def test_write_reports(
    tmp_path: Path, native: Result, emulated: Result, failure: LoadFailure
) -> None:
    out = tmp_path / "reports"
    paths = write_reports([emulated, native], [failure], out)
    assert paths == [
        out / "appendix.tex",
        out / "appendix-standalone.tex",
        out / "appendix.md",
        out / "archbench-appendix.sty",
    ]
    latex = paths[0].read_text(encoding="utf-8")
    assert latex == render_latex([native, emulated], failures=[failure])
    # targets sorted by name whatever the input order
    assert latex.index("(amd64-native)") < latex.index("(riscv64-emu)")
    assert r"\input{appendix}" in paths[1].read_text(encoding="utf-8")
    assert paths[2].read_text(encoding="utf-8") == render_markdown(
        [native, emulated], failures=[failure]
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "appendix-standalone.tex",
        "appendix.md",
        "appendix.tex",
        "archbench-appendix.sty",
    ]
    assert r"\ProvidesPackage{archbench-appendix}" in paths[3].read_text(encoding="utf-8")


def test_zero_results_raise_report_error(tmp_path: Path, failure: LoadFailure) -> None:
    with pytest.raises(ReportError, match="run 'invoke bench' first"):
        write_reports([], [], tmp_path)
    with pytest.raises(ReportError, match=r"1 results file\(s\) could not be loaded"):
        write_reports([], [failure], tmp_path)
    with pytest.raises(ReportError, match="invoke bench"):
        render_latex([])
    assert list(tmp_path.iterdir()) == []


def test_emulation_slowdown_prefers_a_native_run_of_the_same_arch() -> None:
    native_amd64 = result("amd64-n", "amd64", "x86_64", "Host CPU", [row("CS", "signing", [100])])
    emulated = result(
        "arm64-e", "arm64", "aarch64", "Host CPU", [row("CS", "signing", [3_000])], emulated=True
    )
    markdown = render_markdown([native_amd64, emulated])
    assert "(arm64-e against amd64-n)" in markdown
    assert "30.0×" in markdown
    native_arm64 = result("arm64-n", "arm64", "aarch64", "Cortex", [row("CS", "signing", [200])])
    markdown = render_markdown([native_amd64, native_arm64, emulated])
    assert "(arm64-e against arm64-n)" in markdown and "15.0×" in markdown
    assert "Emulation slowdown" not in render_markdown([native_amd64, native_arm64])


def test_repeated_runs_show_within_and_between_run_spread() -> None:
    merged = result("amd64-n", "amd64", "x86_64", "Host CPU", [])
    rows = (
        row("CS", "signing", [100, 100, 110, 130]).model_copy(
            update={"run_sizes": (2, 2), "run_medians_ns": (100.0, 120.0)}
        ),
    )
    merged = merged.model_copy(update={"harness": merged.harness.model_copy(update={"rows": rows})})
    markdown = render_markdown([merged])
    assert "## Repeatability" in markdown and "amd64-n: 2 runs" in markdown
    # within: median of (0, 11.8 %) = 5.9 %; between: 14.142 / 110 = 12.9 %
    assert "5.9 % / 12.9 %" in markdown
    assert "Repeatability" not in render_markdown([result("x", "amd64", "x86_64", "C", [])])
