/*
 * harness_overhead -- the bare loop that harness/blindsig.c is compared with.
 *
 * Times N consecutive calls of one libgnunetutil signing function between a
 * single pair of clock_gettime(CLOCK_MONOTONIC) reads, with nothing else in
 * the loop: no item structs, no stage dispatch, no calibration.  Run by
 * benchmarks/harness_overhead.py, which puts its per-operation time next to
 * the harness's for the same row.
 *
 *   harness_overhead cs-sign N REPS
 *   harness_overhead rsa-sign BITS N REPS
 *
 * Prints one line per timed repetition: the block's wall time in ns.  One
 * extra repetition runs first and is not printed (the harness's default
 * --warmup 1).  Inputs are prepared before each block starts (for RSA, N
 * blinded messages over min(N, 10) keys, as the harness's signing block
 * uses its 10-key generation block); one signature per block is checked
 * afterwards so that a broken call cannot pass as a fast one.
 *
 * Exit status: 0 on success, 64 on usage errors, 70 when a check fails.
 */

#include <gnunet/gnunet_util_lib.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_USAGE 64
#define EXIT_FAILED 70
#define MSG_LEN 64
#define RSA_KEYS 10
#define MAX_N 1000000UL
#define MAX_REPS 100000UL


static uint64_t
now_ns (void)
{
  struct timespec ts;

  if (0 != clock_gettime (CLOCK_MONOTONIC, &ts))
  {
    fprintf (stderr, "harness_overhead: clock_gettime: %s\n",
             strerror (errno));
    exit (EXIT_FAILED);
  }
  return (uint64_t) ts.tv_sec * UINT64_C (1000000000)
         + (uint64_t) ts.tv_nsec;
}


static unsigned int
parse_count (const char *text, unsigned long max)
{
  char *end;
  unsigned long value;

  errno = 0;
  value = strtoul (text, &end, 10);
  if ((0 != errno) || ('\0' != *end) || ('-' == *text) || (0 == value)
      || (value > max))
  {
    fprintf (stderr, "harness_overhead: bad count '%s'\n", text);
    exit (EXIT_USAGE);
  }
  return (unsigned int) value;
}


static void
fail (const char *what)
{
  fprintf (stderr, "harness_overhead: %s\n", what);
  exit (EXIT_FAILED);
}


/* ------------------------------------------------------------------ CS */

struct CsInput
{
  struct GNUNET_CRYPTO_CsPrivateKey priv;
  struct GNUNET_CRYPTO_CsRSecret r[2];
  struct GNUNET_CRYPTO_CsC c[2];
  struct GNUNET_CRYPTO_CsNonce nonce;
};


static void
cs_sign_blocks (unsigned int n, unsigned int reps)
{
  struct CsInput *in = calloc (n, sizeof (*in));
  struct GNUNET_CRYPTO_CsBlindS *out = calloc (n, sizeof (*out));
  unsigned int *b = calloc (n, sizeof (*b));

  if ((NULL == in) || (NULL == out) || (NULL == b))
    fail ("out of memory");
  for (unsigned int rep = 0; rep <= reps; rep++)
  {
    uint64_t t0;
    uint64_t elapsed;

    for (unsigned int i = 0; i < n; i++)
    {
      struct GNUNET_CRYPTO_CsPublicKey pub;
      struct GNUNET_CRYPTO_CsRPublic r_pub[2];
      struct GNUNET_CRYPTO_CsRPublic blinded_r_pub[2];
      struct GNUNET_CRYPTO_CsBlindingSecret bs[2];
      struct GNUNET_CRYPTO_CsNonce seed;
      unsigned char msg[MSG_LEN];

      GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_NONCE, msg,
                                  sizeof (msg));
      GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_NONCE, &in[i].nonce,
                                  sizeof (in[i].nonce));
      GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_NONCE, &seed,
                                  sizeof (seed));
      GNUNET_CRYPTO_cs_private_key_generate (&in[i].priv);
      GNUNET_CRYPTO_cs_private_key_get_public (&in[i].priv, &pub);
      GNUNET_CRYPTO_cs_r_derive (&in[i].nonce, "rw", &in[i].priv, in[i].r);
      GNUNET_CRYPTO_cs_r_get_public (&in[i].r[0], &r_pub[0]);
      GNUNET_CRYPTO_cs_r_get_public (&in[i].r[1], &r_pub[1]);
      GNUNET_CRYPTO_cs_blinding_secrets_derive (&seed, bs);
      GNUNET_CRYPTO_cs_calc_blinded_c (bs, r_pub, &pub, msg, sizeof (msg),
                                       in[i].c, blinded_r_pub);
    }

    t0 = now_ns ();
    for (unsigned int i = 0; i < n; i++)
      b[i] = GNUNET_CRYPTO_cs_sign_derive (&in[i].priv, in[i].r, in[i].c,
                                           &in[i].nonce, &out[i]);
    elapsed = now_ns () - t0;

    for (unsigned int i = 0; i < n; i++)
      if (b[i] > 1)
        fail ("cs_sign_derive returned b > 1");
    if (rep > 0)
      printf ("%" PRIu64 "\n", elapsed);
  }
  GNUNET_CRYPTO_zero_keys (in, n * sizeof (*in));
  free (in);
  free (out);
  free (b);
}


/* ----------------------------------------------------------------- RSA */

static void
rsa_sign_blocks (unsigned int bits, unsigned int n, unsigned int reps)
{
  const unsigned int k = (n < RSA_KEYS) ? n : RSA_KEYS;
  struct GNUNET_CRYPTO_RsaPrivateKey *priv[RSA_KEYS];
  struct GNUNET_CRYPTO_RsaPublicKey *pub[RSA_KEYS];
  struct GNUNET_CRYPTO_RsaBlindingKeySecret *bks = calloc (n, sizeof (*bks));
  struct GNUNET_HashCode *hash = calloc (n, sizeof (*hash));
  void **blinded = calloc (n, sizeof (*blinded));
  size_t *blinded_len = calloc (n, sizeof (*blinded_len));
  struct GNUNET_CRYPTO_RsaSignature **sig = calloc (n, sizeof (*sig));

  if ((NULL == bks) || (NULL == hash) || (NULL == blinded)
      || (NULL == blinded_len) || (NULL == sig))
    fail ("out of memory");
  for (unsigned int rep = 0; rep <= reps; rep++)
  {
    struct GNUNET_CRYPTO_RsaSignature *unblinded;
    uint64_t t0;
    uint64_t elapsed;

    /* Fresh keys per repetition, as the harness generates them. */
    for (unsigned int j = 0; j < k; j++)
    {
      priv[j] = GNUNET_CRYPTO_rsa_private_key_create (bits);
      if (NULL == priv[j])
        fail ("rsa_private_key_create failed");
      pub[j] = GNUNET_CRYPTO_rsa_private_key_get_public (priv[j]);
    }
    for (unsigned int i = 0; i < n; i++)
    {
      unsigned char msg[MSG_LEN];

      GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_NONCE, msg,
                                  sizeof (msg));
      GNUNET_CRYPTO_hash (msg, sizeof (msg), &hash[i]);
      GNUNET_CRYPTO_random_block (GNUNET_CRYPTO_QUALITY_STRONG, &bks[i],
                                  sizeof (bks[i]));
      if (GNUNET_YES != GNUNET_CRYPTO_rsa_blind (&hash[i], &bks[i],
                                                 pub[i % k], &blinded[i],
                                                 &blinded_len[i]))
        fail ("rsa_blind failed");
    }

    t0 = now_ns ();
    for (unsigned int i = 0; i < n; i++)
      sig[i] = GNUNET_CRYPTO_rsa_sign_blinded (priv[i % k], blinded[i],
                                               blinded_len[i]);
    elapsed = now_ns () - t0;

    unblinded = (NULL == sig[0]) ? NULL
                : GNUNET_CRYPTO_rsa_unblind (sig[0], &bks[0], pub[0]);
    if ((NULL == unblinded)
        || (GNUNET_OK != GNUNET_CRYPTO_rsa_verify (&hash[0], unblinded,
                                                   pub[0])))
      fail ("RSA signature 0 does not verify");
    GNUNET_CRYPTO_rsa_signature_free (unblinded);
    for (unsigned int i = 0; i < n; i++)
    {
      if (NULL == sig[i])
        fail ("rsa_sign_blinded failed");
      GNUNET_CRYPTO_rsa_signature_free (sig[i]);
      GNUNET_free (blinded[i]);
    }
    for (unsigned int j = 0; j < k; j++)
    {
      GNUNET_CRYPTO_rsa_public_key_free (pub[j]);
      GNUNET_CRYPTO_rsa_private_key_free (priv[j]);
    }
    if (rep > 0)
      printf ("%" PRIu64 "\n", elapsed);
  }
  free (bks);
  free (hash);
  free (blinded);
  free (blinded_len);
  free (sig);
}


int
main (int argc, char **argv)
{
  GNUNET_log_setup ("harness_overhead", "ERROR", NULL);
  if ((4 == argc) && (0 == strcmp (argv[1], "cs-sign")))
    cs_sign_blocks (parse_count (argv[2], MAX_N),
                    parse_count (argv[3], MAX_REPS));
  else if ((5 == argc) && (0 == strcmp (argv[1], "rsa-sign")))
    rsa_sign_blocks (parse_count (argv[2], 16384), parse_count (argv[3], MAX_N),
                     parse_count (argv[4], MAX_REPS));
  else
  {
    fprintf (stderr, "usage: harness_overhead cs-sign N REPS\n"
             "       harness_overhead rsa-sign BITS N REPS\n");
    return EXIT_USAGE;
  }
  return (0 == fflush (stdout)) ? 0 : EXIT_FAILED;
}
