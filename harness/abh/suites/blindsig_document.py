"""The blind-signature suite's parts of the result document, as typed dictionaries.

The shapes of ``rows[]``, ``parameters`` and ``calibration`` that
``blindsig`` builds (CONTRACT.md; the host's models in
``archbench/result/`` read them). Standard library only.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


class CalibrationBlockDict(TypedDict):
    """One discarded calibration block of a row."""

    ops_per_block: int
    ns: int


class RowDict(TypedDict):
    """One ``rows[]`` entry of the document (see CONTRACT.md).

    The fields after ``invalid_reason`` are additions to the version 1
    contract (allowed without a version bump); ``note`` is present only when
    there is one (the driver's ``row_note``, or blindsig_adaptive's remark on
    key generation).
    """

    suite: str
    scheme: str
    key_bits: int | None
    operation: str
    ops_per_block: int
    samples_ns: list[int]
    valid: bool
    invalid_reason: str | None
    iterations_requested: int
    calibrated: bool
    repetitions_requested: int
    budget_exhausted: bool
    warmup_samples_ns: list[int]
    calibration_blocks: list[CalibrationBlockDict]
    note: NotRequired[str]


class ParametersDict(TypedDict):
    """``parameters`` of the document; all but the first three are additions."""

    iterations: int
    repetitions: int
    rsa_bits: list[int]
    schemes: list[str]
    message_bytes: int | None
    warmup: int
    max_time_s: float | None
    min_block_ns: int | None
    ci_target: float | None
    min_repetitions: int
    confidence: float
    order: str
    order_seed: int | None
    driver_involuntary_switches: int | None
    fresh_items: bool


class CalibrationDict(TypedDict):
    """``calibration`` of the document (an addition to version 1)."""

    clock: str
    resolution_ns: int | None
    observed_tick_ns: int | None
    pair_overhead_ns: float | None
    probe_reads: int | None
    min_block_ns: int
    max_block_ops: int
