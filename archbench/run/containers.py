"""Running things inside containers: the emulation smoke test and the harness.

Containers are context managers that are always removed, also on Ctrl-C
or a failure, and carry the label ``org.archbench=1`` (plus the run id) so
leftovers can be found on any engine. Output comes back through the API
(container logs), never through a host bind mount, so remote engines work.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container

from archbench.errors import EmulationError, EngineError, HarnessError, Interrupted
from archbench.matrix import check_cpus, nano_cpus
from archbench.platforms import Arch
from archbench.result import HarnessDocument, parse_harness_output
from archbench.suites import BlindsigSuite, Suites

LABEL = "org.archbench"
LABEL_RUN = "org.archbench.run.containers"

PIDS_LIMIT = 1024
"""Processes and threads per container: ``openssl speed -multi`` forks up to
256 (the matrix's ceiling), QEMU user mode adds a thread or two per guest
thread; a fork bomb stops here."""
TMP_MIB = 64
"""Size of the ``/tmp`` tmpfs in MiB when no suite writes files."""


def tmp_mib(suites: Suites) -> int:
    """Size in MiB of the harness container's ``/tmp`` tmpfs for ``suites``.

    The root file system is read-only; only the gnupg suite writes files,
    all under ``/tmp`` (its throwaway ``GNUPGHOME``: the plaintext, the
    ciphertext and the decrypted copy, each ``file_bytes``, plus keyrings).
    Taler's helper tests keep their keys and sockets under ``$TMPDIR``.
    """
    gnupg = suites.enabled().get("gnupg")
    file_bytes = int(getattr(gnupg, "file_bytes", 0))
    return TMP_MIB + -(-3 * file_bytes // (1 << 20))


def confinement(tmp_size_mib: int = TMP_MIB) -> dict[str, Any]:
    """``containers.create`` arguments that give a container only what it needs.

    No network; no capabilities (the harness is root in the container but
    needs no privilege: no raw sockets, no chown, no mounts, no mlock beyond
    its rlimit); no setuid gains (``no-new-privileges``); at most
    :data:`PIDS_LIMIT` processes; a read-only root file system with a
    ``tmp_size_mib`` MiB tmpfs on ``/tmp``, the one place the harness writes
    (``noexec``: nothing is run from there).
    """
    return {
        "network_mode": "none",
        "network_disabled": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        "pids_limit": PIDS_LIMIT,
        "read_only": True,
        # /tmp inside the container, not on this host (S108 is about the host).
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,noexec,size={tmp_size_mib}m,mode=1777"},  # noqa: S108
    }


class ContainerGate:
    """Admits the creation of one run's containers until the run is stopped.

    Ctrl-C must leave no container behind, on any engine. Sweeping by label
    alone cannot promise that: a ``containers.create`` request in flight
    while the sweep lists the run's containers lands after it, and a worker
    thread may go on to its next stage and create another one. So every
    create passes through :meth:`admit`; :meth:`close` refuses new ones and
    waits for those in flight, after which one sweep by label finds every
    container this run will ever have.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._closed = False
        self._in_flight = 0

    @contextlib.contextmanager
    def admit(self) -> Iterator[None]:
        """Hold the gate open around one ``containers.create``.

        Raises:
            Interrupted: the run is stopping; no container may be created.
        """
        with self._cond:
            if self._closed:
                raise Interrupted("interrupted: the run is stopping, no new container is started")
            self._in_flight += 1
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def close(self, timeout: float = 60.0) -> bool:
        """Refuse new containers; wait up to ``timeout`` s for creates in flight.

        Returns False if a create was still in flight at the timeout (an
        engine that stopped answering); sweep again later then.
        """
        with self._cond:
            self._closed = True
            return self._cond.wait_for(lambda: self._in_flight == 0, timeout)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        with self._cond:
            return self._closed


@dataclass(frozen=True)
class Completed:
    """A finished container command: exit status and decoded output streams."""

    exit_code: int
    stdout: str
    stderr: str


class BenchContainer(contextlib.AbstractContextManager["BenchContainer"]):
    """One container of ``image`` for ``arch``, removed on exit whatever happens.

    ``command`` is run as the container's main process; :meth:`wait`
    collects it. ``cpuset`` pins the container to CPUs (``"0"``, ``"0-1"``);
    ``cpus`` gives it a CPU quota (Docker's ``--cpus``, sent as ``nano_cpus``).
    With ``gate``, the container is created only while the gate admits it
    (:class:`ContainerGate`). It is confined (:func:`confinement`), with a
    ``tmp_size_mib`` MiB ``/tmp``.
    """

    def __init__(
        self,
        client: docker.DockerClient,
        image: str,
        arch: Arch,
        command: Sequence[str],
        *,
        entrypoint: Sequence[str] | None = None,
        run_id: str = "",
        cpuset: str | None = None,
        gate: ContainerGate | None = None,
        tmp_size_mib: int = TMP_MIB,
        cpus: float | None = None,
    ) -> None:
        self.client = client
        self.image = image
        self.arch = arch
        self.command = list(command)
        self.entrypoint = list(entrypoint) if entrypoint is not None else None
        self.labels = {LABEL: "1", LABEL_RUN: run_id}
        self.cpuset = cpuset
        self.cpus = cpus
        self.gate = gate
        self.tmp_size_mib = tmp_size_mib
        self.container: Container | None = None

    def __enter__(self) -> BenchContainer:
        kwargs: dict[str, Any] = {
            "command": self.command,
            "labels": self.labels,
            "platform": self.arch.platform,
            "detach": True,
            **confinement(self.tmp_size_mib),
        }
        if self.entrypoint is not None:
            kwargs["entrypoint"] = self.entrypoint
        if self.cpuset:
            kwargs["cpuset_cpus"] = self.cpuset
        if self.cpus is not None:
            kwargs["nano_cpus"] = nano_cpus(check_cpus("cpus", self.cpus))
        try:
            with self.gate.admit() if self.gate is not None else contextlib.nullcontext():
                self.container = self.client.containers.create(self.image, **kwargs)
            self.container.start()
        except docker.errors.APIError as exc:
            with contextlib.suppress(docker.errors.DockerException):
                self._remove()
            raise EngineError(f"cannot start a container of {self.image}: {exc}") from exc
        return self

    def wait(
        self, timeout: float | None = None, on_stderr: Callable[[str], None] | None = None
    ) -> Completed:
        """Wait for the command to end (``timeout`` in seconds, None = forever).

        With ``on_stderr``, each line the command writes to stderr is passed
        on as it comes (through the logs API, so remote engines work too);
        ``timeout`` then applies after the stream ends.

        Raises:
            HarnessError: the command did not end within ``timeout``.
        """
        assert self.container is not None, "use BenchContainer as a context manager"
        if on_stderr is not None:
            pending = ""
            for chunk in self.container.logs(stdout=False, stderr=True, stream=True, follow=True):
                pending += chunk.decode("utf-8", "replace")
                *lines, pending = pending.split("\n")
                for line in lines:
                    on_stderr(line)
        try:
            status = self.container.wait(timeout=timeout)
        except requests.exceptions.RequestException as exc:
            # requests' timeout types vary by version; anything else is a lost
            # connection, which the caller must see as such.
            if timeout is None or not (
                isinstance(exc, requests.exceptions.Timeout) or "timed out" in str(exc)
            ):
                raise
            raise HarnessError(
                f"container of {self.image} did not finish within {timeout} s: {exc}"
            ) from exc
        out = self.container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        err = self.container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
        return Completed(int(status.get("StatusCode", -1)), out, err)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self._remove()
            return
        # Already failing (a lost connection, Ctrl-C): the first error is the
        # one to report; a container left on an engine that stopped answering
        # is removed by 'invoke clean' or by '--resume' of this run.
        with contextlib.suppress(
            docker.errors.DockerException, requests.exceptions.RequestException
        ):
            self._remove()

    def _remove(self) -> None:
        if self.container is not None:
            container, self.container = self.container, None
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)


def smoke_test(
    client: docker.DockerClient,
    image: str,
    arch: Arch,
    run_id: str = "",
    gate: ContainerGate | None = None,
) -> str:
    """Run ``uname -m`` in ``image`` for ``arch`` and check the machine it prints.

    Returns what ``uname -m`` printed.

    Raises:
        EmulationError: the command fails or prints another machine (for
            example the host's, when the platform metadata of the image is
            wrong, or nothing, when binfmt_misc cannot run the binary).
    """
    with BenchContainer(
        client, image, arch, ["-m"], entrypoint=["uname"], run_id=run_id, gate=gate
    ) as box:
        done = box.wait(timeout=300)
    machine = done.stdout.strip()
    if done.exit_code != 0 or machine not in arch.value.uname_machines:
        raise EmulationError(
            f"smoke test in {image}: 'uname -m' gave {machine or 'nothing'!r} "
            f"(exit {done.exit_code}, stderr {done.stderr.strip()[-200:]!r}); expected "
            f"{' or '.join(sorted(arch.value.uname_machines))}. Check 'invoke doctor' and that "
            f"the image was built for {arch.platform}"
        )
    return machine


def emulated_cpu(
    client: docker.DockerClient,
    image: str,
    arch: Arch,
    run_id: str = "",
    gate: ContainerGate | None = None,
) -> str:
    """What CPU QEMU presents: the auxiliary vector of a process in ``image``.

    Returns e.g. ``"QEMU_CPU=default AT_PLATFORM=power9 AT_HWCAP=0x...``". QEMU
    user mode fills AT_PLATFORM/AT_HWCAP from the CPU model it emulates, and
    /proc/cpuinfo inside the container is the host's, so this is the one
    place the emulated CPU shows. Returns ``"unknown"`` if the loader
    prints nothing.
    """
    with BenchContainer(
        client,
        image,
        arch,
        ["LD_SHOW_AUXV=1", "/bin/true"],
        entrypoint=["env"],
        run_id=run_id,
        gate=gate,
    ) as box:
        done = box.wait(timeout=300)
    fields = []
    for line in done.stdout.splitlines():
        key, _, value = line.partition(":")
        if key in ("AT_PLATFORM", "AT_HWCAP", "AT_HWCAP2") and value.strip():
            v = value.strip()
            fields.append(f"{key}={v if key == 'AT_PLATFORM' else '0x' + v.lstrip('0x')}")
    if not fields:
        return "unknown"
    return " ".join(["QEMU_CPU=default", *fields])


def harness_command(suites: Suites) -> list[str]:
    """Arguments for ``archbench_harness.py`` running the enabled ``suites``.

    ``--suites`` names them (``harness/CONTRACT.md``); the blind-signature
    suite keeps its own flags, the others get their settings as one JSON
    object in ``--suite-config`` (suite name -> settings, without ``enabled``).
    """
    enabled = suites.enabled()
    cmd = ["--suites", ",".join(enabled), "--progress"]
    blindsig = enabled.get("blindsig")
    if isinstance(blindsig, BlindsigSuite):
        scheme = "all" if set(blindsig.schemes) == {"cs", "rsa"} else blindsig.schemes[0]
        adaptive = blindsig.ci_target is not None
        cmd += [
            "--iterations",
            str(blindsig.iterations),
            "--repetitions",
            str(blindsig.max_repetitions if adaptive else blindsig.repetitions),
            "--scheme",
            scheme,
        ]
        if blindsig.rsa_bits and "rsa" in blindsig.schemes:
            cmd += ["--rsa-bits", ",".join(str(b) for b in blindsig.rsa_bits)]
        cmd += ["--warmup", str(blindsig.warmup)]
        if blindsig.max_time is not None:
            cmd += ["--max-time", f"{blindsig.max_time:g}"]
        if blindsig.min_block_ns is not None:
            cmd += ["--min-block-ns", str(blindsig.min_block_ns)]
        if blindsig.ci_target is not None:
            cmd += ["--ci-target", repr(blindsig.ci_target)]
            cmd += ["--min-repetitions", str(blindsig.min_repetitions)]
        if blindsig.order != "interleaved":
            cmd += ["--order", blindsig.order]
        if blindsig.seed is not None:
            cmd += ["--seed", str(blindsig.seed)]
        if blindsig.fresh_items:
            cmd.append("--fresh-items")
    others = {
        name: settings.model_dump(mode="json", exclude={"enabled"}, exclude_none=True)
        for name, settings in enabled.items()
        if name != "blindsig"
    }
    if others:
        cmd += ["--suite-config", json.dumps(others, sort_keys=True, separators=(",", ":"))]
    return cmd


def run_harness(
    client: docker.DockerClient,
    image: str,
    arch: Arch,
    suites: Suites,
    *,
    run_id: str = "",
    cpuset: str | None = None,
    timeout: float | None = None,
    on_line: Callable[[str], None] | None = None,
    gate: ContainerGate | None = None,
    extra_args: Sequence[str] = (),
    cpus: float | None = None,
) -> tuple[HarnessDocument, str]:
    """Run the harness for the enabled ``suites`` in a fresh container of ``image``.

    Returns the validated harness document and the harness's stderr;
    ``on_line`` gets the harness's progress lines (one per repetition) live;
    ``extra_args`` are appended to the harness command (``--count-with DIR``).

    Raises:
        HarnessError: non-zero exit, timeout, or output that breaks the
            contract (``harness/CONTRACT.md``); the message has stderr's tail.
    """
    with BenchContainer(
        client,
        image,
        arch,
        [*harness_command(suites), *extra_args],
        run_id=run_id,
        cpuset=cpuset,
        gate=gate,
        tmp_size_mib=tmp_mib(suites),
        cpus=cpus,
    ) as box:
        done = box.wait(timeout=timeout, on_stderr=on_line)
    if done.exit_code != 0:
        raise HarnessError(
            f"harness in {image} exited with {done.exit_code}; stderr ended:\n"
            + "\n".join(f"    {line}" for line in done.stderr.strip().splitlines()[-15:])
        )
    return parse_harness_output(done.stdout, f"harness output of {image}"), done.stderr


def leftover_containers(client: docker.DockerClient) -> Iterator[Container]:
    """Containers archbench started that still exist on this engine."""
    yield from client.containers.list(all=True, filters={"label": LABEL})


def remove_run_containers(
    client: docker.DockerClient, run_id: str, rounds: int = 5, settle_s: float = 30.0
) -> int:
    """Force-remove every container of ``run_id`` on this engine; returns how many.

    Used on Ctrl-C (after :meth:`ContainerGate.close`) and before
    ``--resume``: removing a container ends the harness in it, and the
    thread waiting for it returns. The listing is sparse (one request, no
    per-container inspect that fails when a container vanishes meanwhile);
    a container already gone or being removed by its own worker is not an
    error. The engine is asked again until it lists none: ``rounds`` removal
    passes, then up to ``settle_s`` s for removals still in progress (a running
    container's forced removal takes seconds on a loaded machine, and the engine
    lists it until it is gone). Errors of an unreachable engine are swallowed,
    since there is nothing left to clean on it from here.
    """
    removed = 0
    label = {"label": f"{LABEL_RUN}={run_id}"}
    try:
        for _ in range(rounds):
            found = client.api.containers(all=True, filters=label)
            if not found:
                return removed
            for c in found:
                try:
                    client.api.remove_container(c["Id"], force=True)
                    removed += 1
                except docker.errors.NotFound:
                    pass
                except docker.errors.APIError as exc:
                    if exc.status_code != 409:  # 409: removal already in progress
                        raise
        deadline = time.monotonic() + settle_s
        while client.api.containers(all=True, filters=label) and time.monotonic() < deadline:
            time.sleep(0.2)
    except (docker.errors.DockerException, requests.exceptions.RequestException):
        pass
    return removed
