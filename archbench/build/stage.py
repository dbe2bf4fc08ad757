"""The image stage of one target: cross-compiled drivers where possible, else in place.

:func:`prepare_cross` decides (:func:`archbench.build.cross.plan_cross`) whether an
emulated target's drivers are cross-compiled and makes sure the engine-native
base of the same release exists. :func:`ensure_target_image` builds (or reuses)
the cross stage as an image of its own (``archbench/cross:<arch>-<hash>``, on
the engine's architecture: the classic builder cannot mix platforms in one
Dockerfile), reads its ``/opt/archbench/harness`` out through the API (a
container is created, never started) and builds the benchmark image with those
files in its context. When the cross stage fails (a release without a cross
toolchain or ``-dev`` package for that architecture) it says so, notes the
failure in the work directory so later runs go straight to the fallback, and
builds the image with the drivers compiled inside the emulated image as before.
"""

from __future__ import annotations

import io
import socket
import tarfile
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors

from archbench.build import bases, cross, images
from archbench.errors import ImageBuildError, MatrixError
from archbench.matrix import Base
from archbench.platforms import Arch

OUT_DIR = "/opt/archbench/harness"
"""Where the cross stage leaves the drivers, build-info.txt and runtime-packages.txt."""


def prepare_cross(
    client: docker.DockerClient,
    *,
    base_name: str,
    base: Base,
    target_arch: Arch,
    engine_arch: Arch,
    packages: tuple[str, ...],
    emulated: bool,
    has_recipe: bool,
    gnunet_perf: bool,
    work_dir: Path,
    log_dir: Path,
    on_line: Callable[[str], None] | None = None,
    apt_proxy: str | None = None,
) -> tuple[cross.CrossPlan | None, str]:
    """The cross plan of a target and the image id of its build base (``""`` if none).

    The build base is ``base`` bootstrapped for ``engine_arch``
    (``archbench-base/<name>:amd64``), made once for all targets that need it.

    Raises:
        BaseImageError: the build base cannot be bootstrapped.
    """
    plan = cross.plan_cross(
        target_arch,
        engine_arch,
        packages,
        bases.base_tag(base_name, engine_arch),
        emulated=emulated,
        has_recipe=has_recipe,
        gnunet_perf=gnunet_perf,
    )
    if plan is None:
        return None, ""
    build_base = bases.ensure_base(
        client,
        base_name,
        base,
        engine_arch,
        work_dir=work_dir,
        log_dir=log_dir,
        on_line=on_line,
        apt_proxy=apt_proxy,
    )
    return plan, build_base.image_id


def failure_marker(work_dir: Path, spec: images.ImageSpec) -> Path:
    """``<work>/cross-failed-<content hash>``: this cross stage failed before."""
    return work_dir / f"cross-failed-{spec.content_hash[:32]}"


def read_file(client: docker.DockerClient, image: str, path: str) -> dict[str, bytes]:
    """The regular files at ``path`` in ``image`` (a file or a directory, not recursive),
    by name, read through a container that is created and removed, never started."""
    container = client.containers.create(image, command=["true"], network_disabled=True)
    try:
        stream, _ = container.get_archive(path)
        data = b"".join(stream)
    finally:
        container.remove(force=True)
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            extracted = tar.extractfile(member) if member.isfile() else None
            if extracted is not None and member.name.count("/") <= 1:
                files[member.name.rpartition("/")[2]] = extracted.read()
    return files


def read_out(client: docker.DockerClient, image: str, plan: cross.CrossPlan) -> cross.CrossBuild:
    """Read the cross stage's results out of ``image`` (``OUT_DIR``, regular files).

    Raises:
        ImageBuildError: the image lacks the drivers, a valid runtime-packages.txt
            or a valid debs.txt.
    """
    found = read_file(client, image, OUT_DIR)
    if "blindsig" not in found:
        raise ImageBuildError(f"cross stage {image} has no {OUT_DIR}/blindsig")
    try:
        libraries = cross.parse_runtime_packages(
            found.get("runtime-packages.txt", b"").decode(), plan.debian_arch
        )
        debs = cross.parse_debs(found.pop("debs.txt", b"").decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ImageBuildError(f"cross stage {image}: {exc}") from exc
    files = {f"cross/harness/{name}": data for name, data in found.items()}
    files["cross/debs.txt"] = ("\n".join(debs) + "\n").encode()
    return cross.CrossBuild(
        plan,
        str(client.images.get(image).id),
        tuple(sorted(files.items())),
        (*plan.runtime_packages, *libraries),
    )


def ensure_target_image(
    client: docker.DockerClient,
    plan_spec: Callable[[cross.CrossBuild | None], images.ImageSpec],
    cross_plan: cross.CrossPlan | None,
    build_base_id: str,
    *,
    target_base: str,
    work_dir: Path,
    log_path: Path,
    on_line: Callable[[str], None] | None = None,
    rebuild: bool = False,
    network_mode: str | None = None,
    apt_proxy: str | None = None,
) -> tuple[images.ImageSpec, str, bool]:
    """Build or reuse the target's image; returns ``(spec, image id, reused)``.

    ``plan_spec(cross_build)`` gives the benchmark image's :class:`ImageSpec`
    (:func:`archbench.build.images.plan_image`); ``target_base`` is the tag of the
    target's base image. With a cross plan the cross stage is
    built (log ``<log>.cross.log``) unless it failed before
    (:func:`failure_marker`); on failure the image is built without it.

    Raises:
        ImageBuildError: the benchmark image's build failed.
    """

    def build(spec: images.ImageSpec, path: Path) -> tuple[str, bool]:
        return images.ensure_image(
            client,
            spec,
            log_path=path,
            on_line=on_line,
            rebuild=rebuild,
            network_mode=network_mode,
            apt_proxy=apt_proxy,
        )

    built: cross.CrossBuild | None = None
    if cross_plan is not None:
        status = read_file(client, target_base, "/var/lib/dpkg/status").get("status", b"")
        cross_spec = images.plan_cross_image(cross_plan, build_base_id, status)
        marker = failure_marker(work_dir, cross_spec)
        if not marker.exists() or rebuild:
            cross_log = log_path.with_name(log_path.name.replace(".build.log", ".cross.log"))
            try:
                build(cross_spec, cross_log)
                built = read_out(client, cross_spec.tag, cross_plan)
            except ImageBuildError as exc:
                work_dir.mkdir(parents=True, exist_ok=True)
                marker.write_text(str(exc), encoding="utf-8")
                if on_line is not None:
                    on_line(
                        f"cross-compiling the drivers for {cross_plan.debian_arch} failed (log: "
                        f"{cross_log}); compiling them in the emulated image instead"
                    )
    spec = plan_spec(built)
    return (spec, *build(spec, log_path))


DEFAULT_PROXY_PORT = 3142
"""apt-cacher-ng's port (``scripts/setup-host.sh`` starts it on this machine)."""


def resolve_apt_proxy(client: docker.DockerClient | None, setting: str) -> str | None:
    """The apt proxy URL the local engine's builds use, from ``archbench.apt_proxy``.

    ``""`` or ``off``: none. ``auto``: apt-cacher-ng on this machine when something
    listens on port 3142, reached from build containers through the gateway of the
    engine's ``bridge`` network (``http://<gateway>:3142``); none otherwise or without
    a local engine. Anything else must pass :func:`archbench.build.cross.check_apt_proxy`.

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
