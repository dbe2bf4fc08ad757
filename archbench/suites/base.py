"""What every suite's settings share, and the record each suite module exports as ``SUITE``.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import StrictBool

from archbench.inputs import Strict


class SuiteSettings(Strict):
    """Common to every suite: ``enabled: false`` keeps its settings without running it."""

    enabled: StrictBool = True


@dataclass(frozen=True)
class SuiteSpec:
    """One suite as the host knows it: each ``archbench/suites/<name>.py`` exports one as ``SUITE``.

    ``name`` is the suite as matrix.yml, ``--suite``, the harness's ``--suites``
    and result rows write it (``rsa-large``); ``settings`` its model under
    ``defaults:``/``suites:``; ``enabled_by_default``: a matrix without
    ``defaults:`` runs it on every target (only blindsig does).
    """

    name: str
    settings: type[SuiteSettings]
    enabled_by_default: bool = False

    @property
    def attribute(self) -> str:
        """The name as a Python attribute of :class:`archbench.suites.Suites` (``rsa_large``)."""
        return self.name.replace("-", "_")


def rsa_sizes(value: tuple[int, ...]) -> tuple[int, ...]:
    """RSA key sizes in bits, sorted and without repeats.

    Raises:
        ValueError: a size is not a multiple of 8 from 1024 to 16384 (pydantic
            turns it into a located error).
    """
    for bits in value:
        if bits < 1024 or bits > 16384 or bits % 8:
            raise ValueError(
                f"RSA key size {bits} is not allowed; use a multiple of 8 from 1024 to 16384"
            )
    return tuple(sorted(set(value)))
