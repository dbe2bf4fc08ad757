"""Running things inside containers: the emulation smoke test and the harness.

Containers are context managers that are always removed, also on Ctrl-C
or a failure, and carry the label ``org.archbench=1`` (plus the run id) so
leftovers can be found on any engine. Output comes back through the API
(container logs), never through a host bind mount, so remote engines work.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container

from archbench.errors import EmulationError, EngineError, HarnessError
from archbench.matrix import BlindsigSuite, Suites
from archbench.platforms import Arch
from archbench.results import HarnessDocument, parse_harness_output

LABEL = "org.archbench"
LABEL_RUN = "org.archbench.run"


@dataclass(frozen=True)
class Completed:
    """A finished container command: exit status and decoded output streams."""

    exit_code: int
    stdout: str
    stderr: str


class BenchContainer(contextlib.AbstractContextManager["BenchContainer"]):
    """One container of ``image`` for ``arch``, removed on exit whatever happens.

    ``command`` is run as the container's main process; :meth:`wait`
    collects it. ``cpuset`` pins the container to CPUs (``"0"``, ``"0-1"``).
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
    ) -> None:
        self.client = client
        self.image = image
        self.arch = arch
        self.command = list(command)
        self.entrypoint = list(entrypoint) if entrypoint is not None else None
        self.labels = {LABEL: "1", LABEL_RUN: run_id}
        self.cpuset = cpuset
        self.container: Container | None = None

    def __enter__(self) -> BenchContainer:
        kwargs: dict[str, Any] = {
            "command": self.command,
            "labels": self.labels,
            "platform": self.arch.platform,
            "network_disabled": True,
            "detach": True,
        }
        if self.entrypoint is not None:
            kwargs["entrypoint"] = self.entrypoint
        if self.cpuset:
            kwargs["cpuset_cpus"] = self.cpuset
        try:
            self.container = self.client.containers.create(self.image, **kwargs)
            self.container.start()
        except docker.errors.APIError as exc:
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
        except Exception as exc:  # requests' timeout types vary by version
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
        self._remove()

    def _remove(self) -> None:
        if self.container is not None:
            with contextlib.suppress(docker.errors.NotFound):
                self.container.remove(force=True)
            self.container = None


def smoke_test(client: docker.DockerClient, image: str, arch: Arch, run_id: str = "") -> str:
    """Run ``uname -m`` in ``image`` for ``arch`` and check the machine it prints.

    Returns what ``uname -m`` printed.

    Raises:
        EmulationError: the command fails or prints another machine (for
            example the host's, when the platform metadata of the image is
            wrong, or nothing, when binfmt_misc cannot run the binary).
    """
    with BenchContainer(client, image, arch, ["-m"], entrypoint=["uname"], run_id=run_id) as box:
        done = box.wait(timeout=300)
    machine = done.stdout.strip()
    if done.exit_code != 0 or machine not in arch.uname_machines:
        raise EmulationError(
            f"smoke test in {image}: 'uname -m' gave {machine or 'nothing'!r} "
            f"(exit {done.exit_code}, stderr {done.stderr.strip()[-200:]!r}); expected "
            f"{' or '.join(sorted(arch.uname_machines))}. Check 'invoke doctor' and that "
            f"the image was built for {arch.platform}"
        )
    return machine


def emulated_cpu(client: docker.DockerClient, image: str, arch: Arch) -> str:
    """What CPU QEMU presents: the auxiliary vector of a process in ``image``.

    Returns e.g. ``"QEMU_CPU=default AT_PLATFORM=power9 AT_HWCAP=0x...``". QEMU
    user mode fills AT_PLATFORM/AT_HWCAP from the CPU model it emulates, and
    /proc/cpuinfo inside the container is the host's, so this is the one
    place the emulated CPU shows. Returns ``"unknown"`` if the loader
    prints nothing.
    """
    with BenchContainer(
        client, image, arch, ["LD_SHOW_AUXV=1", "/bin/true"], entrypoint=["env"]
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
        cmd += [
            "--iterations",
            str(blindsig.iterations),
            "--repetitions",
            str(blindsig.repetitions),
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
    extra_args: Sequence[str] = (),
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
        client, image, arch, [*harness_command(suites), *extra_args], run_id=run_id, cpuset=cpuset
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


def remove_run_containers(client: docker.DockerClient, run_id: str) -> int:
    """Force-remove every container of ``run_id`` on this engine; returns how many.

    Used on Ctrl-C: removing a container ends the harness in it, and the
    thread waiting for it returns. Errors of an unreachable engine are
    swallowed, since there is nothing left to clean on it from here.
    """
    removed = 0
    try:
        for c in client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}):
            with contextlib.suppress(docker.errors.NotFound):
                c.remove(force=True)
                removed += 1
    except docker.errors.DockerException:
        pass
    return removed
