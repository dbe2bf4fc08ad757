"""What every suite's settings share, and the record each suite module exports as ``SUITE``.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from pydantic import StrictBool

from archbench.inputs import Strict


class SuiteSettings(Strict):
    """Common to every suite: ``enabled: false`` keeps its settings without running it."""

    enabled: StrictBool = True


@dataclass(frozen=True)
class RowSuite:
    """A suite that result rows carry although no matrix suite has its name.

    ``taler-helper``'s logs become rows of suite ``security-module``, the name
    the thesis's security-module table has too. ``title`` and ``report_rank``
    are as :class:`SuiteSpec`'s.
    """

    name: str
    title: str
    report_rank: int


@dataclass(frozen=True)
class SuiteSpec:
    """One suite as the host knows it: each ``archbench/suites/<name>.py`` exports one as ``SUITE``.

    ``name`` is the suite as matrix.yml, ``--suite``, the harness's ``--suites``
    and result rows write it (``rsa-large``); ``settings`` its model under
    ``defaults:``/``suites:``; ``title`` what its tables are titled
    (``"libsodium"``). ``enabled_by_default``: a matrix without ``defaults:``
    runs it on every target (only blindsig does). ``counted``: ``--metric
    instructions`` counts it (its driver marks each block; the harness keeps
    the same list, ``harness/abh/suites/__init__.py``). ``foreign``: it runs
    programs archbench does not own (``openssl speed``, ``gpg``, GNUnet's and
    Taler's programs): no block markers; of them only taler-helper is counted, its
    security module as a whole process (``harness/abh/suites/taler_counting.py``).
    ``blind_signatures``: its rows are blind signatures in the thesis's vocabulary (scheme
    CS or RSA, an operation of :data:`archbench.result.Operation`), which result rows are
    checked against; reports put them in the appendix's tables instead of a part of their
    own. ``rows_as``: its rows carry that suite, not ``name``.

    The ranks keep the orders reports have printed since these lists were
    written by hand (smaller first; gaps of 10 leave room):
    ``report_rank`` orders suite titles (:data:`archbench.suites.SUITE_TITLES`,
    ``invoke report --suite``'s list) and the parts of a report;
    ``count_rank`` orders the instruction-count tables of the counted suites,
    then the "Not counted:" note of the others.
    """

    name: str
    settings: type[SuiteSettings]
    _: KW_ONLY
    title: str
    report_rank: int
    count_rank: int
    enabled_by_default: bool = False
    counted: bool = False
    foreign: bool = False
    blind_signatures: bool = False
    rows_as: RowSuite | None = None

    @property
    def attribute(self) -> str:
        """The name as a Python attribute of :class:`archbench.suites.Suites` (``rsa_large``)."""
        return self.name.replace("-", "_")

    @property
    def row_suite(self) -> str:
        """The suite its result rows carry: ``rows_as``' name, else its own."""
        return self.name if self.rows_as is None else self.rows_as.name


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
