"""One small, realistic set of rows per suite, for golden files and the LaTeX compile test.

blindsig (the thesis's Ryzen 7 figures), the Taler security module (100
sequential, 100 and 800 parallel signatures), openssl speed (RSA, ECDSA,
AES-GCM throughput), RSA up to 16384 bit, libsodium and GnuPG decryption.
"""

from __future__ import annotations

from typing import Any

from helpers import row

from archbench.result import Row


def suite_row(suite: str, scheme: str, operation: str, samples_ns: list[int], **extra: Any) -> Row:
    """A valid row of any suite: ``samples_ns`` are block times in ns, ``ops_per_block`` 1
    unless given; ``extra`` sets any other :class:`Row` field (``param``, ``bytes_per_op``)."""
    return Row.model_validate(
        {
            "suite": suite,
            "scheme": scheme,
            "key_bits": extra.pop("key_bits", None),
            "operation": operation,
            "ops_per_block": extra.pop("ops_per_block", 1),
            "samples_ns": samples_ns,
            "valid": True,
            **extra,
        }
    )


ROWS: dict[str, list[Row]] = {
    "blindsig": [
        row("CS", "key_generation", [204_400, 204_000, 205_000]),
        row("RSA", "key_generation", [903_000_000, 905_000_000, 901_000_000], 2048),
        row("CS", "r_derivation", [444_000, 445_000, 443_000]),
        row("CS", "blinding_secret_derivation", [94_000, 95_000, 93_000]),
        row("CS", "blinding", [3_332_000, 3_330_000, 3_340_000]),
        row("RSA", "blinding", [3_012_000, 3_010_000, 3_020_000], 2048),
        row("CS", "signing", [77_000, 78_000, 76_000]),
        row("RSA", "signing", [34_000_000, 34_100_000, 33_900_000], 2048),
        row("CS", "unblinding", [1_000, 1_200, 900]),
        row("RSA", "unblinding", [10_000_000, 10_200_000, 9_900_000], 2048),
        row("CS", "verifying", [1_358_000, 1_360_000, 1_350_000]),
        row("RSA", "verifying", [1_836_000, 1_840_000, 1_830_000], 2048),
    ],
    "security-module": [
        suite_row(
            "security-module", "CS", "helper_sequential_signing", [2_591_000], ops_per_block=100
        ),
        suite_row(
            "security-module",
            "RSA",
            "helper_sequential_signing",
            [350_000_000],
            key_bits=2048,
            ops_per_block=100,
        ),
        suite_row(
            "security-module", "CS", "helper_parallel_signing", [14_000_000], ops_per_block=100
        ),
        suite_row(
            "security-module", "CS", "helper_parallel_signing", [19_000_000], ops_per_block=800
        ),
    ],
    "openssl-speed": [
        suite_row(
            "openssl-speed", "RSA", "sign", [1_000_000_000], key_bits=2048, ops_per_block=1000
        ),
        suite_row(
            "openssl-speed", "ECDSA", "sign", [1_000_000_000], param="P-256", ops_per_block=5000
        ),
        suite_row(
            "openssl-speed",
            "AES-128-GCM",
            "encrypt",
            [500_000_000],
            param="16384 B",
            bytes_per_op=16384,
            ops_per_block=1000,
        ),
    ],
    "rsa-large": [
        suite_row("rsa-large", "RSA", "sign", [238_423_860, 240_000_000], key_bits=8192),
        suite_row("rsa-large", "RSA", "verify", [1_500_000, 1_520_000], key_bits=8192),
    ],
    "sodium": [
        suite_row("sodium", "Ed25519", "sign", [26_000, 20_000, 22_000], ops_per_block=2),
        suite_row("sodium", "X25519", "scalarmult", [60_000, 61_000, 62_000], ops_per_block=2),
    ],
    "gnupg": [
        suite_row(
            "gnupg",
            "RSA",
            "decrypt",
            [20_000_000, 40_000_000],
            key_bits=2048,
            bytes_per_op=1_000_000,
        ),
        suite_row(
            "gnupg", "ECDH", "decrypt", [10_000_000], param="Curve25519", bytes_per_op=1_000_000
        ),
    ],
}
