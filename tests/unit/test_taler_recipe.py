"""The taler-helper recipe: matrix pins, Dockerfile steps, the fetch script and the suite.

The upstream sources cannot be reached from our machines, so the build
itself is untested; what is tested is everything around it: the pins are
required, the image carries the steps, the script fails with a clear
message when a tarball cannot be fetched or does not match its sha256, and
the suite's logs become security-module rows on the host.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
from pathlib import Path

import pytest
from abh.suites import taler_helper
from abh.suites.common import SuiteError
from helpers import REPO

from archbench.errors import MatrixError
from archbench.images import plan_image
from archbench.matrix import parse
from archbench.platforms import Arch
from archbench.result import HarnessDocument, Setup, SuiteRun
from archbench.upstream import add_taler_helper_rows

SCRIPT = REPO / "images" / "recipes" / "taler-helper.sh"
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


def test_recipe_pins_are_required_with_clear_messages() -> None:
    with pytest.raises(MatrixError) as info:
        parse(MATRIX.replace("https://tarballs.invalid/ex.tar.gz", "ex.tar.gz"))
    assert "profiles.taler.recipe.exchange: " in str(info.value)
    assert "give the http(s):// URL of the release tarball of version 0.9.3" in str(info.value)
    with pytest.raises(MatrixError, match=r"pin the tarball with its 64-digit lowercase sha256"):
        parse(MATRIX.replace(SHA, "abc", 1))
    with pytest.raises(MatrixError, match=r"recipe.gnunet.ur: unknown key 'ur'.*'url'"):
        parse(
            MATRIX.replace('url: "https://tarballs.invalid/g.', 'ur: "https://tarballs.invalid/g.')
        )


def test_the_image_carries_the_recipe_steps_and_script() -> None:
    m = parse(MATRIX)
    recipe = m.profiles["taler"].recipe
    assert recipe is not None
    spec = plan_image(Arch.AMD64, "taler", ("curl",), "b", "sha256:1", recipe=recipe)
    plain = plan_image(Arch.AMD64, "taler", ("curl",), "b", "sha256:1")
    assert "RUN sh /opt/archbench/recipes/taler-helper.sh" in spec.dockerfile
    assert f"0.20.0 https://tarballs.invalid/g.tar.gz {SHA}" in spec.dockerfile
    assert ("recipes/taler-helper.sh", SCRIPT.read_bytes()) in spec.files
    assert "recipes" not in plain.dockerfile and spec.tag != plain.tag


def _tarball(path: Path) -> str:
    data = b"#!/bin/sh\n"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("pkg-1.0/configure")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "ARCHBENCH_RECIPE_DIR": str(tmp_path / "out"),
            "ARCHBENCH_RECIPE_STEPS": "fetch",
        },
        check=False,
    )


def test_script_fetches_checks_and_unpacks(tmp_path: Path) -> None:
    good = tmp_path / "pkg.tar.gz"
    sha = _tarball(good)
    done = _script(tmp_path, "0.20.0", good.as_uri(), sha, "0.9.3", good.as_uri(), sha)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "gnunet" / "configure").is_file()
    assert (tmp_path / "out" / "exchange-version").read_text() == "0.9.3\n"


def test_script_names_the_unreachable_url(tmp_path: Path) -> None:
    good = tmp_path / "pkg.tar.gz"
    sha = _tarball(good)
    missing = (tmp_path / "nowhere" / "taler-exchange-0.9.3.tar.gz").as_uri()
    done = _script(tmp_path, "0.20.0", good.as_uri(), sha, "0.9.3", missing, sha)
    assert done.returncode == 1
    assert f"cannot fetch exchange 0.9.3 from {missing}" in done.stderr
    assert "set profiles.<profile>.recipe.exchange.url in matrix.yml" in done.stderr
    assert "untested on archbench's CI machines" in done.stderr


def test_script_refuses_a_tarball_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    good = tmp_path / "pkg.tar.gz"
    sha = _tarball(good)
    done = _script(tmp_path, "0.20.0", good.as_uri(), SHA, "0.9.3", good.as_uri(), sha)
    assert done.returncode == 1
    assert f"has sha256 {sha}, not the pinned {SHA}" in done.stderr


def test_suite_without_the_recipe_says_which_profile_it_needs(tmp_path: Path) -> None:
    config = taler_helper.normalize_config({})
    assert config == {
        "tests": ["test_helper_rsa", "test_helper_cs"],
        "rsa_bits": [1024, 2048, 3072, 4096],
        "repetitions": 3,
        "timeout_s": 1800.0,
    }
    with pytest.raises(SuiteError, match=r"taler-exchange is not built in this image.*taler:"):
        taler_helper.run(config, print, recipe_dir=tmp_path)
    with pytest.raises(SuiteError, match=r"tests = \['test_helper_eddsa'\]; allowed"):
        taler_helper.normalize_config({"tests": ["test_helper_eddsa"]})


def test_suite_logs_become_security_module_rows(tmp_path: Path) -> None:
    util = tmp_path / "exchange" / "src" / "util"
    util.mkdir(parents=True)
    (tmp_path / "exchange-version").write_text("0.9.3\n")
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
    outcome = taler_helper.run(config, print, recipe_dir=tmp_path)
    assert outcome.tools == {"taler-exchange": "0.9.3"}
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
