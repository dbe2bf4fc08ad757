"""The README's two commands on a machine that has never seen archbench (issue 27).

A fresh Debian 12 root (``tests/pristine.py``: mmdebstrap from the package mirror, with
its own Docker engine, QEMU and Python 3.11.2), a copy of this tree, and inside it the
README's first command word for word, to its end: setup, a riscv64 base, image, run,
counts, report. Then, in a second fresh machine, the test command's setup
(``setup-host.sh --tests``) and a handful of tests that need what it installs, with
``CI`` set so that a missing tool fails rather than skips.

The stage times of the first command are written to ``.archbench/pristine-times.txt``,
which ``.ci/run`` prints at its end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import docker
import pytest
from helpers import REPO
from pristine import (
    CLONE,
    TARGET,
    machine,
    readme_commands,
    remove_image,
    root_image,
    stage_table,
)

pytestmark = [pytest.mark.docker, pytest.mark.pristine]

TIMES = REPO / ".archbench" / "pristine-times.txt"
#: The machine's transcripts, kept after the test (pytest removes old tmp_path folders).
LOGS = REPO / ".archbench" / "pristine"
#: The longest a user may look at an unchanged screen (issue 27).
MAX_SILENCE_S = 20.0

#: Tests run in the machine after ``setup-host.sh --tests``, one (or two) for each thing
#: it installs: TeX Live and poppler, sshd (a second dockerd behind it), Chromium,
#: GNUnet's headers with a compiler and pkg-config, dpkg-dev and git for the GNUnet
#: build script, and a GNUnet source unpacked and prepared by Debian's own Python (its
#: tar handling is what 3.11.2 lacked).
TESTS_IN_MACHINE = (
    "tests/integration/test_latex_compile.py",
    "tests/integration/test_ssh_hosts.py::test_ssh_host_connects_through_the_system_ssh",
    "tests/unit/test_page_browser.py",
    "tests/integration/test_blindsig_api_native.py",
    "tests/unit/test_gnunet_api.py",
    "tests/unit/test_gnunet_source.py",
    "tests/unit/test_lock.py",
)


@pytest.fixture(scope="module")
def root(engine_client: docker.DockerClient) -> Iterator[str]:
    """A Debian 12 root bootstrapped for this module, removed after it."""
    tag = root_image(engine_client, "bookworm")
    try:
        yield tag
    finally:
        remove_image(engine_client, tag)


def test_the_first_command_runs_to_a_report_on_a_pristine_machine(
    engine_client: docker.DockerClient, root: str
) -> None:
    first, _ = readme_commands()
    with machine(engine_client, root) as node:
        LOGS.mkdir(parents=True, exist_ok=True)
        transcript = node.run(first, LOGS / "first-command.log")
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

        appendix = node.sh(f"cat {CLONE}/reports/out/appendix.md")
        assert re.search(r"^#+ .*riscv64", appendix, re.MULTILINE), appendix[:2000]
        assert "instructions" in appendix.lower()
        # The counts table: instructions per operation of CS signing, a whole number.
        assert re.search(r"CS.*sign.*\|\s*[0-9][0-9 ,]{3,}", appendix), appendix[:4000]
        page = node.sh(f"wc -c < {CLONE}/reports/out/results.html")
        assert int(page) > 100_000

        # doctor --fix registers QEMU's handlers where none are (the machine sees the
        # host's; a binfmt_misc instance of its own, in a user namespace, starts empty).
        # The machine's own riscv64 base, as a folder (its programs are dynamic).
        node.sh(
            "mkdir -p /tmp/rv && c=$(docker create --platform linux/riscv64 "
            "$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -m1 riscv64) true) "
            "&& docker export $c | tar -x -C /tmp/rv && docker rm $c >/dev/null"
        )
        proof = node.doctor_fix_registers("/tmp/rv")
        assert "handlers before: 0" in proof, proof
        assert "registered qemu-riscv64" in proof and "enabled" in proof, proof
        assert re.search(r"^flags: .*F", proof, re.MULTILINE), proof
        assert "GNU coreutils" in proof, proof


def test_the_test_commands_setup_installs_what_the_tests_need(
    engine_client: docker.DockerClient, root: str
) -> None:
    _, second = readme_commands()
    setup, _, pytest_command = second.partition(" && ")
    assert setup == "bash scripts/setup-host.sh --tests", second
    assert pytest_command.startswith(".venv/bin/pytest"), second
    with machine(engine_client, root) as node:
        LOGS.mkdir(parents=True, exist_ok=True)
        transcript = node.run(setup, LOGS / "setup-tests.log")
        assert transcript.exit_code == 0, transcript.text()[-4000:]
        assert "Traceback" not in transcript.text()
        python = node.sh(f"{CLONE}/.venv/bin/python --version").strip()
        assert python == "Python 3.11.2", python  # Debian 12's own
        tests = " ".join(TESTS_IN_MACHINE)
        done = node.run(
            f"CI=true .venv/bin/pytest --run-docker -p no:cacheprovider -q {tests}",
            LOGS / "tests-in-machine.log",
        )
        assert done.exit_code == 0, done.text()[-4000:]
        summary = done.lines[-1].text
        assert re.search(r"\d+ passed", summary) and "skipped" not in summary, summary
