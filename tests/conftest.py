"""Shared pytest options: container tests run for real, behind ``--run-docker``."""

from __future__ import annotations

import pytest

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
