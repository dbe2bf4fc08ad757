"""Real engines for the integration tests: a second dockerd and an sshd in front of it.

A pytest plugin (``pytest_plugins`` in ``tests/conftest.py``): the fixtures
``second_engine`` (session) and ``sshd`` (module) are at the end.

:func:`second_dockerd` starts its own dockerd with its own data-root,
exec-root, pid file and socket, listening on 127.0.0.1 only, on a bridge of
its own with no NAT (builds use the host network, harness containers have no
network anyway). ``--bridge=none`` is not an option: dockerd then deletes
the default ``docker0`` bridge, which the first engine still needs.

:class:`SshServer` is Debian's OpenSSH server on a loopback port, with a
host key and a client key made for the test, its own ``sshd_config`` and a
client configuration of its own: an ``ssh`` wrapper (first on ``PATH``)
runs the real ``ssh -F <test config>``, so the Docker SDK's ``ssh`` child
reads the test's ``known_hosts`` and key and the user's ``~/.ssh`` is never
touched. ``SetEnv DOCKER_HOST`` makes the login's ``docker system
dial-stdio`` reach the second dockerd.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
import pytest

ALIAS = "archbench-sshd"
"""The ``Host`` alias of the test's ssh configuration."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Dockerd:
    """A running second engine: its loopback TCP port and unix socket."""

    port: int
    socket: Path


@contextmanager
def second_dockerd(root: Path) -> Iterator[Dockerd]:
    """Run a second dockerd with everything under ``root`` (a short path: sockets)."""
    port = free_port()
    bridge = f"ab2-{port}"  # interface names have at most 15 characters
    for cmd in (
        ["ip", "link", "add", bridge, "type", "bridge"],
        ["ip", "addr", "add", "172.31.254.1/24", "dev", bridge],
        ["ip", "link", "set", bridge, "up"],
    ):
        subprocess.run(cmd, check=True, capture_output=True)
    log = (root / "dockerd.log").open("w")
    proc = subprocess.Popen(
        [
            "dockerd",
            "--data-root", str(root / "data"),
            "--exec-root", str(root / "x"),
            "--pidfile", str(root / "dockerd.pid"),
            "-H", f"unix://{root}/docker.sock",
            "-H", f"tcp://127.0.0.1:{port}",
            f"--bridge={bridge}",
            "--iptables=false",
            "--ip6tables=false",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                # The constructor already asks the engine for its API version.
                docker.DockerClient(base_url=f"tcp://127.0.0.1:{port}", timeout=5).ping()
                break
            except docker.errors.DockerException as exc:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(
                        f"second dockerd did not start; see {root / 'dockerd.log'}"
                    ) from exc
                time.sleep(0.5)
        yield Dockerd(port, root / "docker.sock")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        subprocess.run(["umount", "-R", str(root / "data")], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True, check=False)


def _keygen(path: Path, comment: str) -> str:
    """Make an ed25519 key pair at ``path``; return the public key line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text(encoding="utf-8").strip()


class SshServer:
    """OpenSSH's sshd on 127.0.0.1:``port`` logging ``root`` in by key only.

    ``docker_host`` is the ``DOCKER_HOST`` of the logins (the second engine).
    Besides the authorized client key, ``root/`` holds a key the server does
    not accept (``denied``), a key whose login reaches no engine
    (``no-engine``), and ``known_hosts`` variants for the host-key tests; the
    ``Host`` aliases ``archbench-sshd``, ``…-unknown``, ``…-changed``,
    ``…-denied`` and ``…-no-engine`` in the client configuration select them;
    ``…-mux`` is the good login through one shared connection (``ControlMaster``).
    ``alias`` replaces ``archbench-sshd`` in those names; ``include``: another server
    whose client configuration this one's includes, so that one ``ssh`` wrapper on
    ``PATH`` reaches both (two hosts of a pool).
    """

    def __init__(
        self,
        root: Path,
        docker_host: str,
        alias: str = ALIAS,
        include: SshServer | None = None,
    ) -> None:
        self.root = root
        self.alias = alias
        self.port = free_port()
        self.docker_host = docker_host
        self.proc: subprocess.Popen[bytes] | None = None
        root.mkdir(parents=True, exist_ok=True)
        root.chmod(0o700)
        host_pub = _keygen(root / "host_ed25519", "archbench test host")
        client_pub = _keygen(root / "id_ed25519", "archbench test client")
        _keygen(root / "id_denied", "archbench test key the server refuses")
        engineless_pub = _keygen(root / "id_no_engine", "archbench test key without engine")
        other_host_pub = _keygen(root / "other_host_ed25519", "another host")
        (root / "authorized_keys").write_text(
            f"{client_pub}\n"
            # This login's docker talks to a socket no engine listens on.
            'command="DOCKER_HOST=unix:///nonexistent/docker.sock docker system dial-stdio" '
            f"{engineless_pub}\n",
            encoding="utf-8",
        )
        name = f"[127.0.0.1]:{self.port}"
        (root / "known_hosts").write_text(f"{name} {host_pub}\n", encoding="utf-8")
        (root / "known_hosts_changed").write_text(f"{name} {other_host_pub}\n", encoding="utf-8")
        (root / "known_hosts_empty").write_text("", encoding="utf-8")
        (root / "sshd_config").write_text(
            f"""\
Port {self.port}
ListenAddress 127.0.0.1
HostKey {root}/host_ed25519
PidFile {root}/sshd.pid
AuthorizedKeysFile {root}/authorized_keys
PermitRootLogin prohibit-password
AllowUsers root
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
# The keys live under /tmp, which is world-writable.
StrictModes no
# The SDK opens one ssh connection per API connection.
MaxStartups 100:30:200
SetEnv DOCKER_HOST={docker_host}
LogLevel VERBOSE
""",
            encoding="utf-8",
        )
        common = f"""\
  HostName 127.0.0.1
  Port {self.port}
  User root
  IdentitiesOnly yes
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  ServerAliveInterval 5
  ServerAliveCountMax 2
  LogLevel ERROR
"""
        variants = {
            "": ("id_ed25519", "known_hosts"),
            "-unknown": ("id_ed25519", "known_hosts_empty"),
            "-changed": ("id_ed25519", "known_hosts_changed"),
            "-denied": ("id_denied", "known_hosts"),
            "-no-engine": ("id_no_engine", "known_hosts"),
            "-mux": ("id_ed25519", "known_hosts"),
        }
        # At the top: an Include after a Host line would apply to that host only.
        (root / "ssh_config").write_text(
            (f"Include {include.root}/ssh_config\n" if include is not None else "")
            + "".join(
                f"Host {alias}{suffix}\n{common}"
                f"  IdentityFile {root}/{key}\n  UserKnownHostsFile {root}/{known}\n"
                + (
                    f"  ControlMaster auto\n  ControlPath {root}/cm-%C\n  ControlPersist 30\n"
                    if suffix == "-mux"
                    else ""
                )
                for suffix, (key, known) in variants.items()
            ),
            encoding="utf-8",
        )
        bin_dir = root / "bin"
        bin_dir.mkdir()
        wrapper = bin_dir / "ssh"
        wrapper.write_text(
            f'#!/bin/sh\nexec {shutil.which("ssh")} -F {root}/ssh_config "$@"\n', encoding="utf-8"
        )
        wrapper.chmod(0o755)
        self.bin_dir = bin_dir

    def url(self, variant: str = "") -> str:
        """The matrix ``url`` of this server (``ssh://archbench-sshd-denied``...)."""
        return f"ssh://{self.alias}{variant}"

    def path(self) -> str:
        """``PATH`` with the ``ssh`` wrapper first."""
        return f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"

    def stop_mux(self) -> None:
        """End the ``ControlMaster`` of the ``-mux`` alias, if one runs."""
        subprocess.run(
            [str(self.bin_dir / "ssh"), "-O", "exit", f"{self.alias}-mux"],
            capture_output=True,
            check=False,
        )

    def start(self) -> None:
        """Start sshd in the foreground (``-D``) and wait until it accepts connections."""
        # sshd's privilege separation needs this directory, as the package's unit creates it.
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        log = (self.root / "sshd.log").open("ab")
        self.proc = subprocess.Popen(
            [
                shutil.which("sshd") or "/usr/sbin/sshd",
                "-D",
                "-e",
                "-f",
                str(self.root / "sshd_config"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError as exc:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"sshd did not start; see {self.root / 'sshd.log'}") from exc
                time.sleep(0.1)

    def stop(self, *, kill: bool = False) -> None:
        """Stop sshd and every session it forked (``kill``: SIGKILL, as when a box dies).

        The listening sshd forks a process per connection, which outlives the
        listener; each session's ``docker system dial-stdio`` is a child of
        those. All of them go, so every ssh connection of the client breaks.
        """
        if self.proc is None:
            return
        sig = signal.SIGKILL if kill else signal.SIGTERM
        for pid in [*_descendants(self.proc.pid), self.proc.pid]:
            with suppress(ProcessLookupError):
                os.kill(pid, sig)
        self.proc.wait(timeout=30)
        self.proc = None


def _descendants(pid: int) -> list[int]:
    """Process ids below ``pid`` (children first found, deepest last), from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def second_dockerd_engine() -> Iterator[Dockerd]:
    """A second dockerd on a loopback TCP port and a unix socket of its own."""
    if shutil.which("dockerd") is None:
        pytest.skip("dockerd is not installed")
    # exec-root holds unix sockets, whose paths must stay short.
    root = Path(tempfile.mkdtemp(prefix="ab2-", dir="/tmp"))
    try:
        with second_dockerd(root) as engine:
            yield engine
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def second_engine(second_dockerd_engine: Dockerd) -> int:
    """The second dockerd's loopback TCP port."""
    return second_dockerd_engine.port


@pytest.fixture(scope="module")
def sshd(second_dockerd_engine: Dockerd) -> Iterator[SshServer]:
    """Debian's sshd on a loopback port whose logins' docker reaches the second engine.

    Its ``ssh`` wrapper is first on ``PATH`` for the whole module (also for
    ``invoke`` subprocesses that inherit the environment).
    """
    if shutil.which("sshd") is None:
        pytest.skip("sshd is not installed: run scripts/setup-host.sh --tests (openssh-server)")
    root = Path(tempfile.mkdtemp(prefix="ab-sshd-", dir="/tmp"))
    server = SshServer(root / "s", f"unix://{second_dockerd_engine.socket}")
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", server.path())
    server.start()
    try:
        yield server
    finally:
        server.stop()
        mp.undo()
        shutil.rmtree(root, ignore_errors=True)
