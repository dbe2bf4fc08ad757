"""Every flag of every command, and a reader that goes away (issue 32, kinds 1 and 7).

A walk over the signature of every task in ``tasks.py``: each flag that takes a value
has a hostile value in :data:`BAD` (a test fails when a flag has none), and each must
end in exit status 2, like every refused command-line value, with the value cut to a
readable length and no traceback. Then ``| head``: a closed stdout is a quiet exit,
with the command's files written and nothing half-done; and no lock file is left in
a folder the user named.
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, load_tasks, result, row
from hostile_cases import GOOD_MATRIX
from invoke.config import Config
from invoke.context import Context
from invoke.exceptions import Exit

from archbench import matrix
from archbench.cli import SIGPIPE_EXIT
from archbench.errors import ReportError, ResultsError
from archbench.result import ResultStore, folder_lock, load

TASKS = load_tasks("archbench_tasks_flags")
LOCK_FILE = ".archbench.lock"
RUN = "20261129T220000Z-abcdef"
LONG = "x" * 5000
TOO_LONG_NAME = "/tmp/" + "n" * 300
"""A path with a name no file system holds: ``OSError: File name too long`` before."""

REQUIRED: dict[str, dict[str, str]] = {
    "import_": {"logs": "x.log", "target": "box", "arch": "amd64", "cpu": "c", "cores": "2"},
    "compare": {"run_a": RUN, "run_b": RUN},
    "archive": {"run_id": RUN},
}
"""Arguments a task needs before it looks at the flag under test."""

BAD: dict[str, dict[str, list[str]]] = {
    "bench": {
        "arch": [LONG, ""],
        "target": [LONG, ","],
        "matrix": [TOO_LONG_NAME, "a\x00b"],
        "iterations": [LONG, "0"],
        "repetitions": [LONG, "-1"],
        "rsa_bits": [LONG, "2047"],
        "repeat": [LONG],
        "cpuset": [LONG, "3-1"],
        "warmup": [LONG],
        "max_time": [LONG, "nan"],
        "resume": [LONG, "../x"],
        "suite": [LONG],
        "from_archive": [TOO_LONG_NAME],
        "metric": [LONG, "time,time"],
        "ci_target": [LONG],
        "cpus": [LONG],
        "gnunet": [LONG, "x.tar.gz"],
        "taler": [LONG, "x.tar.gz", "debian"],
    },
    "history": {
        "gnunet": [LONG],
        "taler": [LONG, "debian"],
        "base": [""],
        "arch": [LONG],
        "target": [""],
        "matrix": [TOO_LONG_NAME],
        "rounds": [LONG, "0"],
        "seed": [LONG],
        "extend": [LONG, "../x"],
        "iterations": [LONG],
        "repetitions": [LONG],
        "rsa_bits": [LONG],
        "warmup": [LONG],
        "max_time": [LONG],
        "ci_target": [LONG],
        "suite": [""],
        "cpus": [LONG],
        "fail_above": [LONG, "0.5", "nan"],
    },
    "archive": {"run_id": [LONG, "../x"], "out": [TOO_LONG_NAME], "results": [TOO_LONG_NAME]},
    "images": {"arch": [LONG], "target": [LONG], "matrix": [TOO_LONG_NAME]},
    "report": {
        "run": [LONG, "../x"],
        "results": [TOO_LONG_NAME],
        "out": [TOO_LONG_NAME],
        "target": [""],
        "arch": [LONG],
        "suite": [""],
        "style": [LONG],
        "unit": [LONG],
        "compare_bits": [LONG, "1"],
        "label_prefix": [LONG],
        "baseline": [LONG],
    },
    "bisect": {
        "gnunet": [LONG, "x.tar.gz", "git+file:///x@v1"],
        "good": [LONG],
        "bad": [LONG],
        "row": [LONG],
        "arch": [LONG],
        "target": [""],
        "matrix": [TOO_LONG_NAME],
        "metric": [LONG, "time"],
        "rsa_bits": [LONG, "2047"],
        "repetitions": [LONG, "-1"],
        "rounds": [LONG, "0", "2", "51"],
        "resume": [LONG, "../x"],
    },
    "doctor": {"arch": [LONG], "matrix": [TOO_LONG_NAME]},
    "clean": {"matrix": [TOO_LONG_NAME], "host": [LONG]},
    "ci_matrix": {
        "arch": [LONG],
        "target": [LONG],
        "matrix": [TOO_LONG_NAME],
        "metric": [LONG, "time,time"],
    },
    "publish": {
        "merge": [TOO_LONG_NAME, ",", "/nonexistent-archbench/*"],
        "store": [TOO_LONG_NAME],
        "branch": [LONG, "a b"],
        "commit": [LONG, "x;y"],
        "runner": [LONG, "a b", "${{ secrets.TOKEN }}"],
        "ci_url": [LONG, "http://x"],
        "out": [TOO_LONG_NAME],
        "summary": [TOO_LONG_NAME],
        "base_branch": [LONG, "`x`"],
        "fail_above": [LONG, "0"],
    },
    "import_": {
        "logs": [TOO_LONG_NAME],
        "setup": [TOO_LONG_NAME],
        "target": [LONG],
        "arch": [LONG, "amd64,arm64"],
        "run": [LONG],
        "results": [TOO_LONG_NAME],
        "cpu": ["\x1b]0;x\x07" + LONG],
        "cores": [LONG],
        "os": ["\x1b[2J" + LONG],
        "kernel": ["\x1b[2J" + LONG],
        "scheme": [LONG],
        "rsa_bits": [LONG],
    },
    "compare": {
        "run_a": [LONG],
        "run_b": [LONG],
        "results": [TOO_LONG_NAME],
        "out": [TOO_LONG_NAME],
        "target": [""],
        "arch": [LONG],
        "suite": [""],
        "confidence": [LONG, "1"],
        "threshold": [LONG, "-1"],
        "fail_above": [LONG, "0"],
        "between_runs": [LONG, "-0.1", "nan", "2"],
    },
}
"""Per task, per flag: values that must be refused with exit status 2."""

NOT_WALKED = {"report": {"baseline"}}
"""Flags whose value is checked against the results (exit 9, a report that cannot be
rendered): ``--baseline NAME`` names a machine of the selected runs."""


def _tasks() -> dict[str, Any]:
    return {name: getattr(TASKS, name) for name in BAD}


def _context(tmp_path: Path) -> Context:
    (tmp_path / "matrix.yml").write_text(GOOD_MATRIX, encoding="utf-8")
    store = ResultStore(tmp_path / "results")
    store.save(
        result(
            "amd64-trixie", "amd64", "x86_64", "c", [row("CS", "signing", [1, 2, 3])], run_id=RUN
        )
    )
    return Context(
        config=Config(
            overrides={
                "archbench": {
                    "matrix": str(tmp_path / "matrix.yml"),
                    "results": str(tmp_path / "results"),
                    "reports": str(tmp_path / "out"),
                    "work": str(tmp_path / "work"),
                }
            }
        )
    )


@pytest.fixture(autouse=True)
def _alarm() -> Iterator[None]:
    # A flag that reached an engine or a network would hang: end the test instead.
    signal.alarm(60)
    yield
    signal.alarm(0)


def test_every_flag_of_every_command_has_a_hostile_value() -> None:
    tasks = _tasks()
    assert set(tasks) == {
        n for n, t in vars(TASKS).items() if hasattr(t, "body") and callable(t.body)
    }
    for name, task in tasks.items():
        valued = {
            p.name
            for p in list(inspect.signature(task.body).parameters.values())[1:]
            if not isinstance(p.default, bool)
        }
        assert valued == set(BAD[name]), f"{name}: flags without a hostile value"


WALK = [
    (name, flag, value)
    for name, flags in BAD.items()
    for flag, values in flags.items()
    if flag not in NOT_WALKED.get(name, set())
    for value in values
]


@pytest.mark.parametrize(
    ("name", "flag", "value"),
    WALK,
    ids=[f"{n}-{f}-{i}" for i, (n, f, _) in enumerate(WALK)],
)
def test_a_refused_flag_exits_2_with_the_value_cut(
    name: str, flag: str, value: str, tmp_path: Path
) -> None:
    kwargs = {**REQUIRED.get(name, {}), flag: value}
    with pytest.raises(Exit) as info:
        getattr(TASKS, name)(_context(tmp_path), **kwargs)
    message = str(info.value.message)
    assert info.value.code == 2, message[:300]
    assert message.startswith("archbench: ")
    assert len(message) < 600, message[:300]
    assert "Traceback" not in message and "\x1b" not in message and "\x00" not in message


def test_fail_above_is_refused_like_every_other_flag(tmp_path: Path) -> None:
    with pytest.raises(Exit, match=r"--fail-above 'x'") as info:
        TASKS.compare(_context(tmp_path), run_a=RUN, run_b=RUN, fail_above="x")
    assert info.value.code == 2  # was 9, "a report cannot be rendered"


# --- pipes ------------------------------------------------------------------------


def _invoke_into_closed_pipe(args: list[str], settings: dict[str, Path]) -> tuple[int, str]:
    """``invoke ARGS`` writing into a pipe whose reader has gone away (``| head -c 0``):
    the exit status of invoke and its stderr.

    The read end is closed before invoke starts, so its first write meets EPIPE on any
    machine: a reader that reads a byte and then closes races the writer, and a writer
    whose whole output fits in the pipe's buffer wins that race on a busy machine.
    """
    env = {**os.environ}
    env.update({f"INVOKE_ARCHBENCH_{k.upper()}": str(v) for k, v in settings.items()})
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        invoke = subprocess.Popen(
            [sys.executable, "-m", "invoke", *args],
            cwd=REPO,
            env=env,
            stdout=write_end,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(write_end)
    assert invoke.stderr is not None
    err = invoke.stderr.read().decode()
    return invoke.wait(timeout=120), err


@pytest.mark.slow
def test_compare_into_a_closed_pipe_writes_its_files_and_exits_quietly(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    for run_id in (RUN, "20261130T220000Z-abcdef"):
        store.save(
            result(
                "amd64-trixie",
                "amd64",
                "x86_64",
                "c",
                [row("CS", "signing", [77_000 + i for i in range(40)])],
                run_id=run_id,
            )
        )
    out = tmp_path / "out"
    code, err = _invoke_into_closed_pipe(
        ["compare", RUN, "20261130T220000Z-abcdef", "--out", str(out)],
        {"results": tmp_path / "results"},
    )
    assert code == SIGPIPE_EXIT, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert {p.name for p in out.iterdir()} >= {
        f"compare-{RUN}-vs-20261130T220000Z-abcdef.tex",
        f"compare-{RUN}-vs-20261130T220000Z-abcdef.csv",
    }
    assert not (out / LOCK_FILE).exists()


@pytest.mark.slow
def test_import_into_a_closed_pipe_stores_the_results_whole(tmp_path: Path) -> None:
    log = tmp_path / "perf_crypto_rsa.log"
    log.write_text("".join(f"10x 2048-signing took {30 + i} ms\n" for i in range(20)))
    code, err = _invoke_into_closed_pipe(
        [
            "import",
            str(log),
            "--target=box",
            "--arch=amd64",
            "--cpu=c",
            "--cores=2",
            f"--run={RUN}",
        ],
        {"results": tmp_path / "results"},
    )
    assert code == SIGPIPE_EXIT, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    stored = json.loads((tmp_path / "results" / RUN / "box.json").read_text())
    assert len(stored["harness"]["rows"][0]["samples_ns"]) == 20
    assert not (tmp_path / "results" / LOCK_FILE).exists()


def test_a_lock_is_removed_when_its_holder_is_done(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with folder_lock(out, ReportError, "--out", print):
        assert (out / LOCK_FILE).is_file()
    assert list(out.iterdir()) == []
    # Taken again after removal: a new file, held again, removed again.
    with folder_lock(out, ReportError, "--out", print):
        pass
    assert list(out.iterdir()) == []


# --- second-round leftovers (kind 7) ---------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "said"),
    [
        (b"archbench:\n  results: [unclosed\n", "invoke.yaml: not valid YAML"),
        (b"- a\n- b\n", "expected a mapping of settings"),
        (b"archbench: {results: caf\xe9}\n", "not UTF-8"),
    ],
)
def test_a_broken_invoke_yaml_is_said_in_our_words(tmp_path: Path, text: bytes, said: str) -> None:
    (tmp_path / "tasks.py").write_bytes((REPO / "tasks.py").read_bytes())
    (tmp_path / "invoke.yaml").write_bytes(text)
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "--list"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("archbench: ") and said in done.stderr
    assert "Traceback" not in done.stderr


def test_the_matrix_may_come_from_a_pipe_read_once_and_bounded(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.write(write, GOOD_MATRIX.encode())
    os.close(write)
    m = matrix.load(Path(f"/dev/fd/{read}"))
    assert [t.name for t in m.targets] == ["amd64-trixie", "arm64-noble"]
    os.close(read)
    # A FIFO named as a results file is still refused (results are files, not streams).
    os.mkfifo(tmp_path / "t1.json")
    with pytest.raises(ResultsError, match="FIFO"):
        load(tmp_path / "t1.json")
