"""``invoke bench --gnunet TARBALL@sha256:HEX`` on the CI matrix's native amd64 target:
libgnunetutil 0.27.0 (meson, the shared tarball) and 0.20.0 (autotools, Debian's orig
tarball fetched through deb-src) built inside the benchmark image, every row valid, the
source's provenance stored and its version in the Setup box."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import docker
import pytest
from helpers import CI_MATRIX, GNUNET_027_SHA256, GNUNET_TARBALLS, WORK, run_invoke

from archbench.images import resolve_apt_proxy
from archbench.report.sections import setup_items
from archbench.result import load as load_result

pytestmark = pytest.mark.docker

DEBIAN_020_ORIG_SHA256 = "6c5990f3ecb1300a758463f66eff90253c5910cb3f348ea32618300623a85c4c"
"""sha256 of Debian's ``gnunet_0.20.0.orig.tar.xz`` (the ``.dsc`` of gnunet 0.20.0-7 pins it)."""


def test_bench_builds_gnunet_0_27_from_the_tarball(
    engine_client: docker.DockerClient, slim_amd64_image: str, tmp_path: Path
) -> None:
    # slim_amd64_image bootstraps the trixie amd64 base if the engine lacks it.
    tarball = GNUNET_TARBALLS / "gnunet-0.27.0.tar.gz"
    assert tarball.is_file(), f"no shared GNUnet tarballs in {GNUNET_TARBALLS}"
    results = tmp_path / "results"
    done = run_invoke(
        "bench", "--matrix", str(CI_MATRIX), "--target", "ci-amd64",
        "--gnunet", f"{tarball}@sha256:{GNUNET_027_SHA256}",
        "--rsa-bits", "1024", "--repetitions", "1", "--ci-target", "off",
        settings={"results": results, "work": WORK},
        timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    (path,) = [p for p in run_dir.glob("ci-amd64*.json")]
    result = load_result(path)
    assert result.harness.rows and all(r.valid for r in result.harness.rows), [
        (r.scheme, r.operation, r.invalid_reason) for r in result.harness.rows if not r.valid
    ]
    assert result.harness.setup.gnunet_version == "0.27.0"
    assert result.execution is not None
    source = result.execution.gnunet_source
    assert source is not None
    assert source["kind"] == "tarball" and source["sha256"] == GNUNET_027_SHA256
    assert source["version"] == "0.27.0" and source["location"] == str(tarball)
    box = dict(setup_items(result))
    assert box["libgnunetutil:amd64 version"].startswith("0.27.0 (built from tarball ")
    # A meson tree is built in its persistent tree (archbench.images.incremental), every
    # time (a tree up to date builds nothing but says so); run.json keeps the flag for --resume.
    text = (run_dir / "logs" / "ci-amd64.gnunet.log").read_text(errors="replace")
    assert "installed libgnunetutil 0.27.0 (meson)" in text
    assert source["build_mode"] in ("clean", "incremental") and source["code_sha256"]
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["gnunet"] == f"{tarball}@sha256:{GNUNET_027_SHA256}"


def _debian_orig_tarball(client: docker.DockerClient, out: Path) -> Path:
    """Debian's ``gnunet_0.20.0.orig.tar.xz``, fetched with ``apt-get source --download-only``
    through a ``deb-src`` twin of the trixie base's own ``deb`` line (the same mirror)."""
    out.mkdir()
    proxy = resolve_apt_proxy(client, "auto")
    script = (
        "set -eu; sed -n 's/^deb /deb-src /p' /etc/apt/sources.list"
        " > /etc/apt/sources.list.d/src.list;"
        " apt-get update -qq; cd /out; apt-get source -qq --download-only gnunet=0.20.0-7;"
        f" chown -R {os.getuid()}:{os.getgid()} /out"
    )
    client.containers.run(
        "archbench-base/debian-trixie:amd64",
        ["sh", "-c", script],
        environment={"http_proxy": proxy} if proxy else {},
        volumes={str(out): {"bind": "/out", "mode": "rw"}},
        remove=True,
    )
    return out / "gnunet_0.20.0.orig.tar.xz"


def test_bench_builds_debians_0_20_orig_tarball_through_autotools(
    engine_client: docker.DockerClient, slim_amd64_image: str, tmp_path: Path
) -> None:
    orig = _debian_orig_tarball(engine_client, tmp_path / "debsrc")
    digest = hashlib.sha256(orig.read_bytes()).hexdigest()
    assert digest == DEBIAN_020_ORIG_SHA256
    results = tmp_path / "results"
    done = run_invoke(
        "bench", "--matrix", str(CI_MATRIX), "--target", "ci-amd64",
        "--gnunet", f"{orig}@sha256:{digest}",
        "--rsa-bits", "1024", "--repetitions", "1", "--ci-target", "off",
        settings={"results": results, "work": WORK},
        timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    result = load_result(run_dir / "ci-amd64.json")
    invalid = [(r.operation, r.invalid_reason) for r in result.harness.rows if not r.valid]
    assert result.harness.rows and not invalid, invalid
    setup = result.harness.setup
    assert setup.gnunet_version == "0.20.0"
    # The old API (hash codes, one CS nonce type), picked from the installed headers.
    assert (setup.build or {}).get("gnunet_bsig_api") == "0.19"
    assert result.execution is not None and result.execution.gnunet_source is not None
    assert result.execution.gnunet_source["sha256"] == digest
    log = run_dir / "logs" / "ci-amd64.build.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    # A layer cache hit of the build step (the same source built by an earlier image on
    # this engine) prints no build output: the line is asserted where the step ran.
    if text and not re.search(r"RUN mkdir /tmp/gnunet[^\n]*\n(?:[^\n]*\n)? ---> Using cache", text):
        assert "installed libgnunetutil 0.20.0 (autotools)" in text
