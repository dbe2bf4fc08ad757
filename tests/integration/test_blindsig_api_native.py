"""The blindsig driver on this host's libgnunetutil (0.19/0.20 API): the checks before timing.

Compiles the driver with the harness's Makefile in a temporary copy (as
test_harness_native.py does) and reads what it declares: the headers' version in
build-info.txt and the meta lines, the API it chose, the loaded library's version,
and that the known-answer checks ran for exactly the schemes asked for.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from abh.setup_system import parse_build_info
from abh.suites.blindsig_output import parse_driver_output
from helpers import HARNESS_DIR

pytestmark = pytest.mark.native


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool in ("make", "cc", "pkg-config"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found on PATH")
    if subprocess.run(["pkg-config", "--exists", "gnunetutil"], check=False).returncode != 0:
        pytest.skip("pkg-config cannot find gnunetutil: install libgnunet-dev and libsodium-dev")
    dest = tmp_path_factory.mktemp("harness") / "harness"
    shutil.copytree(HARNESS_DIR, dest, ignore=shutil.ignore_patterns("__pycache__"))
    make = subprocess.run(
        ["make", "-C", str(dest), "clean", "blindsig"], capture_output=True, text=True, check=False
    )
    assert make.returncode == 0, make.stderr
    return dest / "blindsig"


def _run(driver: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(driver), *args], capture_output=True, text=True, check=False)


def test_build_info_and_meta_name_the_headers_version_and_api(driver: Path) -> None:
    modversion = subprocess.run(
        ["pkg-config", "--modversion", "gnunetutil"], capture_output=True, text=True, check=True
    ).stdout.strip()
    info = parse_build_info((driver.parent / "build-info.txt").read_text())
    assert info["gnunet_header_version"] == modversion
    assert info["gnunet_bsig_api"] == ("0.19" if modversion < "0.21" else "0.21")
    meta = parse_driver_output(_run(driver, "--build-info").stdout).meta
    assert meta["gnunet_header_version"] == modversion
    assert meta["gnunet_bsig_api"] == info["gnunet_bsig_api"]
    assert meta["gnunet_library_version"].startswith(modversion.rsplit(".", 1)[0])
    assert "known_answers" not in meta  # --build-info times nothing and checks nothing


@pytest.mark.parametrize(("scheme", "passed"), [("cs", "CS"), ("rsa", "RSA"), ("all", "CS,RSA")])
def test_known_answers_are_checked_for_the_schemes_that_run(
    driver: Path, scheme: str, passed: str
) -> None:
    done = _run(
        driver, "--iterations", "1", "--repetitions", "1", "--rsa-bits", "1024",
        "--min-block-ns", "0", "--warmup", "0", "--scheme", scheme,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = parse_driver_output(done.stdout)
    assert out.meta["known_answers"] == passed
    assert out.invalid == {}
    # The 0.19/0.20 API is the rows' reference: no row carries a note there.
    if out.meta["gnunet_bsig_api"] == "0.19":
        assert not [key for key in out.meta if key.startswith("row_note:")]


def test_the_layers_rows_are_absent_on_the_old_api_with_the_reason(driver: Path) -> None:
    done = _run(
        driver, "--iterations", "1", "--repetitions", "1", "--rsa-bits", "1024",
        "--min-block-ns", "0", "--warmup", "0",
    )  # fmt: skip
    out = parse_driver_output(done.stdout)
    operations = {s.operation for s in out.samples}
    if out.meta["gnunet_bsig_api"] != "0.19":
        pytest.skip("this host's GNUnet has the layer (the docker test checks its rows)")
    assert not {op for op in operations if op.startswith("taler_")}
    assert "known_answers_taler" not in out.meta
    assert out.meta["taler_layer"].startswith(f"GNUnet {out.meta['gnunet_header_version']} has no")
    assert "new in 0.21.0" in out.meta["taler_layer"]


def _edited_headers(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    """A copy of the host's GNUnet headers with gnunet_crypto_lib.h edited: an include
    directory to put first (``CPPFLAGS=-I DIR``)."""
    cflags = subprocess.run(
        ["pkg-config", "--cflags-only-I", "gnunetutil"], capture_output=True, text=True, check=True
    ).stdout.split()
    roots = [Path(f[2:]) for f in cflags] + [Path("/usr/include")]
    found = next(r / "gnunet" for r in roots if (r / "gnunet" / "gnunet_crypto_lib.h").is_file())
    inc = tmp_path / "include"
    shutil.copytree(found, inc / "gnunet")
    header = inc / "gnunet" / "gnunet_crypto_lib.h"
    header.write_text(edit(header.read_text()))
    return inc


def _make(tmp_path: Path, inc: Path, goal: str) -> subprocess.CompletedProcess[str]:
    dest = tmp_path / "harness"
    if not dest.exists():
        shutil.copytree(HARNESS_DIR, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return subprocess.run(
        ["make", "-C", str(dest), goal, f"CPPFLAGS=-I{inc}"],
        capture_output=True,
        text=True,
        check=False,
    )


def _without_quality(text: str) -> str:
    """The host's header with master's randomness API (after 0.27.0): no quality argument,
    no enum GNUNET_CRYPTO_Quality, no GNUNET_CRYPTO_seed_weak_random."""
    text = re.sub(r"enum GNUNET_CRYPTO_Quality\s*\{.*?\};", "", text, count=1, flags=re.S)
    text = re.sub(r"enum GNUNET_CRYPTO_Quality\s+\w+,\s*", "", text)
    return re.sub(r"void\s+GNUNET_CRYPTO_seed_weak_random \(int32_t seed\);", "", text)


def test_the_probes_find_masters_randomness_api_whatever_the_version_says(
    driver: Path, tmp_path: Path
) -> None:
    inc = _edited_headers(tmp_path, _without_quality)
    done = _make(tmp_path, inc, "print-build-info")
    assert done.returncode == 0, done.stderr
    info = dict(line.split("\t", 1) for line in done.stdout.splitlines() if "\t" in line)
    assert info["gnunet_random_api"] == "sodium"
    # The host's own headers: the API with the quality argument.
    own = parse_build_info((driver.parent / "build-info.txt").read_text())
    assert own["gnunet_random_api"] == "quality"


def test_an_unknown_randomness_api_is_one_line_naming_the_function(tmp_path: Path) -> None:
    if subprocess.run(["pkg-config", "--exists", "gnunetutil"], check=False).returncode != 0:
        pytest.skip("pkg-config cannot find gnunetutil")

    def third_form(text: str) -> str:
        # random_block (quality, buffer, length, flags): neither API blindsig knows.
        return re.sub(
            r"GNUNET_CRYPTO_random_block \(enum GNUNET_CRYPTO_Quality mode,\s*void \*buffer,"
            r"\s*size_t length\);",
            "GNUNET_CRYPTO_random_block (enum GNUNET_CRYPTO_Quality mode, void *buffer,"
            " size_t length, int flags);",
            text,
        )

    inc = _edited_headers(tmp_path, third_form)
    done = _make(tmp_path, inc, "blindsig")
    assert done.returncode != 0
    assert "declare a randomness API blindsig does not know: GNUNET_CRYPTO_random_block" in (
        done.stderr
    ), done.stderr
    # make stops before compiling anything: no compiler diagnostics.
    assert "error:" not in done.stderr and ".c:" not in done.stderr, done.stderr
    assert not (tmp_path / "harness" / "blindsig").exists()
