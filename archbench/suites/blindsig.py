"""The blindsig suite: CS and RSA blind signatures through libgnunetutil (the thesis appendix).

Suite ``blindsig`` (on by default: a matrix without ``defaults:`` runs it);
its harness side is ``harness/abh/suites/blindsig.py``.
This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, StrictBool, StrictInt, field_validator, model_validator

from archbench.suites.base import SuiteSettings, SuiteSpec, rsa_sizes


class BlindsigSuite(SuiteSettings):
    """Parameters of the CS/RSA blind-signature suite (the thesis appendix).

    ``iterations`` is the number of operations per timed block (the thesis's
    "10x"), ``repetitions`` the number of timed blocks per row.
    """

    iterations: StrictInt = Field(default=10, ge=1, le=100_000)
    repetitions: StrictInt = Field(default=3, ge=1, le=10_000)
    rsa_bits: tuple[StrictInt, ...] = Field(default=(1024, 2048, 3072, 4096), min_length=0)
    schemes: tuple[Literal["cs", "rsa"], ...] = ("cs", "rsa")
    warmup: StrictInt = Field(default=1, ge=0, le=1000)
    """Repetitions run and discarded before the timed ones."""
    max_time: float | None = Field(default=None, gt=0, strict=True)
    """Budget in s per scheme and key size; repetitions stop once it is spent (>= 1 taken)."""
    min_block_ns: StrictInt | None = Field(default=None, ge=1)
    """Calibration floor for one timed block in ns (harness default: max(100 ticks, 1 ms))."""
    ci_target: float | None = Field(default=None, gt=0, lt=1)
    """Adaptive repetitions: stop a scheme/size once the 95 % interval of each row's
    median is within this fraction of it (0.02 = ±2 %); None: exactly ``repetitions``."""
    max_repetitions: StrictInt = Field(default=100, ge=1, le=10_000)
    """With ``ci_target``: the most timed repetitions per scheme/size (``max_time`` too)."""
    min_repetitions: StrictInt = Field(default=6, ge=1, le=10_000)
    """With ``ci_target``: repetitions before it may stop (6: fewest with a 95 % interval)."""
    order: Literal["interleaved", "sequential"] = "interleaved"
    """Schemes/sizes take turns, one repetition each, shuffled per round; or one after another."""
    seed: StrictInt | None = Field(default=None, ge=0, le=2**63 - 1)
    """Seed of the interleaved order (default: from the clock; recorded in the results)."""
    fresh_items: StrictBool = False
    """True: every operation of a block on its own freshly prepared item. False (default):
    one call after another on the same item, as GNUnet's ``perf_crypto_*`` programs time
    it (``harness/CONTRACT.md``, *What a block times*)."""

    @field_validator("rsa_bits")
    @classmethod
    def _sane_bits(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        return rsa_sizes(value)

    @model_validator(mode="after")
    def _repetition_bounds(self) -> BlindsigSuite:
        if self.ci_target is not None and self.max_repetitions < self.min_repetitions:
            raise ValueError(
                f"max_repetitions ({self.max_repetitions}) is below min_repetitions"
                f" ({self.min_repetitions}); with ci_target, give at least"
                f" {self.min_repetitions} (a 95 % interval needs 6 samples)"
            )
        return self


SUITE: Final = SuiteSpec(
    "blindsig",
    BlindsigSuite,
    title="blind signatures",
    report_rank=10,
    count_rank=10,
    enabled_by_default=True,
    counted=True,
    blind_signatures=True,
)
"""Suite ``blindsig`` for the registry (:data:`archbench.suites.REGISTRY`)."""
