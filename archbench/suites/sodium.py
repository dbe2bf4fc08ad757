"""The sodium suite: libsodium primitives one operation at a time (the pycryptopp seed).

Suite ``sodium`` (off unless a matrix names it);
its harness side is ``harness/abh/suites/sodium.py``.
This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, StrictInt, model_validator

from archbench.suites.base import SuiteSettings, SuiteSpec


class SodiumSuite(SuiteSettings):
    """libsodium primitives timed one operation at a time (the pycryptopp seed).

    ``sizes``: message sizes in bytes of the per-byte rows (the seed's small,
    medium and large); ``nth``: which best sample is reported beside best,
    mean and worst (pycryptopp: 3rd); ``ops_per_sample``: calls per timed
    sample, 1 as pycryptopp, or ``auto`` to grow it past 100 clock ticks.
    """

    repetitions: StrictInt = Field(default=64, ge=1, le=100_000)
    warmup: StrictInt = Field(default=4, ge=0, le=10_000)
    sizes: tuple[StrictInt, ...] = Field(default=(1000, 10_000, 100_000), min_length=1)
    nth: StrictInt = Field(default=3, ge=1)
    ops_per_sample: StrictInt | Literal["auto"] = 1
    timeout_s: float = Field(default=900.0, gt=0)

    @model_validator(mode="after")
    def _nth(self) -> SodiumSuite:
        if self.nth > self.repetitions:
            raise ValueError(f"nth ({self.nth}) cannot exceed repetitions ({self.repetitions})")
        if any(size < 1 or size > 1 << 30 for size in self.sizes):
            raise ValueError("sizes are message sizes in bytes from 1 to 2^30")
        return self


SUITE: Final = SuiteSpec(
    "sodium",
    SodiumSuite,
    title="libsodium",
    report_rank=60,
    count_rank=30,
    counted=True,
)
"""Suite ``sodium`` for the registry (:data:`archbench.suites.REGISTRY`)."""
