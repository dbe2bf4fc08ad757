"""Shared pytest options: container tests run for real, behind ``--run-docker``.

Fixtures shared by the integration tests: ``engine_client`` and
``slim_amd64_image`` (session), and from ``engines.py`` ``second_engine`` and ``sshd``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from typing import Any

import docker
import pytest
from helpers import CI_MATRIX, REPO
from pristine import running_scenario, start_scenario
from xdist.scheduler import LoadScopeScheduling

from archbench.hosts import engine
from archbench.images import Builder, ensure_base, ensure_image, plan_image
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


@pytest.hookimpl(trylast=True)  # after -k and -m deselected what they deselect
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The pristine machines' tests (test_pristine_docker.py) go last: they wait for the
    # machines that pytest_runtest_setup starts with the first engine test.
    pristine = [item for item in items if "pristine" in item.keywords]
    if pristine:
        items[:] = [item for item in items if "pristine" not in item.keywords] + pristine
    if config.getoption("--run-docker"):
        return
    skip = pytest.mark.skip(reason="needs a Docker engine: run pytest with --run-docker")
    for item in items:
        if "docker" in item.keywords or "emulated" in item.keywords:
            item.add_marker(skip)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Start the pristine machines (:class:`pristine.Scenario`) in a thread of their own
    when the first engine test of a session that will run their tests starts: their
    quarter of an hour overlaps the other tests (issue 27). Under xdist that is the
    worker of :data:`ENGINE_SCOPE` (which runs the pristine tests), never the other one."""
    config = item.config
    if running_scenario() is not None or not config.getoption("--run-docker"):
        return
    if "docker" not in item.keywords and "emulated" not in item.keywords:
        return
    if work_unit(item.nodeid) != ENGINE_SCOPE:
        return
    if any("pristine" in other.keywords for other in item.session.items):
        start_scenario(engine.connect())


#: The xdist work unit of the integration tests (:class:`EngineScheduling`) but those of
#: :data:`SIDE_FILES`.
ENGINE_SCOPE = "tests/integration/"
#: Integration tests whose images no other test builds (ppc64le's bookworm base, the
#: symbols image, Taler's exchanges, GNUnet master, the autotools and tarball builds of
#: test_gnunet_source_image_docker.py): one work unit, :data:`SIDE_SCOPE`,
#: that the second worker runs beside :data:`ENGINE_SCOPE` before the unit tests. What
#: they share with the rest (the amd64 and riscv64 bases, the slim images, the cross
#: stages) is built once either way: the second worker to ask waits on the build's
#: lock and then finds the image (:meth:`archbench.images.Builder.lock`).
SIDE_FILES = (
    "tests/integration/test_gnunet_master_docker.py",
    "tests/integration/test_gnunet_source_image_docker.py",
    "tests/integration/test_ppc64le_docker.py",
    "tests/integration/test_symbol_files_docker.py",
    "tests/integration/test_taler_source_docker.py",
)
SIDE_SCOPE = "tests/integration/ (images of their own)"


def work_unit(nodeid: str) -> str:
    """The xdist work unit of a test id: :data:`SIDE_SCOPE`, :data:`ENGINE_SCOPE`, or for
    a unit test its file."""
    if nodeid.startswith(SIDE_FILES):
        return SIDE_SCOPE
    if nodeid.startswith(ENGINE_SCOPE):
        return ENGINE_SCOPE
    return nodeid.split("::", 1)[0]


class EngineScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist is untyped
    """xdist's scheduler for the README's ``pytest -n 2``: the integration tests are two
    work units (:func:`work_unit`), each run by one worker in collection order, so a
    session's images are built once and the two cores of a 2-core machine both work while
    one unit waits on QEMU's single thread, an engine or a timer; the unit tests go a file
    at a time to whichever worker is free, in collection order (the side unit first, then
    the unit tests, so the worker that finishes early takes them). Timed tests run beside
    the other worker's builds: they are made for a busy machine (issue 39).

    A scheduler of our own rather than ``--dist loadgroup``: xdist 3.8 marks a group by
    rewriting ``item._nodeid``, which pytest 9 no longer reads.
    """

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        # xdist orders work units by their number of tests unless told not to; the side
        # unit has few tests but long ones, and must start at once.
        config.option.loadscopereorder = False

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent when xdist is not installed
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> EngineScheduling:
    """Schedule with :class:`EngineScheduling` whenever ``-n`` is given."""
    return EngineScheduling(config, log)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Remove the pristine machines if the session ended before their tests waited."""
    scenario = running_scenario()
    if scenario is not None:
        scenario.abandon()


#: Skips that are right in CI too, by the start of their reason: the test is for another
#: host architecture or another GNUnet on the host, or for a user other than root. Every
#: other skip fails when ``CI`` is set: CI's setup installs every tool the tests need, so
#: a missing one is a defect.
RIGHT_IN_CI = (
    "the native target is amd64",
    "the CI matrix's native target is amd64",
    "the CI image is amd64",
    "the target is amd64",
    "the targets are amd64",
    "archives a native amd64 run",
    "this host's GNUnet has the layer",
    # An unreadable folder cannot be made for root, who reads every folder.
    "root reads every folder",
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    """In CI (``CI`` set), a skip is a failure unless :data:`RIGHT_IN_CI` says otherwise."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not (os.environ.get("CI") and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
    reason = reason.removeprefix("Skipped: ")
    if reason.startswith(RIGHT_IN_CI):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped in CI, where every tool the tests need is installed: {reason}"


#: When this test session started: stage times written before it are an earlier run's.
SESSION_START = time.time()


#: Seconds per test id, its setup, call and teardown together: a session fixture's build
#: is paid by the first test that asks for it, which is where a budget goes.
TEST_SECONDS: dict[str, float] = {}

#: How many of the slowest tests and files the closing summary lists.
SLOWEST = 12

#: Where the closing summary writes every test's seconds (tab-separated, slowest first).
SECONDS_FILE = REPO / ".archbench" / "test-seconds.tsv"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add each phase's duration (s) to its test's total in :data:`TEST_SECONDS` (under
    xdist, in the controller: its reports come from both workers)."""
    TEST_SECONDS[report.nodeid] = TEST_SECONDS.get(report.nodeid, 0.0) + report.duration


def slowest_table(seconds: dict[str, float], count: int = SLOWEST) -> str:
    """The closing summary's table: the ``count`` slowest tests and test files.

    Args:
        seconds: test id -> seconds (setup + call + teardown).
        count: rows per list.

    Returns:
        Text lines ``"  123.4 s  tests/...::test_x"``, tests first, then files (sums), then
        the total; empty when no test ran.
    """
    if not seconds:
        return ""
    files: dict[str, float] = {}
    for nodeid, spent in seconds.items():
        files[nodeid.split("::", 1)[0]] = files.get(nodeid.split("::", 1)[0], 0.0) + spent
    lines = [f"tests (setup + call + teardown), {len(seconds)} in all:"]
    for name, spent in sorted(seconds.items(), key=lambda kv: -kv[1])[:count]:
        lines.append(f"{spent:8.1f} s  {name}")
    lines.append("files:")
    for name, spent in sorted(files.items(), key=lambda kv: -kv[1])[:count]:
        lines.append(f"{spent:8.1f} s  {name}")
    lines.append(f"{sum(seconds.values()):8.1f} s  in all tests")
    return "\n".join(lines) + "\n"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the slowest tests and files of this session (where the suite's 30-minute
    budget goes, in every CI log), and the pristine machine's stage times
    (``test_pristine_docker.py``) when that test ran: how long a new user's first command
    took."""
    table = slowest_table(TEST_SECONDS)
    if table:
        terminalreporter.write_sep("-", "slowest tests")
        terminalreporter.write(table)
        # Every test's seconds, slowest first, for what the table leaves out.
        SECONDS_FILE.parent.mkdir(parents=True, exist_ok=True)
        SECONDS_FILE.write_text(
            "".join(
                f"{spent:.1f}\t{name}\n"
                for name, spent in sorted(TEST_SECONDS.items(), key=lambda kv: -kv[1])
            ),
            encoding="utf-8",
        )
        terminalreporter.write_line(f"every test's seconds: {SECONDS_FILE}")
    times = REPO / ".archbench" / "pristine-times.txt"
    if times.is_file() and times.stat().st_mtime >= SESSION_START:
        terminalreporter.write_sep("-", "pristine machine: stage times")
        terminalreporter.write(times.read_text(encoding="utf-8"))


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
