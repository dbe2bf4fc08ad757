"""Values given on the command line, checked before anything runs: numbers, selections, CPU sets.

invoke hands tasks strings (or ints it converted itself); each helper here
turns one flag's text into a value or raises :class:`MatrixError` naming the
flag, what was given (cut short) and what is allowed, never a ``ValueError``
traceback. An explicitly empty selection (``--arch ''``) is an error, not
"everything": only an absent flag means all. A resumed run's ``run.json`` and
``invoke.yaml`` are checked with the same helpers (``flag`` then names the file
and key).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Final

from archbench.errors import MatrixError
from archbench.inputs.messages import quote

CPUSET: Final = re.compile(r"[0-9]{1,4}(?:-[0-9]{1,4})?(?:,[0-9]{1,4}(?:-[0-9]{1,4})?)*")
"""Docker's cpuset syntax: ``1``, ``0-1``, ``0,2-3``."""


def integer(flag: str, value: object, low: int, high: int) -> int:
    """``value`` (text or int from invoke) as a whole number in ``[low, high]``.

    Raises:
        MatrixError: not a whole number, or out of range.
    """
    if isinstance(value, bool):
        raise MatrixError(f"{flag}: expected a whole number from {low} to {high}, got {value!r}")
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip()
        if not re.fullmatch(r"[+-]?[0-9]{1,18}", text):
            raise MatrixError(
                f"{flag}: {quote(str(value))} is not a whole number; give one from {low} to {high}"
            )
        number = int(text)
    if not low <= number <= high:
        raise MatrixError(f"{flag}: {number} is out of range; give a number from {low} to {high}")
    return number


def real(flag: str, value: object, low: float, high: float) -> float:
    """``value`` as a finite number with ``low < value <= high``.

    Raises:
        MatrixError: not a number, not finite, or out of range.
    """
    try:
        result = float(str(value).strip()) if not isinstance(value, bool) else math.nan
    except ValueError:
        result = math.nan
    if not math.isfinite(result):
        raise MatrixError(f"{flag}: {quote(str(value))} is not a finite number")
    if not low < result <= high:
        raise MatrixError(
            f"{flag}: {result:g} is out of range; give a number above {low:g} and at most {high:g}"
        )
    return result


CI_TARGET_OFF: Final = "off"
"""``--ci-target off``: fixed repetitions for one run, whatever the matrix says."""


def ci_target(flag: str, value: object) -> float | None:
    """``--ci-target``: a fraction in (0, 0.999] (0.02 = ±2 %), or ``off`` (None).

    Raises:
        MatrixError: neither ``off`` nor a fraction in range.
    """
    if isinstance(value, str) and value.strip().lower() == CI_TARGET_OFF:
        return None
    try:
        return real(flag, value, 0, 0.999)
    except MatrixError as exc:
        raise MatrixError(
            f"{exc}; give a fraction such as 0.02 (±2 %), or {CI_TARGET_OFF!r} for fixed"
            " repetitions"
        ) from None


def selection(flag: str, value: str | None) -> list[str]:
    """The comma-separated items of a selection flag; ``None`` (flag absent) gives ``[]``.

    Raises:
        MatrixError: the flag was given but names nothing (``--arch ''``,
            ``--target ,``): that would silently mean "all".
    """
    if value is None:
        return []
    items = [v.strip() for v in str(value).split(",") if v.strip()]
    if not items:
        raise MatrixError(
            f"{flag}: empty selection {quote(str(value))}; name at least one, "
            f"or leave {flag} out to mean all"
        )
    return items


def cpuset(flag: str, value: str | None) -> str | None:
    """A Docker cpuset (``1``, ``0-1``, ``0,2-3``), or None when absent.

    Raises:
        MatrixError: empty or not in cpuset syntax, or a range running backwards.
    """
    if value is None:
        return None
    text = str(value).strip()
    if not CPUSET.fullmatch(text):
        raise MatrixError(
            f"{flag}: {quote(str(value))} is not a CPU set; write CPUs as Docker does: "
            "1, 0-1 or 0,2-3"
        )
    for part in text.split(","):
        first, _, last = part.partition("-")
        if last and int(last) < int(first):
            raise MatrixError(f"{flag}: range {part} runs backwards; write {last}-{first}")
    return text


def cpus_of(cpus: str) -> set[int]:
    """The CPU numbers of a cpuset already checked by :func:`cpuset` (``0,2-3`` -> {0, 2, 3})."""
    out: set[int] = set()
    for part in cpus.split(","):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def check_cpuset_fits(cpus: str, ncpu: int, where: str) -> None:
    """Refuse a cpuset naming CPUs the engine does not have (``ncpu``: Docker's NCPU).

    ``ncpu`` <= 0 means unknown: nothing is checked.

    Raises:
        MatrixError: a CPU number is ``ncpu`` or above.
    """
    if ncpu <= 0:
        return
    missing = sorted(c for c in cpus_of(cpus) if c >= ncpu)
    if missing:
        raise MatrixError(
            f"{where}: cpuset {cpus} names CPU {', '.join(map(str, missing[:5]))}, but the "
            f"engine has {ncpu} CPU(s) (0-{ncpu - 1}); pick CPUs from that range"
        )


PATH_MAX: Final = 4095
NAME_MAX: Final = 255
"""Linux's limits, in bytes, of a whole path and of one name in it."""


def path_flag(flag: str, value: object) -> Path:
    """A path given on the command line (``--results``, ``--out``, ``--matrix``, ...).

    Only what no file system takes is refused here, before anything is read, so a
    hostile value ends in a short message of ours rather than ``OSError: File name too
    long``; whether the path exists is the reader's to say.

    Raises:
        MatrixError: a NUL byte, a name longer than 255 bytes, or a path longer than
            4095 bytes (the value cut to a readable length).
    """
    text = str(value)
    raw = text.encode("utf-8", "surrogateescape")
    if "\x00" in text:
        why = "holds a NUL byte"
    elif len(raw) > PATH_MAX:
        why = f"is {len(raw)} bytes long; a path holds at most {PATH_MAX}"
    elif any(len(part) > NAME_MAX for part in raw.split(b"/")):
        why = f"has a name longer than {NAME_MAX} bytes, which no file system holds"
    else:
        return Path(text)
    raise MatrixError(f"{flag}: {quote(text)} {why}; give a path to a file or folder")
