"""Reading documents: the harness's stdout and stored results files, validated.

Both go through the same checks: bounded reading and parsing
(:func:`archbench.inputs.read_text`, :func:`archbench.inputs.load_json`), the
``format``/``version`` header (an unknown version is refused with what to do),
then the models, whose first problem is named with its key
(:mod:`archbench.inputs.messages`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from archbench.errors import HarnessError, ResultsError
from archbench.inputs import decode, load_json, location, problem, quote, read_bytes
from archbench.result.document import HARNESS_FORMAT, HARNESS_VERSION, HarnessDocument
from archbench.result.integrity import DIGEST_KEY, check_digest
from archbench.result.model import RESULT_FORMAT, RESULT_VERSION, Result, migrate

MAX_RESULT_BYTES: Final = 64 * 1024 * 1024


def _check_header(data: Any, fmt: str, version: int, source: str, fix: str) -> None:
    """Refuse ``data`` unless it is an object of format ``fmt`` and version ``version``.

    Raises:
        ValueError: naming ``source``, the value found and, for a version, ``fix``.
    """
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}")
    if data.get("format") != fmt:
        raise ValueError(f"{source}: 'format' is {quote(data.get('format'))}, expected {fmt!r}")
    if data.get("version") != version:
        raise ValueError(
            f"{source}: {fmt} version {quote(data.get('version'))} is not supported "
            f"(this archbench reads version {version}); {fix}"
        )


def _describe(err: ValidationError) -> str:
    """The first of ``err``'s problems, in our words, with its key and the problem count."""
    first = err.errors()[0]
    path = location(first["loc"])
    return f"at '{path}': {problem(first)} ({err.error_count()} problem(s) in all)"


def parse_harness_output(stdout: str, source: str = "harness stdout") -> HarnessDocument:
    """Parse and validate the harness's one JSON document.

    Raises:
        HarnessError: not JSON, wrong format/version, or a field that breaks
            the contract in ``harness/CONTRACT.md``.
    """
    try:
        data = load_json(stdout, source, HarnessError)
        _check_header(
            data,
            HARNESS_FORMAT,
            HARNESS_VERSION,
            source,
            "rebuild the image so the harness matches this archbench (invoke images)",
        )
        return HarnessDocument.model_validate(data)
    except HarnessError as exc:
        tail = stdout.strip()[-300:]
        detail = str(exc).removeprefix(f"{source}: ")
        raise HarnessError(
            f"{source}: not a JSON document ({detail}); output ended: {tail!r}"
        ) from exc
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            raise HarnessError(f"{source}: {_describe(exc)}") from exc
        raise HarnessError(str(exc)) from exc


def load(path: Path) -> Result:
    """Read one results file (a regular file of at most :data:`MAX_RESULT_BYTES`).

    Raises:
        ResultsError: the file is unreadable, not a regular file, not JSON, of
            another format or an unsupported version (the message says which
            version this archbench reads and how to proceed), fails validation
            (the message names the file and the key), or its digest does not match
            its content (:mod:`archbench.result.integrity`).
    """
    return load_checked(path)[0]


def load_checked(path: Path) -> tuple[Result, str | None]:
    """:func:`load`, and the file's digest once checked (None: a file without one).

    Raises:
        ResultsError: as :func:`load`.
    """
    return parse_checked(read_bytes(path, ResultsError, "the results file", MAX_RESULT_BYTES), path)


def parse_result(data: bytes, path: Path) -> Result:
    """The result in ``data``, the bytes of the results file ``path`` (named in messages).

    Raises:
        ResultsError: as :func:`load`, for everything after reading.
    """
    return parse_checked(data, path)[0]


def parse_checked(data: bytes, path: Path) -> tuple[Result, str | None]:
    """:func:`parse_result`, and the file's digest once checked against its content
    (:func:`archbench.result.integrity.check_digest`; None: the file has none).

    Raises:
        ResultsError: as :func:`load`, for everything after reading.
    """
    text = decode(data, str(path), ResultsError, "the results file")
    raw = load_json(text, str(path), ResultsError)
    # The digest is checked after the model: a value the model refuses is named by its
    # key (the more precise message); an edit the model accepts is caught by the digest.
    parsed = {k: v for k, v in raw.items() if k != DIGEST_KEY} if isinstance(raw, dict) else raw
    try:
        parsed = migrate(parsed)
        _check_header(
            parsed,
            RESULT_FORMAT,
            RESULT_VERSION,
            str(path),
            "version 1 files are read too; use the archbench release that wrote it,"
            " or re-measure with 'invoke bench'",
        )
        result = Result.model_validate(parsed)
    except ValidationError as exc:
        raise ResultsError(f"{path}: {_describe(exc)}") from exc
    except ValueError as exc:
        raise ResultsError(str(exc)) from exc
    return result, check_digest(raw, str(path))
