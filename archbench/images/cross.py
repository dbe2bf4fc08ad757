"""Cross-compiled drivers and the apt package cache: pure decisions, no engine.

Building a benchmark image for an emulated target used to compile the C drivers
(``harness/drivers/*.c``) inside the emulated image: gcc, the ``-dev`` packages and their
dpkg triggers all ran under QEMU, which made the image stage the slowest part of
a build. With a :class:`CrossPlan` a cross stage (an image of its own) is built on the
engine's own architecture (amd64) from a base of the *same Debian release*: it
installs ``crossbuild-essential-<arch>`` and the profile's ``-dev`` packages for
the target through multiarch (``libgnunet-dev:arm64``), compiles the drivers with
``<triplet>-gcc``, lists the Debian packages (``name:arch=version``) owning every
shared library the drivers link against (``images/cross/runtime-packages.sh``), and
resolves against the target base's dpkg status which ``.deb`` files the emulated
stage needs for those libraries and the profile's runtime packages
(``images/cross/resolve-debs.sh``). The emulated stage fetches exactly these files,
each checked against its SHA256, installs them with apt (no ``apt-get update``,
no gcc, no dpkg triggers of ``-dev`` packages under QEMU) and copies the binaries
in. The Makefile's ``build-info.txt`` records the cross compiler and the list of
runtime packages is appended to it, so every result says how its driver was built
(``setup.build``).

A target built from a GNUnet source (:class:`GnunetCross`) builds libgnunetutil in the
same cross stage, before the drivers: ``images/gnunet-source/build-libgnunetutil.sh``
with a meson cross file (:func:`meson_cross_file`) or autotools' ``--host=<triplet>``,
into ``/opt/gnunet``, which the stage packs as one tar for the emulated stage to
unpack (``ADD``); the libraries it needs at run time join ``runtime-packages.txt``.
meson runs a test program of the target while it configures: it runs through the
engine's binfmt_misc QEMU entry (``needs_exe_wrapper = false``), with the target's
multiarch C library that the ``-dev`` packages bring.

Where a release has no cross toolchain or ``-dev`` package for an architecture,
the cross stage fails and :func:`archbench.images.benchmark.ensure_target_image` builds
the target the old way (drivers compiled inside the emulated image), saying so.

The apt cache (:func:`check_apt_proxy`): an HTTP proxy such as Debian's
``apt-cacher-ng`` (started by ``scripts/setup-host.sh``), reached by the build's
RUN steps through the predefined ``http_proxy`` build argument, which Docker keeps
out of the image's history and configuration; debootstrap reads the same variable.
apt sends ``http://`` sources through it (``https://`` ones go direct).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

from archbench.platforms import Arch

BUILD_TOOLS = frozenset(
    {"gcc", "g++", "make", "pkgconf", "pkg-config", "libc6-dev", "cpp", "meson", "ninja-build"}
)
"""Packages only the compile needs; with ``-dev`` packages they stay out of a cross image."""

NEEDS_NATIVE_BUILD = frozenset({"build-essential"})
"""A profile asking for any of these wants a build environment in the image: no cross build."""

DRIVERS = ("blindsig", "count_calibrate", "rsa_large", "sodium_bench")
"""The binaries ``harness/Makefile`` builds (``rsa_large``/``sodium_bench`` when it can)."""


def build_env(arch: Arch) -> dict[str, str]:
    """Environment for emulated *build* steps of ``arch`` (debootstrap's second stage, the
    image's RUN steps), maybe empty: ``QEMU_CPU`` from its record's ``build_qemu_cpu``
    (:class:`archbench.platforms.ArchRecord`). The results' ``qemu_cpu`` is probed on the
    harness image without it."""
    cpu = arch.value.build_qemu_cpu
    return {"QEMU_CPU": cpu} if cpu else {}


GNUNET_NATIVE_TOOLS = ("dpkg-dev", "python3", "meson", "ninja-build")
"""What a cross build of libgnunetutil runs on the build machine (never ``:<arch>``):
``dpkg-buildflags`` (Debian's flags for the target), meson and ninja."""

TALER_NATIVE_TOOLS = (
    "python3",
    "python3-jinja2",
    "autoconf",
    "automake",
    "libtool",
    "autopoint",
    "gettext",
    "jq",
)
"""What a cross build of the exchange's ``src/util`` runs on the build machine (never
``:<arch>``): autotools, and what its ``configure`` insists on (jinja2, ``jq``)."""


@dataclass(frozen=True)
class GnunetCross:
    """libgnunetutil built from a GNUnet source in the cross stage, before the drivers.

    ``build_system``: ``meson`` (0.21 and later) or ``autotools`` (release tarballs
    of 0.19/0.20); ``perf``: also build GNUnet's own ``perf_crypto_rsa`` (suite
    gnunet-perf), from the same source.
    """

    build_system: str
    perf: bool = False


@dataclass(frozen=True)
class CrossPlan:
    """The cross-build stage of one emulated target's image.

    ``build_base``: tag of the engine-native base of the same release
    (``archbench-base/debian-trixie:amd64``); ``dev_packages``: the profile's
    ``-dev`` packages qualified for the target (``libgnunet-dev:arm64``);
    ``runtime_packages``: what the emulated stage installs besides the drivers'
    libraries (``python3``, ``openssl``, ``gnupg``).
    """

    build_arch: Arch
    target_arch: Arch
    build_base: str
    dev_packages: tuple[str, ...]
    runtime_packages: tuple[str, ...]
    gnunet: GnunetCross | None = None
    """Build libgnunetutil from source first (None: the profile's ``libgnunet-dev``)."""
    taler: bool = False
    """Also cross-compile the exchange's ``src/util`` (a ``taler:`` source) against that
    GNUnet, with GNUnet's json, curl and pq libraries when GNUnet is a source build."""

    @property
    def native_tools(self) -> tuple[str, ...]:
        """Build-machine packages the stage needs besides the toolchain (``meson``)."""
        tools: tuple[str, ...] = GNUNET_NATIVE_TOOLS if self.gnunet is not None else ()
        if self.taler:
            tools += tuple(t for t in TALER_NATIVE_TOOLS if t not in tools)
        return tools

    @property
    def pkg_config_libdir(self) -> str:
        """``PKG_CONFIG_LIBDIR`` of the target (:func:`pkg_config_libdir`), colon-joined."""
        return ":".join(pkg_config_libdir(self.target_arch))

    @property
    def gnunet_build_args(self) -> tuple[str, ...]:
        """``build-libgnunetutil.sh``'s cross options for this target, before its operands.

        Raises:
            ValueError: the plan builds no GNUnet source.
        """
        if self.gnunet is None:
            raise ValueError("this cross stage builds no GNUnet source")
        if self.gnunet.build_system == "meson":
            args: tuple[str, ...] = (
                "--cross-file",
                MESON_CROSS_PATH,
                "--deb-arch",
                self.debian_arch,
            )
        else:
            args = ("--host", self.triplet, "--deb-arch", self.debian_arch)
        if self.taler:
            args = (*args, "--taler")
        return (*args, "--perf") if self.gnunet.perf else args

    @property
    def triplet(self) -> str:
        """GNU triplet of the target (``aarch64-linux-gnu``)."""
        return self.target_arch.value.triplet

    @property
    def debian_arch(self) -> str:
        """Debian architecture of the target (``arm64``, ``armhf``, ``ppc64el``)."""
        return self.target_arch.debian_arch

    @property
    def toolchain(self) -> str:
        """Debian's cross toolchain package (``crossbuild-essential-arm64``)."""
        return f"crossbuild-essential-{self.debian_arch}"

    @property
    def drivers(self) -> tuple[str, ...]:
        """Driver binaries to copy into the emulated stage (:data:`DRIVERS`)."""
        return DRIVERS


@dataclass(frozen=True)
class CrossBuild:
    """What a finished cross stage hands the benchmark image's build.

    ``files``: ``(context path, bytes)`` of ``/opt/archbench/harness`` read out of
    the cross image, under ``cross/harness/``; ``install``: the packages the
    emulated stage installs, the profile's runtime packages followed by the
    drivers' libraries as ``name:arch=version`` (:func:`parse_runtime_packages`).
    """

    plan: CrossPlan
    image_id: str
    files: tuple[tuple[str, bytes], ...]
    install: tuple[str, ...]


MESON_CROSS_PATH = "/opt/archbench/cross/meson-cross.ini"
"""Where the cross stage finds :func:`meson_cross_file`'s text (``cross/meson-cross.ini``)."""


def meson_cross_file(target: Arch) -> str:
    """A meson cross file for Debian's cross toolchain of ``target`` (INI text).

    ``needs_exe_wrapper = false``: GNUnet's root ``meson.build`` runs a test program
    (``cc.run``) unconditionally, and the engine's binfmt_misc entry runs it under
    QEMU. pkg-config is the build machine's own with ``pkg_config_libdir`` set to the
    target's multiarch ``.pc`` folders: Debian 12 has no ``<triplet>-pkg-config``
    wrapper for every architecture (bookworm's ppc64el cross build found no ``.pc``
    at all through it), and the folders are the same on every release. Format:
    meson's "Cross compilation" page (``[binaries]``, ``[properties]``,
    ``[host_machine]``; ``pkg_config_libdir`` since meson 0.54).
    """
    record = target.value
    triplet = record.triplet
    libdirs = ", ".join(f"'{d}'" for d in pkg_config_libdir(target))
    return (
        "[binaries]\n"
        f"c = '{triplet}-gcc'\n"
        f"ar = '{triplet}-ar'\n"
        f"strip = '{triplet}-strip'\n"
        "pkg-config = 'pkg-config'\n"
        "\n[properties]\n"
        "needs_exe_wrapper = false\n"
        f"pkg_config_libdir = [{libdirs}]\n"
        "\n[host_machine]\n"
        "system = 'linux'\n"
        f"cpu_family = '{record.meson_cpu_family}'\n"
        f"cpu = '{record.meson_cpu}'\n"
        f"endian = '{record.endian}'\n"
    )


def pkg_config_libdir(target: Arch) -> tuple[str, ...]:
    """Where pkg-config finds ``target``'s multiarch ``.pc`` files (``PKG_CONFIG_LIBDIR``)."""
    return (f"/usr/lib/{target.value.triplet}/pkgconfig", "/usr/share/pkgconfig")


RUNTIME_LINE = re.compile(r"[a-z0-9][a-z0-9+.-]*:[a-z0-9]+=[A-Za-z0-9.+~:-]+")
"""One line of ``runtime-packages.txt``: ``name:arch=version`` in Debian's grammar."""


def parse_runtime_packages(text: str, debian_arch: str) -> tuple[str, ...]:
    """The ``name:arch=version`` lines of ``runtime-packages.txt``, checked.

    Raises:
        ValueError: a line is not ``name:<debian_arch>=version`` or the list is empty.
    """
    lines = tuple(line.strip() for line in text.splitlines() if line.strip())
    for line in lines:
        if not RUNTIME_LINE.fullmatch(line) or line.split("=")[0].split(":")[1] != debian_arch:
            raise ValueError(f"runtime-packages.txt: {line!r} is not name:{debian_arch}=version")
    if not lines:
        raise ValueError("runtime-packages.txt is empty: the drivers link no library")
    return lines


DEB_LINE = re.compile(
    r"(?P<url>https?://[A-Za-z0-9.:\[\]-]+/[A-Za-z0-9._~%+/-]+\.deb) "
    r"(?P<file>[A-Za-z0-9._~%+-]+\.deb) (?P<sha256>SHA256:[0-9a-f]{64})"
)
"""One line of ``debs.txt``: ``URL FILE SHA256:<hex>`` (from ``apt-get --print-uris``)."""


def parse_debs(text: str) -> tuple[str, ...]:
    """The lines of ``debs.txt``, each checked against :data:`DEB_LINE`.

    They are read by a shell loop in the emulated stage (``url file sha256``):
    no quote, no other whitespace and no ``..`` may reach it.

    Raises:
        ValueError: a line does not match, a file name has ``..``, or there is none.
    """
    lines = tuple(line for line in text.splitlines() if line.strip())
    for line in lines:
        m = DEB_LINE.fullmatch(line)
        if m is None or ".." in m.group("file") or ".." in m.group("url"):
            raise ValueError(f"debs.txt: {line!r} is not 'URL FILE SHA256:<hex>'")
    if not lines:
        raise ValueError("debs.txt is empty: the cross stage resolved no package to install")
    return lines


_APT_MISSING = (
    re.compile(r"E: Unable to locate package (?P<name>\S+)"),
    re.compile(r"E: Package '(?P<name>[^']+)' has no installation candidate"),
    re.compile(r"E: Version '[^']+' for '(?P<name>[^']+)' was not found"),
    re.compile(
        r"^\s*(?P<name>\S+) : Depends: .* but it is not (?:installable|going to be installed)"
    ),
    re.compile(r"(?:E|W): Failed to fetch \S*/(?P<name>[^/\s]+\.deb)\s+404"),
    re.compile(r"Err:\d+ \S*/(?P<name>[^/\s]+\.deb)\s*$"),
)
"""apt's ways of saying the mirror has no (installable) package: its name, or the file
that answered 404."""


def missing_packages(text: str) -> tuple[str, ...]:
    """The packages apt said it cannot find or install in ``text`` (a build log's last
    lines), in order of first mention, without repeats; empty when apt said nothing of
    the kind (a compile error, a network failure of another kind).

    Recognised: ``Unable to locate package``, ``has no installation candidate``,
    ``Version … was not found``, an unmet ``Depends`` (the package that depends), and a
    ``.deb`` that answered 404.
    """
    found: list[str] = []
    for line in text.splitlines():
        for pattern in _APT_MISSING:
            m = pattern.search(line)
            if m is not None and m.group("name") not in found:
                found.append(m.group("name"))
                break
    return tuple(found)


def is_driver_path(path: str) -> bool:
    """True for a cross-built driver binary in a build context (``cross/harness/blindsig``)."""
    folder, _, name = path.rpartition("/")
    return folder == "cross/harness" and name in DRIVERS


def is_build_only(package: str) -> bool:
    """True for packages only compiling needs (``gcc``, ``make``, any ``*-dev``).

    ``package`` may carry ``:arch`` or ``=version`` (``libssl-dev:arm64=3.5``).
    """
    name = re.split(r"[:=]", package, maxsplit=1)[0]
    return name in BUILD_TOOLS or name.endswith("-dev")


def plan_cross(
    target_arch: Arch,
    build_arch: Arch,
    packages: Sequence[str],
    build_base: str,
    *,
    emulated: bool,
    gnunet_perf: bool,
    gnunet: GnunetCross | None = None,
    taler: bool = False,
) -> CrossPlan | None:
    """The cross stage for a target, or None when the drivers are compiled in place.

    None when the target is native, the engine is not amd64 (Debian's cross
    toolchains are built for amd64 hosts), the profile asks for a
    build environment (:data:`NEEDS_NATIVE_BUILD`), or the gnunet-perf suite runs
    on Debian's libgnunetutil (both compile inside the image), or the profile has no
    ``-dev`` package to cross-install. Packages already qualified with an
    architecture are left as is; :data:`GNUNET_NATIVE_TOOLS` are never qualified.
    ``gnunet``: libgnunetutil is built from source in the stage (``packages`` are then
    the source build's, :func:`archbench.images.benchmark.source_packages`); its
    gnunet-perf programs come from the same source, so the suite does not prevent it.
    ``taler``: the exchange's ``src/util`` is cross-compiled in the stage too (``packages``
    then hold its ``-dev`` packages, :data:`archbench.images.benchmark.TALER_BUILD_PACKAGES`).
    """
    if not emulated or build_arch is not Arch.AMD64 or target_arch is build_arch:
        return None
    if gnunet_perf and gnunet is None:
        return None
    names = [re.split(r"[:=]", p, maxsplit=1)[0] for p in packages]
    if NEEDS_NATIVE_BUILD & set(names):
        return None
    dev = tuple(
        p if ":" in p else _qualify(p, target_arch.debian_arch)
        for p, n in zip(packages, names, strict=True)
        if n.endswith("-dev")
        and n != "libc6-dev"
        and n not in GNUNET_NATIVE_TOOLS
        and n not in TALER_NATIVE_TOOLS
    )
    if not dev:
        return None
    runtime = tuple(p for p in packages if not is_build_only(p))
    return CrossPlan(build_arch, target_arch, build_base, dev, runtime, gnunet, taler)


def _qualify(package: str, debian_arch: str) -> str:
    name, sep, version = package.partition("=")
    return f"{name}:{debian_arch}{sep}{version}"


_HOST = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
)
_PROXY = re.compile(r"http://(?P<host>\[[0-9A-Fa-f:.]+\]|[^/:@\[\]]+):(?P<port>[0-9]{1,5})/?")


def check_apt_proxy(value: str, where: str = "apt_proxy") -> str | None:
    """``value`` as an apt proxy URL (``http://HOST:PORT``), or None when empty.

    Allowed: ``http://`` only (apt-cacher-ng speaks plain HTTP), a host name or an IPv4/IPv6
    address (IPv6 in brackets), an explicit port 1-65535, an optional trailing
    ``/``; no user or password, path, query or whitespace. The value goes into a
    build argument and debootstrap's environment, never into an image.

    Raises:
        ValueError: anything else; the message names ``where``, the value and the
            allowed form.
    """
    text = value.strip()
    if not text:
        return None
    allowed = f"{where}: {value!r} is not an apt proxy; allowed: http://HOST:PORT (e.g. the "
    allowed += (
        "address of the docker0 bridge and apt-cacher-ng's port 3142), no user, path or query"
    )
    m = _PROXY.fullmatch(text)
    if m is None or text != value:
        raise ValueError(allowed)
    host, port = m.group("host"), int(m.group("port"))
    if not 1 <= port <= 65535:
        raise ValueError(allowed)
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise ValueError(allowed) from None
    elif not (_is_ipv4(host) or (_HOST.fullmatch(host) and not host.replace(".", "").isdigit())):
        raise ValueError(allowed)
    return text.rstrip("/")


def _is_ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def build_args(apt_proxy: str | None) -> dict[str, str]:
    """Build arguments for an image build: ``http_proxy`` when a proxy is set.

    ``http_proxy`` is one of Docker's predefined build arguments: RUN steps see
    it, ``docker history`` and the image's configuration do not.
    """
    return {"http_proxy": apt_proxy} if apt_proxy else {}
