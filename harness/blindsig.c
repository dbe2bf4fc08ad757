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
 *   sample    <scheme> <bits> <operation> <ops> <rep> <ns>
 *   invalid   <scheme> <bits> <reason>                   at most one per pair
 *   end       ok                                         last line
 *
 * <scheme> is CS or RSA, <bits> is the RSA modulus size (0 for CS), <ns> is
 * the CLOCK_MONOTONIC wall time of one block of <ops> operations.  A missing
 * "end" line means the output is truncated (crash) and must be discarded.
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
#define BLINDSIG_FORMAT_VERSION 1

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

/* The exchange derives r with "rw" for withdrawals; any fixed seed works. */
static const char cs_r_seed[] = "rw";

/**
 * First failure seen for one scheme/size; later failures only add noise.
 */
struct Verdict
{
  bool failed;
  char reason[REASON_LEN];
};

static bool show_progress;

/* Testing aid (--inject-fault): scheme whose first signature of the first
 * repetition gets its message corrupted before verification, so the
 * harness's invalid path can be exercised end to end.  NULL normally. */
static const char *inject_fault;


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


static uint64_t
now_ns (void)
{
  struct timespec ts;

  if (0 != clock_gettime (CLOCK_MONOTONIC, &ts))
  {
    /* Without a clock no number we print would mean anything. */
    fprintf (stderr, "blindsig: clock_gettime(CLOCK_MONOTONIC): %s\n",
             strerror (errno));
    exit (EXIT_INTERNAL);
  }
  return (uint64_t) ts.tv_sec * UINT64_C (1000000000)
         + (uint64_t) ts.tv_nsec;
}


static void
emit_sample (const char *scheme,
             unsigned int bits,
             const char *operation,
             unsigned int ops,
             unsigned int rep,
             uint64_t elapsed_ns,
             struct Verdict *v)
{
  printf ("sample\t%s\t%u\t%s\t%u\t%u\t%" PRIu64 "\n",
          scheme, bits, operation, ops, rep, elapsed_ns);
  /* A zero reading is "faster than the clock can tell", not a time. */
  if (0 == elapsed_ns)
    verdict_fail (v,
                  "%s block of %u ops measured 0 ns (below clock resolution);"
                  " raise --iterations",
                  operation, ops);
}


static void
flip_one_bit (unsigned char *buf, size_t len)
{
  uint32_t bit = GNUNET_CRYPTO_random_u32 (GNUNET_CRYPTO_QUALITY_WEAK,
                                           (uint32_t) (len * 8));

  buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
}


static void
progress (const char *scheme, unsigned int bits, unsigned int rep,
          unsigned int reps)
{
  if (! show_progress)
    return;
  if (0 == bits)
    fprintf (stderr, "blindsig: %s repetition %u/%u done\n", scheme, rep + 1,
             reps);
  else
    fprintf (stderr, "blindsig: %s-%u repetition %u/%u done\n", scheme, bits,
             rep + 1, reps);
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
  bool dead;                                   /* an earlier step failed */
  unsigned char msg[MSG_LEN];
};


static void
cs_repetition (unsigned int n, unsigned int rep, struct Verdict *v)
{
  struct CsItem *it = calloc (n, sizeof (*it));
  uint64_t t0;

  if (NULL == it)
  {
    verdict_fail (v, "out of memory allocating %u CS items", n);
    return;
  }
  for (unsigned int i = 0; i < n; i++)
  {
    GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_NONCE, it[i].msg,
                                sizeof (it[i].msg));
    GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_NONCE, &it[i].nonce,
                                sizeof (it[i].nonce));
    GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_STRONG,
                                &it[i].blind_seed,
                                sizeof (it[i].blind_seed));
  }

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    GNUNET_CRYPTO_cs_private_key_generate (&it[i].priv);
    GNUNET_CRYPTO_cs_private_key_get_public (&it[i].priv, &it[i].pub);
  }
  emit_sample ("CS", 0, "key_generation", n, rep, now_ns () - t0, v);

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    GNUNET_CRYPTO_cs_r_derive (&it[i].nonce, cs_r_seed, &it[i].priv, it[i].r);
    GNUNET_CRYPTO_cs_r_get_public (&it[i].r[0], &it[i].r_pub[0]);
    GNUNET_CRYPTO_cs_r_get_public (&it[i].r[1], &it[i].r_pub[1]);
  }
  emit_sample ("CS", 0, "r_derivation", n, rep, now_ns () - t0, v);

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
    GNUNET_CRYPTO_cs_blinding_secrets_derive (&it[i].blind_seed, it[i].bs);
  emit_sample ("CS", 0, "blinding_secret_derivation", n, rep, now_ns () - t0,
               v);

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
    GNUNET_CRYPTO_cs_calc_blinded_c (it[i].bs, it[i].r_pub, &it[i].pub,
                                     it[i].msg, sizeof (it[i].msg), it[i].c,
                                     it[i].blinded_r_pub);
  emit_sample ("CS", 0, "blinding", n, rep, now_ns () - t0, v);

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
    it[i].b = GNUNET_CRYPTO_cs_sign_derive (&it[i].priv, it[i].r, it[i].c,
                                            &it[i].nonce, &it[i].blinded_s);
  emit_sample ("CS", 0, "signing", n, rep, now_ns () - t0, v);
  for (unsigned int i = 0; i < n; i++)
    if (it[i].b > 1)
    {
      /* b indexes two-element arrays below. */
      verdict_fail (v, "cs_sign_derive returned b=%u (expected 0 or 1)",
                    it[i].b);
      it[i].dead = true;
    }

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    if (it[i].dead)
      continue;
    GNUNET_CRYPTO_cs_unblind (&it[i].blinded_s, &it[i].bs[it[i].b],
                              &it[i].sig.s_scalar);
  }
  emit_sample ("CS", 0, "unblinding", n, rep, now_ns () - t0, v);
  /* The signature's point is the blinded R the signer picked; copying it
   * is bookkeeping, not part of the unblinding cost. */
  for (unsigned int i = 0; i < n; i++)
    if (! it[i].dead)
      it[i].sig.r_point = it[i].blinded_r_pub[it[i].b];
  if ((NULL != inject_fault) && (0 == strcmp (inject_fault, "CS"))
      && (0 == rep))
    flip_one_bit (it[0].msg, sizeof (it[0].msg));

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    if (it[i].dead)
      continue;
    it[i].verified = GNUNET_CRYPTO_cs_verify (&it[i].sig, &it[i].pub,
                                              it[i].msg, sizeof (it[i].msg));
  }
  emit_sample ("CS", 0, "verifying", n, rep, now_ns () - t0, v);

  for (unsigned int i = 0; i < n; i++)
  {
    if (it[i].dead)
      continue;
    if (GNUNET_YES != it[i].verified)
    {
      verdict_fail (v, "CS signature %u of repetition %u did not verify", i,
                    rep);
      continue;
    }
    flip_one_bit (it[i].msg, sizeof (it[i].msg));
    if (GNUNET_YES == GNUNET_CRYPTO_cs_verify (&it[i].sig, &it[i].pub,
                                               it[i].msg, sizeof (it[i].msg)))
      verdict_fail (v,
                    "CS signature %u of repetition %u verified a message with"
                    " one bit flipped", i, rep);
  }
  /* Key material should not linger in freed heap memory. */
  GNUNET_CRYPTO_zero_keys (it, n * sizeof (*it));
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
  bool dead;                                   /* an earlier step failed */
  unsigned char msg[MSG_LEN];
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
    if (NULL != it[i].pub)
      GNUNET_CRYPTO_rsa_public_key_free (it[i].pub);
    if (NULL != it[i].priv)
      GNUNET_CRYPTO_rsa_private_key_free (it[i].priv);
  }
  GNUNET_CRYPTO_zero_keys (it, n * sizeof (*it));
  free (it);
}


static void
rsa_repetition (unsigned int bits, unsigned int n, unsigned int rep,
                struct Verdict *v)
{
  struct RsaItem *it = calloc (n, sizeof (*it));
  uint64_t t0;

  if (NULL == it)
  {
    verdict_fail (v, "out of memory allocating %u RSA items", n);
    return;
  }
  for (unsigned int i = 0; i < n; i++)
  {
    GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_NONCE, it[i].msg,
                                sizeof (it[i].msg));
    GNUNET_CRYPTO_hash (it[i].msg, sizeof (it[i].msg), &it[i].hash);
    GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_STRONG, &it[i].bks,
                                sizeof (it[i].bks));
  }

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    it[i].priv = GNUNET_CRYPTO_rsa_private_key_create (bits);
    if (NULL != it[i].priv)
      it[i].pub = GNUNET_CRYPTO_rsa_private_key_get_public (it[i].priv);
  }
  emit_sample ("RSA", bits, "key_generation", n, rep, now_ns () - t0, v);
  for (unsigned int i = 0; i < n; i++)
    if ((NULL == it[i].priv) || (NULL == it[i].pub))
    {
      verdict_fail (v, "RSA-%u key generation %u failed", bits, i);
      it[i].dead = true;
    }

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    if (it[i].dead)
      continue;
    it[i].blind_rc = GNUNET_CRYPTO_rsa_blind (&it[i].hash, &it[i].bks,
                                              it[i].pub, &it[i].blinded,
                                              &it[i].blinded_len);
  }
  emit_sample ("RSA", bits, "blinding", n, rep, now_ns () - t0, v);
  for (unsigned int i = 0; i < n; i++)
    if ((! it[i].dead)
        && ((GNUNET_YES != it[i].blind_rc) || (NULL == it[i].blinded)))
    {
      verdict_fail (v, "rsa_blind of message %u failed (rc=%d)", i,
                    it[i].blind_rc);
      it[i].dead = true;
    }

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    if (it[i].dead)
      continue;
    it[i].blinded_sig = GNUNET_CRYPTO_rsa_sign_blinded (it[i].priv,
                                                        it[i].blinded,
                                                        it[i].blinded_len);
  }
  emit_sample ("RSA", bits, "signing", n, rep, now_ns () - t0, v);
  for (unsigned int i = 0; i < n; i++)
    if ((! it[i].dead) && (NULL == it[i].blinded_sig))
    {
      verdict_fail (v, "rsa_sign_blinded of message %u failed", i);
      it[i].dead = true;
    }

  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    if (it[i].dead)
      continue;
    it[i].sig = GNUNET_CRYPTO_rsa_unblind (it[i].blinded_sig, &it[i].bks,
                                           it[i].pub);
  }
  emit_sample ("RSA", bits, "unblinding", n, rep, now_ns () - t0, v);
  for (unsigned int i = 0; i < n; i++)
    if ((! it[i].dead) && (NULL == it[i].sig))
    {
      verdict_fail (v, "rsa_unblind of signature %u failed", i);
      it[i].dead = true;
    }

  if ((NULL != inject_fault) && (0 == strcmp (inject_fault, "RSA"))
      && (0 == rep))
    flip_one_bit ((unsigned char *) &it[0].hash, sizeof (it[0].hash));
  t0 = now_ns ();
  for (unsigned int i = 0; i < n; i++)
  {
    if (it[i].dead)
      continue;
    it[i].verified = GNUNET_CRYPTO_rsa_verify (&it[i].hash, it[i].sig,
                                               it[i].pub);
  }
  emit_sample ("RSA", bits, "verifying", n, rep, now_ns () - t0, v);

  for (unsigned int i = 0; i < n; i++)
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
  rsa_free_items (it, n);
}


/* ---------------------------------------------------------------- main */

static void
run_scheme (const char *scheme, unsigned int bits, unsigned int iterations,
            unsigned int repetitions)
{
  struct Verdict v = { .failed = false };

  for (unsigned int rep = 0; rep < repetitions; rep++)
  {
    if (0 == bits)
      cs_repetition (iterations, rep, &v);
    else
      rsa_repetition (bits, iterations, rep, &v);
    fflush (stdout);
    progress (scheme, bits, rep, repetitions);
    /* Once invalid, further blocks cannot make the row printable, and
     * RSA-4096 key generation is too slow to repeat for nothing. */
    if (v.failed)
      break;
  }
  if (v.failed)
  {
    printf ("invalid\t%s\t%u\t%s\n", scheme, bits, v.reason);
    fflush (stdout);
  }
}


static void
usage (FILE *out)
{
  fprintf (out,
           "usage: blindsig --iterations N --repetitions R"
           " [--scheme cs|rsa|all] [--rsa-bits B1,B2,...] [--progress]\n"
           "       blindsig --build-info\n"
           "\n"
           "  --iterations N    operations per timed block (1..%lu)\n"
           "  --repetitions R   timed blocks per operation (1..%lu)\n"
           "  --scheme S        cs, rsa or all (default all)\n"
           "  --rsa-bits LIST   RSA modulus sizes in bits, %d..%d"
           " (default 1024,2048,3072,4096)\n"
           "  --progress        report finished repetitions on stderr\n"
           "  --build-info      print the meta lines and exit\n"
           "  --inject-fault S  testing only: corrupt one cs|rsa message"
           " before verification\n",
           MAX_ITERATIONS, MAX_REPETITIONS, MIN_RSA_BITS, MAX_RSA_BITS);
}


static bool
parse_count (const char *text, unsigned long max, unsigned int *out)
{
  char *end;
  unsigned long value;

  if ((NULL == text) || ('\0' == *text) || ('-' == *text) || ('+' == *text))
    return false;
  errno = 0;
  value = strtoul (text, &end, 10);
  if ((0 != errno) || ('\0' != *end) || (0 == value) || (value > max))
    return false;
  *out = (unsigned int) value;
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


static void
print_meta (unsigned int iterations, unsigned int repetitions)
{
  struct timespec res;

  printf ("meta\tgnunet_build_version\t%s\n", ABH_GNUNET_VERSION);
  printf ("meta\tclock\tCLOCK_MONOTONIC\n");
  if (0 == clock_getres (CLOCK_MONOTONIC, &res))
    printf ("meta\tclock_resolution_ns\t%" PRIu64 "\n",
            (uint64_t) res.tv_sec * UINT64_C (1000000000)
            + (uint64_t) res.tv_nsec);
  printf ("meta\tmessage_bytes\t%d\n", MSG_LEN);
  if (iterations > 0)
    printf ("meta\titerations\t%u\n", iterations);
  if (repetitions > 0)
    printf ("meta\trepetitions\t%u\n", repetitions);
}


int
main (int argc, char **argv)
{
  static const struct option options[] = {
    { "iterations", required_argument, NULL, 'n' },
    { "repetitions", required_argument, NULL, 'r' },
    { "scheme", required_argument, NULL, 's' },
    { "rsa-bits", required_argument, NULL, 'b' },
    { "progress", no_argument, NULL, 'p' },
    { "build-info", no_argument, NULL, 'i' },
    { "inject-fault", required_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  unsigned int iterations = 0;
  unsigned int repetitions = 0;
  unsigned int rsa_sizes[MAX_RSA_SIZES] = { 1024, 2048, 3072, 4096 };
  unsigned int rsa_count = 4;
  bool run_cs = true;
  bool run_rsa = true;
  bool build_info = false;
  int opt;

  while (-1 != (opt = getopt_long (argc, argv, "", options, NULL)))
  {
    switch (opt)
    {
    case 'n':
      if (! parse_count (optarg, MAX_ITERATIONS, &iterations))
      {
        fprintf (stderr, "blindsig: bad --iterations '%s'\n", optarg);
        return EXIT_USAGE;
      }
      break;
    case 'r':
      if (! parse_count (optarg, MAX_REPETITIONS, &repetitions))
      {
        fprintf (stderr, "blindsig: bad --repetitions '%s'\n", optarg);
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
    print_meta (0, 0);
    printf ("end\tok\n");
    return 0;
  }
  if ((0 == iterations) || (0 == repetitions))
  {
    fprintf (stderr, "blindsig: --iterations and --repetitions are required\n");
    usage (stderr);
    return EXIT_USAGE;
  }

  /* The negative verification checks make libgnunetutil log a warning per
   * rejected signature; those are expected, so only errors get through. */
  GNUNET_log_setup ("blindsig", "ERROR", NULL);

  printf ("%s\t%d\n", BLINDSIG_FORMAT, BLINDSIG_FORMAT_VERSION);
  print_meta (iterations, repetitions);
  fflush (stdout);
  if (run_cs)
    run_scheme ("CS", 0, iterations, repetitions);
  if (run_rsa)
    for (unsigned int k = 0; k < rsa_count; k++)
      run_scheme ("RSA", rsa_sizes[k], iterations, repetitions);
  printf ("end\tok\n");
  return (0 == fflush (stdout)) ? 0 : EXIT_INTERNAL;
}
