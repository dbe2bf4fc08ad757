"""The harness's JSON document (format ``archbench-harness`` version 1) as models.

:class:`HarnessDocument` is what the harness prints on stdout
(``harness/CONTRACT.md``): parameters, the clock's calibration, the Setup box,
each suite's outcome, the rows (:mod:`archbench.result.row`) and, for counting
runs, the counter's provenance. ``harness/schema-v1.json`` is generated from
these models (:mod:`archbench.result.contract`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from archbench.result.row import Frozen, Row

HARNESS_FORMAT = "archbench-harness"
HARNESS_VERSION = 1


class Parameters(Frozen):
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


class CpuLimits(Frozen):
    """cgroup CPU controls of the container (``harness/CONTRACT.md``)."""

    cgroup: Literal["v1", "v2"]
    quota_us: int | None = None
    period_us: int | None = None
    cpus: float | None = Field(default=None, gt=0)
    cpuset: str | None = None


class GnunetBuild(Frozen):
    """Which GNUnet the blindsig driver measured, as the driver itself reports it.

    From the driver's ``meta`` lines (``harness/CONTRACT.md``, *GNUnet versions*);
    None where a driver before the field did not say.
    """

    library_version: str | None = None
    """What the loaded libgnunetutil reports (``GNUNET_OS_project_data_*()->version``:
    ``"0.20.0 release"``, ``"0.27.0"``, ``"0.21.0 mesonbuild"`` for meson 0.21-0.23)."""
    header_version: str | None = None
    """``GNUNET_VERSION`` of the headers the driver was compiled against."""
    build_version: str | None = None
    """``pkg-config --modversion gnunetutil`` at the driver's build."""
    bsig_api: Literal["0.19", "0.21"] | None = None
    """The blind-signature API generation the driver was compiled for: ``0.19`` (0.19,
    0.20) or ``0.21`` (0.21.0 to 0.27.0)."""
    known_answers: tuple[str, ...] | None = None
    """Schemes whose known-answer checks passed before timing (``CS``, ``RSA``); the
    driver exits before timing when one fails, so a document has only passes."""
    known_answers_taler: tuple[str, ...] | None = None
    """The same for the scheme-independent layer's calls; None when its rows are absent."""
    taler_layer: str | None = None
    """``"measured"``, or why the layer's ``taler_*`` rows are absent (GNUnet 0.19/0.20
    has no such layer; ``fresh_items``): a note, not an error."""
    source_build: dict[str, str] | None = None
    """A libgnunetutil built from source: its ``/opt/gnunet/build-info.txt``
    (``kind`` meson/autotools, ``version``, ``header_version``, ``cflags``, ``prefix``,
    ``build_seconds``: wall time of the build in s, only for a build inside ``docker build``:
    an incremental build's is in ``Execution.gnunet_source``, so that its prefix is the same
    bytes for the same code); None for Debian's package."""

    @property
    def taler_measured(self) -> bool:
        """True when the layer's rows were measured."""
        return self.taler_layer == "measured"


class Setup(Frozen):
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
    ``name:arch=version`` of every library they link against (:mod:`archbench.images.cross`)."""
    gnunet: GnunetBuild | None = None
    """What the blindsig driver reports of the GNUnet it measured; None in documents of
    harnesses before the field, and when the blindsig suite did not run."""


class Calibration(Frozen):
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


class SuiteRun(Frozen):
    """How one suite of the run went (``suites`` of the harness document).

    ``error`` is set when the suite as a whole failed (tool missing, tool
    failed); its rows are then absent while other suites' rows are kept.
    """

    parameters: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    duration_s: float | None = Field(default=None, ge=0)
    extra: dict[str, Any] = Field(default_factory=dict)
    """Suite-specific data kept for provenance (raw tool lines, CSV rows)."""


class CountCalibration(Frozen):
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


class Counting(Frozen):
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
    sha256 hex (``harness/drivers/counting/count-keys.md``); empty in results from before them."""
    symbol_tables: dict[str, str] = Field(default_factory=dict)
    """Per library file name, which ELF table named the functions of the rows'
    ``attribution``: ``symtab`` (all functions), ``dynsym`` (stripped: exported
    functions only, the rest is ``(no symbol)``), ``symbol file`` (a symbol file of the
    counting layer whose code matched the installed library), ``none`` or ``unreadable``;
    empty without attribution."""
    symbol_files: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per library file name, what became of the counting layer's symbol file for it
    (``docs/counting.md``, symbol files): ``status`` (``used``, ``refused``, ``absent``),
    ``reason``, and where there was a file ``file``, ``match`` (``code``, ``build-id``)
    and ``origin`` (source package, version, architecture, how it was made); empty in
    results from before symbol files or without attribution."""
    symbol_store: dict[str, Any] = Field(default_factory=dict)
    """What the counting layer offered: ``present``, ``image`` (the symbols image),
    ``failed`` (packages whose rebuild failed, with why); ``off`` with
    ``--no-symbol-files``; empty in results from before symbol files."""


class HarnessDocument(Frozen):
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
