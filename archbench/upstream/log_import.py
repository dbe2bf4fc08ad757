"""``invoke import``: saved upstream logs stored as one machine's results, marked as reference data.

Saved output of GNUnet's ``perf_crypto_rsa``/``perf_crypto_cs`` and GNU
Taler's ``test_helper_rsa``/``test_helper_cs`` (read line by line by
:mod:`archbench.upstream.gnunet_log`) becomes one ``archbench-result``:

* the files: a comma-separated list of paths or glob patterns
  (:func:`log_paths`), each read as UTF-8 or Latin-1 (:func:`read_log`) and
  scanned (:func:`scan_files`);
* the machine they ran on: the setup YAML (:class:`SetupFile`,
  :func:`load_setup`) or the command line's fields (:func:`parse_setup`), as
  the result's Setup box;
* the result: :func:`build_result`, with ``reference`` naming the files, the
  tools and the truncation caveat (:data:`NOTES`);
* the whole import: :func:`import_logs` of a :class:`LogImport`, which stores
  the result and never overwrites one.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from archbench.errors import MatrixError, ResultsError
from archbench.inputs import (
    CONTROL,
    describe_problems,
    did_you_mean,
    load_yaml,
    neutralise,
    problem,
    quote,
    read_bytes,
    read_text,
)
from archbench.platforms import Arch
from archbench.result import (
    HarnessDocument,
    Parameters,
    Reference,
    Result,
    ResultStore,
    Scheme,
    Setup,
    TargetInfo,
    folder_lock,
    shown_path,
)
from archbench.upstream.gnunet_log import LogScan, build_rows, scan_log


class SetupFile(BaseModel):
    """The setup YAML of an import: the machine the logs were recorded on.

    Only ``cpu_model`` and ``cores`` are required; ``machine`` (``uname -m``)
    defaults to the one of ``--arch``, the rest to ``unknown``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_model: StrictStr = Field(min_length=1)
    cores: StrictInt = Field(ge=1, le=65_536)
    machine: StrictStr | None = None
    kernel: StrictStr = "unknown"
    os: StrictStr = "unknown"
    packages: dict[StrictStr, StrictStr | None] = Field(default_factory=dict)
    """Package -> version as the distribution names it (``libgnunetutil``, ``libsodium``…)."""
    gnunet_version: StrictStr | None = None
    gcc_version: StrictStr | None = None


SETUP_KEYS: Final = tuple(SetupFile.model_fields)


def _setup_problem(err: dict[str, Any]) -> str:
    loc = [str(p) for p in err["loc"]]
    where = ".".join(loc) or "<top level>"
    if err["type"] == "extra_forbidden":
        key = loc[-1]
        hint = did_you_mean(key, SETUP_KEYS)
        return f"  {where}: unknown key {quote(key)}; allowed: {', '.join(SETUP_KEYS)}{hint}"
    if err["type"] == "missing":
        return f"  {where}: required key missing"
    # problem() says to quote what YAML read as a number or a boolean (0.19, on).
    return f"  {where}: {problem(err)}"


def resolve_machine(setup_machine: str | None, arch: Arch | None, source: str) -> str:
    """The ``uname -m`` name to store: ``setup_machine``, or ``arch``'s when unknown.

    Raises:
        MatrixError: ``setup_machine`` is not a machine of ``arch``; the
            message names ``source``.
    """
    if setup_machine is None or setup_machine == "unknown":
        return sorted(arch.value.uname_machines)[0] if arch is not None else "unknown"
    if arch is not None:
        try:
            matches = Arch.from_machine(setup_machine) is arch
        except ValueError:
            matches = False
        if not matches:
            raise MatrixError(
                f"{source}: machine {quote(setup_machine)} does not match --arch {arch.key} "
                f"(whose uname -m prints {' or '.join(sorted(arch.value.uname_machines))}); "
                "fix 'machine' or --arch"
            )
    return setup_machine


def _refuse_controls(data: Mapping[object, object], source: str, where: str = "") -> None:
    """Refuse control characters in setup values (they would reach every report raw)."""
    for key, value in data.items():
        path = f"{where}.{key}" if where else str(key)
        if isinstance(value, Mapping):
            _refuse_controls(value, source, path)
        elif isinstance(value, str) and (bad := CONTROL.search(value)) is not None:
            raise MatrixError(
                f"{source}: {path}: {quote(value)} holds the control character "
                f"{neutralise(bad.group())}; setup values are printable text (no escape "
                "sequences, DEL or bidirectional overrides)"
            )


def parse_setup(data: object, source: str, arch: Arch | None = None) -> Setup:
    """Validate setup fields (a YAML mapping or the command line's) into a :class:`Setup`.

    With ``arch``, a missing ``machine`` becomes its ``uname -m`` name and a
    given one must belong to it.

    Raises:
        MatrixError: not a mapping, an unknown key (with "did you mean …?"),
            a missing ``cpu_model`` or ``cores``, a wrong type, a value with a control
            character (ESC, DEL, C1, a bidirectional override), or a machine
            of another architecture; the message names ``source`` and keys.
    """
    if not isinstance(data, dict):
        raise MatrixError(
            f"{source}: expected a mapping with {', '.join(SETUP_KEYS)}, got {type(data).__name__}"
        )
    _refuse_controls(data, source)
    try:
        parsed = SetupFile.model_validate(data)
    except ValidationError as exc:
        lines = [_setup_problem(dict(e)) for e in exc.errors()]
        raise MatrixError(
            f"{source}: invalid setup ({exc.error_count()} problem(s)):\n" + "\n".join(lines)
        ) from exc
    return Setup(
        cpu_model=parsed.cpu_model,
        cores=parsed.cores,
        machine=resolve_machine(parsed.machine, arch, source),
        kernel=parsed.kernel,
        os=parsed.os,
        packages=dict(parsed.packages),
        gnunet_version=parsed.gnunet_version,
        gcc_version=parsed.gcc_version,
    )


def load_setup(
    path: Path, arch: Arch | None = None, overrides: Mapping[str, object] | None = None
) -> Setup:
    """Read a setup YAML file (keys of :class:`SetupFile`); ``overrides`` replace its keys.

    Raises:
        MatrixError: the file is unreadable, not YAML, has duplicate keys, or
            fails :func:`parse_setup`.
    """
    text = read_text(path, MatrixError, "the setup file", 256 * 1024)
    data = load_yaml(text, str(path), MatrixError)
    if overrides and isinstance(data, dict):
        data = {**data, **overrides}
    return parse_setup(data, str(path), arch)


HARNESS_VERSION: Final = "imported"
"""``harness_version`` of every imported result."""

PROFILE: Final = "imported"
"""``target.profile`` of every imported result: no image profile built it."""

NOTES: Final = (
    "values truncated toward zero; uncertainty_ns is one printed unit "
    "(one unit of the next smaller unit for values below 5, which GNUnet prints "
    "in that unit only when exact)"
)
"""The caveat every imported result carries in ``reference.notes``."""

NAME_PATTERN: Final = re.compile(r"^[a-z0-9][a-z0-9_.-]*+$")
"""Target names and run ids become file and directory names (as in matrix.yml)."""


def check_import_name(value: str, what: str) -> str:
    """``value`` when it may name an imported machine (it becomes a file name).

    Raises:
        MatrixError: anything but lower-case letters, digits, '.', '_' and '-' (at most
            64), the value cut to a readable length.
    """
    if not NAME_PATTERN.match(value) or len(value) > 64:
        raise MatrixError(
            f"{what} {quote(value)}: use lower-case letters, digits, '.', '_' and '-' "
            "(it becomes a file name), at most 64 characters"
        )
    return value


def _enumerate(words: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def build_result(
    scans: Sequence[LogScan], setup: Setup, target: str, arch: Arch, run_id: str
) -> Result:
    """The ``archbench-result`` of scanned logs, marked as reference data.

    ``reference.source`` lists the files, ``citation`` the tools
    (``imported from perf_crypto_rsa output``), ``notes`` the truncation
    caveat and where test_helper key sizes came from. A ``machine`` of
    ``unknown`` becomes the ``uname -m`` name of ``arch``.

    Raises:
        MatrixError: ``target`` or ``run_id`` is not a valid name, or the
            setup's machine is of another architecture.
        ResultsError: ``scans`` is empty.
    """
    check_import_name(target, "target name")
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", run_id):
        raise MatrixError(
            f"run id {quote(run_id)}: use letters, digits, '.', '_' and '-' "
            "(it becomes a directory)"
        )
    if not scans:
        raise ResultsError("no log to import; name one or more saved outputs")
    machine = resolve_machine(setup.machine, arch, "setup")
    if machine != setup.machine:
        setup = setup.model_copy(update={"machine": machine})
    try:
        return _result(scans, setup, target, arch, run_id)
    except ValidationError as exc:
        raise ResultsError(f"cannot store the import: {describe_problems(exc)}") from exc


def _result(scans: Sequence[LogScan], setup: Setup, target: str, arch: Arch, run_id: str) -> Result:
    rows = build_rows(m for s in scans for m in s.measurements)
    tools = list(dict.fromkeys(t for s in scans for t in s.tools))
    notes = " ".join([NOTES + ".", *(n for s in scans for n in s.notes)])
    return Result(
        run_id=run_id,
        target=TargetInfo(
            name=target,
            arch=arch.key,
            platform=arch.platform,
            base=setup.os,
            profile=PROFILE,
        ),
        reference=Reference(
            source=", ".join(Path(s.source).name for s in scans),
            kind="imported",
            citation=f"imported from {_enumerate(tools)} output",
            notes=notes,
        ),
        harness=HarnessDocument(
            format="archbench-harness",
            version=1,
            harness_version=HARNESS_VERSION,
            started_at="unknown",
            duration_s=0.0,
            parameters=Parameters(
                iterations=max(r.ops_per_block for r in rows),
                repetitions=max(len(r.samples_ns) for r in rows),
                rsa_bits=tuple(sorted({r.key_bits for r in rows if r.key_bits is not None})),
            ),
            setup=setup,
            rows=tuple(rows),
        ),
    )


MAX_LOG_BYTES: Final = 16 * 1024 * 1024
"""Largest log ``invoke import`` reads (perf_crypto_* and test_helper_* print a few KB)."""


def read_log(path: Path) -> str:
    """A log's text: UTF-8, or Latin-1 for a log saved in a legacy locale.

    Read as every other input is (:func:`archbench.inputs.read_bytes`): a regular
    file of at most :data:`MAX_LOG_BYTES`, opened without blocking.

    Raises:
        ResultsError: the file cannot be read, is not a regular file (a FIFO,
            ``/dev/zero``) or is larger than :data:`MAX_LOG_BYTES`.
    """
    data = read_bytes(path, ResultsError, "the log", MAX_LOG_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # "µs" is b"\xb5s" in Latin-1; every byte decodes, so this never fails.
        return data.decode("latin-1")


def log_paths(spec: str) -> list[Path]:
    """The files of a comma-separated list whose items may be glob patterns (``logs/*.log``).

    A pattern is expanded (sorted) only when no file has its literal name.

    Raises:
        ResultsError: the list is empty or a pattern matches no file.
    """
    paths: list[Path] = []
    for item in (i.strip() for i in spec.split(",")):
        if not item:
            continue
        if any(ch in item for ch in "*?[") and not Path(item).exists():
            matches = sorted(glob.glob(item))
            if not matches:
                raise ResultsError(f"{item}: no file matches this pattern")
            paths.extend(Path(m) for m in matches)
        else:
            paths.append(Path(item))
    if not paths:
        raise ResultsError("no log to import; name one or more saved outputs")
    return paths


def scan_files(
    paths: Sequence[Path], *, scheme: Scheme | None = None, rsa_bits: int | None = None
) -> list[LogScan]:
    """:func:`scan_log` of each file, in order.

    Raises:
        ResultsError: no file, a file named twice, or any file fails
            :func:`read_log` or :func:`scan_log`.
    """
    if not paths:
        raise ResultsError("no log to import; name one or more saved outputs")
    seen: dict[Path, Path] = {}
    for path in paths:
        resolved = path.resolve()
        if resolved in seen:
            raise ResultsError(
                f"{path}: named twice (also as {seen[resolved]}); its samples would count twice"
            )
        seen[resolved] = path
    # A log name that is not UTF-8 is recorded escaped (\xe9): results are UTF-8 JSON.
    return [scan_log(read_log(p), shown_path(p), scheme=scheme, rsa_bits=rsa_bits) for p in paths]


@dataclass(frozen=True)
class LogImport:
    """One ``invoke import``: the logs, the machine they ran on, and where the result goes.

    The result is stored as ``<results>/<run_id>/<target>.json``; ``scheme`` and
    ``rsa_bits`` apply to test_helper lines only, which print neither (None: read
    from the log or its file name).
    """

    paths: tuple[Path, ...]
    setup: Setup
    target: str
    arch: Arch
    run_id: str
    results: Path
    scheme: Scheme | None = None
    rsa_bits: int | None = None


@dataclass(frozen=True)
class ImportedLogs:
    """What :func:`import_logs` stored: each file's scan, the result, and its path."""

    scans: tuple[LogScan, ...]
    result: Result
    path: Path


def import_logs(
    request: LogImport, on_wait: Callable[[str], None] = lambda line: None
) -> ImportedLogs:
    """Read the logs into one result (:func:`scan_files`, :func:`build_result`) and store it.

    Storing holds the results folder's lock (:func:`archbench.result.folder_lock`;
    ``on_wait`` hears when another writer holds it), so the check that no file is
    overwritten and the write are one step.

    Raises:
        ResultsError: a log is unreadable, names no known timing, or its
            test_helper scheme or key size is unknown or contradicted; the
            results file exists already (an import never overwrites one) or
            cannot be written.
        MatrixError: an invalid target name or run id, or a machine of
            another architecture.
    """
    scans = scan_files(request.paths, scheme=request.scheme, rsa_bits=request.rsa_bits)
    result = build_result(scans, request.setup, request.target, request.arch, request.run_id)
    store = ResultStore(request.results)
    path = store.path_for(request.run_id, request.target)
    with folder_lock(request.results, ResultsError, "results folder", on_wait):
        if path.exists():
            raise ResultsError(
                f"{path} exists already; choose another --target "
                "or --run (or remove the file to import again)"
            )
        return ImportedLogs(tuple(scans), result, store.save(result))
