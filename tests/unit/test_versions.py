"""Library versions in cross-machine tables: marked where the compared machines differ."""

from __future__ import annotations

from helpers import result, row

from archbench.report import ReportOptions, render_latex, render_markdown, versions
from archbench.result import GnunetBuild, Result, Row

BOOKWORM = {
    "libsodium": "1.0.18-1+deb12u1",
    "libgcrypt": "1.10.1-3+deb12u1",
    "libgnunetutil": "0.19.3-2",
}


def _rows() -> list[Row]:
    return [
        row("CS", "signing", [770_000, 771_000, 769_000]),
        row("RSA", "signing", [34_000_000, 34_100_000, 33_900_000], 2048),
        row("CS", "key_generation", [204_000, 205_000, 204_500]),
        row("RSA", "key_generation", [9_000_000_000, 9_100_000_000, 8_900_000_000], 2048),
    ]


def _bookworm(r: Result) -> Result:
    setup = r.harness.setup.model_copy(
        update={"os": "Debian GNU/Linux 12 (bookworm)", "packages": BOOKWORM}
    )
    return r.model_copy(update={"harness": r.harness.model_copy(update={"setup": setup})})


def _machines() -> tuple[Result, Result, Result]:
    amd64 = result("amd64-trixie", "amd64", "x86_64", "AMD EPYC", _rows())
    arm64 = result("arm64-trixie", "arm64", "aarch64", "AMD EPYC", _rows(), emulated=True)
    ppc = _bookworm(
        result("ppc64le-bookworm", "ppc64le", "ppc64le", "AMD EPYC", _rows(), emulated=True)
    )
    return amd64, arm64, ppc


def test_release_and_versions() -> None:
    amd64, _, ppc = _machines()
    assert versions.release(ppc) == "Debian 12"
    assert versions.release(amd64) == "Debian 13"
    assert versions.library_versions(ppc) == ("0.19.3-2", "1.10.1-3+deb12u1", "1.0.18-1+deb12u1")
    assert versions.summary(ppc) == (
        "Debian 12: libgnunetutil 0.19.3-2, libgcrypt 1.10.1-3+deb12u1, libsodium 1.0.18-1+deb12u1"
    )


def test_the_odd_one_out_is_marked_and_every_version_named() -> None:
    amd64, arm64, ppc = _machines()
    odd, note = versions.odd_ones_out({"a": amd64, "b": arm64, "p": ppc})
    assert odd == ["p"]
    assert note == (
        "¶ library versions differ between these machines: "
        "libgnunetutil 0.21.1-1 (a, b; Debian 13) vs 0.19.3-2 (p; Debian 12); "
        "libgcrypt 1.11.0-7 (a, b; Debian 13) vs 1.10.1-3+deb12u1 (p; Debian 12); "
        "libsodium 1.0.18-1+b2 (a, b; Debian 13) vs 1.0.18-1+deb12u1 (p; Debian 12)"
    )
    assert versions.odd_ones_out({"a": amd64, "b": arm64}) == ([], None)
    # Two machines, two version sets: the first one's set counts as the common one.
    assert versions.odd_ones_out({"p": ppc, "a": amd64})[0] == ["a"]


def test_ratios_are_marked_against_their_partner() -> None:
    amd64, arm64, ppc = _machines()
    odd, note = versions.against_partners(
        {"arm64": arm64, "ppc": ppc}, {"arm64": ("amd64", amd64), "ppc": ("amd64", amd64)}
    )
    assert odd == ["ppc"]
    assert note is not None and "libgnunetutil 0.19.3-2 (ppc; Debian 12) vs 0.21.1-1" in note


def test_reports_mark_the_emulation_slowdown_and_summary_of_ppc64le() -> None:
    amd64, arm64, ppc = _machines()
    latex = render_latex([amd64, arm64, ppc], options=ReportOptions())
    summary = latex.split(r"\label{tab:summary-blindsig-native-1}", 1)[1].split(
        r"\label{tab:summary-blindsig-emulated-1}", 1
    )[0]
    assert r"\rotatebox{90}{ppc64le-bookworm (ppc64le, Debian 12, GNUnet 0.19.3) \P{}}" in summary
    assert r"\rotatebox{90}{arm64-trixie (arm64, Debian 13, GNUnet 0.21.1)}" in summary
    assert r"\P{} library versions differ between these machines: libgnunetutil" in summary
    slowdown = latex.split(r"\section{Emulation slowdown}", 1)[1]
    # Both are read against amd64-trixie; only ppc64le's libraries differ from it.
    assert r"{ppc64le-bookworm (ppc64le, Debian 12, GNUnet 0.19.3) \P{}}" in slowdown
    assert r"{arm64-trixie (arm64, Debian 13, GNUnet 0.21.1)}" in slowdown
    assert "within the ratio: libgnunetutil 0.19.3-2 (ppc64le-bookworm; Debian 12) vs" in slowdown
    markdown = render_markdown([amd64, arm64, ppc])
    assert "ppc64le-bookworm (ppc64le, Debian 12, GNUnet 0.19.3) ¶" in markdown
    assert "- ¶ library versions differ between these machines: libgnunetutil 0.21.1-1" in (
        markdown
    )


def test_same_versions_leave_tables_unmarked() -> None:
    amd64, arm64, _ = _machines()
    latex = render_latex([amd64, arm64])
    assert r"\P{}" not in latex
    assert "library versions differ" not in latex


def _source_build(header: str, source: dict[str, str | bool | None]) -> Result:
    r = result("amd64-trixie", "amd64", "x86_64", "AMD EPYC", _rows())
    setup = r.harness.setup.model_copy(
        update={"packages": {}, "gnunet": GnunetBuild(header_version=header)}
    )
    assert r.execution is not None
    return r.model_copy(
        update={
            "harness": r.harness.model_copy(update={"setup": setup}),
            "execution": r.execution.model_copy(update={"gnunet_source": source}),
        }
    )


def test_a_commits_build_is_named_by_its_describe_version_not_its_release_tag() -> None:
    """A git commit's library reports its release tag (build_version); two commits past
    one tag stay apart by their git describe version."""
    a = _source_build(
        "0.22.0", {"kind": "git", "version": "0.22.0-59-g6cc77baa8", "build_version": "0.22.0"}
    )
    b = _source_build(
        "0.22.0", {"kind": "git", "version": "0.22.0-60-g7c785c8c5", "build_version": "0.22.0"}
    )
    assert versions.gnunet_version(a) == "0.22.0-59-g6cc77baa8"
    assert versions.library_versions(a) != versions.library_versions(b)
    # A library that reports something else is named by what it reports.
    odd = _source_build(
        "0.21.0", {"kind": "git", "version": "0.22.0-59-g6cc77baa8", "build_version": "0.22.0"}
    )
    assert versions.gnunet_version(odd) == "0.21.0"
    # A tarball (no build_version recorded before) keeps the header's version.
    tarball = _source_build("0.27.0", {"kind": "tarball", "version": "0.27.0"})
    assert versions.gnunet_version(tarball) == "0.27.0"
