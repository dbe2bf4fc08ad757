"""The algorithms the ``openssl-speed`` suite can select (standard library only).

One :class:`Algorithm` per name in the matrix's ``algorithms`` list, which is
also ``openssl speed``'s argument (or ``-evp``'s for AEAD ciphers and hashes),
with the ``<bits>`` field OpenSSL prints for it and the row names it gets.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Algorithm:
    """One selectable algorithm: our config name is also ``openssl speed``'s argument.

    Attributes:
        name: config and command-line name (``rsa2048``, ``ecdsabrp512r1``,
            ``aes-128-gcm``; for ``-evp`` ones the EVP name passed to ``-evp``).
        kind: ``rsa``, ``ecdsa``, ``ecdh``, ``eddsa`` or ``evp``.
        scheme: row ``scheme`` (``RSA``, ``ECDSA``, ``ECDH``, ``Ed25519``, ``X25519``,
            ``AES-128-GCM``, ``SHA-256``).
        operations: row operations in OpenSSL's test order (``sign``, ``verify``).
        bits: the ``<bits>`` field OpenSSL prints in ``+R``/``+DTP`` (0 for evp):
            modulus bits, curve field bits, 253 for X25519/Ed25519, 456 for Ed448.
        key_bits: RSA modulus size in bits, else None.
        param: curve name for EC/EdDSA/X25519 rows, else None (evp rows get ``16 B``).
    """

    name: str
    kind: str
    scheme: str
    operations: tuple[str, ...]
    bits: int = 0
    key_bits: int | None = None
    param: str | None = None


def _algorithms() -> dict[str, Algorithm]:
    table: list[Algorithm] = [
        Algorithm(f"rsa{b}", "rsa", "RSA", ("sign", "verify"), b, key_bits=b)
        for b in (1024, 2048, 3072, 4096, 7680, 15360)
    ]
    curves = [
        ("p256", 256, "P-256"),
        ("p384", 384, "P-384"),
        ("p521", 521, "P-521"),
        ("brp256r1", 256, "brainpoolP256r1"),
        ("brp384r1", 384, "brainpoolP384r1"),
        ("brp512r1", 512, "brainpoolP512r1"),
    ]
    table += [
        Algorithm(f"ecdsa{c}", "ecdsa", "ECDSA", ("sign", "verify"), b, param=p)
        for c, b, p in curves
    ]
    table += [Algorithm(f"ecdh{c}", "ecdh", "ECDH", ("derive",), b, param=p) for c, b, p in curves]
    table += [
        Algorithm("ecdhx25519", "ecdh", "X25519", ("derive",), 253, param="Curve25519"),
        Algorithm("ecdhx448", "ecdh", "X448", ("derive",), 448, param="Curve448"),
        Algorithm("ed25519", "eddsa", "Ed25519", ("sign", "verify"), 253),
        Algorithm("ed448", "eddsa", "Ed448", ("sign", "verify"), 456),
        Algorithm("aes-128-gcm", "evp", "AES-128-GCM", ("encrypt",)),
        Algorithm("aes-256-gcm", "evp", "AES-256-GCM", ("encrypt",)),
        Algorithm("sha256", "evp", "SHA-256", ("hash",)),
    ]
    return {a.name: a for a in table}


ALGORITHMS: dict[str, Algorithm] = _algorithms()
"""Selectable algorithms by config name."""

DEFAULT_ALGORITHMS: tuple[str, ...] = (
    "rsa2048",
    "rsa3072",
    "rsa4096",
    "ecdsap256",
    "ecdsap384",
    "ecdsap521",
    "ecdsabrp256r1",
    "ecdsabrp384r1",
    "ecdsabrp512r1",
    "ecdhp256",
    "ecdhp384",
    "ecdhp521",
    "ecdhbrp256r1",
    "ecdhbrp384r1",
    "ecdhbrp512r1",
    "ecdhx25519",
    "ed25519",
    "ed448",
    "aes-128-gcm",
    "aes-256-gcm",
    "sha256",
)
DEFAULT_EVP_SIZES: tuple[int, ...] = (16, 64, 256, 1024, 8192, 16384)
"""OpenSSL's own default ``-evp`` buffer sizes in bytes."""
