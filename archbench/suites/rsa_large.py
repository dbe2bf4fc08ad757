"""The rsa-large suite: RSA through libcrypto up to 16384 bits (the openssl-rsa-8192-16384 seed).

Suite ``rsa-large`` (off unless a matrix names it);
its harness side is ``harness/abh/suites/rsa_large.py``.
This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Final

from pydantic import Field, StrictInt, field_validator

from archbench.suites.base import SuiteSettings, SuiteSpec, rsa_sizes


class RsaLargeSuite(SuiteSettings):
    """RSA through libcrypto up to 16384 bits (the openssl-rsa-8192-16384 seed).

    ``max_time``: budget in s per key size for the signing/verifying blocks;
    key generation is timed apart (``keygen_repetitions`` keys per size,
    abandoned after ``keygen_max_time`` s: 16384-bit keys can take minutes,
    and a size whose key is not ready is reported invalid, not waited for).
    ``min_block_ns``: signing blocks double until one lasts this long (0: one
    operation per block).
    """

    bits: tuple[StrictInt, ...] = Field(default=(2048, 4096, 8192, 16384), min_length=1)
    repetitions: StrictInt = Field(default=3, ge=1, le=1000)
    max_time: float = Field(default=60.0, gt=0)
    keygen_repetitions: StrictInt = Field(default=1, ge=1, le=1000)
    keygen_max_time: float = Field(default=600.0, gt=0)
    min_block_ns: StrictInt | None = Field(default=None, ge=0, le=10_000_000_000)

    @field_validator("bits")
    @classmethod
    def _sane_bits(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        return rsa_sizes(value)


SUITE: Final = SuiteSpec(
    "rsa-large",
    RsaLargeSuite,
    title="RSA up to 16384 bit (libcrypto)",
    report_rank=50,
    count_rank=20,
    counted=True,
)
"""Suite ``rsa-large`` for the registry (:data:`archbench.suites.REGISTRY`)."""
