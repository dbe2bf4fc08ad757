"""Every flag of every command, declared once: name, default, allowed range, help text.

A :class:`Flag` is one flag as the command line has it: its parameter name
(``rsa_bits`` is ``--rsa-bits``), what invoke hands over when it is not given
(:attr:`Flag.default`: None, ``""``, False or a text such as ``"0.95"``), the
range or grammar it allows, what it means when absent (:attr:`Flag.absent`,
``--repeat`` 1) and its help text, whose ``{range}`` is filled in from the
range. A :class:`Command` is a task's flags in the order of its signature.

From these declarations come everything else, so a flag cannot say one thing in
one place and another elsewhere:

* ``tasks.py`` builds each task's signature (:meth:`Command.signature`, read by
  invoke through ``inspect.signature``) and its help (:meth:`Command.help`);
* the bodies read what was given through :class:`Given` (keyed by the flag
  itself) and check it with :meth:`Flag.integer`, :meth:`Flag.integers`,
  :meth:`Flag.real` and :meth:`Flag.level`, which name the flag and the range
  declared here; a resumed run's ``run.json`` is checked by the same flags;
* ``docs/commands.md`` holds the table :func:`markdown_table` prints, and
  ``tests/unit/test_cli_flags.py`` proves help, checks and that table agree.

No flag takes an environment variable: ``invoke.yaml`` and ``INVOKE_ARCHBENCH_*``
are settings (:mod:`archbench.cli.config`); :data:`BUILD_JOBS` is the one setting
checked like a flag. This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from archbench.analysis import DEFAULT_BETWEEN_RUNS, DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD
from archbench.errors import MatrixError, ReportUsageError
from archbench.inputs import ci_target, integer, quote, real, selection
from archbench.platforms import Arch
from archbench.suites import SUITE_NAMES

Kind = Literal["text", "switch", "int", "ints", "real", "level"]
"""How a flag's text is checked: as given (``text``; a grammar of its own, checked by
the stage that owns it), on/off (``switch``), a whole number or a comma-separated list of
them in ``[low, high]`` (``int``, ``ints``; exit 2 via MatrixError), a number in
``[low, high]`` (``real``) or a number whose refusal is a usage error (``level``:
``low <= v <= high``, or ``< high`` with :attr:`Flag.open_high`)."""


@dataclass(frozen=True)
class Flag:
    """One flag: its parameter name, what invoke gives when absent, its range, its help.

    ``low``/``high`` bound ``int``, ``ints``, ``real`` and ``level`` flags (both
    inclusive unless ``open_high``); ``allowed`` is what a refused ``level`` flag's
    message says is allowed; ``absent`` is the value a number flag means when it is
    not given (None: nothing, e.g. the matrix's own setting). ``help`` is the text of
    ``invoke --help TASK``, ``{range}`` standing for ``low-high``. ``positional``: a
    required argument without a default (``invoke archive RUN_ID``).
    """

    name: str
    help: str
    default: str | bool | None = None
    kind: Kind = "text"
    low: float | None = None
    high: float | None = None
    open_high: bool = False
    allowed: str = ""
    absent: float | None = None
    positional: bool = False

    @property
    def option(self) -> str:
        """The flag as typed: ``--rsa-bits``."""
        return "--" + self.name.replace("_", "-")

    @property
    def range(self) -> str:
        """``low-high`` of a whole-number flag (``1-100``); ``""`` for the others."""
        if self.kind in ("int", "ints") and self.low is not None and self.high is not None:
            return f"{int(self.low)}-{int(self.high)}"
        return ""

    @property
    def text(self) -> str:
        """The help text with its ``{range}`` and ``{default}`` filled in (the default as
        the flags table shows it, so a default is written only in its declaration)."""
        return self.help.replace("{range}", self.range).replace("{default}", _default(self))

    def _bounds(self) -> tuple[int, int]:
        assert self.low is not None and self.high is not None, self.name
        return int(self.low), int(self.high)

    def integer(self, value: object, where: str = "") -> int:
        """``value`` as a whole number in the flag's range (``where``: who gave it, e.g.
        ``run.json: repeat``; default the flag).

        Raises:
            MatrixError: not a whole number, or out of range (flag, value and range named).
        """
        assert self.kind in ("int", "ints"), self.name
        low, high = self._bounds()
        return integer(where or self.option, value, low, high)

    def integer_or_absent(self, value: object | None) -> int:
        """:meth:`integer` of ``value``, or what the flag means when it is not given
        (``value`` None: :attr:`absent`), so no caller writes the default again.

        Raises:
            MatrixError: as :meth:`integer`.
        """
        if value is None:
            assert self.absent is not None, self.name
            return int(self.absent)
        return self.integer(value)

    def integers(self, value: str | None) -> list[int]:
        """A comma-separated list, each a whole number in range; ``[]`` when not given.

        Raises:
            MatrixError: an empty list, an item not a number or out of range.
        """
        assert self.kind == "ints", self.name
        return [self.integer(item) for item in selection(self.option, value)]

    def real(self, value: object, where: str = "") -> float:
        """``value`` as a finite number with ``low < value <= high``
        (:func:`archbench.inputs.real`).

        Raises:
            MatrixError: not a number, not finite, or out of range.
        """
        assert self.kind == "real" and self.low is not None and self.high is not None
        return real(where or self.option, value, self.low, self.high)

    def level(self, text: str) -> float:
        """``text`` as a number in the flag's interval, or a :class:`ReportUsageError`
        (exit 2) naming the flag, the value (cut to a readable length) and ``allowed``."""
        assert self.kind == "level" and self.low is not None and self.high is not None
        try:
            value = float(text)
        except (ValueError, TypeError):
            value = math.nan
        below = value < self.high if self.open_high else value <= self.high
        if not (self.low <= value and below):
            raise ReportUsageError(f"{self.option} {quote(str(text))}: give {self.allowed}")
        return value

    def accepts(self, value: float) -> bool:
        """Whether a number is inside the flag's range (for the table and its test)."""
        assert self.low is not None and self.high is not None
        below = value < self.high if self.open_high else value <= self.high
        return self.low <= value and below


@dataclass(frozen=True)
class Command:
    """One task: its name on the command line, the first line of its help, its flags."""

    name: str
    doc: str
    flags: tuple[Flag, ...]

    def help(self) -> dict[str, str]:
        """``@task(help=...)``: flag name -> help text."""
        return {f.name: f.text for f in self.flags}

    def signature(self) -> inspect.Signature:
        """The task's signature as invoke reads it: the context ``c``, then every flag
        with its default (positional ones without)."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter("c", kind)]
        for f in self.flags:
            default = inspect.Parameter.empty if f.positional else f.default
            params.append(inspect.Parameter(f.name, kind, default=default))
        return inspect.Signature(params)


class Given:
    """What invoke parsed for one command, read by flag (never by a name typed again).

    Raises (every accessor):
        KeyError: the flag is not one of the command's (a programming error).
    """

    def __init__(self, command: Command, values: Mapping[str, object]) -> None:
        self.command = command
        names = {f.name for f in command.flags}
        unknown = set(values) - names
        assert not unknown, unknown
        self._values = {f.name: values.get(f.name, f.default) for f in command.flags}

    def _get(self, flag: Flag) -> object:
        if flag.name not in self._values or flag not in self.command.flags:
            raise KeyError(f"{flag.option} is not a flag of invoke {self.command.name}")
        return self._values[flag.name]

    def optional(self, flag: Flag) -> str | None:
        """The text given, None when not given (flags whose default is None)."""
        value = self._get(flag)
        return None if value is None else str(value)

    def text(self, flag: Flag) -> str:
        """The text given, ``""`` (or the flag's text default) when not given."""
        value = self._get(flag)
        return "" if value is None else str(value)

    def switch(self, flag: Flag) -> bool:
        """An on/off flag."""
        return bool(self._get(flag))


# --- selection -----------------------------------------------------------------------

ARCH: Final = Flag("arch", "comma-separated architectures: " + ", ".join(Arch.keys()))
TARGET: Final = Flag("target", "comma-separated target names from the matrix")
MATRIX: Final = Flag("matrix", "matrix file (default from invoke.yaml: matrix.yml)", default="")
SELECT: Final = (ARCH, TARGET, MATRIX)
"""Flags that select targets, shared by ``bench``, ``images``, ``history``, ``bisect``
and ``ci-matrix``."""

# --- blindsig overrides (bench, history; some for bisect) ------------------------------

ITERATIONS: Final = Flag(
    "iterations",
    "blindsig: override operations per timed block (the thesis's 10x; {range})",
    kind="int",
    low=1,
    high=100_000,
)
REPETITIONS: Final = Flag(
    "repetitions",
    "blindsig: override timed blocks per row ({range}); without --ci-target this also turns "
    "adaptive repetitions off",
    kind="int",
    low=1,
    high=10_000,
)
RSA_BITS: Final = Flag(
    "rsa_bits",
    "blindsig: override RSA key sizes, comma-separated (e.g. 1024,2048)",
    kind="ints",
    low=1024,
    high=16384,
)
WARMUP: Final = Flag(
    "warmup",
    "blindsig: override warmup repetitions (run and discarded; {range})",
    kind="int",
    low=0,
    high=1000,
)
MAX_TIME: Final = Flag(
    "max_time",
    "blindsig: override the time budget in s per scheme and key size",
    kind="real",
    low=0,
    high=7 * 86_400,
)
CI_TARGET: Final = Flag(
    "ci_target",
    "blindsig: adaptive repetitions until the 95 % interval of each median is within this "
    "fraction (0.02 = ±2 %), up to max_repetitions (matrix.yml; native targets' default "
    "0.02); 'off': fixed repetitions for this run",
)
BLINDSIG: Final = (ITERATIONS, REPETITIONS, RSA_BITS, WARMUP, MAX_TIME, CI_TARGET)
"""The blindsig settings one run overrides; ``bench`` and ``history`` share them."""

SUITE: Final = Flag(
    "suite",
    "run only these suites, comma-separated: "
    + ", ".join(SUITE_NAMES)
    + " (settings from the matrix, else the suite's defaults)",
)
CPUS: Final = Flag(
    "cpus",
    "CPU quota of every benchmark container (Docker's --cpus, e.g. 0.5; matrix target key "
    "'cpus'), recorded in the results",
)
REBUILD: Final = Flag(
    "rebuild", "rebuild bases and images even when up to date", default=False, kind="switch"
)

# --- bench -----------------------------------------------------------------------------

REPEAT: Final = Flag(
    "repeat",
    "independent container runs per target (fresh process each), merged in reports "
    "({range}, default {default})",
    kind="int",
    low=1,
    high=100,
    absent=1,
)
CPUSET: Final = Flag(
    "cpuset", "pin benchmark containers to these CPUs (Docker cpuset, e.g. 1 or 0-1)"
)
RESUME: Final = Flag(
    "resume",
    "RUN_ID of an interrupted run: keep its complete targets, measure the rest",
    default="",
)
FROM_ARCHIVE: Final = Flag(
    "from_archive",
    "DIR (or .tar) written by 'invoke archive': verify it, load its images and rerun its "
    "targets on this engine with its matrix; nothing is bootstrapped or built",
    default="",
)
METRIC: Final = Flag(
    "metric",
    "time, instructions, or time,instructions: instructions per operation counted under "
    "QEMU with archbench's TCG plugin (default: the matrix key 'metrics', else time natively "
    "and time,instructions for emulated targets)",
)
GNUNET: Final = Flag(
    "gnunet",
    "libgnunetutil of the selected targets (matrix key 'gnunet'): debian (the base's "
    "libgnunet-dev), TARBALL@sha256:HEX (a path or URL), git+URL@REF or a directory; built "
    "from source in the image (cross-compiled for emulated targets)",
)
TALER: Final = Flag(
    "taler",
    "GNU Taler exchange source of the selected targets (matrix key 'taler'): "
    "TARBALL@sha256:HEX (a path or URL), git+URL@REF or a directory; its src/util (security"
    " modules, test_helper_*) is built in the image against the target's GNUnet, natively",
)
BUILD_JOBS: Final = Flag(
    "build_jobs",
    "invoke.yaml archbench.build_jobs: parallel image builds per host ({range})",
    kind="int",
    low=1,
    high=16,
)
"""A setting (``invoke.yaml``), not a flag: checked once, where a command needs it."""

BENCH: Final = Command(
    "bench",
    "Build (if needed) and run the benchmark for matrix targets; print their tables.",
    (
        *SELECT,
        ITERATIONS,
        REPETITIONS,
        RSA_BITS,
        REBUILD,
        REPEAT,
        CPUSET,
        WARMUP,
        MAX_TIME,
        RESUME,
        SUITE,
        FROM_ARCHIVE,
        METRIC,
        CI_TARGET,
        CPUS,
        GNUNET,
        TALER,
    ),
)

IMAGES: Final = Command(
    "images",
    "Bootstrap bases and build benchmark images only (no measurement).",
    (*SELECT, REBUILD),
)

# --- history ---------------------------------------------------------------------------

HISTORY_GNUNET: Final = Flag(
    "gnunet",
    "the series of GNUnet sources, comma-separated, each as for bench --gnunet (debian, "
    "TARBALL@sha256:HEX, git+URL@REF, a directory)",
)
BASE: Final = Flag(
    "base",
    "the series of matrix bases (e.g. debian-bookworm,debian-trixie), comma-separated; with "
    "--gnunet: as many entries (paired in order) or one (for every version)",
)
HISTORY_TALER: Final = Flag(
    "taler",
    "the series of GNU Taler exchange sources, comma-separated, each as for bench --taler; "
    "paired in order with --gnunet/--base (as many entries, or one), e.g. --taler "
    "EX-0.9.2,EX-0.14.0 --gnunet debian,GNUNET-0.22.2 --base debian-bookworm,debian-trixie",
)
ROUNDS: Final = Flag(
    "rounds",
    "timed rounds of the native targets, each running every version once in a shuffled order "
    "({range}, default {default}); emulated targets are counted only",
    kind="int",
    low=1,
    high=100,
    absent=8,
)
SEED: Final = Flag(
    "seed",
    "seed of the rounds' orders (default: drawn and recorded in history.json)",
    kind="int",
    low=0,
    high=2**31 - 1,
)
EXTEND: Final = Flag(
    "extend",
    "HISTORY_ID: append these versions to a stored history (its matrix and targets), measured "
    "in a session of their own; the others are not measured again",
    default="",
)
HISTORY_FAIL_ABOVE: Final = Flag(
    "fail_above",
    "exit 13 when a counted row steps up across the series beyond this ratio (e.g. 1.02: 2 % "
    "more instructions per operation)",
    kind="level",
    low=1,
    high=100,
    allowed="a ratio such as 1.02",
)

BISECT_STEPS: Final = Flag(
    "bisect_steps",
    "follow every counted step down to its commit: a bisection (as invoke bisect) of the row "
    "on its architecture between the two versions, which must be --gnunet git refs of one "
    "repository; with --extend HISTORY_ID alone, the stored history's steps",
    default=False,
    kind="switch",
)

HISTORY: Final = Command(
    "history",
    "Measure a series of GNUnet or exchange sources or Debian bases: rounds, counts, steps.",
    (
        HISTORY_GNUNET,
        BASE,
        HISTORY_TALER,
        *SELECT,
        ROUNDS,
        SEED,
        EXTEND,
        *BLINDSIG,
        SUITE,
        CPUS,
        HISTORY_FAIL_ABOVE,
        BISECT_STEPS,
    ),
)

# --- bisect ----------------------------------------------------------------------------

BISECT_GNUNET: Final = Flag(
    "gnunet", "git+URL of the GNUnet repository (file:///... or https://...), without @REF"
)
GOOD: Final = Flag("good", "the ref (tag, branch, commit) at the old count")
BAD: Final = Flag("bad", "the ref at the new count; good must be its ancestor")
ROW: Final = Flag("row", 'the blindsig row to follow, SCHEME[-BITS] OPERATION, e.g. "CS signing"')
BISECT_METRIC: Final = Flag(
    "metric",
    "what decides a move: instructions (exact counts under QEMU, any target) or time "
    "(interleaved rounds beside the ends, native targets only)",
    default="instructions",
)
BISECT_ROUNDS: Final = Flag(
    "rounds",
    "--metric time: interleaved rounds per step ({range}, default {default}); an undecided "
    "commit "
    "gets one more at a time, up to twice as many",
    kind="int",
    low=3,
    high=50,
    absent=5,
)
BISECT_RSA_BITS: Final = Flag(
    "rsa_bits",
    RSA_BITS.help + "; RSA rows: the row's size must be among them",
    kind="ints",
    low=RSA_BITS.low,
    high=RSA_BITS.high,
)
BISECT_REPETITIONS: Final = Flag(
    "repetitions",
    "blindsig: counted blocks per row and step ({range}; counts are exact, 1 is enough for CS "
    "rows)",
    kind="int",
    low=REPETITIONS.low,
    high=REPETITIONS.high,
)
BISECT_RESUME: Final = Flag(
    "resume",
    "BISECT_ID: go on with a stored bisection (its repository, refs, row and targets); the "
    "steps it has are not measured again",
    default="",
)

BISECT: Final = Command(
    "bisect",
    "Find the commit that moved a row's instructions per operation, per architecture.",
    (
        BISECT_GNUNET,
        GOOD,
        BAD,
        ROW,
        *SELECT,
        BISECT_METRIC,
        BISECT_ROUNDS,
        BISECT_RSA_BITS,
        BISECT_REPETITIONS,
        BISECT_RESUME,
    ),
)

# --- report, compare, archive, import ----------------------------------------------------

RESULTS: Final = Flag(
    "results", "results directory (default from invoke.yaml: results)", default=""
)
PLOTS: Final = Flag(
    "plots",
    "write bar charts (PNG and PDF) next to the tables (--no-plots: skip)",
    default=True,
    kind="switch",
)
REPORT_SUITE: Final = Flag("suite", "only rows of these suites, comma-separated (e.g. blindsig)")
ONLY_ARCH: Final = Flag("arch", "only these architectures: " + ", ".join(Arch.keys()))

REPORT: Final = Command(
    "report",
    "Render the Performance Measurements chapter, exports and plots (no Docker needed).",
    (
        Flag("run", "run id(s) to render, comma-separated (default: the latest run)"),
        Flag("all_runs", "render every run in the results directory", default=False, kind="switch"),
        RESULTS,
        Flag("out", "output directory (default from invoke.yaml: reports/out)", default=""),
        Flag("target", "only these targets, comma-separated (reference ones are thesis-...)"),
        ONLY_ARCH,
        REPORT_SUITE,
        Flag(
            "reference",
            "add the thesis's published figures (reports/reference/thesis-*.json)",
            default=False,
            kind="switch",
        ),
        Flag(
            "baseline",
            "add each machine's time relative to this one (target, or target@run)",
            default="",
        ),
        Flag(
            "style", "LaTeX table style: thesis (the thesis's macros) or booktabs", default="thesis"
        ),
        Flag("unit", "speed unit: ms, us (µs) or ops/s", default="ms"),
        Flag(
            "compare_bits",
            "RSA sizes of the CS-vs-RSA tables, comma-separated (default: all)",
            kind="ints",
            low=512,
            high=16384,
        ),
        PLOTS,
        Flag(
            "label_prefix",
            "put before every LaTeX label of the chapter (default: the thesis's own)",
            default="",
        ),
    ),
)
(
    RUN,
    ALL_RUNS,
    _,
    OUT,
    REPORT_TARGET,
    _,
    _,
    REFERENCE,
    BASELINE,
    STYLE,
    UNIT,
    COMPARE_BITS,
    _,
    LABEL_PREFIX,
) = REPORT.flags

COMPARE: Final = Command(
    "compare",
    "Compare two runs row by row: B/A, its interval and a verdict (faster, slower, no change).",
    (
        Flag("run_a", "run id of A, the reference (results/<run-id>)", positional=True),
        Flag(
            "run_b",
            "run id of B, compared with A: B/A above 1 means B is slower",
            positional=True,
        ),
        RESULTS,
        Flag(
            "out",
            "where compare-<A>-vs-<B>.tex/.csv go (default from invoke.yaml: reports/out)",
            default="",
        ),
        Flag("target", "only these targets, comma-separated"),
        ONLY_ARCH,
        REPORT_SUITE,
        Flag(
            "confidence",
            "confidence level of the bootstrap interval of B/A (default {default})",
            default=f"{DEFAULT_CONFIDENCE:g}",
            kind="level",
            low=0.5,
            high=1,
            open_high=True,
            allowed="a level in [0.5, 1)",
        ),
        Flag(
            "threshold",
            "smallest change called slower/faster, as a fraction (default {default})",
            default=f"{DEFAULT_THRESHOLD:g}",
            kind="level",
            low=0,
            high=1,
            allowed="a fraction in [0, 1]",
        ),
        Flag(
            "fail_above",
            "exit 13 when a counted row's instructions per operation grew beyond this ratio "
            "(e.g. 1.02)",
            kind="level",
            low=HISTORY_FAIL_ABOVE.low,
            high=HISTORY_FAIL_ABOVE.high,
            allowed=HISTORY_FAIL_ABOVE.allowed,
        ),
        Flag(
            "between_runs",
            "runs not interleaved: how far one run's level may lie from another's, a "
            "fraction added to the interval (default {default}, measured; 0: no verdict)",
            default=f"{DEFAULT_BETWEEN_RUNS:g}",
            kind="level",
            low=0,
            high=1,
            allowed="a fraction in [0, 1]",
        ),
    ),
)
(
    RUN_A,
    RUN_B,
    _,
    COMPARE_OUT,
    COMPARE_TARGET,
    _,
    _,
    CONFIDENCE,
    THRESHOLD,
    FAIL_ABOVE,
    BETWEEN_RUNS,
) = COMPARE.flags

ARCHIVE: Final = Command(
    "archive",
    "Write a run's images (docker save), matrix, results and report into one directory.",
    (
        Flag(
            "run_id",
            "the run to archive (a directory name under the results directory)",
            positional=True,
        ),
        Flag("out", "directory to write (default: archives/<run-id>); must not exist", default=""),
        Flag(
            "tar",
            "write <out>.tar (uncompressed) instead of the directory",
            default=False,
            kind="switch",
        ),
        Flag(
            "plots",
            "render the report's bar charts too (--no-plots: tables and exports only)",
            default=True,
            kind="switch",
        ),
        RESULTS,
    ),
)
RUN_ID, ARCHIVE_OUT, TAR, ARCHIVE_PLOTS, _ = ARCHIVE.flags

IMPORT: Final = Command(
    "import",
    "Import saved perf_crypto_cs/_rsa and test_helper_cs/_rsa output as one machine's results.",
    (
        Flag(
            "logs",
            "saved output file(s), comma-separated; quoted globs work ('logs/*.log')",
            positional=True,
        ),
        Flag(
            "setup",
            "YAML file naming the machine: cpu_model, cores, machine, kernel, os, packages",
            default="",
        ),
        Flag(
            "target", "name for the machine (stored as <results>/<run>/<target>.json)", default=""
        ),
        Flag("arch", "its architecture: " + ", ".join(Arch.keys())),
        Flag("run", "run id to store into (default: a new run)", default=""),
        RESULTS,
        Flag("cpu", "CPU model (without --setup, or over its cpu_model)", default=""),
        Flag(
            "cores",
            "number of cores (without --setup, or over its cores)",
            kind="int",
            low=1,
            high=65_536,
        ),
        Flag(
            "os",
            "operating system, e.g. 'Debian GNU/Linux 12 (bookworm)' (over the setup's)",
            default="",
        ),
        Flag("kernel", "kernel as uname -a prints it (over the setup's)", default=""),
        Flag(
            "scheme",
            "cs or rsa: the test_helper of logs that do not say (nor their file names)",
            default="",
        ),
        Flag(
            "rsa_bits",
            "RSA key size of test_helper_rsa logs, which do not print it (RSA_KEYSIZE)",
            kind="int",
            low=512,
            high=16384,
        ),
    ),
)
(
    LOGS,
    SETUP,
    IMPORT_TARGET,
    IMPORT_ARCH,
    IMPORT_RUN,
    _,
    CPU,
    CORES,
    OS,
    KERNEL,
    SCHEME,
    IMPORT_RSA_BITS,
) = IMPORT.flags

# --- the hosts -------------------------------------------------------------------------

DOCTOR: Final = Command(
    "doctor",
    "Check QEMU user emulation: binfmt_misc, handlers, static QEMU, uname -m smoke run.",
    (
        Flag("arch", "architectures to check (default: every emulated one in the matrix)"),
        Flag(
            "fix",
            "as root on Debian: install qemu-user-static, mount binfmt_misc, register handlers",
            default=False,
            kind="switch",
        ),
        MATRIX,
    ),
)
DOCTOR_ARCH, FIX, _ = DOCTOR.flags

CLEAN: Final = Command(
    "clean",
    "Remove containers archbench left on every host of the matrix (label org.archbench).",
    (
        MATRIX,
        Flag(
            "host",
            "only these hosts, comma-separated: local, names under 'hosts', pools (default: all)",
        ),
        Flag(
            "caches",
            "also remove libgnunetutil's build caches (trees and ccaches not in use; "
            "listed either way)",
            default=False,
            kind="switch",
        ),
        Flag(
            "running",
            "also remove running containers (another invoke's measurement, here or on "
            "another machine using the same engine, ends with them)",
            default=False,
            kind="switch",
        ),
    ),
)
_, HOST, CACHES, RUNNING = CLEAN.flags

CI_MATRIX: Final = Command(
    "ci-matrix",
    "Print the GitHub Actions jobs (JSON) that run the targets on native runners.",
    (*SELECT, METRIC),
)

PUBLISH: Final = Command(
    "publish",
    "Merge run folders of many machines and CI jobs into one store; render its page.",
    (
        Flag(
            "merge",
            "run folders or folders of runs (results folders, CI artifacts), comma-separated; "
            "quoted globs work ('artifacts/*')",
        ),
        Flag(
            "store",
            "the history store, a results folder (default from invoke.yaml: results)",
            default="",
        ),
        Flag(
            "branch",
            "provenance of runs merged without one: the project branch measured",
            default="",
        ),
        Flag("commit", "provenance: the commit measured", default=""),
        Flag("runner", "provenance: the CI runner's labels, comma-separated", default=""),
        Flag("ci_url", "provenance: the CI job's address (https://...)", default=""),
        Flag(
            "page",
            "render the report and results page of the whole store into --out (--no-page: "
            "merge only)",
            default=True,
            kind="switch",
        ),
        Flag("out", "where the page goes (default from invoke.yaml: reports/out)", default=""),
        PLOTS,
        Flag(
            "summary",
            "write the pull-request summary (Markdown) to this file, e.g. $GITHUB_STEP_SUMMARY;"
            " '-': print it",
            default="",
        ),
        Flag(
            "base_branch",
            "the summary compares each merged run with this branch's latest run on the same "
            "machine class (default: the latest earlier run of any branch)",
            default="",
        ),
        Flag(
            "fail_above",
            "the summary's count gate: exit 13 when a counted row grew beyond this ratio "
            "(e.g. 1.02); matrix.yml's limits apply too",
            kind="level",
            low=HISTORY_FAIL_ABOVE.low,
            high=HISTORY_FAIL_ABOVE.high,
            allowed=HISTORY_FAIL_ABOVE.allowed,
        ),
    ),
)
(
    MERGE,
    STORE,
    BRANCH,
    COMMIT,
    RUNNER,
    CI_URL,
    PAGE,
    PUBLISH_OUT,
    _,
    SUMMARY,
    BASE_BRANCH,
    PUBLISH_FAIL_ABOVE,
) = PUBLISH.flags

COMMANDS: Final = (
    ARCHIVE,
    BENCH,
    BISECT,
    CI_MATRIX,
    CLEAN,
    COMPARE,
    DOCTOR,
    HISTORY,
    IMAGES,
    IMPORT,
    PUBLISH,
    REPORT,
)
"""Every task, by name."""


def blindsig_overrides(given: Given) -> dict[str, object]:
    """The blindsig settings the flags of :data:`BLINDSIG` override for one run (only
    those given; a command without a flag of them gives none of it).

    ``--repetitions N`` without ``--ci-target`` turns adaptive repetitions off
    (``ci_target`` None). Whether the blindsig suite takes them (an RSA key size it
    refuses) is :func:`archbench.run.check_overrides`, which the caller applies next.

    Raises:
        MatrixError: a value that is not a number or lies outside its range.
    """
    flags = {f.name: f for f in given.command.flags}

    def text(flag: Flag) -> str | None:
        own = flags.get(flag.name)
        return None if own is None else given.optional(own)

    out: dict[str, object] = {}
    if (ci := text(CI_TARGET)) is not None:
        out["ci_target"] = ci_target(CI_TARGET.option, ci)
    elif text(REPETITIONS) is not None:
        out["ci_target"] = None  # --repetitions N: exactly N, not adaptive
    if (warmup := text(WARMUP)) is not None:
        out["warmup"] = WARMUP.integer(warmup)
    if (max_time := text(MAX_TIME)) is not None:
        out["max_time"] = MAX_TIME.real(max_time)
    if (iterations := text(ITERATIONS)) is not None:
        out["iterations"] = ITERATIONS.integer(iterations)
    if (repetitions := text(REPETITIONS)) is not None:
        out["repetitions"] = flags[REPETITIONS.name].integer(repetitions)
    if (bits := text(RSA_BITS)) is not None:
        out["rsa_bits"] = flags[RSA_BITS.name].integers(bits)
    return out


def split(value: str | None, flag: str = "") -> list[str]:
    """The comma-separated items of ``--flag``; ``[]`` (all) when the flag was not given.

    Raises:
        MatrixError: the flag was given empty (``--arch ''``, ``--target ,``).
    """
    # None: the flag was not given (all); an explicitly empty value is an error.
    return selection(flag or "selection", value)


def archs(value: str | None) -> list[Arch]:
    """``--arch A,B`` as architectures; ``[]`` (all) when not given.

    Raises:
        MatrixError: an empty selection or an unknown architecture (the known ones named).
    """
    try:
        return [Arch.from_key(a) for a in split(value, "--arch")]
    except ValueError as exc:
        raise MatrixError(f"--arch: {exc}") from exc


def _allowed(flag: Flag) -> str:
    if flag.kind == "switch":
        return f"on/off (`--no-{flag.name.replace('_', '-')}`)" if flag.default else "on/off"
    if flag.kind in ("int", "ints"):
        listed = ", comma-separated" if flag.kind == "ints" else ""
        return f"whole number {flag.range}{listed}"
    if flag.kind in ("real", "level"):
        high = ")" if flag.open_high else "]"
        return f"number in [{flag.low:g}, {flag.high:g}{high}"
    return "text"


def _default(flag: Flag) -> str:
    if flag.absent is not None:
        return f"{flag.absent:g}"
    if isinstance(flag.default, bool):
        return "on" if flag.default else "off"
    return flag.default or "—"


def markdown_table() -> str:
    """The flags of every command as the Markdown table in ``docs/commands.md``:
    flag, commands, what it allows (from the declared range) and its default."""
    rows: dict[tuple[str, str, str], list[str]] = {}
    for command in COMMANDS:
        for f in command.flags:
            if f.positional:
                continue
            rows.setdefault((f.option, _allowed(f), _default(f)), []).append(command.name)
    lines = ["| flag | commands | allowed | default |", "| --- | --- | --- | --- |"]
    for (option, allowed, default), names in sorted(rows.items()):
        lines.append(f"| `{option}` | {', '.join(sorted(names))} | {allowed} | {default} |")
    return "\n".join(lines) + "\n"
