"""A target on an ``ssh://`` host, for real: Debian's sshd in front of a second dockerd.

The ``sshd`` fixture (``tests/engines.py``) logs ``root`` in by a key made
for the test; the system ``ssh`` the Docker SDK runs reads the test's own
client configuration (``Host archbench-sshd``), known_hosts and key, and the
login's ``docker system dial-stdio`` reaches the second engine. The
pipeline runs through ``invoke`` exactly as a user runs it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import docker
import pytest
from engines import SshServer
from helpers import REPO, WORK

from archbench import run as pipeline
from archbench.errors import EngineError, ResultsError
from archbench.hosts import engine, ssh
from archbench.matrix import Host, parse
from archbench.platforms import Arch
from archbench.result import Result, ResultStore, load
from archbench.run import LABEL_RUN
from archbench.run.containers import LABEL, remove_run_containers

INVOKE = str(Path(sys.executable).with_name("invoke"))

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the targets are amd64"),
]

MATRIX = """
version: 1
defaults:
  blindsig: {{iterations: 2, repetitions: {repetitions}, rsa_bits: [1024], warmup: 0}}
bases:
  debian-trixie: {{source: bootstrap, suite: trixie, variant: minbase}}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
hosts:
  box: {{url: "{url}", build_network: host}}
targets:
  - {{name: ssh-amd64, arch: amd64, base: debian-trixie, host: box}}
  # Longer on the local engine, so that its harness still runs when the ssh target's
  # starts (every API request over ssh is a login of its own: seconds before its run).
  - {{name: local-amd64, arch: amd64, base: debian-trixie,
      suites: {{blindsig: {{repetitions: {local_repetitions}}}}}}}
"""


def _matrix(
    tmp_path: Path, sshd: SshServer, repetitions: int, local_repetitions: int | None = None
) -> Path:
    path = tmp_path / "matrix.yml"
    text = MATRIX.format(
        url=sshd.url(),
        repetitions=repetitions,
        local_repetitions=local_repetitions or repetitions,
    )
    path.write_text(text, encoding="utf-8")
    return path


def _env(results: Path) -> dict[str, str]:
    # PATH (with the test's ssh wrapper) comes from the sshd fixture.
    return {**os.environ, "INVOKE_ARCHBENCH_RESULTS": str(results)}


def _seconds(output: str, target: str, stage: str) -> float:
    """A stage's wall time from the summary line ``NAME: ok (base 1.0 s, run 2.0 s)``."""
    line = next(line for line in output.splitlines() if line.startswith(f"{target}: ok ("))
    match = re.search(rf"\b{stage} ([0-9.]+) s", line)
    assert match, line
    return float(match.group(1))


def test_ssh_host_connects_through_the_system_ssh(sshd: SshServer) -> None:
    seconds = ssh.probe(sshd.url(), "box")
    t0 = time.monotonic()
    client = engine.connect_host(Host(url=sshd.url()), "box")
    connect = time.monotonic() - t0
    t0 = time.monotonic()
    for _ in range(5):
        assert client.ping()
    ping = (time.monotonic() - t0) / 5
    print(
        f"\nssh probe {seconds * 1000:.0f} ms, connect_host {connect * 1000:.0f} ms, "
        f"one API request {ping * 1000:.0f} ms"
    )
    assert engine.engine_arch(client) is Arch.AMD64
    # It is the second engine, not this machine's: its data-root is the fixture's.
    assert "/tmp/ab2-" in client.info()["DockerRootDir"]


def test_control_master_from_ssh_config_is_used(sshd: SshServer) -> None:
    # ~/.ssh/config's connection sharing applies to the SDK's ssh children.
    try:
        plain = engine.connect_host(Host(url=sshd.url()), "box")
        mux = engine.connect_host(Host(url=sshd.url("-mux")), "box")
        times = {}
        for name, client in (("plain", plain), ("mux", mux)):
            t0 = time.monotonic()
            for _ in range(10):
                assert client.ping()
            times[name] = (time.monotonic() - t0) / 10
        assert list(Path(sshd.root).glob("cm-*")), "no ControlMaster socket"
        print(
            f"\none API request: {times['plain'] * 1000:.0f} ms with a login each, "
            f"{times['mux'] * 1000:.0f} ms through ControlMaster"
        )
    finally:
        sshd.stop_mux()


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("-unknown", r"host key is not in known_hosts.*Connect once with 'ssh archbench-sshd-"),
        ("-changed", r"host key has CHANGED.*ssh-keygen -R"),
        ("-denied", r"refused the login \(.*Permission denied \(publickey\).*ssh-add"),
        ("-no-engine", r"the login works but its Docker engine does not answer"),
    ],
)
def test_ssh_problems_are_named_with_their_fix(
    sshd: SshServer, variant: str, expected: str
) -> None:
    with pytest.raises(EngineError) as info:
        engine.connect_host(Host(url=sshd.url(variant)), "box")
    message = str(info.value)
    assert re.search(expected, message, re.S), message
    assert "ssh key, TLS files" not in message and "root@" not in message


def test_ssh_host_that_is_down_does_not_answer(sshd: SshServer) -> None:
    # Nothing listens on this port: ssh itself fails.
    with pytest.raises(EngineError, match=r"host gone \(ssh://127.0.0.1:1\) does not answer"):
        engine.connect_host(Host(url="ssh://127.0.0.1:1"), "gone")


def test_bench_on_an_ssh_host_beside_a_local_target_and_clean(
    sshd: SshServer, tmp_path: Path
) -> None:
    # The local run must outlast the ssh target's start (each API request over ssh is a
    # login, seconds in all): 400 repetitions take about 20 s on a quiet 2-core VM.
    matrix = _matrix(tmp_path, sshd, repetitions=10, local_repetitions=400)
    results = tmp_path / "results"
    # Base and image first (the second engine starts empty), so that the two
    # harness runs below start together.
    built = subprocess.run(
        [INVOKE, "images", "--matrix", str(matrix)],
        cwd=REPO, env=_env(results), capture_output=True, text=True, check=False, timeout=3600,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    print(
        f"\nover ssh: base sent in {_seconds(built.stdout, 'ssh-amd64', 'base'):.1f} s, "
        f"image built in {_seconds(built.stdout, 'ssh-amd64', 'image'):.1f} s"
    )
    t0 = time.monotonic()
    done = subprocess.run(
        [INVOKE, "bench", "--matrix", str(matrix)],
        cwd=REPO, env=_env(results), capture_output=True, text=True, check=False, timeout=3600,
    )  # fmt: skip
    wall = time.monotonic() - t0
    assert done.returncode == 0, done.stdout + done.stderr
    # 'invoke images' left a run directory with its build logs only.
    (run_dir,) = (d for d in results.iterdir() if (d / "run.json").is_file())
    remote, local = load(run_dir / "ssh-amd64.json"), load(run_dir / "local-amd64.json")
    assert remote.execution is not None and local.execution is not None
    assert remote.execution.docker_host == "box (ssh://archbench-sshd)"
    assert local.execution.docker_host == "local"
    for r, repetitions in ((remote, 10), (local, 400)):
        assert r.execution is not None and not r.execution.emulated
        assert r.harness.setup.machine == "x86_64"
        assert r.harness.rows and all(row.valid for row in r.harness.rows)
        assert all(len(row.samples_ns) == repetitions for row in r.harness.rows)
    # The two hosts ran their harness at the same time.
    windows = []
    for r in (remote, local):
        start = datetime.fromisoformat(r.harness.started_at).timestamp()
        windows.append((start, start + r.harness.duration_s))
    (a0, a1), (b0, b1) = windows
    assert a0 < b1 and b0 < a1, windows
    client = engine.connect_host(Host(url=sshd.url()), "box")
    # Built on the second engine, from the context sent through ssh.
    assert client.images.get(remote.execution.image_tag).id == remote.execution.image_id
    ssh_run, local_run = (_seconds(done.stdout, n, "run") for n in ("ssh-amd64", "local-amd64"))
    print(
        f"\ninvoke bench, ssh + local target: {wall:.1f} s wall; harness run over ssh "
        f"{ssh_run:.1f} s, local {local_run:.1f} s"
    )

    # A container left behind on the ssh host: 'invoke clean' reaches it there.
    left = client.containers.create(
        remote.execution.image_tag, ["--help"], labels={LABEL: "1", LABEL_RUN: "left-behind"}
    )

    def clean(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [INVOKE, "clean", "--matrix", str(matrix), "--host", "box", *more],
            cwd=REPO, env=_env(results), capture_output=True, text=True, check=False,
        )  # fmt: skip

    cleaned = clean()
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert "box: removed 1 container(s)" in cleaned.stdout
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(str(left.id))
    # A running one may be another invoke's measurement: kept and named, unless --running.
    busy = client.containers.run(
        remote.execution.image_tag,
        ["300"],
        entrypoint=["sleep"],
        labels={LABEL: "1", LABEL_RUN: "measuring"},
        detach=True,
    )
    try:
        kept = clean()
        assert kept.returncode == 0, kept.stdout + kept.stderr
        assert "box: kept 1 running container(s) of run(s) 'measuring' (1)" in kept.stdout
        assert client.containers.get(str(busy.id)).status == "running"
        gone = clean("--running")
        assert gone.returncode == 0 and "box: removed 1 container(s)" in gone.stdout, gone
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(str(busy.id))
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            busy.remove(force=True)


def test_lost_connection_fails_that_target_only_and_resume_finishes_it(
    sshd: SshServer, tmp_path: Path
) -> None:
    matrix = _matrix(tmp_path, sshd, repetitions=150)
    results = tmp_path / "results"
    second = engine.connect_host(Host(url=sshd.url()), "box")
    proc = subprocess.Popen(
        [INVOKE, "bench", "--matrix", str(matrix)],
        cwd=REPO, env=_env(results), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        # Wait until the ssh target's harness runs on the second engine, then
        # take the host away: every ssh session and the sshd die at once.
        deadline = time.monotonic() + 1800
        while not second.containers.list(filters={"label": LABEL}):
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the ssh target's harness never started"
            time.sleep(0.5)
        time.sleep(2)
        sshd.stop(kill=True)
        output, _ = proc.communicate(timeout=1800)
    finally:
        if proc.poll() is None:
            proc.kill()
        if sshd.proc is None:
            sshd.start()
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    run_id = run_dir.name
    assert proc.returncode == 10, output
    assert "1 target(s) failed (1 kept their results)" in output, output
    assert re.search(
        rf"ssh-amd64: lost the connection to host box \(ssh://archbench-sshd\) during run;.*"
        rf"invoke bench --resume {run_id}",
        output,
    ), output
    assert "Traceback" not in output
    print("\n" + next(line for line in output.splitlines() if "lost the connection" in line))
    assert sorted(p.name for p in run_dir.glob("*.json")) == ["local-amd64.json", "run.json"]
    local_before = (run_dir / "local-amd64.json").stat().st_mtime_ns

    # The host is back (same keys, same port): --resume measures only what is missing.
    resumed = subprocess.run(
        [INVOKE, "bench", "--resume", run_id],
        cwd=REPO, env=_env(results), capture_output=True, text=True, check=False, timeout=3600,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "local-amd64: kept" in resumed.stdout
    assert (run_dir / "local-amd64.json").stat().st_mtime_ns == local_before
    remote = load(run_dir / "ssh-amd64.json")
    assert remote.run_id == run_id and all(len(r.samples_ns) == 150 for r in remote.harness.rows)
    # The container the lost session left running was removed by --resume.
    client = engine.connect_host(Host(url=sshd.url()), "box")
    assert client.api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}) == []


# ------------------------------------------------------------------ host pools

POOL_MATRIX = """
version: 1
metrics: [time]
defaults:
  blindsig: {{iterations: 2, repetitions: {repetitions}, rsa_bits: [1024], warmup: 0}}
bases:
  debian-trixie: {{source: bootstrap, suite: trixie, variant: minbase}}
profiles:
  slim:
    packages: [gcc, libc6-dev, make, pkgconf, python3, libgnunet-dev, libsodium-dev]
hosts:
  box: {{url: "{box}", build_network: host}}
  here: {{url: "{here}", build_network: host}}
pools:
  amd: [box, here]
targets:
{targets}
"""


@pytest.fixture(scope="module")
def here(sshd: SshServer) -> Iterator[SshServer]:
    """A second sshd, whose logins' docker reaches this machine's engine (``here``): with
    the ``sshd`` fixture's (``box``, the second engine), two engines behind real sshd.
    Its ``ssh`` wrapper, first on ``PATH``, reaches both."""
    root = Path(tempfile.mkdtemp(prefix="ab-here-", dir="/tmp"))
    server = SshServer(root / "s", "unix:///var/run/docker.sock", "archbench-here", sshd)
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", server.path())
    server.start()
    try:
        yield server
    finally:
        server.stop()
        mp.undo()
        shutil.rmtree(root, ignore_errors=True)


def _pool_matrix(
    tmp_path: Path, sshd: SshServer, here: SshServer, targets: str, repetitions: int = 3
) -> Path:
    path = tmp_path / "matrix.yml"
    text = POOL_MATRIX.format(
        box=sshd.url(), here=here.url(), targets=targets, repetitions=repetitions
    )
    path.write_text(text, encoding="utf-8")
    return path


def _stored_on(run_dir: Path, member: str) -> list[Result]:
    found = []
    for path in run_dir.glob("pool-*.json"):
        with contextlib.suppress(ResultsError):  # replaced atomically: read again next time
            r = load(path)
            if r.execution is not None and r.execution.docker_host.startswith(f"{member} ("):
                found.append(r)
    return found


def test_a_pool_shares_its_targets_and_a_lost_members_target_finishes_on_another(
    sshd: SshServer, here: SshServer, second_engine: int, tmp_path: Path
) -> None:
    targets = "".join(
        f"  - {{name: {n}, arch: amd64, base: debian-trixie, host: amd}}\n"
        for n in ("pool-a", "pool-b")
    )
    matrix = _pool_matrix(tmp_path, sshd, here, targets, repetitions=100)
    results = tmp_path / "results"
    # The second engine straight, not through the sshd the test kills.
    second = docker.DockerClient(base_url=f"tcp://127.0.0.1:{second_engine}")
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [INVOKE, "bench", "--matrix", str(matrix), "--repeat", "2"],
        cwd=REPO, env=_env(results), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    run_dir = None
    try:
        # Wait until box has stored the first repeat of its target and runs the second,
        # then take box away: its sshd and every session die at once.
        deadline = time.monotonic() + 2400
        while True:
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "box never ran a second repeat"
            run_dir = next((d for d in results.glob("*") if (d / "run.json").is_file()), None)
            running: dict[str, str | list[str] | bool] = {
                "label": f"{LABEL_RUN}={run_dir.name if run_dir else '-'}"
            }
            if run_dir and _stored_on(run_dir, "box") and second.containers.list(filters=running):
                break
            time.sleep(0.5)
        sshd.stop(kill=True)
        output, _ = proc.communicate(timeout=2400)
    finally:
        if proc.poll() is None:
            proc.kill()
        if sshd.proc is None:
            sshd.start()
        if run_dir is not None:  # the harness the lost session left running on box
            remove_run_containers(second, run_dir.name)
    wall = time.monotonic() - t0
    assert run_dir is not None
    assert proc.returncode == 0, output
    assert "Traceback" not in output
    moved = next(
        m.group(1) for m in re.finditer(r"^(pool-[ab]): ok on here, moved from box", output, re.M)
    )
    other = "pool-b" if moved == "pool-a" else "pool-a"
    print("\n" + "\n".join(line for line in output.splitlines() if "moved" in line))

    # What box measured of the moved target is set aside, never pooled with here's.
    (aside,) = (run_dir / "lost" / "box").iterdir()
    assert aside.name == f"{moved}.json"
    lost = load(aside)
    assert lost.execution is not None and lost.execution.docker_host == "box (ssh://archbench-sshd)"
    # Both targets ended on here, every repeat of each: the numbers of a target come from
    # one machine, and each result says which, with that engine's own image.
    local = docker.from_env()
    store = ResultStore(results)
    for name in (moved, other):
        files = [run_dir / f"{name}.json", run_dir / f"{name}.repeat-2.json"]
        for r in map(load, files):
            assert r.execution is not None and r.run_id == run_dir.name
            assert r.execution.docker_host == "here (ssh://archbench-here)"
            assert local.images.get(r.execution.image_tag).id == r.execution.image_id
            # The same harness on the same base; the image is each engine's own build.
            assert r.execution.harness_sha256 == lost.execution.harness_sha256
            assert r.execution.base_image == lost.execution.base_image
            assert r.harness.rows and all(row.valid for row in r.harness.rows)
            assert all(len(row.samples_ns) == 100 for row in r.harness.rows)
    assert second.images.get(lost.execution.image_tag).id == lost.execution.image_id
    merged, failures = store.load_all([run_dir.name])
    assert not failures and sorted(r.target.name for r in merged) == ["pool-a", "pool-b"]
    assert all(len(r.harness.rows[0].run_medians_ns or ()) == 2 for r in merged)
    # The members measured side by side: box's first repeat while here ran the other target.
    start = datetime.fromisoformat(lost.harness.started_at).timestamp()
    windows = [load(run_dir / f"{other}{s}.json").harness for s in ("", ".repeat-2")]
    first = datetime.fromisoformat(windows[0].started_at).timestamp()
    last = datetime.fromisoformat(windows[1].started_at).timestamp() + windows[1].duration_s
    assert start < last and first < start + lost.harness.duration_s
    print(f"pool of two ssh hosts, one lost mid-run: {wall:.1f} s wall")


def test_a_steps_targets_share_a_pool_and_count_alike_through_ssh_and_locally(
    here: SshServer, sshd: SshServer, tmp_path: Path
) -> None:
    # One pass without building first, as each step of 'invoke bisect' runs: the pool
    # 'both' (this engine through ssh as 'here', and straight as 'local') takes one
    # target each, at once. One image, one engine, two paths into the store: counting
    # fixes the inputs, so every CS block counts the same instructions however the
    # result came back.
    targets = (
        "  - {name: count-a, arch: amd64, base: debian-trixie, host: both}\n"
        "  - {name: count-b, arch: amd64, base: debian-trixie, host: both}\n"
    )
    text = _pool_matrix(tmp_path, sshd, here, targets).read_text(encoding="utf-8")
    m = parse(text.replace("pools:\n", "pools:\n  both: [here, local]\n"))
    clients, archs = pipeline.connect_engines(m, m.targets)
    assert sorted(clients) == ["here", "local"]
    plans = pipeline.plan(m, m.targets, archs, metrics=("instructions",), suites=["blindsig"])
    store = ResultStore(tmp_path / "results")
    ws = pipeline.Workspace(store=store, run_id="20261130T000000Z-paths", work_dir=WORK)
    outcomes = pipeline.execute(clients, plans, ws, archs)
    assert all(o.ok for o in outcomes), [o.message for o in outcomes]
    assert sorted(o.host for o in outcomes) == ["here", "local"]
    for o in outcomes:
        print(
            f"\ncounted {o.name} on {o.host}: "
            + ", ".join(f"{k} {v:.1f} s" for k, v in o.seconds.items())
        )
    for c in clients.values():
        c.close()
    got = {
        r.execution.docker_host: r for r in store.load_all(metric="instructions")[0] if r.execution
    }
    via_ssh, direct = got["here (ssh://archbench-here)"], got["local"]
    assert via_ssh.execution is not None and direct.execution is not None
    assert via_ssh.execution.image_tag == direct.execution.image_tag  # one counting layer
    windows = [
        (datetime.fromisoformat(r.harness.started_at).timestamp(), r.harness.duration_s)
        for r in (via_ssh, direct)
    ]
    (a, da), (b, db) = windows
    print(f"counting runs overlapped: {a < b + db and b < a + da}")

    def counts(r: Result) -> dict[tuple[str, int | None, str], tuple[int, ...] | None]:
        return {(x.scheme, x.key_bits, x.operation): x.instructions for x in r.harness.rows}

    cs = {k: v for k, v in counts(direct).items() if k[0] == "CS"}
    assert len(cs) == 7 and all(v for v in cs.values())
    assert {k: v for k, v in counts(via_ssh).items() if k[0] == "CS"} == cs
