"""The gnunet-perf suite: GNUnet's own ``perf_crypto_rsa`` and ``perf_crypto_cs``.

Suite ``gnunet-perf`` (off unless a matrix names it);
its harness side is ``harness/abh/suites/gnunet_perf.py``.
This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, StrictInt, field_validator

from archbench.suites.base import SuiteSettings, SuiteSpec


class GnunetPerfSuite(SuiteSettings):
    """GNUnet's own ``perf_crypto_rsa`` and ``perf_crypto_cs``, built from Debian's source.

    The image builds them from the ``gnunet`` source package of the installed
    libgnunetutil (``deb-src``), with archbench's minimal patch
    (``images/gnunet-perf/perf-crypto-0.20.patch``: the 0.20 ``cs_r_derive``
    seed argument, RSA key sizes from the command line); their output is
    parsed on the host by :mod:`archbench.upstream` into rows of suite
    ``gnunet-perf``. ``runs``: whole program runs, one sample per row each;
    ``rsa_bits``: the sizes ``perf_crypto_rsa`` measures (its own default is
    all four); ``programs``: which of the two to run.
    """

    programs: tuple[Literal["perf_crypto_rsa", "perf_crypto_cs"], ...] = Field(
        default=("perf_crypto_rsa", "perf_crypto_cs"), min_length=1
    )
    runs: StrictInt = Field(default=3, ge=1, le=1000)
    rsa_bits: tuple[StrictInt, ...] = Field(default=(1024, 2048, 3072, 4096), min_length=1)
    timeout_s: float = Field(default=1800.0, gt=0)

    @field_validator("rsa_bits")
    @classmethod
    def _bits(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(not 512 <= b <= 16384 for b in value):
            raise ValueError("RSA key sizes are whole numbers of bits from 512 to 16384")
        if len(set(value)) != len(value):
            raise ValueError("a key size is listed twice")
        return value


SUITE: Final = SuiteSpec(
    "gnunet-perf",
    GnunetPerfSuite,
    title="GNUnet's perf_crypto programs",
    report_rank=30,
    count_rank=60,
    foreign=True,
    blind_signatures=True,
)
"""Suite ``gnunet-perf`` for the registry (:data:`archbench.suites.REGISTRY`)."""
