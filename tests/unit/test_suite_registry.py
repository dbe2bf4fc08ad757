"""The host's suite registry (archbench.suites): one module per suite; the matrix names none."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Annotated

import pytest
from helpers import REPO
from pydantic import ConfigDict, Field

from archbench import matrix, suites
from archbench.errors import MatrixError
from archbench.inputs import Strict
from archbench.matrix import parse
from archbench.suites import (
    BLIND_SIGNATURE_SUITES,
    BLINDSIG,
    COUNTED_SUITES,
    DEFAULT_SUITES,
    GNUNET_PERF,
    NOT_COUNTED,
    PART_ORDER,
    REGISTRY,
    RSA_LARGE,
    SECURITY_MODULE,
    SUITE_NAMES,
    SUITE_TITLES,
    TALER_HELPER,
    BlindsigSuite,
    RsaLargeSuite,
    Suites,
    SuiteSpec,
    registry_of,
    suite_title,
)

MATRIX = """
version: 1
{defaults}
bases:
  deb: {{source: bootstrap, suite: trixie}}
profiles:
  slim: {{packages: [gcc]}}
targets:
  - {{name: a, arch: amd64, base: deb}}
"""


def test_each_suite_is_a_module_of_its_own() -> None:
    for spec in REGISTRY:
        module = importlib.import_module(f"archbench.suites.{spec.attribute}")
        assert module.SUITE is spec
        assert spec.settings.__module__ == module.__name__
    assert len(set(SUITE_NAMES)) == len(REGISTRY) == 7


def test_matrix_modules_name_no_suite() -> None:
    """Adding a suite touches none of the modules of the matrix package."""
    models = [s.settings.__name__ for s in REGISTRY]
    assert "OpensslSpeedSuite" in models
    for path in (REPO / "archbench" / "matrix").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert [m for m in models if m in text] == [], path.name


def test_only_blindsig_runs_by_default() -> None:
    assert [s.name for s in REGISTRY if s.enabled_by_default] == ["blindsig"]
    assert list(DEFAULT_SUITES.enabled()) == ["blindsig"]
    assert DEFAULT_SUITES.blindsig == BlindsigSuite()
    (target,) = parse(MATRIX.format(defaults="")).targets
    assert list(target.suites.enabled()) == ["blindsig"]


@pytest.mark.parametrize("spec", REGISTRY, ids=lambda s: s.name)
def test_unknown_key_lists_the_suites_own_keys(spec: SuiteSpec) -> None:
    text = MATRIX.format(defaults=f"defaults:\n  {spec.name}: {{runz: 1}}")
    with pytest.raises(MatrixError) as info:
        parse(text, "m.yml")
    allowed = ", ".join(spec.settings.model_fields)
    assert f"  defaults.{spec.name}.runz: unknown key 'runz'; allowed: {allowed}" in str(info.value)


def test_unknown_suite_lists_the_registry() -> None:
    with pytest.raises(MatrixError) as info:
        parse(MATRIX.format(defaults="defaults:\n  sodum: {}"), "m.yml")
    assert (
        "  defaults.sodum: unknown key 'sodum'; allowed: blindsig, openssl-speed, rsa-large, "
        "gnupg, sodium, taler-helper, gnunet-perf; did you mean 'sodium'?" in str(info.value)
    )
    with pytest.raises(MatrixError, match=r"--suite: unknown suite 'rsa_large'; suites: "):
        DEFAULT_SUITES.only(["rsa_large"])


def test_the_fields_of_suites_are_the_registry() -> None:
    assert registry_of(Suites) == REGISTRY
    assert [s.attribute for s in REGISTRY] == list(Suites.model_fields)

    class Bare(Strict):
        blindsig: BlindsigSuite | None = None

    with pytest.raises(TypeError, match=r"Bare\.blindsig is not declared as a suite"):
        registry_of(Bare)

    class Renamed(Strict):
        model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

        blindsig: Annotated[BlindsigSuite | None, BLINDSIG] = None
        rsa_large: Annotated[RsaLargeSuite | None, RSA_LARGE] = Field(
            default=None, alias="rsa_large"
        )

    with pytest.raises(TypeError, match=r"Renamed\.rsa_large is not declared as a suite"):
        registry_of(Renamed)

    class WrongModel(Strict):
        blindsig: Annotated[RsaLargeSuite | None, BLINDSIG] = None

    with pytest.raises(TypeError, match=r"WrongModel\.blindsig is not declared as a suite"):
        registry_of(WrongModel)


def test_ranks_may_not_repeat() -> None:
    twin = dataclasses.replace(RSA_LARGE, report_rank=BLINDSIG.report_rank)

    class Twins(Strict):
        model_config = ConfigDict(alias_generator=lambda a: a.replace("_", "-"))

        blindsig: Annotated[BlindsigSuite | None, BLINDSIG] = None
        rsa_large: Annotated[RsaLargeSuite | None, twin] = None

    with pytest.raises(TypeError, match="blindsig and rsa-large have the same report_rank 10"):
        registry_of(Twins)


def test_every_list_derives_from_the_registry_in_todays_orders() -> None:
    """The orders reports have always printed (hand-written lists before the registry had them)."""
    assert COUNTED_SUITES == ("blindsig", "rsa-large", "sodium", "taler-helper")
    # taler-helper runs Taler's programs but is counted: its secmod as a whole process.
    assert NOT_COUNTED == ("openssl-speed", "gnupg", "gnunet-perf")
    assert TALER_HELPER.foreign and TALER_HELPER.counted
    assert {"blindsig", "security-module", "gnunet-perf"} == BLIND_SIGNATURE_SUITES
    assert PART_ORDER == ("openssl-speed", "rsa-large", "sodium", "gnupg")
    assert list(SUITE_TITLES) == [
        "blindsig",
        "security-module",
        "gnunet-perf",
        "openssl-speed",
        "rsa-large",
        "sodium",
        "gnupg",
        "taler-helper",
    ]
    assert suite_title("rsa-large") == "RSA up to 16384 bit (libcrypto)"
    assert suite_title("nope") == "nope"
    assert SECURITY_MODULE.name == TALER_HELPER.row_suite == "security-module"
    assert suites.spec("gnunet-perf") is GNUNET_PERF
    with pytest.raises(
        MatrixError, match=r"^unknown suite 'sodum'; suites: blindsig, .*'sodium'\?$"
    ):
        suites.spec("sodum")


def test_matrix_face_exports_only_the_matrix_packages_names() -> None:
    for name in matrix.__all__:
        value = getattr(matrix, name)
        module = getattr(value, "__module__", "archbench.matrix")
        assert module.startswith("archbench.matrix"), name
    assert "Suites" not in matrix.__all__ and "BlindsigSuite" not in matrix.__all__
    assert inspect.signature(matrix.parse).parameters["source"].default == "matrix.yml"
