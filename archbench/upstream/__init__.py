"""Import saved output of the upstream benchmarks into the results store: the public face.

``invoke import`` stores saved output of GNUnet's ``perf_crypto_rsa`` /
``perf_crypto_cs`` and GNU Taler's ``test_helper_rsa`` / ``test_helper_cs``
as one machine's results. The work is done in :mod:`archbench.upstream`, one
concern per module:

* :mod:`~archbench.upstream.gnunet_time`: GNUnet's printed times
  (``34 ms`` is [34 ms, 35 ms)), :func:`parse_duration`;
* :mod:`~archbench.upstream.wording`: how these tools word our operations
  (the vocabulary's wording and named aliases);
* :mod:`~archbench.upstream.taler_helper`: which test_helper wrote a log, and
  its RSA key size;
* :mod:`~archbench.upstream.gnunet_log`: log lines to samples and rows,
  :func:`scan_log`, :func:`build_rows`;
* :mod:`~archbench.upstream.setup_file`: the setup YAML, :func:`load_setup`;
* :mod:`~archbench.upstream.imported_result`: the ``archbench-result``,
  :func:`build_result`;
* :mod:`~archbench.upstream.log_files`: the files, :func:`import_logs`;
* :mod:`~archbench.upstream.suite_logs`: the raw logs of the ``taler-helper``
  and ``gnunet-perf`` suites as rows.

This module only re-exports their public names, so ``archbench.upstream.X``
keeps working. It is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.upstream.gnunet_log import (
    MAX_OPS,
    MAX_RSA_BITS,
    MIN_RSA_BITS,
    LogScan,
    Measurement,
    Skipped,
    Tool,
    build_rows,
    describe,
    parse_log,
    scan_log,
)
from archbench.upstream.gnunet_time import Duration, parse_duration
from archbench.upstream.imported_result import (
    HARNESS_VERSION,
    NAME_PATTERN,
    NOTES,
    PROFILE,
    build_result,
)
from archbench.upstream.log_files import import_logs, log_paths, read_log, scan_files
from archbench.upstream.setup_file import SETUP_KEYS, SetupFile, load_setup, parse_setup
from archbench.upstream.suite_logs import (
    add_gnunet_perf_rows,
    add_taler_helper_rows,
)
from archbench.upstream.taler_helper import parse_scheme

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
    "LogScan",
    "Measurement",
    "SetupFile",
    "Skipped",
    "Tool",
    "add_gnunet_perf_rows",
    "add_taler_helper_rows",
    "build_result",
    "build_rows",
    "describe",
    "import_logs",
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
