/*
 * blindsig_measure.c -- one repetition of blindsig's chain (key generation
 * .. verifying) for one (scheme, bits) pair, and the clock probe: the
 * stage functions of both measurements, run_stage() around each timed
 * block, the checks of every signature, the kept keys and the fixed inputs
 * of counting mode.
 *
 * Everything inside a timed block and everything the compiler may inline
 * into it lives in this one translation unit: this file and the static
 * definitions it includes once, in the order blindsig.c had them
 * (blindsig_fresh_cs.h, blindsig_fresh_rsa.h: --fresh-items;
 * blindsig_repeated.h: the default; blindsig_keys.h: --reuse-keys), and
 * after them, for the 0.21 API only, blindsig_taler.h (the layer's rows).  Moving
 * a stage, run_stage() or a caller of now_ns() to another file changes the
 * compiler's inlining and so the instructions a block counts (as splitting
 * rsa_large.c showed); the state the timed code reads (count_marker.h,
 * count_inputs.h, the kept keys) stays static here, set through the
 * functions at the end.
 */
#include "blindsig.h"

#include <stddef.h>

/* libsodium calls count_rng_buf() (count_inputs.h) inside every CS key
 * generation block in counting mode.  GCC 14 (amd64) aligns its tight loop
 * to 32 bytes, so the padding executed before the loop depends on where the
 * function lands modulo 32: after the split it landed at 16 and each call
 * counted 2 nops more.  Pinned to a 32-byte boundary (where it lay when
 * blindsig was one file), its count no longer depends on the link layout. */
static void count_rng_buf (void *const buf, const size_t size)
  __attribute__ ((aligned (32)));

#include "clock_ns.h"
#include "counting/count_marker.h"
#include "counting/count_inputs.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Clock probe: enough back-to-back reads for a stable mean read cost and
 * for a coarse clock to show some ticks, bounded so that an emulated clock
 * (a syscall per read under QEMU) still takes well under a second. */
#define CLOCK_PROBE_WARM_READS 1000UL
#define CLOCK_PROBE_MIN_READS 20000UL
#define CLOCK_PROBE_MAX_READS 2000000UL
#define CLOCK_PROBE_MIN_CHANGES 1000UL

/* The exchange derives r with "rw" for withdrawals; any fixed seed works. */
static const char cs_r_seed[] = "rw";

/* Testing aid (--inject-fault): scheme whose first signature of the first
 * repetition gets its message corrupted before verification, so the
 * harness's invalid path can be exercised end to end.  NULL normally. */
const char *inject_fault;

/* --fresh-items: every operation of a block on its own freshly prepared
 * item (cs_repetition(), rsa_repetition()).  Default false: one call after
 * another on the same item, as GNUnet's perf programs time it
 * (blindsig_repeated.h). */
bool fresh_items;

struct Verdict;
static void cs_repetition_repeated (const unsigned int *ops, uint64_t *ns,
                                    unsigned int rep, struct Verdict *v);
static void rsa_repetition_repeated (unsigned int bits,
                                     const unsigned int *ops, uint64_t *ns,
                                     unsigned int rep, struct Verdict *v);



void
verdict_fail (struct Verdict *v, const char *fmt, ...)
{
  va_list ap;

  if (v->failed)
    return;
  v->failed = true;
  va_start (ap, fmt);
  vsnprintf (v->reason, sizeof (v->reason), fmt, ap);
  va_end (ap);
  /* The reason travels as one TSV field. */
  for (char *p = v->reason; '\0' != *p; p++)
    if (('\t' == *p) || ('\n' == *p) || ('\r' == *p))
      *p = ' ';
}


/**
 * Measure CLOCK_MONOTONIC the way the blocks use it: through now_ns().
 */
void
probe_clock (struct ClockInfo *ci)
{
  struct timespec res;
  uint64_t first;
  uint64_t prev;
  uint64_t min_step = UINT64_MAX;
  unsigned long changes = 0;
  unsigned long reads = 1;

  ci->resolution_ns = 0;
  if (0 == clock_getres (CLOCK_MONOTONIC, &res))
    ci->resolution_ns = (uint64_t) res.tv_sec * UINT64_C (1000000000)
                        + (uint64_t) res.tv_nsec;
  /* The first reads fault in the vDSO page and fill caches. */
  for (unsigned long i = 0; i < CLOCK_PROBE_WARM_READS; i++)
    (void) now_ns ();
  first = prev = now_ns ();
  while ((reads < CLOCK_PROBE_MAX_READS)
         && ((reads < CLOCK_PROBE_MIN_READS)
             || (changes < CLOCK_PROBE_MIN_CHANGES)))
  {
    uint64_t t = now_ns ();

    reads++;
    if (t != prev)
    {
      changes++;
      if (t - prev < min_step)
        min_step = t - prev;
    }
    prev = t;
  }
  ci->observed_tick_ns = (0 == changes) ? 0 : min_step;
  ci->pair_overhead_ns = (double) (prev - first) / (double) (reads - 1);
  ci->reads = reads;
}


/* ------------------------------------------------------------ stages */

/**
 * One step of the chain over items [lo, hi) of a repetition's context.
 */
typedef void (*StageFn) (void *ctx, unsigned int lo, unsigned int hi);

/* --reuse-keys (blindsig_keys.h): after a key generation block, keep its
 * keys; in a repetition that skips key generation, hand them out instead
 * of running the block. */
static bool kept_keys_substitute (StageFn timed, void *ctx, unsigned int n);
static void kept_keys_store (StageFn timed, void *ctx, unsigned int n);


/**
 * Run @a timed over the first @a n of @a m items inside one timed block,
 * then bring the remaining items through the same step untimed (with
 * @a tail, or @a timed when NULL) so that later steps, whose blocks may be
 * larger, find their inputs.
 *
 * @return the block's wall time in ns
 */
static uint64_t
run_stage (StageFn timed, StageFn tail, void *ctx, unsigned int n,
           unsigned int m)
{
  uint64_t t0;
  uint64_t elapsed;

  if (kept_keys_substitute (timed, ctx, n))
    elapsed = 0;                       /* key generation skipped: no block */
  else
  {
    /* --count-markers: the QEMU counting plugin counts the block's
     * instructions between these (see count_marker.h). */
    count_block_start ();
    t0 = now_ns ();
    timed (ctx, 0, n);
    elapsed = now_ns () - t0;
    count_block_stop ();
    kept_keys_store (timed, ctx, n);
  }
  if (n < m)
    ((NULL != tail) ? tail : timed)(ctx, n, m);
  return elapsed;
}


static unsigned int
max_of (const unsigned int *ops, unsigned int count)
{
  unsigned int m = 0;

  for (unsigned int i = 0; i < count; i++)
    if (ops[i] > m)
      m = ops[i];
  return m;
}


static void
flip_one_bit (unsigned char *buf, size_t len)
{
  uint32_t bit = abh_random_u32 (ABH_QUALITY_WEAK, (uint32_t) (len * 8));

  buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
}


#include "blindsig_fresh_cs.h"
#include "blindsig_fresh_rsa.h"
#include "blindsig_repeated.h"
#include "blindsig_keys.h"
#if ABH_TALER_LAYER
#include "blindsig_taler.h"
#endif


/* ------------------------------------------------- for the other files */

void
blindsig_repetition (unsigned int bits, const unsigned int *ops, uint64_t *ns,
                     unsigned int rep, struct Verdict *v,
                     struct KeptKeys *kept, bool reuse_keys)
{
  kept_keys = kept;
  kept_keys_reuse = reuse_keys;
  if (0 == bits)
    cs_repetition (ops, ns, rep, v);
  else
    rsa_repetition (bits, ops, ns, rep, v);
#if ABH_TALER_LAYER
  /* The layer's blocks follow the raw chain's in the same repetition, so
   * they share its calibration, order, budget and noise readings. */
  if (blindsig_taler_rows ())
  {
    const unsigned int base = (0 == bits) ? CS_OPS : RSA_OPS;

    taler_repetition (bits, ops + base, ns + base, rep, v);
  }
#endif
}


void
blindsig_kept_keys_free (struct KeptKeys *k)
{
  kept_keys_clear (k);
}


void
blindsig_count_markers_on (void)
{
  count_markers = true;
  count_fix_inputs (); /* count_inputs.h: same inputs in every run */
}


bool
blindsig_count_markers (void)
{
  return count_markers;
}


bool
blindsig_count_load_key (const char *dir, unsigned int bits)
{
  return count_load_key (dir, bits);
}


unsigned int
blindsig_fixed_rsa_keys (unsigned int *bits, unsigned int max)
{
  unsigned int n = (count_n_keys < max) ? count_n_keys : max;

  for (unsigned int i = 0; i < n; i++)
    bits[i] = count_keys[i].bits;
  return n;
}
