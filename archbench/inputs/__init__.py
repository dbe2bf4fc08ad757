"""inputs."""

from __future__ import annotations

from archbench.inputs.bounded import load_json, quote, read_text
from archbench.inputs.flags import (
    check_cpuset_fits,
    ci_target,
    cpus_of,
    cpuset,
    integer,
    real,
    selection,
)
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
    "check_cpuset_fits",
    "ci_target",
    "cpus_of",
    "cpuset",
    "did_you_mean",
    "integer",
    "load_json",
    "quote",
    "read_text",
    "real",
    "selection",
]
