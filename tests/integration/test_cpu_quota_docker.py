"""The CPU quota reaches the container and the measurement option the results (``--run-docker``).

Uses the CI matrix's amd64 image (profile ``slim`` of ``matrix-ci.yml``), built or
reused as in ``test_confinement.py``; blindsig runs with tiny parameters.
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from archbench import bases, engine, images, run
from archbench.matrix import Suites, load
from archbench.platforms import Arch

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORK = REPO / ".archbench" / "work"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the CI image is amd64"),
]

TINY = {"iterations": 1, "repetitions": 1, "rsa_bits": [1024], "warmup": 0, "min_block_ns": 1}


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    return engine.connect()


@pytest.fixture(scope="module")
def image(client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The tag of the CI matrix's amd64 benchmark image (built if missing)."""
    m = load(HERE / "matrix-ci.yml")
    logs = tmp_path_factory.mktemp("logs")
    base = bases.ensure_base(
        client, "debian-trixie", m.bases["debian-trixie"], Arch.AMD64, work_dir=WORK, log_dir=logs
    )
    spec = images.plan_image(
        Arch.AMD64, "slim", m.profiles["slim"].packages, base.tag, base.image_id
    )
    images.ensure_image(client, spec, log_path=logs / "build.log")
    return spec.tag


def test_half_a_cpu_reaches_the_cgroup_and_fresh_items_the_parameters(
    client: docker.DockerClient, image: str
) -> None:
    suites = Suites.model_validate({"blindsig": {**TINY, "fresh_items": True}})
    doc, _ = run.run_harness(client, image, Arch.AMD64, suites, cpus=0.5, timeout=600)
    limits = doc.setup.cpu_limits
    assert limits is not None
    # Docker's --cpus 0.5: 50 ms of CPU per 100 ms period, read back from cpu.max.
    assert (limits.quota_us, limits.period_us, limits.cpus) == (50_000, 100_000, 0.5)
    assert doc.parameters is not None and doc.parameters.fresh_items is True
    assert {r.operation for r in doc.rows if r.valid} >= {"signing", "verifying"}


# cgroup v2 ``cpu.max`` or, on a v1 engine, ``cfs_quota_us cfs_period_us`` (-1 = no quota).
PROBE = (
    "if [ -f /sys/fs/cgroup/cpu.max ]; then cat /sys/fs/cgroup/cpu.max; "
    "else d=/sys/fs/cgroup/cpu; echo $(cat $d/cpu.cfs_quota_us) $(cat $d/cpu.cfs_period_us); fi"
)


@pytest.mark.parametrize(
    ("cpus", "nano", "quota"), [(None, 0, ("max", "-1")), (1.25, 1_250_000_000, ("125000",))]
)
def test_nano_cpus_on_the_engine_and_in_the_cgroup(
    client: docker.DockerClient, image: str, cpus: float | None, nano: int, quota: tuple[str, ...]
) -> None:
    with run.BenchContainer(
        client, image, Arch.AMD64, ["-c", PROBE], entrypoint=["sh"], cpus=cpus
    ) as box:
        assert box.container is not None
        box.container.reload()
        assert box.container.attrs["HostConfig"]["NanoCpus"] == nano
        done = box.wait(timeout=60)
    read_quota, period = done.stdout.split()
    assert read_quota in quota and period == "100000"


def test_default_has_no_quota_and_repeats_one_item(client: docker.DockerClient, image: str) -> None:
    doc, _ = run.run_harness(
        client, image, Arch.AMD64, Suites.model_validate({"blindsig": TINY}), timeout=600
    )
    limits = doc.setup.cpu_limits
    assert limits is not None and limits.quota_us is None and limits.cpus is None
    assert doc.parameters is not None and doc.parameters.fresh_items is False
    assert all(r.valid for r in doc.rows)
