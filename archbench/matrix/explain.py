"""A pydantic ValidationError of matrix.yml as archbench's message: key paths, allowed keys.

Every problem is one line naming the key path (``targets[1] (riscv64-trixie).arch``);
an unknown key lists the keys allowed where it stands, with "did you mean …?".

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from pydantic import ValidationError

from archbench.inputs import did_you_mean, problem, quote
from archbench.matrix.hosts import Host, Tls
from archbench.matrix.model import Base, Matrix, Profile, Recipe, Source, Target
from archbench.suites import REGISTRY, SUITE_NAMES

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
    "recipe": list(Recipe.model_fields),
    "gnunet": list(Source.model_fields),
    "exchange": list(Source.model_fields),
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
