"""The commits between two refs of a git repository, as ``invoke bisect`` steps through
them (:func:`commit_range`), read through the same bare mirror as a ``git:`` source."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from archbench.errors import SourceError
from archbench.matrix import GnunetGit
from archbench.sources.git import Git
from archbench.sources.gnunet import resolve_gnunet
from archbench.sources.model import locked


@dataclass(frozen=True)
class CommitInfo:
    """One commit of a range (:func:`commit_range`): full id, parents' ids, subject, and
    the committer date (ISO 8601); ``boundary``: outside ``good..bad``, a parent of a
    commit in it; ``parent_count``: how many parents it has in git."""

    commit: str
    parents: tuple[str, ...]
    subject: str
    date: str
    boundary: bool = False
    parent_count: int = 0


MAX_RANGE: Final = 20_000
"""The most commits :func:`commit_range` lists (GNUnet has about 33 000 in all)."""


def commit_range(url: str, good: str, bad: str, work_dir: Path) -> list[CommitInfo]:
    """The commits of ``good..bad`` in the repository ``url``, ``good`` first, then the
    parents outside the range of commits in it (``boundary``: ancestors of ``good`` other
    than itself, on branches forked before it and merged later; their own parents left
    out), then every commit that is an ancestor of ``bad`` and not of ``good``, parents
    before children (``git log --topo-order --reverse``), ``bad`` last.

    The repository is read through the same bare mirror as a ``git:`` source
    (``<work_dir>/gnunet-src/git``, fetched when a ref is not there yet).

    Raises:
        SourceError: a ref names no commit, ``good`` is not an ancestor of ``bad``, the
            range is empty or longer than :data:`MAX_RANGE`, or git fails.
    """
    ends = [resolve_gnunet(GnunetGit(git=url, ref=ref), work_dir) for ref in (good, bad)]
    mirror = ends[1].origin
    good_c, bad_c = ends[0].commit, ends[1].commit
    assert mirror is not None and good_c is not None and bad_c is not None
    where = f"git {url}"
    git = Git(url, where)
    if good_c == bad_c:
        raise SourceError(
            f"{where}: --good {good} and --bad {bad} are the same commit ({good_c[:12]}); "
            "give two commits, good an ancestor of bad"
        )
    with locked(mirror.with_suffix(".lock")):
        if not _is_ancestor(git, mirror, good_c, bad_c):
            raise SourceError(_not_a_line(git, mirror, (good, good_c), (bad, bad_c), where))
        listing = git.out(
            [
                "--git-dir", str(mirror), "log", "--topo-order", "--reverse",
                "--format=%H%x00%P%x00%cI%x00%s", f"{good_c}..{bad_c}",
            ],
            raw=True,
        )  # fmt: skip
        head = git.out(
            ["--git-dir", str(mirror), "log", "-1", "--format=%H%x00%P%x00%cI%x00%s", good_c],
            raw=True,
        )
    lines = [line for line in listing.splitlines() if line]
    if len(lines) > MAX_RANGE:
        raise SourceError(f"{where}: {good}..{bad} has more than {MAX_RANGE} commits")
    ranged = [_commit_line(line) for line in [head.strip("\n"), *lines]]
    inside = {c.commit for c in ranged}
    outside = list(dict.fromkeys(p for c in ranged[1:] for p in c.parents if p not in inside))
    boundary: list[CommitInfo] = []
    if outside:
        with locked(mirror.with_suffix(".lock")):
            shown = git.out(
                ["--git-dir", str(mirror), "log", "--no-walk=unsorted",
                 "--format=%H%x00%P%x00%cI%x00%s", *outside],
                raw=True,
            )  # fmt: skip
        boundary = [
            dataclasses.replace(_commit_line(line), parents=(), boundary=True)
            for line in shown.splitlines()
            if line
        ]
    out = [dataclasses.replace(ranged[0], parents=()), *boundary]
    known = {c.commit for c in out}
    for c in ranged[1:]:
        # Every parent is in the graph now: the range's own, or a boundary commit.
        out.append(dataclasses.replace(c, parents=tuple(p for p in c.parents if p in known)))
        known.add(c.commit)
    if len(out) > MAX_RANGE:
        raise SourceError(
            f"{where}: {good}..{bad} has more than {MAX_RANGE} commits with the parents "
            "outside it that its merges bring"
        )
    if len(out) < 2 or out[-1].commit != bad_c:
        raise SourceError(f"{where}: {good}..{bad} lists no commits ending at {bad_c[:12]}")
    return out


def _commit_line(line: str) -> CommitInfo:
    """One ``%H%x00%P%x00%cI%x00%s`` line of git log as a commit (all its parents)."""
    commit, parents, date, subject = [*line.split("\x00"), "", "", ""][:4]
    # A subject is the author's text: printable characters only, bounded.
    shown = "".join(c if c.isprintable() else "?" for c in subject)[:200]
    ids = tuple(parents.split())
    return CommitInfo(commit, ids, shown, date, parent_count=len(ids))


def _not_a_line(
    git: Git, mirror: Path, good: tuple[str, str], bad: tuple[str, str], where: str
) -> str:
    """Why ``good`` (ref, commit) is not an ancestor of ``bad``, and what to give instead:
    the ends swapped, histories with no common commit, or branches that diverged (then
    their merge base is the good end ``git bisect`` would test first)."""
    (g, g_c), (b, b_c) = good, bad
    ends = f"--good {g} ({g_c[:12]}) is not an ancestor of --bad {b} ({b_c[:12]})"
    if (mirror / "shallow").is_file():
        return (
            f"{where}: {ends}, as far as this shallow repository (cloned with --depth) "
            "shows: its history is cut; give a full clone (git fetch --unshallow)"
        )
    if _is_ancestor(git, mirror, b_c, g_c):
        return f"{where}: {ends}: the ends are swapped; give --good {b} --bad {g}"
    base = git.out(["--git-dir", str(mirror), "merge-base", g_c, b_c], check=False)
    if not base:
        return (
            f"{where}: {ends}: they share no commit (unrelated histories); give two "
            "commits of one history, good an ancestor of bad"
        )
    return (
        f"{where}: {ends}: they diverged at {base[:12]} (their merge base); give --good "
        f"{base[:12]}, or a commit between it and bad, to bisect bad's side"
    )


def _is_ancestor(git: Git, mirror: Path, a: str, b: str) -> bool:
    try:
        git.run(["--git-dir", str(mirror), "merge-base", "--is-ancestor", a, b])
    except SourceError:
        return False
    return True
