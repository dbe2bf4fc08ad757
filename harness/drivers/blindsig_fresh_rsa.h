/*
 * blindsig_fresh_rsa.h -- the RSA chain with --fresh-items: every operation
 * of a block on its own, freshly prepared item (CONTRACT.md, "What a block
 * times").
 *
 * Included once, by blindsig_measure.c, after blindsig_fresh_cs.h; like
 * blindsig_repeated.h it holds static definitions, so it is not a separate
 * translation unit (why: the top of blindsig_measure.c).
 */
#ifndef ARCHBENCH_BLINDSIG_FRESH_RSA_H
#define ARCHBENCH_BLINDSIG_FRESH_RSA_H

/* ----------------------------------------------------------------- RSA */

#if ABH_BSIG_API == 19
struct RsaItem
{
  struct GNUNET_CRYPTO_RsaPrivateKey *priv;
  struct GNUNET_CRYPTO_RsaPublicKey *pub;
  struct GNUNET_CRYPTO_RsaBlindingKeySecret bks;
  struct GNUNET_HashCode hash;                 /* of msg: the FDH input */
  void *blinded;
  size_t blinded_len;
#else
/* 0.21 API: the blinded message is one struct (pointer and size). */
struct RsaItem
{
  struct GNUNET_CRYPTO_RsaPrivateKey *priv;
  struct GNUNET_CRYPTO_RsaPublicKey *pub;
  struct GNUNET_CRYPTO_RsaBlindingKeySecret bks;
  struct GNUNET_HashCode hash;                 /* of msg: the FDH input */
  struct GNUNET_CRYPTO_RsaBlindedMessage blinded;
#endif
  struct GNUNET_CRYPTO_RsaSignature *blinded_sig;
  struct GNUNET_CRYPTO_RsaSignature *sig;
  int blind_rc;
  enum GNUNET_GenericReturnValue verified;
  bool owns_key;                               /* priv/pub are not shared */
  bool dead;                                   /* an earlier step failed */
  unsigned char msg[MSG_LEN];
};

struct RsaRep
{
  struct RsaItem *it;
  unsigned int n_keys;                         /* keys generated */
  unsigned int bits;
};


static void
rsa_free_items (struct RsaItem *it, unsigned int n)
{
  for (unsigned int i = 0; i < n; i++)
  {
    if (NULL != it[i].sig)
      GNUNET_CRYPTO_rsa_signature_free (it[i].sig);
    if (NULL != it[i].blinded_sig)
      GNUNET_CRYPTO_rsa_signature_free (it[i].blinded_sig);
#if ABH_BSIG_API == 19
    if (NULL != it[i].blinded)
      GNUNET_free (it[i].blinded);
#else
    GNUNET_CRYPTO_rsa_blinded_message_free (&it[i].blinded);
#endif
    if (! it[i].owns_key)
      continue;
    if (NULL != it[i].pub)
      GNUNET_CRYPTO_rsa_public_key_free (it[i].pub);
    if (NULL != it[i].priv)
      GNUNET_CRYPTO_rsa_private_key_free (it[i].priv);
  }
  GNUNET_CRYPTO_zero_keys (it, n * sizeof (*it));
  free (it);
}


static void
rsa_keygen (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaRep *rep = ctx;
  struct RsaItem *it = rep->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    it[i].owns_key = true;
    it[i].priv = GNUNET_CRYPTO_rsa_private_key_create (rep->bits);
    if (NULL != it[i].priv)
      it[i].pub = GNUNET_CRYPTO_rsa_private_key_get_public (it[i].priv);
  }
}


/* See cs_keys_share(); for RSA this is also what keeps emulated RSA-4096
 * from generating a key per calibrated verification. */
static void
rsa_keys_share (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaRep *rep = ctx;

  for (unsigned int i = lo; i < hi; i++)
  {
    rep->it[i].priv = rep->it[i % rep->n_keys].priv;
    rep->it[i].pub = rep->it[i % rep->n_keys].pub;
  }
}


#if ABH_BSIG_API == 19
static void
rsa_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].blind_rc = GNUNET_CRYPTO_rsa_blind (&it[i].hash, &it[i].bks,
                                              it[i].pub, &it[i].blinded,
                                              &it[i].blinded_len);
  }
}


static void
rsa_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].blinded_sig = GNUNET_CRYPTO_rsa_sign_blinded (it[i].priv,
                                                        it[i].blinded,
                                                        it[i].blinded_len);
  }
}
#else
/* The message is the 64-byte hash, as for 0.19/0.20 (rsa_same_blind()). */
static void
rsa_blind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].blind_rc = GNUNET_CRYPTO_rsa_blind (&it[i].hash,
                                              sizeof (it[i].hash),
                                              &it[i].bks, it[i].pub,
                                              &it[i].blinded);
  }
}


static void
rsa_sign (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].blinded_sig = GNUNET_CRYPTO_rsa_sign_blinded (it[i].priv,
                                                        &it[i].blinded);
  }
}
#endif


static void
rsa_unblind (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].sig = GNUNET_CRYPTO_rsa_unblind (it[i].blinded_sig, &it[i].bks,
                                           it[i].pub);
  }
}


#if ABH_BSIG_API == 19
static void
rsa_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].verified = GNUNET_CRYPTO_rsa_verify (&it[i].hash, it[i].sig,
                                               it[i].pub);
  }
}
#else
static void
rsa_verify (void *ctx, unsigned int lo, unsigned int hi)
{
  struct RsaItem *it = ((struct RsaRep *) ctx)->it;

  for (unsigned int i = lo; i < hi; i++)
  {
    if (it[i].dead)
      continue;
    it[i].verified = GNUNET_CRYPTO_rsa_verify (&it[i].hash,
                                               sizeof (it[i].hash),
                                               it[i].sig, it[i].pub);
  }
}
#endif


/**
 * One RSA repetition; see cs_repetition().
 */
static void
rsa_repetition (unsigned int bits, const unsigned int *ops, uint64_t *ns,
                unsigned int rep, struct Verdict *v)
{
  const unsigned int m = max_of (ops, RSA_OPS);
  struct RsaRep ctx = { .it = calloc (m, sizeof (struct RsaItem)),
                        .n_keys = ops[0],
                        .bits = bits };
  struct RsaItem *it = ctx.it;

  if (! fresh_items)
  {
    free (it);
    rsa_repetition_repeated (bits, ops, ns, rep, v);
    return;
  }
  memset (ns, 0, RSA_OPS * sizeof (*ns));
  if (NULL == it)
  {
    verdict_fail (v, "out of memory allocating %u RSA items", m);
    return;
  }
  for (unsigned int i = 0; i < m; i++)
  {
    count_input_bytes (ABH_QUALITY_NONCE, it[i].msg,
                       sizeof (it[i].msg));
    GNUNET_CRYPTO_hash (it[i].msg, sizeof (it[i].msg), &it[i].hash);
    count_input_bytes (ABH_QUALITY_STRONG, &it[i].bks,
                       sizeof (it[i].bks));
  }

  ns[0] = run_stage (&rsa_keygen, &rsa_keys_share, &ctx, ops[0], m);
  for (unsigned int i = 0; i < m; i++)
    if ((NULL == it[i].priv) || (NULL == it[i].pub))
    {
      verdict_fail (v, "RSA-%u key generation %u failed", bits,
                    i % ctx.n_keys);
      it[i].dead = true;
    }
  /* Counting with --count-keys: the other operations use the fixed key
   * (count_inputs.h), the same for every item. */
  if ((m > 0) && (! it[0].dead))
  {
    struct GNUNET_CRYPTO_RsaPrivateKey *fixed = count_fixed_rsa_key (bits);

    for (unsigned int i = 0; (NULL != fixed) && (i < m); i++)
    {
      if (it[i].owns_key)
      {
        if (NULL != it[i].pub)
          GNUNET_CRYPTO_rsa_public_key_free (it[i].pub);
        if (NULL != it[i].priv)
          GNUNET_CRYPTO_rsa_private_key_free (it[i].priv);
      }
      it[i].owns_key = (0 == i);
      it[i].priv = (0 == i) ? fixed : it[0].priv;
      it[i].pub = (0 == i) ? GNUNET_CRYPTO_rsa_private_key_get_public (fixed)
                  : it[0].pub;
      it[i].dead = (NULL == it[0].pub);
    }
  }

  ns[1] = run_stage (&rsa_blind, NULL, &ctx, ops[1], m);
  for (unsigned int i = 0; i < m; i++)
#if ABH_BSIG_API == 19
    if ((! it[i].dead)
        && ((GNUNET_YES != it[i].blind_rc) || (NULL == it[i].blinded)))
#else
    if ((! it[i].dead)
        && ((GNUNET_YES != it[i].blind_rc)
            || (NULL == it[i].blinded.blinded_msg)))
#endif
    {
      verdict_fail (v, "rsa_blind of message %u failed (rc=%d)", i,
                    it[i].blind_rc);
      it[i].dead = true;
    }

  ns[2] = run_stage (&rsa_sign, NULL, &ctx, ops[2], m);
  for (unsigned int i = 0; i < m; i++)
    if ((! it[i].dead) && (NULL == it[i].blinded_sig))
    {
      verdict_fail (v, "rsa_sign_blinded of message %u failed", i);
      it[i].dead = true;
    }

  ns[3] = run_stage (&rsa_unblind, NULL, &ctx, ops[3], m);
  for (unsigned int i = 0; i < m; i++)
    if ((! it[i].dead) && (NULL == it[i].sig))
    {
      verdict_fail (v, "rsa_unblind of signature %u failed", i);
      it[i].dead = true;
    }

  if ((NULL != inject_fault) && (0 == strcmp (inject_fault, "RSA"))
      && (0 == rep))
    flip_one_bit ((unsigned char *) &it[0].hash, sizeof (it[0].hash));
  ns[4] = run_stage (&rsa_verify, NULL, &ctx, ops[4], m);

  for (unsigned int i = 0; i < m; i++)
  {
    struct GNUNET_HashCode flipped;

    if (it[i].dead)
      continue;
    if (GNUNET_OK != it[i].verified)
    {
      verdict_fail (v, "RSA-%u signature %u of repetition %u did not verify"
                    " (rc=%d)", bits, i, rep, (int) it[i].verified);
      continue;
    }
    flip_one_bit (it[i].msg, sizeof (it[i].msg));
    GNUNET_CRYPTO_hash (it[i].msg, sizeof (it[i].msg), &flipped);
#if ABH_BSIG_API == 19
    if (GNUNET_OK == GNUNET_CRYPTO_rsa_verify (&flipped, it[i].sig, it[i].pub))
#else
    if (GNUNET_OK == GNUNET_CRYPTO_rsa_verify (&flipped, sizeof (flipped),
                                               it[i].sig, it[i].pub))
#endif
      verdict_fail (v,
                    "RSA-%u signature %u of repetition %u verified a message"
                    " with one bit flipped", bits, i, rep);
  }
  rsa_free_items (it, m);
}

#endif
