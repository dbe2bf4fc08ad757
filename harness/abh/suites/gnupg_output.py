"""Parsing what gpg prints, for the ``gnupg`` suite (standard library only).

Pure functions over recorded text (``tests/fixtures/gnupg/``): ``gpg --version``,
``--status-fd`` lines (``KEY_CREATED``, ``DECRYPTION_OKAY``,
``DECRYPTION_INFO`` ...), ``--with-colons`` key listings and the last line of
gpg's stderr for error messages. Nothing here runs gpg; ``gnupg`` and
``gnupg_keys`` do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from abh.suites.common import CommandResult, SuiteError

#: Oldest GnuPG whose batch key generation (``--quick-add-key``, loopback pinentry) we use.
MIN_GPG_VERSION = (2, 2, 0)

#: OpenPGP symmetric algorithm ids (RFC 4880 section 9.2) -> gpg's names.
SYMMETRIC_NAMES = {
    1: "IDEA",
    2: "3DES",
    3: "CAST5",
    4: "BLOWFISH",
    7: "AES",
    8: "AES192",
    9: "AES256",
    10: "TWOFISH",
    11: "CAMELLIA128",
    12: "CAMELLIA192",
    13: "CAMELLIA256",
}

#: AEAD algorithm ids (RFC 9580 section 9.6); 0 = none (CFB with MDC).
AEAD_NAMES = {0: "none", 1: "EAX", 2: "OCB", 3: "GCM"}


@dataclass(frozen=True)
class GpgVersion:
    """What ``gpg --version`` says.

    Attributes:
        gpg_line: first line, ``gpg (GnuPG) 2.4.7``.
        version: ``(2, 4, 7)``.
        libgcrypt_line: ``libgcrypt 1.11.0``; None when gpg does not print it.
    """

    gpg_line: str
    version: tuple[int, int, int]
    libgcrypt_line: str | None

    @property
    def tool_text(self) -> str:
        """``setup.tools`` text: ``gpg (GnuPG) 2.4.7; libgcrypt 1.11.0``."""
        if self.libgcrypt_line is None:
            return self.gpg_line
        return f"{self.gpg_line}; {self.libgcrypt_line}"


# Possessive repeats: a match attempt is linear in the line whatever it holds.
_VERSION_RE = re.compile(r"^gpg \(GnuPG\)\S*+ (\d++)\.(\d++)\.(\d++)")
_LIBGCRYPT_RE = re.compile(r"^libgcrypt \d++\.\d++\S*+$")


def parse_gpg_version(text: str) -> GpgVersion:
    """Parse ``gpg --version`` stdout.

    Raises:
        SuiteError: the first line is not ``gpg (GnuPG) X.Y.Z``, or the version is older
            than :data:`MIN_GPG_VERSION`.
    """
    lines = text.splitlines()
    first = lines[0].strip() if lines else ""
    match = _VERSION_RE.match(first)
    if match is None:
        raise SuiteError(f"gnupg: unexpected `gpg --version` output, first line {first!r}")
    version = (int(match[1]), int(match[2]), int(match[3]))
    if version < MIN_GPG_VERSION:
        need = ".".join(map(str, MIN_GPG_VERSION))
        raise SuiteError(f"gnupg: {first} is too old; the suite needs GnuPG {need} or later")
    libgcrypt = next((ln.strip() for ln in lines[1:] if _LIBGCRYPT_RE.match(ln.strip())), None)
    return GpgVersion(first, version, libgcrypt)


def parse_status(text: str) -> list[tuple[str, list[str]]]:
    """Status lines (``--status-fd``) as ``(KEYWORD, [args...])``, other lines ignored."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("[GNUPG:] "):
            words = line[len("[GNUPG:] ") :].split()
            if words:
                out.append((words[0], words[1:]))
    return out


def parse_key_created(status_text: str, kinds: str = "S") -> str | None:
    """Fingerprint from the ``KEY_CREATED <type> <fpr>`` status line, None if absent.

    Args:
        status_text: ``--status-fd`` output of ``--quick-gen-key`` / ``--quick-add-key``.
        kinds: accepted key types: ``S`` subkey, ``P`` primary, ``B`` both.
    """
    for keyword, args in parse_status(status_text):
        if keyword == "KEY_CREATED" and len(args) >= 2 and args[0] in kinds:
            return args[1].upper()
    return None


@dataclass(frozen=True)
class KeyRecord:
    """One key of a ``--with-colons`` listing (``pub``/``sub``/``sec``/``ssb`` record).

    Attributes:
        record: record type (``ssb``).
        fingerprint: from the ``fpr`` record that follows; "" if there is none.
        keyid: 16 hex digits (field 5).
        pubkey_algo: OpenPGP public-key algorithm id (field 4).
        bits: key length in bits (field 3; 255 for Curve25519).
        capabilities: field 12 (``e``, ``cEC``).
        token: field 15: ``+`` secret key here, ``#`` stub, a serial number for a card key.
        curve: field 17 (``cv25519``); None when empty.
    """

    record: str
    fingerprint: str
    keyid: str
    pubkey_algo: int
    bits: int
    capabilities: str
    token: str
    curve: str | None


def parse_colon_keys(text: str) -> list[KeyRecord]:
    """Keys of a ``gpg --with-colons --list-(secret-)keys`` listing, in listing order.

    Raises:
        SuiteError: a key record has a non-numeric length or algorithm field.
    """
    records: list[KeyRecord] = []
    for line in text.splitlines():
        fields = line.split(":")
        kind = fields[0]
        if kind in ("pub", "sub", "sec", "ssb"):
            fields += [""] * (17 - len(fields))
            try:
                bits, algo = int(fields[2]), int(fields[3])
            except ValueError:
                raise SuiteError(f"gnupg: bad key record in colon listing: {line!r}") from None
            records.append(
                KeyRecord(
                    kind, "", fields[4], algo, bits, fields[11], fields[14], fields[16] or None
                )
            )
        elif kind == "fpr" and records and not records[-1].fingerprint and len(fields) > 9:
            last = records[-1]
            records[-1] = KeyRecord(
                last.record,
                fields[9].upper(),
                last.keyid,
                last.pubkey_algo,
                last.bits,
                last.capabilities,
                last.token,
                last.curve,
            )
    return records


@dataclass(frozen=True)
class DecryptionStatus:
    """What the status lines of one ``gpg --decrypt`` say.

    Attributes:
        okay: ``DECRYPTION_OKAY`` seen and no ``DECRYPTION_FAILED``.
        key_fingerprint: subkey that decrypted the session key (``DECRYPTION_KEY``).
        mdc_method: ``DECRYPTION_INFO`` field 1 (2 = SHA-1 MDC, 0 = none).
        sym_algo: ``DECRYPTION_INFO`` field 2, OpenPGP symmetric id (9 = AES256).
        aead_algo: ``DECRYPTION_INFO`` field 3 (0 = no AEAD, 2 = OCB); None if absent.
        plaintext_length: ``PLAINTEXT_LENGTH`` in bytes; None if absent.
    """

    okay: bool
    key_fingerprint: str | None
    mdc_method: int | None
    sym_algo: int | None
    aead_algo: int | None
    plaintext_length: int | None

    def as_extra(self) -> dict[str, Any]:
        """JSON-able summary with the cipher named (``AES256``, AEAD ``none``)."""
        return {
            "mdc_method": self.mdc_method,
            "sym_algo": self.sym_algo,
            "cipher": SYMMETRIC_NAMES.get(self.sym_algo or -1),
            "aead_algo": self.aead_algo,
            "aead": AEAD_NAMES.get(self.aead_algo if self.aead_algo is not None else 0),
        }


def _int_or_none(words: list[str], index: int) -> int | None:
    try:
        return int(words[index])
    except (IndexError, ValueError):
        return None


def parse_decryption_status(status_text: str) -> DecryptionStatus:
    """Parse the ``--status-fd`` output of one ``gpg --decrypt``."""
    okay = failed = False
    fingerprint: str | None = None
    mdc = sym = aead = length = None
    for keyword, args in parse_status(status_text):
        if keyword == "DECRYPTION_OKAY":
            okay = True
        elif keyword == "DECRYPTION_FAILED":
            failed = True
        elif keyword == "DECRYPTION_KEY" and args:
            fingerprint = args[0].upper()
        elif keyword == "DECRYPTION_INFO":
            mdc, sym, aead = _int_or_none(args, 0), _int_or_none(args, 1), _int_or_none(args, 2)
        elif keyword == "PLAINTEXT_LENGTH":
            length = _int_or_none(args, 0)
    return DecryptionStatus(okay and not failed, fingerprint, mdc, sym, aead, length)


def first_error_line(result: CommandResult) -> str:
    """The last non-blank line of a gpg process's stderr, else ``exit status N``."""
    lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {result.returncode}"
