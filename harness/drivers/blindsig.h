/*
 * blindsig.h -- what the parts of the blindsig driver share.
 *
 *   blindsig.c          the program, its output and protocol (top comment),
 *                       main and the meta lines
 *   blindsig_options.c  the command line: usage and value parsers
 *   blindsig_rules.c    calibration and budget rules
 *   blindsig_pairs.c    the (scheme, bits) pairs: repetitions in turn,
 *                       the --interactive protocol, sample/discard/done lines
 *   blindsig_measure.c  one repetition of the chain and the clock probe:
 *                       everything inside and around the timed blocks, in
 *                       ONE translation unit with blindsig_fresh_cs.h,
 *                       blindsig_fresh_rsa.h, blindsig_repeated.h and
 *                       blindsig_keys.h (static definitions, included
 *                       once), so that the compiler inlines the timed code
 *                       as it did when blindsig was one file and the
 *                       counted instructions stay the same
 *
 * Include it first.
 */
#ifndef ARCHBENCH_BLINDSIG_H
#define ARCHBENCH_BLINDSIG_H

#include <gnunet/gnunet_util_lib.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

#define CS_OPS 7
#define RSA_OPS 5
#define MAX_OPS 7


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

/**
 * Keys of the last key generation block of one pair (--reuse-keys,
 * blindsig_keys.h).
 */
struct KeptKeys
{
  unsigned int n;                              /* keys kept; 0: none */
  struct GNUNET_CRYPTO_CsPrivateKey *cs_priv;  /* n of each for CS */
  struct GNUNET_CRYPTO_CsPublicKey *cs_pub;
  struct GNUNET_CRYPTO_RsaPrivateKey **rsa_priv;  /* n of each for RSA */
  struct GNUNET_CRYPTO_RsaPublicKey **rsa_pub;
};

/* blindsig_pairs.c: --progress. */
extern bool show_progress;

/* blindsig_measure.c: --inject-fault and --fresh-items (see there). */
extern const char *inject_fault;
extern bool fresh_items;

/* blindsig_measure.c: record the first failure of a pair in @a v. */
void verdict_fail (struct Verdict *v, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* blindsig_measure.c: one repetition of the chain of the pair (@a bits 0:
 * CS, else RSA-bits): block k times ops[k] operations, ns[k] gets its wall
 * time (0 for a skipped block); @a rep numbers the pair's repetitions (all
 * kinds, from 0) for messages.  @a kept is the pair's KeptKeys with
 * --reuse-keys, else NULL; @a reuse_keys: skip key generation and use them. */
void blindsig_repetition (unsigned int bits, const unsigned int *ops,
                          uint64_t *ns, unsigned int rep, struct Verdict *v,
                          struct KeptKeys *kept, bool reuse_keys);

/* blindsig_measure.c: free the keys a pair kept. */
void blindsig_kept_keys_free (struct KeptKeys *k);

/* blindsig_measure.c: the clock probe, through the blocks' own now_ns(). */
void probe_clock (struct ClockInfo *ci);

/* blindsig_measure.c: --count-markers (count_marker.h, count_inputs.h). */
void blindsig_count_markers_on (void);
bool blindsig_count_markers (void);

/* blindsig_measure.c: --count-keys: load DIR/count-key-rsa-<bits>.key
 * (false after a message on stderr); the sizes loaded, in order, into
 * @a bits (room for @a max), returning how many. */
bool blindsig_count_load_key (const char *dir, unsigned int bits);
unsigned int blindsig_fixed_rsa_keys (unsigned int *bits, unsigned int max);

/* blindsig_rules.c */
unsigned int next_block_size (unsigned int ops, uint64_t block_ns,
                              uint64_t min_block_ns, unsigned int max_ops);
bool should_stop_repetitions (unsigned int taken, unsigned int requested,
                              uint64_t elapsed_ns, uint64_t max_time_ns);
uint64_t default_min_block_ns (const struct ClockInfo *ci);

/* blindsig_options.c */
void usage (FILE *out);
bool parse_u64 (const char *text, uint64_t max, uint64_t *out);
bool parse_count (const char *text, unsigned long max, unsigned int *out);
bool parse_seconds (const char *text, uint64_t *out_ns);
bool parse_rsa_bits (const char *text, unsigned int *sizes,
                     unsigned int *count);
int print_next_block_size (const char *text);

/* blindsig_pairs.c: measure the CS pair (if @a run_cs) and one RSA pair per
 * size in @a rsa_sizes, printing their lines. */
void run_pairs (const struct Config *cfg, bool run_cs,
                const unsigned int *rsa_sizes, unsigned int rsa_count);

#endif
