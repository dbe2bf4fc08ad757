"""Command-line values the tasks share: selections, architectures, blindsig overrides.

Every function checks a flag's value and raises an
:class:`archbench.errors.ArchbenchError` naming the flag, the value and what is
allowed; none reads a file or calls an engine.
"""

from __future__ import annotations

from collections.abc import Callable

from archbench.cli import flags
from archbench.errors import MatrixError, ReportError
from archbench.platforms import Arch


def split(value: str | None, flag: str = "") -> list[str]:
    """The comma-separated items of ``--flag``; ``[]`` (all) when the flag was not given.

    Raises:
        MatrixError: the flag was given empty (``--arch ''``, ``--target ,``).
    """
    # None: the flag was not given (all); an explicitly empty value is an error.
    return flags.selection(flag or "selection", value)


def archs(value: str | None) -> list[Arch]:
    """``--arch A,B`` as architectures; ``[]`` (all) when not given.

    Raises:
        MatrixError: an empty selection or an unknown architecture (the known ones named).
    """
    try:
        return [Arch.from_key(a) for a in split(value, "--arch")]
    except ValueError as exc:
        raise MatrixError(f"--arch: {exc}") from exc


def overrides(
    iterations: str | None,
    repetitions: str | None,
    rsa_bits: str | None,
    warmup: str | None = None,
    max_time: str | None = None,
    ci_target: str | None = None,
) -> dict[str, object]:
    """The blindsig settings the flags override for one run (only those given).

    Ranges: ``--iterations`` 1-100000, ``--repetitions`` 1-10000, ``--rsa-bits``
    1024-16384 each, ``--warmup`` 0-1000, ``--max-time`` 0 to 7 days in s,
    ``--ci-target`` 0-0.999 (a fraction of the median).

    Raises:
        MatrixError: a value that is not a number or lies outside its range, or
            a value the blindsig suite refuses (:func:`archbench.cli.flags.blindsig_overrides`).
    """
    out: dict[str, object] = {}
    if ci_target is not None:
        out["ci_target"] = flags.ci_target("--ci-target", ci_target)
    elif repetitions is not None:
        out["ci_target"] = None  # --repetitions N: exactly N, not adaptive
    if warmup is not None:
        out["warmup"] = flags.integer("--warmup", warmup, 0, 1000)
    if max_time is not None:
        out["max_time"] = flags.number("--max-time", max_time, 0, 7 * 86_400)
    if iterations is not None:
        out["iterations"] = flags.integer("--iterations", iterations, 1, 100_000)
    if repetitions is not None:
        out["repetitions"] = flags.integer("--repetitions", repetitions, 1, 10_000)
    if rsa_bits is not None:
        out["rsa_bits"] = [
            flags.integer("--rsa-bits", b, 1024, 16384) for b in split(rsa_bits, "--rsa-bits")
        ]
    flags.blindsig_overrides(out)
    return out


def number(flag: str, text: str, ok: Callable[[float], bool], allowed: str) -> float:
    """``--flag`` as a float, or a ReportError naming the flag, the value and what is allowed."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not ok(value):
        raise ReportError(f"--{flag} {text!r}: give {allowed}")
    return value
