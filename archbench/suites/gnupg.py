"""The gnupg suite: GnuPG decryption timings (the gnupg-token seed).

Suite ``gnupg`` (off unless a matrix names it);
its harness side is ``harness/abh/suites/gnupg.py``.
This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr, field_validator

from archbench.inputs import did_you_mean, quote
from archbench.suites.base import SuiteSettings, SuiteSpec

GNUPG_ALGORITHMS: Final = (
    "rsa2048",
    "rsa3072",
    "rsa4096",
    "cv25519",
    "nistp256",
    "nistp384",
    "nistp521",
    "brainpoolP256r1",
    "brainpoolP384r1",
    "brainpoolP512r1",
)
"""Encryption subkey algorithms gpg 2.2 and 2.4 both generate in batch mode (harness list)."""


class GnupgSuite(SuiteSettings):
    """GnuPG decryption timings in a throwaway GNUPGHOME (the gnupg-token seed).

    ``file_bytes`` of random data is encrypted to each algorithm's subkey and
    decrypted ``runs`` times after one discarded run; ``compress: true`` lets
    gpg compress as by default (the seed did). ``device``: where the private
    key lives; only ``cpu`` (soft keys) exists (``docs/suites-gnupg.md``).
    """

    algorithms: tuple[StrictStr, ...] = Field(
        default=("rsa2048", "rsa4096", "cv25519"), min_length=1
    )
    file_bytes: StrictInt = Field(default=1_048_576, ge=1, le=1 << 30)
    runs: StrictInt = Field(default=5, ge=1, le=10_000)
    compress: StrictBool = False
    timeout_s: float = Field(default=300.0, gt=0, le=86_400)
    device: Literal["cpu"] = "cpu"

    @field_validator("algorithms")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if name not in GNUPG_ALGORITHMS:
                raise ValueError(
                    f"unknown algorithm {quote(name)}; allowed: {', '.join(GNUPG_ALGORITHMS)}"
                    + did_you_mean(name, GNUPG_ALGORITHMS)
                )
        if len(set(value)) != len(value):
            raise ValueError("an algorithm is listed twice")
        return value


SUITE: Final = SuiteSpec(
    "gnupg",
    GnupgSuite,
    title="GnuPG decryption",
    report_rank=70,
    count_rank=50,
    foreign=True,
)
"""Suite ``gnupg`` for the registry (:data:`archbench.suites.REGISTRY`)."""
