"""archive."""

from __future__ import annotations

from archbench.archive.format import ArchivedImage

__all__ = [
    "ArchivedImage",
]
