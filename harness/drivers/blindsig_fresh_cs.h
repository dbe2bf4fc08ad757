/*
 * blindsig_fresh_cs.h -- the CS chain with --fresh-items: every operation
 * of a block on its own, freshly prepared item (CONTRACT.md, "What a block
 * times"), and the CsItem that the default measurement (blindsig_repeated.h)
 * uses too.
 *
 * Included once, by blindsig_measure.c, after run_stage(); like
 * blindsig_repeated.h it holds static definitions, so it is not a separate
 * translation unit (why: the top of blindsig_measure.c).
 */
#ifndef ARCHBENCH_BLINDSIG_FRESH_CS_H
#define ARCHBENCH_BLINDSIG_FRESH_CS_H

/* ------------------------------------------------------------------ CS */

/**
 * Everything one CS blind-signature exchange needs, kept together so a
 * block can walk the array.
 */
#if ABH_BSIG_API == 19
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
  unsigned int src;                            /* item whose chain this copies */
  bool dead;                                   /* an earlier step failed */
  unsigned char msg[MSG_LEN];
};
#else
/* The same item for the 0.21 API: the session nonce lives in the blinded
 * message (c[2] and the nonce, which cs_sign_derive takes as one struct), so
 * r derivation draws into bm.nonce and blinding writes bm.c, and nothing is
 * copied inside a timed block; b is part of the blind signature. */
struct CsItem
{
  struct GNUNET_CRYPTO_CsPrivateKey priv;
  struct GNUNET_CRYPTO_CsPublicKey pub;
  struct GNUNET_CRYPTO_CsBlindedMessage bm;    /* c[2]; nonce: r derivation + signing */
  struct GNUNET_CRYPTO_CsBlindingNonce blind_seed;
  struct GNUNET_CRYPTO_CsRSecret r[2];
  struct GNUNET_CRYPTO_CsRPublic r_pub[2];
  struct GNUNET_CRYPTO_CsBlindingSecret bs[2];
  struct GNUNET_CRYPTO_CSPublicRPairP blinded_r_pub;
  struct GNUNET_CRYPTO_CsBlindSignature blinded_s;  /* b and the blinded s */
  struct GNUNET_CRYPTO_CsSignature sig;
  unsigned int b;                              /* blinded_s.b, copied after the block */
  enum GNUNET_GenericReturnValue verified;
  unsigned int src;                            /* item whose chain this copies */
  bool dead;                                   /* an earlier step failed */
  unsigned char msg[MSG_LEN];
};
#endif

struct CsRep
{
  struct CsItem *it;
  unsigned int n_keys;                         /* keys generated */
  unsigned int n;                              /* block of the current step */
};


static void
cs_keygen (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    GNUNET_CRYPTO_cs_private_key_generate (&it[i].priv);
    GNUNET_CRYPTO_cs_private_key_get_public (&it[i].priv, &it[i].pub);
  }
}


/* Items beyond the key generation block sign with its keys, as an exchange
 * signs many coins with one denomination key. */
static void
cs_keys_share (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsRep *rep = ctx;

  for (unsigned int i = lo; i < hi; i++)
  {
    rep->it[i].priv = rep->it[i % rep->n_keys].priv;
    rep->it[i].pub = rep->it[i % rep->n_keys].pub;
  }
}


/* Tail of every later CS step: an item beyond the step's block becomes a
 * copy of item i mod n, whose chain is complete up to this step.  Computing
 * the tail instead would cost ~0.2 ms of blinding per sub-microsecond
 * unblinding (seconds per repetition); copying keeps every item's chain
 * consistent, and every later step is deterministic, so a copy's signature
 * must equal its original's byte for byte (checked in cs_verify_tail()). */
static void
cs_copy_tail (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsRep *rep = ctx;

  for (unsigned int i = lo; i < hi; i++)
    rep->it[i] = rep->it[i % rep->n];
}


#if ABH_BSIG_API == 19
static void
cs_r_derive (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    GNUNET_CRYPTO_cs_r_derive (&it[i].nonce, cs_r_seed, &it[i].priv, it[i].r);
    GNUNET_CRYPTO_cs_r_get_public (&it[i].r[0], &it[i].r_pub[0]);
    GNUNET_CRYPTO_cs_r_get_public (&it[i].r[1], &it[i].r_pub[1]);
  }
}
#else
static void
cs_r_derive (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    GNUNET_CRYPTO_cs_r_derive (&it[i].bm.nonce, cs_r_seed, &it[i].priv,
                               it[i].r);
    GNUNET_CRYPTO_cs_r_get_public (&it[i].r[0], &it[i].r_pub[0]);
    GNUNET_CRYPTO_cs_r_get_public (&it[i].r[1], &it[i].r_pub[1]);
  }
}
#endif


static void
cs_bs_derive (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_blinding_secrets_derive (&it[i].blind_seed, it[i].bs);
}


#if ABH_BSIG_API == 19
static void
cs_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_calc_blinded_c (it[i].bs, it[i].r_pub, &it[i].pub,
                                     it[i].msg, sizeof (it[i].msg), it[i].c,
                                     it[i].blinded_r_pub);
}


static void
cs_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    it[i].b = GNUNET_CRYPTO_cs_sign_derive (&it[i].priv, it[i].r, it[i].c,
                                            &it[i].nonce, &it[i].blinded_s);
}


static void
cs_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    GNUNET_CRYPTO_cs_unblind (&it[i].blinded_s, &it[i].bs[it[i].b],
                              &it[i].sig.s_scalar);
  }
}
#else
static void
cs_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_calc_blinded_c (it[i].bs, it[i].r_pub, &it[i].pub,
                                     it[i].msg, sizeof (it[i].msg),
                                     it[i].bm.c, &it[i].blinded_r_pub);
}


/* b is written into blinded_s (a store, as the old API's return value was);
 * cs_repetition() copies it to it[i].b after the block. */
static void
cs_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
    GNUNET_CRYPTO_cs_sign_derive (&it[i].priv, it[i].r, &it[i].bm,
                                  &it[i].blinded_s);
}


static void
cs_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    GNUNET_CRYPTO_cs_unblind (&it[i].blinded_s.s_scalar, &it[i].bs[it[i].b],
                              &it[i].sig.s_scalar);
  }
}
#endif


static void
cs_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].verified = GNUNET_CRYPTO_cs_verify (&it[i].sig, &it[i].pub,
                                              it[i].msg, sizeof (it[i].msg));
  }
}


/* Tail of the verification step.  An item that copies another item's
 * chain and has the same key, message and signature bytes is verified by
 * that item (checked earlier: src < i); anything else is verified here. */
static void
cs_verify_tail (void *ctx, unsigned int lo, unsigned int hi)
{
  struct CsItem *it = ((struct CsRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    const struct CsItem *o = &it[it[i].src];

    if (it[i].dead)
      continue;
    if ((it[i].src != i) && (! o->dead)
        && (0 == memcmp (&it[i].sig, &o->sig, sizeof (it[i].sig)))
        && (0 == memcmp (&it[i].pub, &o->pub, sizeof (it[i].pub)))
        && (0 == memcmp (it[i].msg, o->msg, sizeof (it[i].msg))))
      it[i].verified = o->verified;
    else
      cs_verify (ctx, i, i + 1);
  }
}


/**
 * One CS repetition: block i of the chain times ops[i] operations.  Every
 * item of the largest block is brought through every step (by computation
 * inside a block, by copying outside: see cs_copy_tail()) and every
 * signature is verified.
 *
 * @param ops block size per operation, in cs_op_names order
 * @param[out] ns block wall time per operation
 * @param rep repetition number of this pair (0-based, all kinds), for messages
 */
static void
cs_repetition (const unsigned int *ops, uint64_t *ns, unsigned int rep,
               struct Verdict *v)
{
  const unsigned int m = max_of (ops, CS_OPS);
  struct CsRep ctx = { .it = calloc (m, sizeof (struct CsItem)),
                       .n_keys = ops[0] };
  struct CsItem *it = ctx.it;

  if (! fresh_items)
  {
    free (it);
    cs_repetition_repeated (ops, ns, rep, v);
    return;
  }
  memset (ns, 0, CS_OPS * sizeof (*ns));
  if (NULL == it)
  {
    verdict_fail (v, "out of memory allocating %u CS items", m);
    return;
  }
  for (unsigned int i = 0; i < m; i++)
  {
    count_input_bytes (ABH_QUALITY_NONCE, it[i].msg,
                       sizeof (it[i].msg));
#if ABH_BSIG_API == 19
    count_input_bytes (ABH_QUALITY_NONCE, &it[i].nonce,
                       sizeof (it[i].nonce));
#else
    count_input_bytes (ABH_QUALITY_NONCE, &it[i].bm.nonce,
                       sizeof (it[i].bm.nonce));
#endif
    count_input_bytes (ABH_QUALITY_STRONG, &it[i].blind_seed,
                       sizeof (it[i].blind_seed));
    it[i].src = i;
  }

  ns[0] = run_stage (&cs_keygen, &cs_keys_share, &ctx, ops[0], m);
  ctx.n = ops[1];
  ns[1] = run_stage (&cs_r_derive, &cs_copy_tail, &ctx, ops[1], m);
  ctx.n = ops[2];
  ns[2] = run_stage (&cs_bs_derive, &cs_copy_tail, &ctx, ops[2], m);
  ctx.n = ops[3];
  ns[3] = run_stage (&cs_blind, &cs_copy_tail, &ctx, ops[3], m);
  ctx.n = ops[4];
  ns[4] = run_stage (&cs_sign, &cs_copy_tail, &ctx, ops[4], m);
#if ABH_BSIG_API != 19
  for (unsigned int i = 0; i < m; i++)
    it[i].b = it[i].blinded_s.b;
#endif
  for (unsigned int i = 0; i < m; i++)
    if (it[i].b > 1)
    {
      /* b indexes two-element arrays below. */
      verdict_fail (v, "cs_sign_derive returned b=%u (expected 0 or 1)",
                    it[i].b);
      it[i].dead = true;
    }
  ctx.n = ops[5];
  ns[5] = run_stage (&cs_unblind, &cs_copy_tail, &ctx, ops[5], m);
  /* The signature's point is the blinded R the signer picked; copying it
   * is bookkeeping, not part of the unblinding cost. */
  for (unsigned int i = 0; i < m; i++)
    if (! it[i].dead)
#if ABH_BSIG_API == 19
      it[i].sig.r_point = it[i].blinded_r_pub[it[i].b];
#else
      it[i].sig.r_point = it[i].blinded_r_pub.r_pub[it[i].b];
#endif
  if ((NULL != inject_fault) && (0 == strcmp (inject_fault, "CS"))
      && (0 == rep))
    flip_one_bit (it[0].msg, sizeof (it[0].msg));
  ns[6] = run_stage (&cs_verify, &cs_verify_tail, &ctx, ops[6], m);

  for (unsigned int i = 0; i < m; i++)
  {
    if (it[i].dead)
      continue;
    if (GNUNET_YES != it[i].verified)
    {
      verdict_fail (v, "CS signature %u of repetition %u did not verify", i,
                    rep);
      continue;
    }
    /* A copy's key and signature are its original's: one rejection each. */
    if (it[i].src != i)
      continue;
    flip_one_bit (it[i].msg, sizeof (it[i].msg));
    if (GNUNET_YES == GNUNET_CRYPTO_cs_verify (&it[i].sig, &it[i].pub,
                                               it[i].msg, sizeof (it[i].msg)))
      verdict_fail (v,
                    "CS signature %u of repetition %u verified a message with"
                    " one bit flipped", i, rep);
  }
  /* Key material should not linger in freed heap memory. */
  GNUNET_CRYPTO_zero_keys (it, m * sizeof (*it));
  free (it);
}

#endif
