/*
 * rsa_large -- archbench's RSA sign/verify timing driver for large moduli.
 *
 * `openssl speed rsa` stops at 15360 bits; this driver times RSA key
 * generation, signing and verifying at any size libcrypto accepts (up to its
 * 16384-bit limit) through the OpenSSL 3 EVP API, with a time budget, and
 * checks that what it timed is correct.  suite_rsa_large.py runs it and
 * parses its output.
 *
 * Usage:
 *   rsa_large --bits 2048,4096 [--repetitions N] [--min-block-ns NS]
 *             [--max-time S] [--keygen-repetitions K] [--keygen-max-time S]
 *             [--count-markers]
 *
 * --count-markers brackets every block that prints a keygen, keygen_aborted,
 * calibrate or sample line with the counting markers of count_marker.h, in
 * the order the lines are printed (block k of the process = marker seq k),
 * so that the archbench_count QEMU plugin's k-th count belongs to the k-th
 * such line (paired by harness/suite_counting.py).
 *
 * Output (stdout, one event per line, fields separated by one space; only
 * the last field of "meta" and "invalid" may contain spaces):
 *
 *   rsa-large 1                                  first line: format, version
 *   meta <key> <value...>                        openssl_version, padding, ...
 *   keygen <bits> <ns>                           one completed key generation
 *   keygen_aborted <bits> <ns>                   one generation stopped by the
 *                                                keygen budget after <ns>
 *   keygen_done <bits> <taken> <exhausted 0|1>   end of key generation
 *   calibrate <bits> <sign|verify> <ops> <ns>    discarded calibration block
 *   sample <bits> <sign|verify> <ops> <ns>       timed block of <ops> operations
 *   invalid <bits> <reason...>                   the size's rows must not be
 *                                                published (at most one per size)
 *   done <bits> <taken> <exhausted 0|1>          end of the size: <taken> timed
 *                                                repetitions (each = one sign
 *                                                and one verify sample)
 *   end ok                                       last line
 *
 * <ns> is CLOCK_MONOTONIC wall time.  Sizes come in --bits order; each has
 * keygen lines, keygen_done, calibrate lines, sample lines, then done.  A
 * missing "end" line means the output is truncated and must be discarded.
 *
 * What is timed, and why (comparability with `openssl speed rsa`):
 *   `openssl speed rsa` signs a 36-byte buffer with EVP_PKEY_sign() and the
 *   default PKCS#1 v1.5 padding.  This driver also calls EVP_PKEY_sign() on
 *   a precomputed digest with RSA_PKCS1_PADDING, but sets SHA-256 as the
 *   signature digest, so what it produces is a real RSASSA-PKCS1-v1_5
 *   SHA-256 signature (the 32-byte digest wrapped in its 51-byte DigestInfo)
 *   that EVP_PKEY_verify() can check.  The private-key exponentiation (with
 *   CRT and blinding, as in openssl speed) dominates either way; hashing the
 *   message is left out of the timing, as openssl speed leaves it out.
 *   EVP_DigestSign() would add the SHA-256 of the message to every timed
 *   operation and make the figures incomparable for short messages.
 *
 * Per size:
 *   1. Key generation (public exponent 65537): up to --keygen-repetitions
 *      generations, each timed alone.  A generation still running when
 *      --keygen-max-time seconds have passed since the first started is
 *      aborted through the generation callback (keygen_aborted, exhausted
 *      1).  The first completed key is used for signing; when none
 *      completed the size is invalid.
 *   2. Correctness, outside the timing: a signature of each of the
 *      MESSAGES messages must verify, and must not verify for a message
 *      with one byte changed.
 *   3. Calibration, separately for sign and verify: blocks of 1, 2, 4, ...
 *      operations until one lasts >= --min-block-ns (or MAX_BLOCK_OPS is
 *      reached); these blocks are discarded and the last size is kept.
 *   4. Repetitions: one sign block, then (untimed) verification of every
 *      signature that block produced, then one verify block.  Repetition
 *      r > 0 starts only if the time spent since step 3 began plus the
 *      previous repetition's duration stays within --max-time (so at least
 *      one repetition always runs); otherwise exhausted = 1.
 *
 * Exit status: 0 when the run completed (even if a size is invalid), 64 on
 * usage errors, 70 on internal errors (allocation, clock, libcrypto setup).
 */

#define _POSIX_C_SOURCE 200809L
/* syscall () for the counting markers (count_marker.h). */
#define _DEFAULT_SOURCE

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "count_marker.h"

#define FORMAT_NAME "rsa-large"
#define FORMAT_VERSION 1

#define EXIT_USAGE 64
#define EXIT_INTERNAL 70

#define MIN_BITS 1024
#define MAX_BITS 16384
#define MAX_SIZES 64
/* Largest block; bounds the signature buffer (MAX_BLOCK_OPS * modulus bytes). */
#define MAX_BLOCK_OPS (1u << 18)
#define MAX_REPETITIONS 100000u
#define MAX_MIN_BLOCK_NS 60000000000ull
/* Distinct messages signed in turn, so that a block does not sign one
 * digest over and over (PKCS#1 v1.5 is deterministic either way). */
#define MESSAGES 16u
#define DIGEST_LEN 32u

struct options
{
  unsigned int bits[MAX_SIZES];
  size_t n_bits;
  unsigned int repetitions;
  uint64_t min_block_ns;
  uint64_t max_time_ns;
  unsigned int keygen_repetitions;
  uint64_t keygen_max_time_ns;
};

/* Shared with the key generation callback. */
static uint64_t keygen_deadline_ns;
static bool keygen_deadline_hit;

static void
die (const char *what)
{
  fprintf (stderr, "rsa_large: %s\n", what);
  ERR_print_errors_fp (stderr);
  exit (EXIT_INTERNAL);
}

static void
usage (const char *msg)
{
  fprintf (stderr,
           "rsa_large: %s\n"
           "usage: rsa_large --bits LIST [--repetitions N] [--min-block-ns NS]\n"
           "                 [--max-time S] [--keygen-repetitions K]"
           " [--keygen-max-time S] [--count-markers]\n",
           msg);
  exit (EXIT_USAGE);
}

static uint64_t
now_ns (void)
{
  struct timespec ts;

  if (0 != clock_gettime (CLOCK_MONOTONIC, &ts))
    die ("clock_gettime(CLOCK_MONOTONIC) failed");
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void
out (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

static void
out (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  if (vprintf (fmt, ap) < 0)
    die ("cannot write to stdout");
  va_end (ap);
  /* Flushed per line so that a crash or a timeout keeps what was measured. */
  if (0 != fflush (stdout))
    die ("cannot write to stdout");
}

static unsigned long long
parse_ull (const char *text, const char *opt, unsigned long long max)
{
  char *end;
  unsigned long long v;

  errno = 0;
  if ('\0' == text[0] || '-' == text[0])
    usage (opt);
  v = strtoull (text, &end, 10);
  if (0 != errno || '\0' != *end || v > max)
    usage (opt);
  return v;
}

static uint64_t
parse_seconds (const char *text, const char *opt)
{
  char *end;
  double s;

  errno = 0;
  s = strtod (text, &end);
  /* Upper bound: one day, far below what uint64_t ns can hold. */
  if (0 != errno || end == text || '\0' != *end || !(s > 0.0) || s > 86400.0)
    usage (opt);
  return (uint64_t) (s * 1e9);
}

static void
parse_bits (const char *text, struct options *o)
{
  const char *p = text;

  o->n_bits = 0;
  while (true)
    {
      char *end;
      unsigned long v;

      if (o->n_bits == MAX_SIZES)
        usage ("--bits: too many sizes");
      errno = 0;
      if (*p < '0' || *p > '9')
        usage ("--bits: expected a comma-separated list of integers");
      v = strtoul (p, &end, 10);
      if (0 != errno || v < MIN_BITS || v > MAX_BITS || 0 != v % 8)
        usage ("--bits: each size must be a multiple of 8 in 1024..16384");
      o->bits[o->n_bits++] = (unsigned int) v;
      if ('\0' == *end)
        return;
      if (',' != *end)
        usage ("--bits: expected a comma-separated list of integers");
      p = end + 1;
    }
}

static void
parse_options (int argc, char **argv, struct options *o)
{
  o->n_bits = 0;
  o->repetitions = 3;
  o->min_block_ns = 1000000000u;
  o->max_time_ns = 60000000000ull;
  o->keygen_repetitions = 1;
  o->keygen_max_time_ns = 600000000000ull;
  for (int i = 1; i < argc; i += 2)
    {
      const char *opt = argv[i];
      const char *val;

      if (0 == strcmp (opt, "--count-markers"))
        {
          count_markers = true;
          i--; /* a flag: no value follows */
          continue;
        }
      if (i + 1 >= argc)
        usage ("every option takes a value");
      val = argv[i + 1];
      if (0 == strcmp (opt, "--bits"))
        parse_bits (val, o);
      else if (0 == strcmp (opt, "--repetitions"))
        o->repetitions =
          (unsigned int) parse_ull (val, "--repetitions: 1..100000", MAX_REPETITIONS);
      else if (0 == strcmp (opt, "--min-block-ns"))
        o->min_block_ns = parse_ull (val, "--min-block-ns: 0..6e10", MAX_MIN_BLOCK_NS);
      else if (0 == strcmp (opt, "--max-time"))
        o->max_time_ns = parse_seconds (val, "--max-time: seconds in (0, 86400]");
      else if (0 == strcmp (opt, "--keygen-repetitions"))
        o->keygen_repetitions =
          (unsigned int) parse_ull (val, "--keygen-repetitions: 1..100000", MAX_REPETITIONS);
      else if (0 == strcmp (opt, "--keygen-max-time"))
        o->keygen_max_time_ns = parse_seconds (val, "--keygen-max-time: seconds in (0, 86400]");
      else
        usage ("unknown option");
    }
  if (0 == o->n_bits)
    usage ("--bits is required");
  if (0 == o->repetitions || 0 == o->keygen_repetitions)
    usage ("--repetitions and --keygen-repetitions must be >= 1");
}

/* Generation callback: returning 0 makes libcrypto abandon the generation. */
static int
keygen_cb (EVP_PKEY_CTX *ctx)
{
  (void) ctx;
  if (now_ns () >= keygen_deadline_ns)
    {
      keygen_deadline_hit = true;
      return 0;
    }
  return 1;
}

/* One key generation; NULL when the deadline aborted it (die on other errors). */
static EVP_PKEY *
generate_key (unsigned int bits)
{
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name (NULL, "RSA", NULL);
  EVP_PKEY *pkey = NULL;

  if (NULL == ctx)
    die ("EVP_PKEY_CTX_new_from_name(RSA) failed");
  if (1 != EVP_PKEY_keygen_init (ctx))
    die ("EVP_PKEY_keygen_init failed");
  if (1 != EVP_PKEY_CTX_set_rsa_keygen_bits (ctx, (int) bits))
    die ("EVP_PKEY_CTX_set_rsa_keygen_bits failed");
  /* 65537 is libcrypto's default exponent; no need to set it. */
  EVP_PKEY_CTX_set_cb (ctx, keygen_cb);
  keygen_deadline_hit = false;
  if (1 != EVP_PKEY_keygen (ctx, &pkey))
    {
      if (!keygen_deadline_hit)
        die ("EVP_PKEY_keygen failed");
      ERR_clear_error ();
      pkey = NULL;
    }
  EVP_PKEY_CTX_free (ctx);
  return pkey;
}

struct size_state
{
  unsigned int bits;
  EVP_PKEY_CTX *sign_ctx;
  EVP_PKEY_CTX *verify_ctx;
  size_t sig_len;
  unsigned char digests[MESSAGES][DIGEST_LEN];
  unsigned char *sigs; /* sig_cap signatures of sig_len bytes */
  unsigned int sig_cap;
  const char *invalid; /* first failure, NULL while valid */
};

static EVP_PKEY_CTX *
pkcs1_sha256_ctx (EVP_PKEY *pkey, bool sign)
{
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey (NULL, pkey, NULL);

  if (NULL == ctx)
    die ("EVP_PKEY_CTX_new_from_pkey failed");
  if (1 != (sign ? EVP_PKEY_sign_init (ctx) : EVP_PKEY_verify_init (ctx)))
    die ("EVP_PKEY_sign_init/EVP_PKEY_verify_init failed");
  if (1 != EVP_PKEY_CTX_set_rsa_padding (ctx, RSA_PKCS1_PADDING))
    die ("EVP_PKEY_CTX_set_rsa_padding failed");
  if (1 != EVP_PKEY_CTX_set_signature_md (ctx, EVP_sha256 ()))
    die ("EVP_PKEY_CTX_set_signature_md failed");
  return ctx;
}

static void
message_digest (unsigned int index, bool tampered, unsigned char *digest)
{
  char msg[64];
  unsigned int len = 0;
  int n = snprintf (msg, sizeof msg, "archbench rsa-large message %u", index);

  if (n < 0 || (size_t) n >= sizeof msg)
    die ("snprintf failed");
  if (tampered)
    msg[0] ^= 0x01;
  if (1 != EVP_Digest (msg, (size_t) n, digest, &len, EVP_sha256 (), NULL)
      || DIGEST_LEN != len)
    die ("EVP_Digest(SHA-256) failed");
}

/* Grows the signature buffer to `ops` slots (called outside the timing). */
static void
reserve_signatures (struct size_state *s, unsigned int ops)
{
  unsigned char *p;

  if (ops <= s->sig_cap)
    return;
  p = realloc (s->sigs, (size_t) ops * s->sig_len);
  if (NULL == p)
    die ("out of memory for the signature buffer");
  s->sigs = p;
  s->sig_cap = ops;
}

/* Signs op i with digest i % MESSAGES into slot i; false on a failed call.
 * The caller has reserved `ops` slots. */
static bool
sign_block (struct size_state *s, unsigned int ops)
{
  for (unsigned int i = 0; i < ops; i++)
    {
      size_t len = s->sig_len;

      if (1 != EVP_PKEY_sign (s->sign_ctx, s->sigs + (size_t) i * s->sig_len, &len,
                              s->digests[i % MESSAGES], DIGEST_LEN)
          || len != s->sig_len)
        return false;
    }
  return true;
}

/* Verifies slot i % MESSAGES (signed by sign_block); false unless all verify. */
static bool
verify_block (struct size_state *s, unsigned int ops)
{
  bool ok = true;

  for (unsigned int i = 0; i < ops; i++)
    {
      unsigned int j = i % MESSAGES;

      if (1 != EVP_PKEY_verify (s->verify_ctx, s->sigs + (size_t) j * s->sig_len,
                                s->sig_len, s->digests[j], DIGEST_LEN))
        ok = false;
    }
  return ok;
}

/* Untimed check of every signature a sign block of `ops` produced. */
static bool
check_signatures (struct size_state *s, unsigned int ops)
{
  for (unsigned int i = 0; i < ops; i++)
    if (1 != EVP_PKEY_verify (s->verify_ctx, s->sigs + (size_t) i * s->sig_len, s->sig_len,
                              s->digests[i % MESSAGES], DIGEST_LEN))
      return false;
  return true;
}

static void
fail (struct size_state *s, const char *reason)
{
  if (NULL == s->invalid)
    s->invalid = reason;
  ERR_clear_error ();
}

/* Signs MESSAGES digests; each must verify, and must not for a changed message. */
static void
check_correctness (struct size_state *s)
{
  unsigned char tampered[DIGEST_LEN];

  if (!sign_block (s, MESSAGES))
    {
      fail (s, "EVP_PKEY_sign failed");
      return;
    }
  for (unsigned int i = 0; i < MESSAGES; i++)
    {
      size_t off = (size_t) i * s->sig_len;

      if (1 != EVP_PKEY_verify (s->verify_ctx, s->sigs + off, s->sig_len, s->digests[i],
                                DIGEST_LEN))
        {
          fail (s, "a fresh signature did not verify");
          return;
        }
      message_digest (i, true, tampered);
      if (1 == EVP_PKEY_verify (s->verify_ctx, s->sigs + off, s->sig_len, tampered,
                                DIGEST_LEN))
        {
          fail (s, "a signature verified for a tampered message");
          return;
        }
      ERR_clear_error ();
    }
}

/* Doubling calibration; returns the block size to time with. */
static unsigned int
calibrate (struct size_state *s, bool sign, const struct options *o)
{
  unsigned int ops = 1;

  while (NULL == s->invalid)
    {
      uint64_t t0;

      if (sign)
        reserve_signatures (s, ops);
      count_block_start ();
      t0 = now_ns ();
      bool ok = sign ? sign_block (s, ops) : verify_block (s, ops);
      uint64_t ns = now_ns () - t0;
      count_block_stop ();

      if (!ok)
        {
          fail (s, sign ? "EVP_PKEY_sign failed" : "a signature did not verify");
          break;
        }
      out ("calibrate %u %s %u %" PRIu64 "\n", s->bits, sign ? "sign" : "verify", ops, ns);
      if (ns >= o->min_block_ns || ops >= MAX_BLOCK_OPS)
        break;
      ops *= 2;
    }
  return ops;
}

static void
measure (struct size_state *s, const struct options *o)
{
  unsigned int sign_ops, verify_ops, taken = 0;
  uint64_t start, last_rep_ns = 0;
  bool exhausted = false;

  reserve_signatures (s, MESSAGES);
  check_correctness (s);
  start = now_ns ();
  sign_ops = calibrate (s, true, o);
  verify_ops = calibrate (s, false, o);
  while (NULL == s->invalid && taken < o->repetitions)
    {
      uint64_t t0 = now_ns (), t1, t2, t3;

      if (taken > 0 && (t0 - start) + last_rep_ns > o->max_time_ns)
        {
          exhausted = true;
          break;
        }
      count_block_start ();
      bool signed_ok = sign_block (s, sign_ops);
      t1 = now_ns ();
      count_block_stop ();
      if (!signed_ok)
        {
          fail (s, "EVP_PKEY_sign failed");
          break;
        }
      if (!check_signatures (s, sign_ops))
        {
          fail (s, "a timed signature did not verify");
          break;
        }
      count_block_start ();
      t2 = now_ns ();
      bool verified = verify_block (s, verify_ops);
      t3 = now_ns ();
      count_block_stop ();
      if (!verified)
        {
          fail (s, "a signature did not verify in a timed block");
          break;
        }
      out ("sample %u sign %u %" PRIu64 "\n", s->bits, sign_ops, t1 - t0);
      out ("sample %u verify %u %" PRIu64 "\n", s->bits, verify_ops, t3 - t2);
      taken++;
      last_rep_ns = t3 - t0;
    }
  if (NULL != s->invalid)
    out ("invalid %u %s\n", s->bits, s->invalid);
  out ("done %u %u %d\n", s->bits, taken, exhausted ? 1 : 0);
}

static void
run_size (unsigned int bits, const struct options *o)
{
  struct size_state s;
  EVP_PKEY *key = NULL;
  unsigned int taken = 0;
  bool exhausted = false;
  uint64_t start = now_ns ();

  memset (&s, 0, sizeof s);
  s.bits = bits;
  keygen_deadline_ns = start + o->keygen_max_time_ns;
  for (unsigned int k = 0; k < o->keygen_repetitions; k++)
    {
      count_block_start ();
      uint64_t t0 = now_ns ();
      EVP_PKEY *pkey = generate_key (bits);
      uint64_t ns = now_ns () - t0;
      count_block_stop ();

      if (NULL == pkey)
        {
          out ("keygen_aborted %u %" PRIu64 "\n", bits, ns);
          exhausted = true;
          break;
        }
      out ("keygen %u %" PRIu64 "\n", bits, ns);
      taken++;
      if (NULL == key)
        key = pkey;
      else
        EVP_PKEY_free (pkey);
    }
  out ("keygen_done %u %u %d\n", bits, taken, exhausted ? 1 : 0);
  if (NULL == key)
    {
      out ("invalid %u key generation did not finish within the keygen budget of %.3f s\n",
           bits, (double) o->keygen_max_time_ns / 1e9);
      out ("done %u 0 1\n", bits);
      return;
    }
  if (EVP_PKEY_get_bits (key) != (int) bits)
    die ("generated key has the wrong size");
  s.sig_len = (size_t) EVP_PKEY_get_size (key);
  for (unsigned int i = 0; i < MESSAGES; i++)
    message_digest (i, false, s.digests[i]);
  s.sign_ctx = pkcs1_sha256_ctx (key, true);
  s.verify_ctx = pkcs1_sha256_ctx (key, false);
  measure (&s, o);
  EVP_PKEY_CTX_free (s.sign_ctx);
  EVP_PKEY_CTX_free (s.verify_ctx);
  EVP_PKEY_free (key);
  free (s.sigs);
}

int
main (int argc, char **argv)
{
  struct options o;

  parse_options (argc, argv, &o);
  out ("%s %d\n", FORMAT_NAME, FORMAT_VERSION);
  out ("meta openssl_version %s\n", OpenSSL_version (OPENSSL_VERSION));
  out ("meta openssl_build_version %s\n", OPENSSL_VERSION_TEXT);
  out ("meta scheme RSASSA-PKCS1-v1_5 SHA-256 via EVP_PKEY_sign, e=65537\n");
  out ("meta min_block_ns %" PRIu64 "\n", o.min_block_ns);
  out ("meta max_block_ops %u\n", MAX_BLOCK_OPS);
  for (size_t i = 0; i < o.n_bits; i++)
    run_size (o.bits[i], &o);
  out ("end ok\n");
  return 0;
}
