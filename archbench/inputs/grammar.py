"""Grammars of every matrix.yml string that reaches a root shell, argv or a Dockerfile.

Each ``check_*`` function returns the value unchanged when it matches its
real grammar and raises ``ValueError`` with archbench's wording otherwise
(pydantic turns it into a MatrixError naming the key). Values are checked
whole (``re.fullmatch``, ASCII only: Unicode look-alikes such as a Cyrillic
``а`` or a fullwidth ``；`` never match), and the characters a shell, a
Dockerfile or an option parser treats specially (``;``, ``$``, backquote,
quotes, whitespace, newlines, NUL, a leading ``-``) are outside every
grammar here.

Sources:

* Debian package names: Debian Policy 5.6.1 (``[a-z0-9][a-z0-9+.-]+``);
  versions: Policy 5.6.12 (``[epoch:]upstream[-revision]``); architecture
  qualifiers: ``apt-get install name:arch``; apt's ``name=version``.
* Debian suites and codenames: archive names (``trixie``, ``stable``,
  ``bookworm-backports``), the file names of debootstrap's scripts.
* Docker image references: distribution/reference's ``regexp.go``
  (``[host[:port]/]path[:tag][@digest]``), and tags ``[\\w][\\w.-]{0,127}``.
* git refs: ``git check-ref-format`` (git 2.39's documentation), narrowed to
  ``[A-Za-z0-9._+/-]``; GNUnet versions: ``scripts/get_version.sh`` of 0.20 to 0.27.

The same grammars as pydantic string types (:data:`PackageSpec`, :data:`Name`, …)
check each value as matrix.yml is parsed, and :class:`Strict` is the frozen base
of every model of the matrix and of the suites' settings.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictStr, field_validator

from archbench.inputs.messages import quote

MAX_NAME: Final = 64

DEBIAN_NAME: Final = r"[a-z0-9][a-z0-9+.-]+"
DEBIAN_ARCH: Final = r"[a-z0-9][a-z0-9-]*"
DEBIAN_VERSION: Final = r"(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*"
PACKAGE: Final = re.compile(rf"(?P<name>{DEBIAN_NAME})(?::{DEBIAN_ARCH})?(?:={DEBIAN_VERSION})?")
"""``name``, ``name:arch``, ``name=version`` or ``name:arch=version`` (what ``apt-get install``
takes). Not accepted: ``name/release`` and relations (``>=``), which apt-get does not take."""

NAME: Final = re.compile(r"[a-z0-9][a-z0-9_.-]*")
"""Matrix names that become file names (targets, profiles, hosts)."""

DOCKER_PATH_COMPONENT: Final = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
"""One ``/``-separated component of a Docker repository name (distribution/reference)."""
DOCKER_TAG: Final = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DOMAIN_COMPONENT: Final = r"(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])"
_DOMAIN: Final = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9A-Fa-f:]+\])(?::[0-9]+)?"
_DIGEST: Final = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE_REFERENCE: Final = re.compile(
    rf"(?:(?P<domain>{_DOMAIN})/)?(?P<path>{DOCKER_PATH_COMPONENT}(?:/{DOCKER_PATH_COMPONENT})*)"
    rf"(?::(?P<tag>{DOCKER_TAG}))?(?:@(?P<digest>{_DIGEST}))?"
)
"""A Docker image reference as distribution/reference's ``ReferenceRegexp`` (255-char names)."""

DEBIAN_SUITE: Final = re.compile(r"[a-z][a-z0-9.-]{0,39}")
"""A Debian/Ubuntu suite or codename: lower case, starts with a letter (never an option)."""
SHA256_HEX: Final = re.compile(r"[0-9a-f]{64}")
_URL_FORBIDDEN: Final = re.compile(r"[\x00-\x20\x7f-\U0010ffff\"'`$\\<>{}|^;]")


def _bad(what: str, value: str, allowed: str) -> ValueError:
    return ValueError(f"{what} {quote(value)} is not allowed; {allowed}")


def _ascii(value: str) -> bool:
    return value.isascii() and "\x00" not in value


def check_package(value: str) -> str:
    """A Debian package for ``apt-get install``: ``name[:arch][=version]``.

    Raises:
        ValueError: anything else (shell characters, options, look-alikes).
    """
    if len(value) > 200 or not _ascii(value) or not PACKAGE.fullmatch(value):
        raise _bad(
            "package",
            value,
            "a Debian package name is lower-case letters, digits and + . - (at least 2, "
            "starting with a letter or digit), optionally ':ARCH' and/or '=VERSION' "
            "(e.g. gcc, libc6-dev:arm64, openssl=3.5.1-1)",
        )
    return value


def check_name(value: str, what: str = "name") -> str:
    """A matrix name that becomes a file name or tag: ``[a-z0-9][a-z0-9_.-]*``, <= 64 chars.

    Raises:
        ValueError: anything else.
    """
    if len(value) > MAX_NAME or not _ascii(value) or not NAME.fullmatch(value):
        raise _bad(
            what,
            value,
            "use lower-case letters, digits, '.', '_' and '-', starting with a letter or "
            f"digit, at most {MAX_NAME} characters",
        )
    return value


def check_target_name(value: str) -> str:
    """A target name: :func:`check_name`, a valid Docker tag, and no clash with run files.

    ``<target>.json`` must not be the run manifest (``run.json``) nor look
    like another target's ``--repeat`` file (``<target>.repeat-<i>.json``) or
    instruction counts (``<target>.instructions.json``).

    Raises:
        ValueError: anything else.
    """
    check_name(value, "target name")
    if not re.fullmatch(DOCKER_TAG, value):
        raise _bad("target name", value, "it must also be a valid Docker tag")
    if value == "run" or re.search(r"\.(repeat-[0-9]+|instructions)$", value):
        raise _bad(
            "target name",
            value,
            "'run' and names ending in '.repeat-N' or '.instructions' are the file names "
            "of the run itself",
        )
    return value


def check_base_name(value: str) -> str:
    """A base name: one Docker repository path component (``archbench-base/<name>``).

    Raises:
        ValueError: anything else (e.g. ``a..b``, ``a-``, upper case).
    """
    if len(value) > MAX_NAME or not _ascii(value) or not re.fullmatch(DOCKER_PATH_COMPONENT, value):
        raise _bad(
            "base name",
            value,
            "it becomes the Docker repository archbench-base/NAME: lower-case letters and "
            "digits, separated by single '.', '_', '__' or dashes, at most 64 characters",
        )
    return value


def check_suite(value: str) -> str:
    """A debootstrap suite or codename (``trixie``, ``stable``, ``bookworm-backports``).

    Raises:
        ValueError: anything else, notably a value starting with '-'.
    """
    if not _ascii(value) or not DEBIAN_SUITE.fullmatch(value):
        raise _bad(
            "suite",
            value,
            "a Debian suite or codename is lower-case letters, digits, '.' and '-', starting "
            "with a letter, at most 40 characters (e.g. trixie, stable)",
        )
    return value


def check_mirror(value: str) -> str:
    """A debootstrap mirror: ``http(s)://host[:port]/path`` or ``file:///path``.

    No credentials (they would land in logs), whitespace, quotes or shell characters.

    Raises:
        ValueError: anything else.
    """
    allowed = (
        "give an http://, https:// or file:/// URL without spaces, quotes, shell characters "
        "or user:password@ (e.g. http://deb.example/debian)"
    )
    if len(value) > 2048 or _URL_FORBIDDEN.search(value):
        raise _bad("mirror", value, allowed)
    parts = urllib.parse.urlsplit(value)
    if parts.scheme in ("http", "https"):
        if not parts.hostname or "@" in parts.netloc or parts.query or parts.fragment:
            raise _bad("mirror", value, allowed)
        try:
            parts.port  # noqa: B018  # raises on a bad port
        except ValueError:
            raise _bad("mirror", value, allowed) from None
    elif parts.scheme == "file":
        if parts.netloc or not parts.path.startswith("/") or parts.query or parts.fragment:
            raise _bad("mirror", value, allowed)
    else:
        raise _bad("mirror", value, allowed)
    return value


def check_image(value: str) -> str:
    """A Docker image reference ``[registry[:port]/]repo[/more][:tag][@digest]``.

    Raises:
        ValueError: anything else, or a name over 255 characters.
    """
    match = IMAGE_REFERENCE.fullmatch(value) if _ascii(value) else None
    if match is None or len(value) > 512:
        raise _bad(
            "image",
            value,
            "give a Docker image reference such as debian:trixie, ubuntu:24.04 or "
            "registry.example:5000/team/debian:trixie (lower-case repository)",
        )
    name = (match.group("domain") + "/" if match.group("domain") else "") + match.group("path")
    if len(name) > 255:
        raise _bad("image", value, "a repository name has at most 255 characters")
    return value


def check_tarball_url(value: str) -> str:
    """A release tarball's URL: ``http(s)://`` without credentials or shell characters.

    Raises:
        ValueError: anything else.
    """
    check_mirror(value)
    if not value.startswith(("http://", "https://")):
        raise _bad(
            "url",
            value,
            "give the http(s):// URL of the release tarball that the engine's image builds "
            "can reach (archbench names no download host; a local mirror works)",
        )
    return value


def check_sha256(value: str) -> str:
    """64 lowercase hex digits.

    Raises:
        ValueError: anything else.
    """
    if not SHA256_HEX.fullmatch(value):
        raise _bad("sha256", value, "pin the tarball with its 64-digit lowercase sha256")
    return value


# ---------------------------------------------------------------- GNUnet sources

GIT_REF: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+/-]{0,254}")
"""The characters of a git ref archbench takes: a subset of ``git check-ref-format``'s,
without ``@`` (the separator of ``git+URL@REF``) and never starting with ``-``, ``.`` or ``/``."""
GNUNET_VERSION: Final = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:[-+~.][0-9A-Za-z.+~-]*)?")
"""GNUnet's version string (``.version``, ``git describe`` without its ``v``): ``0.27.0``,
``0.27.0-5-g2d1625296-dirty``. ``scripts/get_version.sh`` cuts ``--major/--minor/--micro``
from the leading ``x.y.z`` and pastes them into ``#define``s, so nothing else may lead."""
MAX_PATH: Final = 4096


def check_git_url(value: str) -> str:
    """A git remote: ``https://HOST[:PORT]/PATH`` or ``file:///PATH`` (a local repository).

    Not ssh (``ssh://``, ``user@host:path``): an ssh URL runs ssh with the host as an
    argument, and credentials would land in logs; nor ``git://``, ``http://`` (no
    integrity), ``ext::`` or any other transport. No ``@`` anywhere (user names, and the
    separator of ``git+URL@REF``), no query, fragment, spaces, quotes or shell characters.

    Raises:
        ValueError: anything else.
    """
    allowed = (
        "give an https://HOST/PATH URL, or file:///PATH for a local repository, without "
        "spaces, quotes, shell characters, '@', '?' or '#' (ssh, git:// and http:// are "
        "not used: mirror the repository locally or serve it over https)"
    )
    if len(value) > 2048 or _URL_FORBIDDEN.search(value) or "@" in value:
        raise _bad("git URL", value, allowed)
    parts = urllib.parse.urlsplit(value)
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise _bad("git URL", value, allowed)
    if parts.scheme == "https":
        if not parts.hostname or not re.fullmatch(_DOMAIN, parts.netloc):
            raise _bad("git URL", value, allowed)
        try:
            parts.port  # noqa: B018  # raises on a bad port
        except ValueError:
            raise _bad("git URL", value, allowed) from None
    elif parts.scheme == "file":
        if parts.netloc or not parts.path.startswith("/") or parts.path.startswith("//"):
            raise _bad("git URL", value, allowed)
    else:
        raise _bad("git URL", value, allowed)
    return value


def check_git_ref(value: str) -> str:
    """A tag, branch or commit to build: what ``git check-ref-format --allow-onelevel``
    accepts (no ``..``, ``//``, component starting with ``.`` or ending in ``.lock``, no
    trailing ``/`` or ``.``), restricted to letters, digits and ``. _ + / -``, at most 255
    characters, never starting with ``-``, ``.`` or ``/``. A full or abbreviated commit
    (hex digits) is one such name.

    Raises:
        ValueError: anything else.
    """
    allowed = (
        "give a tag, branch or commit (e.g. v0.27.0, master, 2d16252969cf): letters, "
        "digits and . _ + / -, starting with a letter, digit or '_', at most 255 "
        "characters, without '..', '//', a part starting with '.' or ending in '.lock', "
        "and not ending in '/' or '.' (git check-ref-format)"
    )
    if not _ascii(value) or not GIT_REF.fullmatch(value):
        raise _bad("ref", value, allowed)
    parts = value.split("/")
    if (
        ".." in value
        or value.endswith((".", "/"))
        or any(not p or p.startswith(".") or p.endswith(".lock") for p in parts)
    ):
        raise _bad("ref", value, allowed)
    return value


_PATH_FORBIDDEN: Final = re.compile(r"[`$;|&<>'\"\\]")


def check_local_path(value: str, what: str = "path") -> str:
    """A local file or directory as written in matrix.yml or on the command line.

    Printable characters (``str.isprintable``: no controls, newlines, NUL,
    zero-width or direction marks), at most 4096, none of `` ` $ ; | & < > ' " \\ ``;
    not starting with ``-`` or whitespace, not ending in whitespace. Paths are
    passed as one argv item and what they name is copied into the build context,
    so they never reach a shell or a Dockerfile; spaces and non-ASCII names are
    allowed.

    Raises:
        ValueError: anything else.
    """
    if (
        not value
        or len(value) > MAX_PATH
        or not value.isprintable()
        or value != value.strip()
        or value.startswith("-")
        or _PATH_FORBIDDEN.search(value)
    ):
        raise _bad(
            what,
            value,
            "give a path of printable characters without ` $ ; | & < > quotes or "
            f"backslashes, not starting with '-' or a space, at most {MAX_PATH} characters "
            "(write ./-x for a name starting with '-')",
        )
    return value


def check_tarball_location(value: str) -> str:
    """A tarball: an ``http(s)://`` URL (:func:`check_tarball_url`) or a local path
    (:func:`check_local_path`); a ``file://`` URL is refused in favour of the path.

    Raises:
        ValueError: anything else.
    """
    if "://" not in value:
        return check_local_path(value, "tarball")
    if value.startswith("file:"):
        raise _bad("tarball", value, "give a local tarball as a path, not a file:// URL")
    allowed = (
        "give an http(s)://HOST/PATH URL without user:password@, spaces, quotes or shell "
        "characters, or a local path"
    )
    if not value.startswith(("http://", "https://")):
        raise _bad("tarball", value, allowed)
    try:
        check_mirror(value)
    except ValueError:
        raise _bad("tarball", value, allowed) from None
    return value


def check_gnunet_version(value: str) -> str:
    """A GNUnet version string as ``.version`` holds it (:data:`GNUNET_VERSION`).

    Raises:
        ValueError: anything else, notably ``unknown`` (what ``get_version.sh`` prints
            without ``.version`` or a tag) and ``git describe`` landing on a tag that is
            not a release (``last-gnunet-0.20-compatible-2-g9a9c588a6``).
    """
    if len(value) > 64 or not _ascii(value) or not GNUNET_VERSION.fullmatch(value):
        raise _bad(
            "GNUnet version",
            value,
            "GNUnet's version starts with MAJOR.MINOR.MICRO (e.g. 0.27.0 or "
            "0.27.0-5-g2d1625296), at most 64 characters of letters, digits and . + ~ -",
        )
    return value


PackageSpec = Annotated[StrictStr, AfterValidator(check_package)]
Name = Annotated[StrictStr, AfterValidator(check_name)]
BaseName = Annotated[StrictStr, AfterValidator(check_base_name)]
TargetName = Annotated[StrictStr, AfterValidator(check_target_name)]
SuiteName = Annotated[StrictStr, AfterValidator(check_suite)]
MirrorUrl = Annotated[StrictStr, AfterValidator(check_mirror)]
ImageRef = Annotated[StrictStr, AfterValidator(check_image)]
Sha256 = Annotated[StrictStr, AfterValidator(check_sha256)]
GitUrl = Annotated[StrictStr, AfterValidator(check_git_url)]
GitRef = Annotated[StrictStr, AfterValidator(check_git_ref)]


class Strict(BaseModel):
    """Frozen, and an unknown key is an error (``extra="forbid"``); YAML lists become tuples."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _lists_to_tuples(cls, value: Any) -> Any:
        # YAML gives lists; the frozen models hold tuples.
        return tuple(value) if isinstance(value, list) else value
