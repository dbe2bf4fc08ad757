/*
 * sodium_bench_measure.c -- what sodium_bench measures and how: each row's
 * untimed preparation, its timed block, the untimed checks after it (listed
 * at the top of sodium_bench.c), calibration, warmups and samples, and the
 * calib/warmup/sample/invalid lines.
 */
#include "sodium_bench.h"

#include <inttypes.h>
#include <stdio.h>

#include "counting/count_marker.h"

#define MAX_AUTO_OPS 1000000UL
#define CALIB_CONFIRMATIONS 2

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

void
measure_rows (const struct Options *o, const struct Clock *c, struct Work *w)
{
  static const char *const sig_ops[] = { "key_generation", "sign", "verify" };
  static const char *const per_byte[] = { "XSalsa20", "SHA-256", "SHA-512" };

  /* count_marker.h's switch is this file's: the timed blocks are here. */
  count_markers = o->count_markers;
  for (size_t i = 0; i < sizeof (sig_ops) / sizeof (sig_ops[0]); i++)
  {
    struct Row r = { "Ed25519", sig_ops[i], 0 };

    measure_row (o, c, &r, w);
  }
  {
    struct Row r = { "X25519", "derive", 0 };

    measure_row (o, c, &r, w);
  }
  for (size_t s = 0; s < sizeof (per_byte) / sizeof (per_byte[0]); s++)
    for (size_t i = 0; i < o->n_sizes; i++)
    {
      struct Row r = { per_byte[s], 0 == s ? "stream" : "hash", o->sizes[i] };

      measure_row (o, c, &r, w);
    }
}
