/*
 * blindsig_repeated.h -- blindsig's default measurement: one call after
 * another on the same item, as GNUnet's own perf programs time it.
 *
 * Included once, by blindsig_measure.c, after its stage helpers (run_stage(),
 * struct Verdict, flip_one_bit(), the operation tables); like count_marker.h
 * it holds static definitions, so it is not a separate translation unit.
 *
 * GNUnet 0.20's src/util/perf_crypto_cs.c and perf_crypto_rsa.c time each
 * operation as ten consecutive calls with the same arguments (one key, one
 * nonce, one message, one blinded message; RSA blinding alone varies the
 * blinding secret).  A repetition here does the same with ops[k] calls per
 * block k: one item is prepared untimed (random message, nonce, blinding
 * seed, FDH hash, RSA blinding secret), each block calls its operation
 * ops[k] times on it, and the last call's output feeds the next operation.
 * Only the library call and the store of its result are inside the block:
 *   - RSA key generation times GNUNET_CRYPTO_rsa_private_key_create() only
 *     (perf_crypto_rsa.c also frees each key inside its loop); the public
 *     key of the last key is taken afterwards;
 *   - RSA blinding, signing and unblinding return allocated results: each
 *     call's result is kept in an array and freed after the block (the
 *     perf programs free inside the loop);
 *   - CS unblinding copies the signature's R point after the block.
 * Every call's result is checked after its block (all RSA results non-NULL
 * and byte-identical to the first, since the calls are deterministic; CS
 * b <= 1), the final signature must verify and a one-bit change of its
 * message must be rejected.  benchmarks/harness_overhead.c is the bare loop
 * of the same calls.
 *
 * --fresh-items selects blindsig's other measurement (cs_repetition() and
 * rsa_repetition() in blindsig_fresh_cs.h, blindsig_fresh_rsa.h): every operation of a block on its own,
 * freshly prepared item.
 */
#ifndef ARCHBENCH_BLINDSIG_REPEATED_H
#define ARCHBENCH_BLINDSIG_REPEATED_H

/* ------------------------------------------------------------------ CS */

struct CsSame
{
  struct CsItem it;                            /* the one item */
};


static void
cs_same_keygen (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    GNUNET_CRYPTO_cs_private_key_generate (&it->priv);
    GNUNET_CRYPTO_cs_private_key_get_public (&it->priv, &it->pub);
  }
}


#if ABH_BSIG_API == 19
static void
cs_same_r_derive (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    GNUNET_CRYPTO_cs_r_derive (&it->nonce, cs_r_seed, &it->priv, it->r);
    GNUNET_CRYPTO_cs_r_get_public (&it->r[0], &it->r_pub[0]);
    GNUNET_CRYPTO_cs_r_get_public (&it->r[1], &it->r_pub[1]);
  }
}
#else
static void
cs_same_r_derive (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    GNUNET_CRYPTO_cs_r_derive (&it->bm.nonce, cs_r_seed, &it->priv, it->r);
    GNUNET_CRYPTO_cs_r_get_public (&it->r[0], &it->r_pub[0]);
    GNUNET_CRYPTO_cs_r_get_public (&it->r[1], &it->r_pub[1]);
  }
}
#endif


static void
cs_same_bs_derive (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_blinding_secrets_derive (&it->blind_seed, it->bs);
}


#if ABH_BSIG_API == 19
static void
cs_same_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_calc_blinded_c (it->bs, it->r_pub, &it->pub, it->msg,
                                     sizeof (it->msg), it->c,
                                     it->blinded_r_pub);
}


static void
cs_same_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    it->b = GNUNET_CRYPTO_cs_sign_derive (&it->priv, it->r, it->c, &it->nonce,
                                          &it->blinded_s);
}


static void
cs_same_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_unblind (&it->blinded_s, &it->bs[it->b],
                              &it->sig.s_scalar);
}
#else
static void
cs_same_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_calc_blinded_c (it->bs, it->r_pub, &it->pub, it->msg,
                                     sizeof (it->msg), it->bm.c,
                                     &it->blinded_r_pub);
}


/* b goes into blinded_s; cs_repetition_repeated() copies it to it->b. */
static void
cs_same_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_sign_derive (&it->priv, it->r, &it->bm, &it->blinded_s);
}


static void
cs_same_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_unblind (&it->blinded_s.s_scalar, &it->bs[it->b],
                              &it->sig.s_scalar);
}
#endif


static void
cs_same_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = &((struct CsSame *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    it->verified = GNUNET_CRYPTO_cs_verify (&it->sig, &it->pub, it->msg,
                                            sizeof (it->msg));
}


/**
 * One CS repetition, one call after another on the same item; see the top
 * of this file.  Same contract as cs_repetition().
 */
static void
cs_repetition_repeated (const unsigned int *ops, uint64_t *ns,
                        unsigned int rep, struct Verdict *v)
{
  struct CsSame *ctx = calloc (1, sizeof (*ctx));
  struct CsItem *it;

  memset (ns, 0, CS_OPS * sizeof (*ns));
  if (NULL == ctx)
  {
    verdict_fail (v, "out of memory allocating a CS item");
    return;
  }
  it = &ctx->it;
  count_input_bytes (ABH_QUALITY_NONCE, it->msg,
                              sizeof (it->msg));
#if ABH_BSIG_API == 19
  count_input_bytes (ABH_QUALITY_NONCE, &it->nonce,
                              sizeof (it->nonce));
#else
  count_input_bytes (ABH_QUALITY_NONCE, &it->bm.nonce,
                     sizeof (it->bm.nonce));
#endif
  count_input_bytes (ABH_QUALITY_STRONG, &it->blind_seed,
                              sizeof (it->blind_seed));
  ns[0] = run_stage (&cs_same_keygen, NULL, ctx, ops[0], ops[0]);
  ns[1] = run_stage (&cs_same_r_derive, NULL, ctx, ops[1], ops[1]);
  ns[2] = run_stage (&cs_same_bs_derive, NULL, ctx, ops[2], ops[2]);
  ns[3] = run_stage (&cs_same_blind, NULL, ctx, ops[3], ops[3]);
  ns[4] = run_stage (&cs_same_sign, NULL, ctx, ops[4], ops[4]);
#if ABH_BSIG_API != 19
  it->b = it->blinded_s.b;
#endif
  if (it->b > 1)
  {
    /* b indexes two-element arrays below. */
    verdict_fail (v, "cs_sign_derive returned b=%u (expected 0 or 1)", it->b);
    goto cleanup;
  }
  ns[5] = run_stage (&cs_same_unblind, NULL, ctx, ops[5], ops[5]);
#if ABH_BSIG_API == 19
  it->sig.r_point = it->blinded_r_pub[it->b];
#else
  it->sig.r_point = it->blinded_r_pub.r_pub[it->b];
#endif
  if ((NULL != inject_fault) && (0 == strcmp (inject_fault, "CS"))
      && (0 == rep))
    flip_one_bit (it->msg, sizeof (it->msg));
  ns[6] = run_stage (&cs_same_verify, NULL, ctx, ops[6], ops[6]);
  if (GNUNET_YES != it->verified)
  {
    verdict_fail (v, "CS signature 0 of repetition %u did not verify", rep);
    goto cleanup;
  }
  flip_one_bit (it->msg, sizeof (it->msg));
  if (GNUNET_YES == GNUNET_CRYPTO_cs_verify (&it->sig, &it->pub, it->msg,
                                             sizeof (it->msg)))
    verdict_fail (v, "CS signature 0 of repetition %u verified a message with"
                  " one bit flipped", rep);
cleanup:
  GNUNET_CRYPTO_zero_keys (ctx, sizeof (*ctx));
  free (ctx);
}


/* ----------------------------------------------------------------- RSA */

#if ABH_BSIG_API == 19
struct RsaSame
{
  unsigned int bits;
  struct GNUNET_CRYPTO_RsaPrivateKey *priv;    /* the last key generated */
  struct GNUNET_CRYPTO_RsaPublicKey *pub;
  struct GNUNET_CRYPTO_RsaBlindingKeySecret bks;
  struct GNUNET_HashCode hash;                 /* of msg: the FDH input */
  void *blinded;                               /* the last blinding's */
  size_t blinded_len;
  struct GNUNET_CRYPTO_RsaSignature *blinded_sig;
  struct GNUNET_CRYPTO_RsaSignature *sig;
  enum GNUNET_GenericReturnValue verified;
  unsigned int blind_failures;                 /* rsa_blind != GNUNET_YES */
  void **out;                                  /* one result per call */
  size_t *out_len;
  unsigned char msg[MSG_LEN];
};
#else
/* The 0.21 API returns a blinded message as one struct (pointer and size)
 * where 0.19/0.20 returned the pair through two pointers; out_bm holds one
 * per rsa_blind call as out/out_len did. */
struct RsaSame
{
  unsigned int bits;
  struct GNUNET_CRYPTO_RsaPrivateKey *priv;    /* the last key generated */
  struct GNUNET_CRYPTO_RsaPublicKey *pub;
  struct GNUNET_CRYPTO_RsaBlindingKeySecret bks;
  struct GNUNET_HashCode hash;                 /* of msg: the FDH input */
  struct GNUNET_CRYPTO_RsaBlindedMessage blinded;  /* the last blinding's */
  struct GNUNET_CRYPTO_RsaSignature *blinded_sig;
  struct GNUNET_CRYPTO_RsaSignature *sig;
  enum GNUNET_GenericReturnValue verified;
  unsigned int blind_failures;                 /* rsa_blind != GNUNET_YES */
  void **out;                                  /* one result per call */
  struct GNUNET_CRYPTO_RsaBlindedMessage *out_bm;  /* one per rsa_blind call */
  unsigned char msg[MSG_LEN];
};
#endif


static void
rsa_same_keygen (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaSame *s = ctx;

  for (unsigned int i = lo; i < hi; i++)
    s->out[i] = GNUNET_CRYPTO_rsa_private_key_create (s->bits);
}


#if ABH_BSIG_API == 19
static void
rsa_same_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaSame *s = ctx;

  for (unsigned int i = lo; i < hi; i++)
    s->blind_failures += (GNUNET_YES
                          != GNUNET_CRYPTO_rsa_blind (&s->hash, &s->bks,
                                                      s->pub, &s->out[i],
                                                      &s->out_len[i]));
}


static void
rsa_same_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaSame *s = ctx;

  for (unsigned int i = lo; i < hi; i++)
    s->out[i] = GNUNET_CRYPTO_rsa_sign_blinded (s->priv, s->blinded,
                                                s->blinded_len);
}
#else
/* The message given to rsa_blind is the 64-byte hash, as the 0.19/0.20 API
 * took it: the full-domain hash inside gets the same bytes (upstream's
 * gnunet-crypto-tvg does the same; its vectors did not change). */
static void
rsa_same_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaSame *s = ctx;

  for (unsigned int i = lo; i < hi; i++)
    s->blind_failures += (GNUNET_YES
                          != GNUNET_CRYPTO_rsa_blind (&s->hash,
                                                      sizeof (s->hash),
                                                      &s->bks, s->pub,
                                                      &s->out_bm[i]));
}


static void
rsa_same_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaSame *s = ctx;

  for (unsigned int i = lo; i < hi; i++)
    s->out[i] = GNUNET_CRYPTO_rsa_sign_blinded (s->priv, &s->blinded);
}
#endif


static void
rsa_same_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaSame *s = ctx;

  for (unsigned int i = lo; i < hi; i++)
    s->out[i] = GNUNET_CRYPTO_rsa_unblind (s->blinded_sig, &s->bks, s->pub);
}


#if ABH_BSIG_API == 19
static void
rsa_same_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaSame *s = ctx;

  for (unsigned int i = lo; i < hi; i++)
    s->verified = GNUNET_CRYPTO_rsa_verify (&s->hash, s->sig, s->pub);
}
#else
static void
rsa_same_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaSame *s = ctx;

  for (unsigned int i = lo; i < hi; i++)
    s->verified = GNUNET_CRYPTO_rsa_verify (&s->hash, sizeof (s->hash),
                                            s->sig, s->pub);
}
#endif


/**
 * Keep the last of @a n RSA signatures in s->out (NULL if any call failed
 * or any differs from the first: the calls are deterministic) and free the
 * others.
 */
static struct GNUNET_CRYPTO_RsaSignature *
rsa_same_keep_signature (struct RsaSame *s, unsigned int n, bool *differ)
{
  struct GNUNET_CRYPTO_RsaSignature *last = s->out[n - 1];
  bool bad = false;

  for (unsigned int i = 0; i < n; i++)
    if (NULL == s->out[i])
      bad = true;
    else if ((i > 0) && (NULL != s->out[0])
             && (0 != GNUNET_CRYPTO_rsa_signature_cmp (s->out[0], s->out[i])))
      *differ = bad = true;
  for (unsigned int i = 0; i + 1 < n; i++)
    if (NULL != s->out[i])
      GNUNET_CRYPTO_rsa_signature_free (s->out[i]);
  if (bad && (NULL != last))
  {
    GNUNET_CRYPTO_rsa_signature_free (last);
    last = NULL;
  }
  return last;
}


/**
 * The signing or unblinding block: @a n calls of @a stage (rsa_same_sign or
 * rsa_same_unblind) timed by run_stage(), each result stored in s->out
 * (cleared first, @a m slots); returns the last signature
 * (rsa_same_keep_signature), or NULL after a verdict naming @a what.  The
 * timed block is run_stage()'s: only the @a n calls, as in every other block.
 */
static struct GNUNET_CRYPTO_RsaSignature *
rsa_same_signature_block (struct RsaSame *s, StageFn stage, unsigned int m,
                          unsigned int n, uint64_t *ns, const char *what,
                          struct Verdict *v)
{
  struct GNUNET_CRYPTO_RsaSignature *sig;
  bool differ = false;

  memset (s->out, 0, m * sizeof (*s->out));
  *ns = run_stage (stage, NULL, s, n, n);
  sig = rsa_same_keep_signature (s, n, &differ);
  if (NULL == sig)
    verdict_fail (v, "%s %s", what, differ ? "gave differing signatures"
                  : "failed");
  return sig;
}


/**
 * One RSA repetition, one call after another on the same item; see the top
 * of this file.  Same contract as rsa_repetition().
 */
static void
rsa_repetition_repeated (unsigned int bits, const unsigned int *ops,
                         uint64_t *ns, unsigned int rep, struct Verdict *v)
{
  const unsigned int m = max_of (ops, RSA_OPS);
  struct RsaSame s = { .bits = bits };
  bool bad = false;

  memset (ns, 0, RSA_OPS * sizeof (*ns));
  s.out = calloc (m, sizeof (*s.out));
#if ABH_BSIG_API == 19
  s.out_len = calloc (m, sizeof (*s.out_len));
  if ((NULL == s.out) || (NULL == s.out_len))
#else
  s.out_bm = calloc (m, sizeof (*s.out_bm));
  if ((NULL == s.out) || (NULL == s.out_bm))
#endif
  {
    verdict_fail (v, "out of memory allocating %u RSA results", m);
    goto cleanup;
  }
  count_input_bytes (ABH_QUALITY_NONCE, s.msg,
                              sizeof (s.msg));
  GNUNET_CRYPTO_hash (s.msg, sizeof (s.msg), &s.hash);
  count_input_bytes (ABH_QUALITY_STRONG, &s.bks,
                              sizeof (s.bks));

  ns[0] = run_stage (&rsa_same_keygen, NULL, &s, ops[0], ops[0]);
  for (unsigned int i = 0; i < ops[0]; i++)
  {
    if (NULL == s.out[i])
      bad = true;
    else if (i + 1 < ops[0])
      GNUNET_CRYPTO_rsa_private_key_free (s.out[i]);
  }
  s.priv = s.out[ops[0] - 1];
  if (bad)
  {
    verdict_fail (v, "RSA-%u key generation failed", bits);
    goto cleanup;
  }
  /* Counting with --count-keys: the other operations use the fixed key. */
  s.priv = count_swap_fixed_rsa_key (s.priv, bits);
  s.pub = GNUNET_CRYPTO_rsa_private_key_get_public (s.priv);
  if (NULL == s.pub)
  {
    verdict_fail (v, "RSA-%u public key extraction failed", bits);
    goto cleanup;
  }

#if ABH_BSIG_API == 19
  memset (s.out, 0, m * sizeof (*s.out));
  ns[1] = run_stage (&rsa_same_blind, NULL, &s, ops[1], ops[1]);
  for (unsigned int i = 0; i < ops[1]; i++)
    if ((NULL == s.out[i]) || (NULL == s.out[0])
        || (s.out_len[i] != s.out_len[0])
        || (0 != memcmp (s.out[i], s.out[0], s.out_len[0])))
      bad = true;
  s.blinded = s.out[ops[1] - 1];
  s.blinded_len = s.out_len[ops[1] - 1];
  for (unsigned int i = 0; i + 1 < ops[1]; i++)
    if (NULL != s.out[i])
      GNUNET_free (s.out[i]);
#else
  memset (s.out_bm, 0, m * sizeof (*s.out_bm));
  ns[1] = run_stage (&rsa_same_blind, NULL, &s, ops[1], ops[1]);
  for (unsigned int i = 0; i < ops[1]; i++)
    if ((NULL == s.out_bm[i].blinded_msg) || (NULL == s.out_bm[0].blinded_msg)
        || (s.out_bm[i].blinded_msg_size != s.out_bm[0].blinded_msg_size)
        || (0 != memcmp (s.out_bm[i].blinded_msg, s.out_bm[0].blinded_msg,
                         s.out_bm[0].blinded_msg_size)))
      bad = true;
  s.blinded = s.out_bm[ops[1] - 1];
  for (unsigned int i = 0; i + 1 < ops[1]; i++)
    GNUNET_CRYPTO_rsa_blinded_message_free (&s.out_bm[i]);
#endif
  if (bad || (0 != s.blind_failures))
  {
    verdict_fail (v, "rsa_blind failed or gave differing results (%u of %u"
                  " calls failed)", s.blind_failures, ops[1]);
    goto cleanup;
  }

  s.blinded_sig = rsa_same_signature_block (&s, &rsa_same_sign, m, ops[2],
                                            &ns[2], "rsa_sign_blinded", v);
  if (NULL == s.blinded_sig)
    goto cleanup;
  s.sig = rsa_same_signature_block (&s, &rsa_same_unblind, m, ops[3], &ns[3],
                                    "rsa_unblind", v);
  if (NULL == s.sig)
    goto cleanup;

  if ((NULL != inject_fault) && (0 == strcmp (inject_fault, "RSA"))
      && (0 == rep))
    flip_one_bit ((unsigned char *) &s.hash, sizeof (s.hash));
  ns[4] = run_stage (&rsa_same_verify, NULL, &s, ops[4], ops[4]);
  if (GNUNET_OK != s.verified)
  {
    verdict_fail (v, "RSA-%u signature 0 of repetition %u did not verify"
                  " (rc=%d)", bits, rep, (int) s.verified);
    goto cleanup;
  }
  {
    struct GNUNET_HashCode flipped;

    flip_one_bit (s.msg, sizeof (s.msg));
    GNUNET_CRYPTO_hash (s.msg, sizeof (s.msg), &flipped);
#if ABH_BSIG_API == 19
    if (GNUNET_OK == GNUNET_CRYPTO_rsa_verify (&flipped, s.sig, s.pub))
#else
    if (GNUNET_OK == GNUNET_CRYPTO_rsa_verify (&flipped, sizeof (flipped),
                                               s.sig, s.pub))
#endif
      verdict_fail (v, "RSA-%u signature 0 of repetition %u verified a message"
                    " with one bit flipped", bits, rep);
  }
cleanup:
  if (NULL != s.sig)
    GNUNET_CRYPTO_rsa_signature_free (s.sig);
  if (NULL != s.blinded_sig)
    GNUNET_CRYPTO_rsa_signature_free (s.blinded_sig);
#if ABH_BSIG_API == 19
  if (NULL != s.blinded)
    GNUNET_free (s.blinded);
#else
  GNUNET_CRYPTO_rsa_blinded_message_free (&s.blinded);
#endif
  if (NULL != s.pub)
    GNUNET_CRYPTO_rsa_public_key_free (s.pub);
  if (NULL != s.priv)
    GNUNET_CRYPTO_rsa_private_key_free (s.priv);
  GNUNET_CRYPTO_zero_keys (&s.bks, sizeof (s.bks));
  free (s.out);
#if ABH_BSIG_API == 19
  free (s.out_len);
#else
  free (s.out_bm);
#endif
}

#endif
