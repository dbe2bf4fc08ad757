"""Publishing: run folders of many machines and CI jobs merged into one history store.

The store is an ordinary results folder (``<store>/<run-id>/<target>.json``, ``run.json``),
so every command reads it as it reads ``results/``. A merged run keeps its files byte for
byte and gains ``<run-id>/publish.json``, a :class:`PublishRecord`: the sha256 of each of
its files, the machine identity of each target (CPU, its class, kernel, host, native or
emulated, the QEMU CPU model of counts) and the run's provenance (branch, commit, runner
labels, CI job): the same numbers whichever path brought a run in (a local run, an ssh
host's, a CI artifact), and the rows compared only like with like (:meth:`MachineIdentity.
machine_class`).

Merging (:func:`merge_runs`) is keyed by run id and content digest, as asv's and
github-action-benchmark's stores are by machine and commit:

* a run not in the store is copied into a hidden folder of the store and renamed into
  place in one ``rename(2)``: readers see the whole run or none of it;
* a run already there with the same files and provenance is left alone, so merging the
  same artifact twice changes nothing (not a byte, not a time stamp);
* a run already there with other files or another provenance is a conflict: named, never
  overwritten;
* a run whose files fail their checks (:func:`verify_run`) is refused and named; the
  others are merged.

Merges into one store take turns under the results folder's lock (:func:`~archbench.result.
paths.folder_lock`, the lock ``invoke bench`` and ``import`` hold), so concurrent merges,
or a merge beside a run writing the same folder, are safe; a hidden ``.merge-*`` folder
left by a killed merge is removed by the next one.

Pure: never imports ``docker``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from pydantic import Field, ValidationError

from archbench.errors import ResultsError
from archbench.inputs import describe_problems, load_json, quote, read_bytes, read_text
from archbench.result.loading import MAX_RESULT_BYTES, parse_checked
from archbench.result.model import (
    BISECT_NAME,
    HISTORY_NAME,
    MANIFEST_NAME,
    Metric,
    Result,
    RunManifest,
)
from archbench.result.paths import (
    FILE_NAME,
    RUN_ID,
    folder_lock,
    write_atomic,
)
from archbench.result.row import Frozen

PUBLISH_NAME: Final = "publish.json"
"""A merged run's :class:`PublishRecord`, beside its ``run.json``."""
LOGS: Final = "logs"
"""A run's build logs: copied with the run, not part of its digest."""
MAX_LOG_BYTES: Final = 64 * 1024 * 1024
"""A build log larger than this is not copied (named); the run is merged without it."""
MERGE_PREFIX: Final = ".merge-"
"""Hidden folders a merge builds a run in before renaming it into place."""


# ---------------------------------------------------------------- identity and provenance

_CPU_NOISE = re.compile(
    r"\((?:r|tm|c)\)|\bcpu\b|\bprocessor\b|\b\d+-core\b|@\s*[\d.]+\s*[gm]hz|\bwith\b.*$",
    re.IGNORECASE,
)


def cpu_class(model: str) -> str:
    """A CPU model as a class of like machines: lower case, without trademarks, core
    counts, clock speeds and GPU names (``AMD EPYC 7763 64-Core Processor`` and ``AMD
    EPYC 7763`` are one class; ``Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz`` is
    ``intel xeon platinum 8370c``). Times are only ever compared within one class."""
    text = _CPU_NOISE.sub(" ", model.replace("\u00ae", " ").replace("\u2122", " "))
    return " ".join(text.lower().split()) or "unknown"


class Provenance(Frozen):
    """Where a run comes from: the project's branch and commit it measured, the CI runner
    labels and job, or a local run (no runner)."""

    branch: str | None = Field(default=None, max_length=255)
    commit: str | None = Field(default=None, max_length=64)
    runner: tuple[str, ...] = ()
    ci_url: str | None = Field(default=None, max_length=500)

    @property
    def source(self) -> Literal["ci", "local"]:
        """``ci`` when a runner or CI job is named, else ``local``."""
        return "ci" if self.runner or self.ci_url else "local"


class MachineIdentity(Frozen):
    """What measured one target of a run, read from its results file.

    ``cpu``: the CPU the numbers belong to (the model the container saw natively; the
    host's CPU under emulation, whose speed an emulated time measures); ``cpu_class``:
    :func:`cpu_class` of it; ``kernel``: the container's kernel (the host's); ``host``: the
    Docker engine it ran on (``local``, or an ssh/tcp host by address); ``qemu_cpu``:
    QEMU's CPU model of an instruction count (None for times).
    """

    target: str
    metric: Metric
    arch: str
    emulated: bool
    cpu: str
    cpu_class: str
    kernel: str
    host: str
    host_arch: str
    qemu_cpu: str | None = None

    @property
    def machine_class(self) -> tuple[str, ...]:
        """The class within which rows compare. Counts: architecture and QEMU CPU model
        (a count is the same on any host). Times: architecture, native or emulated, and
        the CPU class."""
        if self.metric == "instructions":
            return ("instructions", self.arch, self.qemu_cpu or "")
        return ("time", self.arch, "emulated" if self.emulated else "native", self.cpu_class)


def machine_identity(result: Result) -> MachineIdentity:
    """The :class:`MachineIdentity` of one results file."""
    setup = result.harness.setup
    ex = result.execution
    emulated = ex is not None and ex.emulated
    cpu = ex.host_cpu if ex is not None and emulated else setup.cpu_model
    counting = result.harness.counting
    return MachineIdentity(
        target=result.target.name,
        metric=result.metric,
        arch=result.target.arch,
        emulated=emulated,
        cpu=cpu,
        cpu_class=cpu_class(cpu),
        kernel=setup.kernel,
        host=ex.docker_host if ex is not None else "imported",
        host_arch=ex.host_arch if ex is not None else setup.machine,
        qemu_cpu=counting.cpu_model if counting is not None else None,
    )


class PublishRecord(Frozen):
    """``<store>/<run-id>/publish.json``: what a merged run is and where it comes from.

    ``files``: name -> sha256 (hex) of each file the run's results are read from
    (``run.json`` and the results files; not logs); ``digest``: sha256 of those pairs,
    the run's content key; ``started_at``: from ``run.json`` (None for an import);
    ``machines``: one identity per results file's target and metric, sorted.
    """

    format: Literal["archbench-publish"] = "archbench-publish"
    version: Literal[1] = 1
    run_id: str = Field(pattern=f"^{RUN_ID.pattern}$", max_length=64)
    digest: str = Field(pattern="^[0-9a-f]{64}$")
    files: dict[str, str]
    started_at: str | None = None
    provenance: Provenance = Field(default_factory=Provenance)
    machines: tuple[MachineIdentity, ...] = ()
    published_at: str = ""

    def same_run(self, other: PublishRecord) -> bool:
        """Same files and same provenance: merging one onto the other changes nothing."""
        return self.digest == other.digest and self.provenance == other.provenance


def files_digest(files: dict[str, str]) -> str:
    """sha256 (hex) of ``name sha256`` lines, sorted by name: a run's content key."""
    text = "".join(f"{name} {files[name]}\n" for name in sorted(files))
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------- checking a run


@dataclass(frozen=True)
class CheckedRun:
    """A run folder that passed :func:`verify_run`: its record (provenance not yet set
    unless the folder had a ``publish.json``) and its logs to copy."""

    folder: Path
    record: PublishRecord
    logs: tuple[Path, ...]
    had_record: bool
    notes: tuple[str, ...] = ()


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def verify_run(folder: Path) -> tuple[CheckedRun | None, list[str]]:
    """Check a run folder before it is merged: the one check of a run's files.

    What it checks: the folder's name is a run id; it holds only regular files (no
    links, FIFOs or devices) and a ``logs/`` folder; ``run.json``, when present, is a
    valid manifest of this run; every other ``*.json`` is a results file that loads
    (bounded reading, the schema of its version), belongs to this run, lies at the name
    archbench gives it and measured a target the manifest lists; and, when the folder
    carries a ``publish.json`` (a job's artifact stamped by ``invoke publish``), every
    file has the sha256 written there and no file is missing or added: what was
    measured on the runner is what arrives. Each results file's own integrity digest
    (:mod:`archbench.result.integrity`) must match its content; a file written before
    digests is merged, with a note that its counts will never be reused by a bisection.

    Returns:
        ``(run, [])`` when it passes; ``(None, problems)`` otherwise, each problem naming
        the file and what is wrong.
    """
    problems: list[str] = []
    name = folder.name
    if not RUN_ID.fullmatch(name):
        return None, [f"{folder}: not a run folder (its name is not a run id)"]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        return None, [f"{folder}: cannot read the run folder: {exc.strerror or exc}"]
    digests: dict[str, str] = {}
    results: list[tuple[str, Result]] = []
    logs: list[Path] = []
    manifest: RunManifest | None = None
    stamped: PublishRecord | None = None
    notes: list[str] = []
    for e in entries:
        path = folder / e.name
        if e.name == LOGS and e.is_dir(follow_symlinks=False):
            found, skipped = _logs(path)
            logs.extend(found)
            notes.extend(skipped)
            continue
        if e.name.startswith("."):
            continue  # editors' and our own temporary files (.<name>.*.tmp), never results
        if not _regular(path):
            problems.append(f"{path}: not a regular file (a link, folder, FIFO or device)")
            continue
        if not e.name.endswith(".json"):
            problems.append(f"{path}: not a file of a run (run.json, <target>.json, logs/)")
            continue
        try:
            data = read_bytes(path, ResultsError, "a file of the run", MAX_RESULT_BYTES)
        except ResultsError as exc:
            problems.append(str(exc))
            continue
        if e.name == PUBLISH_NAME:
            stamped = _parse_record(data, path, problems)
            continue
        if e.name in (HISTORY_NAME, BISECT_NAME):
            problems.append(f"{path}: a history or bisection record, not a run")
            continue
        digests[e.name] = hashlib.sha256(data).hexdigest()
        if e.name == MANIFEST_NAME:
            manifest = _parse_manifest(data, path, name, problems)
            continue
        try:
            result, digest = parse_checked(data, path)
        except ResultsError as exc:
            problems.append(str(exc))
            continue
        if digest is None and result.metric == "instructions":
            notes.append(
                f"{path}: no integrity digest (written before archbench stored one): merged "
                "and reported, but its counts are never reused by a bisection"
            )
        results.append((e.name, result))
    for file_name, result in results:
        problems.extend(_result_problems(folder / file_name, name, result, manifest))
    if not results and manifest is None:
        problems.append(f"{folder}: no results files and no run.json")
    if stamped is not None:
        problems.extend(_stamp_problems(folder, stamped, digests))
    if problems:
        return None, problems
    record = PublishRecord(
        run_id=name,
        digest=files_digest(digests),
        files=digests,
        started_at=manifest.started_at if manifest is not None else None,
        provenance=stamped.provenance if stamped is not None else Provenance(),
        machines=tuple(
            sorted(
                {machine_identity(r) for _, r in results},
                key=lambda m: (m.target, m.metric),
            )
        ),
        published_at=stamped.published_at if stamped is not None else "",
    )
    return CheckedRun(folder, record, tuple(logs), stamped is not None, tuple(notes)), []


def _logs(folder: Path) -> tuple[list[Path], list[str]]:
    """Regular files of a run's ``logs/`` (one level); what is left out, named."""
    found: list[Path] = []
    skipped: list[str] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        return [], [f"{folder}: cannot read the logs ({exc.strerror or exc}); merged without"]
    for n in names:
        path = folder / n
        if not FILE_NAME.fullmatch(n) or not _regular(path):
            skipped.append(f"{path}: not copied (not a regular file with a plain name)")
        elif path.lstat().st_size > MAX_LOG_BYTES:
            skipped.append(f"{path}: not copied (larger than {MAX_LOG_BYTES >> 20} MiB)")
        else:
            found.append(path)
    return found, skipped


def _parse_manifest(
    data: bytes, path: Path, run_id: str, problems: list[str]
) -> RunManifest | None:
    try:
        manifest = RunManifest.model_validate(load_json(data.decode(), str(path), ResultsError))
    except (ResultsError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: unreadable run manifest: {exc}")
        return None
    except ValidationError as exc:
        problems.append(f"{path}: unreadable run manifest: {describe_problems(exc)}")
        return None
    if manifest.run_id != run_id:
        problems.append(
            f"{path}: the manifest says run {quote(manifest.run_id)} but lies in {run_id}"
        )
    return manifest


def _parse_record(data: bytes, path: Path, problems: list[str]) -> PublishRecord | None:
    try:
        return PublishRecord.model_validate(load_json(data.decode(), str(path), ResultsError))
    except (ResultsError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: unreadable publish record: {exc}")
    except ValidationError as exc:
        problems.append(f"{path}: unreadable publish record: {describe_problems(exc)}")
    return None


def _result_problems(
    path: Path, run_id: str, result: Result, manifest: RunManifest | None
) -> list[str]:
    out = []
    if result.run_id != run_id:
        out.append(f"{path}: belongs to run {quote(result.run_id)}, not {run_id}")
    index = result.execution.repeat_index if result.execution else 1
    kind = "" if result.metric == "time" else f".{result.metric}"
    suffix = "" if index == 1 else f".repeat-{index}"
    expected = f"{result.target.name}{kind}{suffix}.json"
    if path.name != expected:
        out.append(f"{path}: holds {expected} (target, metric, repeat); renamed or copied")
    if manifest is not None and result.target.name not in manifest.targets:
        out.append(
            f"{path}: target {quote(result.target.name)} is not among the run's targets "
            f"({', '.join(manifest.targets)})"
        )
    return out


def _stamp_problems(folder: Path, stamped: PublishRecord, digests: dict[str, str]) -> list[str]:
    out = []
    if stamped.run_id != folder.name:
        out.append(f"{folder / PUBLISH_NAME}: names run {quote(stamped.run_id)}")
    for name in sorted(stamped.files.keys() | digests.keys()):
        want, have = stamped.files.get(name), digests.get(name)
        if want is None:
            out.append(f"{folder / name}: not in publish.json (added after it was stamped)")
        elif have is None:
            out.append(f"{folder / name}: missing (publish.json lists it)")
        elif want != have:
            out.append(f"{folder / name}: sha256 {have[:12]}… differs from publish.json's")
    if files_digest(stamped.files) != stamped.digest:
        out.append(f"{folder / PUBLISH_NAME}: its digest does not match its own file list")
    return out


# ---------------------------------------------------------------- finding runs


def find_runs(path: Path, depth: int = 2) -> list[Path]:
    """The run folders at ``path``: the folder itself when it is a run (it holds
    ``run.json`` or results files), else the runs among its subfolders, down to ``depth``
    levels (a results folder or a job's artifact: one; a folder of downloaded artifacts:
    two). Histories, bisections and hidden names are left out.

    Raises:
        ResultsError: ``path`` does not exist or is not a folder.
    """
    if not path.is_dir():
        raise ResultsError(f"--merge {path}: no such folder (give run folders or results folders)")
    if _is_run(path):
        return [path]
    out: list[Path] = []
    if depth == 0:
        return out
    for e in sorted(os.scandir(path), key=lambda e: e.name):
        sub = path / e.name
        if e.name.startswith(".") or not e.is_dir(follow_symlinks=False):
            continue
        if (sub / HISTORY_NAME).exists() or (sub / BISECT_NAME).exists():
            continue
        out.extend(find_runs(sub, depth - 1))
    return out


def _is_run(path: Path) -> bool:
    try:
        names = os.listdir(path)
    except OSError:
        return False
    if HISTORY_NAME in names or BISECT_NAME in names:
        return False
    return MANIFEST_NAME in names or any(
        n.endswith(".json") and not n.startswith(".") and n != PUBLISH_NAME for n in names
    )


def read_records(store: Path) -> dict[str, PublishRecord]:
    """Run id -> record of every merged run of ``store`` (runs without one are left out,
    as are records that do not parse or name another run)."""
    out: dict[str, PublishRecord] = {}
    try:
        names = sorted(os.listdir(store))
    except OSError:
        return out
    for n in names:
        record = read_record(store / n) if RUN_ID.fullmatch(n) else None
        if record is not None and record.run_id == n:
            out[n] = record
    return out


# ---------------------------------------------------------------- merging

MergeStatus = Literal["merged", "unchanged", "conflict", "refused"]


@dataclass(frozen=True)
class MergeLine:
    """What happened to one run: ``merged`` (new in the store), ``unchanged`` (already
    there, the same), ``conflict`` (there, but other files or provenance: left as it was)
    or ``refused`` (its files failed their checks); ``detail``: why, for the last two."""

    run_id: str
    source: Path
    status: MergeStatus
    detail: str = ""


@dataclass
class MergeReport:
    """Every run a merge saw, in order, and the notes (logs not copied, leftovers)."""

    lines: list[MergeLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def of(self, status: MergeStatus) -> list[MergeLine]:
        """The lines with ``status``."""
        return [line for line in self.lines if line.status == status]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def merge_runs(
    sources: Iterable[Path],
    store: Path,
    provenance: Provenance | None = None,
    on_line: Callable[[str], None] = print,
) -> MergeReport:
    """Merge the run folders ``sources`` into ``store`` (created when missing).

    ``provenance`` applies to runs that carry none (a run folder straight from ``invoke
    bench``); a run stamped by an earlier ``invoke publish`` keeps its own. Every run is
    checked (:func:`verify_run`) before anything of it is written; then, under the store's
    lock, it is merged, left unchanged, or found in conflict (module docstring).
    ``on_line`` hears one line per run and each note.

    Raises:
        ResultsError: the store is a file or cannot be created or locked.
    """
    report = MergeReport()
    checked: list[CheckedRun] = []
    for folder in sources:
        run, problems = verify_run(folder)
        if run is None:
            detail = "; ".join(problems[:20]) + (
                f"; and {len(problems) - 20} more" if len(problems) > 20 else ""
            )
            report.lines.append(MergeLine(folder.name, folder, "refused", detail))
            on_line(f"refused {folder}: {detail}")
            continue
        for note in run.notes:
            report.notes.append(note)
            on_line(f"note: {note}")
        if not run.had_record and provenance is not None:
            record = run.record.model_copy(update={"provenance": provenance})
            run = CheckedRun(run.folder, record, run.logs, False, run.notes)
        checked.append(run)
    with folder_lock(store, ResultsError, "--store", on_line):
        _sweep(store, report, on_line)
        for run in checked:
            line = _merge_one(run, store)
            report.lines.append(line)
            shown = f": {line.detail}" if line.detail else ""
            on_line(f"{line.status} {line.run_id} (from {line.source}){shown}")
    return report


def _sweep(store: Path, report: MergeReport, on_line: Callable[[str], None]) -> None:
    """Remove the hidden folders of merges that were killed: with the lock held, no merge
    is building one."""
    for n in sorted(os.listdir(store)):
        if n.startswith(MERGE_PREFIX) and (store / n).is_dir():
            shutil.rmtree(store / n, ignore_errors=True)
            note = f"{store / n}: removed what a killed merge left"
            report.notes.append(note)
            on_line(f"note: {note}")


def read_record(folder: Path) -> PublishRecord | None:
    """The record in run folder ``folder``, None when it has none or it does not parse."""
    path = folder / PUBLISH_NAME
    if not path.is_file():
        return None
    try:
        text = read_text(path, ResultsError, "a publish record", MAX_RESULT_BYTES)
        return PublishRecord.model_validate(load_json(text, str(path), ResultsError))
    except (ResultsError, ValidationError):
        return None


def _merge_one(run: CheckedRun, store: Path) -> MergeLine:
    record = run.record
    target = store / record.run_id
    if not record.published_at:
        record = record.model_copy(update={"published_at": _now()})
    if target.exists() or target.is_symlink():
        there = read_record(target)
        if there is None and not (target / PUBLISH_NAME).exists():
            # A run written into the store by ``invoke bench`` itself (or this very
            # folder): the same files get their record, nothing else is written.
            found, _ = verify_run(target)
            if found is not None and found.record.digest == record.digest:
                write_atomic(target / PUBLISH_NAME, record.model_dump_json(indent=2) + "\n")
                return MergeLine(record.run_id, run.folder, "merged", "record added in place")
            there = found.record if found is not None else None
        if there is not None and there.same_run(record):
            return MergeLine(record.run_id, run.folder, "unchanged")
        if there is None:
            why = "the store's copy fails its checks or has an unreadable publish.json"
        elif there.digest != record.digest:
            changed = sorted(
                n
                for n in there.files.keys() | record.files.keys()
                if there.files.get(n) != record.files.get(n)
            )
            why = f"other content in {', '.join(changed[:5])}"
        else:
            why = f"other provenance ({_provenance_diff(there.provenance, record.provenance)})"
        return MergeLine(
            record.run_id,
            run.folder,
            "conflict",
            f"the store has run {record.run_id} with {why}; kept the store's, merged nothing",
        )
    building = store / f"{MERGE_PREFIX}{record.run_id}-{secrets.token_hex(4)}"
    try:
        building.mkdir()
        for name in record.files:
            _copy(run.folder / name, building / name, record.files[name])
        if run.logs:
            (building / LOGS).mkdir()
            for log in run.logs:
                _copy(log, building / LOGS / log.name, None)
        write_atomic(building / PUBLISH_NAME, record.model_dump_json(indent=2) + "\n")
        _fsync_dir(building)
        # One rename: the run appears whole or not at all. Under the lock nobody else
        # creates the name; rename(2) onto an existing non-empty folder fails anyway.
        os.rename(building, target)
        _fsync_dir(store)
    except OSError as exc:
        shutil.rmtree(building, ignore_errors=True)
        raise ResultsError(
            f"{store}: cannot write run {record.run_id}: {exc.strerror or exc}; nothing of it "
            "was merged"
        ) from exc
    except ResultsError:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return MergeLine(record.run_id, run.folder, "merged")


def _provenance_diff(a: Provenance, b: Provenance) -> str:
    keys = ("branch", "commit", "runner", "ci_url")
    diff = [
        f"{k} {getattr(a, k)!r} vs {getattr(b, k)!r}"
        for k in keys
        if getattr(a, k) != getattr(b, k)
    ]
    return "; ".join(diff) or "other fields"


def _copy(source: Path, dest: Path, sha256: str | None) -> None:
    """Copy ``source`` to ``dest`` (a new file), flushed to disk; when ``sha256`` is given,
    the bytes written must have it (the file changed since it was checked otherwise).

    Raises:
        ResultsError: the file changed after it was checked.
        OSError: reading or writing failed.
    """
    data = source.read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise ResultsError(f"{source}: changed while it was being merged; merge it again")
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def collect_runs(paths: Sequence[Path]) -> list[Path]:
    """Every run folder of ``paths`` (:func:`find_runs`), each once, in order.

    Raises:
        ResultsError: a path is not a folder.
    """
    seen: set[Path] = set()
    out: list[Path] = []
    for p in paths:
        for run in find_runs(p):
            key = run.resolve()
            if key not in seen:
                seen.add(key)
                out.append(run)
    return out
