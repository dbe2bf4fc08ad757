"""Where a target's libgnunetutil comes from: the ``gnunet:`` key and ``--gnunet SOURCE``.

A profile or a target (whose key wins) names one source::

    gnunet: debian                                        # the base's libgnunet-dev (default)
    gnunet: {tarball: PATH-or-URL, sha256: <64 hex>}      # a release tarball, pinned
    gnunet: {git: URL, ref: tag|branch|commit}            # a git repository at a ref
    gnunet: {path: DIR}                                   # a local working tree, dirty or not

``invoke bench --gnunet SOURCE`` takes the same four as one string
(:func:`parse_gnunet`): ``debian``, ``PATH-or-URL@sha256:<64 hex>``,
``git+URL@REF`` and a directory. Both go through the same models, so a value
is refused with the same words in either place.

Every string is checked against its grammar (:mod:`archbench.inputs`) before it
can reach an argv: tarballs are ``http(s)://`` URLs or paths; git remotes are
``https://`` or ``file:///`` (no ssh: an ssh URL hands its host to ssh, and
user names would land in logs); refs follow ``git check-ref-format``, never
starting with ``-``. Paths have ``~`` expanded and are made absolute, relative
to the matrix file's folder (``base_dir`` in the validation context; the
current directory for ``--gnunet`` and for models built without one). Whether
a path exists, a ref resolves or a sha256 matches is not checked here but
when the source is resolved (:mod:`archbench.sources`), so that a
matrix parses on a machine that does not hold the source.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Final, Literal, NoReturn

from pydantic import (
    BeforeValidator,
    Discriminator,
    StrictStr,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from archbench.errors import MatrixError
from archbench.inputs import (
    GitRef,
    GitUrl,
    Sha256,
    Strict,
    check_local_path,
    check_tarball_location,
    did_you_mean,
    problem,
    quote,
)

KINDS: Final = ("tarball", "git", "path")
"""The keys that say which kind a ``gnunet:`` mapping is."""
FORMS: Final = (
    "debian, {tarball: PATH-or-URL, sha256: <64 hex>}, {git: URL, ref: REF} or {path: DIR}"
)
STRING_FORMS: Final = "debian, PATH-or-URL@sha256:<64 hex>, git+URL@REF or a directory"
TARBALL_SUFFIXES: Final = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tar.zst")

# The union's tags carry '[' so that key paths in messages skip them, as they skip
# pydantic's own names of union members (archbench.inputs.location, matrix.load).
TAG_DEBIAN: Final = "gnunet[debian]"
TAG_TARBALL: Final = "gnunet[tarball]"
TAG_GIT: Final = "gnunet[git]"
TAG_PATH: Final = "gnunet[path]"
TAG_INVALID: Final = "gnunet[invalid]"


def _absolute(value: str, info: ValidationInfo, what: str) -> str:
    """``value`` with ``~`` expanded, made absolute against the context's ``base_dir``."""
    check_local_path(value, what)
    expanded = os.path.expanduser(value)
    if expanded.startswith("~"):
        raise ValueError(
            f"{what} {quote(value)}: there is no such user to expand '~' for; give the path"
        )
    base = (info.context or {}).get("base_dir") if isinstance(info.context, dict) else None
    return os.path.abspath(os.path.join(base or os.getcwd(), expanded))


class GnunetSource(Strict):
    """Where libgnunetutil comes from: the base of :class:`GnunetDebian`,
    :class:`GnunetTarball`, :class:`GnunetGit` and :class:`GnunetPath`."""

    @property
    def kind(self) -> Literal["debian", "tarball", "git", "path"]:
        raise NotImplementedError


class GnunetDebian(GnunetSource):
    """The base's own ``libgnunet-dev`` (Debian's 0.19.3 or 0.20.0): what archbench did before."""

    @property
    def kind(self) -> Literal["debian"]:
        return "debian"


class GnunetTarball(GnunetSource):
    """A release tarball (a path or an ``http(s)://`` URL), pinned by the sha256 of its bytes.

    ``tarball`` is an absolute path after validation, or the URL as given.
    """

    tarball: StrictStr
    sha256: Sha256

    @property
    def kind(self) -> Literal["tarball"]:
        return "tarball"

    @property
    def is_url(self) -> bool:
        """True for an ``http(s)://`` URL, False for a local file."""
        return self.tarball.startswith(("http://", "https://"))

    @model_validator(mode="before")
    @classmethod
    def _pinned(cls, value: Any) -> Any:
        if isinstance(value, dict) and "tarball" in value and "sha256" not in value:
            raise ValueError(
                "a tarball is pinned by its sha256: add sha256: <64 lowercase hex digits> "
                "(what sha256sum prints for the file)"
            )
        return value

    @field_validator("tarball")
    @classmethod
    def _location(cls, value: str, info: ValidationInfo) -> str:
        check_tarball_location(value)
        return value if "://" in value else _absolute(value, info, "tarball")


class GnunetGit(GnunetSource):
    """A git repository (``https://`` or ``file:///``) at a tag, branch or commit."""

    git: GitUrl
    ref: GitRef

    @property
    def kind(self) -> Literal["git"]:
        return "git"

    @model_validator(mode="before")
    @classmethod
    def _has_ref(cls, value: Any) -> Any:
        if isinstance(value, dict) and "git" in value and "ref" not in value:
            raise ValueError(
                "a git source needs ref: the tag, branch or commit to build (e.g. v0.27.0)"
            )
        return value


class GnunetPath(GnunetSource):
    """A local working tree, built as it is on disk (uncommitted changes included).

    ``path`` is absolute after validation.
    """

    path: StrictStr

    @property
    def kind(self) -> Literal["path"]:
        return "path"

    @property
    def directory(self) -> Path:
        return Path(self.path)

    @field_validator("path")
    @classmethod
    def _directory(cls, value: str, info: ValidationInfo) -> str:
        return _absolute(value, info, "path")


def _debian(value: Any) -> Any:
    if isinstance(value, GnunetDebian):
        return value
    if value == "debian":
        return {}
    text = str(value)
    hint = ""
    if "://" in text or "/" in text or text.endswith(TARBALL_SUFFIXES):
        hint = (
            "; a tarball, git repository or directory is a mapping in matrix.yml "
            "(the one-string forms are for invoke bench --gnunet)"
        )
    raise ValueError(
        f"gnunet {quote(value)} is not allowed; give {FORMS}"
        + (hint or did_you_mean(text[:100], ["debian"]))
    )


def _refuse_as(key: str, forms: str, value: Any) -> NoReturn:
    """Raise the message for a ``key:`` value that is none of the kinds."""
    if isinstance(value, dict):
        found = [k for k in KINDS if k in value]
        if found:
            raise ValueError(f"give one of tarball, git and path, not {' and '.join(found)}")
        keys = [str(k) for k in value]
        hints = [did_you_mean(k[:100], KINDS) for k in keys[:20]]
        raise ValueError(
            f"a {key} mapping needs one of the keys tarball, git or path (got "
            + (", ".join(quote(k, 40) for k in keys[:5]) if keys else "no keys")
            + f"); give {forms}"
            + next((h for h in hints if h), "")
        )
    raise ValueError(f"give {forms} (got {quote(value)}, a {type(value).__name__})")


def _refuse(value: Any) -> Any:
    _refuse_as("gnunet", FORMS, value)


def _tag_as(key: str, value: Any) -> str:
    for model, kind in ((GnunetTarball, "tarball"), (GnunetGit, "git"), (GnunetPath, "path")):
        if isinstance(value, model):
            return f"{key}[{kind}]"
    if isinstance(value, dict):
        found = [k for k in KINDS if k in value]
        if len(found) == 1:
            return f"{key}[{found[0]}]"
    return f"{key}[invalid]"


def _tag(value: Any) -> str:
    if isinstance(value, str | GnunetDebian):
        return TAG_DEBIAN
    return _tag_as("gnunet", value)


GnunetSpec = Annotated[
    Annotated[GnunetDebian, BeforeValidator(_debian), Tag(TAG_DEBIAN)]
    | Annotated[GnunetTarball, Tag(TAG_TARBALL)]
    | Annotated[GnunetGit, Tag(TAG_GIT)]
    | Annotated[GnunetPath, Tag(TAG_PATH)]
    | Annotated[GnunetDebian, BeforeValidator(_refuse), Tag(TAG_INVALID)],
    Discriminator(_tag),
]
"""The pydantic type of a ``gnunet:`` value: one of the four :class:`GnunetSource` kinds,
told apart by their key (a string is debian) before any is validated."""

DEBIAN_GNUNET: Final = GnunetDebian()
"""The default source: the base's libgnunet-dev."""

FIELDS: Final[dict[str, list[str]]] = {
    TAG_TARBALL: list(GnunetTarball.model_fields),
    TAG_GIT: list(GnunetGit.model_fields),
    TAG_PATH: list(GnunetPath.model_fields),
}
"""The keys allowed in each kind of ``gnunet:`` mapping, by the union's tag (for messages)."""

_ADAPTER: TypeAdapter[GnunetSpec] = TypeAdapter(GnunetSpec)


def _mapping(text: str, where: str, forms: str = STRING_FORMS) -> Any:
    """The matrix value that the one-string form ``text`` stands for."""
    if text == "debian":
        return text
    if text.startswith("git+"):
        url, sep, ref = text[len("git+") :].rpartition("@")
        if not sep:
            raise MatrixError(
                f"{where}: {quote(text)} names no ref; give git+URL@REF "
                "(e.g. git+https://git.gnunet.org/gnunet.git@v0.27.0)"
            )
        return {"git": url, "ref": ref}
    location, sep, digest = text.rpartition("@sha256:")
    if sep:
        return {"tarball": location, "sha256": digest}
    if "://" in text or text.endswith(TARBALL_SUFFIXES):
        raise MatrixError(
            f"{where}: {quote(text)}: a tarball is pinned by its sha256; give "
            "PATH-or-URL@sha256:<64 lowercase hex digits> (what sha256sum prints), "
            f"or one of {forms}"
        )
    return {"path": text}


def parse_gnunet(text: str, where: str = "--gnunet", base_dir: Path | None = None) -> GnunetSource:
    """The one-string form of a source (``invoke bench --gnunet``) as its model.

    ``debian``; ``PATH-or-URL@sha256:HEX`` (a tarball; split at the last
    ``@sha256:``); ``git+URL@REF`` (split at the last ``@``: git URLs hold none);
    anything else is a directory (write ``./debian`` for a directory of that name).
    Relative paths are relative to ``base_dir`` (default: the current directory).

    Raises:
        MatrixError: ``where``, then what is wrong with which part and what is allowed,
            in the words the matrix uses for the same value.
    """
    if not isinstance(text, str) or not text:
        raise MatrixError(f"{where}: give a GNUnet source: {STRING_FORMS}")
    value = _mapping(text, where)
    context = {"base_dir": str(base_dir) if base_dir is not None else None}
    try:
        return _ADAPTER.validate_python(value, context=context)
    except ValidationError as exc:
        problems = "; ".join(problem(e) for e in exc.errors()[:5])
        raise MatrixError(f"{where}: {problems}") from None


# ---------------------------------------------------------------- taler:

TALER_FORMS: Final = "{tarball: PATH-or-URL, sha256: <64 hex>}, {git: URL, ref: REF} or {path: DIR}"
TALER_STRING_FORMS: Final = "PATH-or-URL@sha256:<64 hex>, git+URL@REF or a directory"


def _taler_refuse(value: Any) -> Any:
    if isinstance(value, str):
        raise ValueError(
            f"taler {quote(value)} is not allowed: the exchange is not a Debian package; give "
            f"{TALER_FORMS} (the one-string forms are for invoke bench --taler)"
        )
    _refuse_as("taler", TALER_FORMS, value)


TalerSpec = Annotated[
    Annotated[GnunetTarball, Tag("taler[tarball]")]
    | Annotated[GnunetGit, Tag("taler[git]")]
    | Annotated[GnunetPath, Tag("taler[path]")]
    | Annotated[GnunetPath, BeforeValidator(_taler_refuse), Tag("taler[invalid]")],
    Discriminator(lambda value: _tag_as("taler", value)),
]
"""The pydantic type of a ``taler:`` value: a GNU Taler exchange source, in the grammar
and with the checks of ``gnunet:`` (a tarball pinned by its sha256, a git ref, a working
tree), without ``debian`` (Debian has no exchange package)."""

TALER_FIELDS: Final[dict[str, list[str]]] = {
    f"taler[{kind}]": fields for kind, fields in zip(KINDS, FIELDS.values(), strict=True)
}
"""The keys allowed in each kind of ``taler:`` mapping, by the union's tag (for messages)."""

_TALER_ADAPTER: TypeAdapter[TalerSpec] = TypeAdapter(TalerSpec)


def parse_taler(text: str, where: str = "--taler", base_dir: Path | None = None) -> GnunetSource:
    """The one-string form of an exchange source (``invoke bench --taler``) as its model.

    The forms of :func:`parse_gnunet` without ``debian``: ``PATH-or-URL@sha256:HEX``,
    ``git+URL@REF``, or a directory. The model is a :class:`GnunetTarball`,
    :class:`GnunetGit` or :class:`GnunetPath` (the same source kinds, for another project).

    Raises:
        MatrixError: ``where``, then what is wrong and what is allowed.
    """
    if not isinstance(text, str) or not text:
        raise MatrixError(f"{where}: give a Taler exchange source: {TALER_STRING_FORMS}")
    if text == "debian":
        raise MatrixError(
            f"{where}: 'debian': Debian has no taler-exchange package; give {TALER_STRING_FORMS}"
            " (./debian for a directory of that name)"
        )
    value = _mapping(text, where, TALER_STRING_FORMS)
    context = {"base_dir": str(base_dir) if base_dir is not None else None}
    try:
        return _TALER_ADAPTER.validate_python(value, context=context)
    except ValidationError as exc:
        problems = "; ".join(problem(e) for e in exc.errors()[:5])
        raise MatrixError(f"{where}: {problems}") from None


def gnunet_flag(source: GnunetSource | None) -> str | None:
    """``source`` in the one-string form :func:`parse_gnunet` reads (``--gnunet``,
    ``--taler``), its inverse; paths stay as the source holds them (absolute once
    parsed), so a resumed run builds the same source wherever it is started from.
    None for None (the matrix's own source)."""
    if source is None:
        return None
    if isinstance(source, GnunetTarball):
        return f"{source.tarball}@sha256:{source.sha256}"
    if isinstance(source, GnunetGit):
        return f"git+{source.git}@{source.ref}"
    if isinstance(source, GnunetPath):
        return source.path
    return "debian"
