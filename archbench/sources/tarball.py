"""A ``tarball:`` source, and the tar streams every source passes through.

A tarball's sha256 is checked against its pin before anything else; an ``http(s)``
tarball is downloaded first, bounded in size (:data:`MAX_TARBALL_BYTES`), into
``<work>/gnunet-src/tarballs`` (:func:`fetch_tarball`). Its version is its own
``.version``. A tar stream (plain, gzip, bzip2, xz or zstd: a tarball, ``git archive``'s
output) is read to its end and bounded (:func:`tar_members`) and unpacked as untrusted
input (:func:`unpack`: the rules of tarfile's ``data`` filter, PEP 706). A tarball is
checked again as it is unpacked, so what is built is what was keyed.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import http.client
import io
import lzma
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

import zstandard

from archbench.errors import SourceError
from archbench.inputs import quote
from archbench.matrix import GnunetTarball
from archbench.sources.model import (
    MAX_PACKED_BYTES,
    MAX_TREE_BYTES,
    MAX_TREE_FILES,
    MAX_VERSION_BYTES,
    ResolvedSource,
    locked,
    version_of,
)

MAX_TARBALL_BYTES: Final = 512 * 1024 * 1024
"""A downloaded tarball's cap; GNUnet's are 7 MB (``git archive``) to 30 MB (``make dist``)."""
DOWNLOAD_TIMEOUT: Final = 60.0
"""Seconds a download may wait for the server on one read."""


def resolve_tarball(source: GnunetTarball, cache: Path) -> ResolvedSource:
    where = f"tarball {source.tarball}"
    if source.is_url:
        path = fetch_tarball(source.tarball, source.sha256, cache)
    else:
        path = Path(source.tarball)
        if not path.is_file():
            raise SourceError(f"{where}: no such file; give the path of a GNUnet release tarball")
        with path.open("rb") as f:
            verify_sha256(f, source.sha256, where)
    return ResolvedSource(
        kind="tarball",
        location=source.tarball,
        sha256=source.sha256,
        dirty=False,
        version=tarball_version(path, where),
        origin=path,
    )


def verify_sha256(f: IO[bytes], expected: str, where: str) -> None:
    """Hash ``f`` from where it stands to its end and compare with ``expected``.

    Raises:
        SourceError: they differ; the message names both.
    """
    h = hashlib.sha256()
    while chunk := f.read(1024 * 1024):
        h.update(chunk)
    if h.hexdigest() != expected:
        raise SourceError(
            f"{where}: sha256 differs: expected {expected} (as pinned), got {h.hexdigest()}; "
            "nothing was built. Pin the sha256 of the file you mean (sha256sum), or fetch "
            "the file the pin names"
        )


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects to http(s) only (urllib's own also follows ftp)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if not newurl.startswith(("http://", "https://")):
            raise urllib.error.HTTPError(newurl, code, "redirect to a non-http(s) URL", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch_tarball(url: str, sha256: str, cache: Path, max_bytes: int = MAX_TARBALL_BYTES) -> Path:
    """The tarball at ``url`` in ``cache`` (named by its sha256), downloaded if not there.

    At most ``max_bytes`` are read; the file is checked against ``sha256`` before it
    takes its name, so a cached file is always a checked one.

    Raises:
        SourceError: the download fails, is larger than ``max_bytes``, or its sha256
            differs (naming both).
    """
    where = f"tarball {url}"
    final = cache / f"{sha256}.tarball"
    with locked(cache / f"{sha256}.lock"):
        if final.is_file():
            with final.open("rb") as f:
                verify_sha256(f, sha256, f"{where} (cached as {final})")
            return final
        cache.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=".download-", dir=cache)
        try:
            with os.fdopen(fd, "w+b") as out:
                _download(url, out, max_bytes, where)
                out.seek(0)
                verify_sha256(out, sha256, where)
            os.replace(partial, final)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)
    return final


def _download(url: str, out: IO[bytes], max_bytes: int, where: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"not an http(s) URL: {quote(url)}")
    opener = urllib.request.build_opener(_HttpOnlyRedirects())
    request = urllib.request.Request(url, headers={"User-Agent": "archbench"})  # noqa: S310  # http(s), checked above
    try:
        with opener.open(request, timeout=DOWNLOAD_TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) > max_bytes:
                raise SourceError(
                    f"{where}: the server announces {int(length)} bytes, more than the "
                    f"{max_bytes} a GNUnet tarball may have"
                )
            total = 0
            while chunk := response.read(1024 * 1024):
                total += len(chunk)
                if total > max_bytes:
                    raise SourceError(
                        f"{where}: more than {max_bytes} bytes; that is no GNUnet tarball"
                    )
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise SourceError(f"{where}: the download failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SourceError(f"{where}: the download failed: {quote(str(reason), 200)}") from None


def tarball_version(path: Path, where: str) -> str:
    """The ``.version`` at the top of the tarball (or of its one top folder), checked.

    The whole archive is read first, streaming (:func:`tar_members`): a damaged one is
    refused as damaged, never read as one without a ``.version``.

    Raises:
        SourceError: not a tar archive, a damaged one, or no usable ``.version``.
    """
    found: str | None = None
    with path.open("rb") as f:
        for member, data in tar_members(f, where):
            parts = member.name.strip("/").split("/")
            if found is None and parts[-1] == ".version" and len(parts) <= 2 and member.isfile():
                head = data.read(MAX_VERSION_BYTES) if data is not None else b""
                found = head.decode(errors="replace")
    if found is None:
        raise SourceError(
            f"{where}: no .version at its top; GNUnet's release tarballs carry one, and "
            "without it GNUnet calls itself 'unknown' (scripts/get_version.sh)"
        )
    return version_of("", found, where)


COMPRESSIONS: Final = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
"""Magic numbers of the compressions a ``tarball:`` source may have (else a plain tar)."""
_DAMAGE: Final = (
    tarfile.TarError,
    OSError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    zstandard.ZstdError,
)
"""What the decompressors and tarfile raise on damaged input (gzip's and bzip2's own
errors are OSError, xz's LZMAError, zstd's ZstdError, a torn deflate stream zlib.error)."""


def _decompressed(f: IO[bytes]) -> tuple[io.BufferedIOBase | IO[bytes], str]:
    """``f`` decompressed by what its first bytes say, and the compression's name."""
    if not isinstance(f, io.BufferedReader):
        f = io.BufferedReader(f)  # type: ignore[type-var]  # any binary stream
    magic = f.peek(6)[:6]  # a pipe (git archive) cannot seek back
    for prefix, name in COMPRESSIONS:
        if magic.startswith(prefix):
            if name == "gzip":
                return gzip.GzipFile(fileobj=f, mode="rb"), name
            if name == "bzip2":
                return bz2.BZ2File(f, "rb"), name
            if name == "xz":
                return lzma.LZMAFile(f, "rb"), name
            reader = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)
            return reader, name
    return f, "uncompressed"


def tar_members(f: IO[bytes], where: str) -> Iterator[tuple[tarfile.TarInfo, IO[bytes] | None]]:
    """The members of the tar stream ``f`` (plain, gzip, bzip2, xz or zstd), in order,
    each with its data (to be read before the next), and then a check of the rest.

    tarfile ends its iteration quietly at a damaged header after the first; so the
    stream is then read to its end, in 1 MiB chunks: what follows the last member must
    be the tar's zero blocks, and the decompressor's own check (gzip's CRC, xz's and
    zstd's checksums) must pass. At most :data:`MAX_TREE_FILES` members and
    :data:`MAX_TREE_BYTES` bytes (as the headers declare them) are accepted, and at most
    :data:`MAX_PACKED_BYTES` bytes of regular files (what a build context holds).

    Raises:
        SourceError: a damaged archive ("not a tar archive that can be read: damaged
            (<compression>: ...)"), or one beyond the limits.
    """
    stream, kind = _decompressed(f)
    count = size = files = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                count += 1
                size += member.size
                if count > MAX_TREE_FILES or size > MAX_TREE_BYTES:
                    raise SourceError(
                        f"{where}: more than {MAX_TREE_FILES} files or {MAX_TREE_BYTES} bytes"
                    )
                files += member.size if member.isfile() else 0
                if files > MAX_PACKED_BYTES:
                    # Every file of a source goes into the image's build context, which
                    # holds at most MAX_PACKED_BYTES: refused by the headers, before a
                    # byte of it is unpacked (a decompression bomb fills no disk).
                    raise SourceError(
                        f"{where}: its files unpack to more than {MAX_PACKED_BYTES} bytes "
                        f"(by the sizes its headers declare, {quote(member.name, 120)} alone "
                        f"{member.size}); a GNUnet or Taler source is about 33 MB: this is "
                        "not a release tarball"
                    )
                yield member, tar.extractfile(member) if member.isfile() else None
            tail = 0
            while chunk := stream.read(1024 * 1024):
                tail += len(chunk)
                if chunk.count(0) != len(chunk):
                    raise tarfile.ReadError("data after the last member that is no tar header")
                if tail > MAX_TREE_BYTES:
                    raise tarfile.ReadError(f"more than {MAX_TREE_BYTES} bytes after its end")
        if count == 0:
            raise tarfile.ReadError("no member at all")
    except _DAMAGE as exc:
        raise SourceError(
            f"{where}: not a tar archive that can be read: damaged ({kind}: "
            f"{quote(str(exc), 200)}); fetch the release tarball again and pin its sha256"
        ) from None


def unpack(f: IO[bytes], dest: Path, where: str, strip_top: bool) -> None:
    """Extract the tar stream ``f`` (:func:`tar_members`: any compression a source may
    have, checked to its end, bounded) into ``dest`` as untrusted input, its one top
    folder stripped when ``strip_top``: regular files, folders and symbolic links whose
    target stays inside ``dest``; hard links become copies of an earlier member.

    The rules are those of tarfile's ``data`` filter (PEP 706): no absolute name, no
    ``..``, no link out of ``dest``, no device or FIFO, no set-id bits, owner not kept.
    They are applied here rather than through ``filter="data"`` because that filter came
    with Python 3.11.4, and Debian 12's own Python is 3.11.2 (archbench supports
    3.11.2 and later). No write follows a symbolic link: every file is created with
    ``O_NOFOLLOW | O_EXCL`` under a parent folder whose real path lies inside ``dest``.

    Raises:
        SourceError: a damaged archive, one beyond the limits, not one top folder
            (``strip_top``), or a member the rules refuse.
    """
    top: str | None = None
    root = os.path.realpath(dest)
    for member, data in tar_members(f, where):
        name = member.name.strip("/")
        linkname = member.linkname
        if strip_top:
            first, _, rest = name.partition("/")
            if top is None:
                top = first
            if first != top:
                raise SourceError(
                    f"{where}: not one top folder ({quote(top)} and {quote(first)}); GNUnet's "
                    "tarballs unpack into gnunet-VERSION/"
                )
            name = rest
            if member.islnk():
                linkname = linkname.partition("/")[2]
        if not name:
            continue
        try:
            _extract_member(member, data, name, linkname, root, where)
        except OSError as exc:
            raise SourceError(f"{where}: cannot unpack {quote(name, 120)}: {exc}") from None


def _below(root: str, path: str) -> bool:
    """Whether the real path ``path`` is ``root`` or lies below it (both real paths)."""
    return path == root or path.startswith(root + os.sep)


def _extract_member(
    member: tarfile.TarInfo,
    data: IO[bytes] | None,
    name: str,
    linkname: str,
    root: str,
    where: str,
) -> None:
    """One member of :func:`unpack`, checked and written (see there for the rules);
    ``data`` is a regular file's content, streamed.

    Raises:
        SourceError: the rules refuse the member.
        OSError: writing failed.
    """

    def refuse(why: str) -> SourceError:
        return SourceError(f"{where}: refused member {quote(name, 120)}: {why}")

    parts = name.split("/")
    if name.startswith("/") or ".." in parts or "\0" in name:
        raise refuse("an absolute name or one with '..'")
    target = os.path.join(root, *[p for p in parts if p not in ("", ".")])
    parent = os.path.dirname(target)
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise refuse("not a file, folder or link (devices and FIFOs are not source)")
    os.makedirs(parent, exist_ok=True)
    if not _below(root, os.path.realpath(parent)):
        raise refuse("its folder is a link out of the tree")
    mode = member.mode & 0o755 if member.isdir() or member.mode & 0o100 else member.mode & 0o644
    if member.isdir():
        if os.path.lexists(target) and not os.path.isdir(target):
            raise refuse("a folder where a file or link was")
        os.makedirs(target, mode=0o755, exist_ok=True)
        os.chmod(target, mode | 0o700)
        return
    if member.issym():
        if os.path.isabs(linkname) or not _below(
            root, os.path.normpath(os.path.join(parent, linkname))
        ):
            raise refuse(f"a link to {quote(linkname, 120)}, outside the tree")
        os.symlink(linkname, target)
        return
    source: IO[bytes] | None = data
    if member.islnk():
        link_parts = linkname.strip("/").split("/")
        if ".." in link_parts or os.path.isabs(linkname):
            raise refuse(f"a hard link to {quote(linkname, 120)}, outside the tree")
        earlier = os.path.join(root, *link_parts)
        if not _below(root, os.path.realpath(earlier)) or not os.path.isfile(earlier):
            raise refuse(f"a hard link to {quote(linkname, 120)}, which is no earlier file")
        source = open(earlier, "rb")  # noqa: SIM115  # closed below
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(target, flags, 0o600)
    except FileExistsError:
        raise refuse("a second member of that name") from None
    with os.fdopen(fd, "wb") as out, contextlib.ExitStack() as stack:
        if source is not None:
            stack.enter_context(source)
            shutil.copyfileobj(source, out, 1024 * 1024)
        os.fchmod(out.fileno(), mode)
