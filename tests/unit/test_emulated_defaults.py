"""``emulated_defaults``: settings that fit under QEMU, never over what a target wrote."""

from __future__ import annotations

import pytest
from helpers import REPO

from archbench.errors import MatrixError
from archbench.matrix import describe_emulated_changes, load, parse
from archbench.platforms import Arch
from archbench.run import TargetPlan, plan
from archbench.suites import BlindsigSuite, RsaLargeSuite

MATRIX = """
version: 1
defaults:
  blindsig: {rsa_bits: [1024, 2048, 3072, 4096], repetitions: 5}
  rsa-large: {enabled: false, bits: [2048, 4096, 8192]}
emulated_defaults:
  blindsig: {rsa_bits: [1024, 2048], repetitions: 3}
  rsa-large: {bits: [2048]}
bases:
  debian-trixie: {source: bootstrap, suite: trixie}
profiles:
  slim: {packages: [gcc]}
targets:
  - {name: native, arch: amd64, base: debian-trixie}
  - {name: emulated, arch: riscv64, base: debian-trixie}
  - name: own-sizes
    arch: arm64
    base: debian-trixie
    suites:
      blindsig: {rsa_bits: [1024, 4096]}
"""


def _plans(
    text: str = MATRIX, overrides: dict[str, object] | None = None, suites: tuple[str, ...] = ()
) -> dict[str, TargetPlan]:
    m = parse(text)
    planned = plan(m, m.targets, {"local": Arch.AMD64}, overrides, suites=suites)
    return {p.name: p for p in planned}


def _blindsig(p: TargetPlan) -> BlindsigSuite:
    assert p.suites.blindsig is not None
    return p.suites.blindsig


def _rsa_large(p: TargetPlan) -> RsaLargeSuite:
    assert p.suites.rsa_large is not None
    return p.suites.rsa_large


def test_emulated_targets_get_the_layer_native_ones_do_not() -> None:
    plans = _plans()
    native, emulated = plans["native"], plans["emulated"]
    assert _blindsig(native).rsa_bits == (1024, 2048, 3072, 4096)
    assert _blindsig(native).repetitions == 5
    assert native.emulated_settings == {}
    assert _blindsig(emulated).rsa_bits == (1024, 2048)
    assert _blindsig(emulated).repetitions == 3
    assert emulated.emulated_settings == {"blindsig": {"repetitions": 3, "rsa_bits": [1024, 2048]}}
    assert describe_emulated_changes(emulated.emulated_settings) == (
        "blindsig repetitions 3, rsa_bits [1024, 2048]"
    )
    # A disabled suite stays disabled: the layer adjusts, never enables.
    assert emulated.suites.rsa_large is None


def test_what_a_target_wrote_wins_key_by_key() -> None:
    own = _plans()["own-sizes"]
    assert _blindsig(own).rsa_bits == (1024, 4096)
    assert _blindsig(own).repetitions == 3
    assert own.emulated_settings == {"blindsig": {"repetitions": 3}}


def test_command_line_overrides_win() -> None:
    emulated = _plans(overrides={"rsa_bits": [1024, 3072]})["emulated"]
    assert _blindsig(emulated).rsa_bits == (1024, 3072)


def test_suite_flag_takes_the_layer_for_the_suite_it_enables() -> None:
    emulated = _plans(suites=("rsa-large",))["emulated"]
    assert _rsa_large(emulated).bits == (2048,)
    assert emulated.suites.blindsig is None
    native = _plans(suites=("rsa-large",))["native"]
    assert _rsa_large(native).bits == (2048, 4096, 8192)


def test_enabled_in_the_layer_is_refused() -> None:
    text = MATRIX.replace("  rsa-large: {bits: [2048]}", "  rsa-large: {enabled: true}")
    with pytest.raises(MatrixError, match=r"emulated_defaults.rsa-large.enabled: emulated default"):
        parse(text)


def test_unknown_key_in_the_layer_names_it() -> None:
    text = MATRIX.replace("{rsa_bits: [1024, 2048], repetitions: 3}", "{rsa_bit: [1024]}")
    with pytest.raises(
        MatrixError,
        match=r"emulated_defaults.blindsig.rsa_bit: unknown key 'rsa_bit'.*"
        r"did you mean 'rsa_bits'",
    ):
        parse(text)


def test_shipped_matrix_fits_emulated_targets_and_keeps_amd64_whole() -> None:
    m = load(REPO / "matrix.yml")
    plans = {p.name: p for p in plan(m, m.targets, {"local": Arch.AMD64})}
    assert plans["amd64-trixie"].suites.blindsig is not None
    assert plans["amd64-trixie"].suites.blindsig.rsa_bits == (1024, 2048, 3072, 4096)
    for name in ("arm64-trixie", "armv7-trixie", "ppc64le-bookworm", "riscv64-trixie"):
        blindsig = plans[name].suites.blindsig
        assert blindsig is not None and blindsig.rsa_bits == (1024, 2048), name
    # On an arm64 machine the arm64 target is native and measures all four sizes.
    (arm,) = plan(m, m.select(archs=[Arch.ARM64]), {"local": Arch.ARM64})
    assert arm.suites.blindsig is not None
    assert _blindsig(arm).rsa_bits == (1024, 2048, 3072, 4096)
    assert m.bases[plans["ppc64le-bookworm"].target.base].suite == "bookworm"


def test_counting_a_native_target_takes_the_layer_as_counting_runs_under_qemu() -> None:
    m = parse(MATRIX)
    planned = plan(
        m,
        m.targets,
        {"local": Arch.AMD64},
        {"rsa_bits": [1024, 3072]},
        suites=("blindsig", "rsa-large"),
        metrics=("time", "instructions"),
    )
    native = next(p for p in planned if p.name == "native")
    assert _rsa_large(native).bits == (2048, 4096, 8192)  # timed as written
    counted = native.count_suites
    assert counted is not None and counted.rsa_large is not None and counted.blindsig is not None
    assert counted.rsa_large.bits == (2048,)
    assert counted.blindsig.repetitions == 3
    assert counted.blindsig.rsa_bits == (1024, 3072)  # the command line still wins
    emulated = next(p for p in planned if p.name == "emulated")
    assert emulated.count_suites is None  # its suites already carry the layer
    assert all(p.count_suites is None for p in _plans().values())  # time only
