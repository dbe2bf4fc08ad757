"""The host's suite settings (matrix.yml) and the harness suites agree.

The host never imports harness code at run time, so these tests are what
keeps the two lists of keys, defaults and algorithm names in step.
"""

from __future__ import annotations

import json

import pytest
from abh.suites import SUITES, suite_module
from abh.suites.common import SuiteError

from archbench.matrix import parse
from archbench.run.containers import harness_command
from archbench.suites import GNUPG_ALGORITHMS, OPENSSL_ALGORITHMS, SUITE_NAMES, Suites

OTHER_SUITES = [name for name in SUITE_NAMES if name != "blindsig"]


@pytest.mark.parametrize("name", OTHER_SUITES)
def test_host_defaults_pass_the_harness_check_unchanged(name: str) -> None:
    suites = Suites().only([name])
    config = json.loads(harness_command(suites)[-1])[name]
    module = suite_module(name)
    assert name == module.SUITE
    normalized = module.normalize_config(config)
    for key, value in config.items():
        assert normalized[key] == value, key


@pytest.mark.parametrize("name", OTHER_SUITES)
def test_every_host_key_is_a_harness_key(name: str) -> None:
    module = suite_module(name)
    with pytest.raises(SuiteError, match="unknown setting"):
        module.normalize_config({"no_such_key": 1})
    settings = Suites().only([name]).get(name)
    assert settings is not None
    for key in type(settings).model_fields:
        if key == "enabled":
            continue
        # A key the harness does not know would be refused with "unknown setting".
        value = getattr(settings, key)
        if value is None:
            continue
        module.normalize_config({key: list(value) if isinstance(value, tuple) else value})


def test_algorithm_lists_match() -> None:
    assert set(OPENSSL_ALGORITHMS) == set(suite_module("openssl-speed").ALGORITHMS)
    assert set(GNUPG_ALGORITHMS) == set(suite_module("gnupg").ALGORITHMS)


def test_harness_knows_every_suite() -> None:
    assert SUITES == SUITE_NAMES
    text = "\n".join(
        [
            "version: 1",
            "bases: {deb: {source: bootstrap, suite: trixie}}",
            "profiles: {slim: {packages: [gcc]}}",
            "targets: [{name: a, arch: amd64, base: deb}]",
        ]
    )
    assert list(parse(text).targets[0].suites.enabled()) == ["blindsig"]
