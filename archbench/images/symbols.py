"""Symbol files for Debian's stripped libraries: the functions inside libgcrypt, libsodium, libc.

Counts run on Debian's own libgcrypt, libsodium and libc, which Debian strips to their
exported symbols; the plugin's attribution then names their internal functions
``(no symbol) after <exported function>``. The symbols image
(``archbench/symbols:<arch>-<hash>``, ``images/symbols/Dockerfile.j2``) holds what names
them, made on the engine's own architecture (amd64) from the base of the target's Debian
release:

* for libgcrypt20 and libsodium23: the same Debian source package version as installed
  in the benchmark image, rebuilt with ``DEB_BUILD_OPTIONS=nostrip`` (Debian's own
  flags and optimisation otherwise), cross-built for an emulated target
  (``images/symbols/build-symbols.sh rebuild``); the library is kept with its
  ``.symtab`` and without debug sections. Where the cross build's code is not Debian's,
  the package is built natively under QEMU user emulation instead, in an image of the
  target's platform over the target's own base (``archbench/symbols-emulated:<arch>-<hash>``,
  :func:`plan_emulated`), with Debian's own tool chain for it (:data:`EMULATED`, one entry
  per (architecture, package) with why; :func:`build_method`): armv7's libgcrypt20,
  whose cross-linked Thumb-to-ARM interworking stubs are laid out otherwise than
  Debian's native armhf build's (built natively, its code sections are byte-identical).
  That image took 51 min cold at load 4-14 on 2 cores, against 3-4 min for a cross
  build, so everything that cross-builds identical stays cross;
* for libc: Debian's ``libc6-dbg`` of the installed version (detached debug files by
  build-id, ``build-symbols.sh dbg``).

:func:`ensure_symbols` builds (or reuses) both images and merges their files. The
counting layer copies them to ``/opt/archbench/counter/symbols`` with a
``symbols.json`` manifest (each file's source package, version, architecture, how it was
made; and the packages that could not be rebuilt, with why). The harness uses a symbol
file only when its code is the installed library's (``harness/abh/suites/count_symbols.py``,
:class:`SymbolStore`) and records every file used or refused with the reason; nothing of
the benchmark image changes.

The image's hash covers the installed versions (read from the benchmark image's dpkg
status through the engine, no container started), the amd64 base's id, the script, how
each package is built (the Dockerfile) and, when a stage is built under emulation, the
target base's id:
it is built once per architecture, Debian release and library versions, and reused by
every later run. It is optional: when it cannot be built (no network, no cross
toolchain), counting goes on with the libraries' own tables and says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

import jinja2

from archbench import REPO_ROOT
from archbench.images.bases import ensure_base
from archbench.images.builder import Builder, ImageSpec, digest, ensure_image, image_files
from archbench.matrix import Base
from archbench.platforms import Arch

SYMBOLS_DIR = REPO_ROOT / "images" / "symbols"
SCRIPT = "build-symbols.sh"
REBUILT: tuple[tuple[str, str], ...] = (
    ("libgcrypt20", "libgcrypt.so.20.*"),
    ("libsodium23", "libsodium.so.23.*"),
)
"""``(binary package, library file glob)`` rebuilt unstripped from their source package."""
EMULATED: Mapping[Arch, frozenset[str]] = {
    # armhf libgcrypt20: cross-built on amd64, 52 of its 611,584 .text bytes differ from
    # Debian's (trixie, 1.11.0-7+deb13u1), all in the Thumb-to-ARM interworking stubs
    # (``___gcry_*_from_thumb``) the linker adds for the ARM-mode assembly (SHA-1/256/512,
    # AES, Keccak, GHASH) and the ``b.w`` branches into them: the cross linker lays the
    # stubs out in another order than Debian's native armhf build, so the exact-code
    # check refuses the file. Built with Debian's own armhf tool chain under QEMU instead.
    # armhf libsodium23's cross build is identical to Debian's and stays cross.
    Arch.ARMV7: frozenset({"libgcrypt20"}),
}
"""Per target, the binary packages of :data:`REBUILT` rebuilt natively under QEMU user
emulation (a container of the target's own base, run through binfmt_misc) rather than
cross-built on amd64, with why. Much slower (armv7's libgcrypt: 51 min cold at load
4-14 on 2 cores, against 3-4 min cross): only where the cross build's code is not Debian's."""
DEBUG_PACKAGES: tuple[tuple[str, str], ...] = (("libc6", "libc6-dbg"),)
"""``(binary package, its -dbg package)`` whose detached debug files Debian ships."""
MANIFEST = "symbols.json"
"""The manifest's name in the counting layer's ``symbols/`` (the harness reads it)."""
_VERSION = re.compile(r"^[0-9][A-Za-z0-9.+~:-]*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9.+-]+$")


@dataclass(frozen=True)
class Installed:
    """One installed binary package: its ``version`` and its ``source`` package and
    ``source_version`` (dpkg's ``Source: name (version)``; both the binary's when absent)."""

    package: str
    version: str
    source: str
    source_version: str


def installed_packages(status: str, wanted: tuple[str, ...]) -> dict[str, Installed]:
    """The ``wanted`` packages installed according to a dpkg status file's text.

    Only stanzas with ``Status: install ok installed`` count; a package installed for
    several architectures (multiarch) keeps its first stanza. Names and versions that are
    not Debian's grammar are left out (they would reach a shell command).

    Returns:
        ``{package: Installed}`` for the wanted packages found.
    """
    out: dict[str, Installed] = {}
    for stanza in re.split(r"\n\s*\n", status):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line[:1] in (" ", "\t") or ":" not in line:
                continue
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
        name = fields.get("Package", "")
        if name not in wanted or name in out:
            continue
        if fields.get("Status") != "install ok installed":
            continue
        version = fields.get("Version", "")
        source, source_version = name, version
        if "Source" in fields:
            m = re.fullmatch(r"(\S+)(?:\s+\((\S+)\))?", fields["Source"])
            if m is None:
                continue
            source = m.group(1)
            source_version = m.group(2) or version
        if not all(_VERSION.match(v) for v in (version, source_version)):
            continue
        if not all(_NAME.match(n) for n in (name, source)):
            continue
        out[name] = Installed(name, version, source, source_version)
    return out


BuildMethod: TypeAlias = Literal["native", "cross", "emulated"]
"""How a package of :data:`REBUILT` is rebuilt for a target (:func:`build_method`)."""


def build_method(arch: Arch, package: str) -> BuildMethod:
    """How ``package`` of :data:`REBUILT` is rebuilt for ``arch``.

    Returns:
        ``"native"`` on amd64 (the engine's own architecture), ``"emulated"`` where
        :data:`EMULATED` names it (natively under QEMU), ``"cross"`` otherwise.
    """
    if arch == Arch.AMD64:
        return "native"
    return "emulated" if package in EMULATED.get(arch, frozenset()) else "cross"


def _render(**values: object) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(SYMBOLS_DIR),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701  # a Dockerfile, not HTML
    )
    return env.get_template("Dockerfile.j2").render(**values)


def _rebuilds(
    arch: Arch, installed: Mapping[str, Installed], method: set[BuildMethod]
) -> list[tuple[str, str, str, str]]:
    """``(source, source version, binary package, library glob)`` of the installed packages
    of :data:`REBUILT` whose :func:`build_method` for ``arch`` is in ``method``."""
    return [
        (installed[pkg].source, installed[pkg].source_version, pkg, glob)
        for pkg, glob in REBUILT
        if pkg in installed and build_method(arch, pkg) in method
    ]


def plan_symbols(
    arch: Arch, build_base_tag: str, build_base_id: str, installed: Mapping[str, Installed]
) -> ImageSpec | None:
    """The symbols image for ``arch`` over the amd64 base ``build_base_tag`` of the same
    release, for the ``installed`` versions (:func:`installed_packages`): every package of
    :data:`REBUILT` but those built under emulation (:func:`plan_emulated`), and
    :data:`DEBUG_PACKAGES`.

    Returns None when none of them is installed.
    """
    rebuilds = _rebuilds(arch, installed, {"native", "cross"})
    debug = [(dbg, installed[pkg].version) for pkg, dbg in DEBUG_PACKAGES if pkg in installed]
    if not rebuilds and not debug:
        return None
    cross = arch != Arch.AMD64
    dockerfile = _render(
        platform=arch.platform,
        build_platform=Arch.AMD64.platform,
        build_base=build_base_tag,
        deb_arch=arch.debian_arch,
        triplet=arch.value.triplet,
        cross=cross,
        emulated=False,
        rebuilds=rebuilds,
        debug=debug,
    )
    script = (SYMBOLS_DIR / SCRIPT).read_bytes()
    return ImageSpec(
        "archbench/symbols",
        Arch.AMD64,
        dockerfile,
        ((SCRIPT, script),),
        digest(dockerfile.encode(), build_base_id.encode(), script),
        for_arch=arch,
        modes=((SCRIPT, 0o755),),
    )


def plan_emulated(
    arch: Arch, target_base_tag: str, target_base_id: str, installed: Mapping[str, Installed]
) -> ImageSpec | None:
    """The image of ``arch``'s own platform over its base ``target_base_tag`` that rebuilds
    the installed packages :data:`EMULATED` names for ``arch``, natively under QEMU user
    emulation (``archbench/symbols-emulated:<arch>-<hash>``; same template and script).

    Returns None when none of them is installed.
    """
    rebuilds = _rebuilds(arch, installed, {"emulated"})
    if not rebuilds:
        return None
    dockerfile = _render(
        platform=arch.platform,
        build_platform=arch.platform,
        build_base=target_base_tag,
        deb_arch=arch.debian_arch,
        triplet=arch.value.triplet,
        cross=False,
        emulated=True,
        rebuilds=rebuilds,
        debug=[],
    )
    script = (SYMBOLS_DIR / SCRIPT).read_bytes()
    return ImageSpec(
        "archbench/symbols-emulated",
        arch,
        dockerfile,
        ((SCRIPT, script),),
        digest(dockerfile.encode(), target_base_id.encode(), script),
        modes=((SCRIPT, 0o755),),
    )


def manifest(origins: str, failures: str) -> dict[str, object]:
    """``symbols.json`` from the script's ``origins.tsv`` and ``failures.tsv``.

    Returns:
        ``{"files": {path: {"source", "version", "arch", "how"}}, "failed":
        [{"package", "version", "reason"}]}``.
    """
    files: dict[str, dict[str, str]] = {}
    for line in origins.splitlines():
        parts = line.split("\t")
        if len(parts) == 5:
            path, source, version, arch, how = parts
            files[path] = {"source": source, "version": version, "arch": arch, "how": how}
    failed = [
        {"package": p[0], "version": p[1], "reason": p[2]}
        for p in (line.split("\t", 2) for line in failures.splitlines())
        if len(p) == 3
    ]
    return {"files": files, "failed": failed}


@dataclass(frozen=True)
class SymbolFiles:
    """The symbols image present on the engine: its tag, id and the counting layer's
    files (``(context path under counter/symbols/, bytes, mode)``)."""

    tag: str
    image_id: str
    files: tuple[tuple[str, bytes, int], ...]
    reused: bool


def dpkg_status(builder: Builder, image: str) -> str:
    """The dpkg status file of ``image`` (read through the engine, nothing started)."""
    found = image_files(builder.client, image, "/var/lib/dpkg/status")
    return next(iter(found.values()))[0].decode("utf-8", "replace") if found else ""


def ensure_symbols(
    builder: Builder, bench_tag: str, arch: Arch, base_name: str, base: Base
) -> SymbolFiles | None:
    """Build (or reuse) the symbols image for the benchmark image ``bench_tag`` and, where
    a package is built under emulation (:data:`EMULATED`), the emulated image; merge the
    files of both (``SymbolFiles.tag``: their tags joined by `` + ``; ``image_id``: their
    ids joined by ``+``).

    ``base_name``/``base``: the target's base in the matrix; its amd64 twin is the
    build's base (the one the cross stages use), the base itself the emulated image's.
    Logs: ``symbols-<arch>.build.log``, ``symbols-emulated-<arch>.build.log``.

    Returns:
        None when the base is not a Debian bootstrap or nothing to name is installed.

    Raises:
        BaseImageError: the amd64 base (or the target's) cannot be bootstrapped.
        ImageBuildError: the build fails (no network, no cross toolchain; log kept).
    """
    if base.source != "bootstrap":
        return None
    installed = installed_packages(
        dpkg_status(builder, bench_tag), tuple(p for p, _ in REBUILT + DEBUG_PACKAGES)
    )
    build_base = ensure_base(builder, base_name, base, Arch.AMD64)
    specs = [plan_symbols(arch, build_base.tag, build_base.image_id, installed)]
    if _rebuilds(arch, installed, {"emulated"}):
        target_base = ensure_base(builder, base_name, base, arch)
        specs.append(plan_emulated(arch, target_base.tag, target_base.image_id, installed))
    built = [spec for spec in specs if spec is not None]
    if not built:
        return None
    texts: dict[str, str] = {}
    files: list[tuple[str, bytes, int]] = []
    ids: list[str] = []
    reused = True
    for spec in built:
        log = f"symbols-{'emulated-' if spec.for_arch is None else ''}{arch.key}.build.log"
        image_id, was_reused = ensure_image(builder, spec, log)
        ids.append(image_id)
        reused = reused and was_reused
        for name, (blob, _) in image_files(builder.client, spec.tag, "/out").items():
            name = name.removeprefix("out/")
            if name.endswith(".tsv"):
                texts[name] = texts.get(name, "") + blob.decode("utf-8", "replace")
            else:
                files.append((f"counter/symbols/{name}", blob, 0o644))
    tag = " + ".join(spec.tag for spec in built)
    meta = manifest(texts.get("origins.tsv", ""), texts.get("failures.tsv", ""))
    meta["image"] = tag
    files.append((f"counter/symbols/{MANIFEST}", json.dumps(meta, indent=2).encode(), 0o644))
    return SymbolFiles(tag, "+".join(ids), tuple(sorted(files)), reused)
