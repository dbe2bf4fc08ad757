"""How an image is built on an engine: one :class:`Builder`, one :func:`ensure_image`.

Every image archbench builds from a Dockerfile (the benchmark image, the cross
stage, the counter tools and the counting layer) is an :class:`ImageSpec`: the
Dockerfile, the files of its build context and the sha256 of every input, which
names its tag. :func:`ensure_image` reuses the image whose label carries that hash
and builds it otherwise; any change to an input always builds anew. The context
goes to the engine as an uncompressed tar through the API
(:func:`build_image`), so remote engines need nothing on their disk, and the
build's output is appended to a log kept on failure. Base images are labelled by
their configuration instead (:mod:`archbench.images.bases`) but are built by the
same :func:`build_image`.

:class:`Builder` is what every build of one target shares: the engine, the work and
log directories, the progress callback, ``--rebuild``, the apt cache and the
engine's build network. :func:`image_files` reads files back out of an image (the
cross stage's drivers, the counter tools) through a container that is created and
removed, never started. :func:`resolve_apt_proxy` turns ``invoke.yaml``'s
``apt_proxy`` setting into the :attr:`Builder.apt_proxy` of local builds.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import socket
import tarfile
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeAlias, cast

import docker
import docker.errors

from archbench.errors import ImageBuildError, MatrixError
from archbench.images import cross
from archbench.platforms import Arch, needs_emulation
from archbench.sources import ContextFile, locked

LABEL_INPUTS = "org.archbench.image.inputs"
"""The content hash of every input of an image built from an :class:`ImageSpec`."""
LABEL_PROFILE = "org.archbench.image.profile"
"""The dependency profile of a benchmark image (``cross`` for a cross stage)."""


@dataclass(frozen=True)
class Builder:
    """The engine and the settings every build of one target shares.

    ``work_dir`` holds scratch space (packed root file systems, failure markers),
    ``log_dir`` every build and bootstrap log; ``on_line`` gets each line of build
    output as it comes (None: nobody watches). ``rebuild`` builds even when an
    image is up to date (``--rebuild``). ``apt_proxy``: the package cache the
    builds download through (checked by :func:`archbench.images.cross.check_apt_proxy`;
    in neither an image nor its hash). ``network_mode``: the network of the build's
    RUN steps (``host`` for engines without a bridge; None: the engine's default).
    """

    client: docker.DockerClient
    work_dir: Path
    log_dir: Path
    on_line: Callable[[str], None] | None = None
    rebuild: bool = False
    apt_proxy: str | None = None
    network_mode: str | None = None

    def say(self, text: str) -> None:
        """Pass ``text`` to :attr:`on_line`, if anyone watches."""
        if self.on_line is not None:
            self.on_line(text)

    @contextlib.contextmanager
    def lock(self, what: str, *, per_engine: bool = True) -> Iterator[None]:
        """Hold the exclusive lock of ``what`` (an image tag, a root file system's file
        name) on this engine, or for the work directory with ``per_engine`` False.

        Two builds of the same content at once, from threads or from processes (two
        ``invoke`` commands, two pytest workers), would each pay for the whole build;
        with the lock the second waits and then finds the first's image. It is an
        ``flock`` of a file under ``work_dir/locks/`` (named by the sha256 of the
        engine's URL and ``what``), so the kernel releases it when its holder dies, and
        flocks of separately opened files also exclude threads of one process. Builds
        that use another work directory do not see it (they build side by side, as
        before).
        """
        key = f"{self.client.api.base_url if per_engine else ''}\n{what}"
        path = self.work_dir / "locks" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.lock"
        with locked(path):
            yield


SPOOL_BYTES = 4 * 1024 * 1024
"""A build context larger than this is spooled to a file of the work directory (4 MiB)."""


ContextData: TypeAlias = bytes | ContextFile
"""A context file's bytes, in memory or on disk."""


def digest(*parts: ContextData) -> str:
    """sha256 (hex) over ``parts``, each prefixed by its length (8 bytes, big-endian).

    The prefix keeps ``("ab", "c")`` and ``("a", "bc")`` apart. A :class:`ContextFile`
    is read streaming and hashes exactly as its bytes would.

    Raises:
        OSError: a :class:`ContextFile` cannot be read or changed.
    """
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, ContextFile):
            h.update(part.size.to_bytes(8, "big"))
            for chunk in part.chunks():
                h.update(chunk)
        else:
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.hexdigest()


@dataclass(frozen=True)
class ImageSpec:
    """Everything needed to build one image from a Dockerfile (pure data, no engine).

    ``files`` are the context files as ``(context path, bytes or ContextFile)``, each of mode
    0644 unless ``modes`` gives ``(context path, mode)``. ``arch`` is the platform
    the image is built for; ``for_arch`` the target an image of another platform is
    named after (a cross stage is an amd64 image for an arm64 target).
    ``profile``: the dependency profile the image is labelled with (None: no label).
    """

    repository: str
    arch: Arch
    dockerfile: str
    files: tuple[tuple[str, ContextData], ...]
    content_hash: str
    for_arch: Arch | None = None
    profile: str | None = None
    modes: tuple[tuple[str, int], ...] = ()

    @property
    def tag(self) -> str:
        """``<repository>:<arch>-<first 16 hex digits of the content hash>``.

        ``archbench/bench:arm64-…``; a cross stage is named after its target
        (``archbench/cross:arm64-…``) although it is an amd64 image.
        """
        return f"{self.repository}:{(self.for_arch or self.arch).key}-{self.content_hash[:16]}"

    @property
    def platform(self) -> str:
        """The OCI platform the image is built for (``linux/riscv64``)."""
        return self.arch.platform

    @property
    def labels(self) -> dict[str, str]:
        """The image's labels: its content hash and, when it has one, its profile."""
        labels = {LABEL_INPUTS: self.content_hash}
        if self.profile is not None:
            labels[LABEL_PROFILE] = self.profile
        return labels


def build_context(spec: ImageSpec, spool_dir: Path | None = None) -> BinaryIO:
    """The build context of ``spec`` as an uncompressed tar (Dockerfile first), read from 0.

    Memory stays bounded whatever the files' size: the tar is held in memory up to
    :data:`SPOOL_BYTES` and spooled to an unnamed file in ``spool_dir`` beyond
    (None: the system's temporary folder), and each :class:`ContextFile` is copied
    into it in chunks. The caller closes it (the spooled file then goes away).

    Raises:
        OSError: a :class:`ContextFile` cannot be read or changed, or the spool cannot
            be written.
    """
    modes = dict(spec.modes)
    where = None if spool_dir is None else str(spool_dir)
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, dir=where)  # noqa: SIM115
    try:
        with tarfile.open(fileobj=spool, mode="w") as tar:
            for path, data in (("Dockerfile", spec.dockerfile.encode()), *spec.files):
                info = tarfile.TarInfo(path)
                info.mode = modes.get(path, 0o644)
                if isinstance(data, ContextFile):
                    info.size = data.size
                    with data.path.open("rb") as f:
                        # tarfile copies exactly info.size bytes, in 16 KiB pieces.
                        tar.addfile(info, f)
                else:
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return cast(BinaryIO, spool)


def image_labels(client: docker.DockerClient, ref: str) -> dict[str, str] | None:
    """Labels of the local image ``ref``, or None when it does not exist."""
    try:
        image = client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None
    return dict(image.labels or {})


def ensure_image(
    builder: Builder,
    spec: ImageSpec,
    log_name: str,
    *,
    complete: Callable[[ImageSpec], ImageSpec] | None = None,
) -> tuple[str, bool]:
    """Build ``spec`` unless an image with its content hash exists (or ``builder.rebuild``).

    Returns ``(image id, reused)``. The build's log is ``<log dir>/<log_name>``.
    ``complete`` adds what only a build needs to the spec (files read out of
    another image), so an up-to-date image costs no such read.

    Raises:
        ImageBuildError: the build failed; the log is kept.
    """
    client = builder.client

    def existing() -> str | None:
        labels = image_labels(client, spec.tag)
        if labels is None or labels.get(LABEL_INPUTS) != spec.content_hash:
            return None
        return str(client.images.get(spec.tag).id)

    if not builder.rebuild and (image_id := existing()) is not None:
        return image_id, True
    with builder.lock(f"image {spec.tag}"):
        # Another build of the same content may have finished while this one waited.
        if not builder.rebuild and (image_id := existing()) is not None:
            return image_id, True
        if complete is not None:
            spec = complete(spec)
        builder.work_dir.mkdir(parents=True, exist_ok=True)
        with build_context(spec, builder.work_dir) as context:
            image_id = build_image(
                client,
                context,
                tag=spec.tag,
                platform=spec.platform,
                labels=spec.labels,
                log_path=builder.log_dir / log_name,
                on_line=builder.on_line,
                network_mode=builder.network_mode,
                buildargs=cross.build_args(builder.apt_proxy),
            )
    return image_id, False


def build_image(
    client: docker.DockerClient,
    context: BinaryIO,
    *,
    tag: str,
    platform: str,
    labels: dict[str, str],
    log_path: Path,
    on_line: Callable[[str], None] | None = None,
    network_mode: str | None = None,
    buildargs: dict[str, str] | None = None,
) -> str:
    """Build an image from a tar build context through the API; return its id.

    ``context`` is an uncompressed tar stream holding ``Dockerfile``; it goes
    to the engine as is. Every output line is appended to ``log_path`` (kept on
    failure) and passed to ``on_line``. ``buildargs``: build arguments
    (``http_proxy`` for the apt cache, see :func:`archbench.images.cross.build_args`).

    Raises:
        ImageBuildError: the engine reports a build error; the message has the
            last lines of the log and its path.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    tail: deque[str] = deque(maxlen=25)
    if on_line is not None:
        # What the progress display reads (archbench.run.progress.BUILD_MARK).
        on_line(f"archbench: building {tag} for {platform}{_under_qemu(client, platform)}")
    with log_path.open("w", encoding="utf-8") as log:
        try:
            stream = client.api.build(
                fileobj=context,
                custom_context=True,
                tag=tag,
                platform=platform,
                labels=labels,
                rm=True,
                forcerm=True,
                decode=True,
                network_mode=network_mode,
                buildargs=buildargs or None,
            )
            for chunk in stream:
                text = chunk.get("stream") or chunk.get("status") or ""
                if "error" in chunk:
                    text = f"ERROR: {chunk['error']}\n"
                for line in text.splitlines():
                    log.write(line + "\n")
                    tail.append(line)
                    if on_line is not None and line.strip():
                        on_line(line)
                if "error" in chunk:
                    log.flush()
                    raise ImageBuildError(_build_failure(tag, log_path, tail))
        except docker.errors.APIError as exc:
            log.write(f"ERROR: {exc}\n")
            tail.append(str(exc))
            raise ImageBuildError(_build_failure(tag, log_path, tail)) from exc
    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound as exc:
        raise ImageBuildError(_build_failure(tag, log_path, tail)) from exc


def _under_qemu(client: docker.DockerClient, platform: str) -> str:
    """``" under QEMU"`` when the engine runs ``platform``'s RUN steps through binfmt_misc."""
    try:
        engine = Arch.from_machine(str(client.version().get("Arch", "")))
        return " under QEMU" if needs_emulation(Arch.from_key(platform), engine) else ""
    except (ValueError, docker.errors.DockerException):
        return ""


def _build_failure(tag: str, log_path: Path, tail: deque[str]) -> str:
    lines = "\n".join(f"    {line}" for line in tail)
    return f"building {tag} failed; last lines of the log:\n{lines}\n  full log: {log_path}"


def image_files(client: docker.DockerClient, image: str, path: str) -> dict[str, tuple[bytes, int]]:
    """The regular files at ``path`` in ``image`` (a file or a directory, recursively).

    Keys are the paths in the archive the engine sends: the file's name for a
    file, ``<dir name>/<relative path>`` for a directory; values are the bytes and
    the mode. Read through a container that is created and removed, never started.
    """
    container = client.containers.create(image, command=["true"], network_disabled=True)
    try:
        stream, _ = container.get_archive(path)
        data = b"".join(stream)
    finally:
        container.remove(force=True)
    files: dict[str, tuple[bytes, int]] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            extracted = tar.extractfile(member) if member.isfile() else None
            if extracted is not None:
                files[member.name] = (extracted.read(), member.mode)
    return files


DEFAULT_PROXY_PORT = 3142
"""apt-cacher-ng's port (``scripts/setup-host.sh`` starts it on this machine)."""


def resolve_apt_proxy(client: docker.DockerClient | None, setting: str) -> str | None:
    """The apt proxy URL the local engine's builds use, from ``archbench.apt_proxy``.

    ``""`` or ``off``: none. ``auto``: apt-cacher-ng on this machine when something
    listens on port 3142, reached from build containers through the gateway of the
    engine's ``bridge`` network (``http://<gateway>:3142``); none otherwise or without
    a local engine. Anything else must pass :func:`archbench.images.cross.check_apt_proxy`.

    Raises:
        MatrixError: the setting is not ``auto``, ``off``, empty or an apt proxy URL.
    """
    value = setting.strip()
    if value in ("", "off"):
        return None
    if value != "auto":
        try:
            return cross.check_apt_proxy(value, "invoke.yaml archbench.apt_proxy")
        except ValueError as exc:
            raise MatrixError(f"{exc}; or 'auto' or 'off'") from None
    if client is None or not _listening("127.0.0.1", DEFAULT_PROXY_PORT):
        return None
    try:
        configs = client.networks.get("bridge").attrs.get("IPAM", {}).get("Config") or []
    except docker.errors.DockerException:
        return None
    for config in configs:
        gateway = str(config.get("Gateway") or "")
        try:
            return cross.check_apt_proxy(f"http://{gateway}:{DEFAULT_PROXY_PORT}")
        except ValueError:
            continue
    return None


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
