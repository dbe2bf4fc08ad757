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
 * same deterministic generator, and GNUnet's weak PRNG from a fixed seed.
 * The library calls measured are the same; only their inputs are fixed, so
 * every CS block counts the same instructions in every run (same binary,
 * same QEMU CPU model).  One difference to timing mode: CS key generation's
 * random scalar comes from the deterministic generator (ChaCha20 in the
 * guest) instead of getrandom () (whose kernel work is never counted).
 * libgcrypt's own draws (RSA key generation, RSA blinding inside
 * gcry_pk_sign) stay random.
 */
#ifndef ARCHBENCH_COUNT_INPUTS_H
#define ARCHBENCH_COUNT_INPUTS_H

#include <gnunet/gnunet_util_lib.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define COUNT_INPUT_WEAK_SEED 0x41424331 /* "ABC1", as COUNT_MAGIC */

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
count_input_bytes (enum GNUNET_CRYPTO_Quality quality, void *buf, size_t len)
{
  static uint64_t seq;

  if (count_fixed_inputs)
    count_fixed_bytes ('d', &seq, buf, len);
  else
    GNUNET_CRYPTO_random_block (quality, buf, len);
}

/* Counting mode: fix every input (call once, before the first draw). */
static void
count_fix_inputs (void)
{
  count_fixed_inputs = true;
  GNUNET_CRYPTO_seed_weak_random (COUNT_INPUT_WEAK_SEED);
  if (0 != randombytes_set_implementation (&count_rng))
    fprintf (stderr, "blindsig: cannot fix libsodium's generator\n");
}

#endif
