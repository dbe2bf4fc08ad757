"""Archives: one run's images, matrix, results and report in one directory or tar, rerunnable.

``invoke archive RUN_ID`` writes a run as a self-contained, hash-checked archive;
``invoke bench --from-archive PATH`` reruns it on another machine with exactly the
archived images (nothing bootstrapped or built).

* :mod:`~archbench.archive.format`: the layout and ``manifest.json`` (format
  ``archbench-archive`` version 1), the path grammar every name read from an
  archive must pass, verification of sizes and sha256, the images a run used
  (:class:`ArchivedImage`), and the tar form (``write_tar``, ``extract_tar``,
  which refuses links and special files). Pure: it never imports ``docker``.
* :mod:`~archbench.archive.archiver`: the engine's part, ``docker save`` and
  ``docker load`` through the SDK (``create``, ``open_archive``, ``load_images``)
  and the targets a rerun may run. It imports ``docker``, so this face does not
  import it: ``from archbench.archive import archiver``.

Errors: :class:`archbench.errors.ArchiveError` (a path, size, hash or image that
does not match, an existing output), and from the archiver
:class:`archbench.errors.EngineError`.
"""

from __future__ import annotations

from archbench.archive.format import ArchivedImage

__all__ = [
    "ArchivedImage",
]
