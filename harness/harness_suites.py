"""The harness's suite registry and dispatch: which suites exist and how one is run.

Every suite but blindsig is a module ``suite_<name>.py`` next to this file
(interface in ``suite_common.py``), imported only when requested, so a suite
whose module or tool is missing fails on its own. run_suite() turns a
suite's failure into its ``suites[name]`` entry instead of an exception.
Standard library only.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import suite_counting
from harness_document import SuiteRunDict
from suite_blindsig import _warn
from suite_common import SuiteError, SuiteOutcome

SUITES = (
    "blindsig",
    "openssl-speed",
    "rsa-large",
    "gnupg",
    "sodium",
    "taler-helper",
    "gnunet-perf",
)
"""Suites this harness knows; all but blindsig live in ``suite_<name>.py``."""


def suite_module(name: str) -> Any:
    """Import the module of suite ``name`` (``openssl-speed`` -> ``suite_openssl_speed``).

    Raises:
        SuiteError: the module is missing from the harness directory.
    """
    module_name = "suite_" + name.replace("-", "_")
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise SuiteError(f"harness module {module_name}.py cannot be loaded: {exc}") from None


def run_suite(
    name: str, settings: dict[str, Any], count: suite_counting.CountSession | None = None
) -> tuple[SuiteOutcome | None, SuiteRunDict]:
    """Run one non-blindsig suite; never raises for the suite's own failures.

    With ``count`` (``--count-with``) the suite's driver runs under the
    counting QEMU; a suite not in ``suite_counting.COUNTED_SUITES`` fails
    with "not counted".

    Returns:
        (outcome, entry): outcome is None when the suite failed, and then
        ``entry["error"]`` says why.
    """
    t0 = time.monotonic()
    module = None
    parameters: dict[str, Any] = dict(settings)
    try:
        module = suite_module(name)
        parameters = module.normalize_config(settings)
        if count is None:
            outcome: SuiteOutcome = module.run(parameters, _warn)
        elif name in suite_counting.COUNTED_SUITES:
            outcome = module.run(parameters, _warn, count)
        else:
            raise SuiteError(f"{name} is not counted: it runs programs archbench does not own")
    except SuiteError as exc:
        _warn(f"suite {name} failed: {exc}")
        return None, {
            "parameters": parameters,
            "error": str(exc),
            "duration_s": round(time.monotonic() - t0, 3),
            "extra": {},
        }
    return outcome, {
        "parameters": outcome.parameters or parameters,
        "error": None,
        "duration_s": round(time.monotonic() - t0, 3),
        "extra": outcome.extra,
    }
