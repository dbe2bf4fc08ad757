"""Golden files of every suite's part of the report, in every table style and in Markdown.

One measured machine per suite (blindsig, the Taler security module,
openssl speed, RSA up to 16384 bit, libsodium, GnuPG), rendered alone, so
a change to one suite's tables shows in that suite's golden files only:
``tests/golden/suites/<suite>-thesis.tex``, ``<suite>-booktabs.tex`` and
``<suite>.md``. Regenerate after an intended change with
``ARCHBENCH_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_report_golden.py``
and review the diff.
"""

from __future__ import annotations

import pytest
from helpers import GOLDEN, assert_golden, result
from suite_rows import ROWS

from archbench.report import STYLES, ReportOptions, render_latex, render_markdown
from archbench.result import Result

SUITES = GOLDEN / "suites"


def machine(suite: str) -> Result:
    return result(f"{suite}-box", "amd64", "x86_64", "AMD Ryzen 7 PRO 5850U", ROWS[suite])


@pytest.mark.parametrize("suite", list(ROWS))
def test_every_suite_part_matches_its_golden_files(suite: str) -> None:
    results = [machine(suite)]
    for style in STYLES:
        assert_golden(
            f"suites/{suite}-{style}.tex", render_latex(results, ReportOptions(style=style))
        )
    assert_golden(f"suites/{suite}.md", render_markdown(results))


def test_golden_files_cover_every_suite_and_style() -> None:
    # A suite added to ROWS without golden files, or stale files of a removed one, fail here.
    expected = {f"{s}-{style}.tex" for s in ROWS for style in STYLES} | {f"{s}.md" for s in ROWS}
    assert {p.name for p in SUITES.iterdir()} == expected
