"""The tidy frame of all results, and the machines of one render, built once and shared.

:func:`tidy_frame` has one row per result × harness row, that is per machine ×
suite × scheme (and key size) × operation (and block size), with the
statistics of :func:`archbench.analysis.stats.summarize` and provenance columns
(run, target, emulation, CPU, OS, package versions, reference source). Reports,
plots and exports (:mod:`archbench.report.export`) all read this one frame, so a
table, a bar and a CSV cell can never disagree.

:func:`build` calls :func:`tidy_frame` once per render; every table, section and
part of a render reads the :class:`ReportData` it returns.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pandas as pd

from archbench.analysis import (
    DEFAULT_CI_TARGET,
    median_interval,
    noise_cause_text,
    repeatability,
    summarize,
)
from archbench.errors import ReportError
from archbench.report.model import Machine, slug
from archbench.result import (
    HELPER_OPERATIONS,
    OPERATION_ORDER,
    THESIS_OPS,
    Result,
    Row,
)
from archbench.suites import APPENDIX_SUITES

REFERENCE_IGNORED_FLAGS: Final = frozenset({"single_sample"})
"""Published figures are one printed number per row by nature; that is not a warning."""

COLUMNS: Final = (
    "origin",
    "run_id",
    "target",
    "arch",
    "platform",
    "emulated",
    "suite",
    "scheme",
    "key_bits",
    "param",
    "label",
    "operation",
    "row_id",
    "processes",
    "device",
    "bytes_per_op",
    "ops_per_block",
    "valid",
    "invalid_reason",
    "n_samples",
    "median_ns",
    "min_ns",
    "max_ns",
    "mean_ns",
    "stdev_ns",
    "q1_ns",
    "q3_ns",
    "iqr_ns",
    "cv",
    "per_op_ns",
    "per_op_ns_ci_low",
    "per_op_ns_ci_high",
    "ops_per_s",
    "mb_per_s",
    "thesis_ops",
    "thesis_ms",
    "flags",
    "noise_cause",
    "ci_half_width",
    "ci_target",
    "ci_reached",
    "stop_reason",
    "steal",
    "iowait",
    "involuntary_switches",
    "load_max",
    "cpu_governors",
    "freq_mhz_min",
    "freq_mhz_max",
    "order",
    "order_seed",
    "runs",
    "within_run_cv",
    "between_run_cv",
    "calibrated",
    "budget_exhausted",
    "printed",
    "uncertainty_ns",
    "cpu_model",
    "cores",
    "machine",
    "os",
    "kernel",
    "libsodium",
    "libgcrypt",
    "libgnunetutil",
    "gnunet_version",
    "tools",
    "harness_version",
    "started_at",
    "host_arch",
    "host_cpu",
    "qemu_version",
    "image_id",
    "image_tag",
    "qemu_cpu",
    "cpuset",
    "base_built",
    "docker_host",
    "archive_id",
    "reference_source",
    "reference_citation",
)

_DTYPES: Final[dict[str, str]] = {
    "emulated": "bool",
    "valid": "bool",
    "calibrated": "bool",
    "budget_exhausted": "bool",
    "runs": "int64",
    "key_bits": "Int64",
    "bytes_per_op": "Int64",
    "processes": "int64",
    "uncertainty_ns": "Int64",
    "ops_per_block": "int64",
    "n_samples": "int64",
    "thesis_ops": "int64",
    "cores": "int64",
    **{
        name: "float64"
        for name in (
            "median_ns",
            "min_ns",
            "max_ns",
            "mean_ns",
            "stdev_ns",
            "q1_ns",
            "q3_ns",
            "iqr_ns",
            "cv",
            "per_op_ns",
            "per_op_ns_ci_low",
            "per_op_ns_ci_high",
            "ops_per_s",
            "mb_per_s",
            "thesis_ms",
            "within_run_cv",
            "between_run_cv",
            "ci_half_width",
            "ci_target",
            "steal",
            "iowait",
            "load_max",
            "freq_mhz_min",
            "freq_mhz_max",
        )
    },
}


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


def _record(result: Result, row: Row) -> dict[str, Any]:
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
    return {
        "origin": "reference" if reference is not None else "measured",
        "run_id": result.run_id,
        "target": result.target.name,
        "arch": result.target.arch,
        "platform": result.target.platform,
        "emulated": result.emulated,
        "suite": row.suite,
        "scheme": row.scheme,
        "key_bits": row.key_bits,
        "param": row.param,
        "label": row.label,
        "operation": row.operation,
        "row_id": row_id(row),
        "processes": row.processes,
        "device": row.device,
        "bytes_per_op": row.bytes_per_op,
        "ops_per_block": row.ops_per_block,
        "valid": row.valid,
        "invalid_reason": None if row.valid else row.invalid_reason,
        "n_samples": stats.n,
        "median_ns": stats.median_ns,
        "min_ns": stats.min_ns,
        "max_ns": stats.max_ns,
        "mean_ns": stats.mean_ns,
        "stdev_ns": stats.stdev_ns,
        "q1_ns": stats.q1_ns,
        "q3_ns": stats.q3_ns,
        "iqr_ns": stats.iqr_ns,
        "cv": stats.cv,
        "per_op_ns": stats.per_op_ns,
        "per_op_ns_ci_low": interval[0] / row.ops_per_block if interval else None,
        "per_op_ns_ci_high": interval[1] / row.ops_per_block if interval else None,
        "ops_per_s": stats.ops_per_s,
        "mb_per_s": (
            stats.ops_per_s * row.bytes_per_op / 1e6 if row.bytes_per_op is not None else None
        ),
        "thesis_ops": ops,
        "thesis_ms": stats.thesis_ms,
        "flags": ";".join(flags),
        "noise_cause": noise_cause_text(flags, row.noise, row.stop),
        "ci_half_width": stats.ci_half_width,
        "ci_target": row.ci_target,
        "ci_reached": (
            stats.ci_half_width is not None and stats.ci_half_width <= row.ci_target
            if row.ci_target is not None and row.valid and row.stop != "keygen_cap"
            else None
        ),
        "stop_reason": row.stop if reference is None else None,
        "steal": noise.steal if noise else None,
        "iowait": noise.iowait if noise else None,
        "involuntary_switches": noise.involuntary_switches if noise else None,
        "load_max": noise.load_max if noise else None,
        "cpu_governors": ",".join(noise.governors) if noise and noise.governors else None,
        "freq_mhz_min": noise.freq_mhz_min if noise else None,
        "freq_mhz_max": noise.freq_mhz_max if noise else None,
        "order": params.order if params else None,
        "order_seed": params.order_seed if params else None,
        "runs": spread.runs if spread else 1,
        "within_run_cv": spread.within_cv if spread else stats.cv,
        "between_run_cv": spread.between_cv if spread else None,
        "calibrated": row.calibrated,
        "budget_exhausted": row.budget_exhausted,
        "printed": row.printed,
        "uncertainty_ns": row.uncertainty_ns,
        "cpu_model": setup.cpu_model,
        "cores": setup.cores,
        "machine": setup.machine,
        "os": setup.os,
        "kernel": setup.kernel,
        "libsodium": setup.packages.get("libsodium"),
        "libgcrypt": setup.packages.get("libgcrypt"),
        "libgnunetutil": setup.packages.get("libgnunetutil"),
        "gnunet_version": setup.gnunet_version,
        "tools": "; ".join(
            f"{name}: {text.splitlines()[0] if text else ''}"
            for name, text in sorted((setup.tools or {}).items())
        )
        or None,
        "harness_version": result.harness.harness_version,
        "started_at": result.harness.started_at,
        "host_arch": execution.host_arch if execution else None,
        "host_cpu": execution.host_cpu if execution else None,
        "qemu_version": execution.qemu_version if execution else None,
        "image_id": execution.image_id if execution else None,
        "image_tag": execution.image_tag if execution else None,
        "qemu_cpu": execution.qemu_cpu if execution else None,
        "cpuset": execution.cpuset if execution else None,
        "base_built": execution.base_built if execution else None,
        "docker_host": execution.docker_host if execution else None,
        "archive_id": execution.archive.archive_id if execution and execution.archive else None,
        "reference_source": reference.source if reference else None,
        "reference_citation": reference.citation if reference else None,
    }


def tidy_frame(results: Sequence[Result]) -> pd.DataFrame:
    """One row per harness row of every result, with statistics and provenance.

    Statistics come from :func:`archbench.analysis.stats.summarize` (block times in
    ns, Hyndman-Fan type 7 quartiles, sample stdev); ``thesis_ms`` is the
    appendix's figure in ms: the median time of ``thesis_ops`` operations (10
    for blind signatures, the whole block for the security module). ``flags``
    joins ``summarize``'s flags with ``;`` (empty when none); reference rows
    never carry ``single_sample``. ``printed`` is the reference's text as
    published, missing for measured rows. Provenance columns that do not
    apply (``host_cpu`` of reference data, ``reference_source`` of our runs)
    are missing values (``pd.isna`` is true; ``null`` in the JSON export).

    Rows keep the results' order, and within one result the appendix's:
    operation (:data:`OPERATION_ORDER`), CS before RSA, RSA by ascending key
    size, then block size; rows of the other suites follow in the order
    their suite emitted them. ``mb_per_s`` is ``bytes_per_op`` × ``ops_per_s``
    / 10⁶ for throughput rows (MB, not MiB, as ``openssl speed`` prints).
    Columns are :data:`COLUMNS`; an empty input gives an empty frame with
    those columns and dtypes.

    Raises:
        ReportError: a row's samples are not positive finite numbers (a
            damaged results file); the message names target and run.
    """
    rank: dict[str, int] = {op: i for i, op in enumerate(OPERATION_ORDER)}
    records: list[dict[str, Any]] = []
    for result in results:
        appendix = [r for r in result.harness.rows if r.suite in APPENDIX_SUITES]
        others = [r for r in result.harness.rows if r.suite not in APPENDIX_SUITES]
        rows = sorted(
            appendix,
            key=lambda r: (
                rank.get(r.operation, len(rank)),
                r.scheme != "CS",
                r.key_bits or 0,
                r.ops_per_block,
                r.suite,
            ),
        )
        rows += others
        records.extend(_record(result, row) for row in rows)
    frame = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    return frame.astype(_DTYPES)


def _json_value(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame as JSON-ready dicts: missing values are ``None``, numbers are Python's."""
    return [
        {column: _json_value(value) for column, value in zip(frame.columns, row, strict=True)}
        for row in frame.itertuples(index=False, name=None)
    ]


@dataclass(frozen=True)
class ReportData:
    """The results of one render, their tidy frame and the machines they show as."""

    results: tuple[Result, ...]
    frame: pd.DataFrame = field(compare=False)
    machines: tuple[Machine, ...]
    """Every result (all suites), in report order (:func:`machines`)."""

    @functools.cached_property
    def appendix_machines(self) -> list[Machine]:
        """The machines restricted to the appendix suites' rows (computed once per render).

        A machine without such rows is left out, unless it has no rows at all
        (its section then says so). A machine with rows of the appendix suites only
        is kept as it is: no frame is filtered for it (O(rows) in all).
        """
        out = []
        for m in self.machines:
            records = tuple(r for r in m.records if r["suite"] in APPENDIX_SUITES)
            if len(records) == len(m.records):
                if records or not m.result.harness.rows:
                    out.append(m)
                continue
            if records:
                positions = tuple(
                    i
                    for i, r in zip(m.positions, m.records, strict=True)
                    if r["suite"] in APPENDIX_SUITES
                )
                out.append(dataclasses.replace(m, positions=positions, records=records))
        return out


def machines(results: Sequence[Result], frame: pd.DataFrame) -> list[Machine]:
    """Measured results by target name and run, then reference results in the given order.

    ``frame`` is :func:`tidy_frame` of ``results``; each machine gets its result's
    rows, one slice of it. A target name that occurs in several results
    (``--all-runs``) is shown as ``target@run``, so every section, column and
    LaTeX label is unique. Linear in the rows.

    Raises:
        ReportError: no results.
    """
    if not results:
        raise ReportError("no results to report; run 'invoke bench' first")
    # tidy_frame writes each result's rows together, in the order of ``results``:
    # a machine's rows are one slice of the frame, found without a mask over it
    # (a mask per machine made a report quadratic in the results files).
    spans: dict[int, tuple[int, int]] = {}
    offset = 0
    for r in results:
        spans[id(r)] = (offset, offset + len(r.harness.rows))
        offset += len(r.harness.rows)
    if offset != len(frame):
        raise ReportError(f"the tidy frame has {len(frame)} rows, the results {offset}")
    records = frame_records(frame)
    measured = sorted(
        (r for r in results if r.reference is None), key=lambda r: (r.target.name, r.run_id)
    )
    ordered = measured + [r for r in results if r.reference is not None]
    counts: dict[str, int] = {}
    for r in ordered:
        counts[r.target.name] = counts.get(r.target.name, 0) + 1
    out: list[Machine] = []
    # Published labels (tab:comp-sign-amd-ryzen-7) keep their suffix; measured ones yield.
    slugs = {
        r.reference.table_label.removeprefix("tab:comp-sign-")
        for r in ordered
        if r.reference is not None and r.reference.table_label
    }
    for r in ordered:
        name = r.target.name if counts[r.target.name] == 1 else f"{r.target.name}@{r.run_id}"
        unique = base = slug(name)
        n = 1
        while unique in slugs:
            n += 1
            unique = f"{base}-{n}"
        slugs.add(unique)
        start, stop = spans[id(r)]
        positions = tuple(range(start, stop))
        out.append(Machine(name, unique, r, frame, positions, tuple(records[start:stop])))
    return out


def build(results: Sequence[Result]) -> ReportData:
    """The tidy frame (once) and the machines of ``results``.

    Raises:
        ReportError: no results, or a damaged row (from :func:`tidy_frame`).
    """
    if not results:
        raise ReportError("no results to report; run 'invoke bench' first")
    frame = tidy_frame(results)
    return ReportData(tuple(results), frame, tuple(machines(results, frame)))


def machine_names(results: Sequence[Result]) -> list[tuple[str, Result]]:
    """Results in report order, each with the name its section and columns use.

    Measured results by target name and run id, then reference results in
    the given order; a target that occurs in several runs is
    ``target@run``. Plots use this so a bar and a table column agree.

    Raises:
        ReportError: no results.
    """
    return [(m.name, m.result) for m in machines(results, tidy_frame(results))]
