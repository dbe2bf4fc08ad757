/*
 * count_inputs.h -- fixed inputs for blindsig in counting mode (--count-markers).
 *
 * Why: libgcrypt's CSPRNG does a "fast random poll" in every gcry_md_open ()
 * (so in every HKDF/HMAC GNUnet computes); each poll adds a fixed number of
 * bytes to the 600-byte entropy pool, and whenever the pool fills, the next
 * addition mixes it (mix_pool: SHA-1 over the pool, 40 590 instructions on
 * amd64).  So a mix lands after every few hashes, and which timed block
 * catches it depends on how many hashes ran before: CS blinding and
 * verifying hash to the curve with a data-dependent number of tries, and CS
 * key generation (libsodium) and the check that a flipped message bit fails
 * (GNUnet's weak PRNG) depend on random values.  With random inputs, CS r
 * derivation, blinding-secret derivation and signing blocks therefore count
 * one mix more or less from run to run, and blinding and verifying vary with
 * the message anyway.
 *
 * What: in counting mode every input the driver draws (messages, nonces,
 * blinding seeds, RSA blinding key secrets) comes from libsodium's
 * randombytes_buf_deterministic () with a fixed seed and a per-draw
 * sequence number, libsodium's randombytes_* (CS key generation) from the
 * same deterministic generator, and GNUnet's weak PRNG from a fixed seed
 * (master after 0.27.0 has no weak PRNG: every GNUNET_CRYPTO_random_* call
 * is libsodium's randombytes, so the deterministic generator fixes it too).
 * The library calls measured are the same; only their inputs are fixed, so
 * every CS block counts the same instructions in every run (same binary,
 * same QEMU CPU model).  One difference to timing mode: CS key generation's
 * random scalar comes from the deterministic generator (ChaCha20 in the
 * guest) instead of getrandom () (whose kernel work is never counted).
 * libgcrypt's own draws (RSA key generation, RSA blinding inside
 * gcry_pk_sign) stay random.
 *
 * Fixed RSA keys (--count-keys DIR): RSA key generation stays timed and
 * counted on a freshly generated key (it is reported as random, with median
 * and spread), but right after each key generation block the generated key
 * is replaced by a fixed public test key of the same modulus size, read from
 * DIR/count-key-rsa-<bits>.key (GNUnet's encoding, libgcrypt's S-expression,
 * GNUNET_CRYPTO_rsa_private_key_decode).  Blinding, signing, unblinding and
 * verifying then run on the same key in every run, so their counts repeat.
 * Every item of a fresh-items repetition uses the same fixed key.
 */
#ifndef ARCHBENCH_COUNT_INPUTS_H
#define ARCHBENCH_COUNT_INPUTS_H

#include <gnunet/gnunet_util_lib.h>
#include <sodium.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define COUNT_INPUT_WEAK_SEED 0x41424331 /* "ABC1", as COUNT_MAGIC */

/* libgnunetutil's randomness API, as the Makefile probed it
 * (drivers/blindsig_api_probe.c): ABH_RANDOM_ARITY 3 is
 * GNUNET_CRYPTO_random_block (quality, buf, len) with enum
 * GNUNET_CRYPTO_Quality (GNUnet 0.19 to 0.27.0), 2 is random_block (buf, len)
 * without the enum (master after 0.27.0: libsodium's randombytes, one
 * quality).  ABH_HAVE_SEED_WEAK: GNUNET_CRYPTO_seed_weak_random exists.  A
 * program built without the probes (benchmarks/harness_overhead.c against
 * Debian's libgnunet) gets the 0.19-0.27 API.  The driver writes
 * ABH_QUALITY_* and abh_random_*; with ABH_RANDOM_ARITY 3 they are exactly
 * the calls the driver made before, so its code is unchanged. */
#ifndef ABH_RANDOM_ARITY
#define ABH_RANDOM_ARITY 3
#endif
#ifndef ABH_HAVE_SEED_WEAK
#define ABH_HAVE_SEED_WEAK (ABH_RANDOM_ARITY == 3)
#endif
#if ABH_RANDOM_ARITY == 3
typedef enum GNUNET_CRYPTO_Quality abh_quality;
#define ABH_QUALITY_WEAK GNUNET_CRYPTO_QUALITY_WEAK
#define ABH_QUALITY_STRONG GNUNET_CRYPTO_QUALITY_STRONG
#define ABH_QUALITY_NONCE GNUNET_CRYPTO_QUALITY_NONCE
#define abh_random_block(q, buf, len) GNUNET_CRYPTO_random_block ((q), (buf), (len))
#define abh_random_u32(q, max) GNUNET_CRYPTO_random_u32 ((q), (max))
#elif ABH_RANDOM_ARITY == 2
/* The quality the driver asked for is kept in its source (it says what the
 * input is) and dropped here: libgnunetutil has one generator. */
typedef int abh_quality;
#define ABH_QUALITY_WEAK 0
#define ABH_QUALITY_STRONG 1
#define ABH_QUALITY_NONCE 2
#define abh_random_block(q, buf, len) \
  ((void) (q), GNUNET_CRYPTO_random_block ((buf), (len)))
#define abh_random_u32(q, max) ((void) (q), GNUNET_CRYPTO_random_u32 (max))
#else
#error "blindsig: ABH_RANDOM_ARITY must be 3 (GNUnet 0.19-0.27.0) or 2 (master after 0.27.0)"
#endif

static bool count_fixed_inputs;

/* Deterministic bytes: the seed names the stream (driver inputs or
 * libsodium's generator) and carries that stream's draw number. */
static void
count_fixed_bytes (char stream, uint64_t *seq, void *buf, size_t len)
{
  unsigned char seed[randombytes_SEEDBYTES] = "archbench-count-inputs-v1";

  seed[randombytes_SEEDBYTES - 9] = (unsigned char) stream;
  for (unsigned int i = 0; i < 8; i++)
    seed[randombytes_SEEDBYTES - 8 + i] = (unsigned char) (*seq >> (8 * i));
  (*seq)++;
  randombytes_buf_deterministic (buf, len, seed);
}

static uint64_t count_sodium_seq;

static const char *
count_rng_name (void)
{
  return "archbench-count-fixed";
}

static void
count_rng_buf (void *const buf, const size_t size)
{
  count_fixed_bytes ('s', &count_sodium_seq, buf, size);
}

static uint32_t
count_rng_random (void)
{
  uint32_t x;

  count_rng_buf (&x, sizeof x);
  return x;
}

static randombytes_implementation count_rng = {
  .implementation_name = count_rng_name,
  .random = count_rng_random,
  .stir = NULL,
  .uniform = NULL, /* libsodium's generic rejection sampling over random */
  .buf = count_rng_buf,
  .close = NULL,
};

/* An input the driver draws: GNUnet's generator, or fixed in counting mode. */
static void
count_input_bytes (abh_quality quality, void *buf, size_t len)
{
  static uint64_t seq;

  if (count_fixed_inputs)
    count_fixed_bytes ('d', &seq, buf, len);
  else
    abh_random_block (quality, buf, len);
}

/* Counting mode: fix every input (call once, before the first draw). */
static void
count_fix_inputs (void)
{
  count_fixed_inputs = true;
#if ABH_HAVE_SEED_WEAK
  GNUNET_CRYPTO_seed_weak_random (COUNT_INPUT_WEAK_SEED);
#endif
  if (0 != randombytes_set_implementation (&count_rng))
    fprintf (stderr, "blindsig: cannot fix libsodium's generator\n");
}


/* Largest key file read (an RSA-16384 key is about 10 KiB). */
#define COUNT_KEY_MAX_BYTES 65536

struct CountKey
{
  unsigned int bits;
  struct GNUNET_CRYPTO_RsaPrivateKey *priv;
};

static struct CountKey count_keys[16];
static unsigned int count_n_keys;

/**
 * Read and check DIR/count-key-rsa-<bits>.key: it must decode and have
 * exactly @a bits.  Returns false (after a message on stderr) otherwise.
 */
__attribute__ ((unused)) static bool
count_load_key (const char *dir, unsigned int bits)
{
  char path[4096];
  unsigned char *buf;
  size_t len;
  FILE *f;
  struct GNUNET_CRYPTO_RsaPrivateKey *priv;
  struct GNUNET_CRYPTO_RsaPublicKey *pub;
  unsigned int got;

  if (count_n_keys >= sizeof (count_keys) / sizeof (count_keys[0]))
    return false;
  if ((size_t) snprintf (path, sizeof path, "%s/count-key-rsa-%u.key", dir,
                         bits) >= sizeof path)
  {
    fprintf (stderr, "blindsig: --count-keys path too long\n");
    return false;
  }
  f = fopen (path, "rb");
  if (NULL == f)
  {
    fprintf (stderr, "blindsig: cannot read fixed RSA-%u key %s: %s\n", bits,
             path, strerror (errno));
    return false;
  }
  buf = malloc (COUNT_KEY_MAX_BYTES);
  len = (NULL == buf) ? 0 : fread (buf, 1, COUNT_KEY_MAX_BYTES, f);
  fclose (f);
  priv = ((0 == len) || (COUNT_KEY_MAX_BYTES == len))
         ? NULL : GNUNET_CRYPTO_rsa_private_key_decode (buf, len);
  free (buf);
  if (NULL == priv)
  {
    fprintf (stderr, "blindsig: %s is not a GNUnet RSA private key\n", path);
    return false;
  }
  pub = GNUNET_CRYPTO_rsa_private_key_get_public (priv);
  got = (NULL == pub) ? 0 : GNUNET_CRYPTO_rsa_public_key_len (pub);
  if (NULL != pub)
    GNUNET_CRYPTO_rsa_public_key_free (pub);
  if (got != bits)
  {
    fprintf (stderr, "blindsig: %s has a %u-bit modulus, not %u\n", path,
             got, bits);
    GNUNET_CRYPTO_rsa_private_key_free (priv);
    return false;
  }
  count_keys[count_n_keys].bits = bits;
  count_keys[count_n_keys++].priv = priv;
  return true;
}

/**
 * A copy (the caller frees it) of the fixed key of @a bits, or NULL when
 * no fixed keys were loaded (timing mode, or counting without --count-keys).
 */
__attribute__ ((unused)) static struct GNUNET_CRYPTO_RsaPrivateKey *
count_fixed_rsa_key (unsigned int bits)
{
  for (unsigned int i = 0; i < count_n_keys; i++)
    if (count_keys[i].bits == bits)
      return GNUNET_CRYPTO_rsa_private_key_dup (count_keys[i].priv);
  return NULL;
}


/**
 * The key RSA operations use after a key generation block: @a generated, or,
 * when the fixed key of @a bits is loaded (--count-keys), a copy of that
 * fixed key, in which case @a generated is freed.  The caller owns the
 * result.  Shared by blindsig (blindsig_repeated.h) and the bare loop
 * (benchmarks/harness_overhead.c), so both sign with the same key.
 */
static struct GNUNET_CRYPTO_RsaPrivateKey *
count_swap_fixed_rsa_key (struct GNUNET_CRYPTO_RsaPrivateKey *generated,
                          unsigned int bits)
{
  struct GNUNET_CRYPTO_RsaPrivateKey *fixed = count_fixed_rsa_key (bits);

  if (NULL == fixed)
    return generated;
  GNUNET_CRYPTO_rsa_private_key_free (generated);
  return fixed;
}

#endif
