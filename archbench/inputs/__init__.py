"""inputs."""

from __future__ import annotations

from archbench.inputs.bounded import load_json, quote, read_text
from archbench.inputs.messages import did_you_mean
from archbench.inputs.types import (
    BaseName,
    ImageRef,
    MirrorUrl,
    Name,
    PackageSpec,
    Strict,
    SuiteName,
    TargetName,
    UpstreamVersion,
)

__all__ = [
    "BaseName",
    "ImageRef",
    "MirrorUrl",
    "Name",
    "PackageSpec",
    "Strict",
    "SuiteName",
    "TargetName",
    "UpstreamVersion",
    "did_you_mean",
    "load_json",
    "quote",
    "read_text",
]
