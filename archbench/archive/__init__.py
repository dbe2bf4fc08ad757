"""Archives: one run's images, matrix, results and report in one directory or tar, rerunnable.

``invoke archive RUN_ID`` writes a run as a self-contained, hash-checked archive;
``invoke bench --from-archive PATH`` reruns it on another machine with exactly the
archived images (nothing bootstrapped or built). This package is the archive
*format*, :mod:`~archbench.archive.format`: the layout and ``manifest.json``
(format ``archbench-archive`` version 1, :class:`ArchiveManifest`), the path
grammar every name read from an archive must pass (:func:`check_relpath`),
verification of sizes and sha256 (:func:`verify` → :class:`VerifiedArchive`),
the images a run used (:class:`ArchivedImage`, :func:`images_used`), and the
tar form (:func:`write_tar`, :func:`extract_tar`, which refuses links and
special files). It is pure: it never imports ``docker``, so planning a rerun
needs no engine. The engine's part (``docker save``/``docker load`` through the
SDK, the targets a rerun may run) is :mod:`archbench.hosts.archives`.

Errors: :class:`archbench.errors.ArchiveError` (a path, size, hash or image that
does not match, an existing output).
"""

from __future__ import annotations

from archbench.archive.format import (
    MANIFEST_FILE,
    ArchivedImage,
    ArchiveManifest,
    FileEntry,
    ImageEntry,
    ImageUse,
    VerifiedArchive,
    check_relpath,
    extract_tar,
    images_used,
    list_files,
    verify,
    write_tar,
)

__all__ = [
    "MANIFEST_FILE",
    "ArchiveManifest",
    "ArchivedImage",
    "FileEntry",
    "ImageEntry",
    "ImageUse",
    "VerifiedArchive",
    "check_relpath",
    "extract_tar",
    "images_used",
    "list_files",
    "verify",
    "write_tar",
]
