"""Which test_helper wrote a log: CS or RSA, and the RSA key size.

GNU Taler's ``test_helper_cs`` and ``test_helper_rsa`` print the same lines,
and neither prints the RSA key size (``RSA_KEYSIZE`` of its configuration).
The scheme comes from an explicit argument, from the log itself
(``secmod-rsa`` or ``test-helper-cs`` in GNUnet log lines,
``RSA_KEYSIZE = 2048`` if the configuration was saved along) or from the file
name (``test_helper_rsa-2048.log``); a conflict between them is an error.
``test_helper_eddsa`` output (the same lines) is refused.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from archbench.errors import MatrixError, ResultsError
from archbench.inputs import quote
from archbench.result import Scheme
from archbench.upstream.gnunet_time import small_int

_HELPER_MARKER: Final = re.compile(
    r"(?:test[-_]helper|secmod|helper[-_]crypto)[-_](cs|rsa|eddsa)\b", re.IGNORECASE
)
_NAME_SCHEME: Final = re.compile(r"(?<![a-z])(cs|rsa|eddsa)(?![a-z])")
_KEYSIZE_SETTING: Final = re.compile(r"\bRSA_KEYSIZE\s*=\s*(\d+)", re.IGNORECASE)
_NAME_BITS: Final = (
    re.compile(r"rsa[-_.]?(\d{3,5})(?!\d)"),
    re.compile(r"(?<!\d)(\d{3,5})[-_.]?bits?(?![a-z])"),
)


def _helper_scheme(text: str, source: str, explicit: Scheme | None) -> Scheme:
    found: dict[str, str] = {}
    for match in _HELPER_MARKER.finditer(text):
        found.setdefault(match.group(1).lower(), f"{match.group(0)!r} in the log")
    for match in _NAME_SCHEME.finditer(Path(source).name.lower()):
        found.setdefault(match.group(1), f"the file name {Path(source).name!r}")
    if "eddsa" in found:
        raise ResultsError(
            f"{source}: this looks like test_helper_eddsa output ({found['eddsa']}); "
            "archbench stores CS and RSA blind signatures only, import test_helper_cs "
            "or test_helper_rsa logs"
        )
    if explicit is not None:
        other = [why for name, why in found.items() if name.upper() != explicit]
        if other:
            raise ResultsError(
                f"{source}: --scheme {explicit.lower()} contradicts {other[0]}; "
                "drop --scheme or import this file on its own"
            )
        return explicit
    if len(found) > 1:
        raise ResultsError(
            f"{source}: cannot tell test_helper_cs from test_helper_rsa output "
            f"({' and '.join(found.values())} disagree); pass --scheme cs or --scheme rsa"
        )
    if not found:
        raise ResultsError(
            f"{source}: test_helper_cs and test_helper_rsa print the same lines and this "
            "file names neither; pass --scheme cs or --scheme rsa, or put cs or rsa in "
            "the file name (test_helper_rsa-2048.log)"
        )
    return "CS" if "cs" in found else "RSA"


def _helper_bits(text: str, source: str, explicit: int | None) -> tuple[int, str]:
    """The RSA key size of a test_helper_rsa log, and where it came from."""
    name = Path(source).name
    found: dict[int, str] = {}
    for match in _KEYSIZE_SETTING.finditer(text):
        found.setdefault(small_int(match.group(1)), f"{quote(match.group(0))} in the log")
    for pattern in _NAME_BITS:
        for match in pattern.finditer(name.lower()):
            found.setdefault(int(match.group(1)), f"the file name {name!r}")
    if explicit is not None:
        other = [why for bits, why in found.items() if bits != explicit]
        if other:
            raise ResultsError(
                f"{source}: --rsa-bits {explicit} contradicts {other[0]}; "
                "drop --rsa-bits or import this file on its own"
            )
        return explicit, "--rsa-bits"
    if len(found) > 1:
        raise ResultsError(
            f"{source}: several RSA key sizes ({', '.join(map(str, found))}) in "
            f"{' and '.join(found.values())}; pass --rsa-bits"
        )
    if not found:
        raise ResultsError(
            f"{source}: test_helper_rsa does not print its RSA key size (RSA_KEYSIZE in "
            "test_helper_rsa.conf); pass --rsa-bits 2048, or name the file "
            "test_helper_rsa-2048.log"
        )
    ((bits, why),) = found.items()
    return bits, why


def helper_scheme_and_bits(
    text: str, source: str, scheme: Scheme | None, rsa_bits: int | None, notes: list[str]
) -> tuple[Scheme, int | None]:
    """Scheme and key size of a file's test_helper lines; a note says where the size came from.

    ``text`` is the whole log, ``source`` its file name (read for hints),
    ``scheme`` and ``rsa_bits`` what the user passed (None: not passed). The
    key size is None for CS; for RSA a line is appended to ``notes``.

    Raises:
        ResultsError: the scheme or key size is unknown, contradicted, or the
            log is test_helper_eddsa output; the message names ``source``.
    """
    found = _helper_scheme(text, source, scheme)
    if found == "CS":
        return found, None
    size, why = _helper_bits(text, source, rsa_bits)
    notes.append(f"{Path(source).name}: test_helper_rsa prints no key size; {size} bit from {why}.")
    return found, size


def parse_scheme(value: str) -> Scheme | None:
    """``--scheme``: ``cs`` or ``rsa`` (any case) as a :data:`Scheme`, ``""`` as None.

    Raises:
        MatrixError: any other value.
    """
    if not value.strip():
        return None
    upper = value.strip().upper()
    if upper == "CS":
        return "CS"
    if upper == "RSA":
        return "RSA"
    raise MatrixError(f"--scheme {value!r}: use cs or rsa (the test_helper the logs come from)")
