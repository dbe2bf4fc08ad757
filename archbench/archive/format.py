"""The archive format of ``invoke archive``: a run, its images and report in one directory.

An archive is a directory (or an uncompressed tar of one) laid out as::

    manifest.json                      format "archbench-archive", version 1
    matrix.yml                         the matrix as the run read it
    results/<run-id>/run.json          the run manifest (matrix, targets, parameters)
    results/<run-id>/<target>.json     the results, and logs/ beside them
    report/appendix.{tex,md}, ...      the report rendered from those results
    images/<arch>-<id>.tar             each image the run used, as ``docker save`` wrote it

``manifest.json`` lists every other file with its size and sha256, and each
image with its id, tags and RepoDigests. Reading an archive trusts nothing
in it: every path is checked against a strict grammar (relative, no ``..``,
no absolute path, no symlink, stays inside the archive) before it is opened,
and every file's size and sha256 are checked before anything is loaded.

An archive travels as one uncompressed tar (:func:`write_tar`, ``invoke archive
--tar``); :func:`extract_tar` unpacks one for ``invoke bench --from-archive
X.tar`` after checking every member's name against the same path grammar and
refusing links and special files. The unpacked directory is then verified like
any other archive.

This module is pure: it never imports ``docker`` (:mod:`archbench.hosts.archives`
does the engine's part).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import secrets
import shutil
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from archbench.errors import ArchiveError
from archbench.inputs import decode, load_json, location, problem, quote, read_bytes
from archbench.result import ArchiveRef, Result

ARCHIVE_FORMAT: Final = "archbench-archive"
ARCHIVE_VERSION: Final = 1
MANIFEST_FILE: Final = "manifest.json"
MAX_MANIFEST_BYTES: Final = 16 * 1024 * 1024
"""A manifest larger than this is refused before it is parsed (16 MiB)."""

_COMPONENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}$")
_MAX_PARTS = 8
_SHA256 = r"^[0-9a-f]{64}$"
_CHUNK = 1024 * 1024
_RESULT_NAME = re.compile(r"(?P<target>[^/]+?)(?:\.instructions)?(?:\.repeat-[0-9]+)?\.json")
"""A results file of a run folder (:meth:`archbench.result.ResultStore.path_for`)."""


def check_relpath(path: object, what: str = "path") -> PurePosixPath:
    """Validate one path taken from an archive and return it as a relative POSIX path.

    The grammar: 1 to 8 components separated by ``/``, each matching
    ``[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}`` (so no empty component, no ``.``
    or ``..``, no leading ``-``, no backslash, NUL or drive letter), no
    leading or trailing ``/``.

    Raises:
        ArchiveError: ``path`` is not a string or breaks the grammar; the
            message names ``what`` and the value.
    """
    if not isinstance(path, str):
        raise ArchiveError(f"{what}: expected a relative path string, got {type(path).__name__}")
    parts = path.split("/")
    if path.startswith("/"):
        raise ArchiveError(f"{what}: {path!r} is absolute; archive paths are relative")
    if not 1 <= len(parts) <= _MAX_PARTS:
        raise ArchiveError(f"{what}: {path!r} has more than {_MAX_PARTS} components")
    for part in parts:
        if part in ("", ".", ".."):
            raise ArchiveError(
                f"{what}: {path!r} has an empty, '.' or '..' component; archive paths "
                "name files below the archive directory only"
            )
        if not _COMPONENT.match(part):
            raise ArchiveError(
                f"{what}: {path!r}: component {part!r} is not allowed (letters, digits and "
                "._+- only, not starting with . - or +, at most 128 characters)"
            )
    return PurePosixPath(path)


def resolve_inside(root: Path, path: str, what: str = "path") -> Path:
    """The file ``path`` (from an archive) names below ``root``, after checking it stays there.

    ``path`` must pass :func:`check_relpath`; then no existing component of
    it may be a symbolic link, and the resolved path must lie inside the
    resolved ``root``.

    Raises:
        ArchiveError: the path breaks the grammar, goes through a symlink or
            leaves ``root``.
    """
    rel = check_relpath(path, what)
    base = root.resolve()
    current = base
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise ArchiveError(f"{what}: {path!r} goes through a symbolic link ({current})")
    resolved = current.resolve()
    if not resolved.is_relative_to(base) or resolved == base:
        raise ArchiveError(f"{what}: {path!r} leaves the archive directory {root}")
    return resolved


def sha256_file(path: Path) -> str:
    """sha256 (hex) of a file, read in 1 MiB chunks (images are hundreds of MB).

    Raises:
        OSError: the file cannot be read.
    """
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _path_field(value: object) -> str:
    try:
        return str(check_relpath(value))
    except ArchiveError as exc:
        raise ValueError(str(exc).removeprefix("path: ")) from exc


class FileEntry(_Strict):
    """One file of the archive: relative path, size in bytes, sha256 (hex)."""

    path: str
    size: int = Field(ge=0)
    sha256: str = Field(pattern=_SHA256)

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: object) -> str:
        return _path_field(value)


class ImageEntry(_Strict):
    """One image the run used, as ``docker save`` wrote it to ``file``.

    ``id`` is the engine's image id (``sha256:`` + 64 hex digits, the hash
    of the image config, so the same after ``docker load`` on any engine);
    ``tag`` is the name saved in the tar and restored by loading it;
    ``repo_digests`` are registry digests where the image was pushed or
    pulled (none for local builds); ``targets`` are the run's targets that
    ran in it.
    """

    id: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    tag: str = Field(pattern=r"^[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
    tags: tuple[str, ...] = ()
    repo_digests: tuple[str, ...] = ()
    arch: str
    platform: str
    base_image: str | None = None
    base_built: str | None = None
    host: str
    """The engine it was saved from (``local`` or a matrix host name)."""
    file: str
    targets: tuple[str, ...] = Field(min_length=1)
    gnunet_source: dict[str, str | bool | None] | None = None
    """The GNUnet source its libgnunetutil was built from (``Execution.gnunet_source``:
    kind, location, ref, commit, sha256, tree hash, dirty, version); None: Debian's
    package. A rerun from the archive records it again, since nothing is rebuilt."""

    @field_validator("file", mode="before")
    @classmethod
    def _file(cls, value: object) -> str:
        return _path_field(value)


class ArchiveManifest(_Strict):
    """``manifest.json``: format ``archbench-archive`` version 1.

    ``files`` lists every file of the archive but the manifest itself;
    ``images`` refer to entries of ``files``. ``targets`` maps each archived
    target to the image id it ran in.
    """

    format: Literal["archbench-archive"] = ARCHIVE_FORMAT
    version: Literal[1] = ARCHIVE_VERSION
    archive_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    created_at: str
    archbench_version: str
    run_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    run_manifest: str
    """Path of the run's ``run.json`` (matrix as it ran, targets, parameters)."""
    images: tuple[ImageEntry, ...] = Field(min_length=1)
    files: tuple[FileEntry, ...] = Field(min_length=1)

    @field_validator("run_manifest", mode="before")
    @classmethod
    def _run_manifest(cls, value: object) -> str:
        return _path_field(value)

    @model_validator(mode="after")
    def _consistent(self) -> ArchiveManifest:
        """The manifest as a whole: one run, every file once, every reference present.

        ``run_manifest`` is the ``run.json`` of ``run_id``, every file under ``results/``
        is that run's (an archive holds one run), each image has a file of its own, each
        target one image, and each target its results (``<target>.json``, or a counting
        or repeat's file, :data:`_RESULT_NAME`); what is missing is named, all at once.
        """
        paths = [f.path for f in self.files]
        dupes = sorted({p for p in paths if paths.count(p) > 1})
        if dupes:
            raise ValueError(f"files: listed twice: {_names(dupes)}")
        if MANIFEST_FILE in paths:
            raise ValueError(f"files: {MANIFEST_FILE} cannot list itself")
        expected = f"results/{self.run_id}/run.json"
        if self.run_manifest != expected:
            raise ValueError(
                f"run_manifest: {quote(self.run_manifest)} is not the run manifest of run "
                f"{self.run_id} ({expected}); an archive holds one run and its run.json"
            )
        others = sorted(
            {p.split("/")[1] for p in paths if p.startswith("results/")} - {self.run_id}
        )
        if others:
            raise ValueError(
                f"files: results of run(s) {_names(others)} beside run {self.run_id}; "
                "an archive holds one run (archive each run on its own)"
            )
        known = set(paths)
        needed = [self.run_manifest, *(i.file for i in self.images)]
        missing = [p for p in dict.fromkeys(needed) if p not in known]
        if missing:
            raise ValueError(f"referred to but not listed in 'files': {_names(missing)}")
        ids = [i.id for i in self.images]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"images: listed twice: {_names(twice)}")
        image_files = [i.file for i in self.images]
        shared = sorted({f for f in image_files if image_files.count(f) > 1})
        if shared:
            raise ValueError(f"images: one file for two images: {_names(shared)}")
        if self.run_manifest in image_files:
            raise ValueError(f"images: {quote(self.run_manifest)} is the run manifest, no image")
        seen: set[str] = set()
        for image in self.images:
            for t in image.targets:
                if t in seen:
                    raise ValueError(f"images: target {quote(t)} is listed under two images")
                seen.add(t)
        run_dir = f"results/{self.run_id}/"
        with_results = {
            m.group("target")
            for p in paths
            if p.startswith(run_dir) and (m := _RESULT_NAME.fullmatch(p[len(run_dir) :]))
        }
        no_results = sorted(seen - with_results)
        if no_results:
            raise ValueError(
                f"images: target(s) {_names(no_results)} ran in an image but have no results "
                f"in 'files' ({run_dir}<target>.json); the archive is incomplete"
            )
        return self

    @property
    def targets(self) -> dict[str, ImageEntry]:
        """Target name -> the image it ran in."""
        return {t: image for image in self.images for t in image.targets}

    def ref(self, manifest_sha256: str) -> ArchiveRef:
        """What a rerun records about this archive (see :class:`ArchiveRef`)."""
        return ArchiveRef(
            archive_id=self.archive_id,
            manifest_sha256=manifest_sha256,
            source_run_id=self.run_id,
        )


@dataclass(frozen=True)
class VerifiedArchive:
    """An archive directory whose manifest and every listed file checked out."""

    root: Path
    manifest: ArchiveManifest
    manifest_sha256: str

    @property
    def ref(self) -> ArchiveRef:
        """The :class:`ArchiveRef` new results record."""
        return self.manifest.ref(self.manifest_sha256)

    def path(self, rel: str) -> Path:
        """The file ``rel`` (a path from the manifest) inside the archive, checked again."""
        return resolve_inside(self.root, rel)


def _names(names: list[str], at_most: int = 10) -> str:
    """``names`` quoted and comma-separated, cut after ``at_most`` with how many more."""
    shown = ", ".join(quote(n, 80) for n in names[:at_most])
    return shown + (f" and {len(names) - at_most} more" if len(names) > at_most else "")


def parse_manifest(data: bytes, source: str) -> ArchiveManifest:
    """Parse and validate ``manifest.json`` bytes with the bounded, strict JSON loader.

    Raises:
        ArchiveError: not UTF-8 or JSON, nested deeper than
            :data:`archbench.inputs.bounded.MAX_DEPTH`, an integer of thousands of
            digits, a duplicate key, another format, an unsupported version (the
            message says which this archbench reads), or a field or path that
            breaks the format; the message names ``source`` and the key.
    """
    raw = load_json(decode(data, source, ArchiveError, "the manifest"), source, ArchiveError)
    if not isinstance(raw, dict):
        raise ArchiveError(f"{source}: expected a JSON object, got {type(raw).__name__}")
    if raw.get("format") != ARCHIVE_FORMAT:
        raise ArchiveError(
            f"{source}: 'format' is {quote(raw.get('format'))}, expected {ARCHIVE_FORMAT!r}; "
            "is this a directory written by 'invoke archive'?"
        )
    if raw.get("version") != ARCHIVE_VERSION:
        raise ArchiveError(
            f"{source}: archive version {quote(raw.get('version'))} is not supported (this "
            f"archbench reads version {ARCHIVE_VERSION}); use the archbench release that wrote it"
        )
    try:
        return ArchiveManifest.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = location(first["loc"]) or "<document>"
        raise ArchiveError(f"{source}: at '{where}': {problem(first)}") from exc


def verify(root: Path, *, check_hashes: bool = True) -> VerifiedArchive:
    """Check an archive directory: manifest, paths, then each file's size and sha256.

    With ``check_hashes`` false only sizes are compared (a quick look; the
    rerun always checks hashes).

    Raises:
        ArchiveError: ``root`` is not an archive directory, the manifest is
            invalid, a listed file is missing, not a regular file, or its size
            or sha256 differ (the message names the file and both values).
    """
    if not root.is_dir():
        raise ArchiveError(
            f"{root}: not a directory; pass the directory 'invoke archive' wrote (or its .tar file)"
        )
    manifest_path = root / MANIFEST_FILE
    if not manifest_path.is_file() or manifest_path.is_symlink():
        raise ArchiveError(
            f"{root}: no {MANIFEST_FILE}; not an archive written by 'invoke archive'"
        )
    data = read_bytes(manifest_path, ArchiveError, "the archive manifest", MAX_MANIFEST_BYTES)
    manifest = parse_manifest(data, str(manifest_path))
    for entry in manifest.files:
        path = resolve_inside(root, entry.path, f"{manifest_path}: files")
        if not path.is_file():
            raise ArchiveError(f"{root}: {entry.path} is listed in the manifest but missing")
        size = path.stat().st_size
        if size != entry.size:
            raise ArchiveError(
                f"{root}: {entry.path} has {size} bytes, the manifest says {entry.size}; "
                "the archive is incomplete or damaged (copy it again)"
            )
        if check_hashes:
            digest = sha256_file(path)
            if digest != entry.sha256:
                raise ArchiveError(
                    f"{root}: {entry.path} has sha256 {digest}, the manifest says "
                    f"{entry.sha256}; the archive is damaged or was changed"
                )
    return VerifiedArchive(root, manifest, hashlib.sha256(data).hexdigest())


def list_files(root: Path, hashed: dict[str, FileEntry] | None = None) -> list[FileEntry]:
    """Every regular file below ``root`` but the manifest, sorted, with size and sha256.

    ``hashed`` gives entries already computed (images hashed while they
    were streamed), keyed by path, so they are not read twice.

    Raises:
        ArchiveError: a file or directory name breaks :func:`check_relpath`,
            or a symlink or special file is found.
    """
    hashed = hashed or {}
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise ArchiveError(f"{path}: archives hold regular files and directories only")
        check_relpath(rel, str(path))
        if path.is_dir() or rel == MANIFEST_FILE:
            continue
        out.append(
            hashed.get(rel)
            or FileEntry(path=rel, size=path.stat().st_size, sha256=sha256_file(path))
        )
    return out


@dataclass(frozen=True)
class ImageUse:
    """One image a run used, and the targets that ran in it (from the run's results)."""

    image_id: str
    tag: str
    arch: str
    platform: str
    host: str
    """The engine that ran it: ``local`` or a matrix host name."""
    base_image: str | None
    base_built: str | None
    targets: tuple[str, ...]
    gnunet_source: dict[str, str | bool | None] | None = None
    """The source of the image's libgnunetutil (``Execution.gnunet_source``), None: Debian's."""


def images_used(results: Iterable[Result]) -> list[ImageUse]:
    """The images measured ``results`` ran in, by first appearance, targets grouped.

    Reference results (published or imported figures) ran in no image and
    are passed over. The host comes from ``Execution.docker_host``
    (``local`` or ``name (address)``).

    Raises:
        ArchiveError: one image id was run on two hosts (an archive saves
            each image once, from one engine).
    """
    found: dict[str, ImageUse] = {}
    for r in results:
        ex = r.execution
        if ex is None:
            continue
        host = ex.docker_host.split(" ", 1)[0]
        use = found.get(ex.image_id)
        if use is None:
            found[ex.image_id] = ImageUse(
                ex.image_id,
                ex.image_tag,
                r.target.arch,
                r.target.platform,
                host,
                ex.base_image,
                ex.base_built,
                (r.target.name,),
                ex.gnunet_source,
            )
            continue
        if use.host != host:
            raise ArchiveError(
                f"image {ex.image_id} ran on hosts {use.host} and {host}; archive each "
                "host's targets from a run of their own"
            )
        if r.target.name not in use.targets:
            found[ex.image_id] = dataclasses.replace(use, targets=(*use.targets, r.target.name))
    return list(found.values())


@dataclass(frozen=True)
class ArchivedImage:
    """The image a target runs in for ``--from-archive``, and the archive it came from."""

    entry: ImageEntry
    ref: ArchiveRef


def write_tar(root: Path, out: Path) -> None:
    """Pack the archive directory ``root`` into the uncompressed tar ``out``.

    ``manifest.json`` comes first, then the other files in sorted order, all
    below one top directory named like ``out`` without ``.tar``. Owners are
    dropped (uid/gid 0, no names) and modes normalised (0644/0755).

    Raises:
        ArchiveError: ``out`` exists already.
        OSError: a file cannot be read or ``out`` written.
    """
    if out.exists():
        raise ArchiveError(f"{out} exists already; choose another --out or move it away")
    top = out.name.removesuffix(".tar")
    check_relpath(top, "tar name")
    tmp = out.with_name(f".{out.name}.partial")
    names = [MANIFEST_FILE, *(e.path for e in list_files(root))]
    try:
        with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
            for name in _with_dirs(names):
                src = root / name
                info = tar.gettarinfo(str(src), arcname=f"{top}/{name}")
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mode = 0o755 if src.is_dir() else 0o644
                if src.is_dir():
                    tar.addfile(info)
                else:
                    with src.open("rb") as fh:
                        tar.addfile(info, fh)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _with_dirs(names: Iterable[str]) -> list[str]:
    """``names`` with each parent directory inserted before its first file."""
    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        parts = name.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in seen:
                seen.add(d)
                out.append(d)
        out.append(name)
    return out


def extract_tar(tar_path: Path, dest_parent: Path) -> Path:
    """Unpack an archive tar written by :func:`write_tar` below ``dest_parent``; return its root.

    Trusts nothing in the tar. Before a byte is written: every member must be a
    regular file (not sparse) or a directory below one top directory, named once,
    with a name passing :func:`check_relpath`, never a file and a directory of
    one name; links, devices and anything else are refused. The top directory's
    ``manifest.json`` is read first (bounded, :func:`parse_manifest`); every other
    file member must be listed there with the size its header declares, and the
    sum of those sizes must fit on the disk. While unpacking, no member writes
    more than the manifest's size for it, and a tar that ends before its data
    does, a full disk or any other failure removes what was unpacked.

    Every call unpacks afresh into ``dest_parent/<top>``: a directory left there by
    an earlier unpack (perhaps of another tar with the same top directory) is
    replaced once the new one is whole, so what the caller verifies is this tar's
    content. ``dest_parent`` is archbench's scratch space (the work directory).

    Raises:
        ArchiveError: not a tar, a member breaks the rules above, the disk has
            no room, or the tar is truncated; the message names the tar and member.
    """
    try:
        tar = tarfile.open(tar_path, "r:")  # noqa: SIM115  # closed by the with below
    except (tarfile.TarError, OSError) as exc:
        raise ArchiveError(f"{tar_path}: not an uncompressed tar archive: {exc}") from exc
    with tar:
        try:
            members = tar.getmembers()
        except (tarfile.TarError, OSError) as exc:
            raise ArchiveError(f"{tar_path}: a damaged tar header: {exc}") from exc
        if not members:
            raise ArchiveError(f"{tar_path}: empty tar")
        top = members[0].name.split("/")[0]
        check_relpath(top, f"{tar_path}: top directory")
        sizes = _member_sizes(tar, tar_path, top, members)
        dest = dest_parent / top
        dest_parent.mkdir(parents=True, exist_ok=True)
        _check_room(tar_path, dest_parent, sum(sizes.values()))
        # Unpacked beside its place and renamed when whole: an interrupted
        # unpack never looks like an archive.
        tmp = Path(tempfile.mkdtemp(prefix=f".{top}.partial-", dir=dest_parent))
        try:
            for m in members:
                rel = PurePosixPath(m.name).parts[1:]
                target = tmp.joinpath(*rel)
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                _unpack_member(tar, m, target, sizes["/".join(rel)], tar_path)
            _replace_dir(tmp, dest)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return dest


def _member_sizes(
    tar: tarfile.TarFile, tar_path: Path, top: str, members: list[tarfile.TarInfo]
) -> dict[str, int]:
    """Each file member's path below ``top`` -> its size, checked against the manifest.

    Raises:
        ArchiveError: a member that breaks the rules of :func:`extract_tar`.
    """
    kinds: dict[str, str] = {}
    for m in members:
        rel = check_relpath(m.name, f"{tar_path}: member")
        if rel.parts[0] != top:
            raise ArchiveError(
                f"{tar_path}: member {m.name!r} is outside the top directory {top!r}"
            )
        if not (m.isfile() or m.isdir()):
            raise ArchiveError(f"{tar_path}: member {m.name!r} is a link or special file; refused")
        if m.issparse():
            raise ArchiveError(
                f"{tar_path}: member {m.name!r} is a sparse file (it would expand to "
                f"{m.size} bytes); 'invoke archive' writes none, refused"
            )
        kind = "directory" if m.isdir() else "file"
        earlier = kinds.get(str(rel))
        if earlier is not None and not (earlier == kind == "directory"):
            raise ArchiveError(
                f"{tar_path}: member {m.name!r} is named twice (a {earlier}, then a {kind}); "
                "one of them would silently replace the other"
            )
        for parent in rel.parents:
            if kinds.get(str(parent)) == "file":
                raise ArchiveError(
                    f"{tar_path}: member {m.name!r} lies below {str(parent)!r}, which is a file"
                )
        kinds[str(rel)] = kind
    manifest_name = f"{top}/{MANIFEST_FILE}"
    manifest_member = next((m for m in members if m.name == manifest_name and m.isfile()), None)
    if manifest_member is None:
        raise ArchiveError(f"{tar_path}: no {manifest_name}; not an archive from 'invoke archive'")
    if manifest_member.size > MAX_MANIFEST_BYTES:
        raise ArchiveError(
            f"{tar_path}: {manifest_name} declares {manifest_member.size} bytes, more than "
            f"{MAX_MANIFEST_BYTES}; refused"
        )
    manifest = parse_manifest(
        _read_member(tar, manifest_member, tar_path), f"{tar_path}: {manifest_name}"
    )
    listed = {f.path: f.size for f in manifest.files}
    sizes: dict[str, int] = {MANIFEST_FILE: manifest_member.size}
    for m in members:
        if not m.isfile() or m is manifest_member:
            continue
        inner = "/".join(PurePosixPath(m.name).parts[1:])
        if inner not in listed:
            raise ArchiveError(
                f"{tar_path}: member {m.name!r} is not listed in {manifest_name}; refused"
            )
        if m.size != listed[inner]:
            raise ArchiveError(
                f"{tar_path}: member {m.name!r} declares {m.size} bytes, {manifest_name} "
                f"says {listed[inner]}; the tar is damaged or was changed"
            )
        sizes[inner] = m.size
    return sizes


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, tar_path: Path) -> bytes:
    try:
        src = tar.extractfile(member)
        if src is None:
            raise ArchiveError(f"{tar_path}: member {member.name!r} has no data")
        with src:
            data = src.read(member.size + 1)
    except (tarfile.TarError, OSError) as exc:
        raise ArchiveError(f"{tar_path}: member {member.name!r} cannot be read: {exc}") from exc
    if len(data) != member.size:
        raise ArchiveError(
            f"{tar_path}: member {member.name!r} declares {member.size} bytes but "
            f"{len(data)} follow; the tar is truncated"
        )
    return data


def _check_room(tar_path: Path, dest_parent: Path, needed: int) -> None:
    try:
        free = shutil.disk_usage(dest_parent).free
    except OSError:
        return
    if needed > free:
        raise ArchiveError(
            f"{tar_path}: unpacking needs {needed / 1e6:.1f} MB, {dest_parent} has "
            f"{free / 1e6:.1f} MB free; free some space or pass a work directory elsewhere"
        )


def _unpack_member(
    tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, size: int, tar_path: Path
) -> None:
    """Copy ``member`` to the new file ``target``, never more than ``size`` bytes.

    Raises:
        ArchiveError: the member holds more or fewer bytes than ``size`` (a
            truncated tar), or ``target`` cannot be written (a full disk).
    """
    written = 0
    try:
        src = tar.extractfile(member)
        if src is None:
            raise ArchiveError(f"{tar_path}: member {member.name!r} has no data")
        with src, target.open("xb") as out:
            while chunk := src.read(min(_CHUNK, size + 1 - written)):
                written += len(chunk)
                if written > size:
                    raise ArchiveError(
                        f"{tar_path}: member {member.name!r} holds more than the {size} bytes "
                        "its manifest lists; refused"
                    )
                out.write(chunk)
    except tarfile.TarError as exc:
        raise ArchiveError(
            f"{tar_path}: member {member.name!r}: {exc} (the tar is truncated or damaged)"
        ) from exc
    except OSError as exc:
        raise ArchiveError(
            f"{tar_path}: cannot unpack {member.name!r} to {target.parent}: "
            f"{exc.strerror or exc}; nothing of it was kept"
        ) from exc
    if written != size:
        raise ArchiveError(
            f"{tar_path}: member {member.name!r} declares {size} bytes but {written} follow; "
            "the tar is truncated"
        )


def _replace_dir(new: Path, dest: Path) -> None:
    """Rename ``new`` to ``dest``; an earlier ``dest`` (a scratch unpack) is removed after."""
    if not dest.exists():
        new.rename(dest)
        return
    old = dest.with_name(f".{dest.name}.old-{secrets.token_hex(3)}")
    dest.rename(old)
    new.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
