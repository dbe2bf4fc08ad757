"""Scanned upstream logs as one ``archbench-result``, marked as reference data.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from archbench.errors import MatrixError, ResultsError
from archbench.inputs import describe_problems
from archbench.platforms import Arch
from archbench.result import (
    HarnessDocument,
    Parameters,
    Reference,
    Result,
    Setup,
    TargetInfo,
)
from archbench.upstream.gnunet_log import LogScan, build_rows
from archbench.upstream.setup_file import resolve_machine

HARNESS_VERSION: Final = "imported"
"""``harness_version`` of every imported result."""

PROFILE: Final = "imported"
"""``target.profile`` of every imported result: no image profile built it."""

NOTES: Final = (
    "values truncated toward zero; uncertainty_ns is one printed unit "
    "(one unit of the next smaller unit for values below 5, which GNUnet prints "
    "in that unit only when exact)"
)
"""The caveat every imported result carries in ``reference.notes``."""

NAME_PATTERN: Final = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
"""Target names and run ids become file and directory names (as in matrix.yml)."""


def _check_name(value: str, what: str) -> None:
    if not NAME_PATTERN.match(value) or len(value) > 64:
        raise MatrixError(
            f"{what} {value!r}: use lower-case letters, digits, '.', '_' and '-' "
            "(it becomes a file name), at most 64 characters"
        )


def _enumerate(words: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def build_result(
    scans: Sequence[LogScan], setup: Setup, target: str, arch: Arch, run_id: str
) -> Result:
    """The ``archbench-result`` of scanned logs, marked as reference data.

    ``reference.source`` lists the files, ``citation`` the tools
    (``imported from perf_crypto_rsa output``), ``notes`` the truncation
    caveat and where test_helper key sizes came from. A ``machine`` of
    ``unknown`` becomes the ``uname -m`` name of ``arch``.

    Raises:
        MatrixError: ``target`` or ``run_id`` is not a valid name, or the
            setup's machine is of another architecture.
        ResultsError: ``scans`` is empty.
    """
    _check_name(target, "target name")
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", run_id):
        raise MatrixError(
            f"run id {run_id!r}: use letters, digits, '.', '_' and '-' (it becomes a directory)"
        )
    if not scans:
        raise ResultsError("no log to import; name one or more saved outputs")
    machine = resolve_machine(setup.machine, arch, "setup")
    if machine != setup.machine:
        setup = setup.model_copy(update={"machine": machine})
    try:
        return _result(scans, setup, target, arch, run_id)
    except ValidationError as exc:
        raise ResultsError(f"cannot store the import: {describe_problems(exc)}") from exc


def _result(scans: Sequence[LogScan], setup: Setup, target: str, arch: Arch, run_id: str) -> Result:
    rows = build_rows(m for s in scans for m in s.measurements)
    tools = list(dict.fromkeys(t for s in scans for t in s.tools))
    notes = " ".join([NOTES + ".", *(n for s in scans for n in s.notes)])
    return Result(
        run_id=run_id,
        target=TargetInfo(
            name=target,
            arch=arch.key,
            platform=arch.platform,
            base=setup.os,
            profile=PROFILE,
        ),
        reference=Reference(
            source=", ".join(Path(s.source).name for s in scans),
            kind="imported",
            citation=f"imported from {_enumerate(tools)} output",
            notes=notes,
        ),
        harness=HarnessDocument(
            format="archbench-harness",
            version=1,
            harness_version=HARNESS_VERSION,
            started_at="unknown",
            duration_s=0.0,
            parameters=Parameters(
                iterations=max(r.ops_per_block for r in rows),
                repetitions=max(len(r.samples_ns) for r in rows),
                rsa_bits=tuple(sorted({r.key_bits for r in rows if r.key_bits is not None})),
            ),
            setup=setup,
            rows=tuple(rows),
        ),
    )
