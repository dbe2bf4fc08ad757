"""Building the images a target runs in: bases, benchmark images, cross stages, counting layers.

matrix -> **bases -> images** -> run. Every image is reused while its inputs are
unchanged and rebuilt when any of them changes:

* :mod:`archbench.images.builder`: the one mechanism. A :class:`Builder` carries
  what every build of a target shares (engine, work and log directories, progress
  callback, ``--rebuild``, apt cache, build network); :func:`ensure_image` builds
  an :class:`ImageSpec` unless an image labelled with its content hash exists;
  :func:`resolve_apt_proxy` reads ``invoke.yaml``'s ``apt_proxy``;
* :mod:`archbench.images.bases`: a Debian/Ubuntu root file system per
  architecture, bootstrapped or pulled (:func:`ensure_base`, :func:`base_tag`);
* :mod:`archbench.images.benchmark`: the benchmark image of a target (base +
  dependency profile + harness, :func:`plan_image`) and its image stage
  (:func:`prepare_cross`, :func:`ensure_target_image`), which cross-compiles the
  drivers of emulated targets where the release allows;
* :mod:`archbench.images.cross`: the cross-build decisions and the apt cache's
  URL grammar; pure, it never imports ``docker``;
* :mod:`archbench.images.counter`: the counter tools and the counting layer over a
  benchmark image (``--metric instructions``, :func:`ensure_counting_image`), and on
  amd64 the callgrind layer over it that checks the counts (:func:`ensure_callgrind_image`);
* :mod:`archbench.images.symbols`: the symbol files the counting layer carries for
  Debian's stripped libgcrypt, libsodium and libc (:func:`ensure_symbols`: ``nostrip``
  rebuilds of the installed source versions, cross-built for emulated targets, and
  ``libc6-dbg``).

Planning a spec (``plan_*``) touches no engine; everything that builds takes a
:class:`Builder`.

A ``gnunet:`` or ``taler:`` source comes from :mod:`archbench.sources`, resolved and
prepared there and packed into a :class:`~archbench.sources.ContextFile`;
:func:`plan_image` with a :class:`GnunetBuild` builds libgnunetutil from it inside a
native target's image, or unpacks the prefix :mod:`archbench.images.incremental` built
already in a persistent tree (:func:`build_incremental`, where :func:`incremental_applies`).
"""

from __future__ import annotations

from archbench.images.bases import BaseImage, base_tag, ensure_base
from archbench.images.benchmark import (
    GNUNET_BUILD_PACKAGES,
    TALER_BUILD_PACKAGES,
    GnunetBuild,
    TalerBuild,
    ensure_target_image,
    harness_files,
    harness_sha256,
    plan_image,
    prepare_cross,
    warm_cross_stage,
)
from archbench.images.builder import (
    Builder,
    ImageSpec,
    build_context,
    ensure_image,
    image_labels,
    resolve_apt_proxy,
)
from archbench.images.counter import (
    COUNTER_IN_IMAGE,
    PLUGIN_VERSION,
    CounterTools,
    CountingImage,
    counter_qemu_version,
    ensure_callgrind_image,
    ensure_counter_tools,
    ensure_counting_image,
)
from archbench.images.cross import CrossBuild, CrossPlan
from archbench.images.incremental import (
    IncrementalBuild,
    Toolchain,
    build_incremental,
    cache_namespace,
    cache_volumes,
    incremental_applies,
    library_code,
    plan_toolchain,
    remove_caches,
    tree_key,
    tree_volume,
)
from archbench.images.symbols import SymbolFiles, ensure_symbols

__all__ = [
    "COUNTER_IN_IMAGE",
    "GNUNET_BUILD_PACKAGES",
    "PLUGIN_VERSION",
    "TALER_BUILD_PACKAGES",
    "BaseImage",
    "Builder",
    "CounterTools",
    "CountingImage",
    "CrossBuild",
    "CrossPlan",
    "GnunetBuild",
    "ImageSpec",
    "IncrementalBuild",
    "SymbolFiles",
    "TalerBuild",
    "Toolchain",
    "base_tag",
    "build_context",
    "build_incremental",
    "cache_namespace",
    "cache_volumes",
    "counter_qemu_version",
    "ensure_base",
    "ensure_callgrind_image",
    "ensure_counter_tools",
    "ensure_counting_image",
    "ensure_image",
    "ensure_symbols",
    "ensure_target_image",
    "harness_files",
    "harness_sha256",
    "image_labels",
    "incremental_applies",
    "library_code",
    "plan_image",
    "plan_toolchain",
    "prepare_cross",
    "remove_caches",
    "resolve_apt_proxy",
    "tree_key",
    "tree_volume",
    "warm_cross_stage",
]
