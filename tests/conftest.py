"""Shared pytest options: container tests run for real, behind ``--run-docker``.

Fixtures shared by the integration tests: ``engine_client`` and
``slim_amd64_image`` (session), and from ``engines.py`` ``second_engine`` and ``sshd``.
"""

from __future__ import annotations

import docker
import pytest
from helpers import CI_MATRIX, REPO

from archbench.build import Builder, ensure_base, ensure_image, plan_image
from archbench.hosts import engine
from archbench.matrix import load
from archbench.platforms import Arch

# The second dockerd and the sshd in front of it (fixtures second_engine, sshd).
pytest_plugins = ["engines"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-docker",
        action="store_true",
        default=False,
        help="run tests that need a Docker engine and QEMU user emulation (binfmt_misc)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-docker"):
        return
    skip = pytest.mark.skip(reason="needs a Docker engine: run pytest with --run-docker")
    for item in items:
        if "docker" in item.keywords or "emulated" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def engine_client() -> docker.DockerClient:
    """The local Docker engine (:func:`archbench.hosts.engine.connect`), one client per session."""
    return engine.connect()


@pytest.fixture(scope="session")
def slim_amd64_image(
    engine_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """The tag of the CI matrix's amd64 benchmark image (profile ``slim`` of
    ``tests/integration/matrix-ci.yml``), its base bootstrapped and the image built if
    missing (both are content-hashed: an earlier session's are reused).
    """
    m = load(CI_MATRIX)
    logs = tmp_path_factory.mktemp("slim-amd64-logs")
    builder = Builder(engine_client, REPO / ".archbench" / "work", logs)
    base = ensure_base(builder, "debian-trixie", m.bases["debian-trixie"], Arch.AMD64)
    spec = plan_image(Arch.AMD64, "slim", m.profiles["slim"].packages, base.tag, base.image_id)
    ensure_image(builder, spec, "build.log")
    return spec.tag
