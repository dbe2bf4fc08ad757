"""Project settings of the invoke tasks: ``invoke.yaml``'s ``archbench:`` keys, resolved.

Relative paths in ``invoke.yaml`` (and in ``INVOKE_ARCHBENCH_*``) start at the
project directory, so ``invoke`` run from a subdirectory finds the same matrix,
results and reports; paths given as flags start at the current directory, as a
shell's do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from archbench.errors import MatrixError
from archbench.inputs import load_yaml, quote, read_text

MAX_INVOKE_YAML: Final = 256 * 1024
"""invoke.yaml holds a few settings; a larger one is no settings file."""

_PATHS = {
    "matrix": "matrix.yml",
    "results": "results",
    "reports": "reports/out",
    "work": ".archbench/work",
}
"""Path settings and their defaults, relative to the project directory."""


@dataclass(frozen=True)
class Settings:
    """The ``archbench:`` settings of ``invoke.yaml``, paths resolved.

    Paths are strings as messages print them: relative to the current directory
    when they lie below it (``results``), else absolute. ``apt_proxy`` and
    ``build_jobs`` are the raw values; the commands that use them check them
    (:func:`archbench.images.resolve_apt_proxy`, :data:`archbench.cli.flags.BUILD_JOBS`).
    """

    matrix: str
    results: str
    reports: str
    work: str
    apt_proxy: str
    build_jobs: str


def resolve_settings(cfg: object, project_dir: Path) -> Settings:
    """``cfg`` (the ``archbench`` mapping of invoke's config) as :class:`Settings`.

    ``project_dir`` is the directory of ``tasks.py`` and ``invoke.yaml``; a
    missing key takes its default (``matrix.yml``, ``results``, ``reports/out``,
    ``.archbench/work``, no ``apt_proxy``, ``build_jobs`` 2).

    Raises:
        MatrixError: ``cfg`` is not a mapping, or a path setting is empty, blank,
            null or not a string (``INVOKE_ARCHBENCH_REPORTS=`` from an unset shell
            variable would otherwise mean the project directory itself).
    """
    if not isinstance(cfg, Mapping):
        raise MatrixError(
            f"invoke.yaml: archbench: must be a mapping of settings (results: results, …), "
            f"got {type(cfg).__name__} {quote(cfg, 40)}"
        )
    paths = {key: _path_setting(cfg, key, default) for key, default in _PATHS.items()}
    paths = {
        key: value if Path(value).is_absolute() else from_project(value, project_dir)
        for key, value in paths.items()
    }
    return Settings(
        **paths,
        apt_proxy=str(cfg.get("apt_proxy", "") or ""),
        build_jobs=str(cfg.get("build_jobs", 2)),
    )


def _path_setting(cfg: Mapping[str, object], key: str, default: str) -> str:
    if key not in cfg:
        return default
    value = cfg[key]
    if not isinstance(value, str) or not value.strip():
        env = f"INVOKE_ARCHBENCH_{key.upper()}"
        raise MatrixError(
            f"setting 'archbench.{key}' is {quote(value, 40)}: a path setting must name a "
            f"path (default {default!r}); set it in invoke.yaml or {env}, or unset {env}"
        )
    return value


def from_project(value: str, project_dir: Path) -> str:
    """``value`` relative to ``project_dir``, written relative to the current
    directory when it lies below it (so messages keep reading ``results``)."""
    path = project_dir / value
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def check_invoke_yaml(path: Path) -> None:
    """Refuse an ``invoke.yaml`` invoke itself would end in a traceback on.

    invoke reads the project's ``invoke.yaml`` after loading ``tasks.py`` and before
    any task runs, with PyYAML's own loader; ``tasks.py`` calls this first, so a broken
    file is said in our words. A missing file is fine (the defaults apply).

    Raises:
        MatrixError: not UTF-8, not YAML, too large, or not a mapping of settings; the
            message names the file, where, and what to do.
    """
    if not path.exists() and not path.is_symlink():
        return
    text = read_text(path, MatrixError, "invoke's settings", MAX_INVOKE_YAML)
    data = load_yaml(text, str(path), MatrixError)
    if data is not None and not isinstance(data, dict):
        raise MatrixError(
            f"{path}: expected a mapping of settings (archbench: {{results: ...}}), got "
            f"{quote(data)}; fix the file or remove it to use the defaults"
        )
