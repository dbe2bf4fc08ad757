"""Command-line values: what each task was given, and the checks the tasks share.

``tasks.py`` builds one frozen object per task from the values invoke parsed
(:class:`BenchFlags`, :class:`ImagesFlags`, :class:`DoctorFlags`,
:class:`CleanFlags`, :class:`CiMatrixFlags`: strings as given, None when a flag
was not given) and hands it to the task's body, which checks it with the helpers
here and :mod:`archbench.inputs.flags` before anything is read or run. Every
check raises an :class:`archbench.errors.ArchbenchError` naming the flag, the
value and what is allowed; none reads a file or calls an engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from archbench.errors import MatrixError, ReportUsageError
from archbench.inputs import ci_target as check_ci_target
from archbench.inputs import integer, quote, real, selection
from archbench.platforms import Arch


@dataclass(frozen=True)
class BenchFlags:
    """``invoke bench``'s flags as invoke parsed them (None or ``""``: not given)."""

    arch: str | None = None
    target: str | None = None
    matrix: str = ""
    iterations: str | None = None
    repetitions: str | None = None
    rsa_bits: str | None = None
    rebuild: bool = False
    repeat: str | None = None
    cpuset: str | None = None
    warmup: str | None = None
    max_time: str | None = None
    resume: str = ""
    suite: str | None = None
    from_archive: str = ""
    metric: str | None = None
    ci_target: str | None = None
    cpus: str | None = None
    gnunet: str | None = None
    taler: str | None = None


@dataclass(frozen=True)
class HistoryFlags:
    """``invoke history``'s flags as invoke parsed them (None or ``""``: not given)."""

    arch: str | None = None
    target: str | None = None
    matrix: str = ""
    gnunet: str | None = None
    base: str | None = None
    taler: str | None = None
    rounds: str | None = None
    seed: str | None = None
    extend: str = ""
    iterations: str | None = None
    repetitions: str | None = None
    rsa_bits: str | None = None
    warmup: str | None = None
    max_time: str | None = None
    ci_target: str | None = None
    suite: str | None = None
    cpus: str | None = None
    fail_above: str | None = None


@dataclass(frozen=True)
class BisectFlags:
    """``invoke bisect``'s flags as invoke parsed them (None or ``""``: not given)."""

    gnunet: str | None = None
    good: str | None = None
    bad: str | None = None
    row: str | None = None
    arch: str | None = None
    target: str | None = None
    matrix: str = ""
    metric: str = "instructions"
    rsa_bits: str | None = None
    repetitions: str | None = None
    resume: str = ""


@dataclass(frozen=True)
class ImagesFlags:
    """``invoke images``'s flags as invoke parsed them."""

    arch: str | None = None
    target: str | None = None
    matrix: str = ""
    rebuild: bool = False


@dataclass(frozen=True)
class DoctorFlags:
    """``invoke doctor``'s flags as invoke parsed them."""

    arch: str | None = None
    fix: bool = False
    matrix: str = ""


@dataclass(frozen=True)
class CleanFlags:
    """``invoke clean``'s flags as invoke parsed them."""

    matrix: str = ""
    host: str | None = None


@dataclass(frozen=True)
class CiMatrixFlags:
    """``invoke ci-matrix``'s flags as invoke parsed them."""

    arch: str | None = None
    target: str | None = None
    matrix: str = ""


@dataclass(frozen=True)
class ReportFlags:
    """``invoke report``'s flags as invoke parsed them."""

    run: str | None = None
    all_runs: bool = False
    results: str = ""
    out: str = ""
    target: str | None = None
    arch: str | None = None
    suite: str | None = None
    reference: bool = False
    baseline: str = ""
    style: str = "thesis"
    unit: str = "ms"
    compare_bits: str | None = None
    plots: bool = True
    label_prefix: str = ""


@dataclass(frozen=True)
class CompareFlags:
    """``invoke compare``'s arguments and flags as invoke parsed them."""

    run_a: str
    run_b: str
    results: str = ""
    out: str = ""
    target: str | None = None
    arch: str | None = None
    suite: str | None = None
    confidence: str = "0.95"
    threshold: str = "0.05"
    fail_above: str | None = None


@dataclass(frozen=True)
class ImportFlags:
    """``invoke import``'s arguments and flags as invoke parsed them."""

    logs: str
    setup: str = ""
    target: str = ""
    arch: str | None = None
    run: str = ""
    results: str = ""
    cpu: str = ""
    cores: str | None = None
    os: str = ""
    kernel: str = ""
    scheme: str = ""
    rsa_bits: str | None = None


@dataclass(frozen=True)
class ArchiveFlags:
    """``invoke archive``'s argument and flags as invoke parsed them."""

    run_id: str
    out: str = ""
    tar: bool = False
    plots: bool = True
    results: str = ""


def split(value: str | None, flag: str = "") -> list[str]:
    """The comma-separated items of ``--flag``; ``[]`` (all) when the flag was not given.

    Raises:
        MatrixError: the flag was given empty (``--arch ''``, ``--target ,``).
    """
    # None: the flag was not given (all); an explicitly empty value is an error.
    return selection(flag or "selection", value)


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

    Whether the blindsig suite takes them (an RSA key size it refuses) is
    :func:`archbench.run.check_overrides`, which the caller applies next.

    Raises:
        MatrixError: a value that is not a number or lies outside its range.
    """
    out: dict[str, object] = {}
    if ci_target is not None:
        out["ci_target"] = check_ci_target("--ci-target", ci_target)
    elif repetitions is not None:
        out["ci_target"] = None  # --repetitions N: exactly N, not adaptive
    if warmup is not None:
        out["warmup"] = integer("--warmup", warmup, 0, 1000)
    if max_time is not None:
        out["max_time"] = real("--max-time", max_time, 0, 7 * 86_400)
    if iterations is not None:
        out["iterations"] = integer("--iterations", iterations, 1, 100_000)
    if repetitions is not None:
        out["repetitions"] = integer("--repetitions", repetitions, 1, 10_000)
    if rsa_bits is not None:
        out["rsa_bits"] = [
            integer("--rsa-bits", b, 1024, 16384) for b in split(rsa_bits, "--rsa-bits")
        ]
    return out


def number(flag: str, text: str, ok: Callable[[float], bool], allowed: str) -> float:
    """``--flag`` as a float, or a :class:`ReportUsageError` (exit 2, like every refused
    command-line value) naming the flag, the value (cut to a readable length) and what is
    allowed."""
    try:
        value = float(text)
    except (ValueError, TypeError):
        value = float("nan")
    if not ok(value):
        raise ReportUsageError(f"--{flag} {quote(str(text))}: give {allowed}")
    return value
