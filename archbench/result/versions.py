"""The stored result format's name and versions, and the migration of older files.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Any, Literal

RESULT_FORMAT: Literal["archbench-result"] = "archbench-result"
RESULT_VERSION: Literal[2] = 2
"""Version 2 (instruction counts): ``Result.metric``, ``HarnessDocument.counting`` and
``Row.instructions``. Version 1 files are migrated on load (:func:`migrate`)."""


def migrate(data: Any) -> Any:
    """A stored result brought up to :data:`RESULT_VERSION` (a copy; as asv does on load).

    Version 1 -> 2: ``metric`` becomes ``time`` (version 1 only stored times);
    nothing else changed. Other versions and non-objects are returned as they
    are, for the header check of
    :func:`archbench.result.loading.load` to report.
    """
    if isinstance(data, dict) and data.get("format") == RESULT_FORMAT and data.get("version") == 1:
        return {**data, "version": 2, "metric": data.get("metric", "time")}
    return data
