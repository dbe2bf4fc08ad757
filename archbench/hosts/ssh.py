"""Checking an ``ssh://`` Docker host the way the Docker SDK will reach it.

The SDK (``use_ssh_client=True``) runs the system ``ssh`` once per API
connection, as ``ssh [-l USER] [-p PORT] -- HOST docker system dial-stdio``,
so ``~/.ssh/config``, the agent and ``known_hosts`` apply. It shows none of
ssh's own errors: an unknown host key and a refused key both end as "the
connection was aborted". :func:`probe` logs in once the same way, in batch
mode (ssh never prompts: the SDK opens many connections, a prompt per
connection would hang a run), sends one ``GET /_ping`` through
``docker system dial-stdio`` and, when that fails, says which of the usual
causes it is and how to fix it (:func:`diagnose`, pure).
:func:`quiet_dead_connections` keeps the SDK's closing of a connection whose ``ssh``
has ended (a lost host) from printing a traceback.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from types import TracebackType

from archbench.errors import EngineError

PING = b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n"
"""One HTTP/1.0 request: the engine answers and closes, so dial-stdio ends."""


@dataclass(frozen=True)
class SshTarget:
    """Where ``ssh://[USER@]HOST[:PORT]`` points, split as the Docker SDK splits it."""

    host: str
    user: str | None = None
    port: str | None = None

    @classmethod
    def from_url(cls, url: str) -> SshTarget:
        """Split ``url``; the SDK splits on the last ``@`` and the ``:`` (no IPv6 literals)."""
        rest = url.removeprefix("ssh://").rstrip("/")
        user, _, host = rest.rpartition("@")
        host, _, port = host.partition(":")
        return cls(host=host, user=user or None, port=port or None)

    def ssh_args(self) -> list[str]:
        """``ssh`` options and destination, in the SDK's order, without the command."""
        args = []
        if self.user:
            args += ["-l", self.user]
        if self.port:
            args += ["-p", self.port]
        return [*args, "--", self.host]

    @property
    def shown(self) -> str:
        """``HOST`` or ``HOST:PORT``: what messages name (no user names)."""
        return f"{self.host}:{self.port}" if self.port else self.host

    @property
    def known_hosts_name(self) -> str:
        """The host's name in ``known_hosts``: ``HOST`` or ``[HOST]:PORT``."""
        return f"[{self.host}]:{self.port}" if self.port and self.port != "22" else self.host

    @property
    def login(self) -> str:
        """The ``ssh`` command line a user types to connect once by hand (``USER`` for the name)."""
        port = f"-p {self.port} " if self.port else ""
        user = "USER@" if self.user else ""
        return f"ssh {port}{user}{self.host}"


def sdk_url(url: str) -> str:
    """``url`` with the port ``ssh`` would use written out, for the Docker SDK.

    The SDK puts ``:22`` on a URL without a port and passes it to ``ssh -p``,
    which overrides a ``Port`` from ``~/.ssh/config`` (``Host box`` with
    ``Port 2222``). ``ssh -G`` prints the configuration ssh would use,
    without connecting; its ``port`` is written into the URL. The host stays
    as written, so ``HostName``, ``IdentityFile`` and the rest still apply.
    ``url`` is returned unchanged when it has a port or ``ssh -G`` fails.
    """
    target = SshTarget.from_url(url)
    ssh = shutil.which("ssh")
    if target.port or ssh is None:
        return url
    try:
        done = subprocess.run(
            [ssh, "-G", *target.ssh_args()], capture_output=True, timeout=30, check=False
        )
    except subprocess.TimeoutExpired:
        return url
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        if key == "port" and value.strip().isdigit() and done.returncode == 0:
            user = f"{target.user}@" if target.user else ""
            return f"ssh://{user}{target.host}:{value.strip()}"
    return url


def probe(url: str, name: str, timeout: float = 60.0) -> float:
    """Reach the Docker engine behind ``url`` once through the system ``ssh``.

    Returns the seconds the login and ping took (the cost of every new
    connection the SDK opens).

    Raises:
        EngineError: ``ssh`` is missing, or the login or the engine failed; the
            message says which (unknown or changed host key, refused key,
            unreachable host, no ``docker`` there, engine down) and the fix.
    """
    target = SshTarget.from_url(url)
    ssh = shutil.which("ssh")
    if ssh is None:
        raise EngineError(
            f"host {name}: ssh:// hosts are reached through the system ssh client, which is "
            "not installed; install it (Debian: apt-get install openssh-client)"
        )
    cmd = [
        ssh,
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=15",
        *target.ssh_args(),
        "docker system dial-stdio",
    ]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, input=PING, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise EngineError(
            f"host {name} (ssh://{target.shown}) does not answer: no reply within {timeout:g} s. "
            "Check that the host is up and that ssh reaches it"
        ) from exc
    seconds = time.monotonic() - start
    stdout = done.stdout.decode("utf-8", "replace")
    if done.returncode == 0 and stdout.startswith("HTTP/") and " 200 " in stdout.split("\n")[0]:
        return seconds
    raise EngineError(
        diagnose(name, target, done.returncode, done.stderr.decode("utf-8", "replace"), stdout)
    )


def diagnose(name: str, target: SshTarget, returncode: int, stderr: str, stdout: str = "") -> str:
    """The message for a failed :func:`probe`: cause first, then the fix.

    ``returncode``, ``stderr`` and ``stdout`` are those of ``ssh ... docker
    system dial-stdio``; 255 is ssh's own failure, anything else is the
    remote command's. User names are removed from what ssh printed.
    """
    where = f"host {name} (ssh://{target.shown})"
    said = _last_lines(stderr)
    if "REMOTE HOST IDENTIFICATION HAS CHANGED" in stderr:
        return (
            f"{where}: its ssh host key has CHANGED since it was recorded in known_hosts, so "
            "ssh refused to connect (this is what an attack in the middle looks like). If "
            f"the host was reinstalled, remove the old key with 'ssh-keygen -R "
            f"\"{target.known_hosts_name}\"' and connect once with '{target.login}' to check "
            "and accept the new fingerprint"
        )
    if returncode == 255 and (
        "Host key verification failed" in stderr or re.search(r"No \S+ host key is known", stderr)
    ):
        return (
            f"{where}: its ssh host key is not in known_hosts, and archbench never accepts "
            f"a host key by itself. Connect once with '{target.login}', compare the "
            "fingerprint with the one the provider shows, and accept it"
        )
    if returncode == 255 and "Permission denied" in stderr:
        return (
            f"{where}: the host refused the login ({said}). archbench logs in with keys "
            "only, in batch mode: add your public key to the host's ~/.ssh/authorized_keys, "
            "load a key with a passphrase into the agent ('ssh-add'), or name it with "
            "IdentityFile in ~/.ssh/config; then check with "
            f"'{target.login} docker version'"
        )
    if returncode == 255 or (not stderr and not stdout):
        return (
            f"{where} does not answer ({said or f'ssh exit status {returncode}'}). Check "
            f"that the host is up and that '{target.login}' reaches it (name, port, firewall)"
        )
    if returncode == 127 or "not found" in stderr:
        return (
            f"{where}: the login works but there is no 'docker' command there ({said}); "
            "the ssh transport runs 'docker system dial-stdio' on the host. Install the "
            "Docker CLI there (Debian: apt-get install docker.io)"
        )
    if "permission denied" in stderr.lower():
        return (
            f"{where}: the login works but that user may not use the Docker engine ({said}); "
            "add the user to the host's 'docker' group"
        )
    return (
        f"{where}: the login works but its Docker engine does not answer ({said or stdout[:200]}). "
        "Start it there ('systemctl start docker') and check 'docker version' on the host"
    )


def _last_lines(text: str, count: int = 2) -> str:
    """The last ``count`` non-empty lines of ``text``, joined, with ``user@`` removed."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return re.sub(r"[^\s@/]+@", "", "; ".join(lines[-count:]))[:300]


_QUIET = threading.Lock()
_quiet_installed: list[bool] = []


def _closing_a_dead_ssh(value: BaseException | None, tb: TracebackType | None) -> bool:
    """True for the SDK's ``BrokenPipeError`` from ``SSHSocket.close`` (see
    :func:`quiet_dead_connections`)."""
    if not isinstance(value, BrokenPipeError):
        return False
    last = None
    while tb is not None:
        last, tb = tb.tb_frame, tb.tb_next
    code = last.f_code if last is not None else None
    return (
        code is not None
        and code.co_name == "close"
        and (code.co_filename.replace("\\", "/").endswith("docker/transport/sshconn.py"))
    )


def quiet_dead_connections() -> None:
    """Keep the Docker SDK from printing a traceback for a dead ssh connection it closes.

    With the system ssh client (``use_ssh_client=True``) the SDK makes a connection pool
    per request and closes its connections when the pool is collected or at the
    interpreter's exit; closing writes to the connection's ``ssh`` process, which has
    ended when the host was lost or its sshd stopped, so ``SSHSocket.close`` raises
    ``BrokenPipeError`` where nobody can catch it (a finalizer: ``sys.excepthook`` at
    exit, ``sys.unraisablehook`` when collected; docker-py issue 3218 is the same
    close). Nothing is lost (the connection was dead), but the user would see a
    traceback after a run whose host was lost. Both hooks drop exactly that error from
    exactly that function and pass everything else on; installed once.
    """
    with _QUIET:
        if _quiet_installed:
            return
        _quiet_installed.append(True)
        previous = sys.excepthook
        previous_unraisable = sys.unraisablehook

        def excepthook(
            kind: type[BaseException], value: BaseException, tb: TracebackType | None
        ) -> None:
            if not _closing_a_dead_ssh(value, tb):
                previous(kind, value, tb)

        def unraisablehook(unraisable: sys.UnraisableHookArgs) -> None:
            if not _closing_a_dead_ssh(unraisable.exc_value, unraisable.exc_traceback):
                previous_unraisable(unraisable)

        sys.excepthook = excepthook
        sys.unraisablehook = unraisablehook
