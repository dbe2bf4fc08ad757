"""Run every case of the hostile-input corpus (``hostile_cases.py``).

Each case must end in the archbench error it names, with the expected
fragment, the file or flag named, a short message (no formatted multi-MB
input), no traceback, no pydantic link and no raw control characters.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import socket
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from helpers import load_tasks
from hostile_cases import (
    ALIAS_BOMB,
    CASES,
    DEEP_JSON,
    DEEP_YAML,
    FIELD_TEMPLATES,
    GOOD_MATRIX,
    Case,
)
from invoke.config import Config
from invoke.context import Context
from invoke.exceptions import Exit

from archbench import archive, cli, errors, matrix, result, upstream
from archbench.platforms import Arch

RUN = "20261129T220000Z-abcdef"
MAX_MESSAGE = 4000


TASKS = load_tasks("archbench_tasks")


def _field_matrix(field: str, value: str) -> str:
    old, new = FIELD_TEMPLATES[field]
    assert old in GOOD_MATRIX, field
    return GOOD_MATRIX.replace(old, new.replace("{v}", json.dumps(value)), 1)


def _context(tmp_path: Path) -> Context:
    (tmp_path / "matrix.yml").write_text(GOOD_MATRIX, encoding="utf-8")
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


def run_case(case: Case, tmp_path: Path) -> tuple[str, int]:
    """Run one case; return (message, exit code) of the archbench error it raised."""
    expected: type[errors.ArchbenchError] = getattr(errors, case.error)
    try:
        if case.kind == "matrix-field":
            matrix.parse(_field_matrix(*case.input), "m.yml")
        elif case.kind == "matrix-bytes":
            path = tmp_path / "matrix.yml"
            path.write_bytes(case.input)
            matrix.load(path)
        elif case.kind == "results-bytes":
            path = tmp_path / RUN / "t1.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(case.input)
            result.load(path)
        elif case.kind == "manifest-bytes":
            path = tmp_path / RUN / result.MANIFEST_NAME
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(case.input)
            result.ResultStore(tmp_path).load_manifest(RUN)
        elif case.kind == "history-bytes":
            path = tmp_path / RUN / result.HISTORY_NAME
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(case.input)
            result.ResultStore(tmp_path).load_history(RUN)
        elif case.kind == "bisect-bytes":
            path = tmp_path / RUN / result.BISECT_NAME
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(case.input)
            result.ResultStore(tmp_path).load_bisect(RUN)
        elif case.kind == "setup-bytes":
            path = tmp_path / "setup.yml"
            path.write_bytes(case.input)
            upstream.load_setup(path, Arch.AMD64)
        elif case.kind == "log":
            path = tmp_path / "perf_crypto_rsa.log"
            path.write_text(case.input, encoding="utf-8")
            setup = upstream.parse_setup({"cpu_model": "c", "cores": 2}, "cli", Arch.AMD64)
            scans = upstream.scan_files([path])
            upstream.build_result(scans, setup, "t", Arch.AMD64, RUN)
        elif case.kind == "gnunet-string":
            matrix.parse_gnunet(case.input)
        elif case.kind == "special-file":
            kind, loader = case.input
            _load_special(kind, loader, tmp_path)
        elif case.kind == "archive-tar":
            path = tmp_path / "arc.tar"
            path.write_bytes(case.input)
            # As open_archive does: unpack, then verify what was unpacked.
            archive.verify(archive.extract_tar(path, tmp_path / "work"))
        elif case.kind == "settings":
            cli.resolve_settings(case.input, tmp_path)
        elif case.kind in ("flag", "resume"):
            name, kwargs = case.input if case.kind == "flag" else ("bench", {"resume": case.input})
            try:
                getattr(TASKS, name)(_context(tmp_path), **kwargs)
            except Exit as exc:
                return str(exc.message), int(exc.code)
            raise AssertionError(f"{case.id}: the task did not fail")
        else:
            raise AssertionError(f"unknown kind {case.kind}")
    except expected as exc:
        return str(exc), exc.exit_code
    raise AssertionError(f"{case.id}: accepted")


def _special(kind: str, path: Path) -> Path:
    """A FIFO, socket, directory, ``/dev/zero`` or 17 MiB sparse file at ``path``."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    elif kind == "dir":
        path.mkdir()
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with path.open("wb") as fh:
            fh.truncate(17 * 1024 * 1024)
    return path


def _load_special(kind: str, loader: str, tmp_path: Path) -> None:
    # An alarm, not a timeout of the test: a blocking open would otherwise hang pytest.
    signal.alarm(10)
    try:
        if loader == "results":
            result.load(_special(kind, tmp_path / "t1.json"))
        elif loader == "log":
            upstream.scan_files([_special(kind, tmp_path / "perf_crypto_rsa.log")])
        elif loader == "manifest":
            (tmp_path / RUN).mkdir()
            _special(kind, tmp_path / RUN / result.MANIFEST_NAME)
            result.ResultStore(tmp_path).load_manifest(RUN)
        elif loader == "setup":
            upstream.load_setup(_special(kind, tmp_path / "setup.yml"), Arch.AMD64)
        else:
            matrix.load(_special(kind, tmp_path / "matrix.yml"))
    finally:
        signal.alarm(0)


def _check(case: Case, message: str) -> None:
    assert case.expect in message, f"{case.id}: {message[:500]!r}"
    assert len(message) < MAX_MESSAGE, f"{case.id}: message of {len(message)} chars"
    assert "Traceback" not in message and "errors.pydantic.dev" not in message
    assert "\x00" not in message
    # Every line is a line of ours: no value smuggled a newline into the message.
    for line in message.splitlines()[1:]:
        assert line.startswith("  ") or len(message.splitlines()) == 1, f"{case.id}: {line!r}"


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the whole corpus; each case gets a fresh folder inside it."""
    return tmp_path_factory.mktemp("corpus")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_case_ends_in_our_error(case: Case, corpus_dir: Path) -> None:
    # A plain mkdtemp per case, not pytest's tmp_path: the corpus has 700+ cases.
    message, code = run_case(case, Path(tempfile.mkdtemp(dir=corpus_dir)))
    _check(case, message)
    expected: type[errors.ArchbenchError] = getattr(errors, case.error)
    if case.kind in ("flag", "resume"):
        assert message.startswith("archbench: ")
        assert code == expected.exit_code


@pytest.mark.slow
def test_corpus_size_and_tally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    handled = 0
    failed: list[str] = []
    for i, case in enumerate(CASES):
        case_dir = tmp_path / str(i)
        case_dir.mkdir()
        try:
            message, _ = run_case(case, case_dir)
            _check(case, message)
            handled += 1
        except AssertionError as exc:
            failed.append(f"{case.id}: {exc}")
    with capsys.disabled():
        print(f"\nhostile corpus: {handled} of {len(CASES)} cases handled")
    assert len(CASES) >= 400
    assert not failed, failed[:5]


def _measure(action: Any) -> tuple[float, int, int]:
    """(CPU seconds, tracemalloc peak bytes, growth of the process's max RSS in KiB).

    CPU time, not wall time: the bound is against unbounded work, and a busy machine
    (load 10 was seen) stretches wall time without the work growing."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    start = time.process_time()
    with contextlib.suppress(errors.ArchbenchError):
        action()
    elapsed = time.process_time() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before


@pytest.mark.parametrize(
    ("name", "data", "loader"),
    [
        ("alias bomb", ALIAS_BOMB, "matrix"),
        ("deep YAML", DEEP_YAML, "matrix"),
        ("deep JSON", DEEP_JSON, "results"),
        ("16 MiB JSON string", b'{"a": "' + b"\\n" * (8 * 1024 * 1024) + b'"}', "results"),
        pytest.param(
            "256 KiB YAML list", b"- 1\n" * (64 * 1024 - 1), "matrix", marks=pytest.mark.slow
        ),
        pytest.param(
            "256 KiB YAML scalar",
            b"version: " + b"a" * (256 * 1024 - 20),
            "matrix",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_worst_cases_are_bounded(
    name: str, data: bytes, loader: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "f"
    path.write_bytes(data)
    action = (lambda: matrix.load(path)) if loader == "matrix" else (lambda: result.load(path))
    elapsed, peak, rss = _measure(action)
    with capsys.disabled():
        print(f"\n{name}: {elapsed:.3f} s CPU, peak {peak / 1e6:.1f} MB traced, max RSS +{rss} KiB")
    assert elapsed < 10.0  # a shared 2-core VM; measured well under 2 s
    assert peak < 128 * 1024 * 1024
