"""Golden files of the other suites' report parts, in Markdown and both LaTeX styles.

Seven machines ran openssl speed, so its cross-machine table is split 4 + 3 by the
one chunker every suite uses; one more ran libsodium and GnuPG under emulation.
Regenerate with ``ARCHBENCH_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import pytest
from helpers import assert_golden, result
from suite_rows import ROWS, suite_row
from test_suite_tables import openssl_result

from archbench.report import ReportOptions, render_latex, render_markdown
from archbench.result import Result, SuiteRun


def _machines() -> list[Result]:
    out = []
    for i in range(7):
        r = openssl_result()
        target = r.target.model_copy(update={"name": f"box{i + 1}"})
        out.append(r.model_copy(update={"target": target}))
    sodium = [
        suite_row(
            "sodium", "Ed25519", "sign", [26_000, 20_000, 100_000, 22_000, 24_000], ops_per_block=2
        ),
        ROWS["gnupg"][0],  # RSA-2048 decrypts 1 MB in 20 and 40 ms
    ]
    emulated = result("pi-emu", "arm64", "aarch64", "Cortex-A72", sodium, emulated=True)
    harness = emulated.harness.model_copy(
        update={"suites": {"sodium": SuiteRun(parameters={"nth": 3})}}
    )
    out.append(emulated.model_copy(update={"harness": harness}))
    return out


def test_suites_markdown_matches_golden() -> None:
    text = render_markdown(_machines())
    assert "openssl speed across machines, part 1 of 2" in text
    assert "part 2 of 2" in text and "part 3" not in text
    assert_golden("suites.md", text)


@pytest.mark.parametrize("style", ["thesis", "booktabs"])
def test_suites_latex_matches_golden(style: str) -> None:
    options = ReportOptions(style="thesis" if style == "thesis" else "booktabs")
    suffix = "" if style == "thesis" else "-booktabs"
    assert_golden(f"suites{suffix}.tex", render_latex(_machines(), options))
