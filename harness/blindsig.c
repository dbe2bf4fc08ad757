/*
 * blindsig -- archbench's in-container blind-signature timing driver.
 *
 * Times the Clause Blind Schnorr (CS) and RSA-FDH blind-signature primitives
 * of GNUnet's libgnunetutil, operation by operation, and prints line-based
 * TSV on stdout for harness/archbench_harness.py (see harness/CONTRACT.md for
 * the JSON the harness turns it into).
 *
 * Output lines (fields separated by one TAB, no field contains TAB/newline):
 *
 *   archbench-blindsig  <format version>                 first line
 *   meta      <key>  <value>                             build/run facts
 *   discard   <scheme> <bits> <operation> <kind> <ops> <index> <ns>
 *   sample    <scheme> <bits> <operation> <ops> <rep> <ns>
 *   done      <scheme> <bits> <taken> <budget_exhausted> <elapsed_ns> <stop>
 *   invalid   <scheme> <bits> <reason>                   at most one per pair
 *   end       ok                                         last line
 *
 * With --interactive, two more lines frame every repetition, and the driver
 * waits for one answer line on stdin after each:
 *
 *   start     <scheme> <bits>                            answer: go
 *   ask       <scheme> <bits> <kind> <index>             answer: more | more
 *                                                        nokeygen | stop
 *
 * (<kind> calibration, warmup or sample; "stop" after a sample repetition
 * ends the pair with <stop> "target").  The harness reads the machine's
 * noise counters at both and decides when a confidence interval is narrow
 * enough, so that rule has one implementation, in Python.  With
 * --reuse-keys, "more nokeygen" (only after a sample repetition) makes the
 * pair's next repetition skip its key generation block: the other blocks
 * run on the keys the last key generation block made (kept untimed, after
 * that block: blindsig_keys.h), and no key generation sample is printed.
 * Key generation samples therefore count on their own: their <rep> is
 * 0, 1, ... over the blocks that ran, the other operations' over all timed
 * repetitions.  The harness uses this to let key generation, whose time
 * varies from key to key by the prime search, leave the adaptive loop after
 * --min-repetitions blocks.
 *
 * <scheme> is CS or RSA, <bits> is the RSA modulus size (0 for CS), <ns> is
 * the CLOCK_MONOTONIC wall time of one block of <ops> operations.  "discard"
 * blocks (<kind> calibration or warmup, <index> counting from 0 within the
 * kind) were run and thrown away; "sample" blocks are the measurement.
 * "done" closes every (scheme, bits) pair: <taken> timed repetitions,
 * <budget_exhausted> 1 when --max-time stopped it early, <elapsed_ns> the
 * pair's own time (the sum of its repetitions, calibration and warmups
 * included), <stop> why it stopped: repetitions (all --repetitions taken),
 * budget, target (--interactive answer) or invalid.  Pairs take turns
 * (--order interleaved, the default) or run one after the other.  A
 * missing "end" line means the output is truncated (crash) and must be
 * discarded.
 *
 * Calibration, warmups and the time budget, per (scheme, bits) pair:
 *   every repetition runs the whole chain (key generation .. verifying) with
 *   its own block size per operation.  While calibrating, each operation's
 *   size follows next_block_size() after each repetition; the first
 *   repetition in which no size grows ends calibration (sizes are then
 *   fixed), and it and the following ones are the --warmup repetitions
 *   (discarded), then the timed ones.  blindsig_rules.py implements the
 *   same rule and checks every calibration step against it.
 *
 * Exit status: 0 when the run completed (even if some scheme is invalid),
 * 64 on usage errors, 70 on internal errors (no usable clock).
 *
 * Written against the GNUnet 0.19/0.20 blind-signature API, which is
 * identical for everything used here.  GNUNET_UTIL_VERSION cannot tell the
 * two apart (both define 0x000A0104), so the Makefile passes the
 * pkg-config version in ABH_GNUNET_VERSION_NUM for the guard below.
 */

#include <gnunet/gnunet_util_lib.h>

#include "clock_ns.h"
#include "count_marker.h"
#include "count_inputs.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* GNUnet 0.21 reworked the blind-signature API (session nonces, blinded
 * message structs); fail at compile time with a clear message rather than
 * with a screen of type errors. */
#if defined(ABH_GNUNET_VERSION_NUM) && ABH_GNUNET_VERSION_NUM >= 2100
#error "blindsig supports the GNUnet 0.19/0.20 blind-signature API only"
#endif

#ifndef ABH_GNUNET_VERSION
#define ABH_GNUNET_VERSION "unknown"
#endif

#define BLINDSIG_FORMAT "archbench-blindsig"
#define BLINDSIG_FORMAT_VERSION 2

#define EXIT_USAGE 64
#define EXIT_INTERNAL 70

/* Size of each random message in bytes; a coin public key is 32 bytes, a
 * hash 64: the cost of hashing this is negligible against the curve/RSA
 * arithmetic either way. */
#define MSG_LEN 64

#define REASON_LEN 320
#define MAX_RSA_SIZES 16
#define MIN_RSA_BITS 512
#define MAX_RSA_BITS 16384
#define MAX_ITERATIONS 1000000UL
#define MAX_REPETITIONS 100000UL
#define MAX_WARMUP 1000UL
/* An hour-long minimum block is a typo, not a measurement plan. */
#define MAX_MIN_BLOCK_NS UINT64_C (60000000000)
#define MAX_TIME_S 1e6

/* Calibration never grows a block beyond this many operations (unless
 * --iterations asks for more): every operation of the largest block needs
 * its own prepared item (~1 KB for CS), and 100000 sub-microsecond CS
 * unblindings already take several clock-resolution-proof milliseconds. */
#define CALIBRATION_MAX_OPS 100000U
/* Default minimum block: this many clock ticks, and at least 1 ms, so that
 * a block is never within 1 % of one tick and scheduler noise of a few
 * microseconds stays small against it. */
#define MIN_BLOCK_TICKS 100
#define MIN_BLOCK_FLOOR_NS UINT64_C (1000000)

/* Clock probe: enough back-to-back reads for a stable mean read cost and
 * for a coarse clock to show some ticks, bounded so that an emulated clock
 * (a syscall per read under QEMU) still takes well under a second. */
#define CLOCK_PROBE_WARM_READS 1000UL
#define CLOCK_PROBE_MIN_READS 20000UL
#define CLOCK_PROBE_MAX_READS 2000000UL
#define CLOCK_PROBE_MIN_CHANGES 1000UL

#define CS_OPS 7
#define RSA_OPS 5
#define MAX_OPS 7

/* The exchange derives r with "rw" for withdrawals; any fixed seed works. */
static const char cs_r_seed[] = "rw";

/* Operation ids in chain order; the index is the stage index below. */
static const char *const cs_op_names[CS_OPS] = {
  "key_generation", "r_derivation", "blinding_secret_derivation",
  "blinding", "signing", "unblinding", "verifying"
};
static const char *const rsa_op_names[RSA_OPS] = {
  "key_generation", "blinding", "signing", "unblinding", "verifying"
};

/**
 * First failure seen for one scheme/size; later failures only add noise.
 */
struct Verdict
{
  bool failed;
  char reason[REASON_LEN];
};

/**
 * What the clock probe found out about CLOCK_MONOTONIC.
 */
struct ClockInfo
{
  uint64_t resolution_ns;      /* clock_getres; 0 if it failed */
  uint64_t observed_tick_ns;   /* smallest non-zero step; 0 if none seen */
  double pair_overhead_ns;     /* mean t1 - t0 of two back-to-back reads */
  unsigned long reads;
};

/**
 * Everything the command line decided.
 */
struct Config
{
  unsigned int iterations;     /* starting (and smallest) block size */
  unsigned int repetitions;    /* timed repetitions wanted per pair */
  unsigned int warmup;         /* discarded repetitions before them */
  uint64_t min_block_ns;       /* calibration target; 0: no calibration */
  unsigned int max_block_ops;  /* calibration never grows beyond this */
  uint64_t max_time_ns;        /* budget per pair; 0: none */
  bool interactive;            /* --interactive: start/ask lines, answers */
  bool reuse_keys;             /* --reuse-keys: honour "more nokeygen" */
  bool interleave;             /* --order interleaved (default) */
  uint64_t seed;               /* --seed: shuffles the interleaved order */
};

static bool show_progress;

/* Testing aid (--inject-fault): scheme whose first signature of the first
 * repetition gets its message corrupted before verification, so the
 * harness's invalid path can be exercised end to end.  NULL normally. */
static const char *inject_fault;

/* --fresh-items: every operation of a block on its own freshly prepared
 * item (cs_repetition(), rsa_repetition()).  Default false: one call after
 * another on the same item, as GNUnet's perf programs time it
 * (blindsig_repeated.h). */
static bool fresh_items;

struct Verdict;
static void cs_repetition_repeated (const unsigned int *ops, uint64_t *ns,
                                    unsigned int rep, struct Verdict *v);
static void rsa_repetition_repeated (unsigned int bits,
                                     const unsigned int *ops, uint64_t *ns,
                                     unsigned int rep, struct Verdict *v);


static void
verdict_fail (struct Verdict *v, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

static void
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


/* ------------------------------------------------------- calibration */

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
static unsigned int
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
static bool
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
static uint64_t
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


/**
 * Measure CLOCK_MONOTONIC the way the blocks use it: through now_ns().
 */
static void
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
  uint32_t bit = GNUNET_CRYPTO_random_u32 (GNUNET_CRYPTO_QUALITY_WEAK,
                                           (uint32_t) (len * 8));

  buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
}


/* ------------------------------------------------------------------ CS */

/**
 * Everything one CS blind-signature exchange needs, kept together so a
 * block can walk the array.
 */
struct CsItem
{
  struct GNUNET_CRYPTO_CsPrivateKey priv;
  struct GNUNET_CRYPTO_CsPublicKey pub;
  struct GNUNET_CRYPTO_CsNonce nonce;          /* r derivation + signing */
  struct GNUNET_CRYPTO_CsNonce blind_seed;
  struct GNUNET_CRYPTO_CsRSecret r[2];
  struct GNUNET_CRYPTO_CsRPublic r_pub[2];
  struct GNUNET_CRYPTO_CsBlindingSecret bs[2];
  struct GNUNET_CRYPTO_CsC c[2];
  struct GNUNET_CRYPTO_CsRPublic blinded_r_pub[2];
  struct GNUNET_CRYPTO_CsBlindS blinded_s;
  struct GNUNET_CRYPTO_CsSignature sig;
  unsigned int b;
  enum GNUNET_GenericReturnValue verified;
  unsigned int src;                            /* item whose chain this copies */
  bool dead;                                   /* an earlier step failed */
  unsigned char msg[MSG_LEN];
};

struct CsRep
{
  struct CsItem *it;
  unsigned int n_keys;                         /* keys generated */
  unsigned int n;                              /* block of the current step */
};


static void
cs_keygen (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    GNUNET_CRYPTO_cs_private_key_generate (&it[i].priv);
    GNUNET_CRYPTO_cs_private_key_get_public (&it[i].priv, &it[i].pub);
  }
}


/* Items beyond the key generation block sign with its keys, as an exchange
 * signs many coins with one denomination key. */
static void
cs_keys_share (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsRep *rep = ctx;

  for (unsigned int i = lo; i < hi; i++)
  {
    rep->it[i].priv = rep->it[i % rep->n_keys].priv;
    rep->it[i].pub = rep->it[i % rep->n_keys].pub;
  }
}


/* Tail of every later CS step: an item beyond the step's block becomes a
 * copy of item i mod n, whose chain is complete up to this step.  Computing
 * the tail instead would cost ~0.2 ms of blinding per sub-microsecond
 * unblinding (seconds per repetition); copying keeps every item's chain
 * consistent, and every later step is deterministic, so a copy's signature
 * must equal its original's byte for byte (checked in cs_verify_tail()). */
static void
cs_copy_tail (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsRep *rep = ctx;

  for (unsigned int i = lo; i < hi; i++)
    rep->it[i] = rep->it[i % rep->n];
}


static void
cs_r_derive (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    GNUNET_CRYPTO_cs_r_derive (&it[i].nonce, cs_r_seed, &it[i].priv, it[i].r);
    GNUNET_CRYPTO_cs_r_get_public (&it[i].r[0], &it[i].r_pub[0]);
    GNUNET_CRYPTO_cs_r_get_public (&it[i].r[1], &it[i].r_pub[1]);
  }
}


static void
cs_bs_derive (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_blinding_secrets_derive (&it[i].blind_seed, it[i].bs);
}


static void
cs_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_calc_blinded_c (it[i].bs, it[i].r_pub, &it[i].pub,
                                     it[i].msg, sizeof (it[i].msg), it[i].c,
                                     it[i].blinded_r_pub);
}


static void
cs_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    it[i].b = GNUNET_CRYPTO_cs_sign_derive (&it[i].priv, it[i].r, it[i].c,
                                            &it[i].nonce, &it[i].blinded_s);
}


static void
cs_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    GNUNET_CRYPTO_cs_unblind (&it[i].blinded_s, &it[i].bs[it[i].b],
                              &it[i].sig.s_scalar);
  }
}


static void
cs_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].verified = GNUNET_CRYPTO_cs_verify (&it[i].sig, &it[i].pub,
                                              it[i].msg, sizeof (it[i].msg));
  }
}


/* Tail of the verification step.  An item that copies another item's
 * chain and has the same key, message and signature bytes is verified by
 * that item (checked earlier: src < i); anything else is verified here. */
static void
cs_verify_tail (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    const struct CsItem *o = &it[it[i].src];

    if (it[i].dead)
      continue;
    if ((it[i].src != i) && (! o->dead)
        && (0 == memcmp (&it[i].sig, &o->sig, sizeof (it[i].sig)))
        && (0 == memcmp (&it[i].pub, &o->pub, sizeof (it[i].pub)))
        && (0 == memcmp (it[i].msg, o->msg, sizeof (it[i].msg))))
      it[i].verified = o->verified;
    else
      cs_verify (ctx, i, i + 1);
  }
}


/**
 * One CS repetition: block i of the chain times ops[i] operations.  Every
 * item of the largest block is brought through every step (by computation
 * inside a block, by copying outside: see cs_copy_tail()) and every
 * signature is verified.
 *
 * @param ops block size per operation, in cs_op_names order
 * @param[out] ns block wall time per operation
 * @param rep repetition number of this pair (0-based, all kinds), for messages
 */
static void
cs_repetition (const unsigned int *ops, uint64_t *ns, unsigned int rep,
               struct Verdict *v)
{
  const unsigned int m = max_of (ops, CS_OPS);
  struct CsRep ctx = { .it = calloc (m, sizeof (struct CsItem)),
                       .n_keys = ops[0] };
  struct CsItem *it = ctx.it;

  if (! fresh_items)
  {
    free (it);
    cs_repetition_repeated (ops, ns, rep, v);
    return;
  }
  memset (ns, 0, CS_OPS * sizeof (*ns));
  if (NULL == it)
  {
    verdict_fail (v, "out of memory allocating %u CS items", m);
    return;
  }
  for (unsigned int i = 0; i < m; i++)
  {
    count_input_bytes (GNUNET_CRYPTO_QUALITY_NONCE, it[i].msg,
                       sizeof (it[i].msg));
    count_input_bytes (GNUNET_CRYPTO_QUALITY_NONCE, &it[i].nonce,
                       sizeof (it[i].nonce));
    count_input_bytes (GNUNET_CRYPTO_QUALITY_STRONG, &it[i].blind_seed,
                       sizeof (it[i].blind_seed));
    it[i].src = i;
  }

  ns[0] = run_stage (&cs_keygen, &cs_keys_share, &ctx, ops[0], m);
  ctx.n = ops[1];
  ns[1] = run_stage (&cs_r_derive, &cs_copy_tail, &ctx, ops[1], m);
  ctx.n = ops[2];
  ns[2] = run_stage (&cs_bs_derive, &cs_copy_tail, &ctx, ops[2], m);
  ctx.n = ops[3];
  ns[3] = run_stage (&cs_blind, &cs_copy_tail, &ctx, ops[3], m);
  ctx.n = ops[4];
  ns[4] = run_stage (&cs_sign, &cs_copy_tail, &ctx, ops[4], m);
  for (unsigned int i = 0; i < m; i++)
    if (it[i].b > 1)
    {
      /* b indexes two-element arrays below. */
      verdict_fail (v, "cs_sign_derive returned b=%u (expected 0 or 1)",
                    it[i].b);
      it[i].dead = true;
    }
  ctx.n = ops[5];
  ns[5] = run_stage (&cs_unblind, &cs_copy_tail, &ctx, ops[5], m);
  /* The signature's point is the blinded R the signer picked; copying it
   * is bookkeeping, not part of the unblinding cost. */
  for (unsigned int i = 0; i < m; i++)
    if (! it[i].dead)
      it[i].sig.r_point = it[i].blinded_r_pub[it[i].b];
  if ((NULL != inject_fault) && (0 == strcmp (inject_fault, "CS"))
      && (0 == rep))
    flip_one_bit (it[0].msg, sizeof (it[0].msg));
  ns[6] = run_stage (&cs_verify, &cs_verify_tail, &ctx, ops[6], m);

  for (unsigned int i = 0; i < m; i++)
  {
    if (it[i].dead)
      continue;
    if (GNUNET_YES != it[i].verified)
    {
      verdict_fail (v, "CS signature %u of repetition %u did not verify", i,
                    rep);
      continue;
    }
    /* A copy's key and signature are its original's: one rejection each. */
    if (it[i].src != i)
      continue;
    flip_one_bit (it[i].msg, sizeof (it[i].msg));
    if (GNUNET_YES == GNUNET_CRYPTO_cs_verify (&it[i].sig, &it[i].pub,
                                               it[i].msg, sizeof (it[i].msg)))
      verdict_fail (v,
                    "CS signature %u of repetition %u verified a message with"
                    " one bit flipped", i, rep);
  }
  /* Key material should not linger in freed heap memory. */
  GNUNET_CRYPTO_zero_keys (it, m * sizeof (*it));
  free (it);
}


/* ----------------------------------------------------------------- RSA */

struct RsaItem
{
  struct GNUNET_CRYPTO_RsaPrivateKey *priv;
  struct GNUNET_CRYPTO_RsaPublicKey *pub;
  struct GNUNET_CRYPTO_RsaBlindingKeySecret bks;
  struct GNUNET_HashCode hash;                 /* of msg: the FDH input */
  void *blinded;
  size_t blinded_len;
  struct GNUNET_CRYPTO_RsaSignature *blinded_sig;
  struct GNUNET_CRYPTO_RsaSignature *sig;
  int blind_rc;
  enum GNUNET_GenericReturnValue verified;
  bool owns_key;                               /* priv/pub are not shared */
  bool dead;                                   /* an earlier step failed */
  unsigned char msg[MSG_LEN];
};

struct RsaRep
{
  struct RsaItem *it;
  unsigned int n_keys;                         /* keys generated */
  unsigned int bits;
};


static void
rsa_free_items (struct RsaItem *it, unsigned int n)
{
  for (unsigned int i = 0; i < n; i++)
  {
    if (NULL != it[i].sig)
      GNUNET_CRYPTO_rsa_signature_free (it[i].sig);
    if (NULL != it[i].blinded_sig)
      GNUNET_CRYPTO_rsa_signature_free (it[i].blinded_sig);
    if (NULL != it[i].blinded)
      GNUNET_free (it[i].blinded);
    if (! it[i].owns_key)
      continue;
    if (NULL != it[i].pub)
      GNUNET_CRYPTO_rsa_public_key_free (it[i].pub);
    if (NULL != it[i].priv)
      GNUNET_CRYPTO_rsa_private_key_free (it[i].priv);
  }
  GNUNET_CRYPTO_zero_keys (it, n * sizeof (*it));
  free (it);
}


static void
rsa_keygen (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaRep *rep = ctx;
  struct RsaItem *it = rep->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    it[i].owns_key = true;
    it[i].priv = GNUNET_CRYPTO_rsa_private_key_create (rep->bits);
    if (NULL != it[i].priv)
      it[i].pub = GNUNET_CRYPTO_rsa_private_key_get_public (it[i].priv);
  }
}


/* See cs_keys_share(); for RSA this is also what keeps emulated RSA-4096
 * from generating a key per calibrated verification. */
static void
rsa_keys_share (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaRep *rep = ctx;

  for (unsigned int i = lo; i < hi; i++)
  {
    rep->it[i].priv = rep->it[i % rep->n_keys].priv;
    rep->it[i].pub = rep->it[i % rep->n_keys].pub;
  }
}


static void
rsa_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].blind_rc = GNUNET_CRYPTO_rsa_blind (&it[i].hash, &it[i].bks,
                                              it[i].pub, &it[i].blinded,
                                              &it[i].blinded_len);
  }
}


static void
rsa_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].blinded_sig = GNUNET_CRYPTO_rsa_sign_blinded (it[i].priv,
                                                        it[i].blinded,
                                                        it[i].blinded_len);
  }
}


static void
rsa_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].sig = GNUNET_CRYPTO_rsa_unblind (it[i].blinded_sig, &it[i].bks,
                                           it[i].pub);
  }
}


static void
rsa_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].verified = GNUNET_CRYPTO_rsa_verify (&it[i].hash, it[i].sig,
                                               it[i].pub);
  }
}


/**
 * One RSA repetition; see cs_repetition().
 */
static void
rsa_repetition (unsigned int bits, const unsigned int *ops, uint64_t *ns,
                unsigned int rep, struct Verdict *v)
{
  const unsigned int m = max_of (ops, RSA_OPS);
  struct RsaRep ctx = { .it = calloc (m, sizeof (struct RsaItem)),
                        .n_keys = ops[0],
                        .bits = bits };
  struct RsaItem *it = ctx.it;

  if (! fresh_items)
  {
    free (it);
    rsa_repetition_repeated (bits, ops, ns, rep, v);
    return;
  }
  memset (ns, 0, RSA_OPS * sizeof (*ns));
  if (NULL == it)
  {
    verdict_fail (v, "out of memory allocating %u RSA items", m);
    return;
  }
  for (unsigned int i = 0; i < m; i++)
  {
    count_input_bytes (GNUNET_CRYPTO_QUALITY_NONCE, it[i].msg,
                       sizeof (it[i].msg));
    GNUNET_CRYPTO_hash (it[i].msg, sizeof (it[i].msg), &it[i].hash);
    count_input_bytes (GNUNET_CRYPTO_QUALITY_STRONG, &it[i].bks,
                       sizeof (it[i].bks));
  }

  ns[0] = run_stage (&rsa_keygen, &rsa_keys_share, &ctx, ops[0], m);
  for (unsigned int i = 0; i < m; i++)
    if ((NULL == it[i].priv) || (NULL == it[i].pub))
    {
      verdict_fail (v, "RSA-%u key generation %u failed", bits,
                    i % ctx.n_keys);
      it[i].dead = true;
    }
  /* Counting with --count-keys: the other operations use the fixed key
   * (count_inputs.h), the same for every item. */
  if ((m > 0) && (! it[0].dead))
  {
    struct GNUNET_CRYPTO_RsaPrivateKey *fixed = count_fixed_rsa_key (bits);

    for (unsigned int i = 0; (NULL != fixed) && (i < m); i++)
    {
      if (it[i].owns_key)
      {
        if (NULL != it[i].pub)
          GNUNET_CRYPTO_rsa_public_key_free (it[i].pub);
        if (NULL != it[i].priv)
          GNUNET_CRYPTO_rsa_private_key_free (it[i].priv);
      }
      it[i].owns_key = (0 == i);
      it[i].priv = (0 == i) ? fixed : it[0].priv;
      it[i].pub = (0 == i) ? GNUNET_CRYPTO_rsa_private_key_get_public (fixed)
                  : it[0].pub;
      it[i].dead = (NULL == it[0].pub);
    }
  }

  ns[1] = run_stage (&rsa_blind, NULL, &ctx, ops[1], m);
  for (unsigned int i = 0; i < m; i++)
    if ((! it[i].dead)
        && ((GNUNET_YES != it[i].blind_rc) || (NULL == it[i].blinded)))
    {
      verdict_fail (v, "rsa_blind of message %u failed (rc=%d)", i,
                    it[i].blind_rc);
      it[i].dead = true;
    }

  ns[2] = run_stage (&rsa_sign, NULL, &ctx, ops[2], m);
  for (unsigned int i = 0; i < m; i++)
    if ((! it[i].dead) && (NULL == it[i].blinded_sig))
    {
      verdict_fail (v, "rsa_sign_blinded of message %u failed", i);
      it[i].dead = true;
    }

  ns[3] = run_stage (&rsa_unblind, NULL, &ctx, ops[3], m);
  for (unsigned int i = 0; i < m; i++)
    if ((! it[i].dead) && (NULL == it[i].sig))
    {
      verdict_fail (v, "rsa_unblind of signature %u failed", i);
      it[i].dead = true;
    }

  if ((NULL != inject_fault) && (0 == strcmp (inject_fault, "RSA"))
      && (0 == rep))
    flip_one_bit ((unsigned char *) &it[0].hash, sizeof (it[0].hash));
  ns[4] = run_stage (&rsa_verify, NULL, &ctx, ops[4], m);

  for (unsigned int i = 0; i < m; i++)
  {
    struct GNUNET_HashCode flipped;

    if (it[i].dead)
      continue;
    if (GNUNET_OK != it[i].verified)
    {
      verdict_fail (v, "RSA-%u signature %u of repetition %u did not verify"
                    " (rc=%d)", bits, i, rep, (int) it[i].verified);
      continue;
    }
    flip_one_bit (it[i].msg, sizeof (it[i].msg));
    GNUNET_CRYPTO_hash (it[i].msg, sizeof (it[i].msg), &flipped);
    if (GNUNET_OK == GNUNET_CRYPTO_rsa_verify (&flipped, it[i].sig, it[i].pub))
      verdict_fail (v,
                    "RSA-%u signature %u of repetition %u verified a message"
                    " with one bit flipped", bits, i, rep);
  }
  rsa_free_items (it, m);
}


#include "blindsig_repeated.h"
#include "blindsig_keys.h"


/* ---------------------------------------------------------------- main */

static void
progress (const char *label, const char *what, unsigned int index,
          unsigned int total, unsigned int largest_block)
{
  if (! show_progress)
    return;
  if (0 == total)
    fprintf (stderr, "blindsig: %s %s %u done (largest block %u ops)\n",
             label, what, index + 1, largest_block);
  else
    fprintf (stderr, "blindsig: %s %s %u/%u done\n", label, what, index + 1,
             total);
}


/**
 * The state of one (scheme, bits) pair between its repetitions, so that
 * repetitions of different pairs can be interleaved.
 */
struct Pair
{
  const char *scheme;
  unsigned int bits;           /* 0 for CS */
  unsigned int n_ops;
  const char *const *names;
  unsigned int ops[MAX_OPS];   /* current block size per operation */
  struct Verdict v;
  bool calibrating;
  bool budget_spent;
  bool finished;
  unsigned int calibration_rounds;
  unsigned int warmups;
  unsigned int taken;
  uint64_t elapsed;            /* sum of this pair's repetition times, ns */
  const char *stop;            /* why it finished: see stop_reason below */
  char label[32];
  unsigned int keygen_taken;   /* timed key generation blocks */
  bool skip_keygen;            /* answer "more nokeygen": next one skips it */
  struct KeptKeys kept;        /* --reuse-keys: the last key generation's */
};


static void
pair_init (struct Pair *p, const char *scheme, unsigned int bits,
           const struct Config *cfg)
{
  memset (p, 0, sizeof (*p));
  p->scheme = scheme;
  p->bits = bits;
  p->n_ops = (0 == bits) ? CS_OPS : RSA_OPS;
  p->names = (0 == bits) ? cs_op_names : rsa_op_names;
  p->calibrating = (0 != cfg->min_block_ns);
  p->stop = "repetitions";
  if (0 == bits)
    snprintf (p->label, sizeof (p->label), "%s", scheme);
  else
    snprintf (p->label, sizeof (p->label), "%s-%u", scheme, bits);
  for (unsigned int i = 0; i < p->n_ops; i++)
    p->ops[i] = cfg->iterations;
}


/**
 * --interactive: print @a line (a protocol line without newline), flush,
 * and read the harness's one-word answer into @a answer.  A closed stdin
 * means the harness is gone: nothing printed afterwards would be read.
 */
static void
converse (const char *line, char *answer, size_t size)
{
  printf ("%s\n", line);
  fflush (stdout);
  if (NULL == fgets (answer, (int) size, stdin))
  {
    fprintf (stderr, "blindsig: --interactive: stdin closed\n");
    exit (EXIT_INTERNAL);
  }
  answer[strcspn (answer, "\r\n")] = '\0';
}


/**
 * Run one repetition of pair @a p: calibration round, warmup or timed
 * repetition, decided as before; prints its discard/sample lines.  With
 * --interactive, a "start" line before and an "ask" line after it let the
 * harness read the machine's state around the repetition, and after a timed
 * repetition its answer "stop" ends the pair (the confidence-interval
 * target is reached; the rule lives in the harness only).  Sets
 * p->finished (and p->stop) once the pair is done.
 */
static void
pair_step (struct Pair *p, const struct Config *cfg)
{
  unsigned int next[MAX_OPS];
  uint64_t ns[MAX_OPS];
  bool grew = false;
  const char *kind;
  unsigned int index;
  char line[96];
  char answer[32] = "more";
  uint64_t t0;

  if (cfg->interactive)
  {
    snprintf (line, sizeof (line), "start\t%s\t%u", p->scheme, p->bits);
    converse (line, answer, sizeof (answer));
    if (0 != strcmp (answer, "go"))
    {
      fprintf (stderr, "blindsig: --interactive: expected 'go', got '%s'\n",
               answer);
      exit (EXIT_INTERNAL);
    }
  }
  kept_keys = cfg->reuse_keys ? &p->kept : NULL;
  kept_keys_reuse = p->skip_keygen && (p->kept.n > 0);
  if (p->skip_keygen && (0 == p->kept.n))
    verdict_fail (&p->v, "%s key generation: no key kept to reuse", p->label);
  t0 = now_ns ();
  if (0 == p->bits)
    cs_repetition (p->ops, ns, p->calibration_rounds + p->warmups + p->taken,
                   &p->v);
  else
    rsa_repetition (p->bits, p->ops, ns,
                    p->calibration_rounds + p->warmups + p->taken, &p->v);
  p->elapsed += now_ns () - t0;
  if (p->calibrating)
    for (unsigned int i = 0; i < p->n_ops; i++)
    {
      next[i] = next_block_size (p->ops[i], ns[i], cfg->min_block_ns,
                                 cfg->max_block_ops);
      grew = grew || (next[i] != p->ops[i]);
    }
  if (grew)
  {
    kind = "calibration";
    index = p->calibration_rounds;
    for (unsigned int i = 0; i < p->n_ops; i++)
      printf ("discard\t%s\t%u\t%s\tcalibration\t%u\t%u\t%" PRIu64 "\n",
              p->scheme, p->bits, p->names[i], p->ops[i], index, ns[i]);
    memcpy (p->ops, next, p->n_ops * sizeof (*p->ops));
    progress (p->label, "calibration round", p->calibration_rounds++, 0,
              max_of (p->ops, p->n_ops));
  }
  else if ((p->warmups < cfg->warmup) && (! p->budget_spent))
  {
    /* Sizes are final from the first repetition in which none grew. */
    p->calibrating = false;
    kind = "warmup";
    index = p->warmups;
    for (unsigned int i = 0; i < p->n_ops; i++)
      printf ("discard\t%s\t%u\t%s\twarmup\t%u\t%u\t%" PRIu64 "\n",
              p->scheme, p->bits, p->names[i], p->ops[i], index, ns[i]);
    progress (p->label, "warmup repetition", p->warmups++, cfg->warmup, 0);
  }
  else
  {
    p->calibrating = false;
    kind = "sample";
    index = p->taken;
    for (unsigned int i = 0; i < p->n_ops; i++)
    {
      /* Key generation (stage 0) has its own count: it may have left. */
      if ((0 == i) && kept_keys_reuse)
        continue;
      printf ("sample\t%s\t%u\t%s\t%u\t%u\t%" PRIu64 "\n",
              p->scheme, p->bits, p->names[i], p->ops[i],
              (0 == i) ? p->keygen_taken++ : index, ns[i]);
      /* A zero reading is "faster than the clock can tell", not a time. */
      if (0 == ns[i])
        verdict_fail (&p->v,
                      "%s block of %u ops measured 0 ns (below clock"
                      " resolution); raise --iterations or --min-block-ns",
                      p->names[i], p->ops[i]);
    }
    progress (p->label, "repetition", p->taken++, cfg->repetitions, 0);
  }
  p->budget_spent = (0 != cfg->max_time_ns)
                    && (p->elapsed >= cfg->max_time_ns);
  if (cfg->interactive)
  {
    snprintf (line, sizeof (line), "ask\t%s\t%u\t%s\t%u", p->scheme, p->bits,
              kind, index);
    converse (line, answer, sizeof (answer));
    p->skip_keygen = (0 == strcmp (answer, "more nokeygen"));
    if (p->skip_keygen
        && ((! cfg->reuse_keys) || (0 != strcmp (kind, "sample"))))
    {
      fprintf (stderr, "blindsig: --interactive: 'more nokeygen' needs"
               " --reuse-keys and comes only after a sample repetition\n");
      exit (EXIT_INTERNAL);
    }
    if ((! p->skip_keygen) && (0 != strcmp (answer, "more"))
        && (0 != strcmp (answer, "stop")))
    {
      fprintf (stderr, "blindsig: --interactive: expected 'more', 'more"
               " nokeygen' or 'stop', got '%s'\n", answer);
      exit (EXIT_INTERNAL);
    }
  }
  else
    fflush (stdout);
  /* Once invalid, further blocks cannot make the rows printable, and
   * RSA-4096 key generation is too slow to repeat for nothing: a failed
   * check ends the pair after the repetition it happened in. */
  if (p->v.failed)
  {
    p->finished = true;
    p->stop = "invalid";
  }
  else if ((0 == strcmp (kind, "sample")) && (0 == strcmp (answer, "stop")))
  {
    p->finished = true;
    p->stop = "target";
  }
  /* Calibration always completes: timed blocks need their final size. */
  else if ((! p->calibrating)
           && should_stop_repetitions (p->taken, cfg->repetitions, p->elapsed,
                                       cfg->max_time_ns))
  {
    p->finished = true;
    p->stop = (p->taken < cfg->repetitions) ? "budget" : "repetitions";
  }
}


/**
 * Close pair @a p: its "done" line (with the stop reason) and any
 * "invalid" line.
 */
static void
pair_finish (struct Pair *p, const struct Config *cfg)
{
  bool budget = (0 == strcmp (p->stop, "budget"));

  kept_keys_clear (&p->kept);
  if (show_progress && budget)
    fprintf (stderr, "blindsig: %s: budget of %.3f s spent after %u of %u"
             " repetitions\n", p->label, (double) cfg->max_time_ns / 1e9,
             p->taken, cfg->repetitions);
  printf ("done\t%s\t%u\t%u\t%d\t%" PRIu64 "\t%s\n", p->scheme, p->bits,
          p->taken, budget ? 1 : 0, p->elapsed, p->stop);
  if (p->v.failed)
    printf ("invalid\t%s\t%u\t%s\n", p->scheme, p->bits, p->v.reason);
  fflush (stdout);
}


/**
 * splitmix64 (Steele, Lea, Flood 2014): the order of pairs in each round
 * of --order interleaved, reproducible from the seed printed in meta.
 */
static uint64_t
splitmix64 (uint64_t *state)
{
  uint64_t z = (*state += UINT64_C (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 30)) * UINT64_C (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C (0x94D049BB133111EB);
  return z ^ (z >> 31);
}


/**
 * Measure every pair.  Sequential: each pair to its end, in the order
 * given.  Interleaved: in rounds, each unfinished pair takes one
 * repetition per round, in an order shuffled per round (Fisher-Yates with
 * splitmix64 from cfg->seed), so that a slow minute of the machine is
 * spread over all pairs instead of landing on one.
 */
static void
run_pairs (struct Pair *pairs, unsigned int n, const struct Config *cfg)
{
  unsigned int order[1 + MAX_RSA_SIZES];
  uint64_t state = cfg->seed;
  unsigned int left = n;

  if (! cfg->interleave)
  {
    for (unsigned int k = 0; k < n; k++)
    {
      while (! pairs[k].finished)
        pair_step (&pairs[k], cfg);
      pair_finish (&pairs[k], cfg);
    }
    return;
  }
  while (left > 0)
  {
    unsigned int m = 0;

    for (unsigned int k = 0; k < n; k++)
      if (! pairs[k].finished)
        order[m++] = k;
    for (unsigned int k = m; k > 1; k--)
    {
      unsigned int j = (unsigned int) (splitmix64 (&state) % k);
      unsigned int tmp = order[k - 1];

      order[k - 1] = order[j];
      order[j] = tmp;
    }
    for (unsigned int k = 0; k < m; k++)
    {
      struct Pair *p = &pairs[order[k]];

      pair_step (p, cfg);
      if (p->finished)
      {
        pair_finish (p, cfg);
        left--;
      }
    }
  }
}


static void
usage (FILE *out)
{
  fprintf (out,
           "usage: blindsig --iterations N --repetitions R [--warmup K]\n"
           "                [--min-block-ns NS] [--max-time S]"
           " [--scheme cs|rsa|all] [--rsa-bits B1,B2,...] [--progress]\n"
           "                [--count-markers [--count-keys DIR]] [--fresh-items]"
           " [--order O]"
           " [--seed N] [--interactive [--reuse-keys]]\n"
           "       blindsig --build-info\n"
           "\n"
           "  --iterations N    smallest operations per timed block"
           " (1..%lu)\n"
           "  --repetitions R   timed blocks per operation (1..%lu)\n"
           "  --warmup K        repetitions run and discarded first"
           " (0..%lu, default 1)\n"
           "  --min-block-ns NS grow blocks until one takes NS ns; 0 = keep"
           " N (default: max(%d clock ticks, 1 ms))\n"
           "  --max-time S      per scheme/size budget in seconds: no new"
           " repetition once spent (>= 1 taken)\n"
           "  --scheme S        cs, rsa or all (default all)\n"
           "  --rsa-bits LIST   RSA modulus sizes in bits, %d..%d"
           " (default 1024,2048,3072,4096)\n"
           "  --progress        report finished repetitions on stderr\n"
           "  --count-markers   mark every block for the QEMU counting plugin"
           " and fix\n"
           "                    every input (count_inputs.h)\n"
           "  --count-keys DIR  with --count-markers: after key generation,"
           " RSA uses the\n"
           "                    fixed key DIR/count-key-rsa-<bits>.key\n"
           "  --order O         interleaved (default: pairs take turns, one"
           " repetition each, shuffled per round) or sequential\n"
           "  --seed N          seed of the interleaved order"
           " (default: clock)\n"
           "  --interactive     print start/ask lines around each repetition"
           " and read go / more|stop on stdin\n"
           "  --reuse-keys      with --interactive: keep each key generation's"
           " keys; the answer\n"
           "                    'more nokeygen' skips the next repetition's key"
           " generation block and reuses them\n"
           "  --fresh-items     every operation of a block on its own fresh item"
           " (default: one call after another on the same item, as GNUnet's"
           " perf_crypto_* programs)\n"
           "  --build-info      print the meta lines and exit\n"
           "  --inject-fault S  testing only: corrupt one cs|rsa message"
           " before verification\n"
           "  --next-block-size OPS,NS,MIN,MAX  testing only: print the"
           " calibration rule's answer\n",
           MAX_ITERATIONS, MAX_REPETITIONS, MAX_WARMUP, MIN_BLOCK_TICKS,
           MIN_RSA_BITS, MAX_RSA_BITS);
}


static bool
parse_u64 (const char *text, uint64_t max, uint64_t *out)
{
  char *end;
  unsigned long long value;

  if ((NULL == text) || ('\0' == *text) || ('-' == *text) || ('+' == *text))
    return false;
  errno = 0;
  value = strtoull (text, &end, 10);
  if ((0 != errno) || ('\0' != *end) || (value > max))
    return false;
  *out = (uint64_t) value;
  return true;
}


static bool
parse_count (const char *text, unsigned long max, unsigned int *out)
{
  uint64_t value;

  if ((! parse_u64 (text, max, &value)) || (0 == value))
    return false;
  *out = (unsigned int) value;
  return true;
}


static bool
parse_seconds (const char *text, uint64_t *out_ns)
{
  char *end;
  double value;

  if ((NULL == text) || ('\0' == *text))
    return false;
  errno = 0;
  value = strtod (text, &end);
  /* "! (value > 0)" also rejects NaN. */
  if ((0 != errno) || ('\0' != *end) || (! (value > 0)) || (value > MAX_TIME_S))
    return false;
  *out_ns = (uint64_t) (value * 1e9 + 0.5);
  if (0 == *out_ns)
    *out_ns = 1;
  return true;
}


static bool
parse_rsa_bits (const char *text, unsigned int *sizes, unsigned int *count)
{
  char buf[256];
  char *save = NULL;

  if (strlen (text) >= sizeof (buf))
    return false;
  strcpy (buf, text);
  *count = 0;
  for (char *tok = strtok_r (buf, ",", &save); NULL != tok;
       tok = strtok_r (NULL, ",", &save))
  {
    unsigned int bits;

    if ((*count >= MAX_RSA_SIZES)
        || (! parse_count (tok, MAX_RSA_BITS, &bits))
        || (bits < MIN_RSA_BITS))
      return false;
    for (unsigned int j = 0; j < *count; j++)
      if (sizes[j] == bits)
        return false;                  /* would duplicate rows */
    sizes[(*count)++] = bits;
  }
  return *count > 0;
}


/**
 * Testing aid: "OPS,NS,MIN,MAX" -> next_block_size() on stdout, so the
 * harness's tests can hold the C rule against the Python one.
 */
static int
print_next_block_size (const char *text)
{
  uint64_t v[4];
  char buf[128];
  char *save = NULL;
  unsigned int k = 0;

  if (strlen (text) >= sizeof (buf))
    return EXIT_USAGE;
  strcpy (buf, text);
  for (char *tok = strtok_r (buf, ",", &save); NULL != tok;
       tok = strtok_r (NULL, ",", &save))
    if ((k >= 4) || (! parse_u64 (tok, UINT64_MAX, &v[k++])))
      return EXIT_USAGE;
  if ((4 != k) || (v[0] < 1) || (v[0] > MAX_ITERATIONS)
      || (v[2] > MAX_MIN_BLOCK_NS) || (v[3] < 1) || (v[3] > MAX_ITERATIONS))
    return EXIT_USAGE;
  printf ("%u\n", next_block_size ((unsigned int) v[0], v[1], v[2],
                                   (unsigned int) v[3]));
  return 0;
}


static void
print_meta (const struct Config *cfg, const struct ClockInfo *ci)
{
  struct timespec res;

  printf ("meta\tgnunet_build_version\t%s\n", ABH_GNUNET_VERSION);
  printf ("meta\tclock\tCLOCK_MONOTONIC\n");
  printf ("meta\tmessage_bytes\t%d\n", MSG_LEN);
  printf ("meta\tinputs\t%s\n", fresh_items ? "fresh" : "repeated");
  if (count_n_keys > 0)
  {
    /* --count-keys: RSA after key generation uses these fixed keys. */
    printf ("meta\tfixed_rsa_keys\t");
    for (unsigned int i = 0; i < count_n_keys; i++)
      printf ("%s%u", (i > 0) ? "," : "", count_keys[i].bits);
    printf ("\n");
  }
  if (NULL == ci)
  {
    if (0 == clock_getres (CLOCK_MONOTONIC, &res))
      printf ("meta\tclock_resolution_ns\t%" PRIu64 "\n",
              (uint64_t) res.tv_sec * UINT64_C (1000000000)
              + (uint64_t) res.tv_nsec);
    return;
  }
  if (0 != ci->resolution_ns)
    printf ("meta\tclock_resolution_ns\t%" PRIu64 "\n", ci->resolution_ns);
  if (0 != ci->observed_tick_ns)
    printf ("meta\tclock_observed_tick_ns\t%" PRIu64 "\n",
            ci->observed_tick_ns);
  printf ("meta\tclock_pair_overhead_ns\t%.2f\n", ci->pair_overhead_ns);
  printf ("meta\tclock_probe_reads\t%lu\n", ci->reads);
  printf ("meta\titerations\t%u\n", cfg->iterations);
  printf ("meta\trepetitions\t%u\n", cfg->repetitions);
  printf ("meta\twarmup\t%u\n", cfg->warmup);
  printf ("meta\tmin_block_ns\t%" PRIu64 "\n", cfg->min_block_ns);
  printf ("meta\tmax_block_ops\t%u\n", cfg->max_block_ops);
  printf ("meta\tmax_time_ns\t%" PRIu64 "\n", cfg->max_time_ns);
  printf ("meta\torder\t%s\n", cfg->interleave ? "interleaved" : "sequential");
  printf ("meta\torder_seed\t%" PRIu64 "\n", cfg->seed);
}


int
main (int argc, char **argv)
{
  static const struct option options[] = {
    { "iterations", required_argument, NULL, 'n' },
    { "repetitions", required_argument, NULL, 'r' },
    { "warmup", required_argument, NULL, 'w' },
    { "min-block-ns", required_argument, NULL, 'm' },
    { "max-time", required_argument, NULL, 't' },
    { "scheme", required_argument, NULL, 's' },
    { "rsa-bits", required_argument, NULL, 'b' },
    { "progress", no_argument, NULL, 'p' },
    { "count-markers", no_argument, NULL, 'c' },
    { "count-keys", required_argument, NULL, 'K' },
    { "fresh-items", no_argument, NULL, 'F' },
    { "build-info", no_argument, NULL, 'i' },
    { "inject-fault", required_argument, NULL, 'f' },
    { "next-block-size", required_argument, NULL, 'x' },
    { "interactive", no_argument, NULL, 'a' },
    { "reuse-keys", no_argument, NULL, 'k' },
    { "order", required_argument, NULL, 'o' },
    { "seed", required_argument, NULL, 'S' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  struct Config cfg = { .warmup = 1, .interleave = true };
  struct ClockInfo ci;
  struct Pair pairs[1 + MAX_RSA_SIZES];
  unsigned int n_pairs = 0;
  bool seed_given = false;
  bool min_block_given = false;
  unsigned int rsa_sizes[MAX_RSA_SIZES] = { 1024, 2048, 3072, 4096 };
  unsigned int rsa_count = 4;
  bool run_cs = true;
  bool run_rsa = true;
  bool build_info = false;
  const char *count_keys_dir = NULL;
  uint64_t value;
  int opt;

  while (-1 != (opt = getopt_long (argc, argv, "", options, NULL)))
  {
    switch (opt)
    {
    case 'n':
      if (! parse_count (optarg, MAX_ITERATIONS, &cfg.iterations))
      {
        fprintf (stderr, "blindsig: bad --iterations '%s'\n", optarg);
        return EXIT_USAGE;
      }
      break;
    case 'r':
      if (! parse_count (optarg, MAX_REPETITIONS, &cfg.repetitions))
      {
        fprintf (stderr, "blindsig: bad --repetitions '%s'\n", optarg);
        return EXIT_USAGE;
      }
      break;
    case 'w':
      if (! parse_u64 (optarg, MAX_WARMUP, &value))
      {
        fprintf (stderr, "blindsig: bad --warmup '%s' (0..%lu)\n", optarg,
                 MAX_WARMUP);
        return EXIT_USAGE;
      }
      cfg.warmup = (unsigned int) value;
      break;
    case 'm':
      if (! parse_u64 (optarg, MAX_MIN_BLOCK_NS, &cfg.min_block_ns))
      {
        fprintf (stderr, "blindsig: bad --min-block-ns '%s' (0..%" PRIu64
                 ")\n", optarg, MAX_MIN_BLOCK_NS);
        return EXIT_USAGE;
      }
      min_block_given = true;
      break;
    case 't':
      if (! parse_seconds (optarg, &cfg.max_time_ns))
      {
        fprintf (stderr, "blindsig: bad --max-time '%s' (seconds, > 0)\n",
                 optarg);
        return EXIT_USAGE;
      }
      break;
    case 's':
      run_cs = (0 == strcmp (optarg, "cs")) || (0 == strcmp (optarg, "all"));
      run_rsa = (0 == strcmp (optarg, "rsa")) || (0 == strcmp (optarg, "all"));
      if (! (run_cs || run_rsa))
      {
        fprintf (stderr, "blindsig: bad --scheme '%s' (cs, rsa or all)\n",
                 optarg);
        return EXIT_USAGE;
      }
      break;
    case 'b':
      if (! parse_rsa_bits (optarg, rsa_sizes, &rsa_count))
      {
        fprintf (stderr,
                 "blindsig: bad --rsa-bits '%s' (distinct sizes %d..%d,"
                 " comma-separated, at most %d)\n",
                 optarg, MIN_RSA_BITS, MAX_RSA_BITS, MAX_RSA_SIZES);
        return EXIT_USAGE;
      }
      break;
    case 'p':
      show_progress = true;
      break;
    case 'a':
      cfg.interactive = true;
      break;
    case 'k':
      cfg.reuse_keys = true;
      break;
    case 'o':
      if (0 == strcmp (optarg, "interleaved"))
        cfg.interleave = true;
      else if (0 == strcmp (optarg, "sequential"))
        cfg.interleave = false;
      else
      {
        fprintf (stderr, "blindsig: bad --order '%s' (interleaved or"
                 " sequential)\n", optarg);
        return EXIT_USAGE;
      }
      break;
    case 'S':
      if (! parse_u64 (optarg, (uint64_t) INT64_MAX, &cfg.seed))
      {
        fprintf (stderr, "blindsig: bad --seed '%s'\n", optarg);
        return EXIT_USAGE;
      }
      seed_given = true;
      break;
    case 'c':
      count_markers = true;
      count_fix_inputs (); /* count_inputs.h: same inputs in every run */
      break;
    case 'K':
      count_keys_dir = optarg;
      break;
    case 'F':
      fresh_items = true;
      break;
    case 'i':
      build_info = true;
      break;
    case 'f':
      if (0 == strcmp (optarg, "cs"))
        inject_fault = "CS";
      else if (0 == strcmp (optarg, "rsa"))
        inject_fault = "RSA";
      else
      {
        fprintf (stderr, "blindsig: bad --inject-fault '%s' (cs or rsa)\n",
                 optarg);
        return EXIT_USAGE;
      }
      break;
    case 'x':
      if (0 != print_next_block_size (optarg))
      {
        fprintf (stderr, "blindsig: bad --next-block-size '%s'"
                 " (OPS,NS,MIN,MAX)\n", optarg);
        return EXIT_USAGE;
      }
      return 0;
    case 'h':
      usage (stdout);
      return 0;
    default:
      usage (stderr);
      return EXIT_USAGE;
    }
  }
  if (optind != argc)
  {
    fprintf (stderr, "blindsig: unexpected argument '%s'\n", argv[optind]);
    usage (stderr);
    return EXIT_USAGE;
  }
  if (build_info)
  {
    printf ("%s\t%d\n", BLINDSIG_FORMAT, BLINDSIG_FORMAT_VERSION);
    print_meta (&cfg, NULL);
    printf ("end\tok\n");
    return 0;
  }
  if (cfg.reuse_keys && (! cfg.interactive))
  {
    fprintf (stderr, "blindsig: --reuse-keys needs --interactive (the"
             " harness says when key generation leaves)\n");
    return EXIT_USAGE;
  }
  if ((NULL != count_keys_dir) && (! count_markers))
  {
    fprintf (stderr, "blindsig: --count-keys needs --count-markers (fixed"
             " RSA keys are for counting only)\n");
    return EXIT_USAGE;
  }
  for (unsigned int k = 0; (NULL != count_keys_dir) && run_rsa
       && (k < rsa_count); k++)
    if (! count_load_key (count_keys_dir, rsa_sizes[k]))
      return EXIT_USAGE;
  if ((0 == cfg.iterations) || (0 == cfg.repetitions))
  {
    fprintf (stderr, "blindsig: --iterations and --repetitions are required\n");
    usage (stderr);
    return EXIT_USAGE;
  }

  /* The negative verification checks make libgnunetutil log a warning per
   * rejected signature; those are expected, so only errors get through. */
  GNUNET_log_setup ("blindsig", "ERROR", NULL);

  if (! seed_given)
    cfg.seed = (now_ns () ^ ((uint64_t) getpid () << 32))
               & (uint64_t) INT64_MAX;
  probe_clock (&ci);
  if (! min_block_given)
    cfg.min_block_ns = default_min_block_ns (&ci);
  cfg.max_block_ops = (cfg.iterations > CALIBRATION_MAX_OPS)
                      ? cfg.iterations : CALIBRATION_MAX_OPS;
  printf ("%s\t%d\n", BLINDSIG_FORMAT, BLINDSIG_FORMAT_VERSION);
  print_meta (&cfg, &ci);
  fflush (stdout);
  if (run_cs)
    pair_init (&pairs[n_pairs++], "CS", 0, &cfg);
  if (run_rsa)
    for (unsigned int k = 0; k < rsa_count; k++)
      pair_init (&pairs[n_pairs++], "RSA", rsa_sizes[k], &cfg);
  run_pairs (pairs, n_pairs, &cfg);
  printf ("end\tok\n");
  return (0 == fflush (stdout)) ? 0 : EXIT_INTERNAL;
}
