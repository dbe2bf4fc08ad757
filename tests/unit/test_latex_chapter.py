"""What makes the chapter pasteable: labels and their prefix, kept references, figures."""

from __future__ import annotations

import re

import pytest
from helpers import result, row

from archbench.errors import ReportError
from archbench.report import (
    ReportOptions,
    formats,
    latex_escape,
    render_latex,
    render_markdown,
)
from archbench.result import Result
from archbench.upstream import reference


@pytest.fixture
def native() -> Result:
    return result(
        "amd-ryzen-7",
        "amd64",
        "x86_64",
        "AMD Ryzen 7 PRO 5850U",
        [row("CS", "signing", [77_000, 78_000]), row("RSA", "signing", [34_000_000], 2048)],
    )


def test_measured_labels_follow_the_thesis_scheme_and_yield_to_published_ones(
    native: Result,
) -> None:
    shipped, _ = reference.load_reference()
    alone = render_latex([native])
    assert r"\label{tab:comp-sign-amd-ryzen-7}" in alone
    # Beside the thesis, the published label is the thesis's; ours gets a suffix.
    both = render_latex([native, *shipped[:1]])
    labels = re.findall(r"\\label\{(tab:comp-sign-[^}]*)\}", both)
    assert labels == ["tab:comp-sign-amd-ryzen-7-2", "tab:comp-sign-amd-ryzen-7"]
    assert both.count(r"\ref{tab:comp-sign-amd-ryzen-7}") == 1


def test_label_prefix_reaches_every_label_and_reference(native: Result) -> None:
    shipped, _ = reference.load_reference()
    latex = render_latex([native, *shipped], ReportOptions(label_prefix="ab:"))
    labels = re.findall(r"\\label\{([^}]*)\}", latex)
    refs = re.findall(r"\\ref\{([^}]*)\}", latex)
    assert len(labels) > 20 and len(refs) >= 12
    assert all(x.startswith("ab:") for x in labels + refs)
    assert set(refs) <= set(labels)
    assert r"\label{ab:tab:comp-sign-full}" in latex


@pytest.mark.parametrize("bad", ["a}b", "\\x", "a b", "-a", "a" * 41, "ä"])
def test_label_prefix_grammar(bad: str, native: Result) -> None:
    assert formats.check_label_prefix("") == ""
    assert formats.check_label_prefix("thesis-2:") == "thesis-2:"
    with pytest.raises(ReportError, match=r"--label-prefix .* is not allowed"):
        formats.check_label_prefix(bad)
    with pytest.raises(ReportError, match="--label-prefix"):
        render_latex([native], ReportOptions(label_prefix=bad))


def test_published_intro_keeps_its_reference_and_escapes_the_rest() -> None:
    def ref(label: str) -> str:
        return r"\ref{" + label + "}"

    text = r"In table \ref{tab:comp-sign-full} 100% & $5 \ref{bad label}."
    assert formats.with_refs(text, latex_escape, ref, "p:") == (
        r"In table \ref{p:tab:comp-sign-full} 100\% \& \$5 \textbackslash{}ref\{bad label\}."
    )
    assert formats.published("#23~20.04.1", latex_escape) == r"\#23~20.04.1"


def test_figures_are_referenced_from_both_chapters(native: Result) -> None:
    figures = (("fig-signing", "10x signing"), ("fig-cs-vs-rsa-2048", "Speedup of CS"))
    options = ReportOptions(figures=figures, label_prefix="ab:")
    latex = render_latex([native], options)
    for stem, caption in figures:
        label = "ab:fig:" + stem.removeprefix("fig-")  # fig:signing, fig:cs-vs-rsa-2048
        assert r"Figure~\ref{" + label + "}: " + caption + "." in latex
        assert r"\includegraphics[width=\linewidth]{" + stem + "}" in latex
        assert r"\label{" + label + "}" in latex
    markdown = render_markdown([native], options=options)
    assert "## Figures" in markdown
    assert "![10x signing](fig-signing.png)" in markdown
    assert "([PDF](fig-cs-vs-rsa-2048.pdf))" in markdown
    assert "Figures" not in render_latex([native])


def test_package_is_shipped_and_defines_only_what_is_missing() -> None:
    sty = formats.sty_text()
    assert r"\ProvidesPackage{archbench-appendix}" in sty
    assert r"\@ifundefined{bfhBox}" in sty and r"\providecommand{\setupBfhTabular}" in sty
    assert r"\newcommand{\archbenchNote}" in sty and r"\newenvironment{archbenchFit}" in sty
    assert r"\RequirePackage{placeins}" in sty  # \FloatBarrier


def test_markdown_names_the_referenced_table_by_its_caption() -> None:
    shipped, _ = reference.load_reference()
    markdown = render_markdown(shipped)
    assert "## POWER9 — thesis-power9 (reference data)" in markdown
    assert (
        'Detailed comparison of each operation can be found in table "Comparison on POWER9" below.'
    ) in markdown
    assert 'can be found in table "Performance comparison of the security module" below' in markdown
    assert r"\ref" not in markdown
