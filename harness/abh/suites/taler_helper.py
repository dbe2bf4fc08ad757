"""Suite ``taler-helper``: GNU Taler's security-module benchmarks, built by a recipe.

Runs ``test_helper_rsa`` and ``test_helper_cs`` of a taler-exchange built
from pinned release sources by the image recipe ``images/recipes/taler-helper.sh``
(profile ``recipe: {name: taler-helper, ...}``), in their build directory,
where their configuration files are. Their output ("100 (sequential)
signature operations took …", "800 (parallel) … (total real time)") is
kept verbatim in ``extra["logs"]`` and parsed on the host by
``archbench.upstream`` into rows of suite ``security-module``, so the
printed-value truncation rules live in one place.

UNTESTED end to end on archbench's own machines, which cannot reach the
upstream sources: only the failure paths below are exercised there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from abh.suites.common import SuiteError, SuiteOutcome, check_keys, run_command

SUITE = "taler-helper"
RECIPE_DIR = Path("/opt/archbench/taler")
TESTS = ("test_helper_rsa", "test_helper_cs")
DEFAULTS: dict[str, Any] = {"tests": list(TESTS), "rsa_bits": 2048, "timeout_s": 1800.0}


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the settings and fill defaults.

    Returns:
        ``{"tests": [names from TESTS], "rsa_bits": int (the test
        configuration's RSA_KEYSIZE, recorded for the host), "timeout_s": float (per test)}``.

    Raises:
        SuiteError: unknown key, unknown test, bits outside 1024..16384, timeout <= 0.
    """
    check_keys(SUITE, config, list(DEFAULTS))
    merged = {**DEFAULTS, **config}
    tests = merged["tests"]
    if not isinstance(tests, list) or not tests or any(t not in TESTS for t in tests):
        raise SuiteError(f"{SUITE}: tests = {tests!r}; allowed: a list of {', '.join(TESTS)}")
    bits = merged["rsa_bits"]
    if isinstance(bits, bool) or not isinstance(bits, int) or not 1024 <= bits <= 16384:
        raise SuiteError(f"{SUITE}: rsa_bits = {bits!r}; allowed: an integer 1024..16384")
    timeout = merged["timeout_s"]
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise SuiteError(f"{SUITE}: timeout_s = {timeout!r}; allowed: seconds > 0")
    return {"tests": list(tests), "rsa_bits": bits, "timeout_s": float(timeout)}


def _version(name: str, recipe_dir: Path) -> str | None:
    try:
        return (recipe_dir / f"{name}-version").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def run(
    config: dict[str, Any], warn: Callable[[str], None], recipe_dir: Path = RECIPE_DIR
) -> SuiteOutcome:
    """Run the configured tests; their combined stderr and stdout go to ``extra["logs"]``.

    Raises:
        SuiteError: the exchange was not built in this image (the profile lacks the
            recipe), or a test is missing, fails or times out.
    """
    util = recipe_dir / "exchange" / "src" / "util"
    if not util.is_dir():
        raise SuiteError(
            f"taler-exchange is not built in this image ({util} is missing): run this suite "
            "on a target whose profile has 'recipe: {name: taler-helper, ...}' "
            "(docs/taler-recipe.md)"
        )
    logs: dict[str, str] = {}
    for test in config["tests"]:
        program = util / test
        if not program.is_file():
            raise SuiteError(f"{program} was not built by the taler-helper recipe")
        done = run_command([str(program)], config["timeout_s"], cwd=str(util))
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise SuiteError(f"{test} exited with status {done.returncode}; stderr ends:\n{tail}")
        logs[test] = done.stderr + done.stdout
        if "signature operations took" not in logs[test]:
            warn(f"{test} printed no timing line")
    tools = {
        name: version
        for name, version in (
            ("gnunet (source)", _version("gnunet", recipe_dir)),
            ("taler-exchange (source)", _version("exchange", recipe_dir)),
        )
        if version
    }
    return SuiteOutcome(
        rows=[],
        parameters=config,
        tools=tools,
        extra={"logs": logs, "rsa_bits": config["rsa_bits"]},
    )
