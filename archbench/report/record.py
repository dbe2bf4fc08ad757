"""One row of the tidy frame as a typed record: its columns, their dtypes and its statistics.

:class:`Record` declares the frame's columns once: its fields, in order, are the
columns of :func:`archbench.report.frame.tidy_frame`, of ``results.csv`` and of
``results.json`` (:mod:`archbench.report.export`); a field's ``dtype`` metadata is the
pandas dtype its column gets (none: pandas infers it, as for text and for counts that
may be missing). :meth:`Record.of` computes one from a result's harness row.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

from archbench.analysis import (
    DEFAULT_CI_TARGET,
    median_interval,
    noise_cause_text,
    repeatability,
    summarize,
)
from archbench.errors import ReportError
from archbench.result import HELPER_OPERATIONS, THESIS_OPS, AppendixRow, Result, Row, RowFields

REFERENCE_IGNORED_FLAGS: Final = frozenset({"single_sample"})
"""Published figures are one printed number per row by nature; that is not a warning."""


def _dtype(name: str) -> Mapping[str, str]:
    """The metadata of a :class:`Record` field whose frame column has pandas dtype ``name``
    (a field without it gets the dtype pandas infers: text, counts that may be missing)."""
    return MappingProxyType({"dtype": name})


_BOOL: Final = _dtype("bool")
_INT: Final = _dtype("int64")
_OPTIONAL_INT: Final = _dtype("Int64")
_FLOAT: Final = _dtype("float64")


@dataclass(frozen=True, slots=True)
class Record:
    """One row of the tidy frame: a result's harness row with its statistics and provenance.

    Times are ns (``*_ns``; ``per_op_ns`` per operation, the others per block of
    ``ops_per_block`` operations), ``thesis_ms`` ms for ``thesis_ops`` operations,
    ``ops_per_s`` operations per second, ``mb_per_s`` 10⁶ bytes per second, ``cv`` and
    the ``*_run_cv`` relative (0.02: 2 %). ``None`` is a value that does not apply
    (``host_cpu`` of reference data, ``reference_source`` of our runs): a missing value
    in the frame, ``null`` in the JSON export. ``flags`` joins the statistics' flags
    with ``;`` (empty: none). ``row_id`` is :func:`row_id`.
    """

    origin: Literal["reference", "measured"]
    run_id: str
    target: str
    arch: str
    platform: str
    emulated: bool = field(metadata=_BOOL)
    suite: str
    scheme: str
    key_bits: int | None = field(metadata=_OPTIONAL_INT)
    param: str | None
    label: str
    operation: str
    row_id: str
    processes: int = field(metadata=_INT)
    device: str
    bytes_per_op: int | None = field(metadata=_OPTIONAL_INT)
    ops_per_block: int = field(metadata=_INT)
    valid: bool = field(metadata=_BOOL)
    invalid_reason: str | None
    n_samples: int = field(metadata=_INT)
    median_ns: float = field(metadata=_FLOAT)
    min_ns: float = field(metadata=_FLOAT)
    max_ns: float = field(metadata=_FLOAT)
    mean_ns: float = field(metadata=_FLOAT)
    stdev_ns: float = field(metadata=_FLOAT)
    q1_ns: float = field(metadata=_FLOAT)
    q3_ns: float = field(metadata=_FLOAT)
    iqr_ns: float = field(metadata=_FLOAT)
    cv: float = field(metadata=_FLOAT)
    per_op_ns: float = field(metadata=_FLOAT)
    per_op_ns_ci_low: float | None = field(metadata=_FLOAT)
    per_op_ns_ci_high: float | None = field(metadata=_FLOAT)
    ops_per_s: float = field(metadata=_FLOAT)
    mb_per_s: float | None = field(metadata=_FLOAT)
    thesis_ops: int = field(metadata=_INT)
    thesis_ms: float = field(metadata=_FLOAT)
    flags: str
    noise_cause: str | None
    ci_half_width: float | None = field(metadata=_FLOAT)
    ci_target: float | None = field(metadata=_FLOAT)
    ci_reached: bool | None
    stop_reason: str | None
    steal: float | None = field(metadata=_FLOAT)
    iowait: float | None = field(metadata=_FLOAT)
    involuntary_switches: int | None
    load_max: float | None = field(metadata=_FLOAT)
    cpu_governors: str | None
    freq_mhz_min: float | None = field(metadata=_FLOAT)
    freq_mhz_max: float | None = field(metadata=_FLOAT)
    order: str | None
    order_seed: int | None
    runs: int = field(metadata=_INT)
    within_run_cv: float = field(metadata=_FLOAT)
    between_run_cv: float | None = field(metadata=_FLOAT)
    calibrated: bool = field(metadata=_BOOL)
    budget_exhausted: bool = field(metadata=_BOOL)
    printed: str | None
    uncertainty_ns: int | None = field(metadata=_OPTIONAL_INT)
    cpu_model: str
    cores: int = field(metadata=_INT)
    machine: str
    os: str
    kernel: str
    libsodium: str | None
    libgcrypt: str | None
    libgnunetutil: str | None
    gnunet_version: str | None
    tools: str | None
    harness_version: str
    started_at: str
    host_arch: str | None
    host_cpu: str | None
    qemu_version: str | None
    image_id: str | None
    image_tag: str | None
    qemu_cpu: str | None
    cpuset: str | None
    base_built: str | None
    docker_host: str | None
    archive_id: str | None
    reference_source: str | None
    reference_citation: str | None

    @property
    def flag_names(self) -> tuple[str, ...]:
        """``flags`` split: ``"noisy;single_sample"`` -> ``("noisy", "single_sample")``."""
        return tuple(self.flags.split(";")) if self.flags else ()

    @property
    def appendix_row(self) -> AppendixRow:
        """Where this record stands in the appendix's tables (the same row on every machine)."""
        return AppendixRow(self.operation, self.thesis_ops, self.scheme, self.key_bits or 0)

    @property
    def values(self) -> tuple[object, ...]:
        """The record's values in :data:`COLUMNS` order (one frame row)."""
        return tuple(getattr(self, name) for name in COLUMNS)

    @classmethod
    def of(cls, result: Result, row: Row) -> Record:
        """The record of ``row`` of ``result``.

        Statistics come from :func:`archbench.analysis.summarize` (block times in ns,
        Hyndman-Fan type 7 quartiles, sample stdev); reference rows never carry
        ``single_sample``.

        Raises:
            ReportError: the row's samples are not positive finite numbers (a damaged
                results file); the message names target and run.
        """
        return _record(result, row)


_FIELDS: Final = dataclasses.fields(Record)

COLUMNS: Final[tuple[str, ...]] = tuple(f.name for f in _FIELDS)
"""The tidy frame's columns, in order: the fields of :class:`Record`."""

DTYPES: Final[dict[str, str]] = {f.name: f.metadata["dtype"] for f in _FIELDS if f.metadata}
"""Column -> pandas dtype, for the columns that declare one (the others are inferred)."""


def thesis_ops(row: Row) -> int:
    """How many operations one printed figure covers.

    10 for the blind-signature operations (the appendix prints "10x signing"
    whatever block size we measured with); the whole block for the security
    module, whose table prints "100 parallel signature operations".
    """
    return row.ops_per_block if row.operation in HELPER_OPERATIONS else THESIS_OPS


def row_id(row: RowFields) -> str:
    """What tells a result's rows apart: ``blindsig:RSA 2048 bit:signing``.

    ``suite:label:operation``, then whatever else distinguishes rows of one
    operation: the block of a security-module operation (``…:100`` and
    ``…:800`` parallel signatures, which share the operation id), the
    process count (``…:4p``), a device other than the CPU and the message
    size (``…:1024B``). (run_id, target, row_id) is the exports' key.
    """
    parts = [row.suite, row.label, row.operation]
    if row.operation in HELPER_OPERATIONS:
        parts.append(str(row.ops_per_block))
    if row.processes > 1:
        parts.append(f"{row.processes}p")
    if row.device != "cpu":
        parts.append(row.device)
    if row.bytes_per_op is not None:
        parts.append(f"{row.bytes_per_op}B")
    return ":".join(parts)


def clock_resolution_ns(result: Result) -> float | None:
    """The target's effective clock tick in ns, when the harness reported it.

    The coarser of ``clock_getres`` and the smallest step the harness saw
    (``calibration`` in ``harness/CONTRACT.md``); ``None`` for documents of
    older harnesses and reference data, which disables the
    ``near_resolution`` flag.
    """
    calibration = result.harness.calibration
    return calibration.tick_ns if calibration is not None else None


def _record(result: Result, row: Row) -> Record:
    setup = result.harness.setup
    execution = result.execution
    reference = result.reference
    ops = thesis_ops(row)
    try:
        stats = summarize(
            row.samples_ns,
            row.ops_per_block,
            clock_resolution_ns=clock_resolution_ns(result),
            thesis_ops=ops,
            ci_target=row.ci_target or DEFAULT_CI_TARGET,
        )
    except ValueError as exc:
        raise ReportError(
            f"target {result.target.name} (run {result.run_id}): {row.label} {row.operation}: "
            f"{exc}; the results file is damaged, re-measure it with 'invoke bench'"
        ) from exc
    spread = (
        repeatability(row.samples_ns, row.run_sizes)
        if row.run_sizes is not None and len(row.run_sizes) > 1
        else None
    )
    interval = median_interval(row.samples_ns)
    noise = row.noise
    params = result.harness.parameters if row.suite == "blindsig" else None
    flags = stats.flags
    if reference is not None:
        flags = tuple(f for f in flags if f not in REFERENCE_IGNORED_FLAGS)
    return Record(
        origin="reference" if reference is not None else "measured",
        run_id=result.run_id,
        target=result.target.name,
        arch=result.target.arch,
        platform=result.target.platform,
        emulated=result.emulated,
        suite=row.suite,
        scheme=row.scheme,
        key_bits=row.key_bits,
        param=row.param,
        label=row.label,
        operation=row.operation,
        row_id=row_id(row),
        processes=row.processes,
        device=row.device,
        bytes_per_op=row.bytes_per_op,
        ops_per_block=row.ops_per_block,
        valid=row.valid,
        invalid_reason=None if row.valid else row.invalid_reason,
        n_samples=stats.n,
        median_ns=stats.median_ns,
        min_ns=stats.min_ns,
        max_ns=stats.max_ns,
        mean_ns=stats.mean_ns,
        stdev_ns=stats.stdev_ns,
        q1_ns=stats.q1_ns,
        q3_ns=stats.q3_ns,
        iqr_ns=stats.iqr_ns,
        cv=stats.cv,
        per_op_ns=stats.per_op_ns,
        per_op_ns_ci_low=interval[0] / row.ops_per_block if interval else None,
        per_op_ns_ci_high=interval[1] / row.ops_per_block if interval else None,
        ops_per_s=stats.ops_per_s,
        mb_per_s=(
            stats.ops_per_s * row.bytes_per_op / 1e6 if row.bytes_per_op is not None else None
        ),
        thesis_ops=ops,
        thesis_ms=stats.thesis_ms,
        flags=";".join(flags),
        noise_cause=noise_cause_text(flags, row.noise, row.stop),
        ci_half_width=stats.ci_half_width,
        ci_target=row.ci_target,
        ci_reached=(
            stats.ci_half_width is not None and stats.ci_half_width <= row.ci_target
            if row.ci_target is not None and row.valid and row.stop != "keygen_cap"
            else None
        ),
        stop_reason=row.stop if reference is None else None,
        steal=noise.steal if noise else None,
        iowait=noise.iowait if noise else None,
        involuntary_switches=noise.involuntary_switches if noise else None,
        load_max=noise.load_max if noise else None,
        cpu_governors=",".join(noise.governors) if noise and noise.governors else None,
        freq_mhz_min=noise.freq_mhz_min if noise else None,
        freq_mhz_max=noise.freq_mhz_max if noise else None,
        order=params.order if params else None,
        order_seed=params.order_seed if params else None,
        runs=spread.runs if spread else 1,
        within_run_cv=spread.within_cv if spread else stats.cv,
        between_run_cv=spread.between_cv if spread else None,
        calibrated=row.calibrated,
        budget_exhausted=row.budget_exhausted,
        printed=row.printed,
        uncertainty_ns=row.uncertainty_ns,
        cpu_model=setup.cpu_model,
        cores=setup.cores,
        machine=setup.machine,
        os=setup.os,
        kernel=setup.kernel,
        libsodium=setup.packages.get("libsodium"),
        libgcrypt=setup.packages.get("libgcrypt"),
        libgnunetutil=setup.packages.get("libgnunetutil"),
        gnunet_version=setup.gnunet_version,
        tools="; ".join(
            f"{name}: {text.splitlines()[0] if text else ''}"
            for name, text in sorted((setup.tools or {}).items())
        )
        or None,
        harness_version=result.harness.harness_version,
        started_at=result.harness.started_at,
        host_arch=execution.host_arch if execution else None,
        host_cpu=execution.host_cpu if execution else None,
        qemu_version=execution.qemu_version if execution else None,
        image_id=execution.image_id if execution else None,
        image_tag=execution.image_tag if execution else None,
        qemu_cpu=execution.qemu_cpu if execution else None,
        cpuset=execution.cpuset if execution else None,
        base_built=execution.base_built if execution else None,
        docker_host=execution.docker_host if execution else None,
        archive_id=execution.archive.archive_id if execution and execution.archive else None,
        reference_source=reference.source if reference else None,
        reference_citation=reference.citation if reference else None,
    )
