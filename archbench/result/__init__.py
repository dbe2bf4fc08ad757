"""Stored results: the harness's document, the versioned ``archbench-result`` files and their store.

The harness prints one JSON document (format ``archbench-harness`` version 1,
``harness/CONTRACT.md``); the host wraps it with what only the host knows (the
target, whether it ran emulated, the QEMU version, the image) into a results
file, format ``archbench-result`` version 2. Files live at
``<root>/<run-id>/<target>.json`` and are written atomically (temporary file in
the same directory, then ``os.replace``), so a crash or Ctrl-C never leaves a
half-written file and never touches another target's results. Every later
stage (analysis, report, archive, upstream imports) reads results through
this package.

Modules, one concern each (callers outside the package import from here):

* :mod:`~archbench.result.row`: a measured :class:`Row` (``CalibrationBlock``,
  ``MedianCi``, ``RowNoise``, ``StopReason``), the appendix suites' ``Operation``
  and ``Scheme``, limits ``MAX_NS`` (ns), ``MAX_KEY_BITS``, ``NS_PER_MS``, and
  ``Frozen``, the base of every model (frozen, unknown keys kept);
* :mod:`~archbench.result.vocabulary`: operation wording, row order and groups
  (``OPERATION_ORDER``, :func:`sort_key`, ...);
* :mod:`~archbench.result.document`: the harness document
  (:class:`HarnessDocument`, ``Parameters``, ``Setup``, ``Calibration``,
  ``SuiteRun``, ``Counting``);
* :mod:`~archbench.result.model`: the stored :class:`Result` (``TargetInfo``,
  ``Execution``, ``Reference``, ``ArchiveRef``, ``Metric``), a run's
  :class:`RunManifest`, ``RESULT_FORMAT``/``RESULT_VERSION`` and :func:`migrate`
  of version 1 files;
* :mod:`~archbench.result.loading`: :func:`parse_harness_output` and :func:`load`,
  bounded and validated (errors name the file and the key); :func:`load_checked` and
  :func:`parse_checked` also give the file's integrity digest once checked;
* :mod:`~archbench.result.integrity`: the digest inside every results file archbench
  writes (:func:`content_digest` over its canonical content, :func:`check_digest` on every
  read): an edited or truncated file is refused, an older one without a digest is read
  but its counts are never reused;
* :mod:`~archbench.result.paths`: run ids and file names (``RUN_ID``,
  :func:`check_run_id`, :func:`new_run_id`), :func:`write_atomic`, :func:`write_texts`;
* :mod:`~archbench.result.store`: :class:`ResultStore` (save, list, load a run's
  files, its manifest), ``LoadFailure``, and :func:`merge_repeats`, which pools the
  K files of ``invoke bench --repeat K``;
* :mod:`~archbench.result.publish`: merging run folders of many machines into one store
  (:func:`merge_runs`, idempotent, under the folder's lock), the check of a run's files
  (:func:`verify_run`), each run's ``publish.json`` (:class:`PublishRecord`: file digests,
  :class:`MachineIdentity` per target, :class:`Provenance`);
* :mod:`~archbench.result.index`: the store's index (``INDEX_FILE``): an
  :class:`IndexEntry` per results file (its identity, facts and rows without their
  bulk, :class:`IndexedRow`, blocks read with :func:`numbers`), a derived cache that
  :meth:`ResultStore.indexed` reads and rebuilds;
* :mod:`~archbench.result.contract`: generates ``harness/schema-v1.json`` from the
  models (``python -m archbench.result.contract``; not imported here).

Errors: :class:`archbench.errors.ResultsError` (a results file or run manifest is
unreadable, of another version, or invalid) and
:class:`archbench.errors.HarnessError` (the harness's stdout breaks the contract).
The package is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.result.document import (
    HARNESS_FORMAT,
    HARNESS_VERSION,
    Calibration,
    CountCalibration,
    Counting,
    CpuLimits,
    GnunetBuild,
    HarnessDocument,
    Parameters,
    Setup,
    SuiteRun,
)
from archbench.result.index import INDEX_FILE, IndexedRow, IndexEntry, numbers
from archbench.result.integrity import DIGEST_KEY, check_digest, content_digest
from archbench.result.loading import (
    MAX_RESULT_BYTES,
    load,
    load_checked,
    parse_checked,
    parse_harness_output,
)
from archbench.result.model import (
    BISECT_NAME,
    HISTORY_NAME,
    MANIFEST_NAME,
    METRICS,
    RESULT_FORMAT,
    RESULT_VERSION,
    ArchiveRef,
    BisectCommit,
    BisectCount,
    BisectManifest,
    BisectMove,
    BisectStep,
    BisectTime,
    Execution,
    FunctionMove,
    HistoryBisection,
    HistoryManifest,
    HistoryRound,
    HistoryVersion,
    Metric,
    Reference,
    Result,
    RunManifest,
    TargetInfo,
    migrate,
)
from archbench.result.paths import (
    FILE_NAME,
    RUN_ID,
    check_run_id,
    folder_lock,
    inside,
    new_run_id,
    write_atomic,
    write_texts,
)
from archbench.result.publish import (
    PUBLISH_NAME,
    MachineIdentity,
    MergeLine,
    MergeReport,
    Provenance,
    PublishRecord,
    collect_runs,
    cpu_class,
    machine_identity,
    merge_runs,
    read_record,
    read_records,
    verify_run,
)
from archbench.result.row import (
    HELPER_OPERATIONS,
    MAX_KEY_BITS,
    MAX_NS,
    NS_PER_MS,
    CalibrationBlock,
    CallgrindCheck,
    FunctionCount,
    MedianCi,
    Operation,
    Row,
    RowFields,
    RowKey,
    RowNoise,
    Scheme,
    StopReason,
    row_key,
    row_label,
    scheme_id,
    scheme_text,
)
from archbench.result.store import (
    Entry,
    LoadFailure,
    ResultStore,
    merge_repeats,
    result_key,
    shown_name,
    shown_path,
)
from archbench.result.vocabulary import (
    COMPARISON_ROWS,
    OPERATION_GROUPS,
    OPERATION_ORDER,
    OPERATION_WORDING,
    SHORT_WORDING,
    SPEEDUP_DEFINITION,
    SPEEDUP_HEADER,
    SPEEDUP_RSA_BITS,
    TALER_OPERATIONS,
    THESIS_OPS,
    AppendixRow,
    group_key,
    operation_label,
    scheme_label,
    sort_key,
)

__all__ = [
    "BISECT_NAME",
    "COMPARISON_ROWS",
    "DIGEST_KEY",
    "FILE_NAME",
    "HARNESS_FORMAT",
    "HARNESS_VERSION",
    "HELPER_OPERATIONS",
    "HISTORY_NAME",
    "INDEX_FILE",
    "MANIFEST_NAME",
    "MAX_KEY_BITS",
    "MAX_NS",
    "MAX_RESULT_BYTES",
    "METRICS",
    "NS_PER_MS",
    "OPERATION_GROUPS",
    "OPERATION_ORDER",
    "OPERATION_WORDING",
    "PUBLISH_NAME",
    "RESULT_FORMAT",
    "RESULT_VERSION",
    "RUN_ID",
    "SHORT_WORDING",
    "SPEEDUP_DEFINITION",
    "SPEEDUP_HEADER",
    "SPEEDUP_RSA_BITS",
    "TALER_OPERATIONS",
    "THESIS_OPS",
    "AppendixRow",
    "ArchiveRef",
    "BisectCommit",
    "BisectCount",
    "BisectManifest",
    "BisectMove",
    "BisectStep",
    "BisectTime",
    "Calibration",
    "CalibrationBlock",
    "CallgrindCheck",
    "CountCalibration",
    "Counting",
    "CpuLimits",
    "Entry",
    "Execution",
    "FunctionCount",
    "FunctionMove",
    "GnunetBuild",
    "HarnessDocument",
    "HistoryBisection",
    "HistoryManifest",
    "HistoryRound",
    "HistoryVersion",
    "IndexEntry",
    "IndexedRow",
    "LoadFailure",
    "MachineIdentity",
    "MedianCi",
    "MergeLine",
    "MergeReport",
    "Metric",
    "Operation",
    "Parameters",
    "Provenance",
    "PublishRecord",
    "Reference",
    "Result",
    "ResultStore",
    "Row",
    "RowFields",
    "RowKey",
    "RowNoise",
    "RunManifest",
    "Scheme",
    "Setup",
    "StopReason",
    "SuiteRun",
    "TargetInfo",
    "check_digest",
    "check_run_id",
    "collect_runs",
    "content_digest",
    "cpu_class",
    "folder_lock",
    "group_key",
    "inside",
    "load",
    "load_checked",
    "machine_identity",
    "merge_repeats",
    "merge_runs",
    "migrate",
    "new_run_id",
    "numbers",
    "operation_label",
    "parse_checked",
    "parse_harness_output",
    "read_record",
    "read_records",
    "result_key",
    "row_key",
    "row_label",
    "scheme_id",
    "scheme_label",
    "scheme_text",
    "shown_name",
    "shown_path",
    "sort_key",
    "verify_run",
    "write_atomic",
    "write_texts",
]
