"""Which crypto library versions a cross-machine figure compares, and saying so.

The shipped matrix measures ppc64le on Debian 12 (libgnunetutil 0.19) and the other
architectures on Debian 13 (0.20), because trixie does not bootstrap for ppc64el on every
mirror. A table putting such machines side by side, or a ratio of one to another, compares
library versions as well as architectures. These pure functions find the differences in
the dpkg versions the harness records (``setup.packages``) so that reports put
:data:`MARK` next to the figures concerned and a note naming the versions under the table.

Only measured results are compared: reference data (the thesis's machines, imported
logs) is published figures with its own Setup box.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from archbench.result import Result

LIBRARIES = ("libgnunetutil", "libgcrypt", "libsodium")
"""The libraries whose versions the blind-signature and sodium figures depend on."""

MARK = "¶"
"""Footnote mark of a column or row whose library versions differ from the others'."""


GNUNET_SOURCE_KINDS = {"tarball": "tarball", "git": "git", "path": "tree"}
"""``Execution.gnunet_source`` kind -> how reports name a source build of it."""


def gnunet_source_kind(result: Result) -> str:
    """Where ``result``'s libgnunetutil came from: ``"Debian package"`` or ``"built from
    tarball"`` / ``"built from git"`` / ``"built from tree"`` (``execution.gnunet_source``)."""
    execution = result.execution
    source = execution.gnunet_source if execution is not None else None
    if not source:
        return "Debian package"
    kind = str(source.get("kind") or "")
    return f"built from {GNUNET_SOURCE_KINDS.get(kind, kind or 'source')}"


def gnunet_version(result: Result) -> str | None:
    """The GNUnet version ``result`` measured, ``"0.20.0"``; None when nothing says.

    The driver's own report first (``setup.gnunet``: the headers' version, which the
    loaded library was checked to match), then the upstream part of the dpkg version
    (``1:0.20.0-7`` -> ``0.20.0``), then pkg-config's (``setup.gnunet_version``), then
    the source build's own (``execution.gnunet_source``: an emulated image without the
    blindsig suite has neither driver nor pkg-config to ask). A library built from a git
    commit or working tree reports its release tag (the source's ``build_version``,
    ``0.22.0``); where it does, the commit's ``git describe`` version
    (``0.22.0-59-g6cc77baa8``) names it instead, so that two commits stay apart.
    """
    setup = result.harness.setup
    execution = result.execution
    source = execution.gnunet_source if execution is not None else None
    version = source.get("version") if source else None
    built_as = source.get("build_version") if source else None

    def named(reported: str) -> str:
        return str(version) if version and built_as and reported == built_as else reported

    if setup.gnunet is not None and setup.gnunet.header_version:
        return named(setup.gnunet.header_version)
    dpkg = setup.packages.get("libgnunetutil")
    if dpkg:
        return dpkg.split(":", 1)[-1].rsplit("-", 1)[0]
    if setup.gnunet_version:
        return named(setup.gnunet_version)
    return str(version) if version else None


def gnunet_label(result: Result) -> str:
    """``"GNUnet 0.20.0"`` (Debian's), ``"GNUnet 0.27.0 built from tarball"``, as headers
    name it; ``"GNUnet unknown"`` when no version is recorded."""
    kind = gnunet_source_kind(result)
    suffix = "" if kind == "Debian package" else f" {kind}"
    return f"GNUnet {gnunet_version(result) or 'unknown'}{suffix}"


def library_versions(result: Result) -> tuple[str, ...]:
    """Versions of :data:`LIBRARIES` in ``result``, ``"unknown"`` when not recorded.

    dpkg versions, except a libgnunetutil built from source (no dpkg version), which is
    its version and source kind (``"0.27.0 built from tarball"``), so that two source
    builds of different versions differ here as two Debian releases do.
    """
    packages = result.harness.setup.packages
    found = [packages.get(lib) or "unknown" for lib in LIBRARIES]
    if gnunet_source_kind(result) != "Debian package":
        found[0] = f"{gnunet_version(result) or 'unknown'} {gnunet_source_kind(result)}"
    return tuple(found)


def release(result: Result) -> str:
    """The OS release in short: ``"Debian 12"`` from ``"Debian GNU/Linux 12 (bookworm)"``.

    Other OS names are returned as recorded; ``"unknown OS"`` when empty.
    """
    os_name = result.harness.setup.os.strip()
    m = re.match(r"Debian GNU/Linux (\d+)", os_name)
    if m:
        return f"Debian {m[1]}"
    return os_name or "unknown OS"


def _measured(results: Mapping[str, Result]) -> dict[str, Result]:
    return {name: r for name, r in results.items() if r.reference is None}


def _describe(results: Mapping[str, Result]) -> str:
    """``libgnunetutil 0.19.3-2 (ppc64le-bookworm, Debian 12) vs 0.20.0-1 (a, b, Debian 13)``."""
    parts = []
    for index, lib in enumerate(LIBRARIES):
        by_version: dict[str, list[str]] = {}
        for name, r in results.items():
            by_version.setdefault(library_versions(r)[index], []).append(name)
        if len(by_version) < 2:
            continue
        sides = []
        for version, names in by_version.items():
            releases = ", ".join(dict.fromkeys(release(results[n]) for n in names))
            sides.append(f"{version} ({', '.join(names)}; {releases})")
        parts.append(f"{lib} " + " vs ".join(sides))
    return "; ".join(parts)


def odd_ones_out(results: Mapping[str, Result]) -> tuple[list[str], str | None]:
    """Columns to mark in a table that puts ``results`` (name -> result) side by side.

    Returns:
        (names, note): the measured machines whose library versions differ from the
        most common set among them (ties: the set of the first machine), in input
        order, and the note naming every differing library's versions (None when all
        measured machines have the same versions).
    """
    measured = _measured(results)
    if not measured:
        return [], None
    counts = Counter(library_versions(r) for r in measured.values())
    first = library_versions(next(iter(measured.values())))
    top = max(counts.values())
    common = first if counts[first] == top else next(v for v, c in counts.items() if c == top)
    odd = [name for name, r in measured.items() if library_versions(r) != common]
    if not odd:
        return [], None
    return odd, f"{MARK} library versions differ between these machines: {_describe(measured)}"


def against_partners(
    results: Mapping[str, Result], partners: Mapping[str, tuple[str, Result]]
) -> tuple[list[str], str | None]:
    """Columns to mark in a table of ratios, each machine's figure against a partner's.

    Args:
        results: machine name -> result, the columns.
        partners: machine name -> (partner name, partner result) the ratio divides by
            (a baseline, the native run an emulated one is read against).

    Returns:
        (names, note): the measured machines whose versions differ from their
        partner's, and one note naming the versions of each such pair (None: none).
    """
    odd: list[str] = []
    pairs: list[str] = []
    for name, r in _measured(results).items():
        partner = partners.get(name)
        if partner is None or partner[1].reference is not None:
            continue
        if library_versions(r) != library_versions(partner[1]):
            odd.append(name)
            pairs.append(_describe({name: r, partner[0]: partner[1]}))
    if not odd:
        return [], None
    return odd, f"{MARK} library versions differ within the ratio: " + "; ".join(
        dict.fromkeys(pairs)
    )


def marked(header: str, name: str, odd: Sequence[str]) -> str:
    """``header`` with :data:`MARK` appended when ``name`` is one of ``odd``."""
    return f"{header} {MARK}" if name in odd else header


def summary(result: Result) -> str:
    """``"Debian 12: libgnunetutil 0.19.3-2, libgcrypt 1.10.1-3, libsodium 1.0.18-1"``."""
    versions = ", ".join(
        f"{lib} {v}" for lib, v in zip(LIBRARIES, library_versions(result), strict=True)
    )
    return f"{release(result)}: {versions}"
