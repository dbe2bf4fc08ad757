"""The sources a benchmark image builds from: GNUnet's and GNU Taler's exchange.

matrix -> **sources** -> images. A ``gnunet:`` or ``taler:`` source of the matrix is
resolved to a :class:`ResolvedSource`: what exactly will be built, the content key an
image's hash covers (the same source is never built twice, a changed one always is), and
the provenance a result records. It is then copied into a :class:`BuildTree` as the build
will see it, without touching the user's tree, and packed into a :class:`ContextFile` for
an image's build context; :mod:`archbench.images` builds it. Nothing here touches an
engine.

* :mod:`archbench.sources.model`: :class:`ResolvedSource`, :class:`BuildTree`, the limits
  every source is held to, versions (``git describe``'s, ``.version``, ``AC_INIT``);
* :mod:`archbench.sources.tarball`: a tarball pinned by its sha256, local or downloaded,
  and every tar stream read (bounded, checked to its end) and unpacked as untrusted input;
* :mod:`archbench.sources.git`: a git ref in a bare mirror, exported with ``git archive``,
  and git run without prompts or the commands a user's config names;
* :mod:`archbench.sources.commits`: the commits between two refs (:func:`commit_range`,
  ``invoke bisect``);
* :mod:`archbench.sources.tree`: a local working tree, its files hashed and copied as they
  are on disk;
* :mod:`archbench.sources.gnunet`: a GNUnet source resolved (:func:`resolve_gnunet`,
  :func:`check_local_source`) and its build tree prepared (:func:`prepare_build_tree`:
  ``.version``, the handbook stub, the stubs a snapshot lacks);
* :mod:`archbench.sources.taler`: an exchange source resolved (:func:`resolve_taler`) and
  prepared (:func:`prepare_taler_tree`);
* :mod:`archbench.sources.packing`: a build tree packed reproducibly, streaming
  (:func:`pack_build_tree`), to a :class:`ContextFile` on disk.
"""

from __future__ import annotations

from archbench.sources.commits import CommitInfo, commit_range
from archbench.sources.gnunet import check_local_source, prepare_build_tree, resolve_gnunet
from archbench.sources.model import BuildTree, ResolvedSource, locked
from archbench.sources.packing import ContextFile, pack_build_tree
from archbench.sources.taler import prepare_taler_tree, resolve_taler

__all__ = [
    "BuildTree",
    "CommitInfo",
    "ContextFile",
    "ResolvedSource",
    "check_local_source",
    "commit_range",
    "locked",
    "pack_build_tree",
    "prepare_build_tree",
    "prepare_taler_tree",
    "resolve_gnunet",
    "resolve_taler",
]
