"""The sources a benchmark image builds from: GNUnet's and GNU Taler's exchange.

matrix -> **sources** -> images. A ``gnunet:`` or ``taler:`` source of the matrix is
resolved to a :class:`ResolvedSource` (what exactly will be built, its content key for
image hashes, its provenance for results), copied into a :class:`BuildTree` as the build
will see it without touching the user's tree, and packed into a :class:`ContextFile`
for an image's build context; the images (:mod:`archbench.images`) build it.
"""

from __future__ import annotations

from archbench.sources.gnunet import (
    BuildTree,
    CommitInfo,
    ResolvedSource,
    check_local_source,
    commit_range,
    pack_build_tree,
    prepare_build_tree,
    prepare_taler_tree,
    resolve_gnunet,
    resolve_taler,
)
from archbench.sources.packing import ContextFile

__all__ = [
    "BuildTree",
    "CommitInfo",
    "ContextFile",
    "ResolvedSource",
    "check_local_source",
    "commit_range",
    "pack_build_tree",
    "prepare_build_tree",
    "prepare_taler_tree",
    "resolve_gnunet",
    "resolve_taler",
]
