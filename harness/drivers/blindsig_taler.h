/*
 * blindsig_taler.h -- the rows of GNUnet's scheme-independent blind-signature
 * layer (GNUNET_CRYPTO_blind_sign_keys_create .. GNUNET_CRYPTO_blind_sig_verify,
 * crypto_blind_sign.c), the calls GNU Taler's exchange and wallet make.
 *
 * Included once, by blindsig_measure.c, after blindsig_keys.h, and only for
 * the 0.21 API (ABH_TALER_LAYER): 0.19/0.20 have no such layer, and a build
 * for them compiles nothing of this file, so its timed code is unchanged.
 * Like the files before it this holds static definitions, in the one
 * translation unit of the timed code (run_stage(), now_ns(), the count
 * markers).
 *
 * A repetition of a pair runs the raw chain first (blindsig_repeated.h),
 * then this chain, each with its own blocks, block sizes and calibration:
 *   taler_key_generation   blind_sign_keys_create (cipher, RSA bits)
 *   taler_blinding_input   get_blinding_input_values (CS: r derivation and
 *                          R; RSA: an allocation)
 *   taler_blinding         message_blind_to_sign
 *   taler_signing          blind_sign (CS: r derivation again + signing)
 *   taler_unblinding       blind_sig_unblind (CS: blinding secrets, c and
 *                          the blinded R again + unblinding)
 *   taler_verifying        blind_sig_verify
 * (what each contains relative to the raw rows: the row notes of
 * blindsig_api.c).  The measurement is the default one, one call after
 * another on the same item: one random 64-byte message (given to the layer
 * as is; Taler gives it the 64-byte hash of a coin's public key), one
 * session nonce and one blinding secret per repetition, drawn untimed; each
 * call's result (the layer returns every result allocated, reference
 * counted) is kept in a slot and released after the block, all but the
 * last, which feeds the next step.  Every deterministic result must be
 * byte-identical to the block's first (the layer's own *_cmp functions),
 * the final signature must verify and a one-bit change of the message must
 * be rejected.  With --fresh-items the rows are absent (meta taler_layer
 * says so): this file implements only the default measurement.
 *
 * Keys: each repetition's key generation block makes keys_create's keys;
 * the last feeds the chain.  In a repetition that skips key generation
 * ("more nokeygen", --reuse-keys) the block is skipped as the raw one is and
 * the chain runs on the raw chain's kept key, wrapped into the layer's key
 * structs untimed (blindsig_taler_keys()).  In counting mode with
 * --count-keys, RSA after key generation uses the fixed key, as the raw
 * chain does.
 */
#ifndef ARCHBENCH_BLINDSIG_TALER_H
#define ARCHBENCH_BLINDSIG_TALER_H

/* What one slot of TalerSame.out holds: decides how it is compared with the
 * block's first result and released. */
enum TalerKind
{
  TK_KEYS,
  TK_INPUT,
  TK_BLINDED,
  TK_BLIND_SIG,
  TK_SIG
};

struct TalerSame
{
  enum GNUNET_CRYPTO_BlindSignatureAlgorithm cipher;
  unsigned int bits;                           /* RSA modulus; 0 for CS */
  struct GNUNET_CRYPTO_BlindSignPrivateKey *priv;  /* the chain's */
  struct GNUNET_CRYPTO_BlindSignPublicKey *pub;
  struct GNUNET_CRYPTO_BlindingInputValues *input;
  struct GNUNET_CRYPTO_BlindedMessage *blinded;
  struct GNUNET_CRYPTO_BlindedSignature *blind_sig;
  struct GNUNET_CRYPTO_UnblindedSignature *sig;
  union GNUNET_CRYPTO_BlindSessionNonce nonce;
  const union GNUNET_CRYPTO_BlindSessionNonce *nonce_arg;  /* NULL for RSA */
  union GNUNET_CRYPTO_BlindingSecretP bks;
  enum GNUNET_GenericReturnValue verified;
  unsigned int keygen_failures;                /* keys_create != GNUNET_OK */
  void **out;                                  /* one result per call */
  struct GNUNET_CRYPTO_BlindSignPrivateKey **out_priv;  /* keys_create's */
  struct GNUNET_CRYPTO_BlindSignPublicKey **out_pub;
  unsigned char msg[MSG_LEN];
};


static void
taler_same_keygen (void *ctx, unsigned int lo, unsigned int hi)
{
  struct TalerSame *t = ctx;

  /* Two calls, not one with a conditional argument: keys_create reads the
   * RSA size through va_arg, and CS takes none. */
  if (GNUNET_CRYPTO_BSA_RSA == t->cipher)
    for (unsigned int i = lo; i < hi; i++)
      t->keygen_failures += (GNUNET_OK
                             != GNUNET_CRYPTO_blind_sign_keys_create (
                               &t->out_priv[i], &t->out_pub[i], t->cipher,
                               t->bits));
  else
    for (unsigned int i = lo; i < hi; i++)
      t->keygen_failures += (GNUNET_OK
                             != GNUNET_CRYPTO_blind_sign_keys_create (
                               &t->out_priv[i], &t->out_pub[i], t->cipher));
}


/* "rw": the salt of the raw r derivation (cs_r_seed), as Taler's exchange
 * uses for withdrawals. */
static void
taler_same_input (void *ctx, unsigned int lo, unsigned int hi)
{
  struct TalerSame *t = ctx;

  for (unsigned int i = lo; i < hi; i++)
    t->out[i] = GNUNET_CRYPTO_get_blinding_input_values (t->priv, t->nonce_arg,
                                                         cs_r_seed);
}


static void
taler_same_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct TalerSame *t = ctx;

  for (unsigned int i = lo; i < hi; i++)
    t->out[i] = GNUNET_CRYPTO_message_blind_to_sign (t->pub, &t->bks,
                                                     t->nonce_arg, t->msg,
                                                     sizeof (t->msg),
                                                     t->input);
}


static void
taler_same_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct TalerSame *t = ctx;

  for (unsigned int i = lo; i < hi; i++)
    t->out[i] = GNUNET_CRYPTO_blind_sign (t->priv, cs_r_seed, t->blinded);
}


static void
taler_same_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct TalerSame *t = ctx;

  for (unsigned int i = lo; i < hi; i++)
    t->out[i] = GNUNET_CRYPTO_blind_sig_unblind (t->blind_sig, &t->bks,
                                                 t->msg, sizeof (t->msg),
                                                 t->input, t->pub);
}


static void
taler_same_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct TalerSame *t = ctx;

  for (unsigned int i = lo; i < hi; i++)
    t->verified = GNUNET_CRYPTO_blind_sig_verify (t->pub, t->sig, t->msg,
                                                  sizeof (t->msg));
}


static void
taler_release (enum TalerKind kind, void *p)
{
  if (NULL == p)
    return;
  switch (kind)
  {
  case TK_KEYS:
    GNUNET_CRYPTO_blind_sign_priv_decref (p);
    break;
  case TK_INPUT:
    GNUNET_CRYPTO_blinding_input_values_decref (p);
    break;
  case TK_BLINDED:
    GNUNET_CRYPTO_blinded_message_decref (p);
    break;
  case TK_BLIND_SIG:
    GNUNET_CRYPTO_blinded_sig_decref (p);
    break;
  case TK_SIG:
    GNUNET_CRYPTO_unblinded_sig_decref (p);
    break;
  }
}


/* Whether two results of one block are the same bytes (the calls after key
 * generation are deterministic). */
static bool
taler_same_result (enum TalerKind kind, const void *a, const void *b)
{
  const struct GNUNET_CRYPTO_BlindingInputValues *ia = a;
  const struct GNUNET_CRYPTO_BlindingInputValues *ib = b;

  switch (kind)
  {
  case TK_KEYS:
    return true;                       /* random by design */
  case TK_INPUT:
    return (ia->cipher == ib->cipher)
           && ((GNUNET_CRYPTO_BSA_CS != ia->cipher)
               || (0 == memcmp (&ia->details.cs_values,
                                &ib->details.cs_values,
                                sizeof (ia->details.cs_values))));
  case TK_BLINDED:
    return 0 == GNUNET_CRYPTO_blinded_message_cmp (a, b);
  case TK_BLIND_SIG:
    return 0 == GNUNET_CRYPTO_blind_sig_cmp (a, b);
  case TK_SIG:
    return 0 == GNUNET_CRYPTO_ub_sig_cmp (a, b);
  }
  return false;
}


/**
 * The block of @a stage over @a n calls, timed by run_stage() (slots
 * cleared first, @a m of them), then its results checked: all non-NULL and
 * equal to the first.  Releases all but the last.
 *
 * @return the last result, or NULL after a verdict naming @a what
 */
static void *
taler_block (struct TalerSame *t, StageFn stage, enum TalerKind kind,
             unsigned int m, unsigned int n, uint64_t *ns, const char *what,
             struct Verdict *v)
{
  bool failed = false;
  bool differ = false;
  void *last;

  memset (t->out, 0, m * sizeof (*t->out));
  *ns = run_stage (stage, NULL, t, n, n);
  for (unsigned int i = 0; i < n; i++)
    if (NULL == t->out[i])
      failed = true;
    else if ((i > 0) && (NULL != t->out[0])
             && (! taler_same_result (kind, t->out[0], t->out[i])))
      differ = true;
  last = t->out[n - 1];
  for (unsigned int i = 0; i + 1 < n; i++)
    taler_release (kind, t->out[i]);
  if (failed || differ)
  {
    taler_release (kind, last);
    verdict_fail (v, "%s %s", what, differ ? "gave differing results"
                  : "failed");
    return NULL;
  }
  return last;
}


/**
 * The key generation block (or, skipping it, the kept raw key wrapped):
 * sets t->priv and t->pub, false after a verdict.
 */
static bool
taler_keys (struct TalerSame *t, unsigned int m, unsigned int n,
            uint64_t *ns, struct Verdict *v)
{
  const struct KeptKeys *k = kept_keys;
  const char *label = (GNUNET_CRYPTO_BSA_RSA == t->cipher) ? "RSA" : "CS";

  *ns = 0;
  if (kept_keys_reuse && (NULL != k) && (0 != k->n))
  {
    /* Key generation left the loop: the raw chain's kept key, untimed. */
    if (! blindsig_taler_keys (
          (NULL != k->cs_priv) ? &k->cs_priv[k->n - 1] : NULL,
          (NULL != k->rsa_priv) ? k->rsa_priv[k->n - 1] : NULL,
          &t->priv, &t->pub))
    {
      verdict_fail (v, "%s blind_sign_keys: no kept key to reuse", label);
      return false;
    }
    return true;
  }
  memset (t->out_priv, 0, m * sizeof (*t->out_priv));
  memset (t->out_pub, 0, m * sizeof (*t->out_pub));
  *ns = run_stage (&taler_same_keygen, NULL, t, n, n);
  for (unsigned int i = 0; i + 1 < n; i++)
  {
    taler_release (TK_KEYS, t->out_priv[i]);
    if (NULL != t->out_pub[i])
      GNUNET_CRYPTO_blind_sign_pub_decref (t->out_pub[i]);
  }
  t->priv = t->out_priv[n - 1];
  t->pub = t->out_pub[n - 1];
  if ((0 != t->keygen_failures) || (NULL == t->priv) || (NULL == t->pub))
  {
    verdict_fail (v, "%s blind_sign_keys_create failed (%u of %u calls)",
                  label, t->keygen_failures, n);
    return false;
  }
  if (GNUNET_CRYPTO_BSA_RSA == t->cipher)
  {
    /* Counting with --count-keys: the other blocks use the fixed key. */
    struct GNUNET_CRYPTO_RsaPrivateKey *fixed = count_fixed_rsa_key (t->bits);

    if (NULL != fixed)
    {
      GNUNET_CRYPTO_blind_sign_priv_decref (t->priv);
      GNUNET_CRYPTO_blind_sign_pub_decref (t->pub);
      t->priv = NULL;
      t->pub = NULL;
      if (! blindsig_taler_keys (NULL, fixed, &t->priv, &t->pub))
        verdict_fail (v, "RSA-%u: the fixed key does not wrap", t->bits);
      GNUNET_CRYPTO_rsa_private_key_free (fixed);
      return ! v->failed;
    }
  }
  return true;
}


/**
 * One repetition of the layer's chain for pair @a bits (0: CS): block k
 * times ops[k] calls, ns[k] its wall time (0 when skipped), in the order of
 * the taler_* operation ids.  Same contract as cs_repetition().
 */
static void
taler_repetition (unsigned int bits, const unsigned int *ops, uint64_t *ns,
                  unsigned int rep, struct Verdict *v)
{
  const unsigned int m = max_of (ops, TALER_OPS);
  struct TalerSame t = {
    .cipher = (0 == bits) ? GNUNET_CRYPTO_BSA_CS : GNUNET_CRYPTO_BSA_RSA,
    .bits = bits
  };
  const char *label = (0 == bits) ? "CS" : "RSA";

  memset (ns, 0, TALER_OPS * sizeof (*ns));
  if (v->failed)
    return;                            /* the raw chain already failed */
  t.out = calloc (m, sizeof (*t.out));
  t.out_priv = calloc (m, sizeof (*t.out_priv));
  t.out_pub = calloc (m, sizeof (*t.out_pub));
  if ((NULL == t.out) || (NULL == t.out_priv) || (NULL == t.out_pub))
  {
    verdict_fail (v, "out of memory allocating %u layer results", m);
    goto cleanup;
  }
  count_input_bytes (ABH_QUALITY_NONCE, t.msg, sizeof (t.msg));
  if (0 == bits)
  {
    count_input_bytes (ABH_QUALITY_NONCE, &t.nonce,
                       sizeof (t.nonce));
    t.nonce_arg = &t.nonce;
    count_input_bytes (ABH_QUALITY_STRONG, &t.bks.nonce,
                       sizeof (t.bks.nonce));
  }
  else
    count_input_bytes (ABH_QUALITY_STRONG, &t.bks.rsa_bks,
                       sizeof (t.bks.rsa_bks));
  if (! taler_keys (&t, m, ops[0], &ns[0], v))
    goto cleanup;
  t.input = taler_block (&t, &taler_same_input, TK_INPUT, m, ops[1], &ns[1],
                         "get_blinding_input_values", v);
  if (NULL == t.input)
    goto cleanup;
  t.blinded = taler_block (&t, &taler_same_blind, TK_BLINDED, m, ops[2],
                           &ns[2], "message_blind_to_sign", v);
  if (NULL == t.blinded)
    goto cleanup;
  t.blind_sig = taler_block (&t, &taler_same_sign, TK_BLIND_SIG, m, ops[3],
                             &ns[3], "blind_sign", v);
  if (NULL == t.blind_sig)
    goto cleanup;
  t.sig = taler_block (&t, &taler_same_unblind, TK_SIG, m, ops[4], &ns[4],
                       "blind_sig_unblind", v);
  if (NULL == t.sig)
    goto cleanup;
  ns[5] = run_stage (&taler_same_verify, NULL, &t, ops[5], ops[5]);
  if (GNUNET_YES != t.verified)
  {
    verdict_fail (v, "%s layer signature of repetition %u did not verify"
                  " (blind_sig_verify=%d)", label, rep, (int) t.verified);
    goto cleanup;
  }
  flip_one_bit (t.msg, sizeof (t.msg));
  if (GNUNET_YES == GNUNET_CRYPTO_blind_sig_verify (t.pub, t.sig, t.msg,
                                                    sizeof (t.msg)))
    verdict_fail (v, "%s layer signature of repetition %u verified a message"
                  " with one bit flipped", label, rep);
cleanup:
  taler_release (TK_SIG, t.sig);
  taler_release (TK_BLIND_SIG, t.blind_sig);
  taler_release (TK_BLINDED, t.blinded);
  taler_release (TK_INPUT, t.input);
  taler_release (TK_KEYS, t.priv);
  if (NULL != t.pub)
    GNUNET_CRYPTO_blind_sign_pub_decref (t.pub);
  GNUNET_CRYPTO_zero_keys (&t.bks, sizeof (t.bks));
  free (t.out);
  free (t.out_priv);
  free (t.out_pub);
}

#endif
