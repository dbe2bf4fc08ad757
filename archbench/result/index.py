"""The store's index: what a report over many runs reads of each results file, cached.

``<root>/.archbench-index.json`` holds, per results file of the store (keyed by its path
relative to the root, ``<run-id>/<name>.json``), the file's identity (size, modification
time in ns, status-change time in ns, inode, and the sha256 of its bytes), its integrity
digest once checked (:mod:`archbench.result.integrity`; None: an older file without one) and
an :class:`IndexEntry`: the facts of the file that reports over a history read (target,
execution, the Setup box's main fields, the start time) and its rows without their bulk (no
calibration or warmup blocks, noise, attribution or Callgrind check). A report over 10,000
runs then reads one file instead of parsing 10,000 whole documents (about 50 kB each, 130 kB
counted) again every time.

The index is a derived cache, never authoritative (:meth:`archbench.result.ResultStore.indexed`
uses it): an entry counts only while its file's size, modification time, status-change time
and inode are the ones recorded. The status-change time (``st_ctime``) is what no edit can
keep: ``touch -r`` or a copy with ``cp -p`` restores a modification time, but any write,
rename or copy sets ``st_ctime`` to now, so a file edited since it was indexed is read again,
its digest checked, and refused if it no longer matches: the index never serves an entry of a
file whose bytes changed (a rebuilt index after a copy of the whole store costs one read of
every file, once). A file without a valid entry is read (through the same checks as
:func:`archbench.result.load`) and added, an entry whose file is gone is dropped. A
missing index is built; one that cannot be read (not JSON, another version, an entry that
breaks the model) is ignored, said, and rebuilt. It is written atomically
(:func:`archbench.result.write_atomic`): two processes that rebuild it at once each write a
whole index, the last rename wins, and either describes the files it saw by their
identity, so a reader never takes an entry for a file that changed since.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Annotated, Final, Literal, NamedTuple

from pydantic import Field, TypeAdapter, ValidationError

from archbench.errors import ResultsError
from archbench.inputs import read_bytes
from archbench.result.document import Setup
from archbench.result.loading import MAX_RESULT_BYTES, parse_checked
from archbench.result.model import Execution, Metric, Reference, Result, TargetInfo
from archbench.result.paths import write_atomic
from archbench.result.row import Frozen, Row, row_label

INDEX_FILE: Final = ".archbench-index.json"
"""The index's file in the results folder (hidden: never listed as a run or a stray)."""
INDEX_FORMAT: Final = "archbench-index"
INDEX_VERSION: Final = 2
"""Version 2: entries of ``archbench-result`` version 2 files, with each file's status-change
time, inode and integrity digest (version 1 had none of the three). A new version of either
makes the old index one that is rebuilt, never misread."""
MAX_INDEX_BYTES: Final = 1 << 30
"""An index larger than this is not read (about 6 kB per results file: 170,000 files)."""

Numbers = Annotated[str, Field(pattern=r"^[0-9]+( [0-9]+)*$", max_length=1 << 20)]
"""Block values (ns, or instructions) as decimal integers separated by one space: a row's
samples in a tenth of the memory of a list of ints until a report reads them
(:func:`numbers`)."""


class IndexedRow(NamedTuple):
    """A row of a results file as the index keeps it: its key fields, validity and blocks.

    The fields keep :class:`archbench.result.Row`'s names and meanings, so what reads a
    row's key (:func:`archbench.result.row_key`) reads this too; ``samples_ns`` and
    ``instructions`` are :data:`Numbers` (:func:`numbers` reads them).
    """

    suite: str
    scheme: str
    key_bits: int | None
    operation: str
    ops_per_block: Annotated[int, Field(ge=1)]
    processes: Annotated[int, Field(ge=1)]
    param: str | None
    device: str
    bytes_per_op: int | None
    valid: bool
    invalid_reason: str | None
    samples_ns: Numbers
    instructions: Numbers | None
    printed: str | None

    @property
    def label(self) -> str:
        """The scheme as tables print it (:attr:`archbench.result.Row.label`)."""
        return row_label(self.scheme, self.key_bits, self.param)


def numbers(text: str) -> tuple[int, ...]:
    """The integers of a :data:`Numbers` text (``"770000 771000"`` -> ``(770000, 771000)``)."""
    return tuple(map(int, text.split(" ")))


def _text(values: tuple[int, ...] | None) -> str | None:
    return None if values is None else " ".join(map(str, values))


class IndexEntry(Frozen):
    """One results file as the index keeps it (the facts reports over a history read).

    ``path``: the file relative to the results folder (``<run-id>/<name>.json``);
    ``size`` (bytes), ``mtime_ns``, ``ctime_ns`` and ``inode`` its identity when it was
    read, ``sha256`` the hex digest of its bytes (duplicates are told by it), ``digest`` the
    integrity digest inside the file, checked when it was read (None: an older file without
    one, whose counts are never reused). ``setup`` keeps the Setup box's
    fields up to ``gcc_version`` (CPU, cores, machine, kernel, OS, packages, GNUnet and
    compiler versions); the rest of the file's setup (CPU flags, limits, tools, build) is
    left out. ``rows``: every row, in the file's order.
    """

    path: str
    size: int = Field(ge=0)
    mtime_ns: int
    ctime_ns: int
    inode: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    run_id: str
    metric: Metric
    target: TargetInfo
    execution: Execution | None = None
    reference: Reference | None = None
    harness_version: str
    started_at: str
    setup: Setup
    rows: tuple[IndexedRow, ...]

    @property
    def emulated(self) -> bool:
        """True when measured under QEMU user emulation (as :attr:`Result.emulated`)."""
        return self.execution is not None and self.execution.emulated

    @property
    def repeat_index(self) -> int:
        """Which container run of ``--repeat K`` this file is (1 for the first or only)."""
        return self.execution.repeat_index if self.execution else 1


def indexed_row(row: Row) -> IndexedRow:
    """``row`` as the index keeps it."""
    return IndexedRow(
        suite=row.suite,
        scheme=row.scheme,
        key_bits=row.key_bits,
        operation=row.operation,
        ops_per_block=row.ops_per_block,
        processes=row.processes,
        param=row.param,
        device=row.device,
        bytes_per_op=row.bytes_per_op,
        valid=row.valid,
        invalid_reason=row.invalid_reason,
        samples_ns=_text(row.samples_ns) or "",
        instructions=_text(row.instructions),
        printed=row.printed,
    )


def entry_of(
    result: Result, path: str, st: os.stat_result, sha256: str, digest: str | None = None
) -> IndexEntry:
    """The index entry of ``result``, read from the file ``path`` (relative to the store)
    whose identity ``st`` gave and whose bytes hash to ``sha256``; ``digest``: its
    integrity digest, checked (None: it has none)."""
    setup = result.harness.setup
    return IndexEntry(
        path=path,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        ctime_ns=st.st_ctime_ns,
        inode=st.st_ino,
        sha256=sha256,
        digest=digest,
        run_id=result.run_id,
        metric=result.metric,
        target=result.target,
        execution=result.execution,
        reference=result.reference,
        harness_version=result.harness.harness_version,
        started_at=result.harness.started_at,
        setup=Setup(
            cpu_model=setup.cpu_model,
            cores=setup.cores,
            machine=setup.machine,
            kernel=setup.kernel,
            os=setup.os,
            packages=setup.packages,
            gnunet_version=setup.gnunet_version,
            gcc_version=setup.gcc_version,
        ),
        rows=tuple(indexed_row(r) for r in result.harness.rows),
    )


def read_entry(root: Path, relative: str) -> tuple[IndexEntry, Result]:
    """Read the results file ``root/relative`` whole (:func:`archbench.result.load`'s
    checks, its integrity digest included) and make its entry; returns the entry and the
    result.

    The identity recorded is the one ``fstat`` gave before the bytes were read: a file
    replaced while it was read gets an entry that no longer matches it, so the next
    reader reads it again.

    Raises:
        ResultsError: as :func:`archbench.result.load`.
    """
    path = root / relative
    try:
        before = path.stat()
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read the results file: {exc.strerror}") from exc
    data = read_bytes(path, ResultsError, "the results file", MAX_RESULT_BYTES)
    result, digest = parse_checked(data, path)
    return entry_of(result, relative, before, hashlib.sha256(data).hexdigest(), digest), result


class _IndexFile(Frozen):
    format: Literal["archbench-index"]
    version: Literal[2]
    files: dict[str, IndexEntry]


_ADAPTER: Final = TypeAdapter(_IndexFile)


def read_index(root: Path) -> tuple[dict[str, IndexEntry], str | None]:
    """The entries of ``root``'s index by relative path, and why it was ignored (None:
    read, or there is none yet).

    Never raises: an index that cannot be read is no index (it is rebuilt).
    """
    path = root / INDEX_FILE
    if not path.exists():
        return {}, None
    try:
        data = read_bytes(path, ResultsError, "the index", MAX_INDEX_BYTES)
        index = _ADAPTER.validate_json(data)
    except ResultsError as exc:
        return {}, f"{exc}; rebuilding it"
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][:4])
        return {}, f"{path}: unreadable index ({first['msg']} at {where}); rebuilding it"
    return {name: entry for name, entry in index.files.items() if entry.path == name}, None


def write_index(root: Path, entries: dict[str, IndexEntry]) -> str | None:
    """Write ``entries`` as ``root``'s index, atomically; why it could not be (None: written).

    A results folder archbench may read but not write keeps no index: the report goes on
    reading every file, and says so.
    """
    index = _IndexFile.model_construct(
        format=INDEX_FORMAT, version=INDEX_VERSION, files=dict(sorted(entries.items()))
    )
    try:
        write_atomic(root / INDEX_FILE, _ADAPTER.dump_json(index) + b"\n")
    except OSError as exc:
        return (
            f"{root / INDEX_FILE}: cannot write the index ({exc.strerror or exc}); every "
            "results file is read again each time"
        )
    return None
