"""The raw logs the ``taler-helper`` and ``gnunet-perf`` suites keep, as rows of a result.

The harness keeps these programs' output verbatim; the host parses it here
with :mod:`archbench.upstream.gnunet_log` when it stores a harness document.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from archbench.errors import ResultsError
from archbench.result import HarnessDocument, Row
from archbench.suites import GNUNET_PERF, TALER_HELPER
from archbench.upstream.gnunet_log import Measurement, build_rows, parse_log, scan_log


def add_taler_helper_rows(doc: HarnessDocument) -> HarnessDocument:
    """Parse the ``taler-helper`` suite's raw logs into ``security-module`` rows.

    The harness keeps ``test_helper_rsa``/``test_helper_cs`` output verbatim
    (``suites["taler-helper"].extra["logs"]``, test name -> text); this turns
    it into rows with :func:`parse_log`, the scheme from the test's name and
    the RSA size from ``extra["rsa_bits"]``. A log that cannot be parsed sets
    the suite's ``error`` instead of raising, so the other suites' rows stay.
    Documents without the suite come back unchanged.
    """
    run = doc.suites.get(TALER_HELPER.name)
    logs = run.extra.get("logs") if run is not None and run.error is None else None
    if run is None or not isinstance(logs, dict):
        return doc
    bits = run.extra.get("rsa_bits")
    rows: list[Row] = []
    try:
        for test, text in logs.items():
            rsa = str(test).endswith("_rsa")
            rows += parse_log(
                str(text),
                f"{test}.log",
                scheme="RSA" if rsa else "CS",
                rsa_bits=int(bits) if rsa and isinstance(bits, int) else None,
            )
    except ResultsError as exc:
        failed = run.model_copy(update={"error": f"cannot parse the logs: {exc}"})
        return doc.model_copy(update={"suites": {**doc.suites, TALER_HELPER.name: failed}})
    return doc.model_copy(update={"rows": (*doc.rows, *rows)})


def add_gnunet_perf_rows(doc: HarnessDocument) -> HarnessDocument:
    """Parse the ``gnunet-perf`` suite's raw logs into rows of suite ``gnunet-perf``.

    The harness keeps each run of ``perf_crypto_rsa``/``perf_crypto_cs``
    verbatim (``suites["gnunet-perf"].extra["logs"]``, ``"<program>#<run>"`` ->
    stdout). Every timing line becomes a sample (:func:`scan_log`); the lines
    of one row in different runs pool, so a row has one sample per run, in ns
    per block of 10 operations, with GNUnet's truncation as ``uncertainty_ns``.
    A log that cannot be parsed sets the suite's ``error`` instead of raising,
    so the other suites' rows stay. Documents without the suite come back
    unchanged.
    """
    run = doc.suites.get(GNUNET_PERF.name)
    logs = run.extra.get("logs") if run is not None and run.error is None else None
    if run is None or not isinstance(logs, dict):
        return doc
    measurements: list[Measurement] = []
    try:
        for name, text in logs.items():
            measurements += scan_log(str(text), f"{name}.log").measurements
    except ResultsError as exc:
        failed = run.model_copy(update={"error": f"cannot parse the logs: {exc}"})
        return doc.model_copy(update={"suites": {**doc.suites, GNUNET_PERF.name: failed}})
    rows = [r.model_copy(update={"suite": GNUNET_PERF.name}) for r in build_rows(measurements)]
    return doc.model_copy(update={"rows": (*doc.rows, *rows)})
