/*
 * blindsig_rules.c -- blindsig's mechanical rules: the calibration step,
 * the budget stop and the default minimum block.  blindsig_rules.py
 * implements the same functions with the same integer arithmetic, and the
 * harness checks every step of the driver against them.
 */
#include "blindsig.h"

#include <stdbool.h>
#include <stdint.h>

/**
 * Smallest number of the 1, 2, 5, 10, 20, 50, ... series that is >= @a n
 * (n >= 1).  Block sizes from a short series come out the same in runs
 * whose measurements differ by a few percent, so runs stay comparable.
 */
static uint64_t
round_up_125 (uint64_t n)
{
  uint64_t decade = 1;

  for (;;)
  {
    if (n <= decade)
      return decade;
    if (n <= 2 * decade)
      return 2 * decade;
    if (n <= 5 * decade)
      return 5 * decade;
    decade *= 10;
  }
}


/**
 * The calibration rule; next_block_size() in blindsig_rules.py is the
 * same function and the harness checks every step against it.
 *
 * A block of @a ops operations took @a block_ns.  If that is shorter than
 * @a min_block_ns, return the next size to try: the size that would take
 * min_block_ns at the measured rate plus 25 % headroom (so that noise does
 * not leave the next block just short again), or ten times the size when
 * the block read 0 ns (no rate known), rounded up to the 1-2-5 series and
 * capped at @a max_ops.  Otherwise, or with calibration off (min_block_ns
 * 0) or at the cap, return @a ops: a size never shrinks.
 *
 * Quantised reads can only make a block look shorter than it was by under
 * one tick, so a block of k >= 1 ticks overestimates the size needed by at
 * most (k + 1) / k; a block that reads too long just costs another round.
 */
unsigned int
next_block_size (unsigned int ops, uint64_t block_ns, uint64_t min_block_ns,
                 unsigned int max_ops)
{
  uint64_t want;

  if ((0 == min_block_ns) || (block_ns >= min_block_ns) || (ops >= max_ops))
    return ops;
  if (0 == block_ns)
    want = (uint64_t) ops * 10;
  else
    /* ops <= 1e6 and min_block_ns <= 6e10: no overflow before dividing. */
    want = ((uint64_t) ops * min_block_ns * 5 + 4 * block_ns - 1)
           / (4 * block_ns);
  if (want > max_ops)
    want = max_ops;
  want = round_up_125 (want);
  return (want > max_ops) ? max_ops : (unsigned int) want;
}


/**
 * The budget rule (should_stop_repetitions() in blindsig_rules.py): stop
 * taking timed repetitions once @a requested are taken, or once the pair has
 * used its budget and at least one was taken.
 */
bool
should_stop_repetitions (unsigned int taken, unsigned int requested,
                         uint64_t elapsed_ns, uint64_t max_time_ns)
{
  if (taken >= requested)
    return true;
  return (0 != max_time_ns) && (taken >= 1) && (elapsed_ns >= max_time_ns);
}


/**
 * Default minimum block: MIN_BLOCK_TICKS of the coarser of the reported
 * and the observed clock step, and at least MIN_BLOCK_FLOOR_NS
 * (default_min_block_ns() in blindsig_rules.py).
 */
uint64_t
default_min_block_ns (const struct ClockInfo *ci)
{
  uint64_t tick = ci->resolution_ns;
  uint64_t min_block;

  if (ci->observed_tick_ns > tick)
    tick = ci->observed_tick_ns;
  if (tick > MAX_MIN_BLOCK_NS / MIN_BLOCK_TICKS)
    return MAX_MIN_BLOCK_NS;
  min_block = tick * MIN_BLOCK_TICKS;
  return (min_block < MIN_BLOCK_FLOOR_NS) ? MIN_BLOCK_FLOOR_NS : min_block;
}
