"""Write and restore archives through the engine: ``invoke archive`` and ``--from-archive``.

:func:`create_archive` copies a run's manifest, results and logs, has the
caller render its report into the archive (``invoke archive`` renders it with the
same code as ``invoke report``: this package never imports the report stage),
streams each image the run used to disk with ``docker save`` (through the SDK,
hashed on the way, never held in memory) and writes ``manifest.json`` last
(:mod:`archbench.archive` has the format). :func:`open_archive` and
:func:`load_images` are the other side: a reviewer's machine checks the manifest
and every file's sha256, then loads the images (``docker load``) and checks that
each has the archived id, so ``invoke bench --from-archive`` runs exactly the
archived images without bootstrapping or building anything.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import docker
import docker.errors
from pydantic import ValidationError

from archbench import __version__
from archbench.archive import (
    MANIFEST_FILE,
    ArchivedImage,
    ArchiveManifest,
    FileEntry,
    ImageEntry,
    ImageUse,
    VerifiedArchive,
    check_relpath,
    extract_tar,
    images_used,
    list_files,
    verify,
    write_tar,
)
from archbench.errors import ArchiveError, EngineError, MatrixError
from archbench.hosts.engine import connect_host
from archbench.inputs import describe_problems, load_json, quote, read_text
from archbench.matrix import LOCAL_HOST, Matrix, Target, parse
from archbench.platforms import Arch
from archbench.result import MANIFEST_NAME, MAX_RESULT_BYTES, ResultStore, RunManifest

_CHUNK = 4 * 1024 * 1024


@dataclass(frozen=True)
class ImageTransfer:
    """One image saved to or loaded from an archive: bytes on disk and wall time in s."""

    entry: ImageEntry
    size: int
    seconds: float
    loaded: bool = True
    """For loading: False when the engine had the image (same id) already."""


@dataclass(frozen=True)
class ArchiveSummary:
    """What :func:`create` wrote: where, its manifest's sha256, sizes (bytes) and times (s)."""

    path: Path
    archive_id: str
    manifest_sha256: str
    total_bytes: int
    images: tuple[ImageTransfer, ...]
    seconds: float


def _connect_for(run: RunManifest) -> Callable[[str], docker.DockerClient]:
    """Clients to the engines of the run's matrix, by host name, opened once each."""
    m = parse(run.matrix_text, f"{run.matrix_file} (as of run {run.run_id})")
    clients: dict[str, docker.DockerClient] = {}

    def connect(name: str) -> docker.DockerClient:
        if name not in clients:
            if name != LOCAL_HOST and name not in m.hosts:
                raise ArchiveError(
                    f"run {run.run_id}: its results name host {name!r}, "
                    "which its matrix does not define"
                )
            clients[name] = connect_host(m.host(name), name)
        return clients[name]

    return connect


def save_image(
    client: docker.DockerClient, use: ImageUse, root: Path, rel: str
) -> tuple[ImageTransfer, FileEntry]:
    """``docker save`` the image ``use`` names into ``root/rel``, hashing while streaming.

    Returns the transfer and the file's manifest entry (size, sha256), so the
    hundreds of MB are not read again to hash them.

    The tar keeps the tag the run used (``docker load`` restores it). The
    image on the engine must still have the id the results recorded.

    Raises:
        ArchiveError: the image is gone or its tag now names another image.
        EngineError: the engine fails while saving.
    """
    try:
        image = client.images.get(use.image_id)
    except docker.errors.ImageNotFound as exc:
        raise ArchiveError(
            f"image {use.image_id} ({use.tag}, targets {', '.join(use.targets)}) is no longer "
            f"on engine {use.host}; it was removed or rebuilt since the run, so the run "
            "cannot be archived with the image it used"
        ) from exc
    named: str | bool = use.tag if use.tag in image.tags else False
    started = time.monotonic()
    h = hashlib.sha256()
    size = 0
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("xb") as out:
            for chunk in image.save(chunk_size=_CHUNK, named=named):
                out.write(chunk)
                h.update(chunk)
                size += len(chunk)
    except docker.errors.DockerException as exc:
        raise EngineError(f"docker save of {use.image_id} failed: {exc}") from exc
    entry = ImageEntry(
        id=str(image.id),
        tag=use.tag,
        tags=tuple(image.tags),
        repo_digests=tuple(image.attrs.get("RepoDigests") or ()),
        arch=use.arch,
        platform=use.platform,
        base_image=use.base_image,
        base_built=use.base_built,
        host=use.host,
        file=rel,
        targets=use.targets,
        gnunet_source=use.gnunet_source,
    )
    transfer = ImageTransfer(entry, size, time.monotonic() - started)
    return transfer, FileEntry(path=rel, size=size, sha256=h.hexdigest())


def _copy_run(src: Path, dst: Path) -> None:
    """Copy a run's folder (results, logs, ``run.json``): plain files only, no hidden ones,
    each relative path checked against the archive's path grammar.

    Raises:
        ArchiveError: a file name the archive format does not allow.
    """
    for path in sorted(src.rglob("*")):
        if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
            rel = path.relative_to(src).as_posix()
            check_relpath(rel, str(path))
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dst / rel)


def _save_images(
    uses: Sequence[ImageUse],
    connect: Callable[[str], docker.DockerClient],
    root: Path,
    on_line: Callable[[str], None],
) -> tuple[list[ImageTransfer], dict[str, FileEntry]]:
    """``docker save`` every image the run used into ``root/images/``; the transfers and
    each tar's manifest entry by its relative path (:func:`save_image`).

    Raises:
        ArchiveError: an image is gone or its tag now names another image.
        EngineError: an engine cannot be reached or fails while saving.
    """
    transfers = []
    hashed: dict[str, FileEntry] = {}
    for use in uses:
        rel = f"images/{use.arch}-{use.image_id.removeprefix('sha256:')[:12]}.tar"
        on_line(f"saving {use.tag} ({use.image_id[:19]}) for {', '.join(use.targets)}")
        t, hashed[rel] = save_image(connect(use.host), use, root, rel)
        on_line(f"  {t.size / 1e6:.0f} MB in {t.seconds:.1f} s")
        transfers.append(t)
    return transfers, hashed


def _write_manifest(
    root: Path, run_id: str, transfers: Sequence[ImageTransfer], files: Sequence[FileEntry]
) -> tuple[ArchiveManifest, bytes]:
    """Write ``manifest.json`` (last: it lists every other file); the manifest and its bytes."""
    manifest = ArchiveManifest(
        archive_id=f"{run_id}-{secrets.token_hex(4)}",
        created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        archbench_version=__version__,
        run_id=run_id,
        run_manifest=f"results/{run_id}/{MANIFEST_NAME}",
        images=tuple(t.entry for t in transfers),
        files=tuple(files),
    )
    data = (manifest.model_dump_json(indent=2) + "\n").encode()
    (root / MANIFEST_FILE).write_bytes(data)
    return manifest, data


def _size(path: Path) -> int:
    """Bytes of a file (the tar), or of every file below a directory."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def create_archive(
    store: ResultStore,
    run_id: str,
    out: Path,
    *,
    render: Callable[[ResultStore, str, Path], None],
    tar: bool = False,
    connect: Callable[[str], docker.DockerClient] | None = None,
    on_line: Callable[[str], None] = print,
) -> ArchiveSummary:
    """Archive run ``run_id`` of ``store`` into the new directory ``out`` (or ``out.tar``).

    Written first into a hidden sibling directory and renamed when complete,
    so ``out`` is either absent or a whole archive. ``render(copied, run_id,
    report_dir)`` writes the run's report into ``report_dir`` from ``copied``, the
    archive's own copy of the results (``invoke archive`` passes the report
    stage's renderer). ``connect`` opens a client by host name (default: the
    engines of the run's matrix).

    Raises:
        MatrixError: ``run_id`` is not a run id (a refused command-line value).
        ResultsError: no such run, or its manifest is unreadable.
        ArchiveError: ``out`` exists, the run has no measured results, or an
            image it used is gone.
        EngineError: an engine cannot be reached or fails while saving.
    """
    started = time.monotonic()
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", run_id):
        raise MatrixError(
            f"RUN_ID: {quote(run_id)} is not a run id (letters, digits and ._- only, e.g. "
            "20261201T090000Z-1a2b3c: a directory name under the results directory)"
        )
    if not (store.root / run_id / MANIFEST_NAME).is_file():
        known = ", ".join(store.runs()[-5:]) or "none"
        raise ArchiveError(
            f"no run {quote(run_id)} with a run manifest in {store.root} (latest runs: {known}); "
            "pass --results DIR if it is stored elsewhere"
        )
    run = store.load_manifest(run_id)
    final = out.with_name(out.name + ".tar") if tar else out
    if final.exists():
        raise ArchiveError(f"{final} exists already; choose another --out or move it away")
    check_relpath(out.name, "--out (its last component)")
    results, failures = store.load_all([run_id], merge=False)
    uses = images_used(results)
    if not uses:
        raise ArchiveError(
            f"run {run_id} has no measured results (only failures or imported figures); "
            "nothing to archive"
        )
    connect = connect or _connect_for(run)
    tmp = out.with_name(f".{out.name}.partial-{secrets.token_hex(3)}")
    tmp.mkdir(parents=True)
    try:
        _copy_run(store.root / run_id, tmp / "results" / run_id)
        (tmp / "matrix.yml").write_text(run.matrix_text, encoding="utf-8")
        render(ResultStore(tmp / "results"), run_id, tmp / "report")
        transfers, hashed = _save_images(uses, connect, tmp, on_line)
        manifest, data = _write_manifest(tmp, run_id, transfers, list_files(tmp, hashed))
        if tar:
            write_tar(tmp, final)
            shutil.rmtree(tmp)
        else:
            tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for f in failures:
        on_line(f"warning: not loadable, archived as is: {f.message}")
    return ArchiveSummary(
        path=final,
        archive_id=manifest.archive_id,
        manifest_sha256=hashlib.sha256(data).hexdigest(),
        total_bytes=_size(final),
        images=tuple(transfers),
        seconds=time.monotonic() - started,
    )


def open_archive(path: Path, work_dir: Path) -> VerifiedArchive:
    """The verified archive at ``path``: a directory, or a tar unpacked below ``work_dir``.

    Raises:
        ArchiveError: not an archive, unsafe tar members, or a file whose
            size or sha256 differs from the manifest.
    """
    root = extract_tar(path, work_dir / "from-archive") if path.is_file() else path
    return verify(root)


def run_manifest(arc: VerifiedArchive) -> RunManifest:
    """The archived run's ``run.json`` (matrix as it ran, targets, parameters).

    Raises:
        ArchiveError: it cannot be read (bounded, strict JSON) or is not a valid run
            manifest; the message names the key, never pydantic's dump.
    """
    path = arc.path(arc.manifest.run_manifest)
    text = read_text(path, ArchiveError, "the run manifest", MAX_RESULT_BYTES)
    data = load_json(text, str(path), ArchiveError)
    try:
        return RunManifest.model_validate(data)
    except ValidationError as exc:
        raise ArchiveError(f"{path}: not a valid run manifest: {describe_problems(exc)}") from exc


def load_images(
    client: docker.DockerClient,
    arc: VerifiedArchive,
    entries: Sequence[ImageEntry],
    on_line: Callable[[str], None] = print,
) -> list[ImageTransfer]:
    """Make each image of ``entries`` present on the engine with its archived id.

    An image the engine has already (same id: the id is the hash of the
    image's config, so equal ids are equal images) is not loaded again.

    Raises:
        ArchiveError: loading gives no image with the archived id.
        EngineError: the engine refuses the tar.
    """
    out = []
    for entry in entries:
        path = arc.path(entry.file)
        size = path.stat().st_size
        try:
            client.images.get(entry.id)
            out.append(ImageTransfer(entry, size, 0.0, loaded=False))
            on_line(f"{entry.tag} ({entry.id[:19]}) is on the engine already")
            continue
        except docker.errors.ImageNotFound:
            pass
        on_line(f"loading {entry.file} ({size / 1e6:.0f} MB) for {', '.join(entry.targets)}")
        started = time.monotonic()
        try:
            with path.open("rb") as fh:
                got = client.images.load(fh)
        except docker.errors.DockerException as exc:
            raise EngineError(f"docker load of {path} failed: {exc}") from exc
        ids = sorted({str(i.id) for i in got})
        if entry.id not in ids:
            raise ArchiveError(
                f"{path}: loading it gave image id(s) {', '.join(ids) or 'none'}, not "
                f"{entry.id} as the manifest records; the archive was not written by "
                "'invoke archive' or was changed"
            )
        seconds = time.monotonic() - started
        on_line(f"  loaded in {seconds:.1f} s")
        out.append(ImageTransfer(entry, size, seconds))
    return out


def check_image(client: docker.DockerClient, entry: ImageEntry) -> str:
    """The id of the archived image on the engine, checked; what a rerun runs.

    Raises:
        ArchiveError: the engine has no image with that id (it must be loaded
            first: :func:`load_images`).
    """
    try:
        image = client.images.get(entry.id)
    except docker.errors.ImageNotFound as exc:
        raise ArchiveError(
            f"image {entry.id} ({entry.tag}) is not on the engine; --from-archive loads it "
            "from the archive before running (was it removed meanwhile?)"
        ) from exc
    if image.id != entry.id:
        raise ArchiveError(f"engine returned image {image.id} for {entry.id}")
    return str(image.id)


def local_targets(
    m: Matrix,
    manifest: ArchiveManifest,
    names: Sequence[str] = (),
    archs: Sequence[Arch] = (),
) -> list[Target]:
    """The archived targets to rerun (all, or those ``names``/``archs`` select), on this engine.

    A rerun runs every target on the engine of the environment: the hosts of
    the archived matrix are the author's, not the reviewer's. Targets
    without an archived image (they failed in the archived run) are left out.

    Raises:
        MatrixError: a name or architecture selects no archived target.
    """
    archived = manifest.targets
    chosen = [t for t in m.select(names, archs) if t.name in archived]
    if not chosen:
        raise MatrixError(
            f"--target/--arch select none of the archived targets: {', '.join(archived)}"
        )
    return [t.model_copy(update={"host": LOCAL_HOST}) for t in chosen]


def resume_targets(run: RunManifest, arc: VerifiedArchive | None, m: Matrix) -> list[Target]:
    """The targets of ``--resume`` of a ``--from-archive`` run, checked against the archive.

    Raises:
        ArchiveError: the run reran an archive and ``--from-archive`` is
            missing or names another archive, or the run did not rerun one.
    """
    if run.archive is None:
        raise ArchiveError(
            f"run {run.run_id} did not rerun an archive; resume it without --from-archive"
        )
    if arc is None:
        raise ArchiveError(
            f"run {run.run_id} reran archive {run.archive.archive_id}; resume it with "
            f"--from-archive DIR (that archive) as well"
        )
    if arc.manifest_sha256 != run.archive.manifest_sha256:
        raise ArchiveError(
            f"{arc.root} is not the archive run {run.run_id} reran (manifest sha256 "
            f"{arc.manifest_sha256}, the run recorded {run.archive.manifest_sha256})"
        )
    return local_targets(m, arc.manifest, run.targets)


def load_for_targets(
    client: docker.DockerClient,
    arc: VerifiedArchive,
    names: Sequence[str],
    on_line: Callable[[str], None] = print,
) -> dict[str, ArchivedImage]:
    """Load the images ``names`` (targets) ran in (:func:`load_images`); target -> image.

    Raises:
        ArchiveError: a target has no image in the archive, or loading does
            not give the archived id.
        EngineError: the engine refuses an image.
    """
    by_target = arc.manifest.targets
    missing = [n for n in names if n not in by_target]
    if missing:
        raise ArchiveError(f"{arc.root}: no image for target(s) {', '.join(missing)}")
    needed = list({by_target[n].id: by_target[n] for n in names}.values())
    load_images(client, arc, needed, on_line)
    return {n: ArchivedImage(by_target[n], arc.ref) for n in names}
