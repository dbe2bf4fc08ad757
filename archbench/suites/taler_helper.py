"""The taler-helper suite: Taler's security-module benchmarks (the thesis's security-module table).

Suite ``taler-helper`` (off unless a matrix names it);
its harness side is ``harness/abh/suites/taler_helper.py``.
This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, StrictInt

from archbench.suites.base import RowSuite, SuiteSettings, SuiteSpec


class TalerHelperSuite(SuiteSettings):
    """Taler's security-module benchmarks ``test_helper_rsa``/``test_helper_cs``.

    Needs a profile with the ``taler-helper`` recipe; their output is parsed by
    :mod:`archbench.upstream` on the host (suite ``security-module``).
    ``rsa_bits``: the ``RSA_KEYSIZE`` of the test configuration as built
    (the log does not print it).
    """

    tests: tuple[Literal["test_helper_rsa", "test_helper_cs"], ...] = Field(
        default=("test_helper_rsa", "test_helper_cs"), min_length=1
    )
    rsa_bits: StrictInt = Field(default=2048, ge=1024, le=16384)
    timeout_s: float = Field(default=1800.0, gt=0)


SECURITY_MODULE: Final = RowSuite("security-module", "security module", report_rank=20)
"""The suite of the rows parsed from this suite's logs, and of the thesis's security-module table
(:mod:`archbench.upstream`); they join the appendix's tables."""

SUITE: Final = SuiteSpec(
    "taler-helper",
    TalerHelperSuite,
    title="Taler's security module helpers",
    report_rank=80,
    count_rank=70,
    foreign=True,
    appendix=True,
    rows_as=SECURITY_MODULE,
)
"""Suite ``taler-helper`` for the registry (:data:`archbench.suites.REGISTRY`)."""
