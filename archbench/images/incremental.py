"""Incremental, cached builds of libgnunetutil: a persistent build tree per key, ccache under it.

A ``gnunet:`` source built inside ``docker build`` starts from nothing every time (about
2 min natively, 5 min cross-compiled on 2 cores). Here libgnunetutil is built instead in
a build container of a content-hashed **toolchain image** (:func:`plan_toolchain`: the
build stage's packages plus ccache and rsync, always on the engine's own architecture;
emulated targets are cross-compiled), with two Docker volumes:

* the **build tree** ``archbench-gnunet-tree-<arch>-<key>`` of one key (:func:`tree_key`:
  the toolchain image's content hash, which covers the compiler, the cross toolchain, the
  Debian base and the build script; the source's repository; the build options), where
  ``images/gnunet-source/build-incremental.sh`` syncs the source by checksum (an unchanged
  file keeps its mtime, so ninja recompiles only what changed) and guards the tree with a
  stamp and a manifest of sha256s written last: a tree left half-written (kill -9, a lost
  engine, a full disk) or with a changed byte is emptied and built clean, never used;
* the **ccache** ``archbench-ccache-<toolchain>`` of that toolchain, so that a clean
  build of a tree (another repository, a guard that fired) costs little more than linking.

The installed prefix comes out packed reproducibly (names sorted, mtime 0, owner 0:0) and
is kept on the host by its sha256 (``<work>/gnunet-cache/prefix/<sha256>.tar``); the
benchmark image or the cross stage ``ADD``\\ s it (:attr:`GnunetBuild.prefix`), so the same
bits give the same image and every later layer is reused. A host-side lock per tree
(``<work>/gnunet-cache/locks``) keeps two builds off one tree. Trees are evicted least
recently used beyond :data:`DEFAULT_MAX_TREES` (``ARCHBENCH_GNUNET_TREES``), each ccache is
bounded by ccache itself (:data:`DEFAULT_CCACHE_SIZE`, ``ARCHBENCH_CCACHE_SIZE``), and
``invoke clean`` lists and removes all of them (:func:`cache_volumes`).

Where it applies (:func:`incremental_applies`): meson trees (GNUnet 0.21 and later) without a
``taler:`` source, built natively or by a cross stage. Autotools trees (0.19, 0.20) and
emulated targets without a cross stage are built inside ``docker build`` as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import os
import re
import shutil
import struct
import tarfile
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Mapping
from pathlib import Path

import docker
import docker.errors
import jinja2
from docker.models.volumes import Volume

from archbench import REPO_ROOT
from archbench.errors import ImageBuildError
from archbench.images import cross as cross_mod
from archbench.images.benchmark import (
    GnunetBuild,
    image_reference,
    one_line,
    render_cross_dockerfile,
    render_dockerfile,
    shell_word,
    source_packages,
)
from archbench.images.builder import Builder, ImageSpec, digest, ensure_image
from archbench.platforms import Arch
from archbench.sources import ContextFile

TEMPLATE_DIR = REPO_ROOT / "images"
TOOLCHAIN_REPOSITORY = "archbench/gnunet-toolchain"
TREE_VOLUME_PREFIX = "archbench-gnunet-tree-"
CCACHE_VOLUME_PREFIX = "archbench-ccache-"
LABEL_CACHE = "org.archbench.gnunet-cache"
"""Label of every volume this module makes: ``tree`` or ``ccache``."""
LABEL_KEY = "org.archbench.gnunet-cache.key"
"""The volume's full key (a tree's :func:`tree_key`, a ccache's toolchain hash)."""
LABEL_TOOLCHAIN = "org.archbench.gnunet-cache.toolchain"
"""The toolchain image's content hash a volume was made for."""
LABEL_NAMESPACE = "org.archbench.gnunet-cache.namespace"
"""The cache namespace a volume belongs to (:func:`cache_namespace`); absent: none."""
NAMESPACE_VARIABLE = "ARCHBENCH_CACHE_NAMESPACE"
"""Environment variable naming a cache namespace of one's own (:func:`cache_namespace`)."""
DEFAULT_MAX_TREES = 6
"""Build trees kept per engine (each about 60 MB for libgnunetutil) before the least
recently used is removed; ``ARCHBENCH_GNUNET_TREES`` sets another (1 to 1000)."""
DEFAULT_CCACHE_SIZE = "1G"
"""ccache's own bound per toolchain (``CCACHE_MAXSIZE``); ``ARCHBENCH_CCACHE_SIZE`` sets
another (a number with an optional k, M or G)."""
KEEP_PREFIXES = 32
"""Packed prefixes kept on the host (a few MB each), the most recently used."""
CROSS_FILE = "/opt/archbench/gnunet-source/meson-cross.ini"
"""The toolchain image's meson cross file: :func:`archbench.images.cross.meson_cross_file`
with the compiler run through ccache."""
SCRIPT = "/opt/archbench/gnunet-source/build-incremental.sh"
IN_DIR = "/in"
SOURCE_DIR = "/in/src"
TREE_DIR = "/tree"
OUT_DIR = "/out"
CCACHE_DIR = "/ccache"
EXTRA_PACKAGES = ("ccache", "rsync")


@dataclasses.dataclass(frozen=True)
class Toolchain:
    """The toolchain of one target's incremental builds: its image and how to call the script."""

    spec: ImageSpec
    target: Arch
    build_args: tuple[str, ...]
    """``build-libgnunetutil.sh``'s options (cross file, ``--deb-arch``, ``--perf``)."""
    environment: tuple[tuple[str, str], ...] = ()
    """Extra environment of the build (the target's ``PKG_CONFIG_LIBDIR`` when cross)."""
    cross_arch: str = ""
    """The Debian architecture cross-compiled for (``riscv64``); ``""`` natively."""


@dataclasses.dataclass(frozen=True)
class IncrementalBuild:
    """How one incremental build went (a result's provenance, :meth:`provenance`)."""

    mode: str
    """``clean`` (the tree was new or not whole) or ``incremental``."""
    reason: str
    tree: str
    """The build tree's volume."""
    ccache_hits: int | None
    ccache_misses: int | None
    seconds: float
    prefix_sha256: str
    code_sha256: str | None
    """sha256 of libgnunetutil's ``.text`` (:func:`library_code`)."""
    toolchain: str
    """The toolchain image's tag."""

    def provenance(self) -> dict[str, str | bool | None]:
        """The keys :meth:`GnunetBuild.provenance` adds (``build_mode``, …), JSON-ready."""
        return {
            "build_mode": self.mode,
            "build_reason": self.reason,
            "build_tree": self.tree,
            "ccache_hits": None if self.ccache_hits is None else str(self.ccache_hits),
            "ccache_misses": None if self.ccache_misses is None else str(self.ccache_misses),
            "build_seconds": f"{self.seconds:.1f}",
            "prefix_sha256": self.prefix_sha256,
            "code_sha256": self.code_sha256,
            "toolchain_image": self.toolchain,
        }


def incremental_applies(
    gnunet: GnunetBuild,
    *,
    emulated: bool,
    cross: cross_mod.CrossPlan | None,
    taler: bool,
) -> bool:
    """True when ``gnunet`` of this target can go through the incremental path.

    Meson trees only (the autotools tarballs of 0.19/0.20 build in the source copy, whose
    configure step rewrites every header); not with a ``taler:`` source (its exchange
    build needs GNUnet's json, curl and pq libraries of the same tree, built in the image);
    an emulated target only when a cross stage builds its GNUnet (nothing is compiled
    under QEMU here).
    """
    if gnunet.build_system != "meson" or taler or gnunet.prefix is not None:
        return False
    if emulated:
        return cross is not None and cross.gnunet is not None
    return cross is None or cross.gnunet is None


def plan_toolchain(
    target: Arch,
    base_tag: str,
    base_id: str,
    cross: cross_mod.CrossPlan | None,
    *,
    perf: bool,
    packages: tuple[str, ...] = (),
    template_dir: Path = TEMPLATE_DIR,
) -> Toolchain:
    """The toolchain image and script options of ``target``'s incremental builds (pure).

    Natively (``cross`` None): ``base_tag`` is the target's base and the image installs
    what the benchmark image of a source build does (:func:`source_packages` of the
    profile's ``packages``, which include :data:`GNUNET_BUILD_PACKAGES`); cross:
    ``base_tag`` is the cross plan's build base (engine-native) and the image installs the
    cross stage's packages (the toolchain, meson, the target's ``-dev`` packages). Both
    install them with the very instruction of that image's Dockerfile (:func:`_apt_head`),
    so that the engine's layer cache gives both images the same layer, then ccache and
    rsync in a layer of their own. The content hash
    covers the Dockerfile, the base image id, both scripts and the cross file: another
    compiler, cross stage, Debian base or build script is another toolchain, and with it
    another ccache and other trees.

    Raises:
        ValueError: a value would break out of its Dockerfile word or line.
        jinja2.TemplateError: the template is missing or broken.
    """
    files: list[tuple[str, bytes]] = [
        (f"gnunet-source/{name}", (template_dir / "gnunet-source" / name).read_bytes())
        for name in ("build-libgnunetutil.sh", "build-incremental.sh")
    ]
    if cross is None:
        head = _apt_head(
            render_dockerfile(
                base_tag, target, "gnunet-toolchain", source_packages(packages), template_dir
            )
        )
        args: tuple[str, ...] = ()
        env: tuple[tuple[str, str], ...] = (("CC", "ccache gcc"),)
        build_arch = target
    else:
        head = _apt_head(render_cross_dockerfile(cross, template_dir, "toolchain"))
        args = ("--cross-file", CROSS_FILE, "--deb-arch", cross.debian_arch)
        env = (("PKG_CONFIG", "pkg-config"), ("PKG_CONFIG_LIBDIR", cross.pkg_config_libdir))
        build_arch = cross.build_arch
        files.append(("gnunet-source/meson-cross.ini", ccache_cross_file(target).encode()))
    if perf:
        args = (*args, "--perf")
    env_j2 = jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701  # a Dockerfile, not HTML
    )
    env_j2.filters.update(sh=shell_word, ref=image_reference, line=one_line)
    dockerfile = env_j2.get_template("gnunet-source/toolchain.Dockerfile.j2").render(
        head=head, target=target.platform, packages=EXTRA_PACKAGES
    )
    parts: list[bytes] = [dockerfile.encode(), base_id.encode(), build_arch.platform.encode()]
    for path, data in files:
        parts += [path.encode(), data]
    spec = ImageSpec(
        TOOLCHAIN_REPOSITORY,
        build_arch,
        dockerfile,
        tuple(files),
        digest(*parts),
        for_arch=target,
        modes=tuple((path, 0o755) for path, _ in files if path.endswith(".sh")),
    )
    return Toolchain(spec, target, args, env, cross.debian_arch if cross is not None else "")


def _apt_head(dockerfile: str) -> str:
    """``dockerfile`` up to the end of its first ``RUN`` instruction (the package install).

    Raises:
        ValueError: it has no ``RUN``.
    """
    lines = dockerfile.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("RUN ")), None)
    if start is None:
        raise ValueError("the Dockerfile installs no packages")
    end = start
    while lines[end].rstrip("\n").endswith("\\") and end + 1 < len(lines):
        end += 1
    return "".join(lines[: end + 1])


def ccache_cross_file(target: Arch) -> str:
    """:func:`archbench.images.cross.meson_cross_file` with the C compiler run through ccache
    (meson adds ccache by itself only to native compilers)."""
    text = cross_mod.meson_cross_file(target)
    triplet = target.value.triplet
    return text.replace(f"c = '{triplet}-gcc'", f"c = ['ccache', '{triplet}-gcc']", 1)


def repository_identity(gnunet: GnunetBuild) -> str:
    """The source repository a tree is kept for: a git URL, a working tree's path, or one
    tree for every release tarball (a release after another is a build after a build)."""
    r = gnunet.resolved
    return f"{r.project} {r.kind} {r.location if r.kind != 'tarball' else ''}"


def tree_key(toolchain: Toolchain, gnunet: GnunetBuild) -> str:
    """sha256 (hex) of what a build tree may be reused for: the toolchain image's content
    hash, the source repository (:func:`repository_identity`), the script's options."""
    return digest(
        toolchain.spec.content_hash.encode(),
        repository_identity(gnunet).encode(),
        "\0".join(toolchain.build_args).encode(),
    )


def cache_namespace(environ: Mapping[str, str] | None = None) -> str:
    """The cache namespace: ``ARCHBENCH_CACHE_NAMESPACE``, or ``""`` (none).

    A namespace prefixes the name of every tree and ccache volume (``<ns>-archbench-…``)
    and labels them (:data:`LABEL_NAMESPACE`): builds in it neither see nor evict the
    volumes of another namespace (or of none), and ``invoke clean --caches`` removes only
    its own. So a benchmark can start from a cold cache without removing anyone's.

    Raises:
        ImageBuildError: not 1 to 32 of lowercase letters, digits and ``-`` (starting
            with a letter or digit).
    """
    value = (os.environ if environ is None else environ).get(NAMESPACE_VARIABLE, "")
    if value and not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,31}", value):
        raise ImageBuildError(
            f"{NAMESPACE_VARIABLE} is {value[:40]!r}: a cache namespace is 1 to 32 lowercase "
            "letters, digits and '-', starting with a letter or digit (unset: no namespace)"
        )
    return value


def _prefixed(name: str, namespace: str) -> str:
    return f"{namespace}-{name}" if namespace else name


def tree_volume(toolchain: Toolchain, key: str, namespace: str = "") -> str:
    """``archbench-gnunet-tree-<arch>-<first 24 hex digits of the key>``, with
    ``<namespace>-`` before it when there is one (:func:`cache_namespace`)."""
    return _prefixed(f"{TREE_VOLUME_PREFIX}{toolchain.target.key}-{key[:24]}", namespace)


def ccache_volume(toolchain: Toolchain, namespace: str = "") -> str:
    """``archbench-ccache-<first 24 hex digits of the toolchain's content hash>``, with
    ``<namespace>-`` before it when there is one (:func:`cache_namespace`)."""
    return _prefixed(f"{CCACHE_VOLUME_PREFIX}{toolchain.spec.content_hash[:24]}", namespace)


def cache_dir(builder: Builder) -> Path:
    """``<work>/gnunet-cache``: packed prefixes, locks, when each tree was last used."""
    return builder.work_dir / "gnunet-cache"


def max_trees(environ: dict[str, str] | None = None) -> int:
    """The tree limit: ``ARCHBENCH_GNUNET_TREES`` or :data:`DEFAULT_MAX_TREES`.

    Raises:
        ImageBuildError: the variable is not a whole number from 1 to 1000.
    """
    value = (os.environ if environ is None else environ).get("ARCHBENCH_GNUNET_TREES", "")
    if not value:
        return DEFAULT_MAX_TREES
    if not re.fullmatch(r"[1-9][0-9]{0,3}", value) or int(value) > 1000:
        raise ImageBuildError(
            f"ARCHBENCH_GNUNET_TREES is {value[:40]!r}: the number of libgnunetutil build "
            f"trees to keep must be a whole number from 1 to 1000 (default {DEFAULT_MAX_TREES})"
        )
    return int(value)


def ccache_size(environ: dict[str, str] | None = None) -> str:
    """ccache's bound per toolchain: ``ARCHBENCH_CCACHE_SIZE`` or :data:`DEFAULT_CCACHE_SIZE`.

    Raises:
        ImageBuildError: the variable is not a size such as ``500M`` or ``2G``.
    """
    value = (os.environ if environ is None else environ).get("ARCHBENCH_CCACHE_SIZE", "")
    if not value:
        return DEFAULT_CCACHE_SIZE
    if not re.fullmatch(r"[1-9][0-9]{0,5}[kMG]?", value):
        raise ImageBuildError(
            f"ARCHBENCH_CCACHE_SIZE is {value[:40]!r}: ccache's size per toolchain must be a "
            f"number with an optional k, M or G (like 500M; default {DEFAULT_CCACHE_SIZE})"
        )
    return value


@contextlib.contextmanager
def tree_lock(builder: Builder, volume: str, *, wait: bool = True) -> Iterator[bool]:
    """Hold the host-side lock of ``volume`` (yields True), or with ``wait`` False yield
    False at once when another build holds it."""
    path = cache_dir(builder) / "locks" / f"{volume}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def parse_ccache_stats(text: str) -> tuple[int | None, int | None]:
    """Hits and misses from ``ccache.txt`` (``key<TAB>value`` lines, the names of ``ccache
    --print-stats``, counted by ``build-incremental.sh`` from this build's
    ``CCACHE_STATSLOG``): direct and preprocessed hits, and misses; None where absent."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            values[key.strip()] = int(value.strip())
    hit_keys = ("direct_cache_hit", "preprocessed_cache_hit")
    hits = (
        sum(values[k] for k in hit_keys if k in values)
        if any(k in values for k in hit_keys)
        else None
    )
    return hits, values.get("cache_miss")


def build_incremental(
    builder: Builder, gnunet: GnunetBuild, toolchain: Toolchain, log_name: str
) -> GnunetBuild:
    """Build ``gnunet``'s libgnunetutil in its persistent tree; ``gnunet`` with
    :attr:`~GnunetBuild.prefix` and :attr:`~GnunetBuild.incremental` set.

    The toolchain image is built first if missing (log ``<log_name>`` beside the build's).
    The build's output goes to ``<log dir>/<log_name>`` and to the progress callback.
    Ctrl-C removes the build container: its tree is left without a stamp and built clean
    next time.

    Raises:
        ImageBuildError: the toolchain image or the build failed (the message has the
            last lines of the log and its path), the engine refused a volume, or
            ``ARCHBENCH_CACHE_NAMESPACE`` is malformed (:func:`cache_namespace`).
    """
    namespace = cache_namespace()
    ensure_image(builder, toolchain.spec, log_name.replace(".log", ".toolchain.log"))
    key = tree_key(toolchain, gnunet)
    tree = tree_volume(toolchain, key, namespace)
    ccache = ccache_volume(toolchain, namespace)
    client = builder.client
    log_path = builder.log_dir / log_name
    with tree_lock(builder, tree):
        for name, kind, full in (
            (tree, "tree", key),
            (ccache, "ccache", toolchain.spec.content_hash),
        ):
            _ensure_volume(client, name, kind, full, toolchain.spec.content_hash, namespace)
            # Recorded before the build: a build that never ends still leaves its volumes
            # to this work folder's eviction.
            _touch(builder, name)
        started = time.monotonic()
        out = _run(builder, gnunet, toolchain, key, tree, ccache, log_path)
        seconds = time.monotonic() - started
        _touch(builder, tree)
        _touch(builder, ccache)
    state = out.get("state", b"").decode(errors="replace").strip()
    hits, misses = parse_ccache_stats(out.get("ccache.txt", b"").decode(errors="replace"))
    prefix = out.get("prefix.tar")
    if not prefix:
        raise ImageBuildError(f"the incremental build left no prefix.tar (log: {log_path})")
    packed = _keep_prefix(builder, prefix)
    try:
        code: str | None = hashlib.sha256(library_code(packed)[1]).hexdigest()
    except (KeyError, ValueError, OSError, tarfile.TarError):
        code = None
    mode, _, reason = state.partition(" ")
    info = IncrementalBuild(
        mode=mode or "clean",
        reason=reason.strip("()") or ("" if mode == "incremental" else "unknown"),
        tree=tree,
        ccache_hits=hits,
        ccache_misses=misses,
        seconds=seconds,
        prefix_sha256=packed.path.stem,
        code_sha256=code,
        toolchain=toolchain.spec.tag,
    )
    builder.say(
        f"archbench: libgnunetutil {info.mode} build in {seconds:.0f} s (tree {tree}, "
        f"ccache {hits} hits, {misses} misses)"
    )
    with contextlib.suppress(docker.errors.DockerException, OSError):
        evict(builder, max_trees(), namespace=namespace)
    return dataclasses.replace(gnunet, prefix=packed, incremental=info.provenance())


def _ensure_volume(
    client: docker.DockerClient, name: str, kind: str, key: str, toolchain: str, namespace: str
) -> None:
    try:
        client.volumes.get(name)
    except docker.errors.NotFound:
        labels = {LABEL_CACHE: kind, LABEL_KEY: key, LABEL_TOOLCHAIN: toolchain}
        if namespace:
            labels[LABEL_NAMESPACE] = namespace
        try:
            client.volumes.create(name, labels=labels)
        except docker.errors.APIError as exc:
            raise ImageBuildError(f"cannot make the volume {name}: {exc}") from exc


def _run(
    builder: Builder,
    gnunet: GnunetBuild,
    toolchain: Toolchain,
    key: str,
    tree: str,
    ccache: str,
    log_path: Path,
) -> dict[str, bytes]:
    client = builder.client
    command = ["sh", SCRIPT, key, SOURCE_DIR, TREE_DIR, OUT_DIR, *toolchain.build_args]
    environment = {
        "CCACHE_DIR": CCACHE_DIR,
        "CCACHE_MAXSIZE": ccache_size(),
        # The same object for the same source, whatever tree compiled it.
        "CCACHE_NOHASHDIR": "1",
        # This build's own counts (build-incremental.sh reads them into ccache.txt).
        "CCACHE_STATSLOG": f"{OUT_DIR}/ccache-stats.log",
        **dict(toolchain.environment),
    }
    log_path.parent.mkdir(parents=True, exist_ok=True)
    tail: deque[str] = deque(maxlen=25)
    builder.say(f"archbench: building libgnunetutil {gnunet.resolved.version} in {tree}")
    # A build container of a process that died (kill -9) may still write into the tree;
    # the host's lock went with that process, so the container goes before ours starts.
    for stale in client.containers.list(
        all=True, filters={"label": f"{LABEL_CACHE}=build", "volume": tree}
    ):
        with contextlib.suppress(docker.errors.DockerException):
            stale.remove(force=True)
    container = client.containers.create(
        toolchain.spec.tag,
        command=command,
        environment=environment,
        volumes={
            tree: {"bind": TREE_DIR, "mode": "rw"},
            ccache: {"bind": CCACHE_DIR, "mode": "rw"},
        },
        network_disabled=True,
        # org.archbench (archbench.run.containers.LABEL): `invoke clean` removes a leftover.
        labels={"org.archbench": "1", LABEL_CACHE: "build"},
    )
    try:
        if isinstance(gnunet.tar, ContextFile):
            with gnunet.tar.path.open("rb") as f:
                container.put_archive(IN_DIR, f)
        else:
            container.put_archive(IN_DIR, gnunet.tar)
        container.start()
        with log_path.open("w", encoding="utf-8") as log:
            for chunk in container.logs(stream=True, follow=True):
                for line in chunk.decode(errors="replace").splitlines():
                    log.write(line + "\n")
                    tail.append(line)
                    if line.strip():
                        builder.say(line)
        status = container.wait()
        if status.get("StatusCode") != 0:
            lines = "\n".join(f"  {line}" for line in tail)
            what = (
                f"cross-compiling libgnunetutil {gnunet.resolved.version or '(version unknown)'} "
                f"from source for {toolchain.cross_arch}"
                if toolchain.cross_arch
                else f"building libgnunetutil {gnunet.resolved.version or '(version unknown)'} "
                "from source"
            )
            raise ImageBuildError(
                f"{what} failed (exit {status.get('StatusCode')}, build tree {tree}); "
                f"last lines of the log:\n{lines}\n  full log: {log_path}"
            )
        stream, _ = container.get_archive(OUT_DIR)
        with tempfile.TemporaryFile() as spool:
            for piece in stream:
                spool.write(piece)
            spool.seek(0)
            found: dict[str, bytes] = {}
            with tarfile.open(fileobj=spool) as tar:
                for member in tar.getmembers():
                    extracted = tar.extractfile(member) if member.isfile() else None
                    if extracted is not None and member.name.count("/") == 1:
                        found[member.name.rpartition("/")[2]] = extracted.read()
        return found
    finally:
        with contextlib.suppress(docker.errors.DockerException):
            container.remove(force=True)


def _keep_prefix(builder: Builder, data: bytes) -> ContextFile:
    """``data`` at ``<cache>/prefix/<sha256>.tar`` (written atomically, kept if there);
    beyond :data:`KEEP_PREFIXES` the least recently used go."""
    folder = cache_dir(builder) / "prefix"
    folder.mkdir(parents=True, exist_ok=True)
    sha = hashlib.sha256(data).hexdigest()
    final = folder / f"{sha}.tar"
    if not final.exists() or final.stat().st_size != len(data):
        fd, part = tempfile.mkstemp(prefix="prefix-", suffix=".part", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(part, final)
    os.utime(final)
    kept = sorted(folder.glob("*.tar"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in kept[KEEP_PREFIXES:]:
        old.unlink(missing_ok=True)
    return ContextFile(final, len(data))


def _touch(builder: Builder, volume: str) -> None:
    used = cache_dir(builder) / "used" / volume
    used.parent.mkdir(parents=True, exist_ok=True)
    used.touch()


def cache_volumes(client: docker.DockerClient) -> list[str]:
    """Names of every volume of this module on the engine (trees and ccaches), sorted."""
    return sorted(str(v.name) for v in client.volumes.list(filters={"label": LABEL_CACHE}))


def _namespace_of(volume: Volume) -> str:
    return str((volume.attrs.get("Labels") or {}).get(LABEL_NAMESPACE, ""))


def evict(
    builder: Builder, limit: int, *, everything: bool = False, namespace: str = ""
) -> list[str]:
    """Remove the least recently used build trees beyond ``limit``, and the ccache of a
    toolchain no tree is left of; returns the volumes removed.

    Only volumes of ``namespace`` (:func:`cache_namespace`; ``""``: those without one)
    that this work folder has used (``<work>/gnunet-cache/used/``) are counted and
    removed: the engine may be shared with other checkouts, whose trees are theirs to keep.
    ``everything`` (``invoke clean``): every cache volume of ``namespace`` on the engine.
    A tree whose lock is held, or a volume the engine says is in use, is skipped.

    Raises:
        docker.errors.DockerException: the engine cannot list volumes.
    """
    client = builder.client
    used_dir = cache_dir(builder) / "used"

    def last_used(name: str) -> float | None:
        with contextlib.suppress(OSError):
            return (used_dir / name).stat().st_mtime
        return None

    def ours(volume: Volume) -> bool:
        return _namespace_of(volume) == namespace and (
            everything or last_used(str(volume.name)) is not None
        )

    trees = [v for v in client.volumes.list(filters={"label": f"{LABEL_CACHE}=tree"}) if ours(v)]
    ordered = sorted(trees, key=lambda v: last_used(str(v.name)) or 0.0, reverse=True)
    removed: list[str] = []
    for volume in ordered[limit:]:
        name = str(volume.name)
        with tree_lock(builder, name, wait=False) as held:
            if not held:
                continue
            try:
                volume.remove()
            except docker.errors.APIError:
                continue
            removed.append(name)
            (used_dir / name).unlink(missing_ok=True)
    kept = {
        str((v.attrs.get("Labels") or {}).get(LABEL_TOOLCHAIN, ""))
        for v in client.volumes.list(filters={"label": f"{LABEL_CACHE}=tree"})
        if _namespace_of(v) == namespace
    }
    for volume in client.volumes.list(filters={"label": f"{LABEL_CACHE}=ccache"}):
        toolchain = str((volume.attrs.get("Labels") or {}).get(LABEL_TOOLCHAIN, ""))
        if ours(volume) and toolchain not in kept:
            with contextlib.suppress(docker.errors.APIError):
                volume.remove()
                removed.append(str(volume.name))
                (used_dir / str(volume.name)).unlink(missing_ok=True)
    return removed


def remove_caches(builder: Builder, namespace: str = "") -> list[str]:
    """Remove every tree and ccache volume of ``namespace`` on the engine not in use
    (``invoke clean``); returns the volumes removed. Without a namespace, also this work
    folder's packed prefixes (named by their content: a namespace's builds share them)."""
    removed = evict(builder, 0, everything=True, namespace=namespace)
    if not namespace:
        shutil.rmtree(cache_dir(builder) / "prefix", ignore_errors=True)
    return removed


def elf_section(data: bytes, name: str) -> bytes:
    """The bytes of section ``name`` (``.text``) of the ELF file ``data`` (32 or 64 bit,
    either byte order: the ELF specification's header and section header table).

    Raises:
        ValueError: ``data`` is not ELF, or has no such section.
    """
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise ValueError("not an ELF file")
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    if wide:
        (shoff,) = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x3A)
    else:
        (shoff,) = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x2E)

    def header(index: int) -> tuple[int, int, int]:
        at = shoff + index * shentsize
        if wide:
            sh_name, _, _, _, offset, size = struct.unpack_from(order + "IIQQQQ", data, at)
        else:
            sh_name, _, _, _, offset, size = struct.unpack_from(order + "IIIIII", data, at)
        return sh_name, offset, size

    _, str_offset, str_size = header(shstrndx)
    names = data[str_offset : str_offset + str_size]
    for index in range(shnum):
        sh_name, offset, size = header(index)
        if names[sh_name:].split(b"\0", 1)[0] == name.encode():
            return data[offset : offset + size]
    raise ValueError(f"no section {name}")


def library_code(prefix: ContextFile) -> tuple[str, bytes]:
    """The name of libgnunetutil's shared object in a packed prefix and its ``.text``
    (what must be the same in a clean and an incremental build).

    Raises:
        KeyError: the prefix has no ``lib/libgnunetutil.so.*`` file.
        ValueError: it is no ELF file with a ``.text``.
    """
    with prefix.path.open("rb") as f, tarfile.open(fileobj=f) as tar:
        for member in tar.getmembers():
            if member.isfile() and re.fullmatch(
                r"(\./)?lib/libgnunetutil\.so\.[0-9.]+", member.name
            ):
                extracted = tar.extractfile(member)
                assert extracted is not None
                return member.name, elf_section(extracted.read(), ".text")
    raise KeyError("lib/libgnunetutil.so.*")


def read_prefix_member(prefix: ContextFile, name: str) -> bytes:
    """The bytes of member ``name`` (``./lib/libgnunetutil.so.…``) of a packed prefix.

    Raises:
        KeyError: the prefix has no such member.
    """
    with prefix.path.open("rb") as f, tarfile.open(fileobj=f) as tar:
        member = tar.extractfile(name)
        if member is None:
            raise KeyError(name)
        return member.read()
