"""The engine going away during a run, in our words with the next step (issue 32, kind 6).

A stopped local dockerd, a lost ssh host and a full engine disk each end the target
with a message of ours naming what happened, how to bring the engine back and the
``--resume`` command; never Python's ``('Connection aborted.', ...)``.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
import requests

from archbench.hosts import answers
from archbench.matrix import parse
from archbench.platforms import Arch
from archbench.result import ResultStore
from archbench.run import TargetOutcome, Workspace, execute, plan
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


PULL_MATRIX = """\
version: 1
bases:
  slim: {source: pull, image: "debian:trixie-slim"}
profiles:
  p: {packages: [gcc]}
targets:
  - {name: amd64-slim, arch: amd64, base: slim, profile: p}
"""


class _Engine(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """An engine on a real unix socket that answers the first look-ups of a run (GETs: an
    image that is not there yet, the version) and goes away at the first thing it is asked
    to do: that request's connection is cut and the socket removed, as when dockerd is
    stopped in the middle of a run."""

    daemon_threads = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests: list[str] = []
        super().__init__(str(path), _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Engine

    def log_message(self, format: str, *args: object) -> None:
        pass  # the test reads ``requests``

    def _answer(self) -> None:
        self.server.requests.append(f"{self.command} {self.path.split('?')[0]}")
        if self.command != "GET":
            self.server.path.unlink()  # nobody listens from now on
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)  # cut mid-request
            return
        if self.path.endswith("/version"):
            body: object = {"ApiVersion": "1.43", "Arch": "amd64", "Os": "linux"}
            code = 200
        else:
            body, code = {"message": "No such image"}, 404
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _answer


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[_Engine]:
    server = _Engine(tmp_path / "docker.sock")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_an_engine_lost_mid_run_is_named_in_our_words_with_the_resume_command(
    tmp_path: Path, engine: _Engine
) -> None:
    client = docker.DockerClient(base_url=f"unix://{engine.path}", version="1.43", timeout=5)
    m = parse(PULL_MATRIX)
    plans = plan(m, m.select(["amd64-slim"]), {"local": Arch.AMD64})
    results = tmp_path / "results"
    ws = Workspace(store=ResultStore(results), run_id=RUN, work_dir=tmp_path / "work")
    (outcome,) = execute({"local": client}, plans, ws, {"local": Arch.AMD64})
    # The run got as far as asking the engine to pull the base; then it went away.
    assert engine.requests[0] == "GET /v1.43/images/archbench-base/slim:amd64/json"
    assert engine.requests[-1] == "POST /v1.43/images/create"
    assert not os.path.exists(engine.path)
    assert not outcome.ok and outcome.stage == "base"
    text = outcome.message
    assert text.startswith(
        "the Docker engine on this machine (local) stopped answering during base"
    )
    assert "systemctl start docker" in text and "other targets' results are kept" in text
    assert text.endswith(f"invoke bench --resume {RUN}")
    assert "Connection aborted" not in text and "Traceback" not in text
    # Python's words are what the SDK raises: the test sees ours replace them.
    with pytest.raises(requests.exceptions.ConnectionError, match=r"Connection aborted"):
        client.version()
