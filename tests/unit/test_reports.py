"""Reports: appendix row order, medians, number formatting, escaping, golden files.

Golden files live in ``tests/golden/``; regenerate them after an intended
change with ``ARCHBENCH_UPDATE_GOLDEN=1 pytest tests/unit/test_reports.py``
and review the diff.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from archbench.errors import ReportError
from archbench.reports import (
    format_ms,
    latex_escape,
    markdown_escape,
    render_latex,
    render_markdown,
    render_markdown_table,
    results_frame,
    write_reports,
)
from archbench.results import (
    Execution,
    HarnessDocument,
    LoadFailure,
    Parameters,
    Result,
    Row,
    Setup,
    TargetInfo,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
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


def row(
    scheme: str,
    operation: str,
    samples_ns: list[int],
    key_bits: int | None = None,
    valid: bool = True,
    reason: str | None = None,
) -> Row:
    return Row.model_validate(
        {
            "suite": "blindsig",
            "scheme": scheme,
            "key_bits": key_bits,
            "operation": operation,
            "ops_per_block": 10,
            "samples_ns": samples_ns,
            "valid": valid,
            "invalid_reason": reason,
        }
    )


def result(
    name: str,
    arch: str,
    machine: str,
    cpu_model: str,
    rows: list[Row],
    *,
    emulated: bool = False,
    cores: int = 8,
    kernel: str = "Linux 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)",
) -> Result:
    return Result(
        run_id="20261129T224000Z-1a2b3c",
        target=TargetInfo(
            name=name,
            arch=arch,
            platform=f"linux/{arch}",
            base="debian:trixie",
            profile="thesis",
        ),
        execution=Execution(
            emulated=emulated,
            host_arch="amd64",
            host_cpu="AMD EPYC 7763 64-Core Processor",
            qemu_version="8.2.2" if emulated else None,
            image_id="sha256:0123456789ab",
            image_tag=f"archbench/{name}:latest",
        ),
        harness=HarnessDocument(
            format="archbench-harness",
            version=1,
            harness_version="0.1.0",
            started_at="2026-11-29T22:40:00Z",
            duration_s=12.5,
            parameters=Parameters(iterations=10, repetitions=3, rsa_bits=(1024, 2048)),
            setup=Setup(
                cpu_model=cpu_model,
                cores=cores,
                machine=machine,
                kernel=kernel,
                os="Debian GNU/Linux 13 (trixie)",
                packages={
                    "libsodium": "1.0.18-1+b2",
                    "libgcrypt": "1.11.0-7",
                    "libgnunetutil": "0.21.1-1",
                },
                gnunet_version="0.21.1",
            ),
            rows=tuple(rows),
        ),
    )


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


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ARCHBENCH_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text


def table_lines(latex: str, target: str) -> list[str]:
    """The tabular body of one target's section, without the header row."""
    section = latex.split(f"({target})}}", 1)[1].split(r"\end{table}", 1)[0]
    body = section.split(r"\textbf{Speed} \\\hline" + "\n", 1)[1]
    return body.split(r"\end{tabular}", 1)[0].splitlines()


# --- golden files -----------------------------------------------------------


def test_latex_matches_golden(native: Result, emulated: Result, invalid: Result) -> None:
    assert_golden("appendix.tex", render_latex([native, emulated, invalid]))


def test_markdown_matches_golden(
    native: Result, emulated: Result, invalid: Result, failure: LoadFailure
) -> None:
    assert_golden("appendix.md", render_markdown([native, emulated, invalid], [failure]))


# --- statistics ---------------------------------------------------------------


def test_frame_median_odd_and_even_sample_counts(native: Result) -> None:
    frame = results_frame([native])
    by_key = frame.set_index(["operation", "label"])["median_ms"]
    # odd: sorted [204 000, 204 400, 205 000] ns -> middle 204 400 ns
    assert by_key[("key_generation", "CS")] == pytest.approx(0.2044)
    # even: (10 000 123 456 + 10 000 124 456) / 2 = 10 000 123 956 ns
    assert by_key[("key_generation", "RSA 2048 bit")] == pytest.approx(10_000.123956)
    # odd, unsorted input: [900, 1 000, 1 200] ns -> 1 000 ns
    assert by_key[("unblinding", "CS")] == pytest.approx(0.001)


def test_frame_columns_and_types(native: Result, invalid: Result) -> None:
    frame = results_frame([native, invalid])
    assert list(frame.columns) == [
        "run_id",
        "target",
        "suite",
        "scheme",
        "key_bits",
        "label",
        "operation",
        "ops_per_block",
        "n_samples",
        "median_ms",
        "valid",
        "invalid_reason",
    ]
    assert len(frame) == 17 + 4
    # Targets sort by name: amd64-native before arm64-native.
    assert frame["target"].tolist() == ["amd64-native"] * 17 + ["arm64-native"] * 4
    cs = frame[(frame["target"] == "amd64-native") & (frame["operation"] == "signing")]
    assert cs["key_bits"].isna().tolist() == [True, False, False]
    assert cs["key_bits"].iloc[1] == 1024
    assert cs["n_samples"].tolist() == [3, 3, 3]
    assert frame["valid"].sum() == 19
    bad = frame[~frame["valid"]]
    assert bad["invalid_reason"].tolist() == ["unblinded signature 3 of 10 failed to verify"] * 2
    assert frame[frame["valid"]]["invalid_reason"].isna().all()


def test_frame_row_order_is_the_appendix_order(native: Result) -> None:
    frame = results_frame([native])
    ordered = list(zip(frame["label"], frame["operation"], strict=True))
    wording = {
        "key_generation": "10x key generation",
        "r_derivation": "10x r0, r1 derive and R1,R2 calculation",
        "blinding_secret_derivation": "10x derivation of blinding secrets",
        "blinding": "10x blinding",
        "signing": "10x signing",
        "unblinding": "10x unblinding",
        "verifying": "10x verifying",
    }
    assert [(label, wording[op]) for label, op in ordered] == RIGHT_ORDER


def test_empty_frame_keeps_its_columns() -> None:
    frame = results_frame([])
    assert frame.empty
    assert "median_ms" in frame.columns
    assert frame["median_ms"].dtype == "float64"
    assert isinstance(frame.index, pd.RangeIndex)


# --- formatting ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.2044, "0.204 ms"),
        (0.0005001, "0.001 ms"),
        (3.332, "3.332 ms"),
        (999.9994, "999.999 ms"),
        (2684.1234, "2684.123 ms"),
        (9999.9994, "9999.999 ms"),
        # rounds up into five digits, so it is grouped
        (9999.9996, "10 000.000 ms"),
        (10_000.123956, "10 000.124 ms"),
        (174_000.5, "174 000.500 ms"),
        (1_234_567.891, "1 234 567.891 ms"),
    ],
)
def test_format_ms(value: float, expected: str) -> None:
    assert format_ms(value) == expected


def test_format_ms_latex_thin_space() -> None:
    assert format_ms(600_000.0, thousands_sep=r"\,") == r"600\,000.000 ms"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_format_ms_refuses_non_finite(value: float) -> None:
    with pytest.raises(ValueError, match="non-finite"):
        format_ms(value)


def test_latex_escape_every_special_character() -> None:
    assert latex_escape("# $ % & _ { } ~ ^ \\") == (
        r"\# \$ \% \& \_ \{ \} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )
    assert latex_escape("Linux 6.1.0 #1 SMP x86_64\n  GNU/Linux") == (
        r"Linux 6.1.0 \#1 SMP x86\_64 GNU/Linux"
    )


def test_markdown_escape_keeps_words_readable() -> None:
    assert markdown_escape("x86_64 R&D a|b *x* _y_") == r"x86_64 R&D a\|b \*x\* \_y\_"
    assert markdown_escape("&amp; <b>") == r"\&amp; \<b\>"


# --- rendering ----------------------------------------------------------------


def test_latex_rows_and_groups_in_appendix_order(native: Result) -> None:
    lines = table_lines(render_latex([native]), "amd64-native")
    cells = [tuple(c.strip() for c in line.split("&")[:2]) for line in lines if "&" in line]
    assert cells == RIGHT_ORDER
    # An extra \hline line between the five appendix groups, nowhere else.
    separators = [i for i, line in enumerate(lines) if line == r"\hline"]
    assert [lines[i + 1] for i in separators] == [
        r"CS & 10x r0, r1 derive and R1,R2 calculation & 0.444 ms \\\hline",
        r"CS & 10x signing & 0.077 ms \\\hline",
        r"CS & 10x unblinding & 0.001 ms \\\hline",
        r"CS & 10x verifying & 1.358 ms \\\hline",
    ]
    assert r"RSA 2048 bit & 10x key generation & 10\,000.124 ms \\\hline" in lines


def test_only_present_rows_and_groups_are_printed(emulated: Result) -> None:
    lines = table_lines(render_latex([emulated]), "riscv64-emu")
    assert lines == [
        r"CS & 10x key generation & 4.144 ms \\\hline",
        r"RSA 1024 bit & 10x key generation & 2923.457 ms \\\hline",
        r"\hline",
        # two samples: (1 697 000 + 1 698 000) / 2 ns
        r"CS & 10x signing & 1.698 ms \\\hline",
        r"RSA 1024 bit & 10x signing & 1040.000 ms \\\hline",
    ]


def test_setup_box_is_generated_and_escaped(emulated: Result) -> None:
    latex = render_latex([emulated])
    # Emulated: /proc/cpuinfo is the host's, so the title names the emulation.
    assert r"\section{riscv64 on QEMU 8.2.2 (riscv64-emu)}" in latex
    box = latex.split(r"\begin{bfhBox}[BFH-MediumBlue]{Setup}" + "\n", 1)[1]
    box = box.split(r"\end{bfhBox}", 1)[0]
    assert box.splitlines() == [
        r"CPU: none (riscv64 emulated on the host's 4-core SiFive U74 R\&D\_rev2) \\",
        r"Architecture: riscv64 (uname -m: riscv64) \\",
        r"OS: Debian GNU/Linux 13 (trixie) Linux 6.1.0-28-amd64 \#1 SMP PREEMPT\_DYNAMIC "
        r"Debian 6.1.119-1 (2024-11-22) \\",
        r"libsodium:riscv64 version: 1.0.18-1+b2 \\",
        r"libgcrypt:riscv64 version: 1.11.0-7 \\",
        r"libgnunetutil:riscv64 version: 0.21.1-1 \\",
        r"Execution: emulated (QEMU 8.2.2) on amd64 host AMD EPYC 7763 64-Core Processor",
    ]


def test_package_arch_is_debians_name() -> None:
    armv7 = result("armv7-emu", "armv7", "armv7l", "ARMv7 Processor rev 3 (v7l)", [])
    assert r"libgcrypt:armhf version: 1.11.0-7 \\" in render_latex([armv7])


def test_emulated_says_so_in_caption_and_heading(native: Result, emulated: Result) -> None:
    latex = render_latex([native, emulated])
    assert r"\caption{Comparison on riscv64 on QEMU 8.2.2 (emulated on amd64)}" in latex
    assert r"\caption{Comparison on AMD Ryzen 7 PRO 5850U}" in latex
    assert r"\label{tab:comp-sign-riscv64-emu}" in latex
    assert r"\label{tab:comp-sign-amd64-native}" in latex
    markdown = render_markdown([native, emulated])
    assert "## riscv64 on QEMU 8.2.2 — riscv64-emu (emulated on amd64, QEMU 8.2.2)\n" in markdown
    assert "## AMD Ryzen 7 PRO 5850U — amd64-native\n" in markdown
    assert "- Execution: native\n" in markdown


def test_invalid_row_prints_no_number(invalid: Result) -> None:
    lines = table_lines(render_latex([invalid]), "arm64-native")
    assert lines == [
        r"CS & 10x signing & 0.321 ms \\\hline",
        r"RSA 1024 bit & 10x signing & 57.000 ms \\\hline",
        r"RSA 2048 bit & 10x signing & \textit{invalid}\textsuperscript{1} \\\hline",
        r"\hline",
        r"RSA 2048 bit & 10x verifying & \textit{invalid}\textsuperscript{1} \\\hline",
    ]
    latex = render_latex([invalid])
    assert "263.000" not in latex and "15.000" not in latex
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
        assert not re.search(r"\d+\.\d{3} ms", line)
    assert table.endswith("- [1] RSA 2048 bit: unblinded signature 3 of 10 failed to verify")


def test_markdown_table(native: Result) -> None:
    table = render_markdown_table(native).splitlines()
    assert table[0] == (
        "| Signature Scheme   | Operation                               |         Speed |"
    )
    # right-aligned Speed column in GitHub's syntax
    assert table[1].startswith("|:---") and table[1].endswith("---:|")
    assert table[2] == (
        "| CS                 | 10x key generation                      |      0.204 ms |"
    )
    assert table[4] == (
        "| RSA 2048 bit       | 10x key generation                      | 10 000.124 ms |"
    )
    assert len(table) == 2 + 17


def test_load_failure_is_listed_and_the_rest_renders(native: Result, failure: LoadFailure) -> None:
    markdown = render_markdown([native], [failure])
    assert "## AMD Ryzen 7 PRO 5850U — amd64-native" in markdown
    assert "| CS                 | 10x signing" in markdown
    warning = markdown.split("## Warning: results that could not be loaded\n", 1)[1]
    assert (
        "- results/20261129T224000Z-1a2b3c/ppc64le.json: not valid JSON: "
        "Expecting value: line 1 column 1 (char 0)\n"
    ) in warning
    assert "Warning" not in render_markdown([native])


def test_write_reports(
    tmp_path: Path, native: Result, emulated: Result, failure: LoadFailure
) -> None:
    out = tmp_path / "reports"
    paths = write_reports([emulated, native], [failure], out)
    assert paths == [out / "appendix.tex", out / "appendix.md"]
    latex = paths[0].read_text(encoding="utf-8")
    assert latex == render_latex([native, emulated])
    # targets sorted by name whatever the input order
    assert latex.index("(amd64-native)") < latex.index("(riscv64-emu)")
    assert paths[1].read_text(encoding="utf-8") == render_markdown([native, emulated], [failure])
    assert sorted(p.name for p in out.iterdir()) == ["appendix.md", "appendix.tex"]


def test_zero_results_raise_report_error(tmp_path: Path, failure: LoadFailure) -> None:
    with pytest.raises(ReportError, match="run 'invoke bench' first"):
        write_reports([], [], tmp_path)
    with pytest.raises(ReportError, match=r"1 results file\(s\) could not be loaded"):
        write_reports([], [failure], tmp_path)
    with pytest.raises(ReportError, match="invoke bench"):
        render_latex([])
    assert list(tmp_path.iterdir()) == []


def test_duplicate_target_raises_report_error(native: Result) -> None:
    again = native.model_copy(update={"run_id": "20261130T080000Z-abcdef"})
    with pytest.raises(ReportError, match="tab:comp-sign-amd64-native"):
        render_latex([native, again])
