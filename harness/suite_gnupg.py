"""GnuPG suite: wall time of whole ``gpg --decrypt`` processes, per key algorithm.

What is measured follows the seed ``gnupg-token-decrypt-bench.txt`` (a token
benchmark posted to gnupg-users in 2017): GnuPG is a black box, and one sample
is the wall time of one complete ``gpg --batch --quiet --decrypt -o /dev/null F.gpg``
process (process start, keyring lookup, the agent's public-key decryption of the
session key, symmetric decryption of the file), taken with ``time.monotonic_ns()``
around the process (:func:`suite_common.run_command`), so it also contains the
harness's fork/exec overhead (about 1 ms).

Procedure, per run (everything inside one throwaway ``GNUPGHOME``, a
``tempfile.TemporaryDirectory`` of mode 0700 that is removed afterwards; the
``gpg-agent`` started for it is stopped with ``gpgconf --homedir H --kill all``
at the end, also on error):

1. ``file_bytes`` random bytes (``os.urandom``) are written to a file.
2. The device prepares one encryption key per algorithm (:class:`Device`). The
   ``cpu`` device creates a certify-only Ed25519 primary key without passphrase
   (``--quick-gen-key ... ed25519 cert never``) and then one encryption subkey per
   algorithm (``--quick-add-key FPR ALGO encr never``); the wall time of that
   ``--quick-add-key`` process is the ``key_generation`` row (one sample).
   The subkey is checked against the ``--with-colons`` key listing.
3. The file is encrypted to exactly that subkey (``-r FPR!``), without compression
   unless ``compress`` is true (the seed used gpg's default, ZLIB/ZIP compression).
4. A first decryption to a file is run and discarded (as in the seed: it pays the
   agent's key loading); its output must hash (SHA-256) to the plaintext and its
   status lines must report ``DECRYPTION_OKAY`` with the expected subkey, so a broken
   decryption is never timed.
5. ``runs`` decryptions to ``/dev/null`` are timed.

Rows (``suite`` = ``gnupg``, ``ops_per_block`` = 1, ``device`` = the device name):

=================  ===================  ========  ==================  =============
algorithm (gpg)    scheme               key_bits  param               bytes_per_op
=================  ===================  ========  ==================  =============
``rsa2048``        ``RSA``              2048      None                file_bytes
``cv25519``        ``ECDH``             None      ``Curve25519``      file_bytes
``nistp256``       ``ECDH``             None      ``P-256``           file_bytes
=================  ===================  ========  ==================  =============

Operations are ``key_generation`` (bytes_per_op None) and ``decrypt``. ``param``
holds the curve (OpenPGP names the public-key algorithm ECDH, id 18, and the curve
separately); the file size is in ``bytes_per_op`` so reports can show bandwidth
(MB/s) and in ``parameters.file_bytes``. A failed step of one algorithm gives an
invalid row whose only sample is the wall time of the failed process (never published).

Settings (``normalize_config``): ``device`` (``cpu``), ``algorithms``
(``rsa2048``, ``rsa4096``, ``cv25519``), ``file_bytes`` (1 MiB), ``runs`` (5),
``compress`` (false), ``timeout_s`` (300 s per gpg process).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from suite_common import (
    CommandResult,
    Progress,
    SuiteError,
    SuiteOutcome,
    check_keys,
    make_row,
    run_command,
)

SUITE = "gnupg"

#: Oldest GnuPG whose batch key generation (``--quick-add-key``, loopback pinentry) we use.
MIN_GPG_VERSION = (2, 2, 0)

#: OpenPGP public-key algorithm ids (RFC 4880 section 9.1).
PUBKEY_RSA = 1
PUBKEY_ECDH = 18

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

#: Block size for writing and hashing files, bytes.
_CHUNK_BYTES = 1 << 20

#: User ID of the throwaway keys.
USER_ID = "archbench <bench@invalid>"


@dataclass(frozen=True)
class AlgorithmSpec:
    """One encryption-key algorithm: gpg's name for it and how rows name it.

    Attributes:
        gpg_name: the ALGO argument of ``gpg --quick-add-key`` (``rsa2048``, ``cv25519``).
        scheme: row ``scheme`` (``RSA``, ``ECDH``).
        key_bits: RSA modulus size in bits; None for ECDH.
        param: row ``param``: the curve for ECDH (``Curve25519``, ``P-256``); None for RSA.
        pubkey_algo: OpenPGP public-key algorithm id the subkey must have (1, 18).
        curve: the curve as ``--with-colons`` field 17 names it (``cv25519``); None for RSA.
    """

    gpg_name: str
    scheme: str
    key_bits: int | None
    param: str | None
    pubkey_algo: int
    curve: str | None


def _rsa(bits: int) -> AlgorithmSpec:
    return AlgorithmSpec(f"rsa{bits}", "RSA", bits, None, PUBKEY_RSA, None)


def _ecdh(curve: str, param: str) -> AlgorithmSpec:
    return AlgorithmSpec(curve, "ECDH", None, param, PUBKEY_ECDH, curve)


#: Algorithms that gpg 2.2 (bookworm) and 2.4 (trixie) both generate in batch mode.
#: (``cv448`` is refused by 2.2.40 and needs ``--compliance=gnupg`` in 2.4.7.)
ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.gpg_name: spec
    for spec in (
        _rsa(2048),
        _rsa(3072),
        _rsa(4096),
        _ecdh("cv25519", "Curve25519"),
        _ecdh("nistp256", "P-256"),
        _ecdh("nistp384", "P-384"),
        _ecdh("nistp521", "P-521"),
        _ecdh("brainpoolP256r1", "brainpoolP256r1"),
        _ecdh("brainpoolP384r1", "brainpoolP384r1"),
        _ecdh("brainpoolP512r1", "brainpoolP512r1"),
    )
}

DEFAULTS: dict[str, Any] = {
    "device": "cpu",
    "algorithms": ["rsa2048", "rsa4096", "cv25519"],
    "file_bytes": 1 << 20,
    "runs": 5,
    "compress": False,
    "timeout_s": 300.0,
}

MAX_FILE_BYTES = 1 << 30
MAX_RUNS = 10_000
MAX_TIMEOUT_S = 86_400.0


# --------------------------------------------------------------------------- parsing


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


_VERSION_RE = re.compile(r"^gpg \(GnuPG\)\S* (\d+)\.(\d+)\.(\d+)")
_LIBGCRYPT_RE = re.compile(r"^libgcrypt \d+\.\d+\S*$")


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


def check_subkey(spec: AlgorithmSpec, record: KeyRecord | None) -> str | None:
    """Why ``record`` is not the encryption subkey ``spec`` asks for; None when it is."""
    if record is None:
        return f"{spec.gpg_name}: the new subkey is missing from the key listing"
    found = f"algo {record.pubkey_algo}, {record.bits} bits, curve {record.curve}"
    if record.pubkey_algo != spec.pubkey_algo:
        return f"{spec.gpg_name}: subkey has {found}, expected algo {spec.pubkey_algo}"
    if spec.key_bits is not None and record.bits != spec.key_bits:
        return f"{spec.gpg_name}: subkey has {found}, expected {spec.key_bits} bits"
    if spec.curve is not None and record.curve != spec.curve:
        return f"{spec.gpg_name}: subkey has {found}, expected curve {spec.curve}"
    if "e" not in record.capabilities:
        return f"{spec.gpg_name}: subkey capabilities {record.capabilities!r} lack encryption"
    return None


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


# --------------------------------------------------------------------------- settings


def _int_setting(config: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SuiteError(f"{SUITE}: {key}={value!r}; expected an integer from {low} to {high}")
    return value


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check the suite's settings and fill defaults (see the module docstring).

    Returns:
        ``{"device": str, "algorithms": [str], "file_bytes": int, "runs": int,
        "compress": bool, "timeout_s": float}``.

    Raises:
        SuiteError: unknown key, a value of the wrong type or range, an unknown or
            repeated algorithm, or a device other than ``cpu``.
    """
    check_keys(SUITE, config, list(DEFAULTS))
    merged = {**DEFAULTS, **config}
    device = merged["device"]
    if device not in DEVICES:
        raise SuiteError(
            f"{SUITE}: device={device!r} is not available; only 'cpu' exists (soft keys in a "
            "throwaway GNUPGHOME). A smart-card token would be a Device class registered in "
            "suite_gnupg.DEVICES whose prepare() puts each encryption subkey on the card "
            "(see docs/suites-gnupg.md)"
        )
    algorithms = merged["algorithms"]
    allowed = ", ".join(ALGORITHMS)
    if (
        not isinstance(algorithms, list)
        or not algorithms
        or not all(isinstance(a, str) for a in algorithms)
    ):
        raise SuiteError(
            f"{SUITE}: algorithms={algorithms!r}; expected a non-empty list of: {allowed}"
        )
    for name in algorithms:
        if name not in ALGORITHMS:
            raise SuiteError(f"{SUITE}: algorithms has {name!r}; allowed: {allowed}")
    if len(set(algorithms)) != len(algorithms):
        raise SuiteError(f"{SUITE}: algorithms={algorithms!r} names an algorithm twice")
    compress = merged["compress"]
    if not isinstance(compress, bool):
        raise SuiteError(f"{SUITE}: compress={compress!r}; expected true or false")
    timeout = merged["timeout_s"]
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        raise SuiteError(
            f"{SUITE}: timeout_s={timeout!r}; expected seconds > 0 and <= {MAX_TIMEOUT_S:g}"
        )
    return {
        "device": device,
        "algorithms": list(algorithms),
        "file_bytes": _int_setting(merged, "file_bytes", 1, MAX_FILE_BYTES),
        "runs": _int_setting(merged, "runs", 1, MAX_RUNS),
        "compress": compress,
        "timeout_s": float(timeout),
    }


# --------------------------------------------------------------------------- devices


class Gpg:
    """Runs ``gpg --homedir H --batch ...`` for one throwaway home.

    Args:
        homedir: the GNUPGHOME (mode 0700).
        timeout_s: wall-clock limit per gpg process, s.
    """

    def __init__(self, homedir: str, timeout_s: float) -> None:
        self.homedir = homedir
        self.timeout_s = timeout_s

    def __call__(self, args: Sequence[str]) -> CommandResult:
        """Run gpg with ``args``; see :func:`suite_common.run_command` (raises SuiteError)."""
        return run_command(["gpg", "--homedir", self.homedir, "--batch", *args], self.timeout_s)


#: What device code calls to run gpg: ``runner(args) -> CommandResult``.
GpgRunner = Callable[[Sequence[str]], CommandResult]


@dataclass(frozen=True)
class PreparedKey:
    """An encryption subkey a device made ready, or why it could not.

    Attributes:
        spec: the algorithm.
        fingerprint: subkey fingerprint (40 hex digits); None when ``error`` is set.
        keygen_ns: wall time of the key generation, ns (the failed attempt's time on error);
            None when the device did not generate the key (imported onto a token).
        error: why the key is unusable; None when it is.
    """

    spec: AlgorithmSpec
    fingerprint: str | None
    keygen_ns: int | None
    error: str | None = None


class Device(Protocol):
    """Where the private-key operation of a decryption runs.

    ``name`` is the rows' ``device``. ``prepare`` receives a gpg runner bound to the
    throwaway GNUPGHOME and returns one :class:`PreparedKey` per algorithm, in order;
    it raises :class:`SuiteError` when no key at all can be prepared. A token device
    would generate soft subkeys like :class:`CpuDevice` and move each to the card
    (``--edit-key``, ``key N``, ``keytocard``), leaving a stub in the keyring.
    """

    name: str

    def prepare(self, gpg: GpgRunner, specs: Sequence[AlgorithmSpec]) -> list[PreparedKey]:
        """Make one encryption subkey per spec usable by ``gpg --decrypt``."""
        ...


def _first_error_line(result: CommandResult) -> str:
    lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {result.returncode}"


class CpuDevice:
    """Soft keys: the private key stays in the agent, decryption runs on the CPU."""

    name = "cpu"

    def prepare(self, gpg: GpgRunner, specs: Sequence[AlgorithmSpec]) -> list[PreparedKey]:
        """Create a certify-only Ed25519 primary key, then one encryption subkey per spec.

        Raises:
            SuiteError: the primary key cannot be created.
        """
        unprotected = ["--pinentry-mode", "loopback", "--passphrase", ""]
        primary = gpg(
            [
                *unprotected,
                *("--status-fd", "1", "--quick-gen-key", USER_ID, "ed25519", "cert", "never"),
            ]
        )
        primary_fpr = parse_key_created(primary.stdout, kinds="PB")
        if primary.returncode != 0 or primary_fpr is None:
            raise SuiteError(
                f"{SUITE}: cannot create the primary key: {_first_error_line(primary)} "
                "(gpg-agent is needed: Debian package gnupg)"
            )
        keys: list[PreparedKey] = []
        for spec in specs:
            made = gpg(
                [
                    *unprotected,
                    *("--status-fd", "1", "--quick-add-key", primary_fpr),
                    *(spec.gpg_name, "encr", "never"),
                ]
            )
            fpr = parse_key_created(made.stdout, kinds="S")
            if made.returncode != 0 or fpr is None:
                error = f"key generation failed: {_first_error_line(made)}"
                keys.append(PreparedKey(spec, None, made.elapsed_ns, error))
                continue
            listing = gpg(["--with-colons", "--list-secret-keys", primary_fpr])
            record = next(
                (r for r in parse_colon_keys(listing.stdout) if r.fingerprint == fpr), None
            )
            problem = check_subkey(spec, record)
            keys.append(PreparedKey(spec, None if problem else fpr, made.elapsed_ns, problem))
        return keys


#: Device name (config ``device``) -> factory. Only ``cpu`` exists.
DEVICES: dict[str, Callable[[], Device]] = {"cpu": CpuDevice}


# --------------------------------------------------------------------------- measuring


def write_random_file(path: str, size: int) -> str:
    """Write ``size`` bytes from ``os.urandom`` to ``path``; return their SHA-256 (hex)."""
    digest = hashlib.sha256()
    with open(path, "wb") as out:
        left = size
        while left > 0:
            chunk = os.urandom(min(left, _CHUNK_BYTES))
            digest.update(chunk)
            out.write(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def file_sha256(path: str) -> str:
    """SHA-256 (hex) of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as src:
        while chunk := src.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def measure_key(
    gpg: GpgRunner,
    key: PreparedKey,
    *,
    device: str,
    plain_path: str,
    plain_sha256: str,
    workdir: str,
    file_bytes: int,
    runs: int,
    compress: bool,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows and ``extra`` entry for one prepared key (steps 3-5 of the module docstring).

    Returns:
        ``(rows, extra)``: a ``key_generation`` row when the device generated the key,
        then a ``decrypt`` row (invalid when encryption, the checked first decryption
        or a timed run failed); ``extra`` holds the subkey fingerprint, the discarded
        first run in ns and the ``DECRYPTION_INFO`` figures.
    """
    spec = key.spec
    common: dict[str, Any] = {"key_bits": spec.key_bits, "param": spec.param, "device": device}
    extra: dict[str, Any] = {
        "algorithm": spec.gpg_name,
        "subkey_fingerprint": key.fingerprint,
        "keygen_ns": key.keygen_ns,
    }
    rows: list[dict[str, Any]] = []
    if key.error is not None or key.fingerprint is None:
        reason = key.error or "device returned no key"
        extra["error"] = reason
        if key.keygen_ns is not None:
            rows.append(
                make_row(
                    SUITE,
                    spec.scheme,
                    "key_generation",
                    [key.keygen_ns],
                    1,
                    valid=False,
                    invalid_reason=reason,
                    **common,
                )
            )
        return rows, extra
    if key.keygen_ns is not None:
        rows.append(make_row(SUITE, spec.scheme, "key_generation", [key.keygen_ns], 1, **common))

    def decrypt_row(samples: Sequence[int], reason: str | None = None) -> dict[str, Any]:
        return make_row(
            SUITE,
            spec.scheme,
            "decrypt",
            samples,
            1,
            bytes_per_op=file_bytes,
            repetitions_requested=runs,
            valid=reason is None,
            invalid_reason=reason,
            **common,
        )

    encrypted = os.path.join(workdir, f"{spec.gpg_name}.gpg")
    checked = os.path.join(workdir, f"{spec.gpg_name}.out")
    compression = [] if compress else ["--compress-algo", "none"]
    enc = gpg(
        [
            *("--yes", "--trust-model", "always", *compression),
            *("-r", f"{key.fingerprint}!", "-o", encrypted, "-e", plain_path),
        ]
    )
    if enc.returncode != 0:
        reason = f"encryption failed: {_first_error_line(enc)}"
        extra["error"] = reason
        rows.append(decrypt_row([enc.elapsed_ns], reason))
        return rows, extra

    first = gpg(["--quiet", "--status-fd", "1", "--decrypt", "-o", checked, encrypted])
    extra["discarded_first_run_ns"] = first.elapsed_ns
    status = parse_decryption_status(first.stdout)
    extra["decryption_info"] = status.as_extra()
    problem: str | None = None
    if first.returncode != 0 or not status.okay:
        problem = f"first decryption failed: {_first_error_line(first)}"
    elif status.key_fingerprint != key.fingerprint:
        problem = f"decrypted with subkey {status.key_fingerprint}, not {key.fingerprint}"
    elif file_sha256(checked) != plain_sha256:
        problem = "decrypted output differs from the plaintext (SHA-256 mismatch)"
    if os.path.exists(checked):
        os.remove(checked)
    if problem is not None:
        extra["error"] = problem
        rows.append(decrypt_row([first.elapsed_ns], problem))
        return rows, extra

    samples: list[int] = []
    for index in range(runs):
        result = gpg(["--quiet", "--decrypt", "-o", os.devnull, encrypted])
        samples.append(result.elapsed_ns)
        if result.returncode != 0:
            problem = f"timed run {index + 1} failed: {_first_error_line(result)}"
            extra["error"] = problem
            break
    rows.append(decrypt_row(samples, problem))
    return rows, extra


def probe_version(timeout_s: float) -> GpgVersion:
    """Run and parse ``gpg --version``.

    Raises:
        SuiteError: gpg is missing (add Debian package ``gnupg``), fails, or is too old.
    """
    try:
        result = run_command(["gpg", "--version"], timeout_s)
    except SuiteError as exc:
        raise SuiteError(
            f"{SUITE}: {exc}; the Debian package is gnupg (gpg, gpg-agent, gpgconf)"
        ) from None
    if result.returncode != 0:
        raise SuiteError(f"{SUITE}: `gpg --version` failed: {_first_error_line(result)}")
    return parse_gpg_version(result.stdout)


def stop_agent(homedir: str, timeout_s: float, warn: Callable[[str], None]) -> None:
    """``gpgconf --homedir H --kill all``; problems are warned about, never raised."""
    try:
        result = run_command(["gpgconf", "--homedir", homedir, "--kill", "all"], timeout_s)
    except SuiteError as exc:
        warn(f"{SUITE}: could not stop gpg-agent for {homedir}: {exc}")
        return
    if result.returncode != 0:
        warn(f"{SUITE}: gpgconf --kill all failed: {_first_error_line(result)}")


def run(config: dict[str, Any], warn: Callable[[str], None]) -> SuiteOutcome:
    """Measure every configured algorithm (see the module docstring).

    Raises:
        SuiteError: bad settings, gpg missing or too old, or the device cannot prepare keys.
    """
    cfg = normalize_config(config)
    timeout = cfg["timeout_s"]
    version = probe_version(timeout)
    device = DEVICES[cfg["device"]]()
    specs = [ALGORITHMS[name] for name in cfg["algorithms"]]
    rows: list[dict[str, Any]] = []
    per_key: list[dict[str, Any]] = []
    progress = Progress(SUITE, 1 + len(specs))
    with tempfile.TemporaryDirectory(prefix="archbench-gnupg-", ignore_cleanup_errors=True) as home:
        os.chmod(home, 0o700)
        gpg = Gpg(home, timeout)
        try:
            workdir = os.path.join(home, "data")
            os.mkdir(workdir, 0o700)
            plain = os.path.join(workdir, "plain.bin")
            try:
                plain_sha256 = write_random_file(plain, cfg["file_bytes"])
            except OSError as exc:
                raise SuiteError(f"{SUITE}: cannot write the test file {plain}: {exc}") from None
            progress.step("key generation: " + ", ".join(cfg["algorithms"]))
            for key in device.prepare(gpg, specs):
                progress.step(f"decrypt {cfg['file_bytes']} B with {key.spec.gpg_name}")
                key_rows, extra = measure_key(
                    gpg,
                    key,
                    device=device.name,
                    plain_path=plain,
                    plain_sha256=plain_sha256,
                    workdir=workdir,
                    file_bytes=cfg["file_bytes"],
                    runs=cfg["runs"],
                    compress=cfg["compress"],
                )
                if "error" in extra:
                    warn(f"{SUITE}: {key.spec.gpg_name}: {extra['error']}")
                rows.extend(key_rows)
                per_key.append(extra)
        finally:
            stop_agent(home, timeout, warn)
    return SuiteOutcome(
        rows=rows,
        parameters=cfg,
        tools={"gnupg": version.tool_text},
        extra={"gpg_version": list(version.version), "keys": per_key},
    )
