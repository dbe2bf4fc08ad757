"""The files of ``invoke import``: which logs, their text, and the import in one call.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

from archbench.errors import ResultsError
from archbench.platforms import Arch
from archbench.result import Result, Scheme, Setup
from archbench.upstream.gnunet_log import LogScan, scan_log
from archbench.upstream.imported_result import build_result


def read_log(path: Path) -> str:
    """A log's text: UTF-8, or Latin-1 for a log saved in a legacy locale.

    Raises:
        ResultsError: the file cannot be read.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read the log: {exc.strerror}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # "µs" is b"\xb5s" in Latin-1; every byte decodes, so this never fails.
        return data.decode("latin-1")


def log_paths(spec: str) -> list[Path]:
    """The files of a comma-separated list whose items may be glob patterns (``logs/*.log``).

    A pattern is expanded (sorted) only when no file has its literal name.

    Raises:
        ResultsError: the list is empty or a pattern matches no file.
    """
    paths: list[Path] = []
    for item in (i.strip() for i in spec.split(",")):
        if not item:
            continue
        if any(ch in item for ch in "*?[") and not Path(item).exists():
            matches = sorted(glob.glob(item))
            if not matches:
                raise ResultsError(f"{item}: no file matches this pattern")
            paths.extend(Path(m) for m in matches)
        else:
            paths.append(Path(item))
    if not paths:
        raise ResultsError("no log to import; name one or more saved outputs")
    return paths


def scan_files(
    paths: Sequence[Path], *, scheme: Scheme | None = None, rsa_bits: int | None = None
) -> list[LogScan]:
    """:func:`scan_log` of each file, in order.

    Raises:
        ResultsError: no file, a file named twice, or any file fails
            :func:`read_log` or :func:`scan_log`.
    """
    if not paths:
        raise ResultsError("no log to import; name one or more saved outputs")
    seen: dict[Path, Path] = {}
    for path in paths:
        resolved = path.resolve()
        if resolved in seen:
            raise ResultsError(
                f"{path}: named twice (also as {seen[resolved]}); its samples would count twice"
            )
        seen[resolved] = path
    return [scan_log(read_log(p), str(p), scheme=scheme, rsa_bits=rsa_bits) for p in paths]


def import_logs(
    paths: Sequence[Path],
    setup: Setup,
    target: str,
    arch: Arch,
    run_id: str,
    *,
    scheme: Scheme | None = None,
    rsa_bits: int | None = None,
) -> Result:
    """Read saved upstream logs into one result: :func:`scan_files`, then :func:`build_result`.

    Raises:
        ResultsError: a log is unreadable, names no known timing, or its
            test_helper scheme or key size is unknown or contradicted.
        MatrixError: an invalid target name or run id, or a machine of
            another architecture.
    """
    return build_result(
        scan_files(paths, scheme=scheme, rsa_bits=rsa_bits), setup, target, arch, run_id
    )
