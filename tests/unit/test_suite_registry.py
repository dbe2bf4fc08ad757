"""The host's suite registry (archbench.suites): one module per suite, matrix.py names none."""

from __future__ import annotations

import importlib
import inspect

import pytest
from helpers import REPO
from pydantic import ConfigDict, Field

from archbench import matrix
from archbench.errors import MatrixError
from archbench.inputs import Strict
from archbench.matrix import parse
from archbench.suites import (
    DEFAULT_SUITES,
    REGISTRY,
    SUITE_NAMES,
    BlindsigSuite,
    RsaLargeSuite,
    Suites,
    SuiteSpec,
    check_fields,
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


def test_a_suite_missing_from_suites_is_refused() -> None:
    check_fields(Suites, REGISTRY)
    with pytest.raises(TypeError, match=r"registry lists \['blindsig', 'openssl-speed'"):
        check_fields(Suites, REGISTRY[:-1])
    with pytest.raises(TypeError, match="in the registry's order"):
        check_fields(Suites, tuple(reversed(REGISTRY)))

    class Renamed(Strict):
        model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

        blindsig: BlindsigSuite | None = None
        rsa_large: RsaLargeSuite | None = Field(default=None, alias="rsa_large")

    pair = (REGISTRY[0], REGISTRY[2])
    with pytest.raises(TypeError, match=r"declares the suites \['blindsig', 'rsa_large'\]"):
        check_fields(Renamed, pair)

    class WrongModel(Strict):
        blindsig: RsaLargeSuite | None = None

    with pytest.raises(TypeError, match="declares the suites"):
        check_fields(WrongModel, REGISTRY[:1])


def test_matrix_face_exports_only_the_matrix_packages_names() -> None:
    for name in matrix.__all__:
        value = getattr(matrix, name)
        module = getattr(value, "__module__", "archbench.matrix")
        assert module.startswith(("archbench.matrix", "archbench.inputs.bounded")), name
    assert "Suites" not in matrix.__all__ and "BlindsigSuite" not in matrix.__all__
    assert inspect.signature(matrix.parse).parameters["source"].default == "matrix.yml"
