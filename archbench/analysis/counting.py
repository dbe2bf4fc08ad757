"""Instructions per operation: settings and arithmetic (pure; never imports docker).

Counts come from ``invoke bench --metric instructions`` (design in
``docs/counting.md``): the blindsig driver runs in the target's benchmark image
under an amd64 QEMU user emulator with our TCG plugin, and each timed block's
guest instructions are stored in ``Row.instructions``. Instructions per
operation of a block = count / ``ops_per_block``; a row's figure is the median
over its blocks and its spread the relative range (max - min) / median.

A count is exact only where the inputs, the allocation and the scheduling are: a row is
classified by its own repetitions (:func:`count_kind`: ``exact``, ``varying``,
``random``), and a change of it is called only beyond what that kind allows
(:func:`count_effect`); random rows are compared by rank (:func:`rank_ratio_interval`)
and never called or gated. A row whose blocks take exactly two values is a constant with
whole extra events in some blocks (``exact+extra``, :func:`extra_levels`,
:func:`count_constants`): compared on its constant, as an exact row.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from archbench.analysis.stats import DEFAULT_CONFIDENCE
from archbench.errors import MatrixError
from archbench.inputs import quote
from archbench.result import FunctionCount, Metric, Row

METRICS = ("time", "instructions")
"""What ``--metric`` and the matrix's ``metrics`` take; ``time`` is the default."""


def metric_names(names: Sequence[str]) -> tuple[Metric, ...]:
    """Checked metric names (from :func:`parse_metrics` or a manifest) as :data:`Metric`.

    Raises:
        MatrixError: a name that is not a metric.
    """
    out: list[Metric] = []
    for name in names:
        if name == "time":
            out.append("time")
        elif name == "instructions":
            out.append("instructions")
        else:
            raise MatrixError(f"unknown metric {quote(name)}; allowed: {', '.join(METRICS)}")
    return tuple(out)


def parse_metrics(text: str) -> tuple[str, ...]:
    """``--metric time,instructions`` -> ``("time", "instructions")`` (order kept).

    Raises:
        MatrixError: empty, unknown or repeated metric.
    """
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise MatrixError(f"--metric: give one or more of {', '.join(METRICS)}")
    for name in names:
        if name not in METRICS:
            raise MatrixError(
                f"--metric: unknown metric {quote(name)}; allowed: {', '.join(METRICS)}"
            )
    if len(set(names)) != len(names):
        raise MatrixError(f"--metric: {quote(text)} names a metric twice")
    return names


def per_op(counts: Sequence[int], ops_per_block: int) -> list[float]:
    """Instructions per operation of each block: count / ops_per_block.

    Raises:
        ValueError: ``ops_per_block`` < 1 or a count < 0.
    """
    if ops_per_block < 1:
        raise ValueError(f"ops_per_block must be >= 1, got {ops_per_block}")
    if any(c < 0 for c in counts):
        raise ValueError("instruction counts cannot be negative")
    return [c / ops_per_block for c in counts]


def median_per_op(counts: Sequence[int], ops_per_block: int) -> float:
    """Median instructions per operation over a row's blocks.

    Raises:
        ValueError: no counts, or as :func:`per_op`.
    """
    if not counts:
        raise ValueError("no instruction counts")
    return float(statistics.median(per_op(counts, ops_per_block)))


def spread(counts: Sequence[int]) -> float:
    """Relative range of counts, (max - min) / median (0.0 for identical counts).

    Raises:
        ValueError: no counts or a zero median.
    """
    if not counts:
        raise ValueError("no instruction counts")
    mid = statistics.median(counts)
    if mid == 0:
        raise ValueError("median count is 0")
    return (max(counts) - min(counts)) / mid


CountKind = Literal["exact", "exact+extra", "varying", "random"]
"""How a counted row behaves over its own repetitions (:func:`count_kind`,
:func:`block_kind`)."""

RANDOM_SPREAD: Final = 0.05
"""Relative range of a row's repetitions above which its count is a draw, not a level
(``random``): RSA key generation's counts follow the random primes it finds (an A/A
history saw 0.844×, −289 M instructions per key, between two runs of one build)."""
VARYING_FLOOR: Final = 0.01
"""Smallest change a ``varying`` row is called at: a count that varies at all varies
between executions by more than its few repetitions in one execution show (RSA-1024
blinding's libc part: 2.2 % apart in two executions of one image, its total 0.28 %,
from the allocator; the security module's process-mode counts 0.5-2 % apart at other
loads, issue 39)."""
VARYING_FACTOR: Final = 3.0
"""A ``varying`` row is called beyond ``VARYING_FACTOR`` × its own relative range (or
:data:`VARYING_FLOOR`): the range of a handful of repetitions is a low estimate of how
far two executions lie apart."""


def count_kind(spread: float) -> CountKind:
    """``exact`` (all repetitions equal: ``spread`` 0), ``varying`` (a relative range up
    to :data:`RANDOM_SPREAD`: allocator, timer, thread and IPC paths) or ``random``
    (beyond it: the count is a draw, e.g. random keys).

    ``spread``: the larger relative range (:func:`spread`) of the rows compared, over
    their repetitions (blocks, and container runs where several were merged).

    Raises:
        ValueError: ``spread`` negative or not finite.
    """
    if not math.isfinite(spread) or spread < 0:
        raise ValueError(f"spread must be a fraction >= 0, got {spread}")
    if spread == 0:
        return "exact"
    return "varying" if spread <= RANDOM_SPREAD else "random"


EXTRA_BLOCKS: Final = 3
"""Fewest blocks from which two values are read as a constant with extra events
(:func:`extra_levels`): with two blocks, two values are any two draws."""


def extra_levels(counts: Sequence[int]) -> tuple[int, int] | None:
    """``(low, high)`` when a row's block counts take exactly two values over at least
    :data:`EXTRA_BLOCKS` blocks, else None.

    Such a row is a constant path plus whole extra events that land in some blocks and
    not in others: libgcrypt mixes its 600-byte entropy pool (``mix_pool``, 40,590
    instructions on amd64 with ``-cpu max``) each time the fast polls of its hashes fill
    it, a fixed amount of work at a position fixed by how many bytes came before
    (docs/counting.md). Blocks of ``n`` operations then hold ``m`` or ``m + 1`` mixes
    (``m`` = ⌊n · mixes per operation⌋), never more levels: ``low`` is the constant path
    with ``m`` mixes in every execution that shows both levels, whichever block the
    mixes fall in. An execution that shows one level may show either, which
    :func:`count_constants` settles against the other executions' levels. Allocator,
    timer and key-dependent paths vary by other amounts each time and almost never
    repeat a count exactly: three such blocks give three values.
    """
    values = sorted(set(counts))
    if len(counts) >= EXTRA_BLOCKS and len(values) == 2:
        return values[0], values[1]
    return None


def block_kind(counts: Sequence[int]) -> CountKind:
    """One row's kind from its own block counts: ``exact`` (all equal), ``exact+extra``
    (two values, :func:`extra_levels`), else :func:`count_kind` of its :func:`spread`.

    Raises:
        ValueError: as :func:`spread`.
    """
    s = spread(counts)
    if s == 0:
        return "exact"
    if extra_levels(counts) is not None:
        return "exact+extra"
    return count_kind(s)


def count_constants(
    sides: Sequence[tuple[Sequence[int], int]],
) -> list[tuple[float, float]] | None:
    """Each side's constant path in instructions per operation, as the range of the
    values it may take, when every side is ``exact`` or ``exact+extra``
    (:func:`extra_levels`) with the same operations per block and at least one side is
    ``exact+extra``; else None (the sides are compared by :func:`count_kind` of their
    spread).

    ``sides``: (block counts, operations per block) of one row in each execution (two
    for a comparison, a history's versions in order). A side with two levels has its
    lower one as constant: ``(low, low)``. A side with one value ``v`` caught the same
    number of extra events in every block, which may be the lower number or the upper
    one: ``(v - e, v)``, ``e`` the extra event's size seen in the nearest side with two
    levels (in the order given). :func:`constant_ratio` compares two such ranges: an A/A
    pair of a constant with whole extra events is never called, a move of the constant
    path is (a move of exactly one event's size, or of how often the event lands, is not:
    it is the extra work, not the constant).

    Raises:
        ValueError: a side without counts or with operations per block < 1.
    """
    if not sides:
        return None
    shapes: list[tuple[int, int] | None] = []
    for counts, ops in sides:
        if not counts or ops < 1:
            raise ValueError("each side needs counts and operations per block >= 1")
        shapes.append(extra_levels(counts))
    ops_all = {ops for _, ops in sides}
    exact = [len(set(counts)) == 1 for counts, _ in sides]
    if len(ops_all) != 1 or all(exact):
        return None
    if not all(e or shape is not None for e, shape in zip(exact, shapes, strict=True)):
        return None
    (ops,) = ops_all
    out: list[tuple[float, float]] = []
    for i, ((counts, _), shape) in enumerate(zip(sides, shapes, strict=True)):
        if shape is not None:
            out.append((shape[0] / ops, shape[0] / ops))
            continue
        gaps = sorted((abs(i - j), hi - lo) for j, (lo, hi) in _levelled(shapes))
        below = counts[0] - gaps[0][1]
        out.append(((below if below > 0 else counts[0]) / ops, counts[0] / ops))
    return out


def _levelled(shapes: Sequence[tuple[int, int] | None]) -> list[tuple[int, tuple[int, int]]]:
    return [(j, shape) for j, shape in enumerate(shapes) if shape is not None]


def constant_ratio(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float, float]:
    """B/A of two constants given as ranges (:func:`count_constants`): ``(ratio, lowest,
    highest)``. ``ratio`` is the figure shown: 1.0 where one side's reading equals the
    other's (a side of one level on the other's upper level), else the ratio of the
    measured values (each range's upper end: a two-level side's lower level, a one-level
    side's value); ``lowest``/``highest`` are the extremes over the ranges' ends (a change
    is called only when both lie beyond the minimum effect on one side of 1).

    Raises:
        ValueError: a range that is not positive and ordered.
    """
    for lo, hi in (a, b):
        if not 0 < lo <= hi:
            raise ValueError(f"a constant's range must be positive and ordered, got {lo}..{hi}")
    ratios = [y / x for x in a for y in b]
    shown = 1.0 if any(x == y for x in a for y in b) else b[1] / a[1]
    return shown, min(ratios), max(ratios)


@dataclass(frozen=True)
class Count:
    """One execution's count of a row: ``value`` instructions per operation (the figure
    shown, a median over blocks), ``spread`` the relative block-to-block range (0:
    exact), and, where they were kept, the block counts themselves (``blocks``,
    instructions per block, with ``ops_per_block``) from which :func:`count_reading`
    tells an ``exact+extra`` row. A count without blocks (a bisection recorded before
    they were kept) is read by its spread alone (:func:`count_kind`).

    Raises:
        ValueError: ``value`` not positive and finite, ``spread`` negative or not
            finite, a negative block count, or blocks with ``ops_per_block`` < 1.
    """

    value: float
    spread: float = 0.0
    blocks: tuple[int, ...] = ()
    ops_per_block: int = 0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.value) and self.value > 0):
            raise ValueError(f"instructions per operation must be positive, got {self.value}")
        if not (math.isfinite(self.spread) and self.spread >= 0):
            raise ValueError(f"spread must be >= 0, got {self.spread}")
        if self.blocks and (self.ops_per_block < 1 or min(self.blocks) < 0):
            raise ValueError("block counts need operations per block >= 1 and counts >= 0")


@dataclass(frozen=True)
class CountReading:
    """How a row's counts over several executions are read (:func:`count_reading`).

    ``kind``: ``exact+extra`` where :func:`count_constants` reads the sides as a constant
    with whole extra events, else :func:`count_kind` of ``spread``, the largest relative
    range of the sides; ``constants``: each side's constant as a range (``exact+extra``
    only, else None).
    """

    kind: CountKind
    spread: float
    constants: tuple[tuple[float, float], ...] | None = None


def count_reading(sides: Sequence[Count]) -> CountReading:
    """The one reading of a row's counts in several executions (two for a comparison or
    a bisection's pair, a history's versions in order): their kind, the spread the kind
    rests on and, for ``exact+extra`` sides, their constants (:func:`count_constants`;
    only when every side kept its blocks, else the spread decides).

    Raises:
        ValueError: no sides.
    """
    if not sides:
        raise ValueError("no counts to read")
    s = max(c.spread for c in sides)
    if all(c.blocks for c in sides):
        constants = count_constants([(c.blocks, c.ops_per_block) for c in sides])
        if constants is not None:
            return CountReading("exact+extra", s, tuple(constants))
    return CountReading(count_kind(s), s)


def count_effect(spread: float, min_effect: float) -> float | None:
    """The smallest relative change of a count called a change, by :func:`count_kind`:
    ``min_effect`` for an exact row, ``max(min_effect, VARYING_FLOOR, VARYING_FACTOR ×
    spread)`` for a varying one, None for a random one (never called from counts; its
    rank interval is shown, :func:`rank_ratio_interval`).

    Raises:
        ValueError: as :func:`count_kind`.
    """
    kind = count_kind(spread)
    if kind == "exact":
        return min_effect
    if kind == "varying":
        return max(min_effect, VARYING_FLOOR, VARYING_FACTOR * spread)
    return None


def rank_ratio_interval(
    a: Sequence[float], b: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float, float, float]:
    """B/A of two samples of a random count: the Hodges–Lehmann estimate of the shift of
    the log counts with its Mann–Whitney interval, and the two-sided p-value.

    ``a``, ``b``: per-operation counts of each repetition (positive). The estimate is
    the median of all ``log b_j - log a_i``; the interval their ``c``-th smallest and
    largest, ``c = round(nm/2 - z·√(nm(n+m+1)/12))`` from the normal approximation of the
    Mann–Whitney U distribution (Hollander & Wolfe, *Nonparametric Statistical
    Methods*, §4.3); the p-value
    ``scipy.stats.mannwhitneyu``'s. Returns ``(ratio, low, high, p)``; ``low``/``high``
    are NaN when the samples are too small for an interval at ``confidence`` (three
    repetitions a side cannot give a 95 % one).

    Raises:
        ValueError: an empty sample, a count that is not positive and finite, or
            ``confidence`` outside (0, 1).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    for name, xs in (("A", a), ("B", b)):
        if not xs:
            raise ValueError(f"{name} has no counts")
        if any(not math.isfinite(x) or x <= 0 for x in xs):
            raise ValueError(f"{name}'s counts must be positive and finite")
    from scipy.stats import mannwhitneyu

    diffs = sorted(math.log(y) - math.log(x) for x in a for y in b)
    n = len(diffs)
    ratio = math.exp(statistics.median(diffs))
    z = statistics.NormalDist().inv_cdf((1 + confidence) / 2)
    c = round(n / 2 - z * math.sqrt(len(a) * len(b) * (len(a) + len(b) + 1) / 12))
    low = high = math.nan
    if c >= 1:  # D_(c) and D_(n + 1 - c), 1-based
        low, high = math.exp(diffs[c - 1]), math.exp(diffs[n - c])
    p = float(mannwhitneyu(b, a, alternative="two-sided").pvalue)
    return ratio, low, high, p


OTHER_FUNCTIONS = "(other functions)"
"""The remainder entry of a row's attribution (``harness/abh/suites/count_symbols.py``)."""


@dataclass(frozen=True)
class FunctionChange:
    """How one function's instructions per operation changed from run A to run B.

    ``library`` is the file name without its version (``libsodium.so``), so that a
    new soname still pairs; ``a``/``b`` are instructions per operation (0.0 where
    the function is not among a side's listed functions), ``delta`` = b - a, and
    ``share`` = delta / (total b - total a) of the row (NaN when the totals are equal).
    """

    library: str
    function: str
    a: float
    b: float
    delta: float
    share: float


def library_stem(name: str) -> str:
    """``libsodium.so.23.3.0`` -> ``libsodium.so``; other names unchanged."""
    head, sep, _ = name.partition(".so.")
    return head + ".so" if sep else name


def function_changes(
    a: Sequence[FunctionCount], b: Sequence[FunctionCount], limit: int = 5
) -> list[FunctionChange]:
    """The ``limit`` functions whose instructions per operation changed most, A to B.

    ``a``, ``b``: a row's ``attribution`` in each run. Functions pair by
    (:func:`library_stem`, function name); the ``(other functions)`` remainder
    counts in the totals but is never listed. Largest absolute change first.
    A function outside one side's listed functions counts as 0.0 there, so with
    rows of many functions a change can be overstated by at most that side's
    remainder.
    """
    totals = [sum(f.instructions_per_op for f in side) for side in (a, b)]
    change = totals[1] - totals[0]
    table: dict[tuple[str, str], list[float]] = {}
    for k, side in enumerate((a, b)):
        for f in side:
            if f.function == OTHER_FUNCTIONS and not f.library:
                continue
            key = (library_stem(f.library), f.function)
            table.setdefault(key, [0.0, 0.0])[k] += f.instructions_per_op
    out = [
        FunctionChange(lib, fn, x, y, y - x, (y - x) / change if change else math.nan)
        for (lib, fn), (x, y) in table.items()
        if y != x
    ]
    out.sort(key=lambda c: (-abs(c.delta), c.library, c.function))
    return out[:limit]


CALLGRIND_TOTAL = 0.002
"""Callgrind vs plugin, a row's total: relative tolerance (measured -0.14 % to +0.06 %
on the deterministic rows of amd64, docs/counting.md)."""
CALLGRIND_REGION = 64
"""Instructions per block callgrind may count beyond the plugin: its region is the
driver's ``run_stage`` call, the plugin's starts after the START marker's system call
(measured +40 to +51 per block)."""
CALLGRIND_LIBRARY = 0.01
"""Per library holding at least :data:`CALLGRIND_SHARE` of the row: relative tolerance
(libc's heap code differs by up to 0.71 % under valgrind)."""
CALLGRIND_FUNCTION = 0.10
"""Per named function holding at least :data:`CALLGRIND_SHARE`: callgrind adds the
callee's PLT stub (two instructions per call) that the plugin leaves to the caller."""
CALLGRIND_SHARE = 0.01
"""Libraries and functions under this share of the row are listed, never checked."""
TOTAL = "(total)"
"""The ``function`` of an :class:`Agreement` line for the whole row."""
LIBRARY = "(library)"
"""The ``function`` of an :class:`Agreement` line for one library's total."""


@dataclass(frozen=True)
class Agreement:
    """One line of the plugin-vs-callgrind check: instructions per operation.

    ``function`` is :data:`TOTAL` (``library`` empty), :data:`LIBRARY` or a
    function name; ``ok`` is None for a line too small to be checked.
    """

    library: str
    function: str
    plugin: float
    callgrind: float
    ok: bool | None

    @property
    def ratio(self) -> float:
        """callgrind / plugin (NaN when the plugin counted nothing)."""
        return self.callgrind / self.plugin if self.plugin else math.nan


def callgrind_agreement(row: Row, functions: int = 5, spread: float = 0.0) -> list[Agreement]:
    """A counted row's totals, libraries and top named functions, plugin vs callgrind.

    ``row`` must carry ``callgrind`` (harness ``--callgrind``). Lines: the row's
    total (within :data:`CALLGRIND_TOTAL` plus :data:`CALLGRIND_REGION` per block),
    each library of the plugin's attribution (:data:`CALLGRIND_LIBRARY` when it holds
    :data:`CALLGRIND_SHARE`), and the plugin's ``functions`` largest named functions
    (:data:`CALLGRIND_FUNCTION`; libraries and functions also get the region's
    allowance, which falls on ``run_stage`` and libc). Code no symbol names is
    compared per library only: callgrind gives the code a tail jump reaches to the
    exported function that jumped, the plugin to ``(no symbol)`` (docs/counting.md).

    ``spread``: the row's relative range over the executions and repetitions the plugin
    counted it in (:func:`spread` of all their blocks; 0 for an exact row). Callgrind's
    figure is one more execution, so a row whose count is not a constant (allocator,
    random keys: :func:`count_kind`) is compared with its own spread on top of the
    constants' tolerances: :data:`VARYING_FACTOR` × ``spread`` of the row's total, as
    a relative tolerance of the total and as instructions per operation every library
    and function may lie apart (how much of the variation falls in which library is not
    measured, so each may take all of it).

    Raises:
        ValueError: the row has no counts or no callgrind check, or ``spread`` is
            negative or not finite.
    """
    if not math.isfinite(spread) or spread < 0:
        raise ValueError(f"spread must be a fraction >= 0, got {spread}")
    check = row.callgrind
    if check is None or not row.instructions:
        raise ValueError(f"{row.scheme} {row.operation}: no callgrind check in this row")
    plugin_total = sum(row.instructions) / (len(row.instructions) * row.ops_per_block)
    varies = VARYING_FACTOR * spread * plugin_total
    slack = CALLGRIND_REGION / row.ops_per_block + varies
    delta = check.instructions_per_op - plugin_total
    out = [
        Agreement(
            "",
            TOTAL,
            plugin_total,
            check.instructions_per_op,
            abs(delta) <= CALLGRIND_TOTAL * plugin_total + slack,
        )
    ]
    for library, n in check.plugin_libraries.items():
        c = check.libraries.get(library, 0.0)
        big = n >= CALLGRIND_SHARE * plugin_total
        out.append(
            Agreement(
                library,
                LIBRARY,
                n,
                c,
                abs(c - n) <= CALLGRIND_LIBRARY * n + slack if big else None,
            )
        )
    theirs = {(f.library, f.function): f.instructions_per_op for f in check.functions}
    named = [
        f
        for f in check.plugin_functions
        if not f.function.startswith("(") and f.library != "(unknown)"
    ]
    for f in named[:functions]:
        n = f.instructions_per_op
        c = theirs.get((f.library, f.function), 0.0)
        big = n >= CALLGRIND_SHARE * plugin_total
        out.append(
            Agreement(
                f.library,
                f.function,
                n,
                c,
                abs(c - n) <= CALLGRIND_FUNCTION * n + slack if big else None,
            )
        )
    return out
