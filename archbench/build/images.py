"""Benchmark images: base + dependency profile + harness, tagged by content hash.

The Dockerfile is rendered from ``images/Dockerfile.j2`` with Jinja2. The
tag is ``archbench/bench:<arch>-<hash>`` where the hash covers every input:
the rendered Dockerfile, the base image id, the platform, the package list
and the bytes of every harness source file. An unchanged target is never
rebuilt; any change to an input always is. The harness is copied into the
image (no bind mount), so the same context builds on a remote engine.
"""

from __future__ import annotations

import hashlib
import io
import re
import shlex
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docker
import jinja2

from archbench import REPO_ROOT
from archbench.build import cross as cross_mod
from archbench.hosts import build_image, image_labels
from archbench.inputs import IMAGE_REFERENCE
from archbench.matrix import Recipe
from archbench.platforms import Arch

TEMPLATE_DIR = REPO_ROOT / "images"
HARNESS_DIR = REPO_ROOT / "harness"
LABEL_INPUTS = "org.archbench.image.inputs"

# Only sources go into the image: a stale local build of the driver must not
# change the hash or shadow the in-image build.
_HARNESS_PATTERNS = ("*.c", "*.h", "*.py", "Makefile", "*.json", "*.md", "count-key-rsa-*.key")


@dataclass(frozen=True)
class ImageSpec:
    """Everything needed to build one benchmark image (pure data, no engine).

    ``files`` maps context paths (``harness/drivers/blindsig.c``) to their bytes.
    """

    arch: Arch
    profile: str
    packages: tuple[str, ...]
    base_tag: str
    base_id: str
    dockerfile: str
    files: tuple[tuple[str, bytes], ...]
    content_hash: str
    repository: str = "archbench/bench"
    """``archbench/cross`` for the cross stage of an emulated target's image."""
    for_arch: Arch | None = None
    """The target a cross stage builds for (its ``arch`` is the engine's own)."""

    @property
    def tag(self) -> str:
        """``<repository>:<arch>-<first 16 hex digits of the content hash>``.

        ``archbench/bench:arm64-…``; a cross stage is named after its target
        (``archbench/cross:arm64-…``) although it is an amd64 image.
        """
        return f"{self.repository}:{(self.for_arch or self.arch).key}-{self.content_hash[:16]}"


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


def recipe_files(
    recipe: Recipe | None, template_dir: Path = TEMPLATE_DIR
) -> tuple[tuple[str, bytes], ...]:
    """Context files of a profile's recipe: ``recipes/<name>.sh`` (none without a recipe).

    Raises:
        FileNotFoundError: the recipe's script is missing from ``images/recipes``.
    """
    if recipe is None:
        return ()
    path = template_dir / "recipes" / f"{recipe.name}.sh"
    return ((f"recipes/{recipe.name}.sh", path.read_bytes()),)


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
    recipe: Recipe | None = None,
    gnunet_perf: bool = False,
    cross_packages: tuple[str, ...] = (),
) -> str:
    """Render ``Dockerfile.j2`` for one target (with the profile's recipe steps, if any,
    and the build of GNUnet's perf programs when ``gnunet_perf``).

    ``cross_packages``: the drivers were cross-compiled (:mod:`archbench.build.cross`) and
    are in the context under ``cross/harness/``; the image installs these runtime
    packages instead of ``packages`` and compiles nothing.

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
            recipe=recipe,
            gnunet_perf=gnunet_perf,
            cross_packages=cross_packages,
            build_env=cross_mod.build_env(arch),
        )
    )


def render_cross_dockerfile(cross: cross_mod.CrossPlan, template_dir: Path = TEMPLATE_DIR) -> str:
    """Render ``cross/Dockerfile.j2``: the cross stage of ``cross.target_arch``'s image.

    Raises:
        jinja2.TemplateError: the template is missing or broken.
        ValueError: a value would break out of its Dockerfile word or line.
    """
    return _environment(template_dir).get_template("cross/Dockerfile.j2").render(cross=cross)


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
) -> ImageSpec:
    """The :class:`ImageSpec` of a cross stage (``archbench/cross:<target>-<hash>``).

    Built for the engine's architecture (``cross.build_arch``) from
    ``cross.build_base`` (image id ``build_base_id``, part of the hash).
    ``target_status``: ``/var/lib/dpkg/status`` of the target's base image, against
    which the stage resolves the emulated stage's packages (also hashed).
    """
    dockerfile = render_cross_dockerfile(cross, template_dir)
    apt_conf = _environment(template_dir).get_template("cross/target-apt.conf.j2")
    scripts = tuple(
        (f"cross/{name}", (template_dir / "cross" / name).read_bytes())
        for name in ("runtime-packages.sh", "resolve-debs.sh")
    )
    files = (
        *harness_files(harness_dir),
        *scripts,
        ("cross/target-apt.conf", apt_conf.render(cross=cross).encode()),
        ("cross/target-status", target_status),
    )
    packages = (cross.toolchain, *cross.dev_packages)
    digest = content_hash(dockerfile, build_base_id, cross.build_arch, packages, files)
    return ImageSpec(
        cross.build_arch,
        "cross",
        packages,
        cross.build_base,
        build_base_id,
        dockerfile,
        files,
        digest,
        repository="archbench/cross",
        for_arch=cross.target_arch,
    )


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
    files: tuple[tuple[str, bytes], ...],
) -> str:
    """sha256 (hex) over every input of an image build, length-prefixed."""
    h = hashlib.sha256()

    def put(data: bytes) -> None:
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)

    for part in (dockerfile, base_id, arch.platform, "\n".join(packages)):
        put(part.encode())
    for path, data in files:
        put(path.encode())
        put(data)
    return h.hexdigest()


def plan_image(
    arch: Arch,
    profile: str,
    packages: tuple[str, ...],
    base_tag: str,
    base_id: str,
    harness_dir: Path = HARNESS_DIR,
    template_dir: Path = TEMPLATE_DIR,
    recipe: Recipe | None = None,
    gnunet_perf: bool = False,
    cross: cross_mod.CrossBuild | None = None,
) -> ImageSpec:
    """Assemble the :class:`ImageSpec` (and its tag) without touching an engine.

    ``gnunet_perf``: also build GNUnet's perf programs (the ``gnunet-perf`` suite
    runs); the image of a target without that suite is unchanged by it.
    ``cross``: the drivers cross-compiled by a cross stage (their bytes join the
    context and the hash); the image installs only runtime packages.
    """
    dockerfile = render_dockerfile(
        base_tag,
        arch,
        profile,
        packages,
        template_dir,
        recipe,
        gnunet_perf,
        cross.install if cross is not None else (),
    )
    files = (
        harness_files(harness_dir)
        + recipe_files(recipe, template_dir)
        + gnunet_perf_files(gnunet_perf, template_dir)
        + (cross.files if cross is not None else ())
    )
    digest = content_hash(dockerfile, base_id, arch, packages, files)
    return ImageSpec(arch, profile, packages, base_tag, base_id, dockerfile, files, digest)


def build_context(spec: ImageSpec) -> io.BytesIO:
    """The build context as an uncompressed tar in memory (Dockerfile + harness/)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in (("Dockerfile", spec.dockerfile.encode()), *spec.files):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o755 if cross_mod.is_driver_path(path) else 0o644
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def ensure_image(
    client: docker.DockerClient,
    spec: ImageSpec,
    *,
    log_path: Path,
    on_line: Callable[[str], None] | None = None,
    rebuild: bool = False,
    network_mode: str | None = None,
    apt_proxy: str | None = None,
) -> tuple[str, bool]:
    """Build ``spec`` unless an image with its content hash exists.

    Returns ``(image id, reused)``. ``network_mode`` is the network of the
    build's RUN steps (``host`` for engines without a bridge; None: default).
    ``apt_proxy``: the package cache the RUN steps download through (checked
    by :func:`archbench.build.cross.check_apt_proxy`; in neither the image nor its hash).

    Raises:
        ImageBuildError: the build failed; the log is kept at ``log_path``.
    """
    labels = image_labels(client, spec.tag)
    if labels is not None and labels.get(LABEL_INPUTS) == spec.content_hash and not rebuild:
        return str(client.images.get(spec.tag).id), True
    image_id = build_image(
        client,
        build_context(spec),
        tag=spec.tag,
        platform=spec.arch.platform,
        labels={LABEL_INPUTS: spec.content_hash, "org.archbench.image.profile": spec.profile},
        log_path=log_path,
        on_line=on_line,
        network_mode=network_mode,
        buildargs=cross_mod.build_args(apt_proxy),
    )
    return image_id, False
