"""The taler-helper suite: Taler's security-module benchmarks (the thesis's security-module table).

Suite ``taler-helper`` (off unless a matrix names it);
its harness side is ``harness/abh/suites/taler_helper.py``.
This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import Field, StrictInt, field_validator

from archbench.suites.base import RowSuite, SuiteSettings, SuiteSpec


class TalerHelperSuite(SuiteSettings):
    """Taler's security-module benchmarks ``test_helper_rsa``/``test_helper_cs``.

    Needs a target with a ``taler:`` source (``docs/taler-recipe.md``); the
    output is parsed by :mod:`archbench.upstream` on the host (suite ``security-module``).
    ``rsa_bits``: the key sizes, each the ``RSA_KEYSIZE`` of its own secmod configuration
    and key home (the log does not print it; a single integer is one size);
    ``repetitions``: runs of each test and size (one sample each, eight for the
    100-parallel rows); ``timeout_s``: per run.
    """

    tests: tuple[Literal["test_helper_rsa", "test_helper_cs"], ...] = Field(
        default=("test_helper_rsa", "test_helper_cs"), min_length=1
    )
    rsa_bits: tuple[Annotated[StrictInt, Field(ge=1024, le=16384)], ...] = Field(
        default=(1024, 2048, 3072, 4096), min_length=1
    )
    repetitions: StrictInt = Field(default=3, ge=1, le=100)
    timeout_s: float = Field(default=1800.0, gt=0)

    @field_validator("rsa_bits", mode="before")
    @classmethod
    def _one_size(cls, value: Any) -> Any:
        # Matrices written for the one-size suite say rsa_bits: 2048.
        return [value] if isinstance(value, int) and not isinstance(value, bool) else value


SECURITY_MODULE: Final = RowSuite("security-module", "security module", report_rank=20)
"""The suite of the rows parsed from this suite's logs, and of the thesis's security-module table
(:mod:`archbench.upstream`); they join the appendix's tables."""

SUITE: Final = SuiteSpec(
    "taler-helper",
    TalerHelperSuite,
    title="Taler's security module helpers",
    report_rank=80,
    count_rank=70,
    counted=True,
    foreign=True,
    blind_signatures=True,
    rows_as=SECURITY_MODULE,
)
"""Suite ``taler-helper`` for the registry (:data:`archbench.suites.REGISTRY`)."""
