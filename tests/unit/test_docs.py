"""README.md stays a short entry point whose links resolve, and every page is in the nav.

The pages themselves are checked by ``mkdocs build --strict`` in ``.ci/run`` (broken
links and anchors fail it); README.md lies outside ``docs/``, so its links are checked
here, without mkdocs.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from helpers import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")
"""The target of a Markdown link ``[text](target)``."""


def _nav_pages(entries: list[Any]) -> set[str]:
    pages: set[str] = set()
    for entry in entries:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages |= _nav_pages(value) if isinstance(value, list) else {value}
    return pages


def test_readme_starts_with_the_two_set_up_commands() -> None:
    """.ci/run greps the second one; both come before any other section."""
    text = README.read_text(encoding="utf-8")
    first_section = text.index("\n## ")
    assert text.index("\nbash scripts/setup-host.sh && .venv/bin/invoke bench") < first_section
    assert text.index("\nbash scripts/setup-host.sh --tests && .venv/bin/pytest") < first_section


def test_readme_is_at_most_150_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_readme_links_resolve() -> None:
    targets = LINK.findall(README.read_text(encoding="utf-8"))
    assert any(t.startswith("docs/") for t in targets)
    for target in targets:
        if "://" in target:
            continue
        path, _, _anchor = target.partition("#")
        assert (REPO / path).exists(), f"README.md links to {target}, which does not exist"


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert _nav_pages(config["nav"]) == pages
