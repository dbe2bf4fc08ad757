"""GNUnet 0.19 to 0.27 in the harness: API choice, row notes, the source build's arguments.

- ``drivers/blindsig.h`` picks the blind-signature API from fake ``gnunet_config.h``
  headers and refuses every disagreement with an ``#error`` that says why (the
  preprocessor only: no GNUnet needed, only a C compiler);
- the driver's ``meta row_note:<scheme>:<operation>`` lines become the rows' ``note``;
- ``images/gnunet-source/build-libgnunetutil.sh`` refuses bad arguments and unusable
  versions before it builds anything.

The real builds (every API, known answers) are in
tests/integration/test_gnunet_source_docker.py.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from abh.suites.blindsig import RunRequest, build_rows, expected_scheme_keys
from abh.suites.blindsig_output import (
    DriverOutputError,
    join_notes,
    parse_driver_output,
    row_notes,
)
from helpers import CS_OPS, HARNESS_DIR, REPO, RSA_OPS

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="needs a C compiler")
SCRIPT = REPO / "images" / "gnunet-source" / "build-libgnunetutil.sh"


# ------------------------------------------------------------------ API choice


def _fake_headers(tmp: Path, major: str, minor: str, va_arg_enum: bool) -> Path:
    """An include dir whose gnunet/gnunet_util_lib.h declares only a version."""
    inc = tmp / "inc"
    (inc / "gnunet").mkdir(parents=True)
    lines = [
        f'#define GNUNET_VERSION "{major}.{minor}.0"',
        f"#define GNUNET_MAJOR_VERSION {major}",
        f"#define GNUNET_MINOR_VERSION {minor}",
    ]
    if va_arg_enum:
        lines.append("#define GNUNET_VA_ARG_ENUM(va, X) ((enum X) va_arg (va, int))")
    (inc / "gnunet" / "gnunet_util_lib.h").write_text("\n".join(lines) + "\n")
    return inc


def _preprocess(inc: Path, *defines: str) -> subprocess.CompletedProcess[str]:
    """Preprocess blindsig.h alone (-dM: the macros it ends with)."""
    assert CC is not None
    return subprocess.run(
        [
            CC,
            "-E",
            "-dM",
            f"-I{inc}",
            *defines,
            "-x",
            "c",
            str(HARNESS_DIR / "drivers" / "blindsig.h"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


@needs_cc
@pytest.mark.parametrize(
    ("major", "minor", "va", "api"),
    [
        ("0", "19", True, "19"),
        ("0", "20", True, "19"),
        ("0", "21", False, "21"),
        ("0", "27", False, "21"),
    ],
)
def test_the_headers_version_picks_the_api(
    tmp_path: Path, major: str, minor: str, va: bool, api: str
) -> None:
    num = int(major) * 10000 + int(minor) * 100
    done = _preprocess(
        _fake_headers(tmp_path, major, minor, va),
        f"-DABH_GNUNET_VERSION_NUM={num + 2}",
        f"-DABH_PROBE_BSIG_API={api}",
    )
    assert done.returncode == 0, done.stderr
    assert f"#define ABH_BSIG_API {api}\n" in done.stdout


@needs_cc
@pytest.mark.parametrize(
    ("major", "minor", "va", "defines", "message"),
    [
        ("unknown", "unknown", False, [], "declare no version"),
        ("0", "18", True, [], "older than 0.19"),
        ("0", "28", False, [], "newer than 0.27"),
        ("0", "20", False, [], "gnunet_common.h disagree"),
        ("0", "21", True, [], "gnunet_common.h disagree"),
        ("0", "27", False, ["-DABH_GNUNET_VERSION_NUM=2000"], "pkg-config's gnunetutil version"),
        ("0", "20", True, ["-DABH_PROBE_BSIG_API=21"], "blind-signature types disagree"),
        ("0", "24", False, ["-DABH_PROBE_BSIG_API=19"], "blind-signature types disagree"),
    ],
)
def test_every_disagreement_is_an_error_that_says_why(
    tmp_path: Path, major: str, minor: str, va: bool, defines: list[str], message: str
) -> None:
    done = _preprocess(_fake_headers(tmp_path, major, minor, va), *defines)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if "#error" in line and "error:" in line]
    assert len(errors) == 1, done.stderr  # one reason, not a cascade
    assert message in errors[0]


# ------------------------------------------------------------------ row notes


def driver_text(*meta: str, rsa_bits: tuple[int, ...] = (1024,)) -> str:
    """Canned blindsig stdout: one uncalibrated repetition per pair, extra meta lines."""
    lines = [
        "archbench-blindsig\t2",
        *meta,
        "meta\tmin_block_ns\t0",
        "meta\tmax_block_ops\t100000",
    ]
    pairs = [("CS", 0, CS_OPS)] + [("RSA", bits, RSA_OPS) for bits in rsa_bits]
    for scheme, bits, ops in pairs:
        lines += [f"sample\t{scheme}\t{bits}\t{op}\t10\t0\t{1000 + i}" for i, op in enumerate(ops)]
        lines.append(f"done\t{scheme}\t{bits}\t1\t0\t9000")
    return "\n".join([*lines, "end\tok"]) + "\n"


def _never_warn(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


def test_row_notes_reach_the_rows_of_every_key_size_and_only_those() -> None:
    text = driver_text(
        "meta\trow_note:RSA:blinding\tGNUnet 0.21 API: same work",
        "meta\trow_note:CS:signing\tGNUnet 0.22+: libsodium HMAC",
        rsa_bits=(1024, 2048),
    )
    out = parse_driver_output(text)
    rows = build_rows(
        out, expected_scheme_keys(["CS", "RSA"], [1024, 2048]), RunRequest(10, 1), _never_warn
    )
    noted = {
        (r["scheme"], r["key_bits"], r["operation"]): r.get("note") for r in rows if "note" in r
    }
    assert noted == {
        ("CS", None, "signing"): "GNUnet 0.22+: libsodium HMAC",
        ("RSA", 1024, "blinding"): "GNUnet 0.21 API: same work",
        ("RSA", 2048, "blinding"): "GNUnet 0.21 API: same work",
    }
    assert len(rows) == len(CS_OPS) + 2 * len(RSA_OPS)


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ("meta\trow_note:DSA:signing\tx", "no such row"),
        ("meta\trow_note:RSA:r_derivation\tx", "no such row"),
        ("meta\trow_note:RSA\tx", "no such row"),
        ("meta\trow_note:CS:signing\t ", "is empty"),
    ],
)
def test_a_note_for_a_row_the_driver_does_not_measure_is_refused(meta: str, message: str) -> None:
    out = parse_driver_output(driver_text(meta))
    with pytest.raises(DriverOutputError, match=message):
        row_notes(out.meta)


def test_notes_join_in_order_and_vanish_when_empty() -> None:
    assert join_notes("driver", None, "harness") == "driver; harness"
    assert join_notes(None, "") is None


# ------------------------------------------------------------------ the source build


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(SCRIPT), *args], capture_output=True, text=True, check=False)


@pytest.fixture
def meson_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "gnunet"
    tree.mkdir()
    (tree / "meson.build").write_text("project('gnunet', 'c')\n")
    (tree / ".version").write_text("0.27.0\n")
    return tree


def test_the_script_is_posix_sh_that_fails_early() -> None:
    text = SCRIPT.read_text(encoding="utf-8")
    assert text.startswith("#!/bin/sh\n")
    assert "\nset -eu\n" in text
    assert subprocess.run(["sh", "-n", str(SCRIPT)], check=False).returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "expected SOURCE BUILD PREFIX"),
        (["--bogus"], "unknown option '--bogus'"),
        (["{src}", "{tmp}/b", "relative/prefix"], "must be an absolute path"),
        (["{src}", "{tmp}/b", "/opt/x y"], "has characters other than"),
        (["{src}", "{src}/build", "/opt/x"], "is inside SOURCE"),
        (["{src}", "{tmp}/b", "{src}/prefix"], "is inside SOURCE"),
        (["{tmp}/nothing", "{tmp}/b", "/opt/x"], "is not a directory"),
        (["--host", "riscv64-linux-gnu", "{src}", "{tmp}/b", "/opt/x"], "--host is for autotools"),
        (["--cross-file", "{tmp}/none.ini", "{src}", "{tmp}/b", "/opt/x"], "not a readable file"),
        (["--cross-file", "{src}/meson.build", "{src}", "{tmp}/b", "/opt/x"], "needs --deb-arch"),
        (["--deb-arch", "Risc V", "{src}", "{tmp}/b", "/opt/x"], "not a Debian architecture"),
        (["--jobs", "0", "{src}", "{tmp}/b", "/opt/x"], "not a number"),
        (
            ["--cross-file", "{src}/meson.build", "--host", "x-y", "{src}", "{tmp}/b", "/opt/x"],
            "exclude each other",
        ),
    ],
)
def test_bad_arguments_exit_2_before_anything_is_built(
    tmp_path: Path, meson_tree: Path, args: list[str], message: str
) -> None:
    filled = [a.format(src=meson_tree, tmp=tmp_path) for a in args]
    done = _script(*filled)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not (tmp_path / "b" / "src").exists()


def test_a_non_empty_build_dir_is_refused(tmp_path: Path, meson_tree: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "left-over").write_text("")
    done = _script(str(meson_tree), str(tmp_path / "b"), "/opt/x")
    assert done.returncode == 2
    assert "is not empty" in done.stderr


def test_an_autotools_tree_without_configure_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "gnunet-git"
    tree.mkdir()
    (tree / "configure.ac").write_text("AC_INIT([gnunet], [0.20.0])\n")
    done = _script(str(tree), str(tmp_path / "b"), "/opt/x")
    assert done.returncode == 2
    assert "release tarball" in done.stderr


@pytest.mark.skipif(shutil.which("dpkg-buildflags") is None, reason="needs dpkg-dev")
@pytest.mark.parametrize("version", ["unknown", "0.27", "last-gnunet-0.20-compatible-2-g9a9c588a6"])
def test_a_version_gnunet_cannot_declare_is_refused_and_the_tree_is_left_alone(
    tmp_path: Path, meson_tree: Path, version: str
) -> None:
    (meson_tree / ".version").write_text(version + "\n")
    before = sorted((p.name, p.read_bytes()) for p in meson_tree.iterdir())
    done = _script(str(meson_tree), str(tmp_path / "b"), str(tmp_path / "prefix"))
    assert done.returncode == 1
    assert f".version says '{version}', not x.y.z" in done.stderr
    assert sorted((p.name, p.read_bytes()) for p in meson_tree.iterdir()) == before
    assert not (tmp_path / "prefix").exists()


@pytest.mark.skipif(
    shutil.which("dpkg-buildflags") is None or shutil.which("git") is None,
    reason="needs dpkg-dev and git",
)
def test_without_version_file_or_release_tag_the_build_stops(
    tmp_path: Path, meson_tree: Path
) -> None:
    (meson_tree / ".version").unlink()
    subprocess.run(["git", "init", "-q", str(meson_tree)], check=True)
    done = _script(str(meson_tree), str(tmp_path / "b"), str(tmp_path / "prefix"))
    assert done.returncode == 1
    assert "finds no release tag" in done.stderr
    assert not (meson_tree / ".version").exists()
