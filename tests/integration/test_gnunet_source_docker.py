"""libgnunetutil built from source and driven on the new API, in a real container.

A scratch image from the local ``archbench-base/debian-trixie:amd64`` with the build
packages (apt through the host's package cache, as image builds do), then per version:
``images/gnunet-source/build-libgnunetutil.sh`` on the shared upstream tarball
(``../shared/gnunet/``), the blindsig driver compiled against the prefix with the
harness's Makefile, and one tiny run of every row, GNU Taler's path (the scheme-independent layer's
``taler_*`` rows) included. Every row must be valid, the known-answer checks of the raw
calls and of the layer must pass, the headers' version must reach build-info.txt and the
meta lines, and the unpacked source must be left as it was.

The oldest release of the driver's release API (``gnunet_bsig_api`` 0.21): 0.21.2, before
the HKDF moved to libsodium's HMAC (0.22). The releases after it are built and driven by
``invoke bench`` elsewhere: 0.27.0 in ``test_gnunet_source_image_docker.py`` (natively),
master in ``test_gnunet_master_docker.py`` (natively and cross, with the HMAC's note),
0.22.2 by the Taler and bisection tests. A release here costs about two minutes of CI from
an empty engine (issue 27); 0.24.3, which this test built as well until issue 37, proved
nothing those do not.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from abh.suites.blindsig import RunRequest, build_rows, expected_scheme_keys
from abh.suites.blindsig_output import parse_driver_output
from abh.suites.blindsig_rules import TALER_OPERATIONS
from helpers import GNUNET_TARBALLS, REPO

from archbench.images import GNUNET_BUILD_PACKAGES, resolve_apt_proxy

pytestmark = pytest.mark.docker

SHARED = GNUNET_TARBALLS
BASE = "archbench-base/debian-trixie:amd64"
# The packages a source image installs for the build (one list, archbench.images).
PACKAGES = " ".join(GNUNET_BUILD_PACKAGES)
DOCKERFILE = f"""FROM {BASE}
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends {PACKAGES} \\
 && rm -rf /var/lib/apt/lists/*
"""
SCRIPT = r"""
set -eu
v=$1
mkdir /tmp/s && tar -xzf /tarballs/gnunet-$v.tar.gz -C /tmp/s
tree=$(find /tmp/s -mindepth 1 -maxdepth 1)
sum() { (cd "$tree" && find . -type f -exec sha256sum {} + | sort | sha256sum); }
before=$(sum)
sh /repo/images/gnunet-source/build-libgnunetutil.sh --perf "$tree" /tmp/b /opt/gnunet >&2
[ "$before" = "$(sum)" ] || { echo "the source tree changed" >&2; exit 1; }
cp -r /repo/harness /tmp/h && make -s -C /tmp/h clean
make -s -C /tmp/h blindsig PKG_CONFIG_PATH=/opt/gnunet/lib/pkgconfig \
  LDFLAGS=-Wl,-rpath,/opt/gnunet/lib >&2
/opt/gnunet/libexec/gnunet-perf/perf_crypto_rsa >&2
echo '--- build-info'
cat /tmp/h/build-info.txt
echo '--- driver'
/tmp/h/blindsig --iterations 1 --repetitions 1 --warmup 0 --min-block-ns 0 --rsa-bits 1024
"""


@pytest.fixture(scope="module")
def build_image(engine_client: docker.DockerClient, slim_amd64_image: str) -> Iterator[str]:
    # slim_amd64_image bootstraps BASE when the engine is empty; the tarballs are the
    # workplace's test data (../shared/gnunet/ beside the clone, as in CI).
    assert (SHARED / "gnunet-0.27.0.tar.gz").is_file(), f"no shared GNUnet tarballs in {SHARED}"
    engine_client.images.get(BASE)
    tag = "archbench-test/gnunet-build:" + hashlib.sha256(DOCKERFILE.encode()).hexdigest()[:16]
    proxy = resolve_apt_proxy(engine_client, "auto")
    engine_client.images.build(
        fileobj=io.BytesIO(DOCKERFILE.encode()),
        tag=tag,
        buildargs={"http_proxy": proxy} if proxy else {},
        rm=True,
    )
    yield tag


@pytest.mark.parametrize("version", ["0.21.2"])
def test_a_source_build_drives_every_row_on_the_new_api(
    engine_client: docker.DockerClient, build_image: str, version: str
) -> None:
    out = engine_client.containers.run(
        build_image,
        ["sh", "-c", SCRIPT, "sh", version],
        volumes={
            str(SHARED): {"bind": "/tarballs", "mode": "ro"},
            str(REPO): {"bind": "/repo", "mode": "ro"},
        },
        remove=True,
        stdout=True,
        stderr=False,
    ).decode()
    build_info_text, driver = out.split("--- build-info\n", 1)[1].split("--- driver\n", 1)
    build_info = dict(line.split("\t", 1) for line in build_info_text.splitlines() if "\t" in line)
    assert build_info["gnunet_header_version"] == version
    assert build_info["gnunet_version"] == version
    assert build_info["gnunet_bsig_api"] == "0.21"

    output = parse_driver_output(driver)
    assert output.meta["known_answers"] == "CS,RSA"
    # Taler's path: the layer's known answers passed and its rows were measured.
    assert output.meta["known_answers_taler"] == "CS,RSA"
    assert output.meta["taler_layer"] == "measured"
    assert output.meta["gnunet_header_version"] == version
    assert output.meta["gnunet_bsig_api"] == "0.21"
    assert output.invalid == {}
    rows = build_rows(output, expected_scheme_keys(["CS", "RSA"], [1024]), RunRequest(1, 1), _fail)
    assert all(row["valid"] for row in rows) and len(rows) == 12 + 2 * len(TALER_OPERATIONS)
    layer = [(r["scheme"], r["operation"]) for r in rows if r["operation"] in TALER_OPERATIONS]
    assert layer == [(s, op) for s in ("CS", "RSA") for op in TALER_OPERATIONS]
    notes = {(r["scheme"], r["operation"]): r.get("note", "") for r in rows}
    assert "cs_r_derive again" in notes[("CS", "taler_signing")]
    assert "cs_calc_blinded_c again" in notes[("CS", "taler_unblinding")]
    assert notes[("RSA", "blinding")].startswith("GNUnet 0.21 API: rsa_blind takes (message, size)")
    # 0.22 moved the HKDF to libsodium's HMAC: the note says so from then on (master's
    # test checks that it does), not before.
    assert "libsodium's HMAC" not in notes[("CS", "signing")]


def _fail(message: str) -> None:
    raise AssertionError(message)


def test_the_shared_tarballs_are_those_of_the_readme() -> None:
    readme = (SHARED / "README.md").read_text(encoding="utf-8")
    for path in sorted(Path(SHARED).glob("gnunet-*.tar.gz")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"| {path.name} |" in readme and digest in readme, path.name
