"""The generated chapter compiles with a real pdflatex, in both table styles.

Renders our fixture machines (native, emulated, an invalid row, a CPU name
full of LaTeX specials, one machine per other suite) beside the shipped
thesis dataset, with the figures,
writes ``appendix.tex``, ``appendix-standalone.tex`` and
``archbench-appendix.sty``, and runs ``pdflatex`` twice (the second pass
resolves ``\\ref``) on two documents per style: the standalone, and a plain
``report`` (default margins, 10 pt) that only says
``\\usepackage{archbench-appendix}`` and ``\\input{appendix}``, as a thesis
would. Any LaTeX error, an overfull line (``Overfull \\hbox``), an
unresolved reference, a float that drifted past the next section or a
Type 3 font fails the test. Pages are rendered to PNG with ``pdftoppm``
and must not be blank; the paths are printed (``pytest -s``), and
``ARCHBENCH_ARTIFACTS=DIR`` keeps the files in DIR instead of pytest's
temporary directory.

Needs Debian's texlive-latex-base, texlive-latex-recommended,
texlive-latex-extra (tcolorbox), texlive-fonts-recommended and
poppler-utils; skipped with that list when pdflatex or pdftoppm is missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image
import pytest
from helpers import result, row
from suite_rows import ROWS

from archbench.report import ReportOptions, Style, plots, write_reports
from archbench.result import Result
from archbench.upstream import reference

PACKAGES = (
    "texlive-latex-base texlive-latex-recommended texlive-latex-extra "
    "texlive-fonts-recommended poppler-utils"
)

pytestmark = [
    pytest.mark.skipif(
        shutil.which("pdflatex") is None or shutil.which("pdftoppm") is None,
        reason=f"pdflatex or pdftoppm not installed (apt-get install {PACKAGES})",
    ),
    pytest.mark.slow,
]


def machine(name: str, arch: str, cpu: str, *, emulated: bool) -> Result:
    # The blindsig golden rows, but RSA verifying failed, with LaTeX specials in its reason.
    rows = [
        *(r for r in ROWS["blindsig"] if (r.scheme, r.operation) != ("RSA", "verifying")),
        row(
            "RSA",
            "verifying",
            [2_304_000],
            2048,
            valid=False,
            reason="signature 3 of 10 failed to verify: 100% & $5 #1 {x}",
        ),
    ]
    return result(
        name,
        arch,
        "x86_64" if arch == "amd64" else arch,
        cpu,
        rows,
        emulated=emulated,
        cores=4,
        kernel="Linux 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 ~x^y",
    )


PLAIN_REPORT = """\\documentclass{report}
\\usepackage{archbench-appendix}
\\begin{document}
\\input{appendix}
\\end{document}
"""
"""A thesis-like host document: the standard class, default margins, our package only."""


MEASURE = r"""\documentclass{report}
\usepackage{archbench-appendix}
\newsavebox{\measured}
\renewenvironment{archbenchFit}{\begin{lrbox}{\measured}}{\end{lrbox}%
\typeout{archbenchFit natural width \the\wd\measured\space line \the\linewidth}%
\usebox{\measured}}
\begin{document}
\input{appendix}
\end{document}
"""
"""The plain report with archbenchFit replaced by one that logs each table's natural width."""


def natural_widths(directory: Path, chapter: str, prefix: str) -> dict[str, tuple[float, float]]:
    """Each archbenchFit table's label -> (natural width, \\linewidth) in pt, in a 10 pt report."""
    _, log = compile_pdf(directory, "measure")
    widths = re.findall(r"archbenchFit natural width ([\d.]+)pt line ([\d.]+)pt", log)
    labels: list[str] = []
    fitted = False
    for line in chapter.splitlines():
        fitted = fitted or line.startswith("\\begin{archbenchFit}")
        label = re.match(r"\\label\{" + re.escape(prefix) + r"(tab:[^}]*)\}", line)
        if label and fitted:
            labels.append(label.group(1))
            fitted = False
    assert len(labels) == len(widths) > 0
    return {label: (float(w), float(lw)) for label, (w, lw) in zip(labels, widths, strict=True)}


THESIS_LIKE = r"""\documentclass{report}
\usepackage[table]{xcolor}
\usepackage{tcolorbox}
\definecolor{BFH-MediumBlue}{RGB}{0,0,200}
\newtcolorbox{bfhBox}[2][BFH-MediumBlue]{colframe=#1, title={#2 (thesis's own)}}
\newcommand{\setupBfhTabular}{\rowcolors{2}{BFH-MediumBlue!5}{}}
\usepackage{archbench-appendix}
\begin{document}
\input{appendix}
\end{document}
"""
"""A document that defines the thesis's macros itself, as the BFH class does: they win."""


def compile_pdf(directory: Path, document: str) -> tuple[Path, str]:
    """Run pdflatex twice on ``document``.tex; fail with the log's errors. Returns (pdf, log)."""
    for _ in range(2):
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{document}.tex"],
            cwd=directory,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=300,
            check=False,
        )
        log = (directory / f"{document}.log").read_text(errors="replace")
        errors = [line for line in log.splitlines() if line.startswith("!")]
        assert done.returncode == 0 and not errors, (
            f"pdflatex failed ({done.returncode}) on {document}.tex in {directory}:\n"
            + "\n".join(errors or done.stdout.splitlines()[-30:])
        )
    assert "Rerun to get cross-references right" not in log
    assert not re.search(r"Reference `[^']*' on page \d+ undefined", log)
    return directory / f"{document}.pdf", log


def run(directory: Path, *argv: str) -> str:
    return subprocess.run(
        list(argv), cwd=directory, capture_output=True, text=True, timeout=120, check=True
    ).stdout


def floats_stay_in_their_section(chapter: str, aux: str, prefix: str) -> int:
    """Each machine's table is typeset no later than the page where the next section starts.

    ``chapter`` (appendix.tex) says which section a table belongs to; the
    ``.aux`` gives every section's start page (in order) and every label's
    page. Returns how many tables were checked.
    """
    owner: dict[str, int] = {}
    section = -1
    for line in chapter.splitlines():
        if line.startswith("\\section{"):
            section += 1
        label = re.match(r"\\label\{(" + re.escape(prefix) + r"tab:comp-sign-[^}]*)\}", line)
        if label:
            owner[label.group(1)] = section
    starts = [
        int(m.group(1))
        for m in re.finditer(r"\\contentsline \{section\}.*\}\{(\d+)\}\{\}\\protected", aux)
    ]
    assert len(starts) == section + 1, (starts, section)
    pages = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"\\newlabel\{([^}]*)\}\{\{[^}]*\}\{(\d+)\}", aux)
    }
    for name, index in owner.items():
        if index + 1 < len(starts):
            assert pages[name] <= starts[index + 1], (
                f"{name} (section {index + 1}) is on page {pages[name]}, after section "
                f"{index + 2} starts on page {starts[index + 1]}"
            )
    return len(owner)


def not_blank(png: Path) -> float:
    """Share of pixels that are not white: a page with text and tables has several percent."""
    pixels = matplotlib.image.imread(png)
    ink = (pixels[..., :3].mean(axis=2) < 0.9).mean()
    return float(ink)


@pytest.mark.parametrize("style", ["thesis", "booktabs"])
def test_chapter_compiles_standalone_and_input_into_a_plain_report(
    tmp_path: Path, style: Style
) -> None:
    artifacts = os.environ.get("ARCHBENCH_ARTIFACTS")
    out = (Path(artifacts) if artifacts else tmp_path) / f"latex-{style}"
    out.mkdir(parents=True, exist_ok=True)
    thesis, failures = reference.load_reference()
    assert failures == []
    ours = [
        machine("amd64-native", "amd64", "AMD Ryzen 7 PRO 5850U", emulated=False),
        machine("riscv64-emu", "riscv64", "SiFive U74 R&D_rev2 <50%> ~fast~ #1 $", emulated=True),
    ]
    # One machine per other suite, so their parts must fit the line too.
    suites = [
        result(f"box-{i}", "amd64", "x86_64", "AMD Ryzen 7 PRO 5850U", ROWS[suite])
        for i, suite in enumerate(ROWS)
        if suite != "blindsig"
    ]
    everything = [*ours, *suites, *thesis]
    _, listed = plots.write_listed(everything, out)
    assert len(listed) >= 8
    # The plain report also takes a --label-prefix: every \ref must still resolve.
    prefix = "ab:" if style == "booktabs" else ""
    options = ReportOptions(
        style=style, baseline="thesis-amd-ryzen-7", figures=listed, label_prefix=prefix
    )
    write_reports(everything, [], out, options)
    (out / "plain.tex").write_text(PLAIN_REPORT, encoding="utf-8")
    for document in ("appendix-standalone", "plain"):
        pdf, log = compile_pdf(out, document)
        assert pdf.stat().st_size > 10_000
        overfull = re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)
        assert overfull == [], f"{document}: lines wider than \\textwidth by {overfull} pt"
        chapter = (out / "appendix.tex").read_text(encoding="utf-8")
        aux = (out / f"{document}.aux").read_text()
        assert floats_stay_in_their_section(chapter, aux, prefix) == 14
        # The figures' TrueType fonts are embedded in the chapter's PDF. (pdflatex's own
        # OT1 text symbols, µ and ×, come as bitmap Type 3 without cm-super: the host
        # document's fonts, not ours.)
        assert "TrueType" in run(out, "pdffonts", pdf.name)
        # Page 1 (chapter opening) and the page of the thesis's first table.
        first_table = re.search(
            r"\\newlabel\{"
            + re.escape(prefix)
            + r"tab:comp-sign-amd-ryzen-7\}\{\{[^}]*\}\{(\d+)\}",
            aux,
        )
        assert first_table is not None
        for page in (1, int(first_table.group(1))):
            stem = f"{document}-p{page}"
            run(
                out,
                "pdftoppm",
                "-f",
                str(page),
                "-l",
                str(page),
                "-r",
                "50",
                "-png",
                pdf.name,
                stem,
            )
            png = next(out.glob(f"{stem}*.png"))
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert not_blank(png) > 0.01, f"{png} is blank"
            print(f"\npage {page} of {document} ({style}): {png}")
        text = run(out, "pdftotext", "-layout", pdf.name, "-")
        # What a reader sees: escaped specials print literally, the thesis's values as printed.
        # (pdflatex's default OT1 fonts draw _ as a rule and ~ as a raised tilde, which
        # pdftotext reads as a space and "˜".)
        assert "SiFive U74 R&D rev2 <50%> ˜fast˜ #1 $" in text
        assert "100% & $5 #1 {x}" in text
        assert "10 000 ms" in text
        assert "Performance Measurements" in text
        # The thesis's own headings, and its Setup boxes as printed.
        assert "AMD Ryzen 7 PRO 5850U (Notebook)" in text
        assert "Architecture: ARM64" in text
        assert "These performance measurements are only done on one hardware setup." in text
    # CS-vs-RSA tables name the unit in stacked headers: they fit the line unshrunk.
    (out / "measure.tex").write_text(MEASURE, encoding="utf-8")
    chapter = (out / "appendix.tex").read_text(encoding="utf-8")
    widths = natural_widths(out, chapter, prefix)
    cs_vs_rsa = {k: v for k, v in widths.items() if k.startswith("tab:cs-vs-rsa-")}
    assert len(cs_vs_rsa) == 22
    shrunk = {k: w for k, (w, line) in cs_vs_rsa.items() if w > line}
    assert shrunk == {}, f"CS-vs-RSA tables wider than \\linewidth (pt): {shrunk}"
    if style == "thesis":
        (out / "thesislike.tex").write_text(THESIS_LIKE, encoding="utf-8")
        pdf, log = compile_pdf(out, "thesislike")
        assert "Overfull \\hbox" not in log
        assert "Setup (thesis’s own)" in run(out, "pdftotext", pdf.name, "-")
    # The figures' PDFs embed TrueType fonts, never Type 3.
    for stem, _ in listed:
        fig_fonts = run(out, "pdffonts", f"{stem}.pdf")
        assert "TrueType" in fig_fonts and "Type 3" not in fig_fonts, stem
