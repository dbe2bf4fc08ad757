"""The harness's suites: one module each, the registry that lists them, and dispatch.

Each suite is ``abh/suites/<name>.py`` (``openssl-speed`` -> ``openssl_speed.py``),
its helpers ``<name>_*.py`` beside it (``openssl_speed_output.py`` parses
``openssl speed``), the pieces every suite shares in ``common.py`` (interface,
rows, commands, progress, where the drivers are) and the counting QEMU in
``counting.py``. The blind-signature suite (``blindsig.py``, its driver
``drivers/blindsig.c``) keeps its own command-line options, calibration and
document fields and is run by ``archbench_harness.py`` itself; every other suite
gets its settings from ``--suite-config`` and is run by :func:`run_suite`, which
imports its module only when it is requested, so that a suite whose module or
tool is missing fails on its own, and turns its failure into its
``suites[name]`` entry instead of an exception.

Adding a suite means its module here and its name in :data:`SUITES` (and in
:data:`COUNTED_SUITES` when its driver marks its blocks); the host side is
``archbench/suites/<name>.py``.

This package holds no re-exports: callers import the module that defines a name
(``from abh.suites.blindsig_rules import OPERATIONS``). Standard library only.
"""

from __future__ import annotations

import importlib
import time
from typing import Any, TypedDict

from abh.suites import counting
from abh.suites.common import SuiteError, SuiteOutcome, warn

SUITES = (
    "blindsig",
    "openssl-speed",
    "rsa-large",
    "gnupg",
    "sodium",
    "taler-helper",
    "gnunet-perf",
)
"""Suites this harness knows, each in ``abh/suites/<name>.py``."""

COUNTED_SUITES = ("blindsig", "rsa-large", "sodium", "taler-helper")
"""Suites counted under ``--count-with``: drivers that mark their blocks, and taler-helper,
whose secmod is counted as a whole process (``taler_counting``); the others are "not
counted"."""


class SuiteRunDict(TypedDict):
    """``suites[name]`` of the document: how one requested suite went."""

    parameters: dict[str, Any]
    error: str | None
    duration_s: float
    extra: dict[str, Any]


def suite_module(name: str) -> Any:
    """Import the module of suite ``name`` (``openssl-speed`` -> ``abh.suites.openssl_speed``).

    Raises:
        SuiteError: the module is missing from the harness directory.
    """
    module_name = name.replace("-", "_")
    try:
        return importlib.import_module(f"{__name__}.{module_name}")
    except ImportError as exc:
        raise SuiteError(f"harness module {module_name}.py cannot be loaded: {exc}") from None


def run_suite(
    name: str, settings: dict[str, Any], count: counting.CountSession | None = None
) -> tuple[SuiteOutcome | None, SuiteRunDict]:
    """Run one non-blindsig suite; never raises for the suite's own failures.

    With ``count`` (``--count-with``) the suite's driver runs under the
    counting QEMU; a suite not in :data:`COUNTED_SUITES` fails with "not
    counted".

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
            outcome: SuiteOutcome = module.run(parameters, warn)
        elif name in COUNTED_SUITES:
            outcome = module.run(parameters, warn, count)
        else:
            raise SuiteError(f"{name} is not counted: it runs programs archbench does not own")
    except SuiteError as exc:
        warn(f"suite {name} failed: {exc}")
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
