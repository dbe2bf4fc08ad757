"""GNUnet's own perf programs as a witness: "GNUnet perf vs archbench" per row.

For every target that ran both the ``blindsig`` suite (archbench's driver)
and the ``gnunet-perf`` suite (GNUnet's ``perf_crypto_rsa``/``perf_crypto_cs``
built from the Debian source of the same libgnunetutil), each operation both
measured gets one line: archbench's median time of 10 operations, GNUnet's
printed median time of its "10x" block, and the ratio archbench / GNUnet.

GNUnet prints whole units truncated toward zero (``34 ms`` is a time in
[34 ms, 35 ms): :mod:`archbench.upstream`), so its figure is an interval
``[v, v + u)`` and the ratio is one too: ``[a / (v + u), a / v]``. Both
sides come from one container run, so they share the machine's state; the
ratio still carries the run's noise, and a ratio far from 1 on a quiet
machine means the two programs do not time the same work.

Pure: no engine, no files but the ones :func:`write` is asked for.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pandas as pd
from tabulate import tabulate

from archbench.report.formats import latex_escape
from archbench.report.units import format_ratio, format_time_ns
from archbench.result import Result, Row, scheme_id, write_atomic
from archbench.suites import GNUNET_PERF

THESIS_OPS: Final = 10
"""GNUnet's perf programs time blocks of 10 operations ("10x ... took")."""
FILE_STEM: Final = "gnunet-perf-vs-archbench"
COLUMNS: Final = ("target", "row", "archbench (10x)", "GNUnet perf (10x)", "archbench / GNUnet")


@dataclass(frozen=True)
class WitnessRow:
    """One operation measured by both programs on one target. Times: ns per 10 operations."""

    target: str
    scheme: str
    key_bits: int | None
    operation: str
    archbench_ns: float
    gnunet_low_ns: float
    gnunet_high_ns: float
    runs: int

    @property
    def label(self) -> str:
        """``RSA-2048 signing``, ``CS r derivation``."""
        return f"{scheme_id(self.scheme, self.key_bits)} {self.operation.replace('_', ' ')}"

    @property
    def ratio_low(self) -> float:
        """Smallest archbench / GNUnet ratio the truncated print allows."""
        return self.archbench_ns / self.gnunet_high_ns

    @property
    def ratio_high(self) -> float:
        """Largest archbench / GNUnet ratio the truncated print allows (inf for ``0``)."""
        return self.archbench_ns / self.gnunet_low_ns if self.gnunet_low_ns else math.inf


def _key(row: Row) -> tuple[str, int | None, str]:
    return (row.scheme, row.key_bits, row.operation)


def witness_rows(results: Sequence[Result]) -> list[WitnessRow]:
    """The rows both suites measured, per target, in the targets' and rows' order.

    archbench's figure is the median per-operation time × 10; GNUnet's is the
    median of its printed "10x" values and that median plus the print's
    uncertainty. Invalid rows are left out.
    """
    out: list[WitnessRow] = []
    for result in results:
        rows = result.harness.rows
        ours = {_key(r): r for r in rows if r.suite == "blindsig" and r.valid}
        for theirs in rows:
            if theirs.suite != GNUNET_PERF.name or not theirs.valid:
                continue
            mine = ours.get(_key(theirs))
            if mine is None:
                continue
            per_op = statistics.median(mine.samples_ns) / mine.ops_per_block
            scale = THESIS_OPS / theirs.ops_per_block
            low = statistics.median(theirs.samples_ns) * scale
            high = low + (theirs.uncertainty_ns or 0) * scale
            out.append(
                WitnessRow(
                    target=result.target.name,
                    scheme=theirs.scheme,
                    key_bits=theirs.key_bits,
                    operation=theirs.operation,
                    archbench_ns=per_op * THESIS_OPS,
                    gnunet_low_ns=low,
                    gnunet_high_ns=high,
                    runs=len(theirs.samples_ns),
                )
            )
    return out


def _ratio(r: WitnessRow) -> str:
    if math.isinf(r.ratio_high):
        return f"≥ {format_ratio(r.ratio_low)}×"
    low, high = format_ratio(r.ratio_low), format_ratio(r.ratio_high)
    return f"{low}×" if low == high else f"{low}–{high}×"


def _gnunet(r: WitnessRow) -> str:
    # The truncation interval only where it shows at three significant digits.
    low = format_time_ns(r.gnunet_low_ns) if r.gnunet_low_ns else "0"
    high = format_time_ns(r.gnunet_high_ns)
    return low if low == high else f"[{low}, {high})"


def _cells(r: WitnessRow) -> list[str]:
    return [r.target, r.label, format_time_ns(r.archbench_ns), _gnunet(r), _ratio(r)]


NOTE: Final = (
    "GNUnet's perf_crypto_rsa/perf_crypto_cs, built from the Debian source of the "
    "target's libgnunetutil with archbench's patch perf-crypto-0.20.patch, beside "
    "archbench's blindsig driver in the same container run. GNUnet prints times "
    "truncated to whole units, so its figure and the ratio are intervals."
)


def markdown(rows: Sequence[WitnessRow]) -> str:
    """The witness table in Markdown, with its note."""
    table = tabulate([_cells(r) for r in rows], headers=COLUMNS, tablefmt="github")
    return f"## GNUnet perf vs archbench\n\n{table}\n\n{NOTE}\n"


def latex(rows: Sequence[WitnessRow]) -> str:
    """The witness table as a booktabs ``table`` float (``\\usepackage{booktabs}``)."""
    frame = pd.DataFrame(
        [[latex_escape(c) for c in _cells(r)] for r in rows],
        columns=[latex_escape(c) for c in COLUMNS],
    )
    body = frame.style.hide(axis="index").to_latex(hrules=True, column_format="llrrr")
    return (
        "\\begin{table}[htbp]\n\\centering\\small\n"
        f"{body}\\caption{{GNUnet perf vs archbench. {latex_escape(NOTE)}}}\n"
        "\\label{tab:gnunet-perf-vs-archbench}\n\\end{table}\n"
    )


def write(results: Sequence[Result], out_dir: Path) -> list[Path]:
    """Write ``gnunet-perf-vs-archbench.md`` and ``.tex`` when any target ran both suites.

    Returns the paths written (none when no target has both).

    Raises:
        OSError: ``out_dir`` cannot be written.
    """
    rows = witness_rows(results)
    if not rows:
        return []
    md, tex = out_dir / f"{FILE_STEM}.md", out_dir / f"{FILE_STEM}.tex"
    write_atomic(md, markdown(rows))
    write_atomic(tex, latex(rows))
    return [md, tex]
