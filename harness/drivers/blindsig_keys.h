/*
 * blindsig_keys.h -- key generation leaves the adaptive loop (--reuse-keys).
 *
 * Included once, by blindsig_measure.c, after blindsig_repeated.h: like that file it
 * holds static definitions and sees the stage functions of both
 * measurements (cs_keygen, rsa_keygen with --fresh-items; cs_same_keygen,
 * rsa_same_keygen by default).
 *
 * Why: with adaptive repetitions every repetition ran the whole chain, key
 * generation included.  Key generation's time varies from key to key by
 * tens of percent (the prime search), so its interval rarely narrows to the
 * target, and a block of ten RSA-4096 keys takes ~10 s natively: it kept its
 * pair running and ate the budget of the other rows.  The harness (Python,
 * blindsig_adaptive.py) therefore answers "more nokeygen" once key
 * generation has its --min-repetitions blocks; the pair's further
 * repetitions skip the key generation block and run the other blocks on the
 * keys the last key generation block made.  The decision is the harness's;
 * this file only keeps and hands out keys.
 *
 * Keeping: after every key generation block (outside the timed region,
 * after count_block_stop()), kept_keys_store() copies the block's keys into
 * the running pair's KeptKeys: CS keys by value, RSA keys with
 * GNUNET_CRYPTO_rsa_private_key_dup() (the repetition frees its own).  Only
 * with --reuse-keys (kept_keys != NULL); a run without it does no more work
 * between blocks than before.
 *
 * Handing out: in a repetition that skips key generation
 * (kept_keys_reuse), kept_keys_substitute() replaces the key generation
 * block by the kept keys and run_stage() times nothing (0 ns, not printed).
 * What the other blocks see is what they saw after a timed key generation:
 *   - by default (one call after another on the same item) the last key of
 *     the block: CS by value; RSA as fresh duplicates in the repetition's
 *     result slots, which rsa_repetition_repeated() frees as it frees
 *     generated keys;
 *   - with --fresh-items, all ops[0] keys of the block, item i using key
 *     i mod ops[0] as before; RSA items borrow the kept keys (owns_key
 *     false), so rsa_free_items() leaves them to the pair.
 * The pair frees its kept keys when it finishes (pair_finish(),
 * blindsig_kept_keys_free()).
 */
#ifndef ARCHBENCH_BLINDSIG_KEYS_H
#define ARCHBENCH_BLINDSIG_KEYS_H

/* struct KeptKeys (the keys of one pair) is in blindsig.h. */

/* The running pair's keys with --reuse-keys, else NULL (set by pair_step()). */
static struct KeptKeys *kept_keys;
/* This repetition skips key generation and uses kept_keys. */
static bool kept_keys_reuse;


static void
kept_keys_clear (struct KeptKeys *k)
{
  for (unsigned int i = 0; (NULL != k->rsa_priv) && (i < k->n); i++)
  {
    if (NULL != k->rsa_pub[i])
      GNUNET_CRYPTO_rsa_public_key_free (k->rsa_pub[i]);
    if (NULL != k->rsa_priv[i])
      GNUNET_CRYPTO_rsa_private_key_free (k->rsa_priv[i]);
  }
  if (NULL != k->cs_priv)
    GNUNET_CRYPTO_zero_keys (k->cs_priv, k->n * sizeof (*k->cs_priv));
  free (k->cs_priv);
  free (k->cs_pub);
  free (k->rsa_priv);
  free (k->rsa_pub);
  memset (k, 0, sizeof (*k));
}


/**
 * Replace @a k's keys by room for @a n of the given scheme.
 *
 * @return false when out of memory (then nothing is kept)
 */
static bool
kept_keys_alloc (struct KeptKeys *k, unsigned int n, bool rsa)
{
  kept_keys_clear (k);
  if (rsa)
  {
    k->rsa_priv = calloc (n, sizeof (*k->rsa_priv));
    k->rsa_pub = calloc (n, sizeof (*k->rsa_pub));
  }
  else
  {
    k->cs_priv = calloc (n, sizeof (*k->cs_priv));
    k->cs_pub = calloc (n, sizeof (*k->cs_pub));
  }
  if (rsa ? ((NULL == k->rsa_priv) || (NULL == k->rsa_pub))
      : ((NULL == k->cs_priv) || (NULL == k->cs_pub)))
  {
    kept_keys_clear (k);
    return false;
  }
  k->n = n;
  return true;
}


/**
 * Keep a duplicate of RSA key @a priv (and its public key) as kept key
 * @a i; on failure nothing stays kept.
 */
static bool
kept_keys_put_rsa (struct KeptKeys *k, unsigned int i,
                   const struct GNUNET_CRYPTO_RsaPrivateKey *priv)
{
  if (NULL != priv)
    k->rsa_priv[i] = GNUNET_CRYPTO_rsa_private_key_dup (priv);
  if (NULL != k->rsa_priv[i])
    k->rsa_pub[i] = GNUNET_CRYPTO_rsa_private_key_get_public (k->rsa_priv[i]);
  if (NULL == k->rsa_pub[i])
  {
    kept_keys_clear (k);
    return false;
  }
  return true;
}


/**
 * After the timed block of stage @a timed over @a n items: if it generated
 * keys and --reuse-keys is on, keep them (see the top of this file).
 */
static void
kept_keys_store (StageFn timed, void *ctx, unsigned int n)
{
  struct KeptKeys *k = kept_keys;

  if ((NULL == k) || (0 == n))
    return;
  if (timed == &cs_keygen)
  {
    const struct CsItem *it = ((struct CsRep *) ctx)->it;

    if (kept_keys_alloc (k, n, false))
      for (unsigned int i = 0; i < n; i++)
      {
        k->cs_priv[i] = it[i].priv;
        k->cs_pub[i] = it[i].pub;
      }
  }
  else if (timed == &cs_same_keygen)
  {
    const struct CsItem *it = &((struct CsSame *) ctx)->it;

    if (kept_keys_alloc (k, 1, false))
    {
      k->cs_priv[0] = it->priv;
      k->cs_pub[0] = it->pub;
    }
  }
  else if (timed == &rsa_keygen)
  {
    const struct RsaItem *it = ((struct RsaRep *) ctx)->it;

    if (kept_keys_alloc (k, n, true))
      for (unsigned int i = 0; i < n; i++)
        if (! kept_keys_put_rsa (k, i, it[i].priv))
          break;
  }
  else if (timed == &rsa_same_keygen)
  {
    const struct RsaSame *s = ctx;

    if (kept_keys_alloc (k, 1, true))
      (void) kept_keys_put_rsa (k, 0, s->out[n - 1]);
  }
}


/**
 * Instead of the key generation block of stage @a timed over @a n items,
 * hand out the kept keys, when this repetition skips key generation.
 *
 * @return true when @a timed is a key generation stage that was replaced
 *         (run_stage() then times nothing); false otherwise
 */
static bool
kept_keys_substitute (StageFn timed, void *ctx, unsigned int n)
{
  const struct KeptKeys *k = kept_keys;

  if ((! kept_keys_reuse) || (NULL == k) || (0 == k->n))
    return false;
  if ((timed == &cs_keygen) && (NULL != k->cs_priv))
  {
    struct CsItem *it = ((struct CsRep *) ctx)->it;

    for (unsigned int i = 0; i < n; i++)
    {
      it[i].priv = k->cs_priv[i % k->n];
      it[i].pub = k->cs_pub[i % k->n];
    }
    return true;
  }
  if ((timed == &cs_same_keygen) && (NULL != k->cs_priv))
  {
    struct CsItem *it = &((struct CsSame *) ctx)->it;

    it->priv = k->cs_priv[k->n - 1];
    it->pub = k->cs_pub[k->n - 1];
    return true;
  }
  if ((timed == &rsa_keygen) && (NULL != k->rsa_priv))
  {
    struct RsaItem *it = ((struct RsaRep *) ctx)->it;

    for (unsigned int i = 0; i < n; i++)
    {
      it[i].owns_key = false;          /* the pair frees kept keys */
      it[i].priv = k->rsa_priv[i % k->n];
      it[i].pub = k->rsa_pub[i % k->n];
    }
    return true;
  }
  if ((timed == &rsa_same_keygen) && (NULL != k->rsa_priv))
  {
    struct RsaSame *s = ctx;

    /* rsa_repetition_repeated() frees all but the last and keeps that one
     * as its key, as after a timed block; a failed duplicate is a NULL it
     * reports as a failed key generation. */
    for (unsigned int i = 0; i < n; i++)
      s->out[i] = GNUNET_CRYPTO_rsa_private_key_dup (k->rsa_priv[k->n - 1]);
    return true;
  }
  return false;
}

#endif
