/*
 * rsa_large_measure.c -- what rsa_large measures and how, per size: key
 * generation under its budget, the RSASSA-PKCS1-v1_5 SHA-256 contexts and
 * message digests, the correctness check, calibration and the timed sign
 * and verify blocks, with their output lines (why it is timed this way:
 * the top of rsa_large.c).
 */
#include "rsa_large.h"

#include <openssl/err.h>
#include <openssl/rsa.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counting/count_marker.h"

/* Distinct messages signed in turn, so that a block does not sign one
 * digest over and over (PKCS#1 v1.5 is deterministic either way). */
#define MESSAGES 16u
#define DIGEST_LEN 32u

/* Shared with the key generation callback. */
static uint64_t keygen_deadline_ns;
static bool keygen_deadline_hit;

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

void
run_sizes (const struct options *o)
{
  /* count_marker.h's switch is this file's: the timed blocks are here. */
  count_markers = o->count_markers;
  for (size_t i = 0; i < o->n_bits; i++)
    run_size (o->bits[i], o);
}
