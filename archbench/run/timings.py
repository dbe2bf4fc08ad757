"""Stored durations for ETAs: suites by target and settings, builds by stage and architecture.

One JSON file in the work directory (``invoke.yaml``'s ``work``, scratch space of this
machine: durations say nothing about other machines, so they stay out of the results),
``<work>/timings.json`` (``{"version": 1, "entries": {key: {"seconds", "run_id", "at"}}}``),
written atomically after each finished suite, bootstrap and image build. Keys:

* ``suite/<host>/<target>/<suite>/<settings hash>``: a suite's ``duration_s`` as the
  harness recorded it; the hash covers the suite's settings (:func:`settings_hash`),
  so a run with other settings has no ETA rather than a wrong one.
* ``base/<host>/<base>/<arch>`` and ``image/<host>/<profile>/<arch>``: wall time of the
  last bootstrap (or pull) and image build that did work (reused ones are not recorded).

An unreadable file counts as empty (ETAs are a convenience; nothing is measured from
them) and is replaced at the next write.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from archbench.suites import Suites

FILE_NAME = "timings.json"
_LOCK = threading.Lock()
"""One lock for every store: the pipeline's worker threads read, change and write the file."""


def settings_hash(settings: BaseModel) -> str:
    """sha256 (16 hex digits) of a suite's settings without ``enabled``, keys sorted."""
    doc = settings.model_dump(mode="json", exclude={"enabled"})
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def suite_key(host: str, target: str, suite: str, settings: BaseModel) -> str:
    """Key of a suite's duration: ``suite/<host>/<target>/<suite>/<settings hash>``."""
    return f"suite/{host}/{target}/{suite}/{settings_hash(settings)}"


def stage_key(stage: str, host: str, name: str, arch: str) -> str:
    """Key of a build stage: ``base/<host>/<base>/<arch>`` or ``image/<host>/<profile>/<arch>``."""
    return f"{stage}/{host}/{name}/{arch}"


class TimingStore:
    """The durations file in ``work_dir``; safe to share between threads."""

    def __init__(self, work_dir: Path) -> None:
        self.path = work_dir / FILE_NAME

    def _read(self) -> dict[str, Any]:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        entries = doc.get("entries") if isinstance(doc, dict) else None
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str) -> float | None:
        """The stored duration in s for ``key``, or None when there is none."""
        with _LOCK:
            entry = self._read().get(key)
        seconds = entry.get("seconds") if isinstance(entry, dict) else None
        return float(seconds) if isinstance(seconds, int | float) and seconds >= 0 else None

    def record(self, key: str, seconds: float, run_id: str) -> None:
        """Store ``seconds`` (>= 0) for ``key``, replacing the previous value.

        Errors writing the file are ignored: the durations only feed ETAs.
        """
        if seconds < 0:
            return
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        with _LOCK:
            entries = self._read()
            entries[key] = {"seconds": round(seconds, 3), "run_id": run_id, "at": at}
            text = json.dumps({"version": 1, "entries": entries}, indent=1, sort_keys=True)
            with contextlib.suppress(OSError):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".timings-")
                try:
                    with os.fdopen(fd, "w", encoding="utf-8") as f:
                        f.write(text + "\n")
                    os.replace(tmp, self.path)
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)

    def suite_estimates(self, host: str, target: str, suites: Suites) -> dict[str, float | None]:
        """Suite -> stored duration in s of its last run on ``host`` by ``target`` with the
        same settings (None: none recorded), for the enabled ``suites`` in the order the
        harness runs them."""
        return {
            name: self.get(suite_key(host, target, name, settings))
            for name, settings in suites.enabled().items()
        }

    def run_estimate(self, host: str, target: str, suites: Suites, repeat: int = 1) -> float | None:
        """ETA in s of a run stage (``repeat`` container runs), or None when a suite has no
        stored duration for its settings."""
        per_run = list(self.suite_estimates(host, target, suites).values())
        if any(s is None for s in per_run):
            return None
        return sum(s for s in per_run if s is not None) * repeat
