"""matrix.yml's adaptive-repetition settings of the blindsig suite and the harness command."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from archbench.matrix import BlindsigSuite, Suites
from archbench.run import harness_command


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
