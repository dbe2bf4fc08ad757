"""The CPU quota reaches the container and the measurement option the results (``--run-docker``).

Uses the CI matrix's amd64 image (profile ``slim`` of ``matrix-ci.yml``, the
``slim_amd64_image`` fixture of ``tests/conftest.py``, shared with ``test_confinement.py``);
blindsig runs with tiny parameters.
"""

from __future__ import annotations

import docker
import pytest

from archbench.platforms import Arch
from archbench.run import containers as run
from archbench.suites import Suites

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(Arch.native() is not Arch.AMD64, reason="the CI image is amd64"),
]

TINY = {"iterations": 1, "repetitions": 1, "rsa_bits": [1024], "warmup": 0, "min_block_ns": 1}


def test_half_a_cpu_reaches_the_cgroup_and_fresh_items_the_parameters(
    engine_client: docker.DockerClient, slim_amd64_image: str
) -> None:
    suites = Suites.model_validate({"blindsig": {**TINY, "fresh_items": True}})
    doc, _ = run.run_harness(
        engine_client, slim_amd64_image, Arch.AMD64, suites, cpus=0.5, timeout=600
    )
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
    engine_client: docker.DockerClient,
    slim_amd64_image: str,
    cpus: float | None,
    nano: int,
    quota: tuple[str, ...],
) -> None:
    with run.BenchContainer(
        engine_client, slim_amd64_image, Arch.AMD64, ["-c", PROBE], entrypoint=["sh"], cpus=cpus
    ) as box:
        assert box.container is not None
        box.container.reload()
        assert box.container.attrs["HostConfig"]["NanoCpus"] == nano
        done = box.wait(timeout=60)
    read_quota, period = done.stdout.split()
    assert read_quota in quota and period == "100000"


def test_default_has_no_quota_and_repeats_one_item(
    engine_client: docker.DockerClient, slim_amd64_image: str
) -> None:
    doc, _ = run.run_harness(
        engine_client,
        slim_amd64_image,
        Arch.AMD64,
        Suites.model_validate({"blindsig": TINY}),
        timeout=600,
    )
    limits = doc.setup.cpu_limits
    assert limits is not None and limits.quota_us is None and limits.cpus is None
    assert doc.parameters is not None and doc.parameters.fresh_items is False
    assert all(r.valid for r in doc.rows)
