"""The results directory: saving, listing and loading ``<root>/<run-id>/<target>.json``.

A target of ``invoke bench --repeat K`` has K files in its run; loading pools
them into one result (:func:`merge_repeats`).

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import multiprocessing
import os
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from archbench.errors import ResultsError
from archbench.inputs import describe_problems, load_json, quote, read_bytes, read_text
from archbench.result.index import IndexEntry, read_entry, read_index, write_index
from archbench.result.integrity import with_digest
from archbench.result.loading import MAX_RESULT_BYTES, parse_result
from archbench.result.model import (
    BISECT_NAME,
    HISTORY_NAME,
    MANIFEST_NAME,
    BisectManifest,
    Execution,
    HistoryManifest,
    Metric,
    Result,
    RunManifest,
    TargetInfo,
)
from archbench.result.paths import (
    FILE_NAME,
    LOCK_FILE,
    RUN_ID,
    check_run_id,
    inside,
    write_texts,
)
from archbench.result.publish import PUBLISH_NAME

M = TypeVar("M", bound=BaseModel)
"""A stored manifest's model (:class:`RunManifest`, :class:`HistoryManifest`)."""


def repeat_groups(results: Sequence[Result]) -> dict[tuple[str, str, str], list[Result]]:
    """``results`` by (run id, target name, metric), in order of first appearance.

    One group holds the files of one target's ``--repeat K`` container runs
    (its time and its instruction counts apart).
    """
    groups: dict[tuple[str, str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.run_id, r.target.name, r.metric), []).append(r)
    return groups


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
    merged: list[Result] = []
    for (run_id, name, _), group in repeat_groups(results).items():
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


EntryKind = Literal["run", "history", "bisection", "lock", "stray", "unreadable"]


@dataclass(frozen=True)
class Entry:
    """One name in a results folder and what it is.

    ``kind``: ``run`` (a folder of results files and/or ``run.json``), ``history`` (a
    folder with ``history.json``: a series of runs, not a run), ``bisection`` (a folder
    with ``bisect.json``: an ``invoke bisect`` record, not a run), ``lock`` (the folder's
    lock file while a writer holds it), ``stray`` (anything else: a file, a folder
    whose name is no run id, a name that is not UTF-8) or ``unreadable`` (a folder
    archbench may not list). ``note``: what a user is told of a stray or unreadable
    entry, in our words, its name escaped; empty for the others.
    """

    name: str
    kind: EntryKind
    note: str = ""


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_path(path: Path) -> str:
    """``path`` as text any output can hold: bytes that are not UTF-8 written ``\\xe9``."""
    text = str(path)
    return text if _utf8(text) else os.fsencode(text).decode("utf-8", "backslashreplace")


def shown_name(name: str) -> str:
    """A file name as text a message can hold: bytes that are not UTF-8 (decoded by
    Python as surrogates) written as ``\\xe9``, and the name cut to a readable length."""
    return quote(shown_path(Path(name)))


def _is_dir(e: os.DirEntry[str]) -> bool:
    """Whether a folder's entry is a folder; a name that cannot be resolved (a symlink
    loop, ``ELOOP``) is not one, so it is read and refused by name, never dropped with
    the whole run folder."""
    try:
        return e.is_dir()
    except OSError:
        return False


def _listable(path: Path) -> bool:
    try:
        with os.scandir(path):
            return True
    except OSError:
        return False


@dataclass(frozen=True)
class LoadFailure:
    """A results file that could not be loaded, and why."""

    path: Path
    message: str


def _file_name(target: str, repeat_index: int = 1, metric: Metric = "time") -> str:
    """The name :meth:`ResultStore.save` gives a target's file (:meth:`ResultStore.path_for`).

    Raises:
        ResultsError: ``target`` is not a safe file name.
    """
    if not FILE_NAME.fullmatch(target):
        raise ResultsError(f"target name {quote(target)} cannot be a file name")
    suffix = "" if repeat_index == 1 else f".repeat-{repeat_index}"
    kind = "" if metric == "time" else f".{metric}"
    return f"{target}{kind}{suffix}.json"


def stored_text(result: Result) -> str:
    """The text of ``result``'s results file: its JSON, indented, with the digest over its
    content (:func:`archbench.result.integrity.with_digest`)."""
    return json.dumps(with_digest(result.model_dump(mode="json")), indent=2) + "\n"


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
        return inside(
            self.root,
            self.root / run_id / _file_name(target, repeat_index, metric),
            "a results file",
        )

    def save(self, result: Result) -> Path:
        """Store ``result`` atomically, with its integrity digest (:func:`stored_text`);
        returns its path.

        Raises:
            ResultsError: the file cannot be written.
        """
        index = result.execution.repeat_index if result.execution else 1
        path = self.path_for(result.run_id, result.target.name, index, result.metric)
        write_texts({path: stored_text(result)}, ResultsError, "results")
        return path

    def save_manifest(self, manifest: RunManifest) -> Path:
        """Write ``<root>/<run-id>/run.json`` atomically; returns its path.

        Raises:
            ResultsError: the file cannot be written.
        """
        check_run_id(manifest.run_id)
        path = inside(self.root, self.root / manifest.run_id / MANIFEST_NAME, "the run manifest")
        text = manifest.model_dump_json(indent=2) + "\n"
        write_texts({path: text}, ResultsError, "the run manifest")
        return path

    def load_manifest(self, run_id: str) -> RunManifest:
        """Read the manifest of ``run_id``.

        Raises:
            ResultsError: no such run (the message lists the runs there are), or
                its manifest is unreadable or not a regular file.
        """
        check_run_id(run_id, "--resume")
        path = self.root / run_id / MANIFEST_NAME
        if not path.exists():
            known = ", ".join(self.runs()[-5:]) or "none"
            raise ResultsError(
                f"{path}: no run {quote(run_id)} to resume in {self.root} (latest runs: {known})"
            )
        manifest = _read_manifest(path, RunManifest, "the run manifest", "run manifest")
        if manifest.run_id != run_id:
            raise ResultsError(
                f"{path}: the manifest says run {quote(manifest.run_id)} but lies in "
                f"{run_id}; it was copied or edited. Restore it, or start a new run"
            )
        return manifest

    def save_history(self, manifest: HistoryManifest) -> Path:
        """Write ``<root>/<history-id>/history.json`` atomically; returns its path.

        Raises:
            ResultsError: the file cannot be written.
        """
        check_run_id(manifest.history_id, "history id")
        path = inside(
            self.root, self.root / manifest.history_id / HISTORY_NAME, "the history manifest"
        )
        text = manifest.model_dump_json(indent=2) + "\n"
        write_texts({path: text}, ResultsError, "the history manifest")
        return path

    def load_history(self, history_id: str) -> HistoryManifest:
        """Read the manifest of history ``history_id``.

        Raises:
            ResultsError: no such history (the message lists the ones there are), or
                its manifest is unreadable or names another history.
        """
        check_run_id(history_id, "--extend")
        path = self.root / history_id / HISTORY_NAME
        if not path.exists():
            known = ", ".join(self.histories()[-5:]) or "none"
            raise ResultsError(
                f"{path}: no history {quote(history_id)} in {self.root} (latest: {known})"
            )
        manifest = _read_manifest(path, HistoryManifest, "the history manifest", "history")
        if manifest.history_id != history_id:
            raise ResultsError(
                f"{path}: the manifest says history {quote(manifest.history_id)} but lies in "
                f"{history_id}; it was copied or edited"
            )
        return manifest

    def save_bisect(self, manifest: BisectManifest) -> Path:
        """Write ``<root>/<bisect-id>/bisect.json`` atomically; returns its path.

        Raises:
            ResultsError: the file cannot be written.
        """
        check_run_id(manifest.bisect_id, "bisect id")
        path = inside(self.root, self.root / manifest.bisect_id / BISECT_NAME, "the bisection")
        write_texts(
            {path: manifest.model_dump_json(indent=2) + "\n"}, ResultsError, "the bisection"
        )
        return path

    def load_bisect(self, bisect_id: str) -> BisectManifest:
        """Read the record of bisection ``bisect_id`` (``invoke bisect --resume``).

        Raises:
            ResultsError: no such bisection (the message lists the ones there are), or
                its record is unreadable or names another bisection.
        """
        check_run_id(bisect_id, "--resume")
        path = self.root / bisect_id / BISECT_NAME
        if not path.exists():
            known = ", ".join(e.name for e in self.entries() if e.kind == "bisection")
            raise ResultsError(
                f"{path}: no bisection {bisect_id!r} in {self.root} (there are: {known or 'none'})"
            )
        manifest = _read_manifest(path, BisectManifest, "the bisection", "bisection")
        if manifest.bisect_id != bisect_id:
            raise ResultsError(
                f"{path}: the record says bisection {quote(manifest.bisect_id)} but lies in "
                f"{bisect_id}; it was copied or edited"
            )
        return manifest

    def histories(self) -> list[str]:
        """History ids present (folders with a ``history.json``), oldest first."""
        return [e.name for e in self.entries() if e.kind == "history"]

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

    def entries(self) -> list[Entry]:
        """Every name in the results folder and what it is (:class:`Entry`), sorted.

        The one reading of a results folder that every command listing runs uses
        (:meth:`runs`, :meth:`histories`, :meth:`latest_run`, :meth:`load_all`): a
        history's folder is never taken for a run, nor a lock, a stray file or a folder
        whose name is no run id; a folder archbench may not read is named, and the rest
        goes on. Hidden names (``.x``) other than the lock are left out. A results folder
        that cannot be listed has no entries.
        """
        try:
            with os.scandir(self.root) as it:
                found = sorted(it, key=lambda e: e.name)
        except OSError:
            return []
        out: list[Entry] = []
        for e in found:
            name = e.name
            if name == LOCK_FILE:
                out.append(Entry(name, "lock"))
                continue
            if name.startswith("."):
                continue
            shown = shown_name(name)
            try:
                is_dir = e.is_dir(follow_symlinks=True)
            except OSError:
                is_dir = False
            if not is_dir and not os.path.exists(self.root / name):
                # A link whose target is missing or loops (ELOOP): not a file either.
                out.append(Entry(name, "stray", f"{shown} is a symbolic link that leads nowhere"))
            elif not is_dir:
                out.append(Entry(name, "stray", f"{shown} is a file, not a run folder"))
            elif not RUN_ID.fullmatch(name):
                out.append(
                    Entry(name, "stray", f"{shown} is not a run id (letters, digits, '._-')")
                )
            elif not _listable(self.root / name):
                out.append(
                    Entry(
                        name,
                        "unreadable",
                        f"{shown}: cannot read this run folder (permission denied?); "
                        "its results are left out",
                    )
                )
            elif (self.root / name / HISTORY_NAME).is_file():
                out.append(Entry(name, "history"))
            elif (self.root / name / BISECT_NAME).is_file():
                out.append(Entry(name, "bisection"))
            else:
                out.append(Entry(name, "run"))
        return out

    def notes(self) -> list[str]:
        """What :meth:`entries` found that is neither a run nor a history, one line each:
        ``"<root>/<name>: ..., left alone"``."""
        return [f"{self.root}/{e.note}; left alone" for e in self.entries() if e.note]

    def runs(self) -> list[str]:
        """Run ids present, oldest first (run ids sort by time); histories, locks, stray
        names and unreadable folders are not runs (:meth:`entries`)."""
        return [e.name for e in self.entries() if e.kind == "run"]

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
            try:
                with os.scandir(self.root / run_id) as it:
                    # Not only regular files: a FIFO or socket at a name is refused by the
                    # bounded reader, named, never read.
                    names = sorted(e.name for e in it if not _is_dir(e))
            except OSError:
                continue  # an unreadable folder: :meth:`load_all` names it
            for name in names:
                ours = name.endswith(".json") and not name.startswith(".")
                if ours and name not in (MANIFEST_NAME, HISTORY_NAME, PUBLISH_NAME):
                    yield self.root / run_id / name

    def _at_home(self, path: Path, result: _Stored) -> bool:
        """True when ``path`` is where :meth:`save` puts ``result``."""
        index = result.execution.repeat_index if result.execution else 1
        # The name alone (path_for's checks resolve the path: a syscall per file).
        try:
            return path.name == _file_name(result.target.name, index)
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
        read: list[tuple[Path, Result, str]] = []
        asked = set(run_ids) if run_ids is not None else None
        for e in self.entries():
            if e.kind == "unreadable" and (asked is None or e.name in asked):
                failures.append(LoadFailure(self.root / e.name, f"{self.root}/{e.note}"))
        for path in self.files(run_ids):
            if not _utf8(path.name):
                failures.append(
                    LoadFailure(
                        path,
                        f"{path.parent}/{shown_name(path.name)}: skipped: its name is not "
                        "UTF-8 text; rename it",
                    )
                )
                continue
            try:
                data = read_bytes(path, ResultsError, "the results file", MAX_RESULT_BYTES)
                read.append((path, parse_result(data, path), hashlib.sha256(data).hexdigest()))
            except ResultsError as exc:
                failures.append(LoadFailure(path, str(exc)))
        # The file at the name archbench gave it comes before any copy of it.
        read.sort(key=lambda prd: (prd[0].parent.name, not self._at_home(prd[0], prd[1])))
        for path, result, digest in read:
            if metric is not None and result.metric != metric:
                continue
            problem = _pooling_problem(path, result, digest, seen, seen_bytes)
            if problem:
                failures.append(LoadFailure(path, problem))
                continue
            loaded.append(result)
        if not merge:
            return loaded, failures
        merged: list[Result] = []
        for (run_id, name, _), group in repeat_groups(loaded).items():
            # One target's runs that cannot be pooled must not hide the others.
            try:
                merged.extend(merge_repeats(group))
            except ResultsError as exc:
                failures.append(LoadFailure(self.root / run_id / f"{name}.json", str(exc)))
        return merged, failures

    def indexed(
        self,
        run_ids: Sequence[str] | None = None,
        *,
        metric: Metric | None = None,
        on_note: Callable[[str], None] = lambda _line: None,
    ) -> tuple[list[IndexEntry], list[LoadFailure]]:
        """The index entries (:class:`archbench.result.IndexEntry`) of every results file of
        the given runs (all when None) that measured ``metric`` (None: both), oldest run
        first; what a report over many runs reads instead of every whole file.

        Entries come from the store's index (:mod:`archbench.result.index`) while their
        file's size and modification time are the ones recorded; every other file is read
        whole, through :func:`archbench.result.load`'s checks (in parallel, one process per
        CPU, when there are many), and the index is written back with it. The same files
        fail, and with the same messages, as in :meth:`load_all` (``merge=False``): a bad
        file, a name that is not UTF-8, an unreadable run folder, a copy in another run's
        folder, a duplicate. ``on_note`` hears, once each, that the index was unreadable and
        is rebuilt, or could not be written.
        """
        failures: list[LoadFailure] = []
        asked = set(run_ids) if run_ids is not None else None
        listing = self.entries()  # once: a syscall or three per run folder
        for e in listing:
            if e.kind == "unreadable" and (asked is None or e.name in asked):
                failures.append(LoadFailure(self.root / e.name, f"{self.root}/{e.note}"))
        if run_ids is None:
            run_ids = [e.name for e in listing if e.kind == "run"]
        known, note = read_index(self.root)
        if note:
            on_note(note)
        fresh: dict[str, IndexEntry] = {}
        unread: list[str] = []
        order: list[str] = []
        scanned: set[str] = set()
        for path in self.files(run_ids):
            scanned.add(path.parent.name)
            if not _utf8(path.name):
                failures.append(
                    LoadFailure(
                        path,
                        f"{path.parent}/{shown_name(path.name)}: skipped: its name is not "
                        "UTF-8 text; rename it",
                    )
                )
                continue
            relative = f"{path.parent.name}/{path.name}"
            order.append(relative)
            entry = known.get(relative)
            try:
                st = path.stat()
            except OSError:
                st = None
            if entry is not None and st is not None and same_file(entry, st):
                fresh[relative] = entry
            else:
                unread.append(relative)
        for relative, got in _read_entries(self.root, unread):
            if isinstance(got, IndexEntry):
                fresh[relative] = got
            else:
                failures.append(LoadFailure(self.root / relative, got))
        # Entries of runs not asked for stay as they were; those of the runs read are
        # now exactly their files (a file removed loses its entry).
        kept = {k: v for k, v in known.items() if k.split("/", 1)[0] not in scanned}
        if unread or len(kept) + len(fresh) != len(known):
            why = write_index(self.root, kept | fresh)
            if why:
                on_note(why)
        # In the files' order (run, then name), as load_all reads them.
        read = [(self.root / r, fresh[r]) for r in order if r in fresh]
        read.sort(key=lambda pe: (pe[0].parent.name, not self._at_home(pe[0], pe[1])))
        seen: dict[tuple[object, ...], Path] = {}
        seen_bytes: dict[str, Path] = {}
        out: list[IndexEntry] = []
        for path, entry in read:
            if metric is not None and entry.metric != metric:
                continue
            problem = _pooling_problem(path, entry, entry.sha256, seen, seen_bytes)
            if problem:
                failures.append(LoadFailure(path, problem))
                continue
            out.append(entry)
        return out, failures


INDEX_IN_PARALLEL = 64
"""Files to read before the index is built by one process per CPU rather than by one."""


def same_file(entry: IndexEntry, st: os.stat_result) -> bool:
    """True while the file's identity is the one ``entry`` recorded: size, modification
    and status-change times, inode (:mod:`archbench.result.index`: no edit keeps all four)."""
    return (
        entry.size == st.st_size
        and entry.mtime_ns == st.st_mtime_ns
        and entry.ctime_ns == st.st_ctime_ns
        and entry.inode == st.st_ino
    )


def _entry_or_message(root: Path, relative: str) -> IndexEntry | str:
    try:
        return read_entry(root, relative)[0]
    except ResultsError as exc:
        return str(exc)


def _read_entries(root: Path, relatives: Sequence[str]) -> list[tuple[str, IndexEntry | str]]:
    """Each file read (:func:`archbench.result.index.read_entry`): its entry, or why it
    cannot be loaded; in parallel, one process per CPU, when there are many."""
    workers = min(len(os.sched_getaffinity(0)), 8)
    # A daemonic process (a pool's worker) may start none.
    alone = multiprocessing.current_process().daemon
    if len(relatives) < INDEX_IN_PARALLEL or workers < 2 or alone:
        return [(r, _entry_or_message(root, r)) for r in relatives]
    # fork: the workers share the parent's imports; they only read and return.
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        got = pool.map(
            _entry_or_message,
            [root] * len(relatives),
            relatives,
            chunksize=max(1, len(relatives) // (workers * 8)),
        )
        return list(zip(relatives, got, strict=True))


def _read_manifest(path: Path, model: type[M], what: str, name: str) -> M:
    """``path`` read through the bounded reader and validated as ``model``.

    Raises:
        ResultsError: not a regular file, too large, not JSON, or not a ``model``
            (``"<path>: unreadable <name>: ..."``).
    """
    text = read_text(path, ResultsError, what, MAX_RESULT_BYTES)
    data = load_json(text, str(path), ResultsError)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ResultsError(f"{path}: unreadable {name}: {describe_problems(exc)}") from exc


class _Stored(Protocol):
    """What the pooling checks read of a stored file: a :class:`Result` or its index entry."""

    @property
    def run_id(self) -> str: ...
    @property
    def metric(self) -> Metric: ...
    @property
    def target(self) -> TargetInfo: ...
    @property
    def execution(self) -> Execution | None: ...


def result_key(result: _Stored) -> tuple[object, ...]:
    """What makes a results file unique: (run id, target, repeat index[, metric]).

    A ``metric`` attribute (time vs instructions), where results carry one, is
    part of the key.
    """
    index = result.execution.repeat_index if result.execution else 1
    metric = getattr(result, "metric", None)
    return (result.run_id, result.target.name, index, metric)


def _pooling_problem(
    path: Path,
    result: _Stored,
    digest: str,
    seen: dict[tuple[object, ...], Path],
    seen_bytes: dict[str, Path],
) -> str | None:
    """Why ``path`` (its bytes' sha256 ``digest``) must not be pooled with the files before
    it, or None (then it is recorded)."""
    if result.run_id != path.parent.name:
        return (
            f"{path}: skipped: it belongs to run {quote(result.run_id)} but lies in "
            f"{path.parent.name} (a copied file); move it back or remove it"
        )
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
