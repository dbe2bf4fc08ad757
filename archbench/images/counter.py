"""Counting layer images: a target's benchmark image plus an amd64 QEMU with our plugin.

Two content-hashed images (design and reasons in ``docs/counting.md``):

* the counter tools, ``archbench/count-tools:amd64-<hash>``, built FROM an amd64
  Debian bookworm base that archbench bootstraps like any other
  (:func:`archbench.images.bases.ensure_base`): Debian's dynamic ``qemu-user`` (the
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
* on amd64 only, the callgrind layer, ``archbench/callgrind:amd64-<hash>``, FROM a
  counting layer plus Debian's ``valgrind`` (``images/counter/Dockerfile.callgrind.j2``),
  for the harness's ``--callgrind`` check of the plugin (:func:`ensure_callgrind_image`).

Every tag hashes every input; an unchanged one is reused.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import docker
import docker.errors
import jinja2
from docker.errors import DockerException

from archbench import REPO_ROOT
from archbench.errors import BaseImageError, ImageBuildError
from archbench.images.bases import LABEL_CONFIG, base_tag, bootstrap_tool, config_hash, ensure_base
from archbench.images.builder import (
    Builder,
    ImageSpec,
    digest,
    ensure_image,
    image_files,
    image_labels,
)
from archbench.images.symbols import SymbolFiles, ensure_symbols
from archbench.matrix import Base
from archbench.platforms import Arch

COUNTER_DIR = REPO_ROOT / "images" / "counter"
PLUGIN_SOURCE = "archbench_count.c"
PLUGIN_VERSION = "3"
"""Bump with every change to the plugin's counting or output format."""
TOOLS_BASE_NAME = "debian-bookworm"
TOOLS_BASE = Base(source="bootstrap", suite="bookworm", variant="minbase")
"""Debian 12: the last release whose ``qemu-user`` is dynamic and loads plugins (QEMU 7.2)."""
EXEC_COUNTED = "exec-counted"
"""The wrapper that runs a program a guest test execs under the counting QEMU
(``images/counter/exec-counted``: Taler's secmods)."""
COUNTER_IN_IMAGE = "/opt/archbench/counter"
"""Where the counting layer puts the counter (the harness's ``--count-with``)."""
_GUESTS = tuple(a.value.qemu_name for a in Arch)


def _render(template: str, **values: object) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(COUNTER_DIR),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701  # a Dockerfile, not HTML
    )
    return env.get_template(template).render(**values)


def plan_tools(base_tag: str, base_id: str) -> ImageSpec:
    """The counter tools image FROM the amd64 bookworm base ``base_tag`` (id ``base_id``)."""
    dockerfile = _render("Dockerfile.tools.j2", amd64_base=base_tag, qemu_names=_GUESTS)
    source = (COUNTER_DIR / PLUGIN_SOURCE).read_bytes()
    return ImageSpec(
        "archbench/count-tools",
        Arch.AMD64,
        dockerfile,
        ((PLUGIN_SOURCE, source),),
        digest(dockerfile.encode(), base_id.encode(), source),
    )


def plan_layer(
    bench_tag: str, bench_id: str, arch: Arch, tools_id: str, symbols_id: str = ""
) -> ImageSpec:
    """The counting layer's Dockerfile and tag (over the benchmark image, the tools image,
    the symbols image ``symbols_id`` (empty: none) and :data:`EXEC_COUNTED`); its files
    come from :func:`counter_files` when it is built (:func:`ensure_counting_image`)."""
    dockerfile = _render("Dockerfile.layer.j2", bench_image=bench_tag, platform=arch.platform)
    return ImageSpec(
        "archbench/count",
        arch,
        dockerfile,
        (),
        digest(
            dockerfile.encode(),
            bench_id.encode(),
            tools_id.encode(),
            arch.key.encode(),
            (COUNTER_DIR / EXEC_COUNTED).read_bytes(),
            *((b"symbols", symbols_id.encode()) if symbols_id else ()),
        ),
    )


def counter_files(
    builder: Builder, tools_tag: str, arch: Arch
) -> tuple[tuple[str, bytes, int], ...]:
    """The files of ``/opt/archbench/counter`` for ``arch``, read out of the tools image.

    Returns ``(context path under counter/, bytes, mode)``: the x86-64 loader,
    ``lib/*``, the plugin, ``qemu-<arch>``, ``counter.json`` (QEMU file
    name, version, Debian package version, plugin version, tools image) and
    :data:`EXEC_COUNTED` (from this repository).

    Raises:
        ImageBuildError: the tools image lacks a file it must have.
    """
    qemu = f"qemu-{arch.value.qemu_name}"
    keep_top = {"ld-linux-x86-64.so.2", "libarchbench_count.so", qemu}
    files: list[tuple[str, bytes, int]] = []
    texts: dict[str, str] = {}
    for name, (blob, mode) in image_files(builder.client, tools_tag, "/out").items():
        rel = name.removeprefix("out/")
        if rel.endswith(".txt"):
            texts[rel] = blob.decode().strip()
        elif rel in keep_top or rel.startswith("lib/"):
            files.append((f"counter/{rel}", blob, mode & 0o755))
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
    # Executable from the image: the harness's /tmp is noexec, so the shadow prefix there
    # only links to it (harness/abh/suites/taler_counting.py).
    wrapper = COUNTER_DIR / EXEC_COUNTED
    files.append((f"counter/{EXEC_COUNTED}", wrapper.read_bytes(), 0o755))
    return tuple(sorted(files))


def counter_qemu_version(client: docker.DockerClient, arch: Arch) -> str | None:
    """The version line of the QEMU the engine ``client`` would count ``arch`` with, as a
    counting result records it (``Counting.qemu_version``: ``qemu-riscv64 version 7.2.22
    (Debian 1:7.2+dfsg-7+deb12u16)``); None when the counter tools image, or the base it
    is built on, is not on the engine yet (the first count builds them).

    Reads ``/out/qemu-version.txt`` of the tools image through a container that is created
    and removed, never started (about 0.1 to 0.3 s).
    """
    tag = base_tag(TOOLS_BASE_NAME, Arch.AMD64)
    labels = image_labels(client, tag)
    wanted = config_hash(TOOLS_BASE, Arch.AMD64, bootstrap_tool())
    if labels is None or labels.get(LABEL_CONFIG) != wanted:
        return None
    tools = plan_tools(tag, str(client.images.get(tag).id))
    try:
        client.images.get(tools.tag)
        found = image_files(client, tools.tag, "/out/qemu-version.txt")
    except docker.errors.NotFound:
        return None
    text = next(iter(found.values()), (b"", 0))[0].decode(errors="replace").strip()
    return text.replace("qemu-x86_64", f"qemu-{arch.value.qemu_name}") if text else None


@dataclass(frozen=True)
class CountingImage:
    """A counting layer present on the engine."""

    tag: str
    image_id: str
    tools_tag: str
    reused: bool
    symbols_tag: str = ""
    """The symbols image whose files the layer carries (empty: none, see ``symbols_note``)."""
    symbols_note: str = ""
    """Why the layer has no symbol files, when it has none."""


@dataclass(frozen=True)
class CounterTools:
    """The counter tools image present on the engine."""

    tag: str
    image_id: str


def ensure_counter_tools(builder: Builder) -> CounterTools:
    """Build (or reuse) the counter tools image and the amd64 bookworm base under it.

    Needs nothing of a target, so :mod:`archbench.run.target` starts it beside the
    target's base and image. Log: ``count-tools.build.log`` in the log dir.
    ``builder``'s ``rebuild``, apt cache and build network are not applied: the hash
    pins every input, and the tools build downloads directly on the engine's default
    network.

    Raises:
        BaseImageError: the amd64 bookworm base cannot be bootstrapped.
        ImageBuildError: the build fails (its log is kept in the log dir).
    """
    builder = dataclasses.replace(builder, rebuild=False, apt_proxy=None, network_mode=None)
    # Targets built side by side ask for the same tools at once: the base's and the
    # image's locks (Builder.lock) let one build and the others then find the image.
    base = ensure_base(builder, TOOLS_BASE_NAME, TOOLS_BASE, Arch.AMD64)
    tools = plan_tools(base.tag, base.image_id)
    tools_id, _ = ensure_image(builder, tools, "count-tools.build.log")
    return CounterTools(tools.tag, tools_id)


def ensure_counting_image(
    builder: Builder,
    bench_tag: str,
    bench_id: str,
    arch: Arch,
    tools: CounterTools | None = None,
    symbols_for: tuple[str, Base] | None = None,
) -> CountingImage:
    """Build (or reuse) the counting layer over ``bench_tag``.

    ``tools``: the counter tools image (:func:`ensure_counter_tools`, made here when
    None). ``symbols_for``: the target's base (matrix name and definition) when the
    layer should carry symbol files for Debian's stripped libraries
    (:func:`archbench.images.symbols.ensure_symbols`, built or reused first); when
    they cannot be made the layer goes without and ``symbols_note`` says why.
    Log: ``count-<arch>.build.log`` in the log dir. ``builder``'s ``rebuild``
    is not applied: the hash pins every input (a rebuilt benchmark image has a new
    id, hence a new layer).

    Raises:
        BaseImageError: the amd64 bookworm base cannot be bootstrapped.
        ImageBuildError: a build fails (its log is kept in the log dir).
    """
    if tools is None:
        tools = ensure_counter_tools(builder)
    symbols, note = _symbols(builder, bench_tag, arch, symbols_for)
    builder = dataclasses.replace(builder, rebuild=False, apt_proxy=None, network_mode=None)
    tools_id = tools.image_id

    def with_counter_files(spec: ImageSpec) -> ImageSpec:
        found = counter_files(builder, tools.tag, arch)
        if symbols is not None:
            found = tuple(sorted((*found, *symbols.files)))
        return dataclasses.replace(
            spec,
            files=tuple((path, data) for path, data, _ in found),
            modes=tuple((path, mode) for path, _, mode in found),
        )

    layer = plan_layer(
        bench_tag, bench_id, arch, tools_id, symbols.image_id if symbols is not None else ""
    )
    layer_id, reused = ensure_image(
        builder, layer, f"count-{arch.key}.build.log", complete=with_counter_files
    )
    return CountingImage(
        layer.tag, layer_id, tools.tag, reused, symbols.tag if symbols else "", note
    )


def _symbols(
    builder: Builder, bench_tag: str, arch: Arch, symbols_for: tuple[str, Base] | None
) -> tuple[SymbolFiles | None, str]:
    """The symbol files for the layer, or None and why not (said on the progress line)."""
    if symbols_for is None:
        return None, "not asked for"
    try:
        found = ensure_symbols(builder, bench_tag, arch, *symbols_for)
    except (ImageBuildError, BaseImageError, DockerException) as exc:
        note = f"the symbols image could not be built ({str(exc).splitlines()[0]})"
        builder.say(
            f"instructions: {note}; Debian's stripped libraries keep their own names "
            "('(no symbol) after ...')"
        )
        return None, note
    if found is None:
        return None, "no Debian base, or none of the libraries installed"
    return found, ""


def plan_callgrind_layer(count_tag: str, count_id: str) -> ImageSpec:
    """The callgrind layer's Dockerfile and tag over the amd64 counting layer ``count_tag``."""
    dockerfile = _render("Dockerfile.callgrind.j2", count_image=count_tag)
    return ImageSpec(
        "archbench/callgrind",
        Arch.AMD64,
        dockerfile,
        (),
        digest(dockerfile.encode(), count_id.encode()),
    )


def ensure_callgrind_image(builder: Builder, counting: CountingImage) -> tuple[str, str]:
    """Build (or reuse) the callgrind layer over an amd64 counting layer.

    Installs Debian's ``valgrind`` through ``builder``'s apt cache (about 225 MB
    and 20 s on trixie, measured 2026-12-03) into a layer of its own, so the
    counting and benchmark images stay without it. Log: ``callgrind.build.log``.

    Returns:
        (tag, image id).

    Raises:
        ImageBuildError: ``counting`` is not an amd64 layer (callgrind runs the
            guest natively), or the build fails (its log is kept in the log dir).
    """
    if not counting.tag.startswith("archbench/count:amd64-"):
        raise ImageBuildError(
            f"the callgrind check runs natively on amd64 only, not over {counting.tag}"
        )
    spec = plan_callgrind_layer(counting.tag, counting.image_id)
    image_id, _ = ensure_image(builder, spec, "callgrind.build.log")
    return spec.tag, image_id
