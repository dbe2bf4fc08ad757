"""Suite gnunet-perf: settings, recorded output to rows, the witness table, the image step.

Fixtures are real output of perf_crypto_rsa/perf_crypto_cs 0.20.0 built by
images/gnunet-perf/build.sh in the amd64 trixie image (two runs each).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from abh.suites.common import SuiteError
from abh.suites.gnunet_perf import normalize_config, provenance
from abh.suites.gnunet_perf import run as run_suite
from helpers import REPO, result, row

from archbench.errors import MatrixError
from archbench.images import plan_image
from archbench.matrix import parse
from archbench.platforms import Arch
from archbench.report import gnunet_perf
from archbench.result import HarnessDocument, Row, SuiteRun
from archbench.upstream import add_gnunet_perf_rows

FIXTURES = REPO / "tests" / "fixtures" / "gnunet-perf"


def _logs() -> dict[str, str]:
    return {
        f"{program}#{run}": (FIXTURES / f"{program}-0.20.0-amd64-run{run}.txt").read_text()
        for program in ("perf_crypto_rsa", "perf_crypto_cs")
        for run in (1, 2)
    }


def _doc(extra: dict[str, object], error: str | None = None) -> HarnessDocument:
    base = result("amd64-trixie", "amd64", "x86_64", "Xeon", [row("CS", "signing", [100])])
    run = SuiteRun(parameters={}, error=error, duration_s=1.0, extra=extra)
    return base.harness.model_copy(update={"suites": {"gnunet-perf": run}})


def test_recorded_logs_become_gnunet_perf_rows_with_one_sample_per_run() -> None:
    doc = add_gnunet_perf_rows(_doc({"logs": _logs()}))
    rows = {(r.scheme, r.key_bits, r.operation): r for r in doc.rows if r.suite == "gnunet-perf"}
    assert len(rows) == 2 * 5 + 7
    signing = rows[("RSA", 2048, "signing")]
    assert signing.ops_per_block == 10
    assert len(signing.samples_ns) == 2
    assert signing.samples_ns == (44_000_000, 47_000_000)  # "took 44 ms", "took 47 ms"
    assert signing.uncertainty_ns == 1_000_000
    unblinding = rows[("CS", None, "unblinding")]
    assert unblinding.samples_ns == (2_000, 2_000)  # "2 µs" twice
    assert unblinding.uncertainty_ns == 1_000
    assert doc.suites["gnunet-perf"].error is None


def test_unparsable_logs_fail_the_suite_not_the_document() -> None:
    doc = add_gnunet_perf_rows(_doc({"logs": {"perf_crypto_cs#1": "segfault\n"}}))
    assert [r.suite for r in doc.rows] == ["blindsig"]
    error = doc.suites["gnunet-perf"].error
    assert error is not None and "cannot parse the logs" in error
    assert "perf_crypto_cs#1.log" in error


def test_documents_without_the_suite_are_unchanged() -> None:
    doc = result("t", "amd64", "x86_64", "Xeon", [row("CS", "signing", [1])]).harness
    assert add_gnunet_perf_rows(doc) is doc


def test_witness_rows_give_the_ratio_interval_of_a_truncated_print() -> None:
    ours = row("RSA", "signing", [36_000_000, 37_000_000, 38_000_000], key_bits=2048)
    theirs = Row(
        suite="gnunet-perf",
        scheme="RSA",
        key_bits=2048,
        operation="signing",
        ops_per_block=10,
        samples_ns=(37_000_000, 34_000_000, 36_000_000),
        valid=True,
        uncertainty_ns=1_000_000,
    )
    only_ours = row("RSA", "verifying", [1_000_000, 1_000_000], key_bits=2048)
    r = result("amd64-trixie", "amd64", "x86_64", "Xeon", [ours, only_ours, theirs])
    (w,) = gnunet_perf.witness_rows([r])
    assert w.label == "RSA-2048 signing"
    assert w.archbench_ns == pytest.approx(37_000_000)  # median per op × 10
    assert (w.gnunet_low_ns, w.gnunet_high_ns) == (36_000_000, 37_000_000)
    assert w.ratio_low == pytest.approx(1.0)
    assert w.ratio_high == pytest.approx(37 / 36)
    md = gnunet_perf.markdown([w])
    assert "| amd64-trixie | RSA-2048 signing | 37.0 ms" in md
    assert "[36.0 ms, 37.0 ms)" in md and "1.00–1.03×" in md
    tex = gnunet_perf.latex([w])
    assert "\\label{tab:gnunet-perf-vs-archbench}" in tex and "1.00--1.03\\texttimes{}" in tex


def test_a_zero_print_gives_an_open_ratio() -> None:
    ours = row("CS", "unblinding", [500, 600, 700])
    theirs = ours.model_copy(
        update={"suite": "gnunet-perf", "samples_ns": (1,), "uncertainty_ns": 1000}
    )
    theirs = theirs.model_copy(update={"samples_ns": (1,)})
    (w,) = gnunet_perf.witness_rows([result("t", "amd64", "x86_64", "Xeon", [ours, theirs])])
    assert math.isfinite(w.ratio_high)
    assert w.ratio_low == pytest.approx(600 / 1001)


def test_write_is_silent_without_both_suites(tmp_path: Path) -> None:
    r = result("t", "amd64", "x86_64", "Xeon", [row("CS", "signing", [1, 2, 3])])
    assert gnunet_perf.write([r], tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_harness_settings_are_checked() -> None:
    assert normalize_config({})["rsa_bits"] == [1024, 2048, 3072, 4096]
    assert normalize_config({"runs": 1, "programs": ["perf_crypto_cs"]})["runs"] == 1
    cases: list[tuple[dict[str, Any], str]] = [
        ({"runs": 0}, "runs = 0"),
        ({"runs": True}, "runs = True"),
        ({"rsa_bits": [1024, "2048; rm -rf /"]}, "rsa_bits"),
        ({"rsa_bits": []}, "rsa_bits"),
        ({"programs": ["perf_crypto_ecc"]}, "programs"),
        ({"timeout_s": -1}, "timeout_s"),
        ({"speed": 1}, "unknown setting"),
    ]
    for bad, message in cases:
        with pytest.raises(SuiteError, match=message.replace("[", r"\[")):
            normalize_config(bad)


def test_provenance_reports_a_failed_or_missing_build(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="not in this image"):
        provenance(tmp_path)
    (tmp_path / "BUILD-FAILED").write_text(
        "the source package gnunet=0.19.3-2 is not on the mirror"
    )
    with pytest.raises(SuiteError, match="could not be built in this image: the source package"):
        provenance(tmp_path)
    (tmp_path / "BUILD-FAILED").unlink()
    (tmp_path / "PROVENANCE").write_text((FIXTURES / "PROVENANCE-amd64.txt").read_text())
    assert provenance(tmp_path)["source"] == "gnunet=0.20.0-7"


def test_a_source_builds_program_runs_as_upstream_wrote_it(tmp_path: Path) -> None:
    # What build-libgnunetutil.sh --perf leaves: upstream's perf_crypto_rsa (a script here
    # that prints its arguments as GNUnet's would print a timing line) and its PROVENANCE.
    program = tmp_path / "perf_crypto_rsa"
    program.write_text('#!/bin/sh\necho "args=[$*]"\necho "10x 1024-signing took 5 ms"\n')
    program.chmod(0o755)
    (tmp_path / "PROVENANCE").write_text(
        "source=GNUnet 0.27.0 (meson build from source)\nprograms=perf_crypto_rsa\n"
        "unavailable.perf_crypto_cs=not built: src/lib/util/meson.build has it commented out\n"
        "rsa_bits=1024,2048,3072,4096\n"
    )
    warnings: list[str] = []
    config = normalize_config({"runs": 2, "rsa_bits": [1024]})
    outcome = run_suite(config, warnings.append, tmp_path)
    # Upstream's main measures its four sizes whatever it is given: no arguments, and the
    # parameters say what was measured.
    assert outcome.extra["logs"]["perf_crypto_rsa#1"].startswith("args=[]")
    assert set(outcome.extra["logs"]) == {"perf_crypto_rsa#1", "perf_crypto_rsa#2"}
    assert outcome.parameters["rsa_bits"] == [1024, 2048, 3072, 4096]
    assert outcome.parameters["programs"] == ["perf_crypto_rsa"]
    assert outcome.tools == {"gnunet perf_crypto": "GNUnet 0.27.0 (meson build from source)"}
    assert warnings == [
        "perf_crypto_cs: not built: src/lib/util/meson.build has it commented out",
        "perf_crypto_rsa of this image is upstream's, which measures 1024, 2048, 3072, 4096 "
        "bits whatever it is asked; rsa_bits [1024] is not applied",
    ]
    with pytest.raises(SuiteError, match=r"none of the programs asked for \(perf_crypto_cs\)"):
        run_suite(normalize_config({"programs": ["perf_crypto_cs"]}), warnings.append, tmp_path)


def test_the_image_builds_the_perf_programs_only_on_request() -> None:
    plain = plan_image(Arch.AMD64, "slim", ("gcc",), "b", "sha256:1")
    perf = plan_image(Arch.AMD64, "slim", ("gcc",), "b", "sha256:1", gnunet_perf=True)
    assert "gnunet-perf" not in plain.dockerfile
    assert "RUN sh /opt/archbench/gnunet-perf-src/build.sh" in perf.dockerfile
    names = {path for path, _ in perf.files} - {path for path, _ in plain.files}
    assert names == {
        "gnunet-perf/build.sh",
        "gnunet-perf/gauger.h",
        "gnunet-perf/perf-crypto-0.20.patch",
        "gnunet-perf/platform.h",
    }
    assert perf.tag != plain.tag


def test_the_patch_is_minimal_and_named() -> None:
    patch = (REPO / "images" / "gnunet-perf" / "perf-crypto-0.20.patch").read_text()
    changed = [
        ln
        for ln in patch.splitlines()
        if ln[:1] in ("+", "-") and not ln.startswith(("+++", "---"))
    ]
    assert changed[:2] == [
        "-    GNUNET_CRYPTO_cs_r_derive (&nonce, &priv, r_priv);",
        '+    GNUNET_CRYPTO_cs_r_derive (&nonce, "rw", &priv, r_priv);',
    ]
    assert len(changed) == 8  # the seed argument and 6 lines of argv key sizes


def test_matrix_settings() -> None:
    text = "version: 1\nbases: {b: {source: bootstrap, suite: trixie}}\n" + (
        "profiles: {p: {packages: [gcc]}}\n"
        "targets: [{name: t, arch: amd64, base: b, profile: p, suites: {gnunet-perf: %s}}]\n"
    )
    m = parse(text % "{runs: 2, rsa_bits: [1024]}", "m.yml")
    settings = m.targets[0].suites.get("gnunet-perf")
    assert settings is not None and settings.model_dump()["rsa_bits"] == (1024,)
    with pytest.raises(MatrixError, match="from 512 to 16384"):
        parse(text % "{rsa_bits: [100]}", "m.yml")
    with pytest.raises(MatrixError, match="programs"):
        parse(text % "{programs: [perf_crypto_ecc]}", "m.yml")
