"""Benchmark containers get only what they need, and the suites still run (``--run-docker``).

The CI image (profile ``slim`` of ``matrix-ci.yml``, amd64; the
``slim_amd64_image`` fixture of ``tests/conftest.py``) is built or reused
once; its containers are inspected on the engine (``HostConfig``) and from
inside (``/proc/self/status``, writes), and the harness runs blindsig,
sodium and gnupg with tiny budgets in the same confinement.
"""

from __future__ import annotations

import time

import docker
import pytest

from archbench.platforms import Arch
from archbench.run import containers as run
from archbench.suites import Suites

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the CI image is amd64"),
]

SUITES = Suites.model_validate(
    {
        "blindsig": {"iterations": 2, "repetitions": 3, "rsa_bits": [1024], "warmup": 0},
        "sodium": {"repetitions": 4, "warmup": 0, "sizes": [64], "nth": 1},
        "gnupg": {"algorithms": ["rsa2048", "cv25519"], "file_bytes": 65536, "runs": 1},
    }
)


def test_host_config_and_what_the_process_sees(
    engine_client: docker.DockerClient, slim_amd64_image: str
) -> None:
    probe = (
        "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status; "
        "touch /opt/x 2>/dev/null && echo root-writable || echo root-read-only; "
        "touch /tmp/x && echo tmp-writable; "
        "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max; "
        "grep ' /tmp ' /proc/mounts; "
        "tail -n +3 /proc/net/dev | cut -d: -f1 | sed 's/^ */if=/'"
    )
    with run.BenchContainer(
        engine_client,
        slim_amd64_image,
        Arch.AMD64,
        ["-c", probe],
        entrypoint=["sh"],
        tmp_size_mib=80,
    ) as box:
        assert box.container is not None
        box.container.reload()
        host_config = box.container.attrs["HostConfig"]
        done = box.wait(timeout=120)
    assert host_config["CapDrop"] == ["ALL"] and not host_config["CapAdd"]
    assert host_config["SecurityOpt"] == ["no-new-privileges:true"]
    assert host_config["PidsLimit"] == run.PIDS_LIMIT
    assert host_config["ReadonlyRootfs"] is True
    assert host_config["Tmpfs"] == {"/tmp": "rw,nosuid,nodev,noexec,size=80m,mode=1777"}
    assert host_config["NetworkMode"] == "none"
    assert host_config["Privileged"] is False
    assert done.exit_code == 0, done.stderr
    seen = dict(line.split(":", 1) for line in done.stdout.splitlines() if ":" in line)
    for cap in ("CapEff", "CapPrm", "CapBnd"):
        assert int(seen[cap].strip(), 16) == 0, (cap, seen[cap])
    assert seen["NoNewPrivs"].strip() == "1"
    lines = done.stdout.splitlines()
    assert "root-read-only" in lines and "tmp-writable" in lines
    assert str(run.PIDS_LIMIT) in lines
    assert [line for line in lines if line.startswith("if=")] == ["if=lo"]
    (mount,) = [line for line in lines if " /tmp " in line]
    assert mount.split()[2] == "tmpfs" and "noexec" in mount and "size=81920k" in mount


def test_the_tmpfs_grows_with_gnupg_file_size() -> None:
    assert run.tmp_mib(SUITES) == run.TMP_MIB + 1  # 3 x 64 KiB, rounded up to 1 MiB
    big = Suites.model_validate({"gnupg": {"file_bytes": 100 << 20}})
    assert run.tmp_mib(big) == run.TMP_MIB + 300
    assert run.tmp_mib(Suites.model_validate({"blindsig": {}})) == run.TMP_MIB


def test_blindsig_sodium_and_gnupg_run_confined(
    engine_client: docker.DockerClient, slim_amd64_image: str
) -> None:
    t0 = time.monotonic()
    doc, stderr = run.run_harness(engine_client, slim_amd64_image, Arch.AMD64, SUITES, timeout=900)
    print(f"\nconfined harness run (blindsig + sodium + gnupg): {time.monotonic() - t0:.1f} s")
    assert set(doc.suites) == {"blindsig", "sodium", "gnupg"}
    for name, suite in doc.suites.items():
        assert suite.error is None, (name, suite.error, stderr[-2000:])
    by_suite: dict[str, int] = {}
    for row in doc.rows:
        assert row.valid, (row.suite, row.operation, row.invalid_reason)
        by_suite[row.suite] = by_suite.get(row.suite, 0) + 1
    assert set(by_suite) >= {"blindsig", "sodium", "gnupg"}, by_suite
    # GnuPG wrote its keyrings and files in /tmp: encryption and decryption of both keys.
    gnupg_ops = {(r.param or r.scheme, r.operation) for r in doc.rows if r.suite == "gnupg"}
    assert len(gnupg_ops) >= 4, gnupg_ops
