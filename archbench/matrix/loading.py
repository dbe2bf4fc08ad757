"""Reading matrix.yml: bounded, strict YAML into a validated :class:`Matrix`, or one message.

Loading rejects, before anything is built: unknown keys (with "did you
mean …?"), wrong types, unknown architectures, bases or profiles, and
duplicate target names or YAML keys. A pydantic ValidationError becomes the
message of one :class:`~archbench.errors.MatrixError` (:func:`explain`): the
file, then one line per problem naming its key path
(``targets[1] (riscv64-trixie).arch``), an unknown key with the keys allowed
where it stands and "did you mean …?".

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from archbench.errors import MatrixError
from archbench.inputs import decode, did_you_mean, load_yaml, problem, quote, read_bytes
from archbench.matrix.defaults import explicit_keys, merge_defaults
from archbench.matrix.gnunet import FIELDS as GNUNET_FIELDS
from archbench.matrix.gnunet import TALER_FIELDS
from archbench.matrix.model import Base, Host, Matrix, Profile, Target, Tls
from archbench.suites import DEFAULT_SUITES, REGISTRY, SUITE_NAMES, Suites

MATRIX_VERSION = 1
MAX_MATRIX_BYTES: Final = 256 * 1024


def parse(text: str, source: str = "matrix.yml", base_dir: Path | None = None) -> Matrix:
    """Parse matrix YAML text into a validated :class:`Matrix`.

    Target suites not given fall back to ``defaults``; a target's own suite
    settings override the default per key. Relative paths in ``gnunet:`` are
    relative to ``base_dir``; by default the folder of ``source`` when it names a
    file, else the current directory (``source`` may be a label, such as a
    resumed run's ``… (as of run …)``: pass the folder of its matrix file).

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
        matrix = Matrix.model_validate(
            merge_defaults(data, defaults),
            context={"base_dir": str(base_dir or _folder(source))},
        )
    except ValidationError as exc:
        raise MatrixError(explain(exc, data, source)) from exc
    matrix._explicit = explicit_keys(data)
    return matrix


def _folder(source: str) -> Path:
    """The folder of the matrix file ``source``, or the current directory for a label."""
    try:
        return Path(source).parent if Path(source).is_file() else Path.cwd()
    except (OSError, ValueError):  # a label too long for a path, or holding NUL
        return Path.cwd()


def load(path: Path) -> Matrix:
    """Read and validate a matrix file.

    Raises:
        MatrixError: the file is missing or invalid (see :func:`parse`).
    """
    return parse(read_matrix_text(path), str(path), path.parent)


def read_matrix_text(path: Path) -> str:
    """The text of a matrix file: at most 256 KiB of UTF-8 (the shipped one has 4 KiB).

    A pipe is read too (``--matrix <(generate-matrix)``), once, bounded alike.

    Raises:
        MatrixError: unreadable, too large or not UTF-8; the message names the file.
    """
    # A pipe too (--matrix <(...)), read once here: the text travels from here on.
    data = read_bytes(path, MatrixError, "the matrix", MAX_MATRIX_BYTES, pipes=True)
    return decode(data, str(path), MatrixError, "the matrix")


# ---------------------------------------------------------------- explaining

_MAX_PROBLEMS: Final = 20
"""Problems listed in one message; the rest are counted."""


def _plain(key: str) -> str:
    """A key or name for a message: as is when plain, else quoted and cut short."""
    return key if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", key) else quote(key, 40)


def _key_path(loc: Sequence[str | int], data: Any) -> str:
    """Render a pydantic location as ``targets[1] (name).suites.blindsig``."""
    parts: list[str] = []
    node = data
    for item in loc:
        if isinstance(item, int):
            label = f"[{item}]"
            if isinstance(node, list) and item < len(node):
                node = node[item]
                if isinstance(node, dict) and isinstance(node.get("name"), str):
                    label += f" ({_plain(node['name'])})"
            parts.append(label)
        else:
            if item in {"function-after", "function-before"} or "[" in item:
                continue
            parts.append(("." if parts else "") + _plain(item))
            node = node.get(item) if isinstance(node, dict) else None
    return "".join(parts) or "<top level>"


_FIELDS: dict[str, Sequence[str]] = {
    "": list(Matrix.model_fields),
    "defaults": list(SUITE_NAMES),
    "emulated_defaults": list(SUITE_NAMES),
    "suites": list(SUITE_NAMES),
    **{s.name: list(s.settings.model_fields) for s in REGISTRY},
    **GNUNET_FIELDS,
    **TALER_FIELDS,
    "bases": list(Base.model_fields),
    "profiles": list(Profile.model_fields),
    "hosts": list(Host.model_fields),
    "tls": list(Tls.model_fields),
    "targets": list(Target.model_fields),
}


def _allowed_keys(loc: Sequence[str | int]) -> Sequence[str]:
    names = [p for p in loc[:-1] if isinstance(p, str)]
    # A key inside bases.<name> or profiles.<name> is two strings deep.
    for depth in range(len(names), 0, -1):
        parent = names[depth - 1]
        if parent in _FIELDS:
            return _FIELDS[parent]
        if depth >= 2 and names[depth - 2] in ("bases", "profiles", "hosts"):
            return _FIELDS[names[depth - 2]]
    return _FIELDS[""]


def explain(err: ValidationError, data: Any, source: str, prefix: tuple[str, ...] = ()) -> str:
    """The message of a :class:`~archbench.errors.MatrixError` for ``err``.

    ``data`` is the YAML as loaded (for target names in key paths), ``source``
    the file name the message starts with, ``prefix`` the key path ``err`` was
    raised under (``("defaults",)`` when the defaults were validated alone).
    At most 20 problems are listed, then how many more there are.
    """
    lines = [f"{source}: invalid matrix ({err.error_count()} problem(s)):"]
    for e in err.errors()[:_MAX_PROBLEMS]:
        loc = [*prefix, *e["loc"]]
        if e["type"] == "extra_forbidden":
            key = str(loc[-1])
            allowed = _allowed_keys(loc)
            where = _key_path(loc, data)
            lines.append(
                f"  {where}: unknown key {quote(key)}; allowed: {', '.join(allowed)}"
                + did_you_mean(key[:100], allowed)
            )
            continue
        msg = problem(e)
        lines.append(f"  {_key_path(loc, data)}: {msg}" if loc else f"  {msg}")
    if err.error_count() > _MAX_PROBLEMS:
        lines.append(f"  … and {err.error_count() - _MAX_PROBLEMS} more")
    return "\n".join(lines)
