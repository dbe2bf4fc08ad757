"""Suite ``taler-helper``: GNU Taler's security-module benchmarks, as the thesis ran them.

Runs the exchange's ``test_helper_cs`` and ``test_helper_rsa`` (``src/util``), which start
``taler-exchange-secmod-cs`` / ``-rsa`` from the exchange's installation prefix and time
100 sequential, 100 parallel per forked client (8 clients) and 800 parallel signature
operations through them, plus batch signing (0.14: five ``(batch)`` lines). The exchange
is built by the image from a ``taler:`` source (``images/taler-source/build-taler-exchange.sh``,
which leaves ``archbench-taler.txt`` in the tree: version, prefix, the prefix variable this
version reads, its GNUnet).

Every run has its own secmod configuration (``RSA_KEYSIZE`` set in a copy of
``test_helper_rsa.conf``) in its own scratch directory (``/tmp/tXXXXXXXX/r1024-1``: short,
since the secmods' Unix sockets live under it), which is the working directory (the
configuration names ``test_helper_*_home/`` relative to it: keys of another size or run are
never reused) and ``TMPDIR`` (the tests share ``${TMPDIR}/taler-system-runtime``: two runs
never share one). A run that fails is recorded in ``extra["failures"]``; the others stay.
Runs are strictly one after another. Each (test, size) runs
``repetitions`` times; the output is kept verbatim in ``extra["runs"]`` and parsed on the
host by ``archbench.upstream`` into rows of suite ``security-module``, so the printed-value
truncation rules live in one place.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from abh.suites import counting, taler_counting
from abh.suites.common import CommandResult, SuiteError, SuiteOutcome, SuiteTimeout, check_keys
from abh.suites.counting import CountError

SUITE = "taler-helper"
TALER_DIR = Path("/opt/archbench/taler")
"""Where the image keeps the exchange's build tree (``exchange/``)."""
TESTS = ("test_helper_rsa", "test_helper_cs")
SCRATCH_PARENT = "/tmp"  # noqa: S108  # mkdtemp makes a private folder there; short for sun_path
"""Where each run's scratch folder goes (working directory and TMPDIR of the test)."""
FORKED_CLIENTS = 8
"""``NUM_CORES`` of test_helper_*.c (0.9.2 to 0.14.1): the parallel part forks 8 clients."""
DEFAULTS: dict[str, Any] = {
    "tests": list(TESTS),
    "rsa_bits": [1024, 2048, 3072, 4096],
    "repetitions": 3,
    "timeout_s": 1800.0,
}
_KEYSIZE = re.compile(r"^RSA_KEYSIZE\s*=.*$", re.MULTILINE)


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the settings and fill defaults.

    Returns:
        ``{"tests": [names from TESTS], "rsa_bits": [ints, each the RSA_KEYSIZE of one
        secmod configuration], "repetitions": int (runs per test and size),
        "timeout_s": float (per run)}``. A single integer ``rsa_bits`` is one size.

    Raises:
        SuiteError: unknown key, unknown test, a size outside 1024..16384, repetitions
            outside 1..100, timeout <= 0.
    """
    check_keys(SUITE, config, list(DEFAULTS))
    merged = {**DEFAULTS, **config}
    tests = merged["tests"]
    if not isinstance(tests, list) or not tests or any(t not in TESTS for t in tests):
        raise SuiteError(f"{SUITE}: tests = {tests!r}; allowed: a list of {', '.join(TESTS)}")
    bits = merged["rsa_bits"]
    sizes = [bits] if isinstance(bits, int) and not isinstance(bits, bool) else bits
    if (
        not isinstance(sizes, list)
        or not sizes
        or any(
            isinstance(b, bool) or not isinstance(b, int) or not 1024 <= b <= 16384 for b in sizes
        )
    ):
        raise SuiteError(
            f"{SUITE}: rsa_bits = {bits!r}; allowed: integers 1024..16384 (a list or one)"
        )
    reps = merged["repetitions"]
    if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= 100:
        raise SuiteError(f"{SUITE}: repetitions = {reps!r}; allowed: an integer 1..100")
    timeout = merged["timeout_s"]
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise SuiteError(f"{SUITE}: timeout_s = {timeout!r}; allowed: seconds > 0")
    return {
        "tests": list(tests),
        "rsa_bits": sorted(set(sizes)),
        "repetitions": reps,
        "timeout_s": float(timeout),
    }


def build_info(tree: Path) -> dict[str, str]:
    """``archbench-taler.txt`` of a source build (tab-separated key and value), or {}."""
    try:
        text = (tree / "archbench-taler.txt").read_text(encoding="utf-8")
    except OSError:
        return {}
    return dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)


def prefix_env(info: Mapping[str, str]) -> dict[str, str]:
    """The variable that tells this exchange's libtalerutil its installation prefix.

    ``TALER_PREFIX`` up to 0.14.0, ``TALER_EXCHANGE_PREFIX`` in 0.14.1 (read from the
    tree's ``os_installation.c`` at build time); without it the tests exit 77 ("exec
    failed on …/.libs/bin//taler-exchange-secmod-cs"). A tree without build info
    (prefix /usr/local assumed) gets both.
    """
    if "prefix" in info and "prefix_variable" in info:
        return {info["prefix_variable"]: info["prefix"]}
    return {"TALER_PREFIX": "/usr/local", "TALER_EXCHANGE_PREFIX": "/usr/local"}


def secmod_config(text: str, test: str, bits: int | None) -> str:
    """``test``'s configuration with ``RSA_KEYSIZE = bits`` (RSA); CS's as it is.

    Raises:
        SuiteError: an RSA configuration without an ``RSA_KEYSIZE`` line.
    """
    if bits is None:
        return text
    if not _KEYSIZE.search(text):
        raise SuiteError(f"{test}.conf has no RSA_KEYSIZE line to set to {bits}")
    return _KEYSIZE.sub(f"RSA_KEYSIZE = {bits}", text)


def _count_prefix(
    count: counting.CountSession,
    test: str,
    real_prefix: Path,
    env_prefix: dict[str, str],
    scratch: Path,
    out: Path,
) -> dict[str, str]:
    """The environment that makes ``test`` start its secmod under the counting QEMU: the
    prefix variables name a shadow prefix in ``scratch`` whose secmod is the counting
    layer's wrapper, told to write to ``out``."""
    shadow = scratch / "p"
    wrapper = count.counter.directory / taler_counting.EXEC_COUNTED
    taler_counting.make_shadow_prefix(real_prefix, shadow, [taler_counting.SECMODS[test]], wrapper)
    try:
        env = taler_counting.wrapper_env(count, out, real_prefix, sorted(env_prefix))
    except ValueError as exc:
        raise SuiteError(f"counting {test}: {exc}") from None
    return {**env, **{name: str(shadow) for name in env_prefix}}


def run_test(
    argv: Sequence[str], timeout_s: float, *, cwd: Path, env: Mapping[str, str]
) -> CommandResult:
    """Run one ``test_helper_*`` in a session of its own, its output in files under ``cwd``;
    whatever of its session outlives it (a secmod it started) is killed when it exits.

    The test forks and execs the secmod and stops it when it ends normally. A test that
    ends early (seen under QEMU at load 20: test_helper_rsa exited and left
    ``taler-exchange-secmod-rsa`` running) leaves the secmod holding the test's stdout and
    stderr: reading them through pipes (:func:`abh.suites.common.run_command`) waited for
    the secmod until the run's timeout, which then failed the whole suite. Files do not
    wait; the session (``start_new_session``: the process group is the test's pid) is
    killed with SIGKILL once the test has exited or timed out.

    Raises:
        SuiteTimeout: the test ran past ``timeout_s`` (its session is killed).
        SuiteError: the test cannot be started.
    """
    out, err = cwd / "archbench-test.stdout", cwd / "archbench-test.stderr"
    start = time.monotonic_ns()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        try:
            # argv is the built test's path, never a shell.
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                cwd=cwd,
                env={**os.environ, **env},
                start_new_session=True,
            )
        except OSError as exc:
            raise SuiteError(f"cannot run {argv[0]}: {exc.strerror}") from None
        try:
            returncode = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_session(proc.pid)
            proc.wait()
            raise SuiteTimeout(f"{argv[0]} did not finish within {timeout_s:g} s") from None
        _kill_session(proc.pid)
    return CommandResult(
        argv=tuple(argv),
        returncode=returncode,
        stdout=out.read_bytes().decode("utf-8", "replace"),
        stderr=err.read_bytes().decode("utf-8", "replace"),
        elapsed_ns=time.monotonic_ns() - start,
    )


def _ended(returncode: int) -> str:
    """How a run ended: ``exited with status 5``, or ``was killed by SIGBUS (signal 7)``
    (a negative status: the signal; armv7's test_helper_rsa under QEMU dies of SIGBUS)."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "a signal"
    return f"was killed by {name} (signal {-returncode})"


def _kill_session(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # nothing of it is left
        os.killpg(pgid, signal.SIGKILL)


def run(
    config: dict[str, Any],
    warn: Callable[[str], None],
    count: counting.CountSession | None = None,
    *,
    taler_dir: Path = TALER_DIR,
) -> SuiteOutcome:
    """Run every test, size and repetition; the output goes to ``extra["runs"]``.

    ``extra``: ``runs`` (a list of ``{"test", "rsa_bits" (None for CS), "repetition",
    "seconds" (wall time of the run), "log" (stderr then stdout)}``), ``cpus`` (CPUs this
    process may run on), ``forked_clients`` (8), ``prefix_variable``, ``failures`` (one
    text per run that exited with an error: the others are kept).

    With ``count`` (``--count-with``) the tests start their secmod under the counting
    QEMU through a shadow prefix (:mod:`abh.suites.taler_counting`): each run's
    figures go to its entry's ``counts`` and the outcome has the counted rows
    (``secmod_signing``, ``secmod_key_generation`` per test and size).

    Raises:
        SuiteError: the exchange was not built in this image, a test is missing, or
            no run succeeded (a run that times out is recorded as a failure; counting: a
            run whose secmod's counts cannot be read has failed, and is recorded in
            ``failures``).
    """
    tree = taler_dir / "exchange"
    util = tree / "src" / "util"
    if not util.is_dir():
        raise SuiteError(
            f"taler-exchange is not built in this image ({util} is missing): run this suite "
            "on a target with a taler: source (docs/taler-recipe.md)"
        )
    info = build_info(tree)
    env_prefix = prefix_env(info)
    runs: list[dict[str, Any]] = []
    failures: list[str] = []
    # Short: the secmods' Unix sockets live under TMPDIR, and GNUnet refuses a socket path
    # longer than sun_path (108 bytes; exchange 0.9.2's client sockets are the longest).
    scratch_root = Path(tempfile.mkdtemp(prefix="t", dir=SCRATCH_PARENT))
    real_prefix = Path(info.get("prefix", "/usr/local"))
    rows: list[dict[str, Any]] = []
    try:
        for test in config["tests"]:
            program = util / test
            conf = util / f"{test}.conf"
            if not program.is_file() or not conf.is_file():
                raise SuiteError(f"{program} or its {conf.name} was not built in this image")
            rsa = test.endswith("_rsa")
            for bits in config["rsa_bits"] if rsa else [None]:
                label = f"{test}" + (f" RSA-{bits}" if bits else "")
                text = secmod_config(conf.read_text(encoding="utf-8"), test, bits)
                for repetition in range(1, config["repetitions"] + 1):
                    # Every run its own secmod configuration, key home and runtime folder:
                    # nothing of an earlier size or run is seen. A key home kept between
                    # runs fails the next run once its keys outlive DURATION_WITHDRAW (one
                    # minute): "key worked too late" (test_helper_rsa.c, exit 5).
                    scratch = scratch_root / f"{'r' + str(bits) if bits else 'cs'}-{repetition}"
                    scratch.mkdir()
                    (scratch / conf.name).write_text(text, encoding="utf-8")
                    env = {**env_prefix, "TMPDIR": str(scratch)}
                    count_out = scratch / "secmod.count"
                    if count is not None:
                        env = {
                            **env,
                            **_count_prefix(
                                count, test, real_prefix, env_prefix, scratch, count_out
                            ),
                        }
                    started = time.monotonic()
                    try:
                        done = run_test([str(program)], config["timeout_s"], cwd=scratch, env=env)
                    except SuiteTimeout as exc:
                        # Recorded like a failing run: the other runs and tests go on.
                        shutil.rmtree(scratch, ignore_errors=True)
                        failures.append(f"{label} (run {repetition}): {exc}")
                        warn(failures[-1])
                        continue
                    seconds = time.monotonic() - started
                    counts: dict[str, Any] | None = None
                    count_error = ""
                    if count is not None and done.returncode == 0:
                        try:
                            counts = taler_counting.read_run(count_out, "RSA" if rsa else "CS")
                        except CountError as exc:
                            count_error = str(exc)
                    shutil.rmtree(scratch, ignore_errors=True)
                    if count_error:
                        # A run whose secmod cannot be counted is a failed run: no row
                        # holds a count that is not the secmod's.
                        failure = f"{label} (run {repetition}): {count_error}"
                        failures.append(failure)
                        warn(failure)
                        continue
                    if done.returncode != 0:
                        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
                        failure = (
                            f"{label} (run {repetition}) {_ended(done.returncode)}"
                            f"; stderr ends:\n{tail}"
                        )
                        # The runs that worked are kept; this size's other runs go on.
                        failures.append(failure)
                        warn(failure)
                        continue
                    log = done.stderr + done.stdout
                    if "signature operations took" not in log:
                        warn(f"{label} (run {repetition}) printed no timing line")
                    entry = {
                        "test": test,
                        "rsa_bits": bits,
                        "repetition": repetition,
                        "seconds": round(seconds, 3),
                        "log": log,
                    }
                    if counts is not None:
                        entry["counts"] = counts
                    runs.append(entry)
                if count is not None:
                    counted = [r for r in runs if r["test"] == test and r["rsa_bits"] == bits]
                    if counted:
                        rows += taler_counting.counted_rows(
                            test, bits, [{"seconds": r["seconds"], **r["counts"]} for r in counted]
                        )
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    if not runs:
        raise SuiteError("no run of the tests succeeded: " + "; ".join(failures[:3]))
    version = info.get("version")
    gnunet = info.get("gnunet_version")
    tools = {
        name: value
        for name, value in (("taler-exchange", version), ("gnunet (exchange's)", gnunet))
        if value
    }
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return SuiteOutcome(
        rows=rows,
        parameters=config,
        tools=tools,
        extra={
            "runs": runs,
            "cpus": cpus,
            "forked_clients": FORKED_CLIENTS,
            "prefix_variable": ",".join(sorted(env_prefix)),
            "failures": failures,
        },
    )
