"""hosts."""

from __future__ import annotations

from archbench.hosts.engine import build_image, engine_version, host_cpu_model, image_labels

__all__ = [
    "build_image",
    "engine_version",
    "host_cpu_model",
    "image_labels",
]
