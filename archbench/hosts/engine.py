"""The one place a Docker client is created, and facts about its engine.

Every other stage takes the client as a parameter, so the same code drives
the local engine and, later, remote ones.
"""

from __future__ import annotations

import platform
import re
from pathlib import Path

import docker
import docker.errors
import docker.tls
import requests.exceptions
from docker.context import ContextAPI

from archbench.errors import EngineError
from archbench.hosts import ssh
from archbench.matrix import Host
from archbench.platforms import Arch


def connect_host(host: Host | None, name: str = "local", timeout: int = 900) -> docker.DockerClient:
    """Open a client to a matrix host (None: the environment's engine).

    ``ssh://`` goes through the system's ``ssh`` client (keys, agent and
    ``~/.ssh/config`` apply), checked first by :func:`archbench.hosts.ssh.probe`;
    ``tcp://`` takes the host's TLS files; a
    ``context`` is resolved through Docker's context store.

    Raises:
        EngineError: the host does not answer or its context does not exist;
            the message names the host without user names; for ``ssh://``
            it says whether the host key, the login or the engine failed.
    """
    if host is None:
        return connect(timeout=timeout)
    try:
        if host.context is not None:
            ctx = ContextAPI.get_context(host.context)
            if ctx is None:
                raise EngineError(
                    f"host {name}: no docker context {host.context!r}; "
                    "create it with 'docker context create' or give 'url' instead"
                )
            client = docker.DockerClient(
                base_url=ctx.Host, tls=ctx.TLSConfig or False, timeout=timeout
            )
        elif host.url is not None and host.url.startswith("ssh://"):
            # The system ssh client rather than paramiko: ~/.ssh/config (Host
            # aliases, ProxyJump, ControlMaster), the agent and known_hosts work
            # as in a terminal. It hides its errors from the SDK, so the probe
            # logs in first and names a host key or login problem as such.
            ssh.probe(host.url, name)
            ssh.quiet_dead_connections()
            # The constructor already asks the engine for its API version, and
            # every request costs an ssh login: no extra ping.
            return docker.DockerClient(
                base_url=ssh.sdk_url(host.url), use_ssh_client=True, timeout=timeout
            )
        else:
            tls: docker.tls.TLSConfig | bool = False
            if host.tls is not None:
                cert = None
                if host.tls.client_cert and host.tls.client_key:
                    cert = (
                        str(Path(host.tls.client_cert).expanduser()),
                        str(Path(host.tls.client_key).expanduser()),
                    )
                ca = str(Path(host.tls.ca_cert).expanduser()) if host.tls.ca_cert else None
                tls = docker.tls.TLSConfig(client_cert=cert, ca_cert=ca, verify=host.tls.verify)
            client = docker.DockerClient(base_url=host.url, tls=tls, timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise EngineError(
            f"host {name} ({host.display}) does not answer ({_reason(exc)}). Check that "
            "its Docker engine runs and that you can reach it (ssh key, TLS files, port)"
        ) from exc
    return client


def _reason(exc: Exception) -> str:
    """The useful end of a connection error ("[Errno 111] Connection refused"), redacted."""
    text = redact(str(exc))
    errno = re.findall(r"\[Errno -?\d+\] [^'\")\]]+", text)
    return errno[-1].strip() if errno else text[:300]


def answers(client: docker.DockerClient) -> bool:
    """True when the engine behind ``client`` still answers a ping."""
    try:
        return bool(client.ping())
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError):
        return False


def redact(text: str) -> str:
    """Drop ``user@`` from URLs in an error text (results and logs carry no user names)."""
    return re.sub(r"(\w+://)[^/@\s]+@", r"\1", text)


def connect(timeout: int = 900) -> docker.DockerClient:
    """Open a client to the environment's engine (``DOCKER_HOST`` or the local socket).

    ``timeout`` is the per-request HTTP timeout in seconds; image builds
    stream, so it bounds silence, not total build time. Named hosts go
    through :func:`connect_host`.

    Raises:
        EngineError: the engine does not answer; the message says how to
            start one.
    """
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise EngineError(
            f"cannot reach the local Docker engine: {exc}. Start it (as root: 'dockerd &', "
            "or 'systemctl start docker'); on a fresh Debian machine run scripts/setup-host.sh"
        ) from exc
    return client


def engine_arch(client: docker.DockerClient) -> Arch:
    """The CPU architecture the engine runs containers on natively.

    Raises:
        EngineError: the engine reports an architecture archbench does not know.
    """
    machine = str(client.info().get("Architecture", ""))
    try:
        return Arch.from_machine(machine)
    except ValueError as exc:
        raise EngineError(f"Docker engine architecture: {exc}") from exc


def host_cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The local CPU's model name (first ``model name`` in /proc/cpuinfo).

    Falls back to :func:`platform.processor` or ``"unknown"``.
    """
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "cpu", "Processor", "uarch") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def engine_version(client: docker.DockerClient) -> str:
    """The engine's version string (``20.10.24+dfsg1``), or ``"unknown"``."""
    return str(client.version().get("Version", "unknown"))
