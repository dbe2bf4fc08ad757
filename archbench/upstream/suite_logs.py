"""The raw logs the ``taler-helper`` and ``gnunet-perf`` suites keep, as rows of a result.

The harness keeps these programs' output verbatim; the host parses it here
with :mod:`archbench.upstream.gnunet_log` when it stores a harness document.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Final

from archbench.errors import ResultsError
from archbench.result import HarnessDocument, Row
from archbench.suites import GNUNET_PERF, TALER_HELPER
from archbench.upstream.gnunet_log import Measurement, build_rows, scan_log

HELPER_NOTES: Final[dict[tuple[str, int], str]] = {
    ("helper_sequential_signing", 100): (
        "100 signatures through the security module one after another: the sum of the "
        "100 calls' latencies (IPC to the secmod included) as test_helper times them; "
        "one sample per run"
    ),
    ("helper_parallel_signing", 100): (
        "each of the test's 8 forked clients signs 100 times at once with the others: "
        "one sample per client (the sum of its calls' latencies), 8 per run"
    ),
    ("helper_parallel_signing", 800): (
        "the 8 forked clients' 800 signatures together: the wall time from the first fork "
        "until the last client exits; one sample per run"
    ),
}


def _batch_note(ops: int) -> str:
    return (
        f"one request of a batch of {ops} signatures to the security module: its wall time "
        "(total real time); one sample per run"
    )


"""The note of each security-module row (operation, block size): what one sample is."""


def _helper_note(row: Row, cpus: object, clients: object) -> str | None:
    note = HELPER_NOTES.get((row.operation, row.ops_per_block))
    if row.operation == "helper_batch_signing":
        note = _batch_note(row.ops_per_block)
    if note is None:
        return None
    if (
        row.operation == "helper_parallel_signing"
        and isinstance(cpus, int)
        and isinstance(clients, int)
        and cpus < clients
    ):
        note += (
            f"; this machine gave the test {cpus} CPU(s), fewer than its {clients} forked "
            "clients (and the secmod's threads): the clients took turns"
        )
    return note


def add_taler_helper_rows(doc: HarnessDocument) -> HarnessDocument:
    """Parse the ``taler-helper`` suite's raw logs into ``security-module`` rows.

    The harness keeps ``test_helper_rsa``/``test_helper_cs`` output verbatim:
    ``suites["taler-helper"].extra["runs"]`` (one entry per run: ``test``, ``rsa_bits``,
    ``repetition``, ``log``), or in documents of older harnesses ``extra["logs"]``
    (test name -> text, one RSA size in ``extra["rsa_bits"]``). Every line becomes a
    sample (:func:`scan_log`) of the row of its scheme, true key size, operation and
    block size; the runs of one row pool (sequential, 800-parallel and each batch size:
    one sample per run; 100-parallel: one per forked client and run). Each row's ``note``
    says what a sample is (:data:`HELPER_NOTES`) and, when ``extra["cpus"]`` is below
    ``extra["forked_clients"]``, that the clients took turns. A log that cannot be parsed
    sets the suite's ``error`` instead of raising, so the other suites' rows stay.
    Documents without the suite come back unchanged.
    """
    run = doc.suites.get(TALER_HELPER.name)
    if run is None or run.error is not None:
        return doc
    runs = run.extra.get("runs")
    logs = run.extra.get("logs")
    measurements: list[Measurement] = []
    try:
        if isinstance(runs, list):
            for entry in runs:
                if not isinstance(entry, dict):
                    raise ResultsError(
                        f"a run of the suite is {type(entry).__name__}, not a mapping"
                    )
                test, bits = str(entry.get("test")), entry.get("rsa_bits")
                rsa = test.endswith("_rsa")
                if rsa and (isinstance(bits, bool) or not isinstance(bits, int)):
                    raise ResultsError(f"{test}: rsa_bits {bits!r} is not a key size")
                name = f"{test}-{bits}" if rsa else test
                measurements += scan_log(
                    str(entry.get("log", "")),
                    f"{name}#{entry.get('repetition')}.log",
                    scheme="RSA" if rsa else "CS",
                    rsa_bits=bits if rsa and isinstance(bits, int) else None,
                ).measurements
        elif isinstance(logs, dict):
            bits = run.extra.get("rsa_bits")
            for test, text in logs.items():
                rsa = str(test).endswith("_rsa")
                measurements += scan_log(
                    str(text),
                    f"{test}.log",
                    scheme="RSA" if rsa else "CS",
                    rsa_bits=int(bits) if rsa and isinstance(bits, int) else None,
                ).measurements
        else:
            return doc
    except ResultsError as exc:
        failed = run.model_copy(update={"error": f"cannot parse the logs: {exc}"})
        return doc.model_copy(update={"suites": {**doc.suites, TALER_HELPER.name: failed}})
    cpus, clients = run.extra.get("cpus"), run.extra.get("forked_clients")
    rows = [
        r.model_copy(update={"note": _helper_note(r, cpus, clients)})
        for r in build_rows(measurements)
    ]
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
