"""Base images: a Debian/Ubuntu root file system per architecture.

Two sources (``matrix.Base.source``):

* ``bootstrap``: Debian's ``mmdebstrap`` builds the suite for the target
  architecture straight into a tar (:func:`mmdebstrap_command`), or
  ``debootstrap`` where mmdebstrap is not installed, its tree then packed into a
  tar; either way an image is built ``FROM scratch`` with ``ADD rootfs.tar /`` and
  the target's ``platform``. ``docker import --platform`` is ignored by some
  engines, a build is not. mmdebstrap is the well-kept tool for this: apt resolves
  and downloads the packages in parallel and unpacks them natively, and only the
  maintainer scripts of a foreign architecture run under QEMU (binfmt_misc),
  where debootstrap runs dpkg for each package there; on a 2-core machine, from an
  empty package cache, a riscv64 trixie minbase took 97 s beside two other builds
  instead of 210 s alone (``docs/matrix.md``). No registry is needed; the mirror is
  the tool's default unless the matrix sets one (mmdebstrap's default adds the
  suite's ``-updates`` and ``-security`` sources).
* ``pull``: the registry image for the platform.

The packed root file system stays in the work directory
(``rootfs-<arch>-<config hash>.tar``), so the same base goes to several
engines (remote hosts) after one debootstrap; delete it to bootstrap afresh,
or build with ``rebuild`` (:class:`archbench.images.builder.Builder`).

Either way the result is tagged ``archbench-base/<base>:<arch>`` and labelled
with the hash of its configuration and its build date, so an unchanged base
is reused and a changed one is rebuilt.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import docker
import docker.errors
import docker.utils

from archbench.errors import BaseImageError, ImageBuildError
from archbench.images import cross
from archbench.images.builder import Builder, build_image, image_labels
from archbench.inputs import check_mirror, check_suite
from archbench.matrix import Base
from archbench.platforms import Arch, needs_emulation

LABEL_CONFIG = "org.archbench.base.config"
LABEL_BUILT = "org.archbench.base.built"
LABEL_NAME = "org.archbench.base.name"
LABEL_SOURCE = "org.archbench.base.source"

# Package caches and indexes are refetched by every image build; leaving them
# out makes the base about half as large.
_PRUNE = ("var/cache/apt/archives", "var/lib/apt/lists")


@dataclass(frozen=True)
class BaseImage:
    """A base image present on the engine."""

    name: str
    arch: Arch
    tag: str
    image_id: str
    built: str
    source: str
    reused: bool


def base_tag(name: str, arch: Arch) -> str:
    """Local tag of a base image: ``archbench-base/<name>:<arch key>``."""
    return f"archbench-base/{name}:{arch.key}"


def config_hash(base: Base, arch: Arch, tool: str = "debootstrap") -> str:
    """sha256 over everything that makes the base what it is (hex, 64 chars).

    ``tool`` is the bootstrap tool of a ``bootstrap`` base (:func:`bootstrap_tool`):
    mmdebstrap's sources and package set differ from debootstrap's.
    """
    doc: dict[str, object] = {"base": base.model_dump(mode="json"), "platform": arch.platform}
    if base.source == "bootstrap" and tool != "debootstrap":
        doc["tool"] = tool  # debootstrap's bases keep the hash they had before mmdebstrap
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def bootstrap_tool() -> str:
    """``mmdebstrap`` when it is installed, else ``debootstrap`` (older Debian releases)."""
    return "mmdebstrap" if shutil.which("mmdebstrap") is not None else "debootstrap"


def _positional(base: Base, target: Path) -> list[str]:
    """suite, absolute target path[, mirror], each checked so no value can pass for an option.

    Raises:
        BaseImageError: a value either tool might take for an option, or another variant.
    """
    assert base.suite is not None  # guaranteed by matrix validation of bootstrap bases
    try:
        positional = [check_suite(base.suite), str(target.absolute())]
        if base.mirror:
            positional.append(check_mirror(base.mirror))
    except ValueError as exc:
        raise BaseImageError(f"refusing to run debootstrap: {exc}") from exc
    if base.variant not in ("minbase", "buildd"):
        raise BaseImageError(f"refusing to run debootstrap with variant {base.variant!r}")
    return positional


def mmdebstrap_command(base: Base, arch: Arch, rootfs_tar: Path) -> list[str]:
    """The mmdebstrap command line for ``base`` on ``arch``, writing the tar ``rootfs_tar``.

    ``--mode=root``: archbench runs as root (device nodes, owners); a foreign
    architecture's maintainer scripts run through binfmt_misc's QEMU. Package lists and
    the package cache are left out of the tar (mmdebstrap's cleanup), so the base is as
    small as a pruned debootstrap tree. ``--`` ends the options; the positional values
    are checked as for :func:`debootstrap_command`.

    Raises:
        BaseImageError: as :func:`debootstrap_command`.
    """
    return [
        "mmdebstrap",
        # apt's and dpkg's own lines: what the progress display counts packages by.
        "--verbose",
        "--mode=root",
        f"--variant={base.variant}",
        f"--architectures={arch.debian_arch}",
        "--",
        *_positional(base, rootfs_tar),
    ]


def debootstrap_command(base: Base, arch: Arch, rootfs: Path) -> list[str]:
    """The debootstrap command line for ``base`` on ``arch`` into ``rootfs``.

    With no ``mirror`` set, debootstrap chooses its own default.
    debootstrap has no ``--`` end of options, so every positional value is
    checked again here (suite and mirror grammars, an absolute target path):
    none can start with ``-`` and be taken for an option.

    Raises:
        BaseImageError: the suite, mirror or path is not what debootstrap may
            take as a positional argument.
    """
    return [
        "debootstrap",
        f"--variant={base.variant}",
        f"--arch={arch.debian_arch}",
        *_positional(base, rootfs),
    ]


def ensure_base(builder: Builder, name: str, base: Base, arch: Arch) -> BaseImage:
    """Return the base image for ``arch``, bootstrapping or pulling it if needed.

    ``builder.work_dir`` holds the debootstrap tree while it is built and then the
    packed root file system (kept, see the module docs); ``builder.log_dir`` keeps
    ``base-<name>-<arch>.log``. ``builder.apt_proxy``: debootstrap downloads through
    this package cache (``http_proxy``; nothing of it stays in the base). One base
    is made once even when several targets, or several processes with this work
    directory, ask at once (the cross stages of emulated targets share the amd64
    base): see :meth:`Builder.lock`.

    Raises:
        BaseImageError: debootstrap is missing or fails, not root, or the
            pull fails (the message names the bootstrap alternative).
    """
    with builder.lock(f"base {base_tag(name, arch)}"):
        return _ensure_base(builder, name, base, arch)


def _ensure_base(builder: Builder, name: str, base: Base, arch: Arch) -> BaseImage:
    client = builder.client
    tag = base_tag(name, arch)
    tool = bootstrap_tool() if base.source == "bootstrap" else "pull"
    wanted = config_hash(base, arch, tool)
    labels = image_labels(client, tag)
    if labels is not None and labels.get(LABEL_CONFIG) == wanted and not builder.rebuild:
        image = client.images.get(tag)
        return BaseImage(
            name, arch, tag, str(image.id), labels.get(LABEL_BUILT, ""), base.source, True
        )
    built = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    new_labels = {
        LABEL_CONFIG: wanted,
        LABEL_BUILT: built,
        LABEL_NAME: name,
        LABEL_SOURCE: base.source,
    }
    log_path = builder.log_dir / f"base-{name}-{arch.key}.log"
    if base.source == "bootstrap":
        image_id = _bootstrap(builder, base, arch, tag, new_labels, log_path)
    else:
        image_id = _pull(builder, name, base, arch, tag, new_labels, log_path)
    return BaseImage(name, arch, tag, image_id, built, base.source, False)


def _bootstrap(
    builder: Builder,
    base: Base,
    arch: Arch,
    tag: str,
    labels: dict[str, str],
    log_path: Path,
) -> str:
    tool = bootstrap_tool()
    if tool == "debootstrap" and shutil.which("debootstrap") is None:
        raise BaseImageError(
            "neither mmdebstrap nor debootstrap is installed; as root: apt-get install "
            "mmdebstrap (or use a 'pull' base if a registry is reachable)"
        )
    if os.geteuid() != 0:
        raise BaseImageError(
            f"{tool} must run as root to create device nodes and set owners; "
            "rerun as root (sudo), or use a 'pull' base"
        )
    builder.work_dir.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    rootfs_tar = builder.work_dir / f"rootfs-{arch.key}-{labels[LABEL_CONFIG][:16]}.tar"
    # Several hosts may need the same base at once: bootstrap it once, then
    # send the same root file system to every engine.
    with builder.lock(f"root file system {rootfs_tar.name}", per_engine=False):
        if not rootfs_tar.is_file() or builder.rebuild:
            _bootstrap_tar(
                base, arch, rootfs_tar, log_path, builder.on_line, builder.apt_proxy, tool
            )
    return build_scratch_image(
        builder.client,
        rootfs_tar,
        tag=tag,
        platform=arch.platform,
        labels=labels,
        log_path=log_path.with_suffix(".build.log"),
        on_line=builder.on_line,
    )


def _bootstrap_tar(
    base: Base,
    arch: Arch,
    rootfs_tar: Path,
    log_path: Path,
    on_line: Callable[[str], None] | None,
    apt_proxy: str | None = None,
    tool: str = "debootstrap",
) -> None:
    """Bootstrap ``base`` into ``rootfs_tar`` (atomically) with ``tool``.

    mmdebstrap writes the tar itself; debootstrap fills a temporary tree, which is
    pruned (:data:`_PRUNE`) and packed here.
    """
    with tempfile.TemporaryDirectory(dir=rootfs_tar.parent, prefix=f"base-{arch.key}-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        # The package cache, and a faster QEMU CPU for the emulated second stage.
        extra = {**({"http_proxy": apt_proxy} if apt_proxy else {}), **cross.build_env(arch)}
        env = {**os.environ, **extra} if extra else None
        if on_line is not None:
            # What the progress display reads (archbench.run.progress.BUILD_MARK).
            foreign = _foreign(arch)
            on_line(
                f"archbench: bootstrapping {base.suite} for {arch.platform}"
                + (", second stage under QEMU" if foreign else "")
            )
        partial = Path(tmp) / "rootfs.tar"
        if tool == "mmdebstrap":
            _run_logged(mmdebstrap_command(base, arch, partial), log_path, on_line, env)
            os.replace(partial, rootfs_tar)
            return
        _run_logged(debootstrap_command(base, arch, rootfs), log_path, on_line, env)
        for rel in _PRUNE:
            target = rootfs / rel
            if target.is_dir():
                for child in target.iterdir():
                    if child.is_file():
                        child.unlink()
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
            for entry in sorted(rootfs.iterdir()):
                tar.add(entry, arcname=entry.name, recursive=True)
        os.replace(partial, rootfs_tar)


def _foreign(arch: Arch) -> bool:
    """True when ``arch`` is not this machine's, so its chroot's programs run under QEMU."""
    try:
        return needs_emulation(arch, Arch.native())
    except ValueError:
        return True


def build_scratch_image(
    client: docker.DockerClient,
    rootfs_tar: Path,
    *,
    tag: str,
    platform: str,
    labels: dict[str, str],
    log_path: Path,
    on_line: Callable[[str], None] | None = None,
) -> str:
    """Build an image ``FROM scratch`` holding ``rootfs_tar``, declared as ``platform``.

    ``ADD`` of a local tar keeps numeric owners and modes, which ``COPY`` of a
    directory would reset to root. The platform is whatever the caller says:
    the ``uname -m`` smoke test is what checks it against the contents.
    Returns the image id.

    Raises:
        BaseImageError: the engine refused the build; the log is kept.
    """
    dockerfile = b'FROM scratch\nADD rootfs.tar /\nCMD ["/bin/bash"]\n'
    context = rootfs_tar.with_name(rootfs_tar.name + ".context")
    try:
        with tarfile.open(context, "w") as outer:
            info = tarfile.TarInfo("Dockerfile")
            info.size = len(dockerfile)
            outer.addfile(info, io.BytesIO(dockerfile))
            outer.add(rootfs_tar, arcname="rootfs.tar")
        with context.open("rb") as fh:
            return build_image(
                client,
                fh,
                tag=tag,
                platform=platform,
                labels=labels,
                log_path=log_path,
                on_line=on_line,
            )
    except ImageBuildError as exc:
        raise BaseImageError(str(exc)) from exc
    finally:
        context.unlink(missing_ok=True)


_NO_INDICES: Final = re.compile(
    r"did not find any indices for architecture '([a-z0-9]{1,20})' in suite '([a-z0-9.-]{1,40})'"
)


def missing_port(line: str) -> str | None:
    """What to say when an apt line of mmdebstrap shows that the mirror has no packages
    of the architecture for the suite (Debian bookworm has no ``riscv64``: that port
    begins with trixie); None for any other line.

    The names are taken only as the pattern allows (lower-case letters, digits, ``.``,
    ``-``), so nothing else of the output reaches the message.
    """
    found = _NO_INDICES.search(line)
    if found is None:
        return None
    arch, suite = found.groups()
    hint = " (Debian's riscv64 port begins with trixie, Debian 13)" if arch == "riscv64" else ""
    return (
        f"the mirror has no {arch} packages for suite {suite}{hint}: this base cannot be "
        f"bootstrapped for {arch}; give the target a base of a suite that has {arch}, or "
        "set 'mirror:' on the base to a mirror that carries it"
    )


def _run_logged(
    cmd: list[str],
    log_path: Path,
    on_line: Callable[[str], None] | None,
    env: dict[str, str] | None = None,
) -> None:
    tail: deque[str] = deque(maxlen=20)
    missing: str | None = None
    with log_path.open("w", encoding="utf-8") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=env,
        )
        assert proc.stdout is not None  # stdout=PIPE was requested
        try:
            for line in proc.stdout:
                log.write(line)
                tail.append(line.rstrip())
                missing = missing or missing_port(line)
                if on_line is not None:
                    on_line(line.rstrip())
        finally:
            code = proc.wait()
    if code != 0 and missing is not None:
        raise BaseImageError(f"{missing}\n  full log: {log_path}")
    if code != 0:
        lines = "\n".join(f"    {t}" for t in tail)
        raise BaseImageError(
            f"{cmd[0]} failed with exit code {code}; last lines:\n{lines}\n  full log: {log_path}\n"
            "  If the mirror was syncing, retry; to use another mirror set 'mirror:' on the base."
        )


def _pull(
    builder: Builder,
    name: str,
    base: Base,
    arch: Arch,
    tag: str,
    labels: dict[str, str],
    log_path: Path,
) -> str:
    assert base.image is not None  # guaranteed by matrix validation of pull bases
    client = builder.client
    # The SDK's own split keeps a registry port (host:5000/repo:tag) in the repository.
    repo, ref = docker.utils.parse_repository_tag(base.image)
    try:
        image = client.images.pull(repo, tag=ref or "latest", platform=arch.platform)
    except docker.errors.APIError as exc:
        raise BaseImageError(
            f"pulling {base.image} for {arch.platform} failed: {exc.explanation or exc}. "
            f"Without a reachable registry, give base {name!r} 'source: bootstrap' and "
            "'suite: trixie' (debootstrap from Debian's mirror), or point the target at "
            "such a base in matrix.yml"
        ) from exc
    got = str(image.attrs.get("Architecture", ""))
    if Arch.from_machine(got) is not arch and got:
        raise BaseImageError(
            f"{base.image} pulled for {arch.platform} is a {got} image; the registry has no "
            f"{arch.platform} variant of it. Use a 'bootstrap' base for this architecture"
        )
    # A one-line build pins the pulled image under our own tag with our labels,
    # so pulling the same name for another platform cannot change it.
    dockerfile = f"FROM {image.id}\n".encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        tar.addfile(info, io.BytesIO(dockerfile))
    buf.seek(0)
    try:
        return build_image(
            client,
            buf,
            tag=tag,
            platform=arch.platform,
            labels=labels,
            log_path=log_path,
            on_line=builder.on_line,
        )
    except ImageBuildError as exc:
        raise BaseImageError(str(exc)) from exc
