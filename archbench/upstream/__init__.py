"""Foreign formats: upstream tools' saved output and the thesis's published figures, as results.

Everything archbench did not measure itself enters here and leaves as an
``archbench-result`` (:mod:`archbench.result`) marked as reference data, so the
reports treat it like any other machine:

* :mod:`~archbench.upstream.gnunet_log`: saved output of GNUnet's
  ``perf_crypto_rsa``/``perf_crypto_cs`` and GNU Taler's
  ``test_helper_rsa``/``test_helper_cs``, line by line: GNUnet's printed times
  (``34 ms`` is [34 ms, 35 ms), :func:`parse_duration`), which test_helper
  printed a log (:func:`parse_scheme`), :func:`scan_log` and :func:`build_rows`;
* :mod:`~archbench.upstream.log_import`: ``invoke import``, the files
  (:func:`log_paths`, :func:`scan_files`), the machine's setup YAML
  (:func:`load_setup`, :func:`parse_setup`), the result (:func:`build_result`)
  and the stored import (:class:`LogImport`, :func:`import_logs`);
* :mod:`~archbench.upstream.suite_logs`: the raw logs the ``taler-helper`` and
  ``gnunet-perf`` suites keep in a harness document, as rows
  (:func:`add_taler_helper_rows`, :func:`add_gnunet_perf_rows`);
* :mod:`~archbench.upstream.reference`: the thesis appendix's LaTeX parsed into
  the shipped reference dataset (``reports/reference/``), :func:`load_reference`;
  ``python -m archbench.upstream.reference SEED OUTDIR`` regenerates it, so this
  face does not import it (``from archbench.upstream import reference``);
* :mod:`~archbench.upstream.wording`: how these formats word our operations (the
  vocabulary's wording, plus each format's named aliases).

Errors: :class:`archbench.errors.ResultsError` (a log that cannot be read or gives
no sample), :class:`archbench.errors.MatrixError` (a bad setup file or flag) and
:class:`archbench.errors.ReportError` (a seed that does not parse). The package
is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.upstream.gnunet_log import (
    MAX_OPS,
    MAX_RSA_BITS,
    MIN_RSA_BITS,
    Duration,
    LogScan,
    Measurement,
    Skipped,
    Tool,
    build_rows,
    describe,
    parse_duration,
    parse_log,
    parse_scheme,
    scan_log,
)
from archbench.upstream.log_import import (
    HARNESS_VERSION,
    NAME_PATTERN,
    NOTES,
    PROFILE,
    SETUP_KEYS,
    ImportedLogs,
    LogImport,
    SetupFile,
    build_result,
    check_import_name,
    import_logs,
    load_setup,
    log_paths,
    parse_setup,
    read_log,
    scan_files,
)
from archbench.upstream.reference import load_reference
from archbench.upstream.suite_logs import (
    add_gnunet_perf_rows,
    add_taler_helper_rows,
)

__all__ = [
    "HARNESS_VERSION",
    "MAX_OPS",
    "MAX_RSA_BITS",
    "MIN_RSA_BITS",
    "NAME_PATTERN",
    "NOTES",
    "PROFILE",
    "SETUP_KEYS",
    "Duration",
    "ImportedLogs",
    "LogImport",
    "LogScan",
    "Measurement",
    "SetupFile",
    "Skipped",
    "Tool",
    "add_gnunet_perf_rows",
    "add_taler_helper_rows",
    "build_result",
    "build_rows",
    "check_import_name",
    "describe",
    "import_logs",
    "load_reference",
    "load_setup",
    "log_paths",
    "parse_duration",
    "parse_log",
    "parse_scheme",
    "parse_setup",
    "read_log",
    "scan_files",
    "scan_log",
]
