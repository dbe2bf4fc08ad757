"""Keys of the ``gnupg`` suite: the algorithms it measures and the devices that hold them.

:class:`AlgorithmSpec` and :data:`ALGORITHMS` name each encryption-key
algorithm as gpg and the rows do; a :class:`Device` prepares one encryption
subkey per algorithm in the throwaway ``GNUPGHOME`` (:class:`CpuDevice`: soft
keys made in batch mode, checked against the ``--with-colons`` listing).
Only ``cpu`` exists in :data:`DEVICES`; ``docs/suites-gnupg.md`` says how a
token would plug in. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from abh.suites.common import CommandResult, SuiteError, run_command
from abh.suites.gnupg_output import KeyRecord, first_error_line, parse_colon_keys, parse_key_created

SUITE = "gnupg"

#: OpenPGP public-key algorithm ids (RFC 4880 section 9.1).
PUBKEY_RSA = 1
PUBKEY_ECDH = 18

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
        """Run gpg with ``args``; see :func:`~abh.suites.common.run_command` (raises SuiteError)."""
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
                f"{SUITE}: cannot create the primary key: {first_error_line(primary)} "
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
                error = f"key generation failed: {first_error_line(made)}"
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
