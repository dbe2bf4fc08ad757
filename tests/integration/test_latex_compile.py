"""The generated chapter compiles with a real pdflatex, in both table styles.

Renders our fixture machines (native, emulated, an invalid row, a CPU name
full of LaTeX specials) beside the shipped thesis dataset, writes
``appendix.tex`` and ``appendix-standalone.tex`` and runs ``pdflatex`` twice
(the second pass resolves ``\\ref``). Any LaTeX error fails the test with
the log's error lines. Page 1 is rendered to PNG with ``pdftoppm`` so a
person can look; the path is printed (``pytest -s``), and
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

import pytest
from helpers import result, row

from archbench import reference
from archbench.reports import ReportOptions, Style, write_reports
from archbench.results import Result

PACKAGES = (
    "texlive-latex-base texlive-latex-recommended texlive-latex-extra "
    "texlive-fonts-recommended poppler-utils"
)

pytestmark = pytest.mark.skipif(
    shutil.which("pdflatex") is None or shutil.which("pdftoppm") is None,
    reason=f"pdflatex or pdftoppm not installed (apt-get install {PACKAGES})",
)


def machine(name: str, arch: str, cpu: str, *, emulated: bool) -> Result:
    rows = [
        row("CS", "key_generation", [204_400, 204_000, 205_000]),
        row("RSA", "key_generation", [903_000_000, 905_000_000, 901_000_000], 2048),
        row("CS", "r_derivation", [444_000, 445_000, 443_000]),
        row("CS", "blinding_secret_derivation", [94_000, 95_000, 93_000]),
        row("CS", "blinding", [3_332_000, 3_330_000, 3_340_000]),
        row("RSA", "blinding", [3_012_000, 3_010_000, 3_020_000], 2048),
        row("CS", "signing", [77_000, 78_000, 76_000]),
        row("RSA", "signing", [34_000_000, 34_100_000, 33_900_000], 2048),
        row("CS", "unblinding", [1_000, 1_200, 900]),
        row("RSA", "unblinding", [10_000_000, 10_200_000, 9_900_000], 2048),
        row("CS", "verifying", [1_358_000, 1_360_000, 1_350_000]),
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


def compile_pdf(directory: Path) -> Path:
    """Run pdflatex twice on appendix-standalone.tex; fail with the log's errors."""
    for _ in range(2):
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "appendix-standalone.tex"],
            cwd=directory,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=300,
            check=False,
        )
        log = (directory / "appendix-standalone.log").read_text(errors="replace")
        errors = [line for line in log.splitlines() if line.startswith("!")]
        assert done.returncode == 0 and not errors, (
            f"pdflatex failed ({done.returncode}) in {directory}:\n"
            + "\n".join(errors or done.stdout.splitlines()[-30:])
        )
    assert "Rerun to get cross-references right" not in log
    assert not re.search(r"Reference `[^']*' on page \d+ undefined", log)
    return directory / "appendix-standalone.pdf"


@pytest.mark.parametrize("style", ["thesis", "booktabs"])
def test_standalone_chapter_compiles_and_page_one_renders(tmp_path: Path, style: Style) -> None:
    artifacts = os.environ.get("ARCHBENCH_ARTIFACTS")
    out = (Path(artifacts) if artifacts else tmp_path) / f"latex-{style}"
    out.mkdir(parents=True, exist_ok=True)
    thesis, failures = reference.load_reference()
    assert failures == []
    ours = [
        machine("amd64-native", "amd64", "AMD Ryzen 7 PRO 5850U", emulated=False),
        machine("riscv64-emu", "riscv64", "SiFive U74 R&D_rev2 <50%> ~fast~ #1 $", emulated=True),
    ]
    options = ReportOptions(style=style, baseline="thesis-amd-ryzen-7")
    write_reports([*ours, *thesis], [], out, options)
    pdf = compile_pdf(out)
    assert pdf.stat().st_size > 10_000
    done = subprocess.run(
        ["pdftoppm", "-f", "1", "-l", "1", "-r", "80", "-png", pdf.name, "page"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.returncode == 0
    png = next(out.glob("page*.png"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"\npage 1 ({style}): {png}")
    text = subprocess.run(
        ["pdftotext", "-layout", pdf.name, "-"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    # What a reader sees: escaped specials print literally, the thesis's values as printed.
    # (pdflatex's default OT1 fonts draw _ as a rule and ~ as a raised tilde, which
    # pdftotext reads as a space and "˜".)
    assert "SiFive U74 R&D rev2 <50%> ˜fast˜ #1 $" in text
    assert "100% & $5 #1 {x}" in text
    assert "10 000 ms" in text
    assert "Performance Measurements" in text
