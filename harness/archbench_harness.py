#!/usr/bin/env python3
"""archbench in-container harness: run the requested suites, print one JSON document.

``--suites`` names the suites to run (default ``blindsig``). The
blind-signature suite (``abh/suites/blindsig.py``) runs ``blindsig`` (built
from ``drivers/blindsig.c`` by the Makefile next to this file) and parses its
TSV output; every other suite is a module ``abh/suites/<name>.py`` (registry
and dispatch in ``abh/suites/__init__.py``) that gets its settings from
``--suite-config`` (a JSON object: suite name -> settings). The harness
collects a description of the machine it ran on and prints exactly one
``archbench-harness`` version 1 document on stdout (see ``CONTRACT.md`` and
``schema-v1.json``). Diagnostics go to stderr. One suite failing is recorded
in ``suites[name].error`` and does not stop the others.

Standard library only, Python >= 3.11 (Debian 12 and later, the releases that
package GNUnet >= 0.19): this runs under the distribution's ``python3`` inside
the benchmark image and must never import the host package.

Measurement method (details in CONTRACT.md): the driver probes the clock,
then per scheme and key size grows each operation's block from
``--iterations`` until one block takes ``--min-block-ns`` (calibration, rule
in next_block_size()), runs ``--warmup`` discarded repetitions and then up to
``--repetitions`` timed ones, fewer when ``--max-time`` is spent
(should_stop_repetitions()). The harness re-checks every calibration and
budget decision of the driver against the Python rules in
``abh/suites/blindsig_rules.py``.

Exit status: 0 with a document on stdout (possibly with failed suites
recorded in it); 2 (and nothing on stdout) when blindsig is the only suite and
its driver is missing, fails, crashes or prints output that cannot be trusted,
or when every requested suite failed; argparse's 2 on usage errors.

This folder: this program; ``abh/`` its Python package (``cli`` the options,
``setup_cpu`` and ``setup_system`` the ``setup`` description of the machine,
``document`` the document's shape and assembly, ``suites/`` one module per
suite with its helpers beside it); ``drivers/`` the C drivers' sources (the
counting mode's in ``drivers/counting/``), built by the ``Makefile`` into this
folder; ``CONTRACT.md`` and ``schema-v1.json``, the contract with the host.

Example::

    python3 archbench_harness.py --iterations 10 --repetitions 3 --warmup 1 \\
        --max-time 60 --rsa-bits 1024,2048,3072,4096 --scheme all
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from abh import setup_cpu
from abh.cli import make_parser
from abh.document import build_document
from abh.setup_system import BUILD_INFO_NAME, collect_setup
from abh.suites import SuiteRunDict, counting, run_suite
from abh.suites.blindsig import run_blindsig
from abh.suites.blindsig_document import CalibrationDict, ParametersDict, RowDict
from abh.suites.blindsig_output import HarnessError
from abh.suites.common import driver_path

EXIT_FAILURE = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the requested suites; print the document on stdout.

    Args:
        argv: arguments without the program name; None means sys.argv[1:].

    Returns:
        0 with a document; EXIT_FAILURE (2) when blindsig alone was asked for
        and failed, or when every requested suite failed.
    """
    parser = make_parser()
    args = parser.parse_args(argv)
    suites: list[str] = args.suites
    if args.callgrind and (args.count_with is None or "blindsig" not in suites):
        parser.error("--callgrind checks blindsig's counts: it needs --count-with and blindsig")
    started_at = datetime.now(UTC)
    t0 = time.monotonic()
    # Before any suite loads the machine itself.
    load_average = setup_cpu.read_load_average()
    rows: list[RowDict | dict[str, Any]] = []
    runs: dict[str, SuiteRunDict] = {}
    tools: dict[str, str] = {}
    parameters: ParametersDict | None = None
    calibration: CalibrationDict | None = None
    meta: dict[str, str] = {}
    counting_doc: dict[str, Any] | None = None
    if "blindsig" in suites:
        b0 = time.monotonic()
        try:
            blindsig_rows, parameters, calibration, meta, counting_doc = run_blindsig(args)
        except HarnessError as exc:
            print(f"archbench-harness: error: {exc}", file=sys.stderr)
            if suites == ["blindsig"]:
                return EXIT_FAILURE
            runs["blindsig"] = {
                "parameters": {},
                "error": str(exc),
                "duration_s": round(time.monotonic() - b0, 3),
                "extra": {},
            }
        else:
            rows += blindsig_rows
            runs["blindsig"] = {
                "parameters": dict(parameters),
                "error": None,
                "duration_s": round(time.monotonic() - b0, 3),
                "extra": {},
            }
    count: counting.CountSession | None = None
    if args.count_with is not None and suites != ["blindsig"]:
        try:
            count = counting.start_session(
                args.count_with,
                args.count_cpu,
                driver_path("count_calibrate"),
                None if counting_doc is None else counting_doc["calibration"],
                None
                if counting_doc is None
                else (counting_doc["plugin_version"], counting_doc["plugin_api"]),
            )
        except counting.CountError as exc:
            print(f"archbench-harness: error: counting: {exc}", file=sys.stderr)
            return EXIT_FAILURE
        counting_doc = counting_doc or count.provenance()
    for name in suites:
        if name == "blindsig":
            continue
        outcome, entry = run_suite(name, args.suite_config.get(name, {}), count)
        runs[name] = entry
        if outcome is not None:
            rows += outcome.rows
            tools.update(outcome.tools)
    if all(run["error"] for run in runs.values()):
        print("archbench-harness: error: every requested suite failed", file=sys.stderr)
        return EXIT_FAILURE
    setup = collect_setup(meta, args.driver.parent / BUILD_INFO_NAME, load_average)
    setup["tools"] = tools
    document = build_document(
        started_at, time.monotonic() - t0, parameters, calibration, setup, rows, runs
    )
    if counting_doc is not None:
        document["counting"] = counting_doc  # type: ignore[typeddict-unknown-key]
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
