"""B/A of interleaved rounds, and of separate runs' repeats, with a Student-t interval.

An interleaved session measures A and B in alternating rounds (A B B A …) on one engine,
so whatever the machine does in a round (another job, a frequency change, a noisy
neighbour) lands on both. The unit of the experiment is therefore the round, not the
block: blocks inside one round share that round's machine and are not independent
samples of the comparison.

The statistic is the geometric mean over rounds of the per-round ratio of medians,
``exp(mean_r log(median(B_r) / median(A_r)))``: a drift that multiplies both sides of a
round cancels in its ratio, and the mean of logs treats a 10 % change up and down alike.

Its interval is the Student-t interval of the mean of the per-round log ratios,
``mean ± t(n-1) · sd / √n`` (Student 1908; the one-sample t interval of any statistics
text, e.g. Wasserman, *All of Statistics*, §10.2), exponentiated. Each round's log
ratio carries everything that varies from round to round: the noise of both medians
inside the round and whatever part of the machine's drift does not cancel between A
and B; the t quantile gives the interval its nominal coverage with the few rounds (3 to
10) an interleaved session affords, where a bootstrap over rounds returns little more
than the range of three values. Its coverage under this project's noise models is
measured by ``benchmarks/coverage.py`` and pinned by ``tests/unit/test_coverage.py``.

Two runs that were *not* interleaved are compared by their container runs
(``--repeat``): each repeat's median is one draw of the run's level, and the pooled
two-sample t interval of the log medians (:func:`repeat_ratio_interval`) covers the
level's variation from container run to container run, as seen inside each
invocation. What they cannot see is a shift of the whole machine between the two
invocations; the interval adds it as a known spread per invocation (``between``: a
documented prior, :data:`archbench.analysis.comparison.DEFAULT_BETWEEN_RUNS`, that
``invoke compare --between-runs`` overrides). A run with a single container run gives no
estimate of its own spread; with no repeat on either side there is no interval at all.

Rows of one round are per-operation times (ns), so rounds whose blocks were calibrated
to different sizes still compare. scipy's special functions (fast to import) give the t
quantile; scipy.stats is not imported here (this module is loaded by ``invoke bench``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from archbench.analysis.stats import DEFAULT_CONFIDENCE

MIN_ROUNDS: Final = 3
"""Fewest paired rounds for an interval over rounds: with two, t(1) = 12.7 makes an
interval too wide to tell anything (the default of ``invoke history --rounds`` is 8)."""
MIN_BLOCKS: Final = 1
"""Fewest blocks per side in a round (one block is that round's median)."""

Round = tuple[Sequence[float], Sequence[float]]
"""One round: A's and B's per-operation times in ns."""


def _check(rounds: Sequence[Round]) -> None:
    if len(rounds) < MIN_ROUNDS:
        raise ValueError(f"{len(rounds)} paired rounds, need at least {MIN_ROUNDS}")
    for i, (a, b) in enumerate(rounds, 1):
        for name, xs in (("A", a), ("B", b)):
            if len(xs) < MIN_BLOCKS:
                raise ValueError(f"round {i}: {name} has no blocks")
            if any(not math.isfinite(x) or x <= 0 for x in xs):
                raise ValueError(f"round {i}: {name}'s times must be positive finite ns")


def round_ratios(rounds: Sequence[Round]) -> list[float]:
    """``median(B_r) / median(A_r)`` of every round, in round order (dimensionless).

    Raises:
        ValueError: as :func:`round_ratio_interval`.
    """
    _check(rounds)
    return [statistics.median(b) / statistics.median(a) for a, b in rounds]


def round_ratio(rounds: Sequence[Round]) -> float:
    """The geometric mean of :func:`round_ratios`: B/A with drift common to a round removed.

    Raises:
        ValueError: as :func:`round_ratio_interval`.
    """
    ratios = round_ratios(rounds)
    return math.exp(math.fsum(math.log(r) for r in ratios) / len(ratios))


def _t_quantile(p: float, df: float) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


def t_p_value(t: float, df: float) -> float:
    """Two-sided p-value of Student's t statistic ``t`` with ``df`` degrees of freedom.

    Raises:
        ValueError: ``df`` below 1.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if math.isinf(t):
        return 0.0
    from scipy.special import stdtr

    return float(2 * stdtr(df, -abs(t)))


@dataclass(frozen=True)
class TInterval:
    """A ratio B/A with its Student-t interval on the log scale.

    ``ratio``, ``low``, ``high``: dimensionless; ``sd``: the standard deviation of one
    log level (rounds: of one round's log ratio; repeats: the pooled one of a container
    run's log median), a relative spread; ``df``: the t quantile's degrees of freedom;
    ``p_value``: two-sided, of the hypothesis ratio = 1 (for false-discovery control).
    """

    ratio: float
    low: float
    high: float
    sd: float
    df: int
    p_value: float


def _t_interval(mean: float, sd: float, scale: float, df: int, confidence: float) -> TInterval:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    se = sd * scale
    half = _t_quantile((1 + confidence) / 2, df) * se
    t = mean / se if se > 0 else (0.0 if mean == 0 else math.copysign(math.inf, mean))
    return TInterval(
        ratio=math.exp(mean),
        low=math.exp(mean - half),
        high=math.exp(mean + half),
        sd=sd,
        df=df,
        p_value=t_p_value(t, df),
    )


def round_t_interval(
    rounds: Sequence[Round], *, confidence: float = DEFAULT_CONFIDENCE
) -> TInterval:
    """:func:`round_ratio` with the t interval of the per-round log ratios (module docs).

    ``rounds``: one ``(a_ns, b_ns)`` pair per round, per-operation times in ns, any number
    of blocks per side; ``df`` is ``len(rounds) - 1``.

    Raises:
        ValueError: fewer than :data:`MIN_ROUNDS` rounds, a side of a round without
            blocks, a time that is not positive and finite, or ``confidence`` outside
            (0, 1).
    """
    logs = [math.log(r) for r in round_ratios(rounds)]
    n = len(logs)
    mean = math.fsum(logs) / n
    return _t_interval(mean, statistics.stdev(logs), 1 / math.sqrt(n), n - 1, confidence)


def round_ratio_interval(
    rounds: Sequence[Round], *, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float, float]:
    """``(ratio, low, high)`` of :func:`round_t_interval`.

    Raises:
        ValueError: as :func:`round_t_interval`.
    """
    got = round_t_interval(rounds, confidence=confidence)
    return got.ratio, got.low, got.high


def repeat_ratio_interval(
    a_levels: Sequence[float],
    b_levels: Sequence[float],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    between: float = 0.0,
) -> TInterval | None:
    """B/A of two runs that were not interleaved, from their container runs' medians.

    ``a_levels``/``b_levels``: the median per-operation time (ns) of each container run
    (``--repeat``) of A and of B. The ratio is ``exp(mean log b - mean log a)``; the
    interval the pooled two-sample t interval of the log medians (Welch would need two
    repeats on each side; one variance for both runs of one row on one machine lets a
    side with one container run be compared with a side with several), ``df`` the sum of
    both sides' ``n - 1``. None when no side has two container runs: nothing measured
    says how much a run's level varies.

    ``between``: the standard deviation of one invocation's log level that the container
    runs of one invocation cannot see (the machine another machine when B ran: another
    job, another frequency; :data:`archbench.analysis.comparison.DEFAULT_BETWEEN_RUNS`),
    a relative spread. Each side carries one such draw, so the log ratio gains a known
    variance ``2 · between²`` (a prior). The half-width adds the two parts in
    quadrature, ``√((t(df)·se)² + (z·√2·between)²)``: never narrower than either part
    alone (Welch–Satterthwaite's pooled degrees of freedom would make the interval of one
    repeat against two narrower for a larger prior), conservative by at most the factor
    √2. The p-value is the normal one of the effective standard error ``half / z``, so
    that it lies below ``1 - confidence`` exactly when the interval excludes 1. 0 gives
    the interval of the container runs alone, which covers far less than its level when
    the machine shifts between invocations (``benchmarks/coverage.py``, ``runs-shift``).

    Raises:
        ValueError: a side without levels, a level that is not positive and finite,
            ``between`` negative or not finite, or ``confidence`` outside (0, 1).
    """
    if not math.isfinite(between) or between < 0:
        raise ValueError(f"between-run spread must be a fraction >= 0, got {between}")
    for name, xs in (("A", a_levels), ("B", b_levels)):
        if not xs:
            raise ValueError(f"{name} has no container runs")
        if any(not math.isfinite(x) or x <= 0 for x in xs):
            raise ValueError(f"{name}'s levels must be positive finite ns")
    la = [math.log(x) for x in a_levels]
    lb = [math.log(x) for x in b_levels]
    df = len(la) + len(lb) - 2
    if df < 1:
        return None
    ma, mb = math.fsum(la) / len(la), math.fsum(lb) / len(lb)
    ss = math.fsum((x - ma) ** 2 for x in la) + math.fsum((x - mb) ** 2 for x in lb)
    sd = math.sqrt(ss / df)
    scale = math.sqrt(1 / len(la) + 1 / len(lb))
    if between == 0:
        return _t_interval(mb - ma, sd, scale, df, confidence)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    z = statistics.NormalDist().inv_cdf((1 + confidence) / 2)
    mean = mb - ma
    half = math.hypot(
        _t_quantile((1 + confidence) / 2, df) * sd * scale, z * math.sqrt(2) * between
    )
    # The p-value of the same (conservative) test: the normal one of the effective
    # standard error half / z, so that "p < 1 - confidence" is "the interval excludes 1".
    p_value = 2 * statistics.NormalDist().cdf(-abs(mean) * z / half)
    return TInterval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), sd, df, p_value)
