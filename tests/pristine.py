"""A pristine Debian machine in a container, for the README's two commands run from zero.

A fresh machine is a fresh root file system, not a second dockerd on a host that has
done earlier work: a package installed months ago hides a missing install step. So the
machine here is a Debian root bootstrapped by mmdebstrap (``--variant=important``, the
base system of a Debian install, plus ``ca-certificates``, which every Debian machine
image has), imported as an image, and run as a container with its own Docker engine
(its own data root, a folder of the host's, since overlay2 cannot stack on overlay2),
QEMU and binfmt_misc. Into it go a copy of this tree (the files git tracks or would
track: a clean clone in CI), ``shared/`` read-only beside it, and exactly what every
machine of this workplace has that a pristine root lacks and archbench must not depend
on: the CA certificates under ``/usr/local/share/ca-certificates/`` and pip's settings
(``/etc/pip.conf``, ``/etc/xdg/pip/``, ``PIP_*``, ``SSL_CERT_FILE``,
``REQUESTS_CA_BUNDLE``). Nothing else comes from the host but its apt cache: the
machine's apt, and the apt-cacher-ng that ``setup-host.sh`` installs inside it, fetch
through the host's apt-cacher-ng on port 3142 (reached through the engine's bridge
gateway, as archbench's own builds reach it), so that downloads do not dominate.

binfmt_misc is not namespaced for a container in the host's user namespace: the
machine sees the host's handlers. :meth:`PristineMachine.doctor_fix_registers` proves
``invoke doctor --fix`` registers them from nothing, in a user namespace with a
binfmt_misc instance of its own (Linux 6.7 and later), which starts empty; nothing on
the host is unregistered.

Capabilities: ``--privileged`` fails on this workplace's machines ("unable to apply
caps": ``CAP_SYS_RESOURCE`` is not in the bounding set), so the container gets every
capability but that one, and no seccomp, AppArmor or masked /proc paths
(:data:`RUN_OPTIONS`); the host's cgroup tree is mounted read-write (cgroup v1 here).

Used by ``tests/integration/test_pristine_docker.py`` and ``benchmarks/first_run.py``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import docker
from docker.models.containers import Container
from helpers import REPO, SHARED

from archbench.images import resolve_apt_proxy

IMAGE_REPOSITORY = "archbench-pristine"
T = TypeVar("T")
LABEL = "org.archbench.pristine"
#: Where the tree and shared/ lie inside the machine: ``shared/`` beside the clone,
#: as on this workplace's machines and in CI.
HOME = "/root/work"
CLONE = f"{HOME}/main"
#: The target of the README's first command (``--arch riscv64`` in matrix.yml).
TARGET = "riscv64-trixie"

#: ``docker run``'s options for the machine. The docker CLI, not the SDK, starts it: the
#: SDK has no ``systempaths=unconfined`` (the engine's MaskedPaths and ReadonlyPaths).
RUN_OPTIONS = (
    "--cap-add=ALL",
    "--cap-drop=SYS_RESOURCE",
    "--security-opt=seccomp=unconfined",
    "--security-opt=apparmor=unconfined",
    "--security-opt=systempaths=unconfined",
    "--cgroupns=host",
    "--volume=/sys/fs/cgroup:/sys/fs/cgroup:rw",
)

#: The variables of the host's environment that the machine gets (pip's settings).
ENV_NAMES = re.compile(r"^(PIP_[A-Z_]+|SSL_CERT_FILE|REQUESTS_CA_BUNDLE)$")

#: ``set -x``'s trace of a README command: where each part of the ``&&`` chain starts.
TRACE = re.compile(r"^\+\+\+ (?P<command>.+)$")


@dataclass(frozen=True)
class Line:
    """One line the machine printed, ``at`` seconds after the command started."""

    at: float
    text: str


@dataclass
class Transcript:
    """A command's output in the machine, line by line with times, and its exit code."""

    command: str
    lines: list[Line] = field(default_factory=list)
    exit_code: int | None = None
    seconds: float = 0.0

    def text(self) -> str:
        """The output as printed (no times)."""
        return "\n".join(line.text for line in self.lines)

    def longest_silence(self) -> tuple[float, str]:
        """The longest gap in seconds between two printed lines (or the start and the
        first line, or the last line and the end), and the line after it."""
        gaps: list[tuple[float, str]] = []
        previous = 0.0
        for line in self.lines:
            gaps.append((line.at - previous, line.text))
            previous = line.at
        gaps.append((self.seconds - previous, "(the end)"))
        return max(gaps)

    def parts(self) -> list[tuple[str, float]]:
        """``[(command, seconds)]`` of each part of the ``&&`` chain, from ``set -x``'s
        trace lines (``+++ command``): setup, bench, report."""
        starts = [(m["command"], line.at) for line in self.lines if (m := TRACE.match(line.text))]
        ends = [at for _, at in starts[1:]] + [self.seconds]
        return [(command, end - at) for (command, at), end in zip(starts, ends, strict=True)]

    def stage_starts(self, target: str) -> list[tuple[str, float]]:
        """``[(stage, at)]``: when ``target`` entered each stage, from the plain progress
        lines ``[  12.3s] <target>: <stage>`` (a stage's first line only)."""
        pattern = re.compile(rf"^\[ *[0-9.]+s\] {re.escape(target)}: (?P<stage>[a-z]+)$")
        seen: list[tuple[str, float]] = []
        for line in self.lines:
            m = pattern.match(line.text)
            if m and m["stage"] not in {s for s, _ in seen}:
                seen.append((m["stage"], line.at))
        return seen


def bootstrap_root(suite: str, out: Path, proxy: str | None) -> None:
    """Bootstrap Debian ``suite`` (``--variant=important`` + ``ca-certificates``) into the
    tar ``out`` with mmdebstrap, through the apt proxy ``proxy`` when one is given.
    mmdebstrap picks Debian's default mirror: no mirror is named here.

    Raises:
        subprocess.CalledProcessError: mmdebstrap failed (its output is in the error).
    """
    command = ["mmdebstrap", "--variant=important", "--include=ca-certificates", "--quiet"]
    if proxy:
        # mmdebstrap keeps --aptopt in the root's apt.conf.d: the machine must not.
        command += [
            f'--aptopt=Acquire::http::Proxy "{proxy}"',
            '--customize-hook=rm -f "$1/etc/apt/apt.conf.d/99mmdebstrap"',
        ]
    subprocess.run([*command, suite, str(out)], check=True, capture_output=True, text=True)


def root_image(client: docker.DockerClient, suite: str) -> str:
    """A freshly bootstrapped Debian ``suite`` root imported as an image; its tag.

    Bootstrapped anew on every call (a minute or so through the apt cache): the root is
    the fresh machine, and nothing of an earlier test's may be in it.
    """
    tag = f"{IMAGE_REPOSITORY}:{suite}-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="archbench-pristine-root-") as tmp:
        tar = Path(tmp) / "root.tar"
        # The host's apt cache as archbench's own builds reach it (its bridge gateway).
        bootstrap_root(suite, tar, resolve_apt_proxy(client, "auto"))
        repository, _, name = tag.partition(":")
        client.api.import_image(src=str(tar), repository=repository, tag=name)
    return tag


def tree_tar(repo: Path = REPO) -> bytes:
    """The files of ``repo`` that git tracks or would track (untracked ones not ignored),
    as they are on disk, in a tar under ``main/``: a clean clone of the tree as it would
    be committed. A file deleted but not yet committed is left out."""
    names = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for raw in sorted(n for n in names if n):
            name = raw.decode()
            path = repo / name
            if path.is_symlink() or path.is_file():
                tar.add(path, arcname=f"main/{name}", recursive=False)
    return buffer.getvalue()


def _files_tar(paths: list[Path]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in paths:
            tar.add(path, arcname=str(path).lstrip("/"))
    return buffer.getvalue()


class PristineMachine:
    """A running pristine machine (see the module's docstring); use :func:`machine`."""

    def __init__(self, container: Container, data_root: Path, env: dict[str, str]) -> None:
        self.container = container
        self.data_root = data_root
        self.env = env

    def sh(self, script: str, check: bool = True) -> str:
        """Run ``script`` with bash as root in the machine; its output (stdout + stderr).

        Raises:
            AssertionError: ``check`` and the script exited non-zero.
        """
        code, out = self.container.exec_run(["bash", "-c", script], environment=self.env)
        assert isinstance(out, bytes)
        text = out.decode(errors="replace")
        assert not check or code == 0, f"{script!r} exited {code}:\n{text[-3000:]}"
        return text

    def run(self, command: str, log: Path, timeout: float = 3600) -> Transcript:
        """Run the README ``command`` word for word in the clone, as a new user's shell
        would, each line timed as it arrives and written to ``log`` (``[  12.3s] text``);
        ``set -x`` traces where each part of an ``&&`` chain starts (``+++ part``).

        ``CI`` is not set inside: the machine is a user's, not a CI runner.
        """
        script = f"cd {CLONE} && PS4='+++ ' && set -x && {command}"
        assert self.container.client is not None
        api = self.container.client.api
        exec_id = api.exec_create(
            self.container.id, ["bash", "-c", script], environment=self.env, tty=False
        )["Id"]
        transcript = Transcript(command)
        start = time.monotonic()
        done = threading.Event()

        def watchdog() -> None:
            if not done.wait(timeout):
                with contextlib.suppress(docker.errors.DockerException):
                    self.container.kill()

        threading.Thread(target=watchdog, daemon=True).start()
        pending = b""
        with log.open("w", encoding="utf-8") as out:
            for chunk in api.exec_start(exec_id, stream=True, demux=False):
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for raw in complete:
                    text = raw.decode(errors="replace").rstrip("\r")
                    line = Line(time.monotonic() - start, text)
                    transcript.lines.append(line)
                    out.write(f"[{line.at:7.1f}s] {text}\n")
                    out.flush()
            if pending:
                transcript.lines.append(Line(time.monotonic() - start, pending.decode()))
        done.set()
        transcript.seconds = time.monotonic() - start
        transcript.exit_code = api.exec_inspect(exec_id)["ExitCode"]
        return transcript

    def doctor_fix_registers(self, riscv64_root: str) -> str:
        """Prove that ``invoke doctor --fix`` registers QEMU's handlers on a machine that
        has none: in a user namespace with a binfmt_misc instance of its own (empty when
        mounted; Linux 6.7 and later), run doctor --fix for riscv64, then the riscv64
        ``true --version`` of the root file system ``riscv64_root`` (a folder in the
        machine; ``QEMU_LD_PREFIX`` gives QEMU its dynamic loader) through the handler it
        registered. The host's handlers are neither seen nor touched. Returns that output.
        """
        script = (
            "unshare --user --map-root-user --mount bash -ec '"
            "mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; "
            'echo "handlers before: $(ls /proc/sys/fs/binfmt_misc | grep -c qemu || true)"; '
            f"cd {CLONE} && .venv/bin/invoke doctor --fix --arch riscv64; "
            'grep -E "^(enabled|flags)" /proc/sys/fs/binfmt_misc/qemu-riscv64; '
            f"QEMU_LD_PREFIX={riscv64_root} {riscv64_root}/usr/bin/true --version | head -1'"
        )
        return self.sh(script)


@contextlib.contextmanager
def machine(client: docker.DockerClient, image: str) -> Iterator[PristineMachine]:
    """A pristine machine from the root ``image`` (:func:`root_image`), with this tree at
    ``/root/work/main`` and ``shared/`` read-only at ``/root/work/shared``; removed with
    its engine's data root on exit, whatever happened."""
    proxy = resolve_apt_proxy(client, "auto")
    data_root = Path(tempfile.mkdtemp(prefix="archbench-pristine-docker-", dir="/var/tmp"))
    env = {k: v for k, v in os.environ.items() if ENV_NAMES.match(k)}
    env["DEBIAN_FRONTEND"] = "noninteractive"
    mounts = [f"--volume={data_root}:/var/lib/docker:rw"]
    if SHARED.is_dir():
        mounts.append(f"--volume={SHARED}:{HOME}/shared:ro")
    started = subprocess.run(
        ["docker", "run", "--detach", f"--label={LABEL}=1", "--hostname=pristine",
         *RUN_OPTIONS, *mounts, image, "sleep", "infinity"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    container = client.containers.get(started.stdout.strip())
    try:
        node = PristineMachine(container, data_root, env)
        node.sh(f"mkdir -p {HOME}")
        container.put_archive(HOME, tree_tar())
        host_files = [
            p
            for p in (
                *Path("/usr/local/share/ca-certificates").glob("*"),
                Path("/etc/pip.conf"),
                *Path("/etc/xdg/pip").glob("*"),
            )
            if p.is_file()
        ]
        container.put_archive("/", _files_tar(host_files))
        node.sh("update-ca-certificates >/dev/null")
        if proxy:
            # The machine's apt, and the apt-cacher-ng setup-host.sh installs, through
            # the host's cache: a site's apt proxy, as a machine on a network may have.
            node.sh(
                f"echo 'Acquire::http::Proxy \"{proxy}\";' > /etc/apt/apt.conf.d/01proxy; "
                f"mkdir -p /etc/apt-cacher-ng; echo 'Proxy: {proxy}' "
                "> /etc/apt-cacher-ng/zz-site-proxy.conf"
            )
        yield node
    finally:
        with contextlib.suppress(docker.errors.DockerException):
            container.remove(force=True)
        # The inner engine's files belong to root and may hold overlay mounts' leftovers.
        shutil.rmtree(data_root, ignore_errors=True)


def remove_image(client: docker.DockerClient, tag: str) -> None:
    """Remove the root image ``tag`` (and nothing else)."""
    with contextlib.suppress(docker.errors.DockerException):
        client.images.remove(tag, force=True)


def readme_commands(readme: Path = REPO / "README.md") -> tuple[str, str]:
    """The README's two set-up commands, word for word: (main job, tests).

    Raises:
        AssertionError: the README does not open with exactly two ``sh`` blocks of one
            command each before its first heading after the title.
    """
    text = readme.read_text(encoding="utf-8")
    head = text.split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.+?)\n```", head, re.DOTALL)
    assert len(blocks) == 2, f"README.md opens with {len(blocks)} sh blocks, not 2"
    first, second = (b.strip() for b in blocks)
    assert "\n" not in first and "\n" not in second, "each set-up block is one command"
    return first, second


def stage_table(parts: list[tuple[str, float]], stages: list[tuple[str, float]]) -> str:
    """The first command's stage times as text: setup, then the target's stages from its
    progress lines (base, image, run, count, ...), then report, and the total (s)."""
    (_, t_setup), (_, t_bench), (_, t_report) = parts
    start = t_setup
    rows = [("setup", t_setup)]
    ends = [at for _, at in stages[1:]] + [start + t_bench]
    rows += [(stage, end - at) for (stage, at), end in zip(stages, ends, strict=True)]
    rows += [("report", t_report), ("total", t_setup + t_bench + t_report)]
    return "\n".join(f"{name:<10} {seconds:7.1f} s" for name, seconds in rows)


#: The machine's transcripts, kept after the tests (pytest removes old tmp_path folders).
LOGS = REPO / ".archbench" / "pristine"

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


@dataclass
class FirstCommand:
    """What the README's first command left in its machine: its transcript, the
    appendix it wrote, the size of ``results.html`` (bytes) and the output of
    :meth:`PristineMachine.doctor_fix_registers` (empty when the command failed)."""

    transcript: Transcript
    appendix: str = ""
    page_bytes: int = 0
    doctor_proof: str = ""


@dataclass
class TestCommand:
    """The test command's setup in a second machine: its transcript, the virtualenv's
    ``python --version`` and the transcript of :data:`TESTS_IN_MACHINE` run there (None
    when the setup failed)."""

    setup: Transcript
    python: str = ""
    tests: Transcript | None = None


class Scenario:
    """The README's two commands on pristine Debian 12 machines, in a thread of its own.

    Started when the test session starts (``tests/conftest.py``) and awaited by the tests
    of ``test_pristine_docker.py``, which run last: the machines' quarter of an hour of
    apt, QEMU and a second engine overlaps the other integration tests instead of adding
    to CI's time (issue 27: CI under 60 minutes from an empty engine). One root, bootstrapped
    once; the first command in one machine, the test command's setup in a fresh one.
    A failure of either part is kept and raised by the test that waits for it.
    """

    def __init__(self, client: docker.DockerClient) -> None:
        self.client = client
        self._first: FirstCommand | BaseException | None = None
        self._second: TestCommand | BaseException | None = None
        self._first_done = threading.Event()
        self._second_done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pristine", daemon=True)

    def start(self) -> Scenario:
        """Start the machines' thread; returns self."""
        self._thread.start()
        return self

    def first_command(self, timeout: float = 7200) -> FirstCommand:
        """Wait for the first command's machine (at most ``timeout`` s) and return it.

        Raises:
            AssertionError: the wait timed out.
            BaseException: whatever ended the first command's part of the thread.
        """
        return self._result(self._first_done, lambda: self._first, timeout)

    def test_command(self, timeout: float = 7200) -> TestCommand:
        """Wait for the test command's machine, as :meth:`first_command`."""
        return self._result(self._second_done, lambda: self._second, timeout)

    @staticmethod
    def _result(
        done: threading.Event, value: Callable[[], T | BaseException | None], timeout: float
    ) -> T:
        assert done.wait(timeout), f"the pristine machine did not finish in {timeout:.0f} s"
        got = value()
        if isinstance(got, BaseException):
            raise got
        assert got is not None
        return got

    def abandon(self) -> None:
        """Remove the machines and the root if the thread is still at work (the session
        ended before its tests ran); nothing else of the engine's is touched."""
        if not self._thread.is_alive():
            return
        for container in self.client.containers.list(all=True, filters={"label": LABEL}):
            with contextlib.suppress(docker.errors.DockerException):
                container.remove(force=True)
        for image in self.client.images.list(name=IMAGE_REPOSITORY):
            with contextlib.suppress(docker.errors.DockerException):
                self.client.images.remove(image.id or "", force=True)

    def _run(self) -> None:
        try:
            tag = root_image(self.client, "bookworm")
        except BaseException as exc:  # both parts report it
            self._first = self._second = exc
            self._first_done.set()
            self._second_done.set()
            return
        try:
            try:
                self._first = self._run_first(tag)
            except BaseException as exc:
                self._first = exc
            self._first_done.set()
            try:
                self._second = self._run_second(tag)
            except BaseException as exc:
                self._second = exc
            self._second_done.set()
        finally:
            remove_image(self.client, tag)

    def _run_first(self, root: str) -> FirstCommand:
        first, _ = readme_commands()
        with machine(self.client, root) as node:
            LOGS.mkdir(parents=True, exist_ok=True)
            done = FirstCommand(node.run(first, LOGS / "first-command.log"))
            if done.transcript.exit_code != 0:
                return done
            done.appendix = node.sh(f"cat {CLONE}/reports/out/appendix.md")
            done.page_bytes = int(node.sh(f"wc -c < {CLONE}/reports/out/results.html"))
            # doctor --fix registers QEMU's handlers where none are (the machine sees the
            # host's; a binfmt_misc instance of its own, in a user namespace, starts
            # empty), proven with the machine's own riscv64 base as a folder (its
            # programs are dynamic).
            node.sh(
                "mkdir -p /tmp/rv && c=$(docker create --platform linux/riscv64 "
                "$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -m1 riscv64) true) "
                "&& docker export $c | tar -x -C /tmp/rv && docker rm $c >/dev/null"
            )
            done.doctor_proof = node.doctor_fix_registers("/tmp/rv")
            return done

    def _run_second(self, root: str) -> TestCommand:
        _, second = readme_commands()
        setup = second.partition(" && ")[0]
        with machine(self.client, root) as node:
            LOGS.mkdir(parents=True, exist_ok=True)
            done = TestCommand(node.run(setup, LOGS / "setup-tests.log"))
            if done.setup.exit_code != 0:
                return done
            done.python = node.sh(f"{CLONE}/.venv/bin/python --version").strip()
            tests = " ".join(TESTS_IN_MACHINE)
            done.tests = node.run(
                f"CI=true .venv/bin/pytest --run-docker -p no:cacheprovider -q {tests}",
                LOGS / "tests-in-machine.log",
            )
            return done


#: The session's scenario, once :func:`start_scenario` started it.
_SCENARIO: Scenario | None = None


def start_scenario(client: docker.DockerClient) -> Scenario:
    """Start the session's :class:`Scenario` (once; later calls return it)."""
    global _SCENARIO
    if _SCENARIO is None:
        _SCENARIO = Scenario(client).start()
    return _SCENARIO


def running_scenario() -> Scenario | None:
    """The session's :class:`Scenario`, None when none was started."""
    return _SCENARIO
