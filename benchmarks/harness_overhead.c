/*
 * harness_overhead -- the bare loops that harness/drivers/blindsig.c is
 * compared with.
 *
 * For every blindsig row, times N consecutive calls of the row's
 * libgnunetutil function with the same arguments between one pair of
 * clock_gettime(CLOCK_MONOTONIC) reads, with nothing else in the loop: no
 * item structs, no stage functions, no calibration, no counting markers.
 * This is blindsig's default measurement (one call after another on the
 * same item, harness/drivers/blindsig_repeated.h) written as plainly as
 * possible.
 * Run by benchmarks/harness_overhead.py, which puts each row's
 * per-operation time next to the harness's.
 *
 *   harness_overhead [--count-markers [--count-keys DIR]] GROUP...
 *   GROUP:  cs N_KEYGEN,N_R,N_BS,N_BLIND,N_SIGN,N_UNBLIND,N_VERIFY REPS
 *         | rsa BITS N_KEYGEN,N_BLIND,N_SIGN,N_UNBLIND,N_VERIFY REPS
 *
 * The groups run one after the other in one process, in the order given
 * (at most MAX_GROUPS).
 *
 * One repetition runs the chain in blindsig's order, each operation with
 * its own N (the harness's calibrated block sizes), on one item prepared
 * before the repetition (random message, nonce, blinding seed, FDH hash,
 * blinding secret); the last call's output feeds the next operation, and
 * RSA operations use the last key of the key generation block, as the
 * harness does.  Prints one line per operation and timed repetition:
 * "<operation> <block ns>".  One extra repetition runs first and is not
 * printed (the harness's default --warmup 1).  Results that are allocated
 * are kept per call and freed after the block.  The final signature of
 * every repetition must verify.
 *
 * With a leading --count-markers every timed block (warmup included) is
 * bracketed by harness/drivers/counting/count_marker.h's markers exactly as
 * blindsig brackets its blocks (markers outside the two clock reads), so that
 * the QEMU counting plugin gives instructions per block for both programs
 * alike, and every input is fixed as blindsig fixes it
 * (harness/drivers/counting/count_inputs.h).
 * --count-keys DIR (after --count-markers) does what blindsig's does, with
 * the same code (count_inputs.h): before anything runs, every rsa group's
 * DIR/count-key-rsa-<bits>.key is loaded and checked (exit 64 if one is
 * missing or bad), and right after each key generation block the generated
 * key is replaced by that fixed key.  blindsig in counting mode runs its
 * pairs sequentially, CS first, then the RSA sizes in the order given, with
 * one warmup repetition; given the same groups in that order, this program
 * draws the same messages, nonces, blinding seeds and blinding key secrets
 * for the same repetition and uses the same RSA key.
 *
 * Exit status: 0 on success, 64 on usage errors, 70 when a check fails.
 */

#include <gnunet/gnunet_util_lib.h>

#include "clock_ns.h"
#include "counting/count_marker.h"
#include "counting/count_inputs.h"

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
#define MAX_N 1000000UL
#define MAX_REPS 100000UL
#define CS_OPS 7
#define RSA_OPS 5
#define MAX_GROUPS 16

/* One "cs ..." or "rsa BITS ..." of the command line. */
struct Group
{
  unsigned int bits;           /* RSA modulus size; 0 for CS */
  unsigned int n[CS_OPS];      /* block size per operation */
  unsigned int reps;           /* timed repetitions */
};


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


/* "a,b,c" -> exactly @a k counts */
static void
parse_sizes (const char *text, unsigned int *n, unsigned int k)
{
  char buf[256];
  char *save = NULL;
  unsigned int got = 0;

  if (strlen (text) >= sizeof (buf))
    exit (EXIT_USAGE);
  strcpy (buf, text);
  for (char *tok = strtok_r (buf, ",", &save); NULL != tok;
       tok = strtok_r (NULL, ",", &save))
  {
    if (got >= k)
      break;
    n[got++] = parse_count (tok, MAX_N);
  }
  if (got != k)
  {
    fprintf (stderr, "harness_overhead: expected %u block sizes, got '%s'\n",
             k, text);
    exit (EXIT_USAGE);
  }
}


static void
fail (const char *what)
{
  fprintf (stderr, "harness_overhead: %s\n", what);
  exit (EXIT_FAILED);
}


static uint64_t
block_start (void)
{
  count_block_start ();
  return now_ns ();
}


static uint64_t
block_end (uint64_t t0)
{
  uint64_t elapsed = now_ns () - t0;

  count_block_stop ();
  return elapsed;
}


static void
report (unsigned int rep, const char *op, uint64_t ns)
{
  if (rep > 0)
    printf ("%s %" PRIu64 "\n", op, ns);
}


/* ------------------------------------------------------------------ CS */

static void
cs_blocks (const unsigned int *n, unsigned int reps)
{
  for (unsigned int rep = 0; rep <= reps; rep++)
  {
    struct GNUNET_CRYPTO_CsPrivateKey priv;
    struct GNUNET_CRYPTO_CsPublicKey pub;
    struct GNUNET_CRYPTO_CsNonce nonce;
    struct GNUNET_CRYPTO_CsNonce blind_seed;
    struct GNUNET_CRYPTO_CsRSecret r[2];
    struct GNUNET_CRYPTO_CsRPublic r_pub[2];
    struct GNUNET_CRYPTO_CsBlindingSecret bs[2];
    struct GNUNET_CRYPTO_CsC c[2];
    struct GNUNET_CRYPTO_CsRPublic blinded_r_pub[2];
    struct GNUNET_CRYPTO_CsBlindS blinded_s;
    struct GNUNET_CRYPTO_CsSignature sig;
    unsigned char msg[MSG_LEN];
    enum GNUNET_GenericReturnValue ok = GNUNET_NO;
    unsigned int b = 0;
    uint64_t t0;

    count_input_bytes (ABH_QUALITY_NONCE, msg,
                                sizeof (msg));
    count_input_bytes (ABH_QUALITY_NONCE, &nonce,
                                sizeof (nonce));
    count_input_bytes (ABH_QUALITY_STRONG, &blind_seed,
                                sizeof (blind_seed));

    t0 = block_start ();
    for (unsigned int i = 0; i < n[0]; i++)
    {
      GNUNET_CRYPTO_cs_private_key_generate (&priv);
      GNUNET_CRYPTO_cs_private_key_get_public (&priv, &pub);
    }
    report (rep, "key_generation", block_end (t0));

    t0 = block_start ();
    for (unsigned int i = 0; i < n[1]; i++)
    {
      GNUNET_CRYPTO_cs_r_derive (&nonce, "rw", &priv, r);
      GNUNET_CRYPTO_cs_r_get_public (&r[0], &r_pub[0]);
      GNUNET_CRYPTO_cs_r_get_public (&r[1], &r_pub[1]);
    }
    report (rep, "r_derivation", block_end (t0));

    t0 = block_start ();
    for (unsigned int i = 0; i < n[2]; i++)
      GNUNET_CRYPTO_cs_blinding_secrets_derive (&blind_seed, bs);
    report (rep, "blinding_secret_derivation", block_end (t0));

    t0 = block_start ();
    for (unsigned int i = 0; i < n[3]; i++)
      GNUNET_CRYPTO_cs_calc_blinded_c (bs, r_pub, &pub, msg, sizeof (msg), c,
                                       blinded_r_pub);
    report (rep, "blinding", block_end (t0));

    t0 = block_start ();
    for (unsigned int i = 0; i < n[4]; i++)
      b = GNUNET_CRYPTO_cs_sign_derive (&priv, r, c, &nonce, &blinded_s);
    report (rep, "signing", block_end (t0));
    if (b > 1)
      fail ("cs_sign_derive returned b > 1");

    t0 = block_start ();
    for (unsigned int i = 0; i < n[5]; i++)
      GNUNET_CRYPTO_cs_unblind (&blinded_s, &bs[b], &sig.s_scalar);
    report (rep, "unblinding", block_end (t0));
    sig.r_point = blinded_r_pub[b];

    t0 = block_start ();
    for (unsigned int i = 0; i < n[6]; i++)
      ok = GNUNET_CRYPTO_cs_verify (&sig, &pub, msg, sizeof (msg));
    report (rep, "verifying", block_end (t0));
    if (GNUNET_YES != ok)
      fail ("CS signature does not verify");
  }
}


/* ----------------------------------------------------------------- RSA */

static void
free_signatures (void **out, unsigned int n)
{
  for (unsigned int i = 0; i + 1 < n; i++)
    if (NULL != out[i])
      GNUNET_CRYPTO_rsa_signature_free (out[i]);
}


static void
rsa_blocks (unsigned int bits, const unsigned int *n, unsigned int reps)
{
  unsigned int m = 0;
  void **out;
  size_t *out_len;

  for (unsigned int k = 0; k < RSA_OPS; k++)
    if (n[k] > m)
      m = n[k];
  out = calloc (m, sizeof (*out));
  out_len = calloc (m, sizeof (*out_len));
  if ((NULL == out) || (NULL == out_len))
    fail ("out of memory");
  for (unsigned int rep = 0; rep <= reps; rep++)
  {
    struct GNUNET_CRYPTO_RsaPrivateKey *priv;
    struct GNUNET_CRYPTO_RsaPublicKey *pub;
    struct GNUNET_CRYPTO_RsaBlindingKeySecret bks;
    struct GNUNET_HashCode hash;
    struct GNUNET_CRYPTO_RsaSignature *blinded_sig;
    struct GNUNET_CRYPTO_RsaSignature *sig;
    unsigned char msg[MSG_LEN];
    void *blinded;
    size_t blinded_len;
    unsigned int failures = 0;
    enum GNUNET_GenericReturnValue ok = GNUNET_NO;
    uint64_t t0;

    count_input_bytes (ABH_QUALITY_NONCE, msg,
                                sizeof (msg));
    GNUNET_CRYPTO_hash (msg, sizeof (msg), &hash);
    count_input_bytes (ABH_QUALITY_STRONG, &bks,
                                sizeof (bks));

    t0 = block_start ();
    for (unsigned int i = 0; i < n[0]; i++)
      out[i] = GNUNET_CRYPTO_rsa_private_key_create (bits);
    report (rep, "key_generation", block_end (t0));
    for (unsigned int i = 0; i + 1 < n[0]; i++)
      if (NULL != out[i])
        GNUNET_CRYPTO_rsa_private_key_free (out[i]);
    priv = out[n[0] - 1];
    if (NULL == priv)
      fail ("rsa_private_key_create failed");
    /* --count-keys: the other operations use the fixed key, as blindsig's. */
    priv = count_swap_fixed_rsa_key (priv, bits);
    pub = GNUNET_CRYPTO_rsa_private_key_get_public (priv);

    t0 = block_start ();
    for (unsigned int i = 0; i < n[1]; i++)
      failures += (GNUNET_YES != GNUNET_CRYPTO_rsa_blind (&hash, &bks, pub,
                                                          &out[i],
                                                          &out_len[i]));
    report (rep, "blinding", block_end (t0));
    if (0 != failures)
      fail ("rsa_blind failed");
    for (unsigned int i = 0; i + 1 < n[1]; i++)
      GNUNET_free (out[i]);
    blinded = out[n[1] - 1];
    blinded_len = out_len[n[1] - 1];

    t0 = block_start ();
    for (unsigned int i = 0; i < n[2]; i++)
      out[i] = GNUNET_CRYPTO_rsa_sign_blinded (priv, blinded, blinded_len);
    report (rep, "signing", block_end (t0));
    free_signatures (out, n[2]);
    blinded_sig = out[n[2] - 1];
    if (NULL == blinded_sig)
      fail ("rsa_sign_blinded failed");

    t0 = block_start ();
    for (unsigned int i = 0; i < n[3]; i++)
      out[i] = GNUNET_CRYPTO_rsa_unblind (blinded_sig, &bks, pub);
    report (rep, "unblinding", block_end (t0));
    free_signatures (out, n[3]);
    sig = out[n[3] - 1];
    if (NULL == sig)
      fail ("rsa_unblind failed");

    t0 = block_start ();
    for (unsigned int i = 0; i < n[4]; i++)
      ok = GNUNET_CRYPTO_rsa_verify (&hash, sig, pub);
    report (rep, "verifying", block_end (t0));
    if (GNUNET_OK != ok)
      fail ("RSA signature does not verify");

    GNUNET_CRYPTO_rsa_signature_free (sig);
    GNUNET_CRYPTO_rsa_signature_free (blinded_sig);
    GNUNET_free (blinded);
    GNUNET_CRYPTO_rsa_public_key_free (pub);
    GNUNET_CRYPTO_rsa_private_key_free (priv);
  }
  free (out);
  free (out_len);
}


static int
usage (void)
{
  fprintf (stderr, "usage: harness_overhead [--count-markers [--count-keys DIR]]"
           " GROUP...\n"
           "  GROUP: cs N1,...,N7 REPS | rsa BITS N1,...,N5 REPS"
           " (at most %d)\n", MAX_GROUPS);
  return EXIT_USAGE;
}


int
main (int argc, char **argv)
{
  struct Group groups[MAX_GROUPS];
  unsigned int n_groups = 0;
  const char *keys_dir = NULL;
  int i = 1;

  if ((i < argc) && (0 == strcmp (argv[i], "--count-markers")))
  {
    count_markers = true;
    count_fix_inputs (); /* the same inputs as blindsig --count-markers */
    i++;
    if ((i + 1 < argc) && (0 == strcmp (argv[i], "--count-keys")))
    {
      keys_dir = argv[i + 1];
      i += 2;
    }
  }
  while (i < argc)
  {
    struct Group *g = &groups[n_groups];

    if (n_groups == MAX_GROUPS)
      return usage ();
    if ((0 == strcmp (argv[i], "cs")) && (i + 2 < argc))
    {
      g->bits = 0;
      parse_sizes (argv[i + 1], g->n, CS_OPS);
      g->reps = parse_count (argv[i + 2], MAX_REPS);
      i += 3;
    }
    else if ((0 == strcmp (argv[i], "rsa")) && (i + 3 < argc))
    {
      g->bits = parse_count (argv[i + 1], 16384);
      parse_sizes (argv[i + 2], g->n, RSA_OPS);
      g->reps = parse_count (argv[i + 3], MAX_REPS);
      i += 4;
    }
    else
      return usage ();
    n_groups++;
  }
  if (0 == n_groups)
    return usage ();
  /* As blindsig: every fixed key is checked before anything runs. */
  for (unsigned int k = 0; (NULL != keys_dir) && (k < n_groups); k++)
    if ((0 != groups[k].bits) && (! count_load_key (keys_dir, groups[k].bits)))
      return EXIT_USAGE;
  GNUNET_log_setup ("harness_overhead", "ERROR", NULL);
  for (unsigned int k = 0; k < n_groups; k++)
    if (0 == groups[k].bits)
      cs_blocks (groups[k].n, groups[k].reps);
    else
      rsa_blocks (groups[k].bits, groups[k].n, groups[k].reps);
  return (0 == fflush (stdout)) ? 0 : EXIT_FAILED;
}
