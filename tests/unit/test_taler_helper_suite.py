"""The taler-helper suite's settings and logs, and the retired recipe's clear refusal.

The suite runs on a target with a ``taler:`` source (``tests/unit/test_taler_source.py``,
``tests/integration/test_taler_source_docker.py``); the older ``taler-helper`` recipe of a
profile (upstream URLs, ./configure, a full make, never tested end to end) is retired: a
matrix that still has it is refused with a message naming the replacement.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from abh.suites import taler_helper
from abh.suites.common import SuiteError
from helpers import REPO

from archbench.errors import MatrixError
from archbench.matrix import parse
from archbench.result import HarnessDocument, Setup, SuiteRun
from archbench.upstream import add_taler_helper_rows

LOGS = REPO / "tests" / "fixtures" / "upstream-logs"
SHA = "0" * 64

MATRIX = f"""
version: 1
bases: {{deb: {{source: bootstrap, suite: trixie}}}}
profiles:
  taler:
    packages: [curl, build-essential]
    recipe:
      name: taler-helper
      gnunet: {{version: 0.20.0, url: "https://tarballs.invalid/g.tar.gz", sha256: "{SHA}"}}
      exchange: {{version: 0.9.3, url: "https://tarballs.invalid/ex.tar.gz", sha256: "{SHA}"}}
targets:
  - name: taler-amd64
    arch: amd64
    base: deb
    profile: taler
    suites: {{blindsig: {{enabled: false}}, taler-helper: {{rsa_bits: 2048}}}}
"""


def test_a_matrix_with_the_retired_recipe_is_refused_naming_the_replacement() -> None:
    with pytest.raises(MatrixError) as info:
        parse(MATRIX)
    message = str(info.value)
    assert "profiles.taler" in message
    assert "the taler-helper recipe is retired" in message
    assert "give the target a taler: source beside its gnunet:" in message
    assert "docs/taler-recipe.md" in message
    assert not (REPO / "images" / "recipes").exists()


def test_suite_without_the_exchange_says_which_source_it_needs(tmp_path: Path) -> None:
    config = taler_helper.normalize_config({})
    assert config == {
        "tests": ["test_helper_rsa", "test_helper_cs"],
        "rsa_bits": [1024, 2048, 3072, 4096],
        "repetitions": 3,
        "timeout_s": 1800.0,
    }
    with pytest.raises(SuiteError, match=r"taler-exchange is not built in this image.*taler:"):
        taler_helper.run(config, print, taler_dir=tmp_path)
    with pytest.raises(SuiteError, match=r"tests = \['test_helper_eddsa'\]; allowed"):
        taler_helper.normalize_config({"tests": ["test_helper_eddsa"]})


def test_suite_logs_become_security_module_rows(tmp_path: Path) -> None:
    util = tmp_path / "exchange" / "src" / "util"
    util.mkdir(parents=True)
    (tmp_path / "exchange" / "archbench-taler.txt").write_text(
        "version\t0.9.2\nprefix\t/opt/taler\nprefix_variable\tTALER_PREFIX\n"
    )
    for test, log in (
        ("test_helper_rsa", "test_helper_rsa-2048.log"),
        ("test_helper_cs", "test_helper_cs.log"),
    ):
        program = util / test
        # Stands in for the built test: prints a saved log on stderr, as the real one does.
        program.write_text(f"#!/bin/sh\ncat '{LOGS / log}' >&2\n")
        program.chmod(0o755)
        (util / f"{test}.conf").write_text("[coin_1]\nRSA_KEYSIZE = 2048\n")
    config = taler_helper.normalize_config({"rsa_bits": 2048, "repetitions": 1})
    outcome = taler_helper.run(config, print, taler_dir=tmp_path)
    assert outcome.tools == {"taler-exchange": "0.9.2"}
    assert outcome.extra["prefix_variable"] == "TALER_PREFIX"
    cs_runs = [r for r in outcome.extra["runs"] if r["test"] == "test_helper_cs"]
    assert [r["log"] for r in cs_runs] == [(LOGS / "test_helper_cs.log").read_text()]
    doc = HarnessDocument(
        format="archbench-harness",
        version=1,
        harness_version="0.3.0",
        started_at="2026-11-30T00:00:00Z",
        duration_s=1.0,
        setup=Setup(cpu_model="c", cores=1, machine="x86_64", kernel="k", os="o", packages={}),
        rows=(),
        suites={"taler-helper": SuiteRun(parameters=config, extra=outcome.extra)},
    )
    rows = add_taler_helper_rows(doc).rows
    assert {r.suite for r in rows} == {"security-module"}
    assert {(r.scheme, r.key_bits) for r in rows} == {("RSA", 2048), ("CS", None)}
    assert {r.operation for r in rows} == {
        "helper_sequential_signing",
        "helper_parallel_signing",
        "helper_batch_signing",
    }
    broken = doc.model_copy(
        update={"suites": {"taler-helper": SuiteRun(extra={"logs": {"test_helper_cs": "x"}})}}
    )
    # Nothing parseable: the suite records why, no row is invented, nothing is raised.
    after = add_taler_helper_rows(broken)
    assert after.rows == ()
    error = after.suites["taler-helper"].error
    assert error is not None and error.startswith("cannot parse the logs: test_helper_cs.log: no")
