"""Counting layer images: a target's benchmark image plus an amd64 QEMU with our plugin.

Two content-hashed images (design and reasons in ``docs/counting.md``):

* the counter tools, ``archbench/count-tools:amd64-<hash>``, built FROM an amd64
  Debian bookworm base that archbench bootstraps like any other
  (:func:`archbench.build.bases.ensure_base`): Debian's dynamic ``qemu-user`` (the
  only Debian QEMU that loads TCG plugins: trixie ships static QEMU binaries
  without plugin support), the loader and libraries it needs, and
  ``images/counter/archbench_count.c`` compiled against ``qemu-plugin.h``
  taken from Debian's ``qemu`` source package of the same version (never
  copied into this repository). Rendered from ``images/counter/Dockerfile.tools.j2``.
* the counting layer, ``archbench/count:<arch>-<hash>``, FROM the target's
  benchmark image with ``/opt/archbench/counter`` added by COPY only
  (``images/counter/Dockerfile.layer.j2``), so building it for a foreign
  platform runs nothing under binfmt_misc. Its files are taken out of the
  tools image through the API (a multi-platform multi-stage build is refused
  by the classic builder) and sent in the build context with a
  ``counter.json`` manifest.

Both tags hash every input; an unchanged one is reused.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docker
import jinja2

from archbench import REPO_ROOT
from archbench.build.bases import ensure_base
from archbench.errors import ImageBuildError
from archbench.hosts import build_image, image_labels
from archbench.matrix import Base
from archbench.platforms import Arch

COUNTER_DIR = REPO_ROOT / "images" / "counter"
PLUGIN_SOURCE = "archbench_count.c"
PLUGIN_VERSION = "1"
"""Bump with every change to the plugin's counting or output format."""
TOOLS_BASE_NAME = "debian-bookworm"
TOOLS_BASE = Base(source="bootstrap", suite="bookworm", variant="minbase")
"""Debian 12: the last release whose ``qemu-user`` is dynamic and loads plugins (QEMU 7.2)."""
LABEL_INPUTS = "org.archbench.image.inputs"
IN_IMAGE_DIR = "/opt/archbench/counter"
_GUESTS = tuple(a.qemu_name for a in Arch)


@dataclass(frozen=True)
class BuildSpec:
    """A Dockerfile, its context files ``(path, bytes, mode)`` and its tag (pure data)."""

    dockerfile: str
    files: tuple[tuple[str, bytes, int], ...]
    content_hash: str
    tag: str
    platform: str


def _render(template: str, **values: object) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(COUNTER_DIR),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701  # a Dockerfile, not HTML
    )
    return env.get_template(template).render(**values)


def _hash(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def plan_tools(base_tag: str, base_id: str) -> BuildSpec:
    """The counter tools image FROM the amd64 bookworm base ``base_tag`` (id ``base_id``)."""
    dockerfile = _render("Dockerfile.tools.j2", amd64_base=base_tag, qemu_names=_GUESTS)
    source = (COUNTER_DIR / PLUGIN_SOURCE).read_bytes()
    digest = _hash(dockerfile.encode(), base_id.encode(), source)
    return BuildSpec(
        dockerfile,
        ((PLUGIN_SOURCE, source, 0o644),),
        digest,
        f"archbench/count-tools:amd64-{digest[:16]}",
        Arch.AMD64.platform,
    )


def plan_layer(bench_tag: str, bench_id: str, arch: Arch, tools_id: str) -> BuildSpec:
    """The counting layer's Dockerfile and tag (its files come from :func:`counter_files`)."""
    dockerfile = _render("Dockerfile.layer.j2", bench_image=bench_tag, platform=arch.platform)
    digest = _hash(dockerfile.encode(), bench_id.encode(), tools_id.encode(), arch.key.encode())
    return BuildSpec(
        dockerfile, (), digest, f"archbench/count:{arch.key}-{digest[:16]}", arch.platform
    )


def _context(spec: BuildSpec) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data, mode in (("Dockerfile", spec.dockerfile.encode(), 0o644), *spec.files):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def _ensure(
    client: docker.DockerClient,
    spec: BuildSpec,
    log_path: Path,
    on_line: Callable[[str], None] | None,
    files: Callable[[], tuple[tuple[str, bytes, int], ...]] | None = None,
) -> tuple[str, bool]:
    labels = image_labels(client, spec.tag)
    if labels is not None and labels.get(LABEL_INPUTS) == spec.content_hash:
        return str(client.images.get(spec.tag).id), True
    if files is not None:
        spec = BuildSpec(spec.dockerfile, files(), spec.content_hash, spec.tag, spec.platform)
    image_id = build_image(
        client,
        _context(spec),
        tag=spec.tag,
        platform=spec.platform,
        labels={LABEL_INPUTS: spec.content_hash},
        log_path=log_path,
        on_line=on_line,
    )
    return image_id, False


def counter_files(
    client: docker.DockerClient, tools_tag: str, arch: Arch
) -> tuple[tuple[str, bytes, int], ...]:
    """The files of ``/opt/archbench/counter`` for ``arch``, read out of the tools image.

    Returns ``(context path under counter/, bytes, mode)``: the x86-64 loader,
    ``lib/*``, the plugin, ``qemu-<arch>`` and ``counter.json`` (QEMU file
    name, version, Debian package version, plugin version, tools image).

    Raises:
        ImageBuildError: the tools image lacks a file it must have.
    """
    container = client.containers.create(tools_tag, command=["true"])
    try:
        stream, _ = container.get_archive("/out")
        data = b"".join(stream)
    finally:
        container.remove(force=True)
    qemu = f"qemu-{arch.qemu_name}"
    keep_top = {"ld-linux-x86-64.so.2", "libarchbench_count.so", qemu}
    files: list[tuple[str, bytes, int]] = []
    texts: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = member.name.removeprefix("out/")
            extracted = tar.extractfile(member)
            assert extracted is not None
            blob = extracted.read()
            if rel.endswith(".txt"):
                texts[rel] = blob.decode().strip()
            elif rel in keep_top or rel.startswith("lib/"):
                files.append((f"counter/{rel}", blob, member.mode & 0o755))
    have = {p.removeprefix("counter/") for p, _, _ in files}
    missing = keep_top - have
    if missing or "qemu-version.txt" not in texts:
        raise ImageBuildError(f"counter tools image {tools_tag} lacks {sorted(missing)}")
    manifest = {
        "qemu": qemu,
        "qemu_version": texts["qemu-version.txt"].replace("qemu-x86_64", qemu),
        "qemu_package": texts.get("qemu-package-version.txt", ""),
        "plugin_version": PLUGIN_VERSION,
        "tools_image": tools_tag,
    }
    files.append(("counter/counter.json", json.dumps(manifest, indent=2).encode(), 0o644))
    return tuple(sorted(files))


@dataclass(frozen=True)
class CountingImage:
    """A counting layer present on the engine."""

    tag: str
    image_id: str
    tools_tag: str
    reused: bool


def ensure_counting_image(
    client: docker.DockerClient,
    bench_tag: str,
    bench_id: str,
    arch: Arch,
    *,
    work_dir: Path,
    log_dir: Path,
    on_line: Callable[[str], None] | None = None,
) -> CountingImage:
    """Build (or reuse) the tools image and the counting layer over ``bench_tag``.

    Raises:
        BaseImageError: the amd64 bookworm base cannot be bootstrapped.
        ImageBuildError: a build fails (its log is kept in ``log_dir``).
    """
    base = ensure_base(
        client,
        TOOLS_BASE_NAME,
        TOOLS_BASE,
        Arch.AMD64,
        work_dir=work_dir,
        log_dir=log_dir,
        on_line=on_line,
    )
    tools = plan_tools(base.tag, base.image_id)
    tools_id, _ = _ensure(client, tools, log_dir / "count-tools.build.log", on_line)
    layer = plan_layer(bench_tag, bench_id, arch, tools_id)
    layer_id, reused = _ensure(
        client,
        layer,
        log_dir / f"count-{arch.key}.build.log",
        on_line,
        files=lambda: counter_files(client, tools.tag, arch),
    )
    return CountingImage(layer.tag, layer_id, tools.tag, reused)
