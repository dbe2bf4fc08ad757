/*
 * sodium_bench: times libsodium's Ed25519, X25519, XSalsa20, SHA-256 and
 * SHA-512 the way pycryptopp's benchmark did (each row timed repeatedly,
 * summarised by the harness as best / Nth-best / mean / Nth-worst / worst).
 *
 * Usage:
 *   sodium_bench [--repetitions N] [--warmup W] [--sizes S1,S2,...]
 *                [--ops-per-sample K|auto] [--count-markers]
 *
 *   --repetitions N   timed samples per row (1..1000000, default 64)
 *   --warmup W        discarded samples per row before the timed ones
 *                     (0..1000000, default 4)
 *   --sizes LIST      message sizes in bytes of the XSalsa20 and SHA rows
 *                     (1..67108864 each, default 1000,10000,100000: the
 *                     small / medium / large sizes of pycryptopp's bench)
 *   --ops-per-sample  operations inside one timed sample.  K (1..10000000,
 *                     default 1) times K calls per sample; 1 times every
 *                     call on its own, like pycryptopp.  "auto" calibrates
 *                     each row: starting from 1, a sample shorter than
 *                     min_sample_ns grows to the count that would take
 *                     min_sample_ns at the measured rate plus 25 % (tenfold
 *                     when it read 0 ns), at most 1000000, where
 *                     min_sample_ns = 100 x max(clock_getres, smallest
 *                     observed clock step, mean cost of a pair of reads),
 *                     so that clock resolution and the reads themselves
 *                     stay below 1 % of a sample.  Calibration ends at the
 *                     second consecutive sample that is long enough (the
 *                     first call of a row is slowed by cold caches).
 *                     Sizes never shrink, so a sample after calibration
 *                     can still be shorter than min_sample_ns when the
 *                     machine speeds up.
 *   --count-markers   bracket every timed block (each calib, warmup and
 *                     sample line, in print order) with the counting
 *                     markers of count_marker.h, so that the archbench_count
 *                     QEMU plugin's k-th count belongs to the k-th such line
 *                     (paired by harness/suite_counting.py).
 *
 * Timing: clock_gettime(CLOCK_MONOTONIC) around each block of K calls;
 * inputs (keys, messages, nonces) are drawn before the clock starts.  Each
 * row is measured on its own: warmup samples, then timed ones.
 *
 * Checks (untimed, after every block, warmup and calibration included):
 *   Ed25519 key_generation  the secret key's embedded public key equals the
 *                           one returned, and the pair signs and verifies
 *   Ed25519 sign            the signature verifies; with one message bit
 *                           flipped it must not
 *   Ed25519 verify          every timed call returns success; a flipped
 *                           message bit fails
 *   X25519 derive           every call succeeds; the other party derives
 *                           the same shared secret
 *   XSalsa20 stream         the output differs from the input, and XORing
 *                           the keystream again restores the input
 *   SHA-256 / SHA-512       the FIPS 180-2 "abc" digests are checked once at
 *                           start (mismatch: exit 1); every call returns 0
 * A failed check prints an "invalid" line for its row and ends that row; the
 * other rows go on.
 *
 * Output (stdout, one record per line, fields separated by one space):
 *   meta <key> <value...>      sodium_version (sodium_version_string()),
 *                              sodium_header_version, runtime_features,
 *                              clock, clock_res_ns, clock_tick_ns (absent
 *                              when no step was seen), clock_pair_overhead_ns,
 *                              clock_probe_reads, min_sample_ns,
 *                              repetitions, warmup, sizes, ops_per_sample,
 *                              sign_message_bytes
 *   calib  <scheme> <operation> <param> <bytes_per_op> <ops> <ns>
 *   warmup <scheme> <operation> <param> <bytes_per_op> <ops> <ns>
 *   sample <scheme> <operation> <param> <bytes_per_op> <ops> <ns>
 *   invalid <scheme> <operation> <param> <bytes_per_op> <reason...>
 *   end
 * <param> is "-" or the message size in bytes; <bytes_per_op> is 0 for rows
 * that are not per byte; <ns> is the wall time of one block of <ops> calls
 * (it may be 0 when the clock is too coarse).  "end" is printed last, so
 * its absence means the driver died.  Exit status 0 with "end" even when
 * rows are invalid; 1 (message on stderr) on bad arguments or when libsodium
 * cannot be initialised or fails its self-test; 2 on a broken clock or
 * memory exhaustion.
 */
#define _POSIX_C_SOURCE 200809L
/* syscall () for the counting markers (count_marker.h). */
#define _DEFAULT_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "count_marker.h"

#define DEFAULT_REPETITIONS 64UL
#define DEFAULT_WARMUP 4UL
#define MAX_REPETITIONS 1000000UL
#define MAX_FIXED_OPS 10000000UL
#define MAX_AUTO_OPS 1000000UL
#define MAX_SIZES 32
#define MAX_SIZE_BYTES (64UL * 1024UL * 1024UL)
#define MIN_SAMPLE_TICKS 100
#define CALIB_CONFIRMATIONS 2
#define SIGN_MESSAGE_BYTES 32
#define REASON_LEN 200

#define CLOCK_PROBE_MIN_READS 20000UL
#define CLOCK_PROBE_MAX_READS 2000000UL
#define CLOCK_PROBE_MIN_CHANGES 1000UL

static const size_t default_sizes[] = { 1000, 10000, 100000 };

struct Options
{
  unsigned long repetitions;
  unsigned long warmup;
  unsigned long fixed_ops;     /* 0: auto */
  size_t sizes[MAX_SIZES];
  size_t n_sizes;
};

struct Clock
{
  uint64_t res_ns;
  uint64_t tick_ns;            /* 0: no step seen */
  double pair_overhead_ns;
  unsigned long reads;
  uint64_t min_sample_ns;
};

/* One row being measured: scheme, operation and, for per-byte rows, the
 * message size. */
struct Row
{
  const char *scheme;
  const char *operation;
  size_t size;                 /* 0: no size parameter */
};

/* Inputs and outputs of one block, prepared before the clock starts. */
struct Work
{
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  unsigned char msg[SIGN_MESSAGE_BYTES];
  unsigned char sig[crypto_sign_BYTES];
  unsigned char x_sk_a[crypto_scalarmult_SCALARBYTES];
  unsigned char x_pk_a[crypto_scalarmult_BYTES];
  unsigned char x_sk_b[crypto_scalarmult_SCALARBYTES];
  unsigned char x_pk_b[crypto_scalarmult_BYTES];
  unsigned char shared_a[crypto_scalarmult_BYTES];
  unsigned char shared_b[crypto_scalarmult_BYTES];
  unsigned char key[crypto_stream_xsalsa20_KEYBYTES];
  unsigned char nonce[crypto_stream_xsalsa20_NONCEBYTES];
  unsigned char digest[crypto_hash_sha512_BYTES];
  unsigned char *plain;        /* largest size */
  unsigned char *cipher;       /* largest size */
  unsigned char *back;         /* largest size */
};

static void
die (int status, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  fputs ("sodium_bench: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (status);
}

static uint64_t
now_ns (void)
{
  struct timespec ts;

  if (0 != clock_gettime (CLOCK_MONOTONIC, &ts))
    die (2, "clock_gettime(CLOCK_MONOTONIC) failed: %s", strerror (errno));
  return (uint64_t) ts.tv_sec * UINT64_C (1000000000) + (uint64_t) ts.tv_nsec;
}

static unsigned long
parse_ulong (const char *opt, const char *text, unsigned long lo,
             unsigned long hi)
{
  char *end = NULL;
  unsigned long v;

  if ('\0' == text[0] || '-' == text[0] || '+' == text[0])
    die (1, "%s: '%s' is not a whole number in %lu..%lu", opt, text, lo, hi);
  errno = 0;
  v = strtoul (text, &end, 10);
  if (0 != errno || '\0' != *end || v < lo || v > hi)
    die (1, "%s: '%s' is not a whole number in %lu..%lu", opt, text, lo, hi);
  return v;
}

static void
parse_sizes (const char *text, struct Options *o)
{
  char buf[1024];
  char *save = NULL;
  char *tok;

  if (strlen (text) >= sizeof (buf))
    die (1, "--sizes: list too long");
  if (',' == text[0] || NULL != strstr (text, ",,")
      || ('\0' != text[0] && ',' == text[strlen (text) - 1]))
    die (1, "--sizes: '%s' has an empty item; give sizes like 64,1024", text);
  memcpy (buf, text, strlen (text) + 1);
  o->n_sizes = 0;
  for (tok = strtok_r (buf, ",", &save); NULL != tok;
       tok = strtok_r (NULL, ",", &save))
  {
    if (o->n_sizes == MAX_SIZES)
      die (1, "--sizes: at most %d sizes", MAX_SIZES);
    o->sizes[o->n_sizes++] =
      (size_t) parse_ulong ("--sizes", tok, 1, MAX_SIZE_BYTES);
  }
  if (0 == o->n_sizes)
    die (1, "--sizes: give at least one size in bytes");
}

static void
parse_args (int argc, char **argv, struct Options *o)
{
  o->repetitions = DEFAULT_REPETITIONS;
  o->warmup = DEFAULT_WARMUP;
  o->fixed_ops = 1;
  o->n_sizes = sizeof (default_sizes) / sizeof (default_sizes[0]);
  memcpy (o->sizes, default_sizes, sizeof (default_sizes));
  for (int i = 1; i < argc; i++)
  {
    const char *a = argv[i];

    if (0 == strcmp (a, "--count-markers"))
    {
      count_markers = true;
      continue;
    }
    if (i + 1 >= argc)
      die (1, "unknown or incomplete argument '%s' (see the usage at the "
           "top of sodium_bench.c)", a);
    if (0 == strcmp (a, "--repetitions"))
      o->repetitions = parse_ulong (a, argv[++i], 1, MAX_REPETITIONS);
    else if (0 == strcmp (a, "--warmup"))
      o->warmup = parse_ulong (a, argv[++i], 0, MAX_REPETITIONS);
    else if (0 == strcmp (a, "--sizes"))
      parse_sizes (argv[++i], o);
    else if (0 == strcmp (a, "--ops-per-sample"))
    {
      i++;
      if (0 == strcmp (argv[i], "auto"))
        o->fixed_ops = 0;
      else
        o->fixed_ops = parse_ulong (a, argv[i], 1, MAX_FIXED_OPS);
    }
    else
      die (1, "unknown argument '%s' (see the usage at the top of "
           "sodium_bench.c)", a);
  }
}

/* Back-to-back reads: smallest non-zero step and mean step. */
static void
probe_clock (struct Clock *c)
{
  struct timespec res;
  uint64_t first, prev, min_step = UINT64_MAX;
  unsigned long reads = 1, changes = 0;
  uint64_t floor_ns;

  if (0 != clock_getres (CLOCK_MONOTONIC, &res))
    die (2, "clock_getres(CLOCK_MONOTONIC) failed: %s", strerror (errno));
  c->res_ns = (uint64_t) res.tv_sec * UINT64_C (1000000000)
              + (uint64_t) res.tv_nsec;
  first = prev = now_ns ();
  while (reads < CLOCK_PROBE_MAX_READS
         && (reads < CLOCK_PROBE_MIN_READS
             || changes < CLOCK_PROBE_MIN_CHANGES))
  {
    uint64_t t = now_ns ();

    reads++;
    if (t < prev)
      die (2, "CLOCK_MONOTONIC went backwards");
    if (t != prev)
    {
      changes++;
      if (t - prev < min_step)
        min_step = t - prev;
    }
    prev = t;
  }
  c->reads = reads;
  c->tick_ns = (0 == changes) ? 0 : min_step;
  c->pair_overhead_ns = (double) (prev - first) / (double) (reads - 1);
  floor_ns = c->res_ns;
  if (c->tick_ns > floor_ns)
    floor_ns = c->tick_ns;
  if ((uint64_t) c->pair_overhead_ns + 1 > floor_ns)
    floor_ns = (uint64_t) c->pair_overhead_ns + 1;
  c->min_sample_ns = MIN_SAMPLE_TICKS * floor_ns;
}

static void
self_test (void)
{
  static const unsigned char sha256_abc[crypto_hash_sha256_BYTES] = {
    0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde,
    0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
    0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad
  };
  static const unsigned char sha512_abc[crypto_hash_sha512_BYTES] = {
    0xdd, 0xaf, 0x35, 0xa1, 0x93, 0x61, 0x7a, 0xba, 0xcc, 0x41, 0x73, 0x49,
    0xae, 0x20, 0x41, 0x31, 0x12, 0xe6, 0xfa, 0x4e, 0x89, 0xa9, 0x7e, 0xa2,
    0x0a, 0x9e, 0xee, 0xe6, 0x4b, 0x55, 0xd3, 0x9a, 0x21, 0x92, 0x99, 0x2a,
    0x27, 0x4f, 0xc1, 0xa8, 0x36, 0xba, 0x3c, 0x23, 0xa3, 0xfe, 0xeb, 0xbd,
    0x45, 0x4d, 0x44, 0x23, 0x64, 0x3c, 0xe8, 0x0e, 0x2a, 0x9a, 0xc9, 0x4f,
    0xa5, 0x4c, 0xa4, 0x9f
  };
  unsigned char out[crypto_hash_sha512_BYTES];

  if (0 != crypto_hash_sha256 (out, (const unsigned char *) "abc", 3)
      || 0 != memcmp (out, sha256_abc, sizeof (sha256_abc)))
    die (1, "self-test failed: SHA-256(\"abc\") is not the FIPS 180-2 value");
  if (0 != crypto_hash_sha512 (out, (const unsigned char *) "abc", 3)
      || 0 != memcmp (out, sha512_abc, sizeof (sha512_abc)))
    die (1, "self-test failed: SHA-512(\"abc\") is not the FIPS 180-2 value");
}

/* ---- per-row preparation, timed block and check ------------------------ */

static bool
prepare (const struct Row *r, struct Work *w, char *reason)
{
  if (0 == strcmp (r->scheme, "Ed25519"))
  {
    randombytes_buf (w->msg, sizeof (w->msg));
    if (0 != crypto_sign_keypair (w->pk, w->sk))
    {
      snprintf (reason, REASON_LEN, "crypto_sign_keypair failed");
      return false;
    }
    if (0 == strcmp (r->operation, "verify"))
    {
      if (0 != crypto_sign_detached (w->sig, NULL, w->msg, sizeof (w->msg),
                                     w->sk))
      {
        snprintf (reason, REASON_LEN, "crypto_sign_detached failed");
        return false;
      }
    }
  }
  else if (0 == strcmp (r->scheme, "X25519"))
  {
    randombytes_buf (w->x_sk_a, sizeof (w->x_sk_a));
    randombytes_buf (w->x_sk_b, sizeof (w->x_sk_b));
    if (0 != crypto_scalarmult_base (w->x_pk_a, w->x_sk_a)
        || 0 != crypto_scalarmult_base (w->x_pk_b, w->x_sk_b))
    {
      snprintf (reason, REASON_LEN, "crypto_scalarmult_base failed");
      return false;
    }
  }
  else if (0 == strcmp (r->scheme, "XSalsa20"))
  {
    randombytes_buf (w->key, sizeof (w->key));
    randombytes_buf (w->nonce, sizeof (w->nonce));
    randombytes_buf (w->plain, r->size);
  }
  else
  {
    randombytes_buf (w->plain, r->size);
  }
  return true;
}

/* Runs `ops` calls between two clock reads; false (with reason) when a
 * call reports failure. */
static bool
timed_block (const struct Row *r, struct Work *w, unsigned long ops,
             uint64_t *ns, char *reason)
{
  unsigned long failed = 0;
  uint64_t t0, t1;

  if (0 == strcmp (r->scheme, "Ed25519")
      && 0 == strcmp (r->operation, "key_generation"))
  {
    count_block_start ();
    t0 = now_ns ();
    for (unsigned long i = 0; i < ops; i++)
      failed += (0 != crypto_sign_keypair (w->pk, w->sk));
    t1 = now_ns ();
    count_block_stop ();
  }
  else if (0 == strcmp (r->scheme, "Ed25519")
           && 0 == strcmp (r->operation, "sign"))
  {
    count_block_start ();
    t0 = now_ns ();
    for (unsigned long i = 0; i < ops; i++)
      failed += (0 != crypto_sign_detached (w->sig, NULL, w->msg,
                                            sizeof (w->msg), w->sk));
    t1 = now_ns ();
    count_block_stop ();
  }
  else if (0 == strcmp (r->scheme, "Ed25519"))
  {
    count_block_start ();
    t0 = now_ns ();
    for (unsigned long i = 0; i < ops; i++)
      failed += (0 != crypto_sign_verify_detached (w->sig, w->msg,
                                                   sizeof (w->msg), w->pk));
    t1 = now_ns ();
    count_block_stop ();
  }
  else if (0 == strcmp (r->scheme, "X25519"))
  {
    count_block_start ();
    t0 = now_ns ();
    for (unsigned long i = 0; i < ops; i++)
      failed += (0 != crypto_scalarmult (w->shared_a, w->x_sk_a, w->x_pk_b));
    t1 = now_ns ();
    count_block_stop ();
  }
  else if (0 == strcmp (r->scheme, "XSalsa20"))
  {
    count_block_start ();
    t0 = now_ns ();
    for (unsigned long i = 0; i < ops; i++)
      failed += (0 != crypto_stream_xsalsa20_xor (w->cipher, w->plain,
                                                  r->size, w->nonce, w->key));
    t1 = now_ns ();
    count_block_stop ();
  }
  else if (0 == strcmp (r->scheme, "SHA-256"))
  {
    count_block_start ();
    t0 = now_ns ();
    for (unsigned long i = 0; i < ops; i++)
      failed += (0 != crypto_hash_sha256 (w->digest, w->plain, r->size));
    t1 = now_ns ();
    count_block_stop ();
  }
  else
  {
    count_block_start ();
    t0 = now_ns ();
    for (unsigned long i = 0; i < ops; i++)
      failed += (0 != crypto_hash_sha512 (w->digest, w->plain, r->size));
    t1 = now_ns ();
    count_block_stop ();
  }
  if (t1 < t0)
    die (2, "CLOCK_MONOTONIC went backwards");
  *ns = t1 - t0;
  if (0 != failed)
  {
    snprintf (reason, REASON_LEN, "%lu of %lu calls reported failure",
              failed, ops);
    return false;
  }
  return true;
}

static bool
tampered_fails (const struct Work *w)
{
  unsigned char bad[SIGN_MESSAGE_BYTES];

  memcpy (bad, w->msg, sizeof (bad));
  bad[0] ^= 0x01;
  return 0 != crypto_sign_verify_detached (w->sig, bad, sizeof (bad), w->pk);
}

static bool
check_block (const struct Row *r, struct Work *w, char *reason)
{
  if (0 == strcmp (r->scheme, "Ed25519"))
  {
    if (0 == strcmp (r->operation, "key_generation"))
    {
      unsigned char pk2[crypto_sign_PUBLICKEYBYTES];

      if (0 != crypto_sign_ed25519_sk_to_pk (pk2, w->sk)
          || 0 != memcmp (pk2, w->pk, sizeof (pk2)))
      {
        snprintf (reason, REASON_LEN,
                  "generated secret key does not embed its public key");
        return false;
      }
      if (0 != crypto_sign_detached (w->sig, NULL, w->msg, sizeof (w->msg),
                                     w->sk))
      {
        snprintf (reason, REASON_LEN, "generated key cannot sign");
        return false;
      }
    }
    if (0 != crypto_sign_verify_detached (w->sig, w->msg, sizeof (w->msg),
                                          w->pk))
    {
      snprintf (reason, REASON_LEN, "signature does not verify");
      return false;
    }
    if (! tampered_fails (w))
    {
      snprintf (reason, REASON_LEN,
                "signature verifies a message with one bit flipped");
      return false;
    }
  }
  else if (0 == strcmp (r->scheme, "X25519"))
  {
    if (0 != crypto_scalarmult (w->shared_b, w->x_sk_b, w->x_pk_a)
        || 0 != sodium_memcmp (w->shared_a, w->shared_b, sizeof (w->shared_a)))
    {
      snprintf (reason, REASON_LEN, "the two parties' shared secrets differ");
      return false;
    }
  }
  else if (0 == strcmp (r->scheme, "XSalsa20"))
  {
    if (0 == memcmp (w->cipher, w->plain, r->size))
    {
      snprintf (reason, REASON_LEN, "output equals input");
      return false;
    }
    if (0 != crypto_stream_xsalsa20_xor (w->back, w->cipher, r->size,
                                         w->nonce, w->key)
        || 0 != memcmp (w->back, w->plain, r->size))
    {
      snprintf (reason, REASON_LEN, "applying the stream twice does not "
                "restore the input");
      return false;
    }
  }
  return true;
}

/* ---- driver --------------------------------------------------------------- */

static void
print_record (const char *kind, const struct Row *r, unsigned long ops,
              uint64_t ns)
{
  if (0 == r->size)
    printf ("%s %s %s - 0 %lu %" PRIu64 "\n", kind, r->scheme, r->operation,
            ops, ns);
  else
    printf ("%s %s %s %zu %zu %lu %" PRIu64 "\n", kind, r->scheme,
            r->operation, r->size, r->size, ops, ns);
}

static void
print_invalid (const struct Row *r, const char *reason)
{
  if (0 == r->size)
    printf ("invalid %s %s - 0 %s\n", r->scheme, r->operation, reason);
  else
    printf ("invalid %s %s %zu %zu %s\n", r->scheme, r->operation, r->size,
            r->size, reason);
}

/* One block: prepare, time, check, print as `kind`.  False: row invalid. */
static bool
one_block (const char *kind, const struct Row *r, struct Work *w,
           unsigned long ops, uint64_t *ns)
{
  char reason[REASON_LEN];

  if (! prepare (r, w, reason))
  {
    print_invalid (r, reason);
    return false;
  }
  if (! timed_block (r, w, ops, ns, reason))
  {
    print_record (kind, r, ops, *ns);
    print_invalid (r, reason);
    return false;
  }
  print_record (kind, r, ops, *ns);
  if (! check_block (r, w, reason))
  {
    print_invalid (r, reason);
    return false;
  }
  return true;
}

static void
measure_row (const struct Options *o, const struct Clock *c,
             const struct Row *r, struct Work *w)
{
  unsigned long ops = o->fixed_ops;
  uint64_t ns = 0;

  if (0 == ops)
  {
    unsigned int long_enough = 0;

    ops = 1;
    for (;;)
    {
      unsigned long next;

      if (! one_block ("calib", r, w, ops, &ns))
        goto done;
      if (ops >= MAX_AUTO_OPS)
        break;
      if (ns >= c->min_sample_ns)
      {
        /* A first, cold block is slow: only the second long enough one in
         * a row ends calibration. */
        if (++long_enough == CALIB_CONFIRMATIONS)
          break;
        continue;
      }
      long_enough = 0;
      if (0 == ns)
        next = ops * 10;
      else
      {
        double want = (double) ops * (double) c->min_sample_ns * 1.25
                      / (double) ns;

        next = (want >= (double) MAX_AUTO_OPS) ? MAX_AUTO_OPS
               : (unsigned long) want + 1;
      }
      if (next <= ops)
        next = ops + 1;
      ops = (next > MAX_AUTO_OPS) ? MAX_AUTO_OPS : next;
    }
  }
  for (unsigned long i = 0; i < o->warmup; i++)
    if (! one_block ("warmup", r, w, ops, &ns))
      goto done;
  for (unsigned long i = 0; i < o->repetitions; i++)
    if (! one_block ("sample", r, w, ops, &ns))
      goto done;
done:
  if (EOF == fflush (stdout))
    die (2, "cannot write to stdout: %s", strerror (errno));
}

static void
print_features (void)
{
  static const struct
  {
    const char *name;
    int (*has) (void);
  } features[] = {
    { "neon", sodium_runtime_has_neon },
    { "sse2", sodium_runtime_has_sse2 },
    { "sse3", sodium_runtime_has_sse3 },
    { "ssse3", sodium_runtime_has_ssse3 },
    { "sse41", sodium_runtime_has_sse41 },
    { "avx", sodium_runtime_has_avx },
    { "avx2", sodium_runtime_has_avx2 },
    { "avx512f", sodium_runtime_has_avx512f },
    { "pclmul", sodium_runtime_has_pclmul },
    { "aesni", sodium_runtime_has_aesni },
    { "rdrand", sodium_runtime_has_rdrand },
  };
  bool any = false;

  fputs ("meta runtime_features ", stdout);
  for (size_t i = 0; i < sizeof (features) / sizeof (features[0]); i++)
    if (features[i].has ())
    {
      printf ("%s%s", any ? "," : "", features[i].name);
      any = true;
    }
  puts (any ? "" : "-");
}

int
main (int argc, char **argv)
{
  static const char *const sig_ops[] = { "key_generation", "sign", "verify" };
  static const char *const per_byte[] = { "XSalsa20", "SHA-256", "SHA-512" };
  struct Options o;
  struct Clock c;
  struct Work w;
  size_t max_size = 0;

  parse_args (argc, argv, &o);
  if (sodium_init () < 0)
    die (1, "sodium_init() failed");
  self_test ();
  probe_clock (&c);
  for (size_t i = 0; i < o.n_sizes; i++)
    if (o.sizes[i] > max_size)
      max_size = o.sizes[i];
  memset (&w, 0, sizeof (w));
  w.plain = malloc (max_size);
  w.cipher = malloc (max_size);
  w.back = malloc (max_size);
  if (NULL == w.plain || NULL == w.cipher || NULL == w.back)
    die (2, "out of memory for %zu-byte messages", max_size);

  printf ("meta sodium_version %s\n", sodium_version_string ());
  printf ("meta sodium_header_version %s\n", SODIUM_VERSION_STRING);
  print_features ();
  printf ("meta clock CLOCK_MONOTONIC\n");
  printf ("meta clock_res_ns %" PRIu64 "\n", c.res_ns);
  if (0 != c.tick_ns)
    printf ("meta clock_tick_ns %" PRIu64 "\n", c.tick_ns);
  printf ("meta clock_pair_overhead_ns %.2f\n", c.pair_overhead_ns);
  printf ("meta clock_probe_reads %lu\n", c.reads);
  printf ("meta min_sample_ns %" PRIu64 "\n", c.min_sample_ns);
  printf ("meta repetitions %lu\n", o.repetitions);
  printf ("meta warmup %lu\n", o.warmup);
  fputs ("meta sizes ", stdout);
  for (size_t i = 0; i < o.n_sizes; i++)
    printf ("%s%zu", (0 == i) ? "" : ",", o.sizes[i]);
  fputs ("\n", stdout);
  if (0 == o.fixed_ops)
    printf ("meta ops_per_sample auto\n");
  else
    printf ("meta ops_per_sample %lu\n", o.fixed_ops);
  printf ("meta sign_message_bytes %d\n", SIGN_MESSAGE_BYTES);

  for (size_t i = 0; i < sizeof (sig_ops) / sizeof (sig_ops[0]); i++)
  {
    struct Row r = { "Ed25519", sig_ops[i], 0 };

    measure_row (&o, &c, &r, &w);
  }
  {
    struct Row r = { "X25519", "derive", 0 };

    measure_row (&o, &c, &r, &w);
  }
  for (size_t s = 0; s < sizeof (per_byte) / sizeof (per_byte[0]); s++)
    for (size_t i = 0; i < o.n_sizes; i++)
    {
      struct Row r = { per_byte[s], 0 == s ? "stream" : "hash", o.sizes[i] };

      measure_row (&o, &c, &r, &w);
    }
  puts ("end");
  free (w.plain);
  free (w.cipher);
  free (w.back);
  if (0 != fflush (stdout) || ferror (stdout))
    die (2, "cannot write to stdout");
  return 0;
}
