"""run."""

from __future__ import annotations

from archbench.run.options import RunOptions
from archbench.run.progress import RichReporter
from archbench.run.timings import TimingStore

__all__ = [
    "RichReporter",
    "RunOptions",
    "TimingStore",
]
