"""A prepared tree packed for an image's build context, on disk.

:class:`ContextFile` is a build-context file too large to hold in memory (a packed
source tree, an installed prefix): the images read it in :data:`CHUNK` pieces.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1024 * 1024
"""What a context file on disk is read in, at most, at a time (1 MiB)."""


@dataclass(frozen=True)
class ContextFile:
    """A build-context file too large to hold in memory: its bytes are in the file
    ``path`` (``size`` bytes), read in :data:`CHUNK` pieces whenever they are hashed
    (:func:`archbench.images.builder.digest`) or packed
    (:func:`archbench.images.builder.build_context`). Its owner does not change it
    while a spec names it (a packed GNUnet tree is named by its sha256).
    """

    path: Path
    size: int

    def chunks(self) -> Iterator[bytes]:
        """The file's bytes in order, :data:`CHUNK` at a time.

        Raises:
            OSError: the file cannot be read, or holds another size than :attr:`size`
                (it changed since it was made).
        """
        seen = 0
        with self.path.open("rb") as f:
            while chunk := f.read(CHUNK):
                seen += len(chunk)
                if seen > self.size:
                    break
                yield chunk
        if seen != self.size:
            raise OSError(0, f"{self.path} has changed: {seen} bytes, {self.size} expected")
