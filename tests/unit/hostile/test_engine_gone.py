"""The engine going away during a run, in our words with the next step (issue 32, kind 6).

A stopped local dockerd, a lost ssh host and a full engine disk each end the target
with a message of ours naming what happened, how to bring the engine back and the
``--resume`` command; never Python's ``('Connection aborted.', ...)``.
"""

from __future__ import annotations

from pathlib import Path

import docker

from archbench.hosts import answers
from archbench.run import TargetOutcome
from archbench.run.schedule import disk_full, full_disk, lost_connection

RUN = "20261129T224000Z-1a2b3c"


def test_an_engine_that_does_not_answer_is_seen_as_gone(tmp_path: Path) -> None:
    # A real client on a socket nobody listens on: what a stopped dockerd looks like.
    client = docker.DockerClient(
        base_url=f"unix://{tmp_path / 'docker.sock'}", version="1.43", timeout=5
    )
    assert answers(client) is False


def test_a_stopped_local_engine_says_how_to_start_it_and_resume() -> None:
    outcome = TargetOutcome(name="amd64-trixie", ok=False, message="")
    outcome.stage = "run"
    text = lost_connection("local", "unix:///var/run/docker.sock", outcome, RUN, remote=False)
    assert "the Docker engine on this machine" in text and "stopped answering during run" in text
    assert "systemctl start docker" in text
    assert text.endswith(f"invoke bench --resume {RUN}")
    assert "Connection aborted" not in text


def test_a_lost_ssh_host_says_so_and_how_to_resume() -> None:
    outcome = TargetOutcome(name="arm64-box", ok=False, message="")
    text = lost_connection("box", "ssh://box", outcome, RUN)
    assert "lost the connection to host box (ssh://box) during its start" in text
    assert text.endswith(f"invoke bench --resume {RUN}")


def test_a_full_engine_disk_is_named_with_what_to_free() -> None:
    raw = "host local: 500 Server Error: write /var/lib/docker/tmp/x: no space left on device"
    assert disk_full(raw) and not disk_full("host local: 404 Not Found")
    outcome = TargetOutcome(name="amd64-trixie", ok=False, message="")
    outcome.stage = "build image"
    text = full_disk("local", outcome, RUN)
    assert "disk of host local's Docker engine is full" in text
    assert "docker system df" in text and text.endswith(f"invoke bench --resume {RUN}")
