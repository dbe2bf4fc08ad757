"""The Setup box of an import: the setup YAML (or command-line fields) naming the machine.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from archbench.errors import MatrixError
from archbench.inputs import did_you_mean, load_yaml, problem, read_text
from archbench.platforms import Arch
from archbench.result import Setup


class SetupFile(BaseModel):
    """The setup YAML of an import: the machine the logs were recorded on.

    Only ``cpu_model`` and ``cores`` are required; ``machine`` (``uname -m``)
    defaults to the one of ``--arch``, the rest to ``unknown``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_model: StrictStr = Field(min_length=1)
    cores: StrictInt = Field(ge=1, le=65_536)
    machine: StrictStr | None = None
    kernel: StrictStr = "unknown"
    os: StrictStr = "unknown"
    packages: dict[StrictStr, StrictStr | None] = Field(default_factory=dict)
    """Package -> version as the distribution names it (``libgnunetutil``, ``libsodium``…)."""
    gnunet_version: StrictStr | None = None
    gcc_version: StrictStr | None = None


SETUP_KEYS: Final = tuple(SetupFile.model_fields)


def _setup_problem(err: dict[str, Any]) -> str:
    loc = [str(p) for p in err["loc"]]
    where = ".".join(loc) or "<top level>"
    if err["type"] == "extra_forbidden":
        key = loc[-1]
        hint = did_you_mean(key, SETUP_KEYS)
        return f"  {where}: unknown key {key!r}; allowed: {', '.join(SETUP_KEYS)}{hint}"
    if err["type"] == "missing":
        return f"  {where}: required key missing"
    msg = problem(err)
    if err["type"] == "string_type" and isinstance(err.get("input"), int | float):
        # YAML reads 0.19 and 1.10 as numbers; versions must be quoted.
        msg = msg.removesuffix(")") + ": write it in quotes)"
    return f"  {where}: {msg}"


def resolve_machine(setup_machine: str | None, arch: Arch | None, source: str) -> str:
    """The ``uname -m`` name to store: ``setup_machine``, or ``arch``'s when unknown.

    Raises:
        MatrixError: ``setup_machine`` is not a machine of ``arch``; the
            message names ``source``.
    """
    if setup_machine is None or setup_machine == "unknown":
        return sorted(arch.uname_machines)[0] if arch is not None else "unknown"
    if arch is not None:
        try:
            matches = Arch.from_machine(setup_machine) is arch
        except ValueError:
            matches = False
        if not matches:
            raise MatrixError(
                f"{source}: machine {setup_machine!r} does not match --arch {arch.key} "
                f"(whose uname -m prints {' or '.join(sorted(arch.uname_machines))}); "
                "fix 'machine' or --arch"
            )
    return setup_machine


def parse_setup(data: object, source: str, arch: Arch | None = None) -> Setup:
    """Validate setup fields (a YAML mapping or the command line's) into a :class:`Setup`.

    With ``arch``, a missing ``machine`` becomes its ``uname -m`` name and a
    given one must belong to it.

    Raises:
        MatrixError: not a mapping, an unknown key (with "did you mean …?"),
            a missing ``cpu_model`` or ``cores``, a wrong type, or a machine
            of another architecture; the message names ``source`` and keys.
    """
    if not isinstance(data, dict):
        raise MatrixError(
            f"{source}: expected a mapping with {', '.join(SETUP_KEYS)}, got {type(data).__name__}"
        )
    try:
        parsed = SetupFile.model_validate(data)
    except ValidationError as exc:
        lines = [_setup_problem(dict(e)) for e in exc.errors()]
        raise MatrixError(
            f"{source}: invalid setup ({exc.error_count()} problem(s)):\n" + "\n".join(lines)
        ) from exc
    return Setup(
        cpu_model=parsed.cpu_model,
        cores=parsed.cores,
        machine=resolve_machine(parsed.machine, arch, source),
        kernel=parsed.kernel,
        os=parsed.os,
        packages=dict(parsed.packages),
        gnunet_version=parsed.gnunet_version,
        gcc_version=parsed.gcc_version,
    )


def load_setup(
    path: Path, arch: Arch | None = None, overrides: Mapping[str, object] | None = None
) -> Setup:
    """Read a setup YAML file (keys of :class:`SetupFile`); ``overrides`` replace its keys.

    Raises:
        MatrixError: the file is unreadable, not YAML, has duplicate keys, or
            fails :func:`parse_setup`.
    """
    text = read_text(path, MatrixError, "the setup file", 256 * 1024)
    data = load_yaml(text, str(path), MatrixError)
    if overrides and isinstance(data, dict):
        data = {**data, **overrides}
    return parse_setup(data, str(path), arch)
