"""Benchmark images: base + dependency profile + harness, tagged by content hash.

The Dockerfile is rendered from ``images/Dockerfile.j2`` with Jinja2. The
tag is ``archbench/bench:<arch>-<hash>`` where the hash covers every input:
the rendered Dockerfile, the base image id, the platform, the package list
and the bytes of every harness source file. An unchanged target is never
rebuilt; any change to an input always is. The harness is copied into the
image (no bind mount), so the same context builds on a remote engine.

The image stage of one target (:func:`ensure_target_image`) cross-compiles the
drivers where it can. :func:`prepare_cross` decides
(:func:`archbench.images.cross.plan_cross`) whether an emulated target's drivers
are cross-compiled and makes sure the engine-native base of the same release
exists. The cross stage is an image of its own (``archbench/cross:<arch>-<hash>``,
on the engine's architecture: the classic builder cannot mix platforms in one
Dockerfile, :func:`plan_cross_image`); its ``/opt/archbench/harness`` is read out
through the API and the benchmark image is built with those files in its
context. When the cross stage fails (a release without a cross toolchain or
``-dev`` package for that architecture) the stage says so, notes the failure in
the work directory so later runs go straight to the fallback, and builds the
image with the drivers compiled inside the emulated image.

Planning a spec (``plan_*``, ``render_*``, ``*_files``) is pure; building goes
through :func:`archbench.images.builder.ensure_image`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import jinja2

from archbench import REPO_ROOT
from archbench.errors import ImageBuildError
from archbench.images import bases
from archbench.images import cross as cross_mod
from archbench.images.builder import (
    Builder,
    ContextData,
    ImageSpec,
    digest,
    ensure_image,
    image_files,
)
from archbench.inputs import IMAGE_REFERENCE
from archbench.matrix import Base
from archbench.platforms import Arch
from archbench.sources import ContextFile, ResolvedSource

TEMPLATE_DIR = REPO_ROOT / "images"
HARNESS_DIR = REPO_ROOT / "harness"
OUT_DIR = "/opt/archbench/harness"
"""Where the cross stage leaves the drivers, build-info.txt and runtime-packages.txt."""

# Only sources go into the image: a stale local build of the driver must not
# change the hash or shadow the in-image build.
_HARNESS_PATTERNS = ("*.c", "*.h", "*.py", "Makefile", "*.json", "*.md", "count-key-rsa-*.key")


GNUNET_PREFIX = "/opt/gnunet"
"""Where a benchmark image built from a GNUnet source installs libgnunetutil."""
GNUNET_TAR = "/opt/archbench/gnunet-prefix.tar"
"""Where a cross stage leaves :data:`GNUNET_PREFIX` packed (context ``cross/gnunet-prefix.tar``)."""
GNUNET_BUILD_PACKAGES = (
    "gcc",
    "make",
    "pkgconf",
    "dpkg-dev",
    "python3",
    "meson",
    "ninja-build",
    "libltdl-dev",
    "libunistring-dev",
    "libsqlite3-dev",
    "libcurl4-gnutls-dev",
    "zlib1g-dev",
    "libmicrohttpd-dev",
    "libjansson-dev",
    "libgcrypt20-dev",
    "libgmp-dev",
    "libsodium-dev",
    "libidn2-dev",
)
"""What ``images/gnunet-source/build-libgnunetutil.sh`` needs to build libgnunetutil
(meson releases and autotools tarballs alike)."""


TALER_PREFIX = "/opt/taler"
"""Where a benchmark image with a ``taler:`` source installs the exchange's ``src/util``."""
TALER_TREE = "/opt/archbench/taler/exchange"
"""Where the exchange's build tree stays in the image: the harness's taler-helper suite runs
``src/util/test_helper_*`` there (``harness/abh/suites/taler_helper.py``)."""
TALER_TAR = "/opt/archbench/taler-prefix.tar"
"""Where a cross stage leaves :data:`TALER_PREFIX` and :data:`TALER_TREE` packed, as paths
from ``/`` (context ``cross/taler-prefix.tar``, unpacked at ``/`` by the emulated stage)."""
TALER_BUILD_PACKAGES = (
    "gcc",
    "make",
    "pkgconf",
    # The exchange's bootstrap tools, the same natively as on a cross stage's build side.
    *cross_mod.TALER_NATIVE_TOOLS,
    "libgcrypt20-dev",
    "libsodium-dev",
    "libunistring-dev",
    "libltdl-dev",
    "libidn2-dev",
    "zlib1g-dev",
    "libsqlite3-dev",
    "libcurl4-gnutls-dev",
    "libmicrohttpd-dev",
    "libjansson-dev",
    "libgmp-dev",
    "libgnutls28-dev",
    "libpq-dev",
)
"""What ``images/taler-source/build-taler-exchange.sh`` and GNUnet's json, curl and pq
libraries need (configure stops without Python's jinja2 and, for 0.14.x, ``jq``;
``libpq-dev`` is a configure check only: no PostgreSQL runs)."""


@dataclasses.dataclass(frozen=True)
class TalerBuild:
    """A GNU Taler exchange source whose ``src/util`` a benchmark image builds."""

    resolved: ResolvedSource
    tar: ContextData
    """The prepared tree packed (:func:`archbench.sources.pack_build_tree`):
    a :class:`~archbench.sources.ContextFile` on disk, never read whole."""

    def provenance(self, template_dir: Path = TEMPLATE_DIR) -> dict[str, str | bool | None]:
        """:meth:`ResolvedSource.provenance` plus ``build_script_sha256`` (of
        ``images/taler-source/build-taler-exchange.sh``) and ``prefix``."""
        script = template_dir / "taler-source" / "build-taler-exchange.sh"
        return {
            **self.resolved.provenance(),
            "prefix": TALER_PREFIX,
            "build_script_sha256": hashlib.sha256(script.read_bytes()).hexdigest(),
        }


def taler_source_files(
    build: TalerBuild | None, template_dir: Path = TEMPLATE_DIR
) -> tuple[tuple[str, ContextData], ...]:
    """Context files of an exchange build: its tree's tar and the build script (none for
    ``None``)."""
    if build is None:
        return ()
    script = template_dir / "taler-source" / "build-taler-exchange.sh"
    return (
        ("taler-source/build-taler-exchange.sh", script.read_bytes()),
        ("taler-source/taler-src.tar", build.tar),
    )


@dataclasses.dataclass(frozen=True)
class GnunetBuild:
    """A GNUnet source to build libgnunetutil from inside a benchmark image."""

    resolved: ResolvedSource
    tar: ContextData
    """The prepared tree packed (:func:`archbench.sources.pack_build_tree`):
    a :class:`~archbench.sources.ContextFile` on disk, never read whole."""
    build_system: str = "meson"
    """``meson`` or ``autotools``, as :func:`~archbench.sources.prepare_build_tree`
    found the tree."""
    changes: tuple[str, ...] = ()
    """What archbench changed in its copy of the tree (``BuildTree.changes``), one phrase each."""
    prefix: ContextFile | None = None
    """The installed prefix, built already by the incremental path
    (:func:`archbench.images.incremental.build_incremental`) and packed reproducibly: the
    image (or the cross stage) unpacks it instead of building the source. None: the image
    builds it."""
    incremental: dict[str, str | bool | None] | None = None
    """How the incremental path built :attr:`prefix` (``IncrementalBuild.provenance``)."""

    def provenance(self, template_dir: Path = TEMPLATE_DIR) -> dict[str, str | bool | None]:
        """:meth:`ResolvedSource.provenance` plus how it was built (``Execution.gnunet_source``).

        Added keys: ``build_system``; ``changes`` (archbench's changes to its copy of the
        tree, ``"; "``-joined, None for none); ``build_script_sha256`` (sha256 of
        ``images/gnunet-source/build-libgnunetutil.sh``, the one recipe every source build
        runs: archbench applies no patch to GNUnet's sources). From the incremental path
        also ``build_mode`` (``clean`` or ``incremental``) and ``build_reason``,
        ``build_tree``, ``ccache_hits``, ``ccache_misses``, ``build_seconds``,
        ``prefix_sha256``, ``toolchain_image`` (numbers as decimal strings); a build inside
        ``docker build`` (from nothing) has none of these.
        """
        script = template_dir / "gnunet-source" / "build-libgnunetutil.sh"
        return {
            **self.resolved.provenance(),
            "build_system": self.build_system,
            "changes": "; ".join(self.changes) or None,
            "build_script_sha256": hashlib.sha256(script.read_bytes()).hexdigest(),
            **(self.incremental or {}),
        }


def source_packages(packages: tuple[str, ...]) -> tuple[str, ...]:
    """A profile's packages for an image that builds GNUnet from source.

    ``libgnunet*`` are left out: 0.21's ``libgnunetutil.so.15`` is the soname of
    Debian's 0.19/0.20 (images/gnunet-source/README.md), so the driver could load
    either. :data:`GNUNET_BUILD_PACKAGES` not in the profile follow its own, in order.
    """
    kept = tuple(p for p in packages if not p.startswith("libgnunet"))
    return kept + tuple(p for p in GNUNET_BUILD_PACKAGES if p not in kept)


def gnunet_source_files(
    build: GnunetBuild | None, template_dir: Path = TEMPLATE_DIR
) -> tuple[tuple[str, ContextData], ...]:
    """Context files of a source build: the tree's tar and the build script (none for
    ``None``, the base's packaged libgnunetutil)."""
    if build is None:
        return ()
    if build.prefix is not None:
        return (("gnunet-source/gnunet-prefix.tar", build.prefix),)
    script = template_dir / "gnunet-source" / "build-libgnunetutil.sh"
    return (
        ("gnunet-source/build-libgnunetutil.sh", script.read_bytes()),
        ("gnunet-source/gnunet-src.tar", build.tar),
    )


def gnunet_source_line(build: GnunetBuild | None) -> str:
    """What a Dockerfile names a GNUnet source by: its content key, or for a prefix
    built already, the prefix's sha256 (the same bits give the same image, whatever
    source they came from; the result's provenance names the source). ``""``: none."""
    if build is None:
        return ""
    if build.prefix is not None:
        return f"prefix {build.prefix.path.stem}"
    return build.resolved.content_key


def harness_files(harness_dir: Path = HARNESS_DIR) -> tuple[tuple[str, bytes], ...]:
    """Harness sources as ``(context path, bytes)``, sorted by path: the whole tree
    (``harness/drivers/blindsig.c``), not only its top folder.

    Raises:
        FileNotFoundError: ``harness_dir`` has no sources.
    """
    found = sorted({p for pat in _HARNESS_PATTERNS for p in harness_dir.rglob(pat) if p.is_file()})
    if not found:
        raise FileNotFoundError(f"no harness sources in {harness_dir}")
    return tuple(
        (f"harness/{p.relative_to(harness_dir).as_posix()}", p.read_bytes()) for p in found
    )


def harness_sha256(harness_dir: Path = HARNESS_DIR) -> str:
    """sha256 (hex) over the harness sources an image is built with (:func:`harness_files`:
    every driver, the Makefile, the Python harness, the counting keys), path by path
    (:func:`archbench.images.builder.digest`): a result counted with another driver or
    harness has another digest.

    Raises:
        FileNotFoundError: ``harness_dir`` has no sources.
    """
    parts: list[ContextData] = []
    for path, data in harness_files(harness_dir):
        parts += [path.encode(), data]
    return digest(*parts)


def gnunet_perf_files(
    enabled: bool, template_dir: Path = TEMPLATE_DIR
) -> tuple[tuple[str, bytes], ...]:
    """Context files of the gnunet-perf build (``gnunet-perf/*``), none unless ``enabled``.

    Raises:
        FileNotFoundError: ``images/gnunet-perf`` is missing.
    """
    if not enabled:
        return ()
    found = sorted(p for p in (template_dir / "gnunet-perf").iterdir() if p.is_file())
    if not found:
        raise FileNotFoundError(f"no gnunet-perf build files in {template_dir / 'gnunet-perf'}")
    return tuple((f"gnunet-perf/{p.name}", p.read_bytes()) for p in found)


def render_dockerfile(
    base_tag: str,
    arch: Arch,
    profile: str,
    packages: tuple[str, ...],
    template_dir: Path = TEMPLATE_DIR,
    gnunet_perf: bool = False,
    cross_packages: tuple[str, ...] = (),
    gnunet_source: str = "",
    taler_source: str = "",
    gnunet_prebuilt: bool = False,
) -> str:
    """Render ``Dockerfile.j2`` for one target (with the build of GNUnet's perf programs
    when ``gnunet_perf``).

    ``cross_packages``: the drivers were cross-compiled (:mod:`archbench.images.cross`) and
    are in the context under ``cross/harness/``; the image installs these runtime
    packages instead of ``packages`` and compiles nothing.
    ``gnunet_source``: the content key of a GNUnet source
    (:attr:`~archbench.sources.ResolvedSource.content_key`) whose
    libgnunetutil the image builds into :data:`GNUNET_PREFIX` from the context's
    ``gnunet-source/``; ``""``: the base's packages provide it.
    ``taler_source``: the content key of an exchange source whose ``src/util`` the image
    builds into :data:`TALER_PREFIX` (tree kept at :data:`TALER_TREE`) against that GNUnet.
    ``gnunet_prebuilt``: the context's ``gnunet-source/gnunet-prefix.tar`` is libgnunetutil
    built already (the incremental path): the image unpacks it and builds nothing.

    Raises:
        jinja2.TemplateError: the template is missing or broken.
    """
    return (
        _environment(template_dir)
        .get_template("Dockerfile.j2")
        .render(
            base_image=base_tag,
            platform=arch.platform,
            profile=profile,
            packages=packages,
            gnunet_perf=gnunet_perf,
            cross_packages=cross_packages,
            build_env=cross_mod.build_env(arch),
            gnunet_source=gnunet_source,
            gnunet_prefix=GNUNET_PREFIX,
            gnunet_prebuilt=gnunet_prebuilt,
            taler_source=taler_source,
            taler_prefix=TALER_PREFIX,
            taler_tree=TALER_TREE,
        )
    )


def render_cross_dockerfile(
    cross: cross_mod.CrossPlan,
    template_dir: Path = TEMPLATE_DIR,
    gnunet_source: str = "",
    taler_source: str = "",
    gnunet_prebuilt: bool = False,
) -> str:
    """Render ``cross/Dockerfile.j2``: the cross stage of ``cross.target_arch``'s image.

    ``gnunet_source``: the content key of the GNUnet source the stage builds when
    ``cross.gnunet`` is set (named in the Dockerfile, and so in the stage's hash);
    ``taler_source``: the exchange source's when ``cross.taler`` is set.
    ``gnunet_prebuilt``: libgnunetutil was built already (the incremental path, context
    ``gnunet-source/gnunet-prefix.tar``): the stage unpacks it instead of building it.

    Raises:
        jinja2.TemplateError: the template is missing or broken.
        ValueError: a value would break out of its Dockerfile word or line.
    """
    return (
        _environment(template_dir)
        .get_template("cross/Dockerfile.j2")
        .render(
            cross=cross,
            gnunet_source=gnunet_source,
            gnunet_prebuilt=gnunet_prebuilt,
            gnunet_prefix=GNUNET_PREFIX,
            gnunet_tar=GNUNET_TAR,
            meson_cross_path=cross_mod.MESON_CROSS_PATH,
            taler_source=taler_source,
            taler_prefix=TALER_PREFIX,
            taler_tree=TALER_TREE,
            taler_tar=TALER_TAR,
        )
    )


def _environment(template_dir: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701  # a Dockerfile, not HTML
    )
    env.filters.update(sh=shell_word, ref=image_reference, line=one_line)
    return env


def plan_cross_image(
    cross: cross_mod.CrossPlan,
    build_base_id: str,
    target_status: bytes,
    harness_dir: Path = HARNESS_DIR,
    template_dir: Path = TEMPLATE_DIR,
    gnunet: GnunetBuild | None = None,
    taler: TalerBuild | None = None,
) -> ImageSpec:
    """The :class:`ImageSpec` of a cross stage (``archbench/cross:<target>-<hash>``).

    Built for the engine's architecture (``cross.build_arch``) from
    ``cross.build_base`` (image id ``build_base_id``, part of the hash).
    ``target_status``: ``/var/lib/dpkg/status`` of the target's base image, against
    which the stage resolves the emulated stage's packages (also hashed).
    ``gnunet``: the GNUnet source the stage builds libgnunetutil from (its tree, the
    build script and the meson cross file join the context and the hash); given
    exactly when ``cross.gnunet`` is set. ``taler``: the exchange source the stage
    cross-compiles ``src/util`` from; given exactly when ``cross.taler`` is set.

    Raises:
        ValueError: ``gnunet`` and ``cross.gnunet`` disagree, or ``taler`` and
            ``cross.taler``.
    """
    if (gnunet is None) != (cross.gnunet is None):
        raise ValueError("a cross stage builds a GNUnet source exactly when its plan says so")
    if (taler is None) == cross.taler:
        raise ValueError("a cross stage builds an exchange source exactly when its plan says so")
    dockerfile = render_cross_dockerfile(
        cross,
        template_dir,
        gnunet_source_line(gnunet),
        taler.resolved.content_key if taler is not None else "",
        gnunet_prebuilt=gnunet is not None and gnunet.prefix is not None,
    )
    apt_conf = _environment(template_dir).get_template("cross/target-apt.conf.j2")
    scripts = tuple(
        (f"cross/{name}", (template_dir / "cross" / name).read_bytes())
        for name in ("runtime-packages.sh", "resolve-debs.sh")
    )
    source: tuple[tuple[str, ContextData], ...] = ()
    if gnunet is not None and gnunet.prefix is not None:
        source = gnunet_source_files(gnunet, template_dir)
    elif gnunet is not None:
        meson = cross_mod.meson_cross_file(cross.target_arch).encode()
        source = (*gnunet_source_files(gnunet, template_dir), ("cross/meson-cross.ini", meson))
    files = (
        *harness_files(harness_dir),
        *scripts,
        ("cross/target-apt.conf", apt_conf.render(cross=cross).encode()),
        ("cross/target-status", target_status),
        *source,
        *taler_source_files(taler, template_dir),
    )
    packages = (cross.toolchain, *cross.native_tools, *cross.dev_packages)
    return ImageSpec(
        "archbench/cross",
        cross.build_arch,
        dockerfile,
        files,
        content_hash(dockerfile, build_base_id, cross.build_arch, packages, files),
        for_arch=cross.target_arch,
        profile="cross",
    )


CROSS_PREFIX_END = "COPY cross/target-status "
"""The cross stage's first instruction that needs the target base (its dpkg status)."""


def plan_cross_prefix(spec: ImageSpec, build_base_id: str) -> ImageSpec | None:
    """The cross stage ``spec`` up to its first use of the target base's dpkg status.

    What comes before (the cross toolchain's install, the drivers' compile) needs
    nothing of the target's base, so it can be built while that base bootstraps
    (:func:`warm_cross_stage`): the engine's layer cache then gives the full stage
    those steps, instruction for instruction the same. ``archbench/cross-prefix:
    <target>-<hash>``; None when the Dockerfile has no such instruction.
    """
    lines = spec.dockerfile.splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if line.startswith(CROSS_PREFIX_END)), None)
    if cut is None:
        return None
    dockerfile = "".join(lines[:cut])
    # The status is what is not there yet; files the cut Dockerfile does not copy are
    # in no layer's cache key.
    files = tuple((path, data) for path, data in spec.files if path != "cross/target-status")
    return dataclasses.replace(
        spec,
        repository="archbench/cross-prefix",
        dockerfile=dockerfile,
        files=files,
        content_hash=content_hash(dockerfile, build_base_id, spec.arch, (), files),
        profile=None,
    )


def warm_cross_stage(
    builder: Builder,
    plan: cross_mod.CrossPlan,
    build_base_id: str,
    log_name: str,
    gnunet: GnunetBuild | None = None,
    taler: TalerBuild | None = None,
) -> bool:
    """Build the cross stage's first part (:func:`plan_cross_prefix`) ahead of the stage.

    A cache warmer: False, and nothing raised, when it cannot (a stage without the
    cut, or a build failure; the real stage then builds those steps itself and says
    why in its own log). True when the prefix image is there.
    """
    spec = plan_cross_image(plan, build_base_id, b"", gnunet=gnunet, taler=taler)
    prefix = plan_cross_prefix(spec, build_base_id)
    if prefix is None:
        return False
    try:
        ensure_image(builder, prefix, log_name)
    except ImageBuildError:
        return False
    return True


def shell_word(value: object) -> str:
    """``value`` as one shell word that no character can break out of (``shlex.quote``).

    Raises:
        ValueError: the value holds a NUL or a line break (a Dockerfile RUN
            line cannot carry either safely).
    """
    text = str(value)
    if "\x00" in text or "\n" in text or "\r" in text:
        raise ValueError(f"refusing to put {text!r} into a Dockerfile RUN line")
    return shlex.quote(text)


def image_reference(value: object) -> str:
    """``value`` when it is a Docker image reference or id (``FROM`` line).

    Raises:
        ValueError: anything else.
    """
    text = str(value)
    if not (re.fullmatch(r"sha256:[0-9a-f]{64}", text) or IMAGE_REFERENCE.fullmatch(text)):
        raise ValueError(f"refusing {text!r} as a Dockerfile FROM image")
    return text


def one_line(value: object) -> str:
    """``value`` for a Dockerfile comment: refused if it has a line break or NUL.

    Raises:
        ValueError: the text would end the comment.
    """
    text = str(value)
    if any(ch in text for ch in "\x00\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        raise ValueError(f"refusing {text!r} in a Dockerfile comment")
    return text


def content_hash(
    dockerfile: str,
    base_id: str,
    arch: Arch,
    packages: tuple[str, ...],
    files: tuple[tuple[str, ContextData], ...],
) -> str:
    """sha256 (hex) over every input of a benchmark or cross image, length-prefixed
    (:func:`archbench.images.builder.digest`; a file on disk is read streaming).

    Raises:
        OSError: a :class:`~archbench.sources.ContextFile` cannot be read."""
    parts: list[ContextData] = [dockerfile.encode(), base_id.encode(), arch.platform.encode()]
    parts.append("\n".join(packages).encode())
    for path, data in files:
        parts += [path.encode(), data]
    return digest(*parts)


def plan_image(
    arch: Arch,
    profile: str,
    packages: tuple[str, ...],
    base_tag: str,
    base_id: str,
    harness_dir: Path = HARNESS_DIR,
    template_dir: Path = TEMPLATE_DIR,
    gnunet_perf: bool = False,
    cross: cross_mod.CrossBuild | None = None,
    gnunet: GnunetBuild | None = None,
    taler: TalerBuild | None = None,
) -> ImageSpec:
    """Assemble the :class:`ImageSpec` (and its tag) without touching an engine.

    ``gnunet_perf``: also build GNUnet's perf programs (the ``gnunet-perf`` suite
    runs); the image of a target without that suite is unchanged by it.
    ``cross``: the drivers cross-compiled by a cross stage (their bytes join the
    context and the hash); the image installs only runtime packages.
    ``gnunet``: build libgnunetutil from this source (its content key is in the
    Dockerfile, its tree's bytes in the context, both in the hash) instead of taking
    the profile's ``libgnunet*`` packages (:func:`source_packages`). With ``cross`` the
    cross stage built it (``cross.plan.gnunet``): the image unpacks the stage's
    prefix (``cross/gnunet-prefix.tar``, in ``cross.files``) and builds nothing.
    With both ``gnunet`` and ``gnunet_perf`` the suite runs GNUnet's own
    ``perf_crypto_rsa`` of the same source (built by ``build-libgnunetutil.sh --perf``).

    ``taler``: build the exchange's ``src/util`` from this source against ``gnunet``
    (with GNUnet's json, curl and pq libraries, ``build-libgnunetutil.sh --taler``) or
    against the base's ``libgnunet-dev``, with :data:`TALER_BUILD_PACKAGES`; natively only.

    Raises:
        ValueError: ``gnunet`` with a ``cross`` stage that did not build it, or the
            other way round; ``taler`` with ``cross``.
    """
    if cross is not None and (gnunet is None) != (cross.plan.gnunet is None):
        raise ValueError("the cross stage's GNUnet source is not the image's")
    if cross is not None and (taler is not None) != cross.plan.taler:
        raise ValueError("the cross stage's exchange source is not the image's")
    if gnunet is not None:
        packages = source_packages(packages)
    if taler is not None:
        packages = packages + tuple(p for p in TALER_BUILD_PACKAGES if p not in packages)
    dockerfile = render_dockerfile(
        base_tag,
        arch,
        profile,
        packages,
        template_dir,
        gnunet_perf,
        cross.install if cross is not None else (),
        gnunet_source_line(gnunet),
        taler.resolved.content_key if taler is not None else "",
        gnunet_prebuilt=gnunet is not None and gnunet.prefix is not None,
    )
    files = (
        harness_files(harness_dir)
        + gnunet_perf_files(gnunet_perf and gnunet is None, template_dir)
        + (cross.files if cross is not None else ())
        + gnunet_source_files(gnunet if cross is None else None, template_dir)
        + taler_source_files(taler if cross is None else None, template_dir)
    )
    # The cross-compiled drivers must stay executable in the image.
    modes = tuple((path, 0o755) for path, _ in files if cross_mod.is_driver_path(path))
    return ImageSpec(
        "archbench/bench",
        arch,
        dockerfile,
        files,
        content_hash(dockerfile, base_id, arch, packages, files),
        profile=profile,
        modes=modes,
    )


def prepare_cross(
    builder: Builder,
    *,
    base_name: str,
    base: Base,
    target_arch: Arch,
    engine_arch: Arch,
    packages: tuple[str, ...],
    emulated: bool,
    gnunet_perf: bool,
    gnunet: GnunetBuild | None = None,
    taler: bool = False,
) -> tuple[cross_mod.CrossPlan | None, str]:
    """The cross plan of a target and the image id of its build base (``""`` if none).

    The build base is ``base`` bootstrapped for ``engine_arch``
    (``archbench-base/<name>:amd64``), made once for all targets that need it and
    never rebuilt by ``builder.rebuild``. ``gnunet``: the target builds libgnunetutil
    from this source, in the cross stage (with the source build's packages); ``taler``:
    the stage also cross-compiles the exchange (with the ``-dev`` packages of
    :data:`TALER_BUILD_PACKAGES`).

    Raises:
        BaseImageError: the build base cannot be bootstrapped.
    """
    chosen = source_packages(packages) if gnunet is not None else packages
    if taler:
        chosen += tuple(p for p in TALER_BUILD_PACKAGES if p.endswith("-dev") and p not in chosen)
    plan = cross_mod.plan_cross(
        target_arch,
        engine_arch,
        chosen,
        bases.base_tag(base_name, engine_arch),
        emulated=emulated,
        gnunet_perf=gnunet_perf,
        gnunet=(
            cross_mod.GnunetCross(gnunet.build_system, perf=gnunet_perf)
            if gnunet is not None
            else None
        ),
        taler=taler,
    )
    if plan is None:
        return None, ""
    build_base = bases.ensure_base(
        dataclasses.replace(builder, rebuild=False), base_name, base, engine_arch
    )
    return plan, build_base.image_id


def failure_marker(work_dir: Path, spec: ImageSpec) -> Path:
    """``<work>/cross-failed-<content hash>``: this cross stage failed before."""
    return work_dir / f"cross-failed-{spec.content_hash[:32]}"


def read_out(builder: Builder, image: str, plan: cross_mod.CrossPlan) -> cross_mod.CrossBuild:
    """Read the cross stage's results out of ``image`` (``OUT_DIR``, regular files).

    A stage that built a GNUnet source also hands over its prefix, packed
    (:data:`GNUNET_TAR`, context ``cross/gnunet-prefix.tar``).

    Raises:
        ImageBuildError: the image lacks the drivers, a valid runtime-packages.txt,
            a valid debs.txt or (source builds) the packed prefix.
    """
    found = _top_files(builder, image, OUT_DIR)
    if "blindsig" not in found:
        raise ImageBuildError(f"cross stage {image} has no {OUT_DIR}/blindsig")
    try:
        libraries = cross_mod.parse_runtime_packages(
            found.get("runtime-packages.txt", b"").decode(), plan.debian_arch
        )
        debs = cross_mod.parse_debs(found.pop("debs.txt", b"").decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ImageBuildError(f"cross stage {image}: {exc}") from exc
    files = {f"cross/harness/{name}": data for name, data in found.items()}
    files["cross/debs.txt"] = ("\n".join(debs) + "\n").encode()
    if plan.gnunet is not None:
        prefix = _top_files(builder, image, GNUNET_TAR).get(GNUNET_TAR.rpartition("/")[2])
        if not prefix:
            raise ImageBuildError(f"cross stage {image} has no {GNUNET_TAR}")
        files["cross/gnunet-prefix.tar"] = prefix
    if plan.taler:
        exchange = _top_files(builder, image, TALER_TAR).get(TALER_TAR.rpartition("/")[2])
        if not exchange:
            raise ImageBuildError(f"cross stage {image} has no {TALER_TAR}")
        files["cross/taler-prefix.tar"] = exchange
    return cross_mod.CrossBuild(
        plan,
        str(builder.client.images.get(image).id),
        tuple(sorted(files.items())),
        (*plan.runtime_packages, *libraries),
    )


def _top_files(builder: Builder, image: str, path: str) -> dict[str, bytes]:
    """The regular files at ``path`` in ``image`` (a file, or a directory's own files), by name."""
    found = image_files(builder.client, image, path)
    return {
        name.rpartition("/")[2]: data for name, (data, _) in found.items() if name.count("/") <= 1
    }


def ensure_target_image(
    builder: Builder,
    plan_spec: Callable[[cross_mod.CrossBuild | None], ImageSpec],
    cross_plan: cross_mod.CrossPlan | None,
    build_base_id: str,
    *,
    target_base: str,
    name: str,
    gnunet: GnunetBuild | None = None,
    taler: TalerBuild | None = None,
) -> tuple[ImageSpec, str, bool]:
    """Build or reuse target ``name``'s image; returns ``(spec, image id, reused)``.

    ``plan_spec(cross_build)`` gives the benchmark image's :class:`ImageSpec`
    (:func:`plan_image`); ``target_base`` is the tag of the target's base image.
    With a cross plan the cross stage is built (log ``<name>.cross.log``) unless it
    failed before (:func:`failure_marker`); on failure the image is built without
    it. A cross stage that builds a GNUnet source (``gnunet``) has no such fallback:
    building the same tree again under QEMU would fail the same way, only slower.
    The benchmark image's log is ``<name>.build.log``.

    Raises:
        ImageBuildError: the benchmark image's build failed, or the cross stage of a
            GNUnet source build (the message names the step and the log).
    """
    built: cross_mod.CrossBuild | None = None
    if cross_plan is not None:
        status = _top_files(builder, target_base, "/var/lib/dpkg/status").get("status", b"")
        cross_spec = plan_cross_image(cross_plan, build_base_id, status, gnunet=gnunet, taler=taler)
        marker = failure_marker(builder.work_dir, cross_spec)
        cross_log = f"{name}.cross.log"
        if gnunet is not None or taler is not None:
            try:
                ensure_image(builder, cross_spec, cross_log)
            except ImageBuildError as exc:
                what = " and ".join(
                    f"{name} {build.resolved.version or '(version unknown)'}"
                    for name, build in (("libgnunetutil", gnunet), ("taler-exchange", taler))
                    if build is not None
                )
                missing = cross_mod.missing_packages(str(exc))
                cause = (
                    f" because the package mirror has no installable "
                    f"{', '.join(missing)} for {cross_plan.debian_arch} (apt, in the cross "
                    f"stage on {cross_plan.build_arch.platform}); nothing here can build "
                    f"{cross_plan.target_arch.platform} from source until the mirror has it"
                    if missing
                    else ""
                )
                raise ImageBuildError(
                    f"cross-compiling {what} from source for {cross_plan.debian_arch} "
                    f"failed{cause}: {exc}"
                ) from exc
            built = read_out(builder, cross_spec.tag, cross_plan)
        elif not marker.exists() or builder.rebuild:
            try:
                ensure_image(builder, cross_spec, cross_log)
                built = read_out(builder, cross_spec.tag, cross_plan)
            except ImageBuildError as exc:
                builder.work_dir.mkdir(parents=True, exist_ok=True)
                marker.write_text(str(exc), encoding="utf-8")
                builder.say(
                    f"cross-compiling the drivers for {cross_plan.debian_arch} failed (log: "
                    f"{builder.log_dir / cross_log}); compiling them in the emulated image instead"
                )
    spec = plan_spec(built)
    return (spec, *ensure_image(builder, spec, f"{name}.build.log"))
