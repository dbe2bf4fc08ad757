"""GNU Taler's path: the rows of GNUnet's scheme-independent layer in the harness and host.

- the driver's ``taler_*`` blocks become rows after each pair's raw rows when its ``meta
  taler_layer`` says ``measured``, and are refused otherwise;
- the layer's key generation leaves the adaptive loop together with the raw one;
- ``setup.gnunet`` carries what the driver reports (library version, API, known answers,
  why the layer's rows are absent), and the host reads it back.

The driver itself runs on the real libraries in tests/integration/test_gnunet_source_docker.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from abh.setup_system import collect_setup, gnunet_from_meta
from abh.suites.blindsig import RunRequest, build_rows, expected_scheme_keys
from abh.suites.blindsig_adaptive import (
    ANSWER_MORE,
    ANSWER_NOKEYGEN,
    AdaptiveRule,
    answer_after_sample,
)
from abh.suites.blindsig_output import DriverOutputError, parse_driver_output, row_notes
from abh.suites.blindsig_rules import (
    CS_OPERATIONS,
    RSA_OPERATIONS,
    TALER_OPERATIONS,
    run_operations,
)
from helpers import result, row

from archbench.report import render_latex, render_markdown, versions
from archbench.report.frame import build
from archbench.report.model import Machine
from archbench.report.sections import section
from archbench.result import GnunetBuild, Result, Row, Setup

MEASURED = "meta\ttaler_layer\tmeasured"
ABSENT = "meta\ttaler_layer\tGNUnet 0.20.0 has no scheme-independent blind-signature layer"


def driver_text(*meta: str, taler_blocks: bool = True) -> str:
    """One uncalibrated repetition of CS and RSA-1024, with the layer's blocks if asked."""
    lines = ["archbench-blindsig\t2", *meta, "meta\tmin_block_ns\t0", "meta\tmax_block_ops\t100000"]
    for scheme, bits, raw in (("CS", 0, CS_OPERATIONS), ("RSA", 1024, RSA_OPERATIONS)):
        ops = raw + TALER_OPERATIONS if taler_blocks else raw
        lines += [f"sample\t{scheme}\t{bits}\t{op}\t10\t0\t{1000 + i}" for i, op in enumerate(ops)]
        lines.append(f"done\t{scheme}\t{bits}\t1\t0\t9000")
    return "\n".join([*lines, "end\tok"]) + "\n"


def _never_warn(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


def test_a_pair_has_the_layers_operations_after_its_own_only_when_measured() -> None:
    assert run_operations("CS", False) == CS_OPERATIONS
    assert run_operations("RSA", True) == (*RSA_OPERATIONS, *TALER_OPERATIONS)
    with pytest.raises(KeyError):
        run_operations("DSA", True)


def test_the_layers_rows_follow_each_pairs_raw_rows_with_their_notes() -> None:
    text = driver_text(
        MEASURED,
        "meta\trow_note:CS:taler_signing\tGNUnet layer blind_sign: cs_r_derive again",
        "meta\trow_note:RSA:taler_blinding_input\tGNUnet layer: an allocation only",
    )
    out = parse_driver_output(text)
    rows = build_rows(
        out, expected_scheme_keys(["CS", "RSA"], [1024]), RunRequest(10, 1), _never_warn
    )
    cs = [r["operation"] for r in rows if r["scheme"] == "CS"]
    rsa = [r["operation"] for r in rows if r["scheme"] == "RSA"]
    assert cs == [*CS_OPERATIONS, *TALER_OPERATIONS]
    assert rsa == [*RSA_OPERATIONS, *TALER_OPERATIONS]
    # Sample ns = 1000 + the operation's index in the chain: the layer's come after.
    signing = next(r for r in rows if r["scheme"] == "CS" and r["operation"] == "taler_signing")
    assert signing["samples_ns"] == [1000 + len(CS_OPERATIONS) + 3]
    assert signing["note"] == "GNUnet layer blind_sign: cs_r_derive again"
    assert all(r["valid"] for r in rows)


@pytest.mark.parametrize("meta", [ABSENT, "meta\tclock\tCLOCK_MONOTONIC"])
def test_layer_blocks_without_the_drivers_measured_are_refused(meta: str) -> None:
    out = parse_driver_output(driver_text(meta))
    with pytest.raises(DriverOutputError, match="taler_key_generation, but its meta taler_layer"):
        build_rows(out, expected_scheme_keys(["CS", "RSA"], [1024]), RunRequest(10, 1), _never_warn)


def test_without_the_layer_a_pair_has_exactly_its_raw_rows() -> None:
    out = parse_driver_output(driver_text(ABSENT, taler_blocks=False))
    rows = build_rows(
        out, expected_scheme_keys(["CS", "RSA"], [1024]), RunRequest(10, 1), _never_warn
    )
    assert len(rows) == len(CS_OPERATIONS) + len(RSA_OPERATIONS)


def test_measured_layer_rows_missing_from_the_output_are_refused() -> None:
    out = parse_driver_output(driver_text(MEASURED, taler_blocks=False))
    with pytest.raises(DriverOutputError, match="taler_key_generation: valid but repetitions"):
        build_rows(out, expected_scheme_keys(["CS", "RSA"], [1024]), RunRequest(10, 1), _never_warn)


def test_notes_on_the_layers_rows_are_rows_the_driver_may_measure() -> None:
    assert row_notes({"row_note:RSA:taler_signing": "x"}) == {("RSA", "taler_signing"): "x"}
    with pytest.raises(DriverOutputError, match="no such row"):
        row_notes({"row_note:RSA:taler_r_derivation": "x"})


def test_the_layers_key_generation_leaves_with_the_raw_one() -> None:
    rule = AdaptiveRule(target=0.01, min_repetitions=6)
    ops = run_operations("RSA", True)
    # Every other row is far from the target: only key generation may leave.
    wide = [1000, 3000, 1000, 3000, 1000, 3000]
    got = {op: wide for op in ops}
    assert answer_after_sample(got, ops, rule) == ANSWER_NOKEYGEN
    got["key_generation"] = wide[:5]
    assert answer_after_sample(got, ops, rule) == ANSWER_MORE


def test_setup_gnunet_is_what_the_driver_reports() -> None:
    meta = {
        "gnunet_build_version": "0.27.0",
        "gnunet_header_version": "0.27.0",
        "gnunet_bsig_api": "0.21",
        "gnunet_library_version": "0.27.0",
        "known_answers": "CS,RSA",
        "known_answers_taler": "CS",
        "taler_layer": "measured",
    }
    gnunet = gnunet_from_meta(meta)
    assert gnunet == {
        "library_version": "0.27.0",
        "header_version": "0.27.0",
        "build_version": "0.27.0",
        "bsig_api": "0.21",
        "known_answers": ["CS", "RSA"],
        "known_answers_taler": ["CS"],
        "taler_layer": "measured",
        "source_build": None,
    }
    # The host's model reads it back.
    assert gnunet is not None
    model = GnunetBuild.model_validate(gnunet)
    assert model.taler_measured and model.known_answers == ("CS", "RSA")


def test_a_source_builds_build_info_joins_setup_gnunet(tmp_path: Path) -> None:
    # What build-libgnunetutil.sh writes into /opt/gnunet/build-info.txt.
    info = tmp_path / "build-info.txt"
    info.write_text(
        "kind\tmeson\nversion\t0.27.0\nheader_version\t0.27.0\ncflags\t-g -O2\n"
        "prefix\t/opt/gnunet\nbuild_seconds\t21\n"
    )
    setup = collect_setup({"gnunet_bsig_api": "0.21"}, tmp_path / "none.txt", None, info)
    gnunet = setup["gnunet"]
    assert gnunet is not None and gnunet["source_build"] is not None
    assert gnunet["source_build"]["build_seconds"] == "21"
    assert GnunetBuild.model_validate(gnunet).source_build == gnunet["source_build"]
    # Debian's package: no such file.
    plain = collect_setup({"gnunet_bsig_api": "0.19"}, tmp_path / "none.txt", None, tmp_path / "x")
    assert plain["gnunet"] is not None and plain["gnunet"]["source_build"] is None


def test_setup_gnunet_of_an_old_driver_or_no_driver() -> None:
    assert gnunet_from_meta({}) is None
    old = gnunet_from_meta(
        {"gnunet_build_version": "unknown", "gnunet_library_version": "0.19.3 release"}
    )
    assert old is not None
    assert old["build_version"] is None and old["library_version"] == "0.19.3 release"
    assert old["known_answers"] is None and old["taler_layer"] is None
    setup = Setup.model_validate(
        {
            "cpu_model": "x",
            "cores": 1,
            "machine": "x86_64",
            "kernel": "k",
            "os": "o",
            "packages": {},
            "gnunet": old,
        }
    )
    assert setup.gnunet is not None and not setup.gnunet.taler_measured


def test_an_unknown_api_generation_is_refused_by_the_host() -> None:
    with pytest.raises(ValueError, match="bsig_api"):
        GnunetBuild.model_validate({"bsig_api": "0.22"})


# ------------------------------------------------------------------ reports


def _machines(results: list[Result]) -> list[Machine]:
    return list(build(results).machines)


def _noted(r: Row, note: str) -> Row:
    return r.model_copy(update={"note": note})


def _source_build(r: Result, version: str) -> Result:
    """``r`` as a libgnunetutil ``version`` built from a tarball that the driver reports."""
    setup = r.harness.setup.model_copy(
        update={
            "packages": {**r.harness.setup.packages, "libgnunetutil": None},
            "gnunet_version": version,
            "gnunet": GnunetBuild(
                library_version=version,
                header_version=version,
                bsig_api="0.21",
                known_answers=("CS", "RSA"),
                known_answers_taler=("CS", "RSA"),
                taler_layer="measured",
            ),
        }
    )
    assert r.execution is not None
    source = {"kind": "tarball", "location": f"gnunet-{version}.tar.gz", "sha256": "ab" * 32}
    return r.model_copy(
        update={
            "harness": r.harness.model_copy(update={"setup": setup}),
            "execution": r.execution.model_copy(update={"gnunet_source": source}),
        }
    )


def test_the_layers_rows_are_a_table_of_their_own_with_the_rows_notes() -> None:
    rows = [
        row("CS", "signing", [1000, 1100, 1200]),
        _noted(row("RSA", "blinding", [5000, 5100, 5200], 1024), "FDH inside rsa_blind"),
        _noted(row("RSA", "blinding", [9000, 9100, 9200], 2048), "FDH inside rsa_blind"),
        _noted(row("CS", "taler_signing", [2000, 2100, 2200]), "cs_r_derive again"),
        row("RSA", "taler_signing", [7000, 7100, 7200], 2048),
    ]
    r = _source_build(result("box", "amd64", "x86_64", "CPU X", rows), "0.27.0")
    built = section(_machines([r])[0], "ms")
    thesis = [cells[1] for cells in built.table.rows]
    assert thesis == ["10x blinding", "10x blinding", "10x signing"]
    assert built.table.row_notes == ("RSA blinding: FDH inside rsa_blind",)
    (layer,) = built.extra_tables
    assert [cells[:2] for cells in layer.rows] == [
        ("CS", "10x signing (blind_sign)"),
        ("RSA 2048 bit", "10x signing (blind_sign)"),
    ]
    assert layer.row_notes == ("CS signing: cs_r_derive again",)
    assert "GNUnet 0.27.0 built from tarball" in layer.caption
    assert built.heading.endswith("box, GNUnet 0.27.0 built from tarball")
    box = dict(built.setup)
    assert box["GNUnet (driver)"] == (
        "library reports 0.27.0; blind-signature API 0.21; known answers passed: CS, RSA;"
        " layer CS, RSA"
    )
    markdown = render_markdown([r])
    assert "Notes on rows:\n\n- RSA blinding: FDH inside rsa_blind" in markdown
    assert "**GNU Taler's path on CPU X" in markdown
    latex = render_latex([r])
    assert r"\textit{Note}: CS signing: cs\_r\_derive again" in latex
    assert r"\label{tab:taler-box}" in latex


def test_a_setup_box_says_why_gnu_talers_path_is_absent() -> None:
    r = result("old", "amd64", "x86_64", "CPU", [row("CS", "signing", [1, 2, 3])])
    reason = "GNUnet 0.20.0 has no scheme-independent blind-signature layer"
    gnunet = GnunetBuild(library_version="0.20.0 release", bsig_api="0.19", taler_layer=reason)
    setup = r.harness.setup.model_copy(update={"gnunet": gnunet})
    r = r.model_copy(update={"harness": r.harness.model_copy(update={"setup": setup})})
    built = section(_machines([r])[0], "ms")
    assert not built.extra_tables
    assert dict(built.setup)["GNUnet (driver)"].endswith(f"GNU Taler's path not measured: {reason}")


def test_columns_of_differing_gnunet_source_builds_are_flagged() -> None:
    rows = [row("CS", "signing", [1000, 1100, 1200])]
    a = _source_build(result("a", "amd64", "x86_64", "CPU", rows), "0.27.0")
    b = _source_build(result("b", "amd64", "x86_64", "CPU", rows), "0.21.2")
    c = _source_build(result("c", "amd64", "x86_64", "CPU", rows), "0.27.0")
    odd, note = versions.odd_ones_out({"a": a, "b": b, "c": c})
    assert odd == ["b"]
    assert note is not None
    assert "libgnunetutil 0.27.0 built from tarball (a, c; Debian 13) vs 0.21.2" in note
    assert _machines([b])[0].header == "b (amd64, Debian 13, GNUnet 0.21.2 built from tarball)"
