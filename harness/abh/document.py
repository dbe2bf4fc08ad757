"""The ``archbench-harness`` version 1 document: its shape and its assembly.

The document is the harness's whole contract with the host (``CONTRACT.md``,
``schema-v1.json``): ``format``, ``version``, when and how long the run took,
the blindsig suite's ``parameters`` and ``calibration``, ``setup`` (see
``setup_system``), ``rows`` of every suite and ``suites`` (how each
requested suite went). Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypedDict

from abh.setup_system import SetupDict
from abh.suites import SuiteRunDict
from abh.suites.blindsig_document import CalibrationDict, ParametersDict, RowDict

HARNESS_VERSION = "0.2.0"
DOCUMENT_FORMAT = "archbench-harness"
DOCUMENT_VERSION = 1


class DocumentDict(TypedDict):
    """The whole ``archbench-harness`` version 1 document."""

    format: str
    version: int
    harness_version: str
    started_at: str
    duration_s: float
    parameters: ParametersDict | None
    calibration: CalibrationDict | None
    setup: SetupDict
    rows: list[dict[str, Any]]
    suites: dict[str, SuiteRunDict]


def utc_timestamp(moment: datetime) -> str:
    """Format an aware datetime as UTC ISO 8601 with seconds: "2026-11-29T22:40:00Z"."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_document(
    started_at: datetime,
    duration_s: float,
    parameters: ParametersDict | None,
    calibration: CalibrationDict | None,
    setup: SetupDict,
    rows: Sequence[RowDict | dict[str, Any]],
    suites: dict[str, SuiteRunDict] | None = None,
) -> DocumentDict:
    """Assemble the version 1 document.

    Args:
        started_at: aware datetime at which the run started.
        duration_s: wall time of the whole run in seconds (>= 0).
        parameters: the blindsig suite's parameters; None when it did not run.
        calibration: see build_calibration(); None without the blindsig driver.
        setup: see collect_setup().
        rows: see build_rows() and the suites' make_row().
        suites: suite name -> SuiteRunDict, one entry per requested suite.
    """
    return {
        "format": DOCUMENT_FORMAT,
        "version": DOCUMENT_VERSION,
        "harness_version": HARNESS_VERSION,
        "started_at": utc_timestamp(started_at),
        "duration_s": round(max(duration_s, 0.0), 3),
        "parameters": parameters,
        "calibration": calibration,
        "setup": setup,
        "rows": [dict(row) for row in rows],
        "suites": suites or {},
    }
