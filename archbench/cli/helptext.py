"""The help text of every flag of every task (``invoke --help TASK``), keyed by flag.

``tasks.py`` passes ``<TASK>_HELP`` to ``@task(help=...)``; the keys are the tasks'
parameter names (``rsa_bits`` is ``--rsa-bits``). Golden copies of the
rendered help are in ``tests/golden/cli-help/``.
"""

from __future__ import annotations

from typing import Final

from archbench.platforms import Arch
from archbench.suites import SUITE_NAMES

_SELECT: Final = {
    "arch": "comma-separated architectures: " + ", ".join(Arch.keys()),
    "target": "comma-separated target names from the matrix",
    "matrix": "matrix file (default from invoke.yaml: matrix.yml)",
}
"""Flags that select targets, shared by ``bench``, ``images`` and ``ci-matrix``."""

BENCH_HELP: Final = {
    **_SELECT,
    "iterations": "blindsig: override operations per timed block (the thesis's 10x; 1-100000)",
    "repetitions": "blindsig: override timed blocks per row (1-10000); without"
    " --ci-target this also turns adaptive repetitions off",
    "rsa_bits": "blindsig: override RSA key sizes, comma-separated (e.g. 1024,2048)",
    "rebuild": "rebuild bases and images even when up to date",
    "repeat": "independent container runs per target (fresh process each), merged in reports "
    "(1-100, default 1)",
    "cpuset": "pin benchmark containers to these CPUs (Docker cpuset, e.g. 1 or 0-1)",
    "cpus": "CPU quota of every benchmark container (Docker's --cpus, e.g. 0.5; "
    "matrix target key 'cpus'), recorded in the results",
    "warmup": "blindsig: override warmup repetitions (run and discarded; 0-1000)",
    "max_time": "blindsig: override the time budget in s per scheme and key size",
    "ci_target": "blindsig: adaptive repetitions until the 95 % interval of each median"
    " is within this fraction (0.02 = ±2 %), up to max_repetitions (matrix.yml; native"
    " targets' default 0.02); 'off': fixed repetitions for this run",
    "resume": "RUN_ID of an interrupted run: keep its complete targets, measure the rest",
    "suite": "run only these suites, comma-separated: "
    + ", ".join(SUITE_NAMES)
    + " (settings from the matrix, else the suite's defaults)",
    "from_archive": "DIR (or .tar) written by 'invoke archive': verify it, load its images "
    "and rerun its targets on this engine with its matrix; nothing is bootstrapped or built",
    "metric": "time, instructions, or time,instructions: instructions per operation "
    "counted under QEMU with archbench's TCG plugin (default: the matrix key 'metrics', "
    "else time natively and time,instructions for emulated targets)",
    "gnunet": "libgnunetutil of the selected targets (matrix key 'gnunet'): debian (the "
    "base's libgnunet-dev), TARBALL@sha256:HEX (a path or URL), git+URL@REF or a directory; "
    "built from source in the image (cross-compiled for emulated targets)",
    "taler": "GNU Taler exchange source of the selected targets (matrix key 'taler'): "
    "TARBALL@sha256:HEX (a path or URL), git+URL@REF or a directory; its src/util (security"
    " modules, test_helper_*) is built in the image against the target's GNUnet, natively",
}

HISTORY_HELP: Final = {
    **_SELECT,
    "gnunet": "the series of GNUnet sources, comma-separated, each as for bench --gnunet "
    "(debian, TARBALL@sha256:HEX, git+URL@REF, a directory)",
    "base": "the series of matrix bases (e.g. debian-bookworm,debian-trixie), comma-separated;"
    " with --gnunet: as many entries (paired in order) or one (for every version)",
    "taler": "the series of GNU Taler exchange sources, comma-separated, each as for bench "
    "--taler; paired in order with --gnunet/--base (as many entries, or one), e.g. "
    "--taler EX-0.9.2,EX-0.14.0 --gnunet debian,GNUNET-0.22.2 --base debian-bookworm,"
    "debian-trixie",
    "rounds": "timed rounds of the native targets, each running every version once in a "
    "shuffled order (1-100, default 8); emulated targets are counted only",
    "seed": "seed of the rounds' orders (default: drawn and recorded in history.json)",
    "extend": "HISTORY_ID: append these versions to a stored history (its matrix and targets),"
    " measured in a session of their own; the others are not measured again",
    "iterations": BENCH_HELP["iterations"],
    "repetitions": BENCH_HELP["repetitions"],
    "rsa_bits": BENCH_HELP["rsa_bits"],
    "warmup": BENCH_HELP["warmup"],
    "max_time": BENCH_HELP["max_time"],
    "ci_target": BENCH_HELP["ci_target"],
    "suite": BENCH_HELP["suite"],
    "cpus": BENCH_HELP["cpus"],
    "fail_above": "exit 13 when a counted row steps up across the series beyond this ratio "
    "(e.g. 1.02: 2 % more instructions per operation)",
}

BISECT_HELP: Final = {
    **_SELECT,
    "gnunet": "git+URL of the GNUnet repository (file:///... or https://...), without @REF",
    "good": "the ref (tag, branch, commit) at the old count",
    "bad": "the ref at the new count; good must be its ancestor",
    "row": 'the blindsig row to follow, SCHEME[-BITS] OPERATION, e.g. "CS signing"',
    "metric": "what decides a move: instructions (exact counts under QEMU; the only one)",
    "rsa_bits": BENCH_HELP["rsa_bits"] + "; RSA rows: the row's size must be among them",
    "repetitions": "blindsig: counted blocks per row and step (1-10000; counts are exact, 1 "
    "is enough for CS rows)",
    "resume": "BISECT_ID: go on with a stored bisection (its repository, refs, row and "
    "targets); the steps it has are not measured again",
}

ARCHIVE_HELP: Final = {
    "run_id": "the run to archive (a directory name under the results directory)",
    "out": "directory to write (default: archives/<run-id>); must not exist",
    "tar": "write <out>.tar (uncompressed) instead of the directory",
    "plots": "render the report's bar charts too (--no-plots: tables and exports only)",
    "results": "results directory (default from invoke.yaml: results)",
}

IMAGES_HELP: Final = {**_SELECT, "rebuild": "rebuild bases and images even when up to date"}

REPORT_HELP: Final = {
    "run": "run id(s) to render, comma-separated (default: the latest run)",
    "all_runs": "render every run in the results directory",
    "results": "results directory (default from invoke.yaml: results)",
    "out": "output directory (default from invoke.yaml: reports/out)",
    "target": "only these targets, comma-separated (reference ones are thesis-...)",
    "arch": "only these architectures: " + ", ".join(Arch.keys()),
    "suite": "only rows of these suites, comma-separated (e.g. blindsig)",
    "reference": "add the thesis's published figures (reports/reference/thesis-*.json)",
    "baseline": "add each machine's time relative to this one (target, or target@run)",
    "style": "LaTeX table style: thesis (the thesis's macros) or booktabs",
    "unit": "speed unit: ms, us (µs) or ops/s",
    "compare_bits": "RSA sizes of the CS-vs-RSA tables, comma-separated (default: all)",
    "plots": "write bar charts (PNG and PDF) next to the tables (--no-plots: skip)",
    "label_prefix": "put before every LaTeX label of the chapter (default: the thesis's own)",
}

DOCTOR_HELP: Final = {
    "arch": "architectures to check (default: every emulated one in the matrix)",
    "fix": "as root on Debian: install qemu-user-static, mount binfmt_misc, register handlers",
    "matrix": _SELECT["matrix"],
}

CLEAN_HELP: Final = {
    "matrix": _SELECT["matrix"],
    "host": "only these hosts, comma-separated: local and names under 'hosts' (default: all)",
}

CI_MATRIX_HELP: Final = {**_SELECT}

IMPORT_HELP: Final = {
    "logs": "saved output file(s), comma-separated; quoted globs work ('logs/*.log')",
    "setup": "YAML file naming the machine: cpu_model, cores, machine, kernel, os, packages",
    "target": "name for the machine (stored as <results>/<run>/<target>.json)",
    "arch": "its architecture: " + ", ".join(Arch.keys()),
    "run": "run id to store into (default: a new run)",
    "results": "results directory (default from invoke.yaml: results)",
    "cpu": "CPU model (without --setup, or over its cpu_model)",
    "cores": "number of cores (without --setup, or over its cores)",
    "os": "operating system, e.g. 'Debian GNU/Linux 12 (bookworm)' (over the setup's)",
    "kernel": "kernel as uname -a prints it (over the setup's)",
    "scheme": "cs or rsa: the test_helper of logs that do not say (nor their file names)",
    "rsa_bits": "RSA key size of test_helper_rsa logs, which do not print it (RSA_KEYSIZE)",
}

COMPARE_HELP: Final = {
    "run_a": "run id of A, the reference (results/<run-id>)",
    "run_b": "run id of B, compared with A: B/A above 1 means B is slower",
    "results": "results directory (default from invoke.yaml: results)",
    "out": "where compare-<A>-vs-<B>.tex/.csv go (default from invoke.yaml: reports/out)",
    "target": "only these targets, comma-separated",
    "arch": "only these architectures: " + ", ".join(Arch.keys()),
    "suite": "only rows of these suites, comma-separated (e.g. blindsig)",
    "confidence": "confidence level of the bootstrap interval of B/A (default 0.95)",
    "threshold": "smallest change called slower/faster, as a fraction (default 0.05)",
    "fail_above": "exit 13 when a counted row's instructions per operation grew beyond this"
    " ratio (e.g. 1.02)",
}
