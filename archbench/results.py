"""Stored results: the versioned ``archbench-result`` JSON files and their store.

A results file wraps one harness document (``harness/CONTRACT.md``, format
``archbench-harness``) with what only the host knows: the target, whether it
ran emulated, the QEMU version, the image. Files live at
``<root>/<run-id>/<target>.json`` and are written atomically (temporary file
in the same directory, then ``os.replace``), so a crash or Ctrl-C never
leaves a half-written file and never touches another target's results.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import secrets
import statistics
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from archbench import messages, safe_load
from archbench.errors import HarnessError, ResultsError

RESULT_FORMAT: Literal["archbench-result"] = "archbench-result"
RESULT_VERSION: Literal[2] = 2
"""Version 2 (instruction counts): ``Result.metric``, ``HarnessDocument.counting`` and
``Row.instructions``. Version 1 files are migrated on load (:func:`migrate`)."""
Metric = Literal["time", "instructions"]
METRICS: Final = get_args(Metric)
HARNESS_FORMAT = "archbench-harness"
HARNESS_VERSION = 1

# The blind-signature suite's vocabulary, in the thesis appendix's row order;
# reports sort by it. Other suites name schemes and operations freely.
Operation = Literal[
    "key_generation",
    "r_derivation",
    "blinding_secret_derivation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
    # Taler's security module (crypto helper) timings, imported or reference only:
    # N signatures through the helper, one after another or N at once.
    "helper_sequential_signing",
    "helper_parallel_signing",
]
Scheme = Literal["CS", "RSA"]

MAX_NS: Final = 2**63 - 1
"""Largest time a row may hold, in ns (int64, as the harness's clock; ~292 years)."""
MAX_KEY_BITS: Final = 65_536
MAX_RESULT_BYTES: Final = 64 * 1024 * 1024

RUN_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""Run ids as directory names: :func:`new_run_id` writes ``20261129T224000Z-1a2b3c``;
``invoke import --run`` may choose others. No ``/``, never ``.`` or ``..``."""
FILE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""Target names as file names inside a run directory."""


def check_run_id(run_id: str, what: str = "run id") -> str:
    """``run_id`` when it is a safe directory name (:data:`RUN_ID`).

    Raises:
        ResultsError: anything else (``../x``, ``/tmp``, empty, too long).
    """
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise ResultsError(
            f"{what} {safe_load.quote(run_id)} is not a run id; run ids are letters, digits, "
            "'.', '_' and '-', starting with a letter or digit (e.g. 20261129T224000Z-1a2b3c)"
        )
    return run_id


def inside(root: Path, path: Path, what: str) -> Path:
    """``path`` when it lies inside ``root`` once both are resolved (symlinks followed).

    Raises:
        ResultsError: ``path`` would land outside ``root``.
    """
    base = root.resolve()
    resolved = path.resolve()
    if resolved != base and base not in resolved.parents:
        raise ResultsError(f"{path}: {what} would be written outside {root}; refusing")
    return path


APPENDIX_SUITES: Final = frozenset({"blindsig", "security-module", "gnunet-perf"})
"""Suites whose rows use :data:`Scheme` and :data:`Operation` (the thesis appendix's tables)."""


class _Frozen(BaseModel):
    # Harness documents may gain fields without a version bump (CONTRACT.md):
    # unknown keys are kept (model_extra, and written back on save), never
    # rejected and never dropped.
    model_config = ConfigDict(frozen=True, extra="allow")


class CalibrationBlock(_Frozen):
    """One discarded calibration block of a row: ``ops_per_block`` operations took ``ns``."""

    ops_per_block: int = Field(ge=1)
    ns: int = Field(ge=0)


def _appendix_rows_schema(schema: dict[str, Any]) -> None:
    """JSON schema of :class:`Row`: rows of the appendix suites name a CS/RSA operation."""
    schema["if"] = {
        "properties": {"suite": {"enum": sorted(APPENDIX_SUITES)}},
        "required": ["suite"],
    }
    schema["then"] = {
        "properties": {
            "scheme": {"enum": list(get_args(Scheme))},
            "operation": {"enum": list(get_args(Operation))},
        }
    }


StopReason = Literal["repetitions", "budget", "target", "invalid", "keygen_cap"]
"""Why the harness stopped taking repetitions of a row (``harness/CONTRACT.md``)."""


class MedianCi(_Frozen):
    """The harness's confidence interval of a row's median per-operation time, ns.

    ``half_width`` is ``max(median - low, high - median) / median`` (0.014 = ±1.4 %).
    """

    confidence: float = Field(gt=0, lt=1)
    low_per_op_ns: float = Field(gt=0)
    high_per_op_ns: float = Field(gt=0)
    half_width: float = Field(ge=0)


class RowNoise(_Frozen):
    """The machine over a row's timed repetitions (harness ``noise``; CONTRACT.md).

    ``steal`` and ``iowait`` are fractions of all CPUs' time (/proc/stat),
    ``involuntary_switches`` the driver's, ``load_max`` the largest 1-minute
    load average read, ``cpus`` the CPUs the harness could use; frequencies in MHz.
    """

    repetitions: int = Field(ge=0)
    steal: float | None = Field(default=None, ge=0, le=1)
    iowait: float | None = Field(default=None, ge=0, le=1)
    involuntary_switches: int | None = Field(default=None, ge=0)
    load_max: float | None = Field(default=None, ge=0)
    cpus: int = Field(default=1, ge=1)
    governors: tuple[str, ...] = ()
    freq_mhz_min: float | None = Field(default=None, gt=0)
    freq_mhz_max: float | None = Field(default=None, gt=0)


class Row(_Frozen):
    """One measured row: ``ops_per_block`` operations timed per sample.

    ``samples_ns`` holds one wall-clock duration per repetition, in ns. Rows of
    every suite share this shape (``harness/CONTRACT.md``): the appendix suites
    (:data:`APPENDIX_SUITES`) use the ``CS``/``RSA`` schemes and
    :data:`Operation`; the others name the algorithm family as the field does
    (``ECDSA``, ``Ed25519``, ``AES-128-GCM``) with a lowercase verb
    (``sign``, ``verify``, ``derive``, ``encrypt``, ``hash``, ``decrypt``) and
    put a curve or message size in ``param``.
    """

    model_config = ConfigDict(frozen=True, extra="allow", json_schema_extra=_appendix_rows_schema)

    suite: str = Field(min_length=1)
    scheme: str = Field(min_length=1)
    key_bits: int | None
    operation: str = Field(min_length=1)
    ops_per_block: int = Field(ge=1, le=MAX_NS)
    samples_ns: tuple[Annotated[int, Field(ge=1, le=MAX_NS)], ...] = Field(min_length=1)
    valid: bool
    invalid_reason: str | None = None
    iterations_requested: int | None = Field(default=None, ge=1)
    """``--iterations``; ``ops_per_block`` is larger when calibration grew the block."""
    calibrated: bool = False
    repetitions_requested: int | None = Field(default=None, ge=1)
    """``--repetitions``; ``len(samples_ns)`` is how many were taken."""
    budget_exhausted: bool = False
    """True when ``--max-time`` stopped the repetitions early."""
    printed: str | None = None
    """For reference data: the value exactly as the source printed it (``10 000 ms``)."""
    uncertainty_ns: int | None = Field(default=None, ge=0)
    """For printed values truncated toward zero: the true block time lies in
    ``[sample, sample + uncertainty_ns)`` (one unit of the printed value)."""
    run_medians_ns: tuple[float, ...] | None = None
    """Set by :func:`merge_repeats`: each container run's median block time, ns."""
    run_sizes: tuple[int, ...] | None = None
    """Set by :func:`merge_repeats`: how many of ``samples_ns`` each run contributed."""
    param: str | None = None
    """Curve or message size (``P-256``, ``brainpoolP512r1``, ``1024 B``); None for none."""
    bytes_per_op: int | None = Field(default=None, ge=1)
    """Bytes processed per operation, for throughput rows (MB/s = bytes_per_op × ops/s / 1e6)."""
    processes: int = Field(default=1, ge=1)
    """Parallel processes one block's operations ran in (``openssl speed -multi N``):
    the row is their aggregate throughput."""
    device: str = "cpu"
    """Where the private-key operation ran; ``cpu`` unless a token was plugged in (gnupg)."""
    warmup_samples_ns: tuple[Annotated[int, Field(ge=0, le=MAX_NS)], ...] | None = None
    """Discarded warm-up blocks, ns each (not part of the statistics)."""
    calibration_blocks: tuple[CalibrationBlock, ...] | None = None
    """Discarded blocks the harness timed while growing the block to ``ops_per_block``."""
    block_ops: tuple[int, ...] | None = None
    """Raw per-sample operation counts when they differed (``openssl speed``); the
    samples are then rescaled to ``ops_per_block`` operations each."""
    instructions: tuple[Annotated[int, Field(ge=1)], ...] | None = None
    """Counting runs only: guest instructions executed per block (one per
    ``samples_ns`` entry, same order); instructions per operation =
    count / ``ops_per_block``. ``samples_ns`` of such a row is wall time under
    the counting QEMU, not a time of the target."""
    stop_reason: StopReason | None = None
    """Why repetitions stopped; None in files from harnesses before adaptive
    repetitions (see :attr:`stop`)."""
    ci_target: float | None = Field(default=None, gt=0, lt=1)
    """``--ci-target``: relative half-width the median's interval was to reach."""
    ci_reached: bool | None = None
    """True when the harness's 95 % interval reached ``ci_target``; None without one."""
    median_ci: MedianCi | None = None
    """The harness's interval of the median per-op time (None: too few samples, merged rows)."""
    noise: RowNoise | None = None
    """What the machine did during the row's timed repetitions; None when not read."""
    note: str | None = None
    """The harness's remark on the row (why key generation left the adaptive loop early,
    stop reason ``keygen_cap``); None when it has none."""

    @property
    def stop(self) -> StopReason:
        """``stop_reason``, derived for older files: invalid, budget or repetitions."""
        if self.stop_reason is not None:
            return self.stop_reason
        if not self.valid:
            return "invalid"
        return "budget" if self.budget_exhausted else "repetitions"

    @model_validator(mode="after")
    def _consistent(self) -> Row:
        if self.suite in APPENDIX_SUITES:
            if self.scheme not in get_args(Scheme):
                raise ValueError(f"{self.suite} rows have scheme CS or RSA, not {self.scheme!r}")
            if self.operation not in get_args(Operation):
                raise ValueError(
                    f"unknown {self.suite} operation {self.operation!r}; allowed: "
                    + ", ".join(get_args(Operation))
                )
            if (self.scheme == "RSA") != (self.key_bits is not None):
                raise ValueError("key_bits is required for RSA rows and must be null for CS rows")
        if self.key_bits is not None and not 1 <= self.key_bits <= MAX_KEY_BITS:
            raise ValueError(f"key_bits {self.key_bits} is not a key size (1 to {MAX_KEY_BITS})")
        if self.valid == (self.invalid_reason is not None):
            raise ValueError("invalid_reason is set exactly when valid is false")
        if self.block_ops is not None and len(self.block_ops) != len(self.samples_ns):
            raise ValueError("block_ops needs one count per sample")
        if self.instructions is not None and len(self.instructions) != len(self.samples_ns):
            raise ValueError("instructions needs one count per sample")
        return self

    @property
    def label(self) -> str:
        """Scheme as tables print it: ``CS``, ``RSA 2048 bit``, ``ECDSA P-256``, ``Ed25519``."""
        if self.scheme == "CS":
            return "CS"
        base = self.scheme if self.key_bits is None else f"{self.scheme} {self.key_bits} bit"
        return f"{base} {self.param}" if self.param else base


class Parameters(_Frozen):
    """What the harness was asked to run."""

    iterations: int = Field(ge=1)
    repetitions: int = Field(ge=1)
    rsa_bits: tuple[int, ...]
    schemes: tuple[str, ...] | None = None
    message_bytes: int | None = None
    warmup: int | None = Field(default=None, ge=0)
    max_time_s: float | None = Field(default=None, gt=0)
    min_block_ns: int | None = Field(default=None, ge=0)
    ci_target: float | None = Field(default=None, gt=0, lt=1)
    """``--ci-target`` (adaptive repetitions; ``repetitions`` is then the most taken)."""
    min_repetitions: int | None = Field(default=None, ge=1)
    confidence: float | None = Field(default=None, gt=0, lt=1)
    order: Literal["interleaved", "sequential"] | None = None
    """None: older harness, sequential."""
    order_seed: int | None = Field(default=None, ge=0)
    driver_involuntary_switches: int | None = Field(default=None, ge=0)
    """The driver's total, getrusage(RUSAGE_CHILDREN)."""
    fresh_items: bool | None = None
    """What a blindsig block timed: True every operation on its own fresh item, False one
    call after another on the same item; None in documents of harnesses before the option
    (they always used fresh items)."""


class CpuLimits(_Frozen):
    """cgroup CPU controls of the container (``harness/CONTRACT.md``)."""

    cgroup: Literal["v1", "v2"]
    quota_us: int | None = None
    period_us: int | None = None
    cpus: float | None = Field(default=None, gt=0)
    cpuset: str | None = None


class Setup(_Frozen):
    """The machine as seen from inside the container (the appendix's Setup box).

    Fields after ``gnunet_version`` came with harness 0.2.0 and are None in
    older documents.
    """

    cpu_model: str
    cores: int = Field(ge=1)
    machine: str
    kernel: str
    os: str
    packages: dict[str, str | None]
    gnunet_version: str | None = None
    gcc_version: str | None = None
    cpu_flags: tuple[str, ...] | None = None
    cpu_affinity: tuple[Annotated[int, Field(ge=0)], ...] | None = None
    cpu_limits: CpuLimits | None = None
    load_average: tuple[float, ...] | None = Field(default=None, min_length=3, max_length=3)
    """1, 5 and 15 minute load averages at the start of the run."""
    tools: dict[str, str] | None = None
    """Versions of the tools the suites ran (``openssl version -a``, ``gpg --version``)."""
    package_names: dict[str, str | None] | None = None
    """The Debian package each ``packages`` entry was read from."""
    clock_resolution_ns: int | None = None
    build: dict[str, str] | None = None
    """How the drivers were built (``build-info.txt``): ``cc``, ``cflags``, ``build_machine``;
    for cross-compiled drivers ``build_kind`` ``cross`` and ``runtime_packages``, the
    ``name:arch=version`` of every library they link against (:mod:`archbench.cross`)."""


class Calibration(_Frozen):
    """The clock as probed in the container, and the calibration target (ns)."""

    clock: str = "CLOCK_MONOTONIC"
    resolution_ns: float = Field(gt=0)
    observed_tick_ns: float | None = Field(default=None, gt=0)
    pair_overhead_ns: float | None = None
    probe_reads: int | None = None
    min_block_ns: int = Field(ge=0)
    max_block_ops: int | None = None

    @property
    def tick_ns(self) -> float:
        """The effective clock tick in ns: the coarser of clock_getres and the observed step."""
        return max(self.resolution_ns, self.observed_tick_ns or 0.0)


class SuiteRun(_Frozen):
    """How one suite of the run went (``suites`` of the harness document).

    ``error`` is set when the suite as a whole failed (tool missing, tool
    failed); its rows are then absent while other suites' rows are kept.
    """

    parameters: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    duration_s: float | None = Field(default=None, ge=0)
    extra: dict[str, Any] = Field(default_factory=dict)
    """Suite-specific data kept for provenance (raw tool lines, CSV rows)."""


class CountCalibration(_Frozen):
    """The counter's check: a loop of ``iterations`` x ``instructions_per_iteration``.

    ``counts`` are the loop's blocks of N and 2N iterations; their
    ``difference`` must equal ``expected_difference`` (N x k) exactly;
    ``overhead`` is what the markers themselves add to a block (instructions).
    """

    iterations: int = Field(ge=1)
    instructions_per_iteration: int = Field(ge=1)
    counts: tuple[int, int]
    expected_difference: int
    difference: int
    overhead: int
    exact: bool


class Counting(_Frozen):
    """Provenance of instruction counts: the instrument, QEMU, CPU model, plugin, check."""

    instrument: str
    qemu: str
    """QEMU user emulator that ran the driver (``qemu-riscv64``)."""
    qemu_version: str
    qemu_package: str
    cpu_model: str
    """QEMU ``-cpu`` model the counts are for (``max``, ``rv64``)."""
    plugin_version: str
    plugin_api: int
    tools_image: str = ""
    calibration: CountCalibration
    fixed_rsa_keys: dict[str, str] = Field(default_factory=dict)
    """Fixed RSA test keys the operations after key generation used: file name ->
    sha256 hex (``harness/count-keys.md``); empty in results from before them."""


class HarnessDocument(_Frozen):
    """The harness's JSON output, format ``archbench-harness`` version 1.

    ``parameters`` are the blind-signature suite's (None when it did not
    run); every suite's own settings and outcome are in ``suites``.
    """

    format: Literal["archbench-harness"]
    version: Literal[1]
    harness_version: str
    started_at: str
    duration_s: float = Field(ge=0)
    parameters: Parameters | None = None
    suites: dict[str, SuiteRun] = Field(default_factory=dict)
    calibration: Calibration | None = None
    setup: Setup
    rows: tuple[Row, ...]
    counting: Counting | None = None
    """Set by counting runs (``--metric instructions``): how the counts were taken."""


class TargetInfo(_Frozen):
    """The matrix target a result was measured for."""

    name: str
    arch: str
    platform: str
    base: str
    profile: str


class ArchiveRef(_Frozen):
    """The archive (``invoke archive``) a rerun took its images and matrix from."""

    archive_id: str
    manifest_sha256: str
    """sha256 (hex) of the archive's ``manifest.json`` bytes: names its exact content."""
    source_run_id: str
    """The run that was archived."""


class Execution(_Frozen):
    """How the harness was executed: host facts the container cannot see."""

    emulated: bool
    host_arch: str
    host_cpu: str
    qemu_version: str | None = None
    qemu_cpu: str | None = None
    """QEMU's CPU model: ``QEMU_CPU`` if set for the engine, else QEMU's default for the arch."""
    image_id: str
    image_tag: str
    image_digest: str | None = None
    """Registry digest of the image, when it was pushed or pulled (local builds have none)."""
    base_image: str | None = None
    base_built: str | None = None
    """UTC build date of the base image (label written when it was bootstrapped)."""
    docker_host: str = "local"
    engine_version: str | None = None
    host_kernel: str | None = None
    host_parallel_runs: int = Field(default=1, ge=1)
    """How many benchmark containers the host allowed at once (``max_parallel_runs``)."""
    cpuset: str | None = None
    """CPUs the container was pinned to (Docker cpuset), None when not pinned."""
    cpus: float | None = None
    """CPU quota the container was given (Docker's ``--cpus``), None when it had none;
    ``harness.setup.cpu_limits`` is what the container saw."""
    repeat_index: int = Field(default=1, ge=1)
    repeat_count: int = Field(default=1, ge=1)
    """This file is container run ``repeat_index`` of ``repeat_count`` for the target."""
    archive: ArchiveRef | None = None
    """Set when ``invoke bench --from-archive`` ran the archived image (nothing built)."""


class Reference(_Frozen):
    """Where published figures come from, for results that were not measured by us.

    Reference results carry one sample per row: the printed value converted
    to ns, with ``Row.printed`` keeping the text as printed.
    """

    source: str
    """File and table, e.g. ``thesis-appendix-performance.tex, tab:comp-sign-amd-ryzen-7``."""
    citation: str
    """Who published it, e.g. the thesis's title, authors and year."""
    notes: str = ""
    """Caveats, e.g. that printed values are truncated toward zero."""
    kind: Literal["published", "imported"] = "published"
    """``published``: figures from a paper or thesis; ``imported``: a tool's saved log."""
    title: str | None = None
    """The section title as published (``AMD Ryzen 7 PRO 5850U (Notebook)``); None: ours."""
    table_label: str | None = None
    """The table's LaTeX label as published (``tab:comp-sign-amd-ryzen-7``), kept so a
    thesis's own ``\\ref`` still resolves; None: a label of our scheme."""
    caption: str | None = None
    """The table caption as published (``Comparison on AMD Ryzen 7``)."""
    intro: str | None = None
    """The section's text before the Setup box as published, LaTeX escapes removed;
    ``\\ref{label}`` kept as written."""
    box: tuple[tuple[str, str], ...] | None = None
    """The Setup box line by line as the PDF prints it, each line split at its first ``": "``
    into (key, value); ``key + ": " + value`` is the printed line, verbatim."""
    placeholders: tuple[str, ...] = ()
    """``Setup`` fields holding a placeholder, not a published fact (``cores``)."""

    @property
    def label(self) -> str:
        """How tables name this origin: ``published figures`` or ``imported log``."""
        return "published figures" if self.kind == "published" else "imported log"


class Result(_Frozen):
    """One stored results file, format ``archbench-result`` version 2.

    Exactly one of ``execution`` (we measured it) and ``reference`` (published
    figures carried over) is set. ``metric`` says what the rows measure:
    ``time`` (``samples_ns`` are the target's wall-clock block times) or
    ``instructions`` (``Row.instructions`` are counts, ``harness.counting``
    their provenance); a counting result is its own file.
    """

    format: Literal["archbench-result"] = RESULT_FORMAT
    version: Literal[2] = RESULT_VERSION
    metric: Metric = "time"
    run_id: str
    target: TargetInfo
    execution: Execution | None = None
    reference: Reference | None = None
    harness: HarnessDocument

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return migrate(data)

    @model_validator(mode="after")
    def _one_origin(self) -> Result:
        if (self.execution is None) == (self.reference is None):
            raise ValueError("exactly one of 'execution' and 'reference' must be set")
        if (self.metric == "instructions") != (self.harness.counting is not None):
            raise ValueError("harness.counting is set exactly when metric is 'instructions'")
        return self

    @property
    def emulated(self) -> bool:
        """True when measured under QEMU user emulation (never for reference data)."""
        return self.execution is not None and self.execution.emulated


def new_run_id(now: _dt.datetime | None = None) -> str:
    """A sortable, unique run id: ``20261129T224000Z-1a2b3c``."""
    now = now or _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def _check_header(data: Any, fmt: str, version: int, source: str, fix: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}")
    if data.get("format") != fmt:
        raise ValueError(
            f"{source}: 'format' is {safe_load.quote(data.get('format'))}, expected {fmt!r}"
        )
    if data.get("version") != version:
        raise ValueError(
            f"{source}: {fmt} version {safe_load.quote(data.get('version'))} is not supported "
            f"(this archbench reads version {version}); {fix}"
        )


def _describe(err: ValidationError) -> str:
    first = err.errors()[0]
    path = messages.location(first["loc"])
    return f"at '{path}': {messages.problem(first)} ({err.error_count()} problem(s) in all)"


def parse_harness_output(stdout: str, source: str = "harness stdout") -> HarnessDocument:
    """Parse and validate the harness's one JSON document.

    Raises:
        HarnessError: not JSON, wrong format/version, or a field that breaks
            the contract in ``harness/CONTRACT.md``.
    """
    try:
        data = safe_load.load_json(stdout, source, HarnessError)
        _check_header(
            data,
            HARNESS_FORMAT,
            HARNESS_VERSION,
            source,
            "rebuild the image so the harness matches this archbench (invoke images)",
        )
        return HarnessDocument.model_validate(data)
    except HarnessError as exc:
        tail = stdout.strip()[-300:]
        detail = str(exc).removeprefix(f"{source}: ")
        raise HarnessError(
            f"{source}: not a JSON document ({detail}); output ended: {tail!r}"
        ) from exc
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            raise HarnessError(f"{source}: {_describe(exc)}") from exc
        raise HarnessError(str(exc)) from exc


def migrate(data: Any) -> Any:
    """A stored result brought up to :data:`RESULT_VERSION` (a copy; as asv does on load).

    Version 1 -> 2: ``metric`` becomes ``time`` (version 1 only stored times);
    nothing else changed. Other versions and non-objects are returned as they
    are, for :func:`load`'s header check to report.
    """
    if isinstance(data, dict) and data.get("format") == RESULT_FORMAT and data.get("version") == 1:
        return {**data, "version": 2, "metric": data.get("metric", "time")}
    return data


def load(path: Path) -> Result:
    """Read one results file.

    Raises:
        ResultsError: the file is unreadable, not JSON, of another format or
            an unsupported version (the message says which version this
            archbench reads and how to proceed), or fails validation; the
            message names the file and the key.
    """
    text = safe_load.read_text(path, ResultsError, "the results file", MAX_RESULT_BYTES)
    data = safe_load.load_json(text, str(path), ResultsError)
    try:
        data = migrate(data)
        _check_header(
            data,
            RESULT_FORMAT,
            RESULT_VERSION,
            str(path),
            "version 1 files are read too; use the archbench release that wrote it,"
            " or re-measure with 'invoke bench'",
        )
        return Result.model_validate(data)
    except ValidationError as exc:
        raise ResultsError(f"{path}: {_describe(exc)}") from exc
    except ValueError as exc:
        raise ResultsError(str(exc)) from exc


# Read once at import, while single-threaded: os.umask can only be read by setting it.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new, never half.

    Raises:
        OSError: the directory cannot be created or written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates 0600; results and reports are meant to be shared.
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


MANIFEST_NAME = "run.json"


class RunManifest(_Frozen):
    """What a run was asked to do, kept beside its results for ``--resume``.

    ``matrix_text`` is the matrix as it was when the run started, so a
    resumed run measures the same targets with the same parameters even if
    matrix.yml changed since. ``seconds`` maps target -> stage -> wall time
    in s of the targets that finished; the progress display reads it as the
    ETA of the next run of the same target.
    """

    format: Literal["archbench-run"] = "archbench-run"
    version: Literal[1] = 1
    run_id: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    started_at: str
    matrix_file: str
    matrix_text: str
    targets: tuple[str, ...]
    overrides: dict[str, Any] = Field(default_factory=dict)
    repeat: int = 1
    cpuset: str | None = None
    cpus: float | None = None
    """``--cpus``: the CPU quota of every container of this run (None: the targets' own)."""
    seconds: dict[str, dict[str, float]] = Field(default_factory=dict)
    suites: tuple[str, ...] = ()
    """``--suite``: the suites this run was limited to (empty: the matrix's enabled ones)."""
    archive: ArchiveRef | None = None
    """Set for ``invoke bench --from-archive``: the archive whose images and matrix it reran."""
    metrics: tuple[Metric, ...] = ()
    """``--metric``: what this run measured (empty: the matrix's ``metrics``); ``--resume``
    keeps it, and a target is complete only when every metric's results are stored."""


@dataclass(frozen=True)
class LoadFailure:
    """A results file that could not be loaded, and why."""

    path: Path
    message: str


class ResultStore:
    """The results directory: ``<root>/<run-id>/<target>.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(
        self, run_id: str, target: str, repeat_index: int = 1, metric: Metric = "time"
    ) -> Path:
        """Where container run ``repeat_index`` of ``target`` in ``run_id`` lives.

        The first is ``<target>.json``; further ones of ``--repeat K`` are
        ``<target>.repeat-<i>.json``. Counting results (``metric``
        ``instructions``) are ``<target>.instructions[.repeat-<i>].json``.

        Raises:
            ResultsError: ``run_id`` or ``target`` is not a safe name, so the
                path would not stay inside the results directory.
        """
        check_run_id(run_id)
        if not FILE_NAME.fullmatch(target):
            raise ResultsError(f"target name {safe_load.quote(target)} cannot be a file name")
        suffix = "" if repeat_index == 1 else f".repeat-{repeat_index}"
        kind = "" if metric == "time" else f".{metric}"
        return inside(
            self.root, self.root / run_id / f"{target}{kind}{suffix}.json", "a results file"
        )

    def save(self, result: Result) -> Path:
        """Store ``result`` atomically; returns its path.

        Raises:
            ResultsError: the file cannot be written.
        """
        index = result.execution.repeat_index if result.execution else 1
        path = self.path_for(result.run_id, result.target.name, index, result.metric)
        try:
            write_atomic(path, result.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            raise ResultsError(f"{path}: cannot write results: {exc.strerror}") from exc
        return path

    def save_manifest(self, manifest: RunManifest) -> Path:
        """Write ``<root>/<run-id>/run.json`` atomically; returns its path.

        Raises:
            ResultsError: the file cannot be written.
        """
        check_run_id(manifest.run_id)
        path = inside(self.root, self.root / manifest.run_id / MANIFEST_NAME, "the run manifest")
        try:
            write_atomic(path, manifest.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            raise ResultsError(f"{path}: cannot write the run manifest: {exc.strerror}") from exc
        return path

    def load_manifest(self, run_id: str) -> RunManifest:
        """Read the manifest of ``run_id``.

        Raises:
            ResultsError: no such run, or its manifest is unreadable; the
                message lists the runs there are.
        """
        check_run_id(run_id, "--resume")
        path = self.root / run_id / MANIFEST_NAME
        if not path.is_file():
            known = ", ".join(self.runs()[-5:]) or "none"
            raise ResultsError(
                f"{path}: no run {run_id!r} to resume in {self.root} (latest runs: {known})"
            )
        text = safe_load.read_text(path, ResultsError, "the run manifest", MAX_RESULT_BYTES)
        data = safe_load.load_json(text, str(path), ResultsError)
        try:
            manifest = RunManifest.model_validate(data)
        except ValidationError as exc:
            raise ResultsError(
                f"{path}: unreadable run manifest: {messages.describe(exc)}"
            ) from exc
        if manifest.run_id != run_id:
            raise ResultsError(
                f"{path}: the manifest says run {safe_load.quote(manifest.run_id)} but lies in "
                f"{run_id}; it was copied or edited. Restore it, or start a new run"
            )
        return manifest

    def previous_seconds(self, target: str, before: str) -> dict[str, float] | None:
        """Stage times of ``target`` in the newest run older than ``before`` that has them."""
        for run_id in reversed(self.runs()):
            if run_id >= before:
                continue
            try:
                seconds = self.load_manifest(run_id).seconds.get(target)
            except ResultsError:
                continue
            if seconds:
                return seconds
        return None

    def runs(self) -> list[str]:
        """Run ids present, oldest first (run ids sort by time)."""
        if not self.root.is_dir():
            return []
        return sorted(
            p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")
        )

    def latest_run(self) -> str | None:
        """The run whose newest results file was written last, or None when none has results.

        Newest by the files' modification time, not by id: ids that
        ``invoke import --run NAME`` chose do not sort by time. Runs with logs
        only (``invoke images``, or every target failed) are passed over.
        """
        newest: tuple[float, str] | None = None
        for run_id in self.runs():
            for path in self.files([run_id]):
                try:
                    stamp = (path.stat().st_mtime, run_id)
                except OSError:
                    continue
                newest = stamp if newest is None or stamp > newest else newest
        return newest[1] if newest else None

    def files(self, run_ids: Sequence[str] | None = None) -> Iterator[Path]:
        """Result files of the given runs (all runs when None), sorted."""
        for run_id in run_ids if run_ids is not None else self.runs():
            for path in sorted((self.root / run_id).glob("[!.]*.json")):
                if path.name != MANIFEST_NAME:
                    yield path

    def _at_home(self, path: Path, result: Result) -> bool:
        """True when ``path`` is where :meth:`save` puts ``result``."""
        index = result.execution.repeat_index if result.execution else 1
        try:
            return path.name == self.path_for(result.run_id, result.target.name, index).name
        except ResultsError:
            return False

    def load_all(
        self,
        run_ids: Sequence[str] | None = None,
        *,
        merge: bool = True,
        metric: Metric | None = "time",
    ) -> tuple[list[Result], list[LoadFailure]]:
        """Load every results file of the given runs that measured ``metric``.

        Time reports see only ``time`` results (the default), instruction
        tables only ``instructions`` ones; None loads both.

        With ``merge``, the K files of a ``--repeat K`` run are merged into
        one result per target (:func:`merge_repeats`). A bad file never hides
        the good ones: it is returned as a :class:`LoadFailure` beside the
        loaded results. So is a file that would pool silently: one lying in
        another run's directory than its ``run_id``, or a duplicate (same
        run, target and repeat index, or the same bytes) of a file already
        loaded; the file at the name archbench writes (:meth:`path_for`) wins.
        """
        loaded: list[Result] = []
        failures: list[LoadFailure] = []
        seen: dict[tuple[object, ...], Path] = {}
        seen_bytes: dict[str, Path] = {}
        read: list[tuple[Path, Result]] = []
        for path in self.files(run_ids):
            try:
                read.append((path, load(path)))
            except ResultsError as exc:
                failures.append(LoadFailure(path, str(exc)))
        # The file at the name archbench gave it comes before any copy of it.
        read.sort(key=lambda pr: (pr[0].parent.name, not self._at_home(*pr)))
        for path, result in read:
            if metric is not None and result.metric != metric:
                continue
            problem = _pooling_problem(path, result, seen, seen_bytes)
            if problem:
                failures.append(LoadFailure(path, problem))
                continue
            loaded.append(result)
        if not merge:
            return loaded, failures
        groups: dict[tuple[str, str, str], list[Result]] = {}
        for r in loaded:
            groups.setdefault((r.run_id, r.target.name, r.metric), []).append(r)
        merged: list[Result] = []
        for (run_id, name, _), group in groups.items():
            # One target's runs that cannot be pooled must not hide the others.
            try:
                merged.extend(merge_repeats(group))
            except ResultsError as exc:
                failures.append(LoadFailure(self.root / run_id / f"{name}.json", str(exc)))
        return merged, failures


def result_key(result: Result) -> tuple[object, ...]:
    """What makes a results file unique: (run id, target, repeat index[, metric]).

    A ``metric`` attribute (time vs instructions), where results carry one, is
    part of the key.
    """
    index = result.execution.repeat_index if result.execution else 1
    metric = getattr(result, "metric", None)
    return (result.run_id, result.target.name, index, metric)


def _pooling_problem(
    path: Path,
    result: Result,
    seen: dict[tuple[object, ...], Path],
    seen_bytes: dict[str, Path],
) -> str | None:
    """Why ``path`` must not be pooled with the files before it, or None (then it is recorded)."""
    if result.run_id != path.parent.name:
        return (
            f"{path}: skipped: it belongs to run {safe_load.quote(result.run_id)} but lies in "
            f"{path.parent.name} (a copied file); move it back or remove it"
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    key = result_key(result)
    first = seen.get(key) or seen_bytes.get(digest)
    if first is not None:
        return (
            f"{path}: skipped: a duplicate of {first.name} (same target "
            f"{result.target.name}, repeat {key[2]}); it would count its samples twice. "
            "Remove the copy"
        )
    seen[key] = path
    seen_bytes[digest] = path
    return None


def merge_repeats(results: Sequence[Result]) -> list[Result]:
    """Merge the K container runs of ``--repeat K`` into one result per target.

    Results are grouped by (run id, target name). A group of one is returned
    unchanged. Otherwise the first run's result is kept with, in each row,
    the samples of all runs concatenated (run order, rescaled to the first
    run's ``ops_per_block`` where calibration chose another size) and
    ``run_medians_ns`` holding each run's median block time in ns, so reports
    can show the between-run spread next to the within-run spread. Order of
    first appearance is kept.

    Raises:
        ResultsError: the runs of one target measured different rows, so
            their samples cannot be pooled.
    """
    groups: dict[tuple[str, str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.run_id, r.target.name, r.metric), []).append(r)
    merged: list[Result] = []
    for (run_id, name, _), group in groups.items():
        if len(group) == 1:
            merged.append(group[0])
            continue
        group.sort(key=lambda r: r.execution.repeat_index if r.execution else 1)
        first = group[0]
        rows = []
        for i, row in enumerate(first.harness.rows):
            same = [g.harness.rows[i] if i < len(g.harness.rows) else None for g in group]
            key = (row.scheme, row.key_bits, row.operation)
            if any(o is None or (o.scheme, o.key_bits, o.operation) != key for o in same):
                raise ResultsError(
                    f"run {run_id}, target {name}: the repeated runs measured different rows "
                    f"at row {i} ({row.scheme} {row.operation}); render them "
                    "separately with 'invoke report --run' per run"
                )
            # Calibration may choose another block size in each container run;
            # samples are rescaled to the first run's block size (per-op time x
            # ops_per_block) so they pool.
            scaled = [
                [max(1, round(x * row.ops_per_block / o.ops_per_block)) for x in o.samples_ns]
                for o in same
                if o is not None
            ]
            pooled = tuple(x for run in scaled for x in run)
            medians = tuple(float(statistics.median(run)) for run in scaled)
            # Counts are rescaled to the first run's block size like the times.
            counts = [
                [max(1, round(c * row.ops_per_block / o.ops_per_block)) for c in o.instructions]
                for o in same
                if o is not None and o.instructions is not None
            ]
            instructions = (
                tuple(c for run in counts for c in run) if len(counts) == len(group) else None
            )
            valid = all(o is not None and o.valid for o in same)
            reason = next((o.invalid_reason for o in same if o is not None and not o.valid), None)
            rows.append(
                row.model_copy(
                    update={
                        "samples_ns": pooled,
                        "run_medians_ns": medians,
                        "run_sizes": tuple(len(run) for run in scaled),
                        "valid": valid,
                        "invalid_reason": reason,
                        "instructions": instructions,
                        # One run's interval and noise do not describe the pool.
                        "median_ci": None,
                        "ci_reached": None,
                        "noise": None,
                    }
                )
            )
        harness = first.harness.model_copy(update={"rows": tuple(rows)})
        merged.append(first.model_copy(update={"harness": harness}))
    return merged
