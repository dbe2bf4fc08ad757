"""Rules of the blindsig driver that the harness re-checks: calibration and budget.

``drivers/blindsig_rules.c`` implements the same functions with the same integer
arithmetic (see CONTRACT.md, "Calibration" and "Budget"); the harness holds
every decision of the driver against these. Standard library only.
"""

from __future__ import annotations

SUITE = "blindsig"


CS_OPERATIONS: tuple[str, ...] = (
    "key_generation",
    "r_derivation",
    "blinding_secret_derivation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
)
RSA_OPERATIONS: tuple[str, ...] = (
    "key_generation",
    "blinding",
    "signing",
    "unblinding",
    "verifying",
)
TALER_OPERATIONS: tuple[str, ...] = (
    "taler_key_generation",
    "taler_blinding_input",
    "taler_blinding",
    "taler_signing",
    "taler_unblinding",
    "taler_verifying",
)
"""The rows of GNUnet's scheme-independent layer (``GNUNET_CRYPTO_blind_sign*``, 0.21+),
the calls GNU Taler makes, for CS and RSA alike, after the raw chain's
(``drivers/blindsig_taler.h``)."""
OPERATIONS: dict[str, tuple[str, ...]] = {
    "CS": CS_OPERATIONS + TALER_OPERATIONS,
    "RSA": RSA_OPERATIONS + TALER_OPERATIONS,
}
"""Every operation id the driver may print per scheme, in chain order."""
KEY_GENERATIONS: tuple[str, ...] = ("key_generation", "taler_key_generation")
"""The key generation rows: they leave the adaptive loop together (``more nokeygen``)."""
TALER_LAYER_MEASURED = "measured"
"""``meta taler_layer`` of a run that measures the layer's rows; any other value says
why they are absent."""


def run_operations(scheme: str, taler_layer: bool) -> tuple[str, ...]:
    """The operations one pair of ``scheme`` ("CS" or "RSA") has in a run, in chain order.

    ``taler_layer``: the driver measures the layer's rows (``meta taler_layer``
    is :data:`TALER_LAYER_MEASURED`).

    Raises:
        KeyError: an unknown scheme.
    """
    raw = {"CS": CS_OPERATIONS, "RSA": RSA_OPERATIONS}[scheme]
    return raw + TALER_OPERATIONS if taler_layer else raw


DEFAULT_RSA_BITS: tuple[int, ...] = (1024, 2048, 3072, 4096)
# Mirrors drivers/blindsig.h so bad values fail as usage errors, not as driver errors.
MIN_RSA_BITS = 512
MAX_RSA_BITS = 16384
MAX_RSA_SIZES = 16
MAX_ITERATIONS = 1_000_000
MAX_REPETITIONS = 100_000
MAX_WARMUP = 1000
MAX_MIN_BLOCK_NS = 60_000_000_000
MAX_TIME_S = 1e6

# The calibration constants of drivers/blindsig.h (see next_block_size() and
# default_min_block_ns() in drivers/blindsig_rules.c and here).
CALIBRATION_MAX_OPS = 100_000
MIN_BLOCK_TICKS = 100
MIN_BLOCK_FLOOR_NS = 1_000_000


SchemeKey = tuple[str, int | None]
"""(scheme, RSA modulus bits); bits is None for CS."""


def round_up_125(n: int) -> int:
    """Smallest number of the series 1, 2, 5, 10, 20, 50, ... that is >= ``n``.

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    decade = 1
    while True:
        for step in (1, 2, 5):
            if n <= step * decade:
                return step * decade
        decade *= 10


def next_block_size(ops: int, block_ns: int, min_block_ns: int, max_ops: int) -> int:
    """The calibration rule: the next number of operations per timed block.

    A block of ``ops`` operations took ``block_ns`` ns. If that is shorter
    than ``min_block_ns``, the next size is the one that would take
    ``min_block_ns`` at the measured rate plus 25 % headroom (so noise does
    not leave the next block just short again), or ``10 * ops`` when the
    block read 0 ns (no rate known), rounded up to the 1-2-5 series (block
    sizes then agree between runs whose measurements differ by a few
    percent) and capped at ``max_ops``. Otherwise, and when
    ``min_block_ns`` is 0 (calibration off) or ``ops`` is at the cap, the
    size stays: it never shrinks.

    A clock with tick T reads a block of true length t as k ticks with
    t < (k + 1) T, so for k >= 1 the rate is overestimated by at most
    (k + 1) / k and the next block is at most twice as large as needed; a
    block that reads too long only costs another round.

    Same integer arithmetic as ``next_block_size()`` in drivers/blindsig_rules.c; the
    harness checks every calibration step of the driver against this.

    Args:
        ops: operations in the measured block (>= 1).
        block_ns: its wall time in ns (>= 0).
        min_block_ns: calibration target in ns; 0 turns calibration off.
        max_ops: largest block calibration may choose.

    Returns:
        The next block size, >= ``ops``.
    """
    if min_block_ns == 0 or block_ns >= min_block_ns or ops >= max_ops:
        return ops
    if block_ns == 0:
        want = ops * 10
    else:
        want = (ops * min_block_ns * 5 + 4 * block_ns - 1) // (4 * block_ns)
    return min(round_up_125(min(want, max_ops)), max_ops)


def default_min_block_ns(resolution_ns: int | None, observed_tick_ns: int | None) -> int:
    """Default calibration target: 100 clock ticks, at least 1 ms, at most 60 s.

    The tick is the coarser of ``clock_getres()`` and the smallest step seen
    between consecutive reads (a clock may report 1 ns and still move in
    coarser steps). 100 ticks keep quantisation under 1 % of a block; 1 ms
    keeps scheduler noise of a few µs small against it.

    Args:
        resolution_ns: clock_getres(CLOCK_MONOTONIC) in ns, None if unknown.
        observed_tick_ns: smallest observed non-zero step in ns, None if none seen.

    Returns:
        The minimum block time in ns.
    """
    tick = max(resolution_ns or 0, observed_tick_ns or 0)
    return min(max(MIN_BLOCK_TICKS * tick, MIN_BLOCK_FLOOR_NS), MAX_MIN_BLOCK_NS)


def should_stop_repetitions(
    taken: int, requested: int, elapsed_ns: int, max_time_ns: int | None
) -> bool:
    """The budget rule, applied after each timed repetition of one scheme and size.

    Stop when ``requested`` repetitions are taken, or when the pair's
    elapsed time (calibration and warmups included) has reached
    ``max_time_ns`` and at least one repetition was taken, like
    ``openssl speed -seconds``.

    Args:
        taken: timed repetitions taken so far.
        requested: ``--repetitions``.
        elapsed_ns: wall time since the pair started, ns.
        max_time_ns: ``--max-time`` in ns; None means no budget.
    """
    if taken >= requested:
        return True
    return max_time_ns is not None and taken >= 1 and elapsed_ns >= max_time_ns
