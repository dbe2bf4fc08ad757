/*
 * blindsig.h -- what the parts of the blindsig driver share.
 *
 *   blindsig.c          the program, its output and protocol (top comment),
 *                       main and the meta lines
 *   blindsig_options.c  the command line: usage and value parsers
 *   blindsig_rules.c    calibration and budget rules
 *   blindsig_pairs.c    the (scheme, bits) pairs: repetitions in turn,
 *                       the --interactive protocol, sample/discard/done lines
 *   blindsig_api.c      what differs between the GNUnet APIs outside the
 *                       timed code: library version, row notes, the
 *                       known-answer checks run before timing
 *   blindsig_measure.c  one repetition of the chain and the clock probe:
 *                       everything inside and around the timed blocks, in
 *                       ONE translation unit with blindsig_fresh_cs.h,
 *                       blindsig_fresh_rsa.h, blindsig_repeated.h,
 *                       blindsig_keys.h and (0.21 API) blindsig_taler.h
 *                       (static definitions, included
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

/* Which blind-signature API the headers declare, decided here, at compile
 * time, from the version gnunet_config.h (included by gnunet_util_lib.h)
 * states, and cross-checked three ways; any disagreement is an #error, never
 * a guess.
 *
 *   ABH_BSIG_API 19: GNUnet 0.19 and 0.20.  RSA blinds and verifies a
 *     GNUNET_HashCode and returns the blinded message as (void *, size_t);
 *     CS has one nonce type (CsNonce) and cs_sign_derive returns b.
 *   ABH_BSIG_API 21: GNUnet 0.21.0 to 0.27.0 (NEWS: "major revision of blind
 *     signature API", 2023-10; no change to any call used here since).  RSA
 *     blinds and verifies (message, size) into/from a RsaBlindedMessage; CS
 *     splits the nonce into CsSessionNonce (r derivation, signing; inside a
 *     CsBlindedMessage with c[2]) and CsBlindingNonce, and cs_sign_derive
 *     writes b into a CsBlindSignature.
 *
 * Cross-checks: (1) gnunet_common.h defines GNUNET_VA_ARG_ENUM up to 0.20
 * only, so it dates the headers independently of gnunet_config.h; (2) the
 * Makefile passes pkg-config's version (ABH_GNUNET_VERSION_NUM), whose
 * major.minor must be the headers'; (3) the Makefile compiles a probe
 * (blindsig_api_probe.c) against the headers and passes which API's types
 * exist (ABH_PROBE_BSIG_API), which also catches a development snapshot
 * between 0.20 and 0.21 that states 0.20 but has the new API.
 * Above 0.27 the probe alone decides (a newer release, or master, whose
 * calls are 0.27.0's).  The randomness API (the quality argument, gone on
 * master after 0.27.0) is probed apart (ABH_RANDOM_ARITY,
 * counting/count_inputs.h): master still states 0.27.0.
 * GNUNET_UTIL_VERSION cannot help: it is 0x000A0104 in every release.
 * Every call is written once per API below an #if on ABH_BSIG_API; the code
 * for API 19 is the code that measured 0.19/0.20 before the port. */
#define ABH_GNUNET_API_NUM ((GNUNET_MAJOR_VERSION) * 10000 \
                            + (GNUNET_MINOR_VERSION) * 100)
#if (! defined (GNUNET_MAJOR_VERSION)) || (! defined (GNUNET_MINOR_VERSION))
#error "blindsig: gnunet_config.h defines no GNUNET_MAJOR_VERSION/GNUNET_MINOR_VERSION: not GNUnet headers?"
/* get_version.sh writes "unknown" without a .version file or a release tag;
 * in #if an identifier is 0, so 0.0 is how "unknown" looks here. */
#elif ((GNUNET_MAJOR_VERSION + 0) == 0) && ((GNUNET_MINOR_VERSION + 0) == 0)
#error "blindsig: the GNUnet headers declare no version (GNUNET_VERSION \"unknown\"?): build GNUnet from a tree with .version or a v<x.y.z> tag"
#elif ABH_GNUNET_API_NUM < 1900
#error "blindsig: GNUnet older than 0.19 is not supported (its blind-signature API differs)"
#elif ABH_GNUNET_API_NUM < 2100
#define ABH_BSIG_API 19
#elif (ABH_GNUNET_API_NUM <= 2700) \
  || (defined (ABH_PROBE_BSIG_API) && (ABH_PROBE_BSIG_API == 21))
/* Above 0.27 the probe decides: GNUnet's master after 0.27.0 (and any later
 * release whose blind-signature calls are 0.27.0's) is the 0.21 API. */
#define ABH_BSIG_API 21
#else
#error "blindsig: GNUnet newer than 0.27 whose headers declare no blind-signature API blindsig knows (the Makefile's probe, drivers/blindsig_api_probe.c, did not find 0.27.0's): extend blindsig_api_probe.c and drivers/blindsig.h"
#endif
#if ! defined (ABH_BSIG_API)
/* (the #error above says why) */
#elif (ABH_BSIG_API == 19) != defined (GNUNET_VA_ARG_ENUM)
#error "blindsig: gnunet_config.h's version and gnunet_common.h disagree (GNUNET_VA_ARG_ENUM exists up to 0.20 only): mixed header sets?"
#elif defined (ABH_GNUNET_VERSION_NUM) \
  && (ABH_GNUNET_VERSION_NUM / 100 * 100 != ABH_GNUNET_API_NUM)
#error "blindsig: pkg-config's gnunetutil version and the headers' gnunet_config.h differ in major.minor: PKG_CONFIG_PATH and the include path point at different GNUnet installations"
#elif defined (ABH_PROBE_BSIG_API) && (ABH_PROBE_BSIG_API != ABH_BSIG_API)
#error "blindsig: the headers' version and their blind-signature types disagree (a development snapshot between 0.20 and 0.21?): build a release or a commit whose version matches its API"
#endif

#ifndef ABH_GNUNET_VERSION
#define ABH_GNUNET_VERSION "unknown"
#endif

/* meta gnunet_bsig_api: the oldest release of the API generation.
 * ABH_TALER_LAYER: the headers declare the scheme-independent layer
 * (GNUNET_CRYPTO_blind_sign_keys_create ..), new in 0.21.0, whose rows
 * (taler_*) blindsig_taler.h measures. */
#if ABH_BSIG_API == 19
#define ABH_BSIG_API_NAME "0.19"
#define ABH_TALER_LAYER 0
#else
#define ABH_BSIG_API_NAME "0.21"
#define ABH_TALER_LAYER 1
#endif

#define BLINDSIG_FORMAT "archbench-blindsig"
#define BLINDSIG_FORMAT_VERSION 2

#define EXIT_USAGE 64
#define EXIT_KAT 65
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

/* Operations of a pair: the raw chain's, then (with the layer's rows, see
 * blindsig_taler_rows()) TALER_OPS more, in blindsig_pairs.c's order. */
#define CS_OPS 7
#define RSA_OPS 5
#define TALER_OPS 6
#define MAX_OPS (CS_OPS + TALER_OPS)


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

/* blindsig_api.c: the version the loaded libgnunetutil reports; whether its
 * major.minor are the headers'; the meta row_note lines; the known-answer
 * checks (false, with the failed step in @a why, when a call does not give
 * the vector's bytes). */
const char *blindsig_library_version (void);
bool blindsig_library_matches (const char *version);
void blindsig_print_row_notes (void);
bool blindsig_kat_cs (char *why, size_t len);
bool blindsig_kat_rsa (char *why, size_t len);

/* blindsig_api.c: whether this run measures the layer's rows (0.21 API and
 * not --fresh-items), and if not, why (the text of meta taler_layer). */
bool blindsig_taler_rows (void);
const char *blindsig_taler_absent (void);

#if ABH_TALER_LAYER
/* blindsig_api.c: the layer's known-answer checks, on the vectors of
 * blindsig_kat_cs()/_rsa() (false, with the failed step in @a why). */
bool blindsig_kat_taler_cs (char *why, size_t len);
bool blindsig_kat_taler_rsa (char *why, size_t len);

/* blindsig_api.c: wrap a raw CS (@a cs, else RSA @a rsa, duplicated) key
 * into new layer key structs, as blind_sign_keys_create makes them (public
 * key and its hash included); false (nothing allocated) on failure. */
bool blindsig_taler_keys (const struct GNUNET_CRYPTO_CsPrivateKey *cs,
                          const struct GNUNET_CRYPTO_RsaPrivateKey *rsa,
                          struct GNUNET_CRYPTO_BlindSignPrivateKey **priv,
                          struct GNUNET_CRYPTO_BlindSignPublicKey **pub);
#endif

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
