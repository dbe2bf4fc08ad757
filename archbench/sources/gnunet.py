"""A GNUnet source, resolved to what it is and copied into a tree ready to build.

:func:`resolve_gnunet` turns a ``gnunet:`` source (:class:`archbench.matrix.GnunetSource`)
into a :class:`~archbench.sources.model.ResolvedSource`: what exactly will be built, and
the content key the image's hash covers, so that the same source is never built twice and
a changed one always is. Each kind has its module: a tarball
(:mod:`archbench.sources.tarball`), a git ref (:mod:`archbench.sources.git`), a local
working tree (:mod:`archbench.sources.tree`).

:func:`prepare_build_tree` copies a resolved source into a scratch folder as
the build will see it: no ``.git``, ``.version`` written (``get_version.sh``
reads it when there is no ``.git``, instead of printing ``unknown`` or writing
into the source; for a git or working-tree source the release tag of its ``git
describe``, :attr:`ResolvedSource.build_version`, so that a build one commit
away recompiles only what changed), and an empty ``doc/handbook/meson.build`` where
``doc/meson.build`` needs it (0.24.3 and 0.27.0 have the handbook as a
submodule, which a plain clone or ``git archive`` lacks). The build system is
meson when ``meson.build`` is at the top, else autotools when ``configure`` is
(0.24 and later ship a ``configure`` that wraps meson, so ``configure`` alone
says nothing). A tarball is checked again as it is unpacked and a working tree
is hashed again as it is copied, so what is built is what was keyed.

Research behind these rules: ``/tmp/i20/API.md`` (issue 20), sections 2 and 3.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Final

from archbench.errors import SourceError
from archbench.matrix import GnunetDebian, GnunetGit, GnunetPath, GnunetSource, GnunetTarball
from archbench.sources.git import export, resolve_git
from archbench.sources.model import (
    MAX_MESON_BYTES,
    MAX_VERSION_BYTES,
    SOURCE_DIR,
    BuildSystem,
    BuildTree,
    ResolvedSource,
    small_text,
)
from archbench.sources.tarball import resolve_tarball, unpack, verify_sha256
from archbench.sources.tree import hash_tree, inside, resolve_path, working_tree

HANDBOOK_STUB: Final = (
    "# Empty: written by archbench for a library-only build. GNUnet's handbook is a git\n"
    "# submodule (doc/handbook) that a plain clone or git archive lacks, and\n"
    "# doc/meson.build calls subdir('handbook') unconditionally.\n"
)
HANDBOOK_SUBDIR: Final = re.compile(r"""^\s*subdir\(\s*['"]handbook['"]\s*\)""", re.MULTILINE)
CONFIG_TEMPLATE: Final = "src/include/gnunet_config.h.in"
CONFIG_TEMPLATE_USE: Final = re.compile(r"""input\s*:\s*['"]gnunet_config\.h\.in['"]""")
CONFIG_TEMPLATE_STUB: Final = """/* Written by archbench: this tree's src/include/meson.build makes
 * gnunet_config.h from gnunet_config.h.in, which the tree lacks (GNUnet's .gitignore lists it; a
 * development snapshot after 0.27.0 has none). These are the public defines of
 * 0.27.0's template whose values the top meson.build still sets. */
#ifndef GNUNET_CONFIG_H
#define GNUNET_CONFIG_H
{defines}
#endif
"""
CONFIG_TEMPLATE_DEFINES: Final = (
    ("GNUNET_VERSION", '"@gnunet_version@"', "gnunet_version"),
    ("GNUNET_MAJOR_VERSION", "@gnunet_major_version@", "gnunet_major_version"),
    ("GNUNET_MINOR_VERSION", "@gnunet_minor_version@", "gnunet_minor_version"),
    ("GNUNET_MICRO_VERSION", "@gnunet_micro_version@", "gnunet_micro_version"),
    ("GNUNET_EXPERIMENTAL", "@enable_experimental@", "enable_experimental"),
    ("GNUNET_FS_EXTRACTOR_ENABLED", "@extractor@", "extractor"),
)
"""0.27.0's ``gnunet_config.h.in`` (name, value, the meson ``cdata`` key it needs); its
``GNUNET_CURL_GNUTLS`` moved to the private configuration on master."""
_STUB_FILE: Final = r"""['"]((?:[\w.+-]+/)*[\w+-][\w.+-]*)['"]"""
STUB_INPUT: Final = re.compile(r"input\s*:\s*" + _STUB_FILE)
"""``input: 'X'`` of a ``configure_file`` in a ``meson.build``: a file the tree must have."""
STUB_INSTALL: Final = re.compile(r"install_data\s*\(([^)]*)\)")
"""An ``install_data(...)`` call: its positional string arguments are files too."""
STUB_KEYWORD: Final = re.compile(r"\b\w+\s*:")
STUB_LITERAL: Final = re.compile(_STUB_FILE)
STUB_FOREACH: Final = re.compile(r"foreach\s+(\w+)\s*:\s*\[([^\]]*)\](.*?)endforeach", re.DOTALL)
"""``foreach p : ['a', 'b'] ... endforeach``, whose body may compute an input's name."""
MAX_STUBS: Final = 1000
STUB_TEXT: Final = ""
"""A stub's content: nothing (libgnunetutil's build reads none of these files)."""
SENTINEL_HEADER: Final = "src/include/gnunet_crypto_lib.h"
"""A file every GNUnet source tree has, from 0.19 to 0.27 (autotools and meson)."""


def resolve_gnunet(source: GnunetSource, work_dir: Path) -> ResolvedSource:
    """What ``source`` is, checked: see the module's docstring for each kind.

    ``work_dir`` holds downloads and git mirrors (``<work_dir>/gnunet-src``).

    Raises:
        SourceError: a missing file or directory, a sha256 that differs (naming both),
            a download or fetch that fails, a ref that names no commit, no usable
            version (``unknown``), or git missing.
    """
    if isinstance(source, GnunetDebian):
        return ResolvedSource(kind="debian")
    if isinstance(source, GnunetTarball):
        return resolve_tarball(source, work_dir / SOURCE_DIR / "tarballs")
    if isinstance(source, GnunetGit):
        return resolve_git(source, work_dir / SOURCE_DIR / "git")
    if isinstance(source, GnunetPath):
        return resolve_path(source)
    raise TypeError(f"not a GNUnet source: {source!r}")


def check_local_source(source: GnunetSource | None, project: str = "GNUnet") -> None:
    """Refuse, before anything is built or run, a local source that is not there.

    ``source``: a target's GNUnet or Taler exchange source (None and the ``debian``
    kind pass); ``project``: ``GNUnet`` or ``taler-exchange``, for the message. Only
    what costs nothing is checked here (a local tarball is a file, a ``path:`` is a
    directory); its sha256, its contents and remote sources are checked when the
    source is resolved, as before.

    Raises:
        SourceError: the tarball is not a file or the directory does not exist, with
            the same words as :func:`resolve_gnunet` and
            :func:`~archbench.sources.taler.resolve_taler`.
    """
    prefix = "" if project == "GNUnet" else "taler "
    if isinstance(source, GnunetTarball) and not source.is_url:
        if not Path(source.tarball).is_file():
            raise SourceError(
                f"{prefix}tarball {source.tarball}: no such file; "
                f"give the path of a {project} {'release ' if not prefix else ''}tarball"
            )
    elif isinstance(source, GnunetPath) and not source.directory.is_dir():
        raise SourceError(
            f"{prefix}path {source.directory}: no such directory; give a {project} source tree"
        )


def prepare_build_tree(resolved: ResolvedSource, dest: Path) -> BuildTree:
    """Copy ``resolved`` into ``dest`` (new or empty) as the build will see it.

    The source itself is never written to. See the module's docstring for what is
    added; :attr:`BuildTree.changes` lists it.

    Raises:
        SourceError: the tarball's sha256 or the working tree's hash changed since
            :func:`resolve_gnunet`, the tree is not GNUnet's, or it cannot be built as it is
            (an autotools tree without ``configure``).
        ValueError: ``resolved`` is the debian source (there is nothing to copy), or
            ``dest`` is not empty.
    """
    if resolved.kind == "debian" or resolved.origin is None or resolved.version is None:
        raise ValueError("the debian source has no tree to prepare")
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty")
    created = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        return _prepare(resolved, resolved.origin, resolved.version, dest)
    except BaseException:
        # A half-made tree must not be mistaken for a prepared one.
        if created:
            shutil.rmtree(dest, ignore_errors=True)
        else:
            for child in dest.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        raise


def _prepare(resolved: ResolvedSource, origin: Path, version: str, dest: Path) -> BuildTree:
    where = f"{resolved.kind} {resolved.location}"
    if resolved.kind == "tarball":
        assert resolved.sha256 is not None
        with origin.open("rb") as f:
            verify_sha256(f, resolved.sha256, where)
            f.seek(0)
            unpack(f, dest, where, strip_top=True)
    elif resolved.kind == "git":
        assert resolved.commit is not None
        export(origin, resolved.commit, dest, where)
    else:
        again = working_tree(origin)
        digest = hash_tree(origin, again.files, where, copy_to=dest)
        if digest != resolved.tree_sha256:
            raise SourceError(
                f"{where}: the tree changed while archbench copied it (hash "
                f"{resolved.tree_sha256} when resolved, {digest} as copied); run again"
            )
    built = resolved.build_version or version
    why = f" (the release tag of git describe's {version})" if built != version else ""
    return _finish(dest, built, where, why)


def _finish(dest: Path, version: str, where: str, why: str = "") -> BuildTree:
    changes: list[str] = []
    git_dir = dest / ".git"
    if git_dir.is_dir() and not git_dir.is_symlink():
        shutil.rmtree(git_dir)
        changes.append("removed .git (get_version.sh would run git describe)")
    elif git_dir.exists() or git_dir.is_symlink():
        git_dir.unlink()
        changes.append("removed .git (get_version.sh would run git describe)")
    if not (dest / SENTINEL_HEADER).is_file():
        raise SourceError(f"{where}: no {SENTINEL_HEADER}; this is not a GNUnet source tree")
    if (dest / "meson.build").is_file():
        build_system: BuildSystem = "meson"
    elif (dest / "configure").is_file():
        build_system = "autotools"
    elif (dest / "configure.ac").is_file():
        raise SourceError(
            f"{where}: an autotools tree without configure (a GNUnet before 0.21 from git) "
            "needs ./bootstrap first; build its release tarball instead"
        )
    else:
        raise SourceError(f"{where}: neither meson.build nor configure at the top")
    dot_version = dest / ".version"
    try:
        own: str | None = small_text(dot_version, MAX_VERSION_BYTES, where).strip() or None
    except SourceError:
        own = None  # a .version that is no version: replaced below
    if own != version or dot_version.is_symlink():
        _write_new(dest, ".version", version + "\n")
        changes.append(f"wrote .version: {version}{why}")
    doc = dest / "doc" / "meson.build"
    handbook = dest / "doc" / "handbook" / "meson.build"
    if (
        build_system == "meson"
        and doc.is_file()
        and not doc.is_symlink()
        and not (handbook.exists() and not _leaves(dest, handbook))
        and HANDBOOK_SUBDIR.search(small_text(doc, MAX_MESON_BYTES, where))
    ):
        _write_new(dest, "doc/handbook/meson.build", HANDBOOK_STUB)
        changes.append("added an empty doc/handbook/meson.build (the handbook submodule)")
    if build_system == "meson":
        _config_template(dest, changes)
        _data_stubs(dest, where, changes)
    return BuildTree(root=dest, build_system=build_system, version=version, changes=tuple(changes))


def _leaves(root: Path, path: Path) -> bool:
    """True when ``path`` resolves outside ``root`` (through a symlink on the way)."""
    resolved, base = path.resolve(), root.resolve()
    return resolved != base and base not in resolved.parents


def _write_new(root: Path, name: str, text: str) -> None:
    """Write ``text`` at ``root / name`` as a new file: no symlink on the way is followed
    (:func:`inside`), and the file is created, never opened through a link."""
    path = inside(root, name)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(text)


def _config_template(dest: Path, changes: list[str]) -> None:
    """Write :data:`CONFIG_TEMPLATE` when meson needs it and the tree lacks it.

    Only the defines whose ``cdata`` key the top ``meson.build`` sets are written, so
    that meson fills every one; the version macros are required (drivers/blindsig.h
    reads them).
    """
    template = dest / CONFIG_TEMPLATE
    include_meson = template.parent / "meson.build"
    if template.exists() or template.is_symlink() or not include_meson.is_file():
        return
    if not CONFIG_TEMPLATE_USE.search(include_meson.read_text(errors="replace")):
        return
    top = (dest / "meson.build").read_text(errors="replace")
    lines = [
        f"#define {name} {value}"
        for name, value, key in CONFIG_TEMPLATE_DEFINES
        if re.search(rf"""cdata\.set(10)?\(\s*['"]{key}['"]""", top)
    ]
    template.write_text(CONFIG_TEMPLATE_STUB.format(defines="\n".join(lines)), encoding="ascii")
    changes.append(f"wrote {CONFIG_TEMPLATE} (absent from the tree; {len(lines)} defines)")


def _data_stubs(dest: Path, where: str, changes: list[str]) -> None:
    """Write an empty file for every data file a ``meson.build`` names that the tree lacks.

    A development snapshot of GNUnet's master (issue 29's ``gnunet-master-20260630``)
    was taken without files that have no extension or end in ``.conf``/``.in``
    (``README``, ``COPYING``, ``util.conf``, the tests' configurations,
    ``gnunet.conf.5.in``, scripts such as ``gnunet-bugreport``), and ``meson setup``
    refuses a tree where an ``install_data``/``configure_file`` input is missing. None
    of them is read by libgnunetutil's build; a complete tree (a release, a git checkout: it has the
    ``README`` its top ``meson.build`` installs) gets no stub.
    Literal names are seen here, and names computed in a ``foreach`` over a literal
    list (``'test_' + p + '.conf'``); ``build-libgnunetutil.sh`` stubs any other one
    as ``meson setup`` names it.

    Raises:
        SourceError: more than :data:`MAX_STUBS` would be needed (not a snapshot gap).
    """
    top = dest / "meson.build"
    top_names = [
        n.group(1)
        for call in STUB_INSTALL.finditer(top.read_text(errors="replace"))
        for n in STUB_LITERAL.finditer(STUB_KEYWORD.split(call.group(1))[0])
    ]
    # Only a tree that lacks the README its top meson.build installs: a release or a git
    # checkout has it, and stays as it is (meson.build files name data that conditional
    # branches never reach, e.g. data/gns-bcd.tex in 0.27.0).
    if "README" not in top_names or (dest / "README").exists():
        return
    written: list[str] = []
    for build_file in sorted(dest.rglob("meson.build")):
        if build_file.is_symlink() or not build_file.is_file():
            continue
        text = build_file.read_text(errors="replace")
        names = [m.group(1) for m in STUB_INPUT.finditer(text)] + [
            n.group(1)
            for call in STUB_INSTALL.finditer(text)
            # Positional arguments only: install_dir: get_option('bindir') names no file.
            for n in STUB_LITERAL.finditer(STUB_KEYWORD.split(call.group(1))[0])
        ]
        # input: 'test_' + p + '_peer1.conf' inside a foreach over a literal list.
        for loop in STUB_FOREACH.finditer(text):
            var, items, body = loop.groups()
            computed = re.compile(rf"input\s*:\s*'([\w.+-]*)'\s*\+\s*{var}\s*\+\s*'([\w.+-]*)'")
            for item in re.findall(r"'([\w.+-]+)'", items):
                for head, tail in computed.findall(body):
                    name = head + item + tail
                    if STUB_LITERAL.fullmatch(f"'{name}'"):
                        names.append(name)
        for name in names:
            target = build_file.parent / name
            if (
                target.exists()
                or target.is_symlink()
                or not target.parent.is_dir()
                or target.parent.is_symlink()
                or not target.resolve().is_relative_to(dest.resolve())
            ):
                continue
            if len(written) >= MAX_STUBS:
                raise SourceError(
                    f"{where}: more than {MAX_STUBS} files its meson.build files name are "
                    "missing; this is not a GNUnet tree archbench can build"
                )
            target.write_text(STUB_TEXT, encoding="ascii")
            written.append(str(target.relative_to(dest)))
    if written:
        shown = ", ".join(written[:5]) + (
            f" and {len(written) - 5} more" if len(written) > 5 else ""
        )
        changes.append(f"wrote {len(written)} empty data files meson needs ({shown})")
