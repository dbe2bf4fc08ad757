"""matrix.yml's adaptive-repetition settings of the blindsig suite, its defaults and flags."""

from __future__ import annotations

import pytest
from helpers import REPO
from pydantic import ValidationError

from archbench.cli.flags import BENCH, Given, blindsig_overrides
from archbench.errors import MatrixError
from archbench.inputs import ci_target
from archbench.matrix import describe_emulated_changes, load, parse
from archbench.platforms import Arch
from archbench.run import plan
from archbench.run.containers import harness_command
from archbench.suites import BlindsigSuite, Suites


def _cmd(**settings: object) -> list[str]:
    return harness_command(Suites.model_validate({"blindsig": settings}))


def test_ci_target_turns_repetitions_into_a_cap() -> None:
    cmd = _cmd(ci_target=0.02, repetitions=3, max_repetitions=40, min_repetitions=8, seed=7)
    assert cmd[cmd.index("--repetitions") + 1] == "40"
    assert cmd[cmd.index("--ci-target") + 1] == "0.02"
    assert cmd[cmd.index("--min-repetitions") + 1] == "8"
    assert cmd[cmd.index("--seed") + 1] == "7"
    assert "--order" not in cmd  # interleaved is the harness's default


def test_fixed_repetitions_by_default() -> None:
    cmd = _cmd(repetitions=3, order="sequential")
    assert cmd[cmd.index("--repetitions") + 1] == "3"
    assert "--ci-target" not in cmd and "--min-repetitions" not in cmd
    assert cmd[cmd.index("--order") + 1] == "sequential"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"ci_target": 0.0}, "greater than 0"),
        ({"ci_target": 1.5}, "less than 1"),
        ({"ci_target": 0.02, "max_repetitions": 4}, "max_repetitions \\(4\\) is below"),
        ({"order": "random"}, "interleaved"),
        ({"seed": -1}, "greater than or equal to 0"),
    ],
)
def test_bad_adaptive_settings_are_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        BlindsigSuite.model_validate(settings)


# ------------------------------------------- the shipped default: adaptive on native targets


def _shipped_blindsig(
    overrides: dict[str, object] | None = None, local: Arch = Arch.AMD64
) -> dict[str, BlindsigSuite]:
    m = load(REPO / "matrix.yml")
    out = {}
    for p in plan(m, m.targets, {"local": local}, overrides):
        if p.suites.blindsig is not None:
            out[p.name] = p.suites.blindsig
    return out


def test_native_targets_are_adaptive_and_emulated_ones_fixed_by_default() -> None:
    suites = _shipped_blindsig()
    native = suites["amd64-trixie"]
    assert (native.ci_target, native.min_repetitions, native.max_repetitions) == (0.02, 6, 100)
    assert native.max_time == 120
    cmd = harness_command(Suites(blindsig=native))
    assert cmd[cmd.index("--ci-target") + 1] == "0.02"
    assert cmd[cmd.index("--repetitions") + 1] == "100"
    # emulated_defaults' explicit null really replaces the defaults' 0.02.
    for name in ("arm64-trixie", "armv7-trixie", "ppc64le-bookworm", "riscv64-trixie"):
        emulated = suites[name]
        assert (emulated.ci_target, emulated.repetitions, emulated.max_time) == (None, 3, 20)
        cmd = harness_command(Suites(blindsig=emulated))
        assert "--ci-target" not in cmd, name
        assert cmd[cmd.index("--repetitions") + 1] == "3"
    # On an arm64 machine the arm64 target is native, hence adaptive.
    assert _shipped_blindsig(local=Arch.ARM64)["arm64-trixie"].ci_target == 0.02


def test_a_null_in_emulated_defaults_overrides_but_never_a_targets_own_key() -> None:
    text = """
version: 1
defaults:
  blindsig: {ci_target: 0.05, max_repetitions: 20}
emulated_defaults:
  blindsig: {ci_target: null}
bases:
  debian-trixie: {source: bootstrap, suite: trixie}
profiles:
  slim: {packages: [gcc]}
targets:
  - {name: native, arch: amd64, base: debian-trixie}
  - {name: emulated, arch: riscv64, base: debian-trixie}
  - name: own
    arch: arm64
    base: debian-trixie
    suites: {blindsig: {ci_target: 0.03}}
"""
    m = parse(text)
    plans = {p.name: p for p in plan(m, m.targets, {"local": Arch.AMD64})}
    got = {name: p.suites.blindsig.ci_target for name, p in plans.items() if p.suites.blindsig}
    assert got == {"native": 0.05, "emulated": None, "own": 0.03}
    assert (
        describe_emulated_changes(plans["emulated"].emulated_settings) == "blindsig ci_target None"
    )
    # A null where a number belongs is still checked: emulated_defaults is validated.
    with pytest.raises(MatrixError, match=r"emulated_defaults\.blindsig\.ci_target"):
        parse(text.replace("ci_target: null", "ci_target: 2"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("off", None), (" OFF ", None), ("0.02", 0.02), ("0.5", 0.5), (0.1, 0.1)],
)
def test_ci_target_flag(text: object, expected: float | None) -> None:
    assert ci_target("--ci-target", text) == expected


@pytest.mark.parametrize("text", ["0", "1", "-0.02", "nan", "of", "", "0.02,0.03"])
def test_bad_ci_target_flag_says_what_is_allowed(text: str) -> None:
    with pytest.raises(MatrixError, match=r"--ci-target: .*or 'off' for fixed repetitions"):
        ci_target("--ci-target", text)


def test_off_or_a_fixed_repetition_count_turns_adaptive_off_for_one_run() -> None:
    def overrides(**given: str) -> dict[str, object]:
        return blindsig_overrides(Given(BENCH, given))

    assert overrides(ci_target="off") == {"ci_target": None}
    assert overrides(repetitions="5") == {"repetitions": 5, "ci_target": None}
    assert overrides(repetitions="5", ci_target="0.03") == {"repetitions": 5, "ci_target": 0.03}
    assert overrides(iterations="20") == {"iterations": 20}  # the matrix's choice stands
    native = _shipped_blindsig({"ci_target": None})["amd64-trixie"]
    assert (native.ci_target, native.repetitions) == (None, 3)
    cmd = harness_command(Suites(blindsig=native))
    assert "--ci-target" not in cmd and cmd[cmd.index("--repetitions") + 1] == "3"
