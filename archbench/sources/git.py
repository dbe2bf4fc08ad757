"""A ``git:`` source, and git run for a remote or a user's tree.

A ref names a commit in a bare mirror under ``<work>/gnunet-src/git`` (``git clone
--mirror``, then ``git fetch``; a full commit id already there is not fetched again): the
user's repository is only read through its URL (:func:`resolve_git`), and the commit's
tree comes out of ``git archive`` (:func:`export`). The version is ``git describe``'s,
else a committed ``.version`` (an exchange's: its committed ``configure.ac``).

:class:`Git` runs git for one remote or tree: only the transport its URL needs, no
prompt, C messages, optional locks off, and none of the commands a user's tree's config
names (a file-system monitor, hooks, a pager, credential helpers, clean/smudge filters).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from archbench.errors import SourceError
from archbench.inputs import did_you_mean, quote
from archbench.matrix import GnunetGit
from archbench.sources.model import ResolvedSource, exchange_version, locked, version_of
from archbench.sources.tarball import unpack

GIT_TIMEOUT: Final = 1800.0
"""Seconds a clone or fetch may take (GNUnet's full history, on a slow line)."""
GIT_QUICK_TIMEOUT: Final = 120.0
"""Seconds any other git command may take."""


def resolve_git(source: GnunetGit, mirrors: Path, version_file: str = ".version") -> ResolvedSource:
    where = f"git {source.git}"
    if source.git.startswith("file://"):
        local = Path(source.git.removeprefix("file://"))
        if local.exists() and not local.is_dir():
            raise SourceError(f"{where}: a file, not a folder; give the path of a git repository")
        if not local.is_dir():
            raise SourceError(f"{where}: no such folder; give the path of a git repository")
        if not ((local / ".git").exists() or (local / "HEAD").is_file()):
            raise SourceError(
                f"{where}: not a git repository (no .git, and not a bare repository); for a "
                "working tree that is not under git use gnunet: {path: ...} (--gnunet PATH)"
            )
    mirror = mirrors / (hashlib.sha256(source.git.encode()).hexdigest()[:24] + ".git")
    with locked(mirror.with_suffix(".lock")):
        git = Git(source.git, where)
        if not (mirror / "HEAD").is_file():
            mirror.parent.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=".clone-", dir=mirror.parent))
            try:
                git.run(
                    ["clone", "--mirror", "--quiet", "--", source.git, str(scratch)], GIT_TIMEOUT
                )
                scratch.rename(mirror)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        elif not (re.fullmatch(r"[0-9a-f]{40}", source.ref) and git.commit(mirror, source.ref)):
            git.run(
                ["--git-dir", str(mirror), "fetch", "--prune", "--quiet", "origin"], GIT_TIMEOUT
            )
        commit = git.commit(mirror, source.ref)
        if commit is None:
            refs = git.out(["--git-dir", str(mirror), "for-each-ref", "--format=%(refname:short)"])
            names = refs.split()
            raise SourceError(
                f"{where}: ref {source.ref!r} names no commit there (no such tag, branch or "
                f"commit){did_you_mean(source.ref, names)}; the repository has "
                f"{len(names)} refs{_why_no_commit(git, mirror, source.ref)}"
            )
        described = git.out(
            ["--git-dir", str(mirror), "describe", "--tags", "--match", "v[0-9]*", commit],
            check=False,
        )
        committed = git.out(
            ["--git-dir", str(mirror), "show", f"{commit}:{version_file}"], check=False
        )
    at = f"{where} at {source.ref} ({commit[:12]})"
    version = (
        version_of(described, committed, at)
        if version_file == ".version"
        else exchange_version(committed, at)
    )
    by_describe = version_file == ".version" and bool(described.strip())
    return ResolvedSource(
        kind="git",
        project="gnunet" if version_file == ".version" else "taler",
        location=source.git,
        ref=source.ref,
        commit=commit,
        dirty=False,
        version=version,
        described=by_describe,
        origin=mirror,
    )


def _why_no_commit(git: Git, mirror: Path, ref: str) -> str:
    """More on a ref that names no commit: a short commit id several objects start
    with, or a shallow repository whose history is cut ("" when neither)."""
    if re.fullmatch(r"[0-9a-f]{4,39}", ref):
        found = git.out(
            ["--git-dir", str(mirror), "rev-parse", "--disambiguate=" + ref], check=False
        ).split()
        if len(found) > 1:
            return (
                f"; {len(found)} objects start with {ref}: give more digits of the commit "
                "(git log --format=%H shows them whole)"
            )
    if (mirror / "shallow").is_file():
        return (
            "; the repository is shallow (cloned with --depth), so older commits are not "
            "in it: give a full clone (git fetch --unshallow)"
        )
    return ""


def export(mirror: Path, commit: str, dest: Path, where: str) -> None:
    """``git archive`` of ``commit`` unpacked into ``dest`` (export-ignore applies, as in
    upstream's own tarballs)."""
    with subprocess.Popen(
        ["git", "--git-dir", str(mirror), "archive", "--format=tar", commit],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_git_env(),
    ) as proc:
        assert proc.stdout is not None
        try:
            unpack(proc.stdout, dest, where, strip_top=False)
        finally:
            proc.stdout.close()
            _, err = proc.communicate(timeout=GIT_QUICK_TIMEOUT)
    if proc.returncode != 0:
        raise SourceError(f"{where}: git archive {commit} failed: {_last_line(err)}")


QUIET_CONFIG: Final = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
)
"""Settings that would make git run a command the user's tree (its ``.git/config``)
names: a file-system monitor, hooks, a pager, credential helpers. Clean/smudge filters
have names of their own; :func:`_quiet_filters` turns each off."""


def _git_env(extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    # No prompt for credentials (a run must not hang), C messages for our errors, and
    # optional locks off: git status would otherwise refresh the user's index. Settings
    # go through GIT_CONFIG_COUNT (git 2.31+): no name needs quoting for a command line.
    config = [*QUIET_CONFIG, *extra]
    env = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "GIT_CONFIG_COUNT": str(len(config)),
    }
    for i, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def _quiet_filters(directory: Path) -> list[tuple[str, str]]:
    """Settings that turn off every ``filter.<name>`` the tree's config defines.

    ``git status`` runs a filter's ``clean`` command on files whose stat changed; the
    command is the tree's to name, so archbench runs none: each filter's ``clean``,
    ``smudge`` and ``process`` are set empty (git then runs no command) and
    ``required`` false. Reading the config runs nothing.
    """
    try:
        done = subprocess.run(
            [
                "git",
                "-C",
                str(directory),
                "config",
                "--null",
                "--name-only",
                "--get-regexp",
                r"^filter\.",
            ],
            capture_output=True,
            timeout=GIT_QUICK_TIMEOUT,
            env=_git_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    names = {
        key.decode(errors="surrogateescape")[len("filter.") :].rpartition(".")[0]
        for key in done.stdout.split(b"\0")
        if key.startswith(b"filter.")
    }
    out: list[tuple[str, str]] = []
    for name in sorted(n for n in names if n):
        out += [(f"filter.{name}.{k}", "") for k in ("clean", "smudge", "process")]
        out.append((f"filter.{name}.required", "false"))
    return out


def _last_line(err: bytes | str) -> str:
    """The line of git's message that says what went wrong: the first ``fatal:`` or
    ``error:`` line (git's last lines are advice), else the last line."""
    text = err.decode(errors="replace") if isinstance(err, bytes) else err
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    said = next((x for x in lines if x.startswith(("fatal:", "error:"))), None)
    return quote(said or (lines[-1] if lines else "no message"), 300)


class Git:
    """git for one remote or tree: only the transport its URL needs, no prompts."""

    def __init__(self, url: str, where: str, tree: Path | None = None) -> None:
        self.where = where
        allow = ["-c", "protocol.allow=never", "-c", "protocol.https.allow=always"]
        if url.startswith("file://"):
            allow += ["-c", "protocol.file.allow=always"]
        self.prefix = ["git", *allow]
        # A user's working tree: none of the commands its config names is run.
        self.config = _quiet_filters(tree) if tree is not None else []

    def run(
        self, args: list[str], timeout: float = GIT_QUICK_TIMEOUT
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(
                [*self.prefix, *args],
                capture_output=True,
                timeout=timeout,
                env=_git_env(self.config),
                check=False,
            )
        except FileNotFoundError:
            raise SourceError(f"{self.where}: git is not installed (apt-get install git)") from None
        except subprocess.TimeoutExpired:
            raise SourceError(
                f"{self.where}: git {_verb(args)} took longer than {timeout:g} s"
            ) from None
        if done.returncode != 0:
            raise SourceError(f"{self.where}: git {_verb(args)} failed: {_last_line(done.stderr)}")
        return done

    def out(self, args: list[str], check: bool = True, raw: bool = False) -> str:
        """stdout of git ``args`` (stripped unless ``raw``); "" on failure when not ``check``."""
        try:
            done = self.run(args)
        except SourceError:
            if check:
                raise
            return ""
        text = done.stdout.decode(errors="surrogateescape")
        return text if raw else text.strip()

    def commit(self, mirror: Path, ref: str) -> str | None:
        """The commit ``ref`` names in ``mirror``, or None."""
        found = self.out(
            [
                "--git-dir",
                str(mirror),
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                f"{ref}^{{commit}}",
            ],
            check=False,
        )
        return found if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", found) else None


def _verb(args: Sequence[str]) -> str:
    """The git subcommand of ``args`` (after ``-C DIR`` / ``--git-dir DIR``)."""
    rest = list(args)
    while rest and rest[0] in ("-C", "--git-dir"):
        rest = rest[2:]
    return rest[0] if rest else "?"
