"""The README's two commands on a machine that has never seen archbench (issue 27).

A fresh Debian 12 root (``tests/pristine.py``: mmdebstrap from the package mirror, with
its own Docker engine, QEMU and Python 3.11.2), a copy of this tree, and inside it the
README's first command word for word, to its end: setup, a riscv64 base, image, run,
counts, report. Then, in a second fresh machine, the test command's setup
(``setup-host.sh --tests``) and a handful of tests that need what it installs, with
``CI`` set so that a missing tool fails rather than skips.

The machines work in a thread started when the session starts
(:class:`pristine.Scenario`, ``tests/conftest.py``) and these tests, run last, wait for
them and check what they left. The stage times of the first command are written to
``.archbench/pristine-times.txt``, which ``.ci/run`` prints at its end.
"""

from __future__ import annotations

import re

import docker
import pytest
from helpers import REPO
from pristine import TARGET, Scenario, readme_commands, stage_table, start_scenario

pytestmark = [pytest.mark.docker, pytest.mark.pristine]

TIMES = REPO / ".archbench" / "pristine-times.txt"
#: The longest a user may look at an unchanged screen (issue 27).
MAX_SILENCE_S = 20.0


@pytest.fixture(scope="module")
def scenario(engine_client: docker.DockerClient) -> Scenario:
    """The session's machines (already at work when the session started them)."""
    return start_scenario(engine_client)


def test_the_first_command_runs_to_a_report_on_a_pristine_machine(scenario: Scenario) -> None:
    done = scenario.first_command()
    transcript = done.transcript
    text = transcript.text()
    assert transcript.exit_code == 0, text[-4000:]
    parts = transcript.parts()
    assert [command.split()[-1] for command, _ in parts] == [
        "scripts/setup-host.sh",
        "riscv64",
        "report",
    ], parts
    stages = [s for s in transcript.stage_starts(TARGET) if s[1] > parts[0][1]]
    table = stage_table(parts, stages)
    TIMES.parent.mkdir(parents=True, exist_ok=True)
    TIMES.write_text(f"README's first command on a pristine Debian 12 root\n{table}\n")
    print(table)
    assert "Traceback" not in text
    silence, after = transcript.longest_silence()
    assert silence <= MAX_SILENCE_S, f"{silence:.0f} s without a line, before {after!r}"
    assert {"base", "image", "run"} <= {stage for stage, _ in stages}, stages

    appendix = done.appendix
    assert re.search(r"^#+ .*riscv64", appendix, re.MULTILINE), appendix[:2000]
    assert "instructions" in appendix.lower()
    # The counts table: instructions per operation of CS signing, a whole number.
    assert re.search(r"CS.*sign.*\|\s*[0-9][0-9 ,]{3,}", appendix), appendix[:4000]
    assert done.page_bytes > 100_000

    # doctor --fix registered QEMU's riscv64 handler in an empty binfmt_misc, and the
    # base's own coreutils ran through it.
    proof = done.doctor_proof
    assert "handlers before: 0" in proof, proof
    assert "registered qemu-riscv64" in proof and "enabled" in proof, proof
    assert re.search(r"^flags: .*F", proof, re.MULTILINE), proof
    assert "GNU coreutils" in proof, proof


def test_the_test_commands_setup_installs_what_the_tests_need(scenario: Scenario) -> None:
    _, second = readme_commands()
    setup, _, pytest_command = second.partition(" && ")
    assert setup == "bash scripts/setup-host.sh --tests", second
    assert pytest_command.startswith(".venv/bin/pytest"), second
    done = scenario.test_command()
    assert done.setup.exit_code == 0, done.setup.text()[-4000:]
    assert "Traceback" not in done.setup.text()
    assert done.python == "Python 3.11.2", done.python  # Debian 12's own
    assert done.tests is not None
    assert done.tests.exit_code == 0, done.tests.text()[-4000:]
    summary = done.tests.lines[-1].text
    assert re.search(r"\d+ passed", summary) and "skipped" not in summary, summary
