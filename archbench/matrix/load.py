"""Reading matrix.yml: bounded, strict YAML into a validated :class:`Matrix`.

Loading rejects, before anything is built: unknown keys (with "did you
mean …?"), wrong types, unknown architectures, bases or profiles, and
duplicate target names or YAML keys. Every message names the file and the
key path (``targets[1] (riscv64-trixie).arch``) and the allowed values
(:mod:`archbench.matrix.explain`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from pydantic import ValidationError

from archbench.errors import MatrixError
from archbench.inputs import load_yaml, read_text
from archbench.matrix.defaults import merge_defaults
from archbench.matrix.emulated import explicit_keys
from archbench.matrix.explain import explain
from archbench.matrix.model import Matrix
from archbench.suites import DEFAULT_SUITES, Suites

MATRIX_VERSION = 1
MAX_MATRIX_BYTES: Final = 256 * 1024


def parse(text: str, source: str = "matrix.yml") -> Matrix:
    """Parse matrix YAML text into a validated :class:`Matrix`.

    Target suites not given fall back to ``defaults``; a target's own suite
    settings override the default per key.

    Raises:
        MatrixError: YAML syntax error, duplicate key, or any schema problem;
            the message names ``source``, the key path and the allowed values.
    """
    data = load_yaml(text, source, MatrixError)
    if not isinstance(data, dict):
        raise MatrixError(f"{source}: expected a mapping with version, bases, profiles, targets")
    try:
        # Defaults are checked on their own first so that one typo there is
        # reported once, not once per target that inherits it.
        defaults = Suites.model_validate(data["defaults"]) if "defaults" in data else DEFAULT_SUITES
    except ValidationError as exc:
        raise MatrixError(explain(exc, data, source, prefix=("defaults",))) from exc
    try:
        matrix = Matrix.model_validate(merge_defaults(data, defaults))
    except ValidationError as exc:
        raise MatrixError(explain(exc, data, source)) from exc
    matrix._explicit = explicit_keys(data)
    return matrix


def load(path: Path) -> Matrix:
    """Read and validate a matrix file.

    Raises:
        MatrixError: the file is missing or invalid (see :func:`parse`).
    """
    return parse(read_matrix_text(path), str(path))


def read_matrix_text(path: Path) -> str:
    """The text of a matrix file: at most 256 KiB of UTF-8 (the shipped one has 4 KiB).

    Raises:
        MatrixError: unreadable, too large or not UTF-8; the message names the file.
    """
    return read_text(path, MatrixError, "the matrix", MAX_MATRIX_BYTES)
