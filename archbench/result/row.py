"""One measured row of a harness document, the appendix suites' vocabulary, and the models' base.

:class:`Frozen` is the base of every result model (rows, the harness document,
the stored result). A row is ``ops_per_block`` operations timed once per repetition
(``samples_ns``, ns), with its calibration, stop reason, median interval and
noise (``harness/CONTRACT.md``). Rows of the blind-signature suites
(:data:`archbench.suites.BLIND_SIGNATURE_SUITES`) use the :data:`Scheme` and
:data:`Operation` of the thesis appendix; the other suites name theirs freely.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields, replace
from typing import Annotated, Any, Final, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from archbench.suites import BLIND_SIGNATURE_SUITES


class Frozen(BaseModel):
    """A frozen pydantic model that keeps unknown keys (``model_extra``) and writes them back."""

    # Harness documents may gain fields without a version bump (CONTRACT.md):
    # unknown keys are kept (model_extra, and written back on save), never
    # rejected and never dropped.
    model_config = ConfigDict(frozen=True, extra="allow")


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
    # N signatures through the helper, one after another, N at once, or N in one batch
    # request (test_helper_* of exchange 0.9.3 and later).
    "helper_sequential_signing",
    "helper_parallel_signing",
    "helper_batch_signing",
    # GNUnet's scheme-independent layer (GNUNET_CRYPTO_blind_sign*, 0.21+), the calls
    # GNU Taler makes; rows of their own, after the thesis's (harness/CONTRACT.md).
    "taler_key_generation",
    "taler_blinding_input",
    "taler_blinding",
    "taler_signing",
    "taler_unblinding",
    "taler_verifying",
]
Scheme = Literal["CS", "RSA"]

HELPER_OPERATIONS: Final[frozenset[str]] = frozenset(
    {"helper_sequential_signing", "helper_parallel_signing", "helper_batch_signing"}
)
"""Security-module timings: the figure is the whole block ("100 parallel signature operations",
"16 batch signature operations": one batch request of 16 signatures), so the block is part
of the row's identity (:class:`RowKey`)."""

NS_PER_MS: Final = 1_000_000
"""Nanoseconds per millisecond: every stored time is ns, the appendix prints ms."""

MAX_NS: Final = 2**63 - 1
"""Largest time a row may hold, in ns (int64, as the harness's clock; ~292 years)."""
MAX_KEY_BITS: Final = 65_536


class CalibrationBlock(Frozen):
    """One discarded calibration block of a row: ``ops_per_block`` operations took ``ns``."""

    ops_per_block: int = Field(ge=1)
    ns: int = Field(ge=0)


def _appendix_rows_schema(schema: dict[str, Any]) -> None:
    """JSON schema of :class:`Row`: rows of the blind-signature suites name a CS/RSA operation."""
    schema["if"] = {
        "properties": {"suite": {"enum": sorted(BLIND_SIGNATURE_SUITES)}},
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


class MedianCi(Frozen):
    """The harness's confidence interval of a row's median per-operation time, ns.

    ``half_width`` is ``max(median - low, high - median) / median`` (0.014 = ±1.4 %).
    """

    confidence: float = Field(gt=0, lt=1)
    low_per_op_ns: float = Field(gt=0)
    high_per_op_ns: float = Field(gt=0)
    half_width: float = Field(ge=0)


class RowNoise(Frozen):
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


class FunctionCount(Frozen):
    """Where a counted row's instructions went: one function of one library.

    ``instructions_per_op``: the function's instructions per operation, mean
    over the row's counted blocks (the plugin attributes each translation
    block's instructions to its start address; ``harness/abh/suites/count_symbols.py``).
    ``function`` is ``(no symbol)`` or ``(no symbol) after <exported function>``
    for code of ``library`` in no symbol's range (a stripped library's internal
    functions, beside the exported ones of their compilation unit), ``(unknown)`` with
    library ``(unknown)`` outside every mapped file, and ``(other functions)``
    with library ``""`` for the sum of the functions not listed.
    """

    library: str
    function: str
    instructions_per_op: float = Field(ge=0)


class CallgrindCheck(Frozen):
    """A counted row measured again under callgrind (harness ``--callgrind``, amd64).

    ``instructions_per_op``: callgrind's Ir per operation over the same blocks
    (the driver's ``run_stage``, one call per block); ``functions`` callgrind's
    and ``plugin_functions`` the plugin's top functions, both with the code no
    symbol names merged into ``(no symbol)`` of its library
    (``harness/abh/suites/callgrind.py``; docs/counting.md).
    """

    instructions_per_op: float = Field(ge=0)
    libraries: dict[str, float]
    """Callgrind's instructions per operation per library file name."""
    plugin_libraries: dict[str, float]
    """The plugin's, over the same blocks."""
    functions: tuple[FunctionCount, ...]
    plugin_functions: tuple[FunctionCount, ...]


class Row(Frozen):
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
    attribution: tuple[FunctionCount, ...] | None = None
    """Counting runs with plugin version 2 (blindsig rows): the row's top
    functions, largest first, and ``(other functions)``; they sum to the mean
    instructions per operation of its blocks. None in older files. A merged
    row (``merge_repeats``) keeps its first run's."""
    callgrind: CallgrindCheck | None = None
    """Counting runs with the harness's ``--callgrind`` (amd64 blindsig rows): the
    same blocks under callgrind, for :func:`archbench.analysis.callgrind_agreement`."""
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
        if self.suite in BLIND_SIGNATURE_SUITES:
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
        return row_label(self.scheme, self.key_bits, self.param)


def row_label(scheme: str, key_bits: int | None, param: str | None) -> str:
    """A row's scheme as tables print it (:attr:`Row.label`): ``CS``, ``RSA 2048 bit``,
    ``ECDSA P-256``, ``sha256 1024 B``."""
    if scheme == "CS":
        return "CS"
    base = scheme_text(scheme, key_bits)
    return f"{base} {param}" if param else base


def scheme_text(scheme: str, key_bits: int | None) -> str:
    """A scheme as tables, plots and Setup notes print it: ``"CS"``, ``"RSA 2048 bit"``.

    The one spelling of a sized scheme in the chapter; command lines, row names and
    exports write :func:`scheme_id` of the same values.
    """
    return f"{scheme} {key_bits} bit" if key_bits and scheme != "CS" else scheme


def scheme_id(scheme: str, size: int | str | None) -> str:
    """A scheme as row names, progress lines and exports write it: ``"CS"``, ``"RSA-2048"``,
    ``"ECDH-Curve25519"`` (``size``: key bits, or a curve; None or empty: none)."""
    return f"{scheme}-{size}" if size else scheme


@dataclass(frozen=True, order=True)
class RowKey:
    """What makes two rows of different results the same measurement.

    ``key_bits`` 0 and ``param`` ``""`` stand for none; ``target`` is the target (or
    architecture) the row was measured on, ``""`` for a row across targets. Keys order
    by these fields, in this order. The last three tell apart rows that differ only in
    what they measured beyond scheme and operation (issue 31): the block of a
    security-module operation (Taler's 100 parallel signatures per forked client and
    the 800 of all clients are two rows), a device other than the CPU, and bytes per
    operation that ``param`` does not name. Each is 0 or ``""`` for rows without it, so
    such rows keep the key (and label) they always had; a block that calibration chose
    (every other suite) is no part of a row's identity.
    """

    target: str
    suite: str
    scheme: str
    key_bits: int
    param: str
    operation: str
    processes: int
    block: int = 0
    """Operations of a security-module block (:data:`HELPER_OPERATIONS`); 0 otherwise."""
    device: str = ""
    """:attr:`Row.device` when not ``cpu``; ``""`` for the CPU."""
    bytes_per_op: int = 0
    """:attr:`Row.bytes_per_op` when ``param`` does not already say it (gnupg's file
    size); 0 otherwise (openssl-speed and sodium write ``1024 B`` in ``param``)."""

    def __repr__(self) -> str:
        """The dataclass's form without the last three fields where they are unset: the
        form keys had before those fields existed, which the results page hashes into
        its row ids (:func:`archbench.report.page.anchor`), so those ids stay as they were."""
        shown = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.default is MISSING or getattr(self, f.name) != f.default
        ]
        return f"RowKey({', '.join(shown)})"

    @property
    def label(self) -> str:
        """Human-readable row name, e.g. ``blindsig RSA-2048 key generation``,
        ``security-module CS helper parallel signing, 800 ops``,
        ``gnupg RSA-2048 1048576 B decrypt on yubikey4``."""
        param = f" {self.param}" if self.param else ""
        size = f" {self.bytes_per_op} B" if self.bytes_per_op else ""
        procs = f" ×{self.processes}" if self.processes > 1 else ""
        device = f" on {self.device}" if self.device else ""
        block = f", {self.block} op{'s' if self.block > 1 else ''}" if self.block else ""
        operation = self.operation.replace("_", " ")
        name = scheme_id(self.scheme, self.key_bits)
        return f"{self.suite} {name}{param}{size} {operation}{procs}{device}{block}"

    @property
    def across(self) -> RowKey:
        """This key without its target: the same row on every target."""
        return replace(self, target="")


class RowFields(Protocol):
    """What a row's key is made of: a :class:`Row`, or the store index's row."""

    @property
    def suite(self) -> str: ...
    @property
    def scheme(self) -> str: ...
    @property
    def key_bits(self) -> int | None: ...
    @property
    def param(self) -> str | None: ...
    @property
    def operation(self) -> str: ...
    @property
    def processes(self) -> int: ...
    @property
    def ops_per_block(self) -> int: ...
    @property
    def device(self) -> str: ...
    @property
    def bytes_per_op(self) -> int | None: ...
    @property
    def label(self) -> str: ...


def row_key(target: str, row: RowFields) -> RowKey:
    """The :class:`RowKey` of ``row`` measured on ``target`` (``""``: across targets)."""
    size = row.bytes_per_op or 0
    return RowKey(
        target=target,
        suite=row.suite,
        scheme=row.scheme,
        key_bits=row.key_bits or 0,
        param=row.param or "",
        operation=row.operation,
        processes=row.processes,
        block=row.ops_per_block if row.operation in HELPER_OPERATIONS else 0,
        device="" if row.device == "cpu" else row.device,
        bytes_per_op=0 if row.param == f"{size} B" else size,
    )
