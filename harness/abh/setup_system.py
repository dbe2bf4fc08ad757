"""``setup`` of the harness document: OS, kernel, packages, driver build; collect_setup().

Reads os-release(5), ``uname``, the dpkg database (the package that owns each
library behind the drivers, found by its shared object), ``pkg-config`` and
``gcc --version``, and the ``build-info.txt`` the Makefile writes next to the
blindsig driver. collect_setup() joins them with the CPU part
(``setup_cpu``) into the document's ``setup`` object. Helper commands that
fail or are missing give None, never an exception.

Standard library only: this runs under the distribution's ``python3`` inside
the benchmark image.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypedDict

from abh import setup_cpu
from abh.setup_cpu import CpuLimitsDict
from abh.suites.blindsig_output import meta_int

BUILD_INFO_NAME = "build-info.txt"
GNUNET_BUILD_INFO = Path("/opt/gnunet/build-info.txt")
"""What ``images/gnunet-source/build-libgnunetutil.sh`` wrote about a libgnunetutil built
from source into the image's ``/opt/gnunet`` (absent for Debian's package)."""

# Packages are found by the shared library they ship, because the package
# names carry sonames and t64 suffixes that change between releases
# (libgnunet0.19, libgnunet0.20t64, libsodium23, libsodium26, ...).
PACKAGE_LIBRARY_GLOBS: dict[str, str] = {
    "libgnunetutil": "*/libgnunetutil.so.*",
    "libsodium": "*/libsodium.so.*",
    "libgcrypt": "*/libgcrypt.so.*",
    "openssl": "*/libssl.so.*",
}
# Packages whose name is stable: key -> dpkg package name.
PACKAGE_NAMES: dict[str, str] = {"gcc": "gcc"}

OS_RELEASE_PATHS: tuple[Path, ...] = (Path("/etc/os-release"), Path("/usr/lib/os-release"))


class GnunetDict(TypedDict):
    """``setup.gnunet``: which GNUnet the blindsig driver measured, as it reports it."""

    library_version: str | None
    header_version: str | None
    build_version: str | None
    bsig_api: str | None
    known_answers: list[str] | None
    known_answers_taler: list[str] | None
    taler_layer: str | None
    source_build: dict[str, str] | None


def gnunet_from_meta(
    driver_meta: Mapping[str, str], source_build: dict[str, str] | None = None
) -> GnunetDict | None:
    """``setup.gnunet`` from the blindsig driver's ``meta`` lines; None without a driver run.

    ``source_build``: the source build's ``build-info.txt`` (:data:`GNUNET_BUILD_INFO`:
    ``kind``, ``version``, ``header_version``, ``cflags``, ``prefix``, ``build_seconds``),
    None for Debian's package.

    ``known_answers``/``known_answers_taler`` are the comma-separated schemes
    whose checks passed (``"CS,RSA"`` -> ``["CS", "RSA"]``); a meta line the
    driver did not print is None (``--build-info`` runs no checks; drivers
    before the layer print no ``known_answers_taler``).
    """
    if not driver_meta:
        return None

    def text(key: str) -> str | None:
        value = driver_meta.get(key, "").strip()
        return value if value and value != "unknown" else None

    def schemes(key: str) -> list[str] | None:
        if key not in driver_meta:
            return None
        return [s for s in driver_meta[key].split(",") if s]

    return {
        "library_version": text("gnunet_library_version"),
        "header_version": text("gnunet_header_version"),
        "build_version": text("gnunet_build_version"),
        "bsig_api": text("gnunet_bsig_api"),
        "known_answers": schemes("known_answers"),
        "known_answers_taler": schemes("known_answers_taler"),
        "taler_layer": text("taler_layer"),
        "source_build": source_build,
    }


class SetupDict(TypedDict):
    """``setup`` of the document.

    Everything after ``packages`` is an addition to the version 1 contract
    (allowed without a version bump).
    """

    cpu_model: str
    cores: int
    machine: str
    kernel: str
    os: str
    packages: dict[str, str | None]
    package_names: dict[str, str | None]
    gnunet_version: str | None
    gcc_version: str | None
    clock_resolution_ns: int | None
    build: dict[str, str]
    cpu_flags: list[str]
    cpu_affinity: list[int] | None
    cpu_limits: CpuLimitsDict | None
    load_average: list[float] | None
    tools: dict[str, str]
    gnunet: GnunetDict | None


def parse_os_release(text: str) -> dict[str, str]:
    """Parse os-release(5) text into a dict.

    Handles comments, blank lines, unquoted values and single- or
    double-quoted values with backslash escapes inside double quotes.
    Malformed lines are skipped.

    Args:
        text: contents of an os-release file.

    Returns:
        Variable name -> unquoted value.
    """
    result: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.isidentifier():
            continue
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1]
        elif len(value) >= 2 and value[0] == value[-1] == '"':
            chars: list[str] = []
            escaped = False
            for ch in value[1:-1]:
                if escaped or ch != "\\":
                    chars.append(ch)
                    escaped = False
                else:
                    escaped = True
            value = "".join(chars)
        result[name] = value
    return result


def read_os_name(paths: Sequence[Path] = OS_RELEASE_PATHS) -> str:
    """Describe the OS from the first readable os-release file.

    Returns:
        PRETTY_NAME, else "NAME VERSION", else "unknown".
    """
    for path in paths:
        try:
            info = parse_os_release(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if info.get("PRETTY_NAME"):
            return info["PRETTY_NAME"]
        name = " ".join(v for v in (info.get("NAME"), info.get("VERSION")) if v)
        if name:
            return name
    return "unknown"


def kernel_string(uname: os.uname_result) -> str:
    """Format ``uname`` like ``uname -srv``: "Linux 6.1.0-28-amd64 #1 SMP ..."."""
    return f"{uname.sysname} {uname.release} {uname.version}"


def _run_quiet(argv: Sequence[str], timeout_s: float = 60.0) -> str | None:
    """Run a helper command; return its stripped stdout, or None on any failure.

    Args:
        argv: command and arguments.
        timeout_s: seconds before giving up.
    """
    try:
        proc = subprocess.run(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip()


def parse_dpkg_search(text: str, native_arch: str | None = None) -> str | None:
    """Pick the package that owns a library from ``dpkg -S`` output.

    Lines look like ``libsodium23:amd64: /usr/lib/x86_64-linux-gnu/libsodium.so.23``
    (several packages may be listed comma-separated; ``diversion`` lines are
    skipped). With several candidates, one qualified with ``native_arch`` or
    not qualified at all wins over foreign-architecture ones.

    Args:
        text: stdout of ``dpkg -S <glob>``.
        native_arch: ``dpkg --print-architecture``, e.g. "amd64"; None if unknown.

    Returns:
        The package name as dpkg prints it (possibly with ":arch"), or None.
    """
    candidates: list[str] = []
    for line in text.splitlines():
        if line.startswith("diversion ") or ": " not in line:
            continue
        owners = line.split(": ", 1)[0]
        for owner in owners.split(","):
            owner = owner.strip()
            if owner and owner not in candidates:
                candidates.append(owner)
    if not candidates:
        return None
    for owner in candidates:
        _, _, arch = owner.partition(":")
        if not arch or arch == native_arch or arch == "all":
            return owner
    return candidates[0]


def package_versions() -> tuple[dict[str, str | None], dict[str, str | None]]:
    """Find the dpkg packages and versions of the libraries behind the driver.

    Returns:
        (versions, names): both keyed by PACKAGE_LIBRARY_GLOBS and
        PACKAGE_NAMES keys; values are None when dpkg is missing, nothing
        owns the library or the package is not installed.
    """
    native_arch = _run_quiet(["dpkg", "--print-architecture"])
    versions: dict[str, str | None] = {}
    names: dict[str, str | None] = {}
    for key, pattern in PACKAGE_LIBRARY_GLOBS.items():
        found = _run_quiet(["dpkg", "-S", pattern])
        package = parse_dpkg_search(found, native_arch) if found else None
        names[key] = package
        version = None
        if package is not None:
            version = _run_quiet(["dpkg-query", "-W", "-f", "${Version}", package]) or None
        versions[key] = version
    for key, name in PACKAGE_NAMES.items():
        version = _run_quiet(["dpkg-query", "-W", "-f", "${Version}", name]) or None
        versions[key] = version
        names[key] = name if version else None
    return versions, names


def parse_build_info(text: str) -> dict[str, str]:
    """Parse build-info.txt as written by the Makefile: ``key<TAB>value`` lines.

    Returns:
        key -> value (values may be empty); lines without a TAB are skipped.
    """
    info: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if sep and key:
            info[key] = value
    return info


def collect_setup(
    driver_meta: dict[str, str],
    build_info_path: Path,
    load_average: list[float] | None,
    gnunet_build_info: Path = GNUNET_BUILD_INFO,
) -> SetupDict:
    """Describe the machine, OS, libraries and driver build of this run.

    Args:
        driver_meta: ``meta`` lines of the driver run.
        build_info_path: build-info.txt next to the driver (may be missing).
        load_average: setup_cpu.read_load_average() from before the driver started.
        gnunet_build_info: where a source build of libgnunetutil left its build-info.txt.

    Returns:
        The document's ``setup`` object; ``gnunet`` is None when ``driver_meta`` is
        empty (the blindsig suite did not run).
    """
    uname = os.uname()
    versions, names = package_versions()
    gnunet_version = _run_quiet(["pkg-config", "--modversion", "gnunetutil"])
    if not gnunet_version:
        build_version = driver_meta.get("gnunet_build_version")
        gnunet_version = build_version if build_version not in (None, "", "unknown") else None
    try:
        build = parse_build_info(build_info_path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        build = {}
    try:
        text = gnunet_build_info.read_text(encoding="utf-8", errors="replace")
        source_build: dict[str, str] | None = parse_build_info(text[:65536])
    except OSError:
        source_build = None
    gcc = _run_quiet(["gcc", "--version"])
    return {
        "cpu_model": setup_cpu.read_cpu_model(),
        "cores": os.cpu_count() or 1,
        "machine": uname.machine,
        "kernel": kernel_string(uname),
        "os": read_os_name(),
        "packages": versions,
        "package_names": names,
        "gnunet_version": gnunet_version,
        "gcc_version": gcc.splitlines()[0] if gcc else None,
        "clock_resolution_ns": meta_int(driver_meta, "clock_resolution_ns"),
        "build": build,
        "cpu_flags": setup_cpu.read_cpu_flags(),
        "cpu_affinity": setup_cpu.read_cpu_affinity(),
        "cpu_limits": setup_cpu.read_cpu_limits(),
        "load_average": load_average,
        "tools": {},
        "gnunet": gnunet_from_meta(driver_meta, source_build),
    }
