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
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from archbench.analysis import (
    DEFAULT_CI_TARGET,
    median_interval,
    noise_cause_text,
    repeatability,
    summarize,
)
from archbench.errors import ReportError
from archbench.result import HELPER_OPERATIONS, THESIS_OPS, AppendixRow, Result, Row

REFERENCE_IGNORED_FLAGS: Final = frozenset({"single_sample"})
"""Published figures are one printed number per row by nature; that is not a warning."""


def _column(dtype: str | None = None) -> Any:
    """A :class:`Record` field whose frame column has pandas ``dtype`` (None: inferred)."""
    return field(metadata={"dtype": dtype} if dtype else {})


def _float() -> Any:
    return _column("float64")


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

    origin: Literal["reference", "measured"] = _column()
    run_id: str = _column()
    target: str = _column()
    arch: str = _column()
    platform: str = _column()
    emulated: bool = _column("bool")
    suite: str = _column()
    scheme: str = _column()
    key_bits: int | None = _column("Int64")
    param: str | None = _column()
    label: str = _column()
    operation: str = _column()
    row_id: str = _column()
    processes: int = _column("int64")
    device: str = _column()
    bytes_per_op: int | None = _column("Int64")
    ops_per_block: int = _column("int64")
    valid: bool = _column("bool")
    invalid_reason: str | None = _column()
    n_samples: int = _column("int64")
    median_ns: float = _float()
    min_ns: float = _float()
    max_ns: float = _float()
    mean_ns: float = _float()
    stdev_ns: float = _float()
    q1_ns: float = _float()
    q3_ns: float = _float()
    iqr_ns: float = _float()
    cv: float = _float()
    per_op_ns: float = _float()
    per_op_ns_ci_low: float | None = _float()
    per_op_ns_ci_high: float | None = _float()
    ops_per_s: float = _float()
    mb_per_s: float | None = _float()
    thesis_ops: int = _column("int64")
    thesis_ms: float = _float()
    flags: str = _column()
    noise_cause: str | None = _column()
    ci_half_width: float | None = _float()
    ci_target: float | None = _float()
    ci_reached: bool | None = _column()
    stop_reason: str | None = _column()
    steal: float | None = _float()
    iowait: float | None = _float()
    involuntary_switches: int | None = _column()
    load_max: float | None = _float()
    cpu_governors: str | None = _column()
    freq_mhz_min: float | None = _float()
    freq_mhz_max: float | None = _float()
    order: str | None = _column()
    order_seed: int | None = _column()
    runs: int = _column("int64")
    within_run_cv: float = _float()
    between_run_cv: float | None = _float()
    calibrated: bool = _column("bool")
    budget_exhausted: bool = _column("bool")
    printed: str | None = _column()
    uncertainty_ns: int | None = _column("Int64")
    cpu_model: str = _column()
    cores: int = _column("int64")
    machine: str = _column()
    os: str = _column()
    kernel: str = _column()
    libsodium: str | None = _column()
    libgcrypt: str | None = _column()
    libgnunetutil: str | None = _column()
    gnunet_version: str | None = _column()
    tools: str | None = _column()
    harness_version: str = _column()
    started_at: str = _column()
    host_arch: str | None = _column()
    host_cpu: str | None = _column()
    qemu_version: str | None = _column()
    image_id: str | None = _column()
    image_tag: str | None = _column()
    qemu_cpu: str | None = _column()
    cpuset: str | None = _column()
    base_built: str | None = _column()
    docker_host: str | None = _column()
    archive_id: str | None = _column()
    reference_source: str | None = _column()
    reference_citation: str | None = _column()

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


def row_id(row: Row) -> str:
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
