"""Options that would silently do nothing are errors that name the value and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import result, row, run_invoke

from archbench.errors import ReportError
from archbench.report import ReportOptions, render_latex, render_markdown, select_results
from archbench.result import Result
from archbench.upstream import reference


def machine(name: str = "box", rsa_bits: tuple[int, ...] = (1024, 2048)) -> Result:
    rows = [row("CS", "signing", [100_000, 101_000, 99_000])]
    rows += [row("RSA", "signing", [2_000_000 * b // 1024] * 3, b) for b in rsa_bits]
    return result(name, "amd64", "x86_64", "Ryzen", rows)


def test_compare_bits_of_a_size_nobody_measured_is_an_error() -> None:
    with pytest.raises(ReportError, match=r"--compare-bits 1000: .*sizes measured: 1024, 2048$"):
        render_latex([machine()], ReportOptions(compare_bits=(1000,)))


def test_compare_bits_also_choose_the_speedup_tables() -> None:
    latex = render_latex([machine()], ReportOptions(compare_bits=(1024,)))
    assert r"\label{tab:speedup-rsa1024-native}" in latex
    assert "tab:speedup-rsa2048" not in latex
    assert r"\label{tab:cs-vs-rsa-box-1024}" in latex
    default = render_latex([machine()])
    assert r"\label{tab:speedup-rsa2048-native}" in default
    assert "tab:speedup-rsa1024" not in default


def test_baseline_without_a_shared_row_is_an_error() -> None:
    shipped, _ = reference.load_reference()
    module = [r for r in shipped if r.target.name == "thesis-security-module"]
    options = ReportOptions(baseline=module[0].target.name)
    with pytest.raises(ReportError, match=r"compare it with itself; .*: box, other$"):
        render_markdown([machine(), machine("other"), *module], options=options)
    # A baseline sharing rows with another machine still works.
    assert "relative to box" in render_markdown(
        [machine(), machine("other")], options=ReportOptions(baseline="box")
    )


def test_unknown_suite_is_an_error_listing_the_suites() -> None:
    with pytest.raises(ReportError, match=r"--suite nope: no such suite; choose from: blindsig, "):
        select_results([machine()], suites=["nope"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (["--compare-bits", "1000"], "--compare-bits 1000: no machine measured RSA"),
        (["--baseline", "thesis-security-module"], "compare it with itself"),
        (["--suite", "nope"], "--suite nope: no such suite"),
    ],
)
def test_invoke_report_exits_non_zero_without_traceback(
    tmp_path: Path, flag: list[str], message: str
) -> None:
    done = run_invoke(
        "report",
        "--reference",
        "--no-plots",
        *flag,
        settings={"results": tmp_path / "none", "reports": tmp_path / "out"},
    )
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "out" / "appendix.tex").exists()
