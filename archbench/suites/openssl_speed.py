"""The openssl-speed suite: ``openssl speed -mr`` in the container (the openssl and tinc seeds).

Suite ``openssl-speed`` (off unless a matrix names it);
its harness side is ``harness/abh/suites/openssl_speed.py``.
This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Final

from pydantic import Field, StrictInt, StrictStr, field_validator

from archbench.inputs import did_you_mean, quote
from archbench.suites.base import SuiteSettings, SuiteSpec

OPENSSL_ALGORITHMS: Final = (
    "rsa1024",
    "rsa2048",
    "rsa3072",
    "rsa4096",
    "rsa7680",
    "rsa15360",
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
    "ecdhx448",
    "ed25519",
    "ed448",
    "aes-128-gcm",
    "aes-256-gcm",
    "sha256",
)
"""``openssl speed`` algorithm names the openssl-speed suite accepts (the harness's list;
``aes-*-gcm`` and ``sha256`` run as ``-evp``, one process each)."""


class OpensslSpeedSuite(SuiteSettings):
    """``openssl speed -mr`` in the container (the openssl and tinc seeds).

    ``seconds`` per algorithm (``-seconds``), ``multi``: process counts, 1 is
    the single-process figure, N > 1 adds ``-multi N`` (aggregate ops/s);
    ``repeat``: whole runs, one sample each.
    """

    algorithms: tuple[StrictStr, ...] = Field(
        default=(
            "rsa2048",
            "rsa4096",
            "ecdsap256",
            "ecdsap521",
            "ecdsabrp256r1",
            "ecdsabrp512r1",
            "ecdhp256",
            "ecdhbrp256r1",
            "ed25519",
            "ecdhx25519",
            "aes-128-gcm",
            "sha256",
        ),
        min_length=1,
    )
    evp_sizes: tuple[StrictInt, ...] = Field(default=(16, 64, 256, 1024, 8192, 16384), min_length=1)
    """Buffer sizes in bytes of the ``-evp`` algorithms (one process each)."""
    seconds: StrictInt = Field(default=3, ge=1, le=600)
    multi: tuple[StrictInt, ...] = Field(default=(1,), min_length=1)
    repeat: StrictInt = Field(default=1, ge=1, le=100)
    timeout_s: float = Field(default=300.0, gt=0)
    """Per openssl process; OpenSSL 3.5 runs ten RSA tests per ``rsaNNNN`` name."""

    @field_validator("algorithms")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if name not in OPENSSL_ALGORITHMS:
                raise ValueError(
                    f"unknown algorithm {quote(name)}; allowed: {', '.join(OPENSSL_ALGORITHMS)}"
                    + did_you_mean(name, OPENSSL_ALGORITHMS)
                )
        return tuple(dict.fromkeys(value))

    @field_validator("multi")
    @classmethod
    def _processes(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(n < 1 or n > 256 for n in value):
            raise ValueError("process counts are from 1 to 256")
        return tuple(sorted(set(value)))


SUITE: Final = SuiteSpec(
    "openssl-speed",
    OpensslSpeedSuite,
    title="openssl speed",
    report_rank=40,
    count_rank=40,
    foreign=True,
)
"""Suite ``openssl-speed`` for the registry (:data:`archbench.suites.REGISTRY`)."""
