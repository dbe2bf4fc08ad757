"""ssh:// URL handling, the ssh failure messages, and the container gate of Ctrl-C."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from archbench.errors import Interrupted
from archbench.hosts import ssh
from archbench.run import containers as run
from archbench.suites import Suites

CHANGED = """\
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Host key for [box.example]:2222 has changed and you have requested strict checking.
Host key verification failed.
"""


def test_urls_are_split_as_the_sdk_splits_them() -> None:
    t = ssh.SshTarget.from_url("ssh://alice@box.example:2222")
    assert (t.user, t.host, t.port) == ("alice", "box.example", "2222")
    assert t.ssh_args() == ["-l", "alice", "-p", "2222", "--", "box.example"]
    assert t.known_hosts_name == "[box.example]:2222" and t.shown == "box.example:2222"
    alias = ssh.SshTarget.from_url("ssh://box")
    assert alias.ssh_args() == ["--", "box"] and alias.login == "ssh box"
    assert ssh.SshTarget.from_url("ssh://box:22").known_hosts_name == "box"


def test_an_explicit_port_is_kept() -> None:
    assert ssh.sdk_url("ssh://alice@box.example:2222") == "ssh://alice@box.example:2222"


@pytest.mark.parametrize(
    ("code", "stderr", "expected"),
    [
        (255, CHANGED, "CHANGED since it was recorded"),
        (255, "Host key verification failed.\n", "not in known_hosts"),
        (255, "alice@box.example: Permission denied (publickey).\n", "refused the login"),
        (
            255,
            "ssh: connect to host box.example port 2222: Connection refused\n",
            "does not answer",
        ),
        (
            255,
            "ssh: Could not resolve hostname nope: Name or service not known\n",
            "does not answer",
        ),
        (127, "sh: 1: docker: not found\n", "no 'docker' command there"),
        (
            1,
            "permission denied while trying to connect to the Docker daemon socket\n",
            "'docker' group",
        ),
        (1, "Cannot connect to the Docker daemon at unix:///x.sock\n", "engine does not answer"),
    ],
)
def test_each_ssh_failure_is_named_with_its_fix(code: int, stderr: str, expected: str) -> None:
    target = ssh.SshTarget.from_url("ssh://alice@box.example:2222")
    message = ssh.diagnose("box", target, code, stderr)
    assert message.startswith("host box (ssh://box.example:2222)")
    assert expected in message
    assert "alice" not in message  # no user names


def test_a_changed_key_names_the_known_hosts_entry_to_remove() -> None:
    target = ssh.SshTarget.from_url("ssh://box.example:2222")
    message = ssh.diagnose("box", target, 255, CHANGED)
    assert 'ssh-keygen -R "[box.example]:2222"' in message
    assert "'ssh -p 2222 box.example'" in message
    with_user = ssh.diagnose("box", ssh.SshTarget.from_url("ssh://bench@box:2"), 255, CHANGED)
    assert "'ssh -p 2 USER@box'" in with_user


def test_the_gate_refuses_new_containers_once_closed() -> None:
    gate = run.ContainerGate()
    with gate.admit():
        pass
    assert gate.close(timeout=1) and gate.closed
    with pytest.raises(Interrupted), gate.admit():
        pass


def test_closing_waits_for_the_create_in_flight() -> None:
    gate = run.ContainerGate()
    entered, released, finished = threading.Event(), threading.Event(), []

    def create() -> None:
        with gate.admit():
            entered.set()
            released.wait(5)
            finished.append(time.monotonic())

    worker = threading.Thread(target=create)
    worker.start()
    entered.wait(5)
    threading.Timer(0.3, released.set).start()
    t0 = time.monotonic()
    assert gate.close(timeout=5)
    closed_at = time.monotonic()
    worker.join(5)
    # close() returned only after the create in flight had finished.
    assert finished and finished[0] <= closed_at and closed_at - t0 >= 0.25


def test_closing_gives_up_on_a_create_that_hangs() -> None:
    gate = run.ContainerGate()
    release = threading.Event()

    def hang() -> None:
        with gate.admit():
            release.wait(5)

    worker = threading.Thread(target=hang)
    worker.start()
    time.sleep(0.05)
    assert gate.close(timeout=0.2) is False
    release.set()
    worker.join(5)


def test_confinement_settings() -> None:
    c = run.confinement(80)
    assert c["cap_drop"] == ["ALL"] and c["read_only"] is True
    assert c["security_opt"] == ["no-new-privileges:true"]
    assert c["network_mode"] == "none" and c["pids_limit"] == run.PIDS_LIMIT
    assert c["tmpfs"] == {"/tmp": "rw,nosuid,nodev,noexec,size=80m,mode=1777"}
    assert run.tmp_mib(Suites.model_validate({"gnupg": {"file_bytes": 1}})) == run.TMP_MIB + 1


# A connection of the SDK's ssh transport whose ssh process has ended, closed by a
# finalizer at the interpreter's exit, as its per-request pools are after a host is lost.
DEAD_SSH = """
import subprocess, sys, weakref
from docker.transport.sshconn import SSHSocket
from archbench.hosts import ssh
sock = SSHSocket("box")
sock.proc = subprocess.Popen(["true"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
sock.proc.wait()
class Pool: pass
pool = Pool()
weakref.finalize(pool, sock.close)
if sys.argv[1] == "quiet":
    ssh.quiet_dead_connections()
    ssh.quiet_dead_connections()  # once is enough; twice changes nothing
keep = weakref.finalize(pool, lambda: 1 / 0)  # any other error is still shown
"""


@pytest.mark.parametrize("mode", ["loud", "quiet"])
def test_closing_a_dead_ssh_connection_at_exit_prints_no_traceback(mode: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", DEAD_SSH, mode], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "ZeroDivisionError" in done.stderr
    assert ("BrokenPipeError" in done.stderr) is (mode == "loud"), done.stderr
