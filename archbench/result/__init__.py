"""Stored results: the versioned ``archbench-result`` JSON files and their store (public face).

A results file wraps one harness document (``harness/CONTRACT.md``, format
``archbench-harness``) with what only the host knows: the target, whether it
ran emulated, the QEMU version, the image. Files live at
``<root>/<run-id>/<target>.json`` and are written atomically (temporary file
in the same directory, then ``os.replace``), so a crash or Ctrl-C never
leaves a half-written file and never touches another target's results.

The code lives in :mod:`archbench.result`, one concern per module; this
module re-exports its public names, so ``from archbench.result import …``
keeps working:

* :mod:`~archbench.result.row`: a measured :class:`Row` (``CalibrationBlock``,
  ``MedianCi``, ``RowNoise``) and the appendix vocabulary (``Operation``,
  ``Scheme``, ``StopReason``, ``MAX_NS``, ``MAX_KEY_BITS``);
* :mod:`~archbench.result.document`: the harness document
  (:class:`HarnessDocument`, ``Parameters``, ``Setup``, ``CpuLimits``,
  ``Calibration``, ``SuiteRun``, ``Counting``, ``CountCalibration``,
  ``HARNESS_FORMAT``, ``HARNESS_VERSION``);
* :mod:`~archbench.result.model`: the stored :class:`Result` (``TargetInfo``,
  ``Execution``, ``Reference``, ``ArchiveRef``, ``Metric``, ``METRICS``) and a
  run's :class:`RunManifest` (``MANIFEST_NAME``);
* :mod:`~archbench.result.versions`: ``RESULT_FORMAT``, ``RESULT_VERSION`` and
  :func:`migrate` of older files;
* :mod:`~archbench.result.loading`: :func:`parse_harness_output` and
  :func:`load` (validation, ``MAX_RESULT_BYTES``);
* :mod:`~archbench.result.paths`: ``RUN_ID``, ``FILE_NAME``,
  :func:`check_run_id`, :func:`inside`, :func:`new_run_id`, :func:`write_atomic`,
  :func:`write_texts`;
* :mod:`~archbench.result.store`: :class:`ResultStore`, ``LoadFailure``,
  :func:`result_key`;
* :mod:`~archbench.result.merge`: :func:`merge_repeats` (``--repeat K``).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.result.document import (
    HARNESS_FORMAT,
    HARNESS_VERSION,
    Calibration,
    CountCalibration,
    Counting,
    CpuLimits,
    HarnessDocument,
    Parameters,
    Setup,
    SuiteRun,
)
from archbench.result.loading import MAX_RESULT_BYTES, load, parse_harness_output
from archbench.result.merge import merge_repeats
from archbench.result.model import (
    MANIFEST_NAME,
    METRICS,
    ArchiveRef,
    Execution,
    Metric,
    Reference,
    Result,
    RunManifest,
    TargetInfo,
)
from archbench.result.paths import (
    FILE_NAME,
    RUN_ID,
    check_run_id,
    inside,
    new_run_id,
    write_atomic,
    write_texts,
)
from archbench.result.row import (
    MAX_KEY_BITS,
    MAX_NS,
    NS_PER_MS,
    CalibrationBlock,
    MedianCi,
    Operation,
    Row,
    RowNoise,
    Scheme,
    StopReason,
)
from archbench.result.store import LoadFailure, ResultStore, result_key
from archbench.result.versions import RESULT_FORMAT, RESULT_VERSION, migrate
from archbench.result.vocabulary import (
    COMPARISON_ROWS,
    HELPER_OPERATIONS,
    OPERATION_GROUPS,
    OPERATION_ORDER,
    OPERATION_WORDING,
    SHORT_WORDING,
    SPEEDUP_DEFINITION,
    SPEEDUP_HEADER,
    SPEEDUP_RSA_BITS,
    THESIS_OPS,
    RowKey,
    group_key,
    operation_label,
    row_key,
    scheme_label,
    scheme_text,
    sort_key,
)

__all__ = [
    "COMPARISON_ROWS",
    "FILE_NAME",
    "HARNESS_FORMAT",
    "HARNESS_VERSION",
    "HELPER_OPERATIONS",
    "MANIFEST_NAME",
    "MAX_KEY_BITS",
    "MAX_NS",
    "MAX_RESULT_BYTES",
    "METRICS",
    "NS_PER_MS",
    "OPERATION_GROUPS",
    "OPERATION_ORDER",
    "OPERATION_WORDING",
    "RESULT_FORMAT",
    "RESULT_VERSION",
    "RUN_ID",
    "SHORT_WORDING",
    "SPEEDUP_DEFINITION",
    "SPEEDUP_HEADER",
    "SPEEDUP_RSA_BITS",
    "THESIS_OPS",
    "ArchiveRef",
    "Calibration",
    "CalibrationBlock",
    "CountCalibration",
    "Counting",
    "CpuLimits",
    "Execution",
    "HarnessDocument",
    "LoadFailure",
    "MedianCi",
    "Metric",
    "Operation",
    "Parameters",
    "Reference",
    "Result",
    "ResultStore",
    "Row",
    "RowKey",
    "RowNoise",
    "RunManifest",
    "Scheme",
    "Setup",
    "StopReason",
    "SuiteRun",
    "TargetInfo",
    "check_run_id",
    "group_key",
    "inside",
    "load",
    "merge_repeats",
    "migrate",
    "new_run_id",
    "operation_label",
    "parse_harness_output",
    "result_key",
    "row_key",
    "scheme_label",
    "scheme_text",
    "sort_key",
    "write_atomic",
    "write_texts",
]
