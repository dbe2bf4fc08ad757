/*
 * blindsig_api_probe.c -- which libgnunetutil API do these GNUnet headers
 * declare?  Not part of the driver: the Makefile compiles it with
 * -fsyntax-only -Werror, once per question, and passes the answers to the
 * driver as -D flags.  Every probe is a function pointer initialised with
 * the function's address (the prototype must match exactly) or a variable
 * of a type (the type must exist), so a variant compiles only against
 * headers that declare it.  What is probed, and why:
 *
 *   ABH_PROBE 21 / 19      the blind-signature API (ABH_PROBE_BSIG_API),
 *                          which blindsig.h holds against the version
 *                          gnunet_config.h states (a development snapshot
 *                          between 0.20 and 0.21 states 0.20 but already
 *                          has the new API); above 0.27 the probe decides
 *   ABH_PROBE_FN_<name>    one function of the 0.21-0.27 blind-signature
 *                          API, with its 0.27.0 prototype: when neither API
 *                          compiles, the Makefile names the functions whose
 *                          probe fails instead of showing compiler output
 *   ABH_PROBE_RANDOM_BLOCK 3 / 2   GNUNET_CRYPTO_random_block's arity:
 *   ABH_PROBE_RANDOM_U32   2 / 1   (quality, ...) up to 0.27.0, without the
 *                          quality on master after 0.27.0 (libsodium's
 *                          randombytes; ABH_RANDOM_ARITY)
 *   ABH_PROBE_QUALITY_ENUM        enum GNUNET_CRYPTO_Quality exists
 *   ABH_PROBE_SEED_WEAK           GNUNET_CRYPTO_seed_weak_random exists
 *   ABH_PROBE_HMAC_RAW 1 / 2      GNUNET_CRYPTO_hmac_raw takes (const void *,
 *                          size_t) (libgcrypt's HMAC and SHA-512, up to
 *                          0.27.0) or (const unsigned char *, unsigned int)
 *                          (libsodium's, master after 0.27.0); the driver
 *                          does not call it, it dates the move of SHA-512
 *                          for the row notes (ABH_SODIUM_SHA512)
 */
#include <gnunet/gnunet_util_lib.h>

#if defined (ABH_PROBE_RANDOM_BLOCK)
#if ABH_PROBE_RANDOM_BLOCK == 3
void
(*const abh_probe_random_block)(enum GNUNET_CRYPTO_Quality, void *, size_t)
  = &GNUNET_CRYPTO_random_block;
#else
void
(*const abh_probe_random_block)(void *, size_t) = &GNUNET_CRYPTO_random_block;
#endif
#elif defined (ABH_PROBE_RANDOM_U32)
#if ABH_PROBE_RANDOM_U32 == 2
uint32_t
(*const abh_probe_random_u32)(enum GNUNET_CRYPTO_Quality, uint32_t)
  = &GNUNET_CRYPTO_random_u32;
#else
uint32_t
(*const abh_probe_random_u32)(uint32_t) = &GNUNET_CRYPTO_random_u32;
#endif
#elif defined (ABH_PROBE_QUALITY_ENUM)
const enum GNUNET_CRYPTO_Quality abh_probe_quality = GNUNET_CRYPTO_QUALITY_NONCE;
#elif defined (ABH_PROBE_SEED_WEAK)
void
(*const abh_probe_seed)(int32_t) = &GNUNET_CRYPTO_seed_weak_random;
#elif defined (ABH_PROBE_HMAC_RAW)
#if ABH_PROBE_HMAC_RAW == 1
void
(*const abh_probe_hmac)(const void *, size_t, const void *, size_t,
                        struct GNUNET_HashCode *) = &GNUNET_CRYPTO_hmac_raw;
#else
void
(*const abh_probe_hmac)(const unsigned char *, unsigned int, const void *,
                        size_t, struct GNUNET_HashCode *)
  = &GNUNET_CRYPTO_hmac_raw;
#endif
/* One function of the 0.21-0.27 blind-signature API each (the Makefile's
 * BSIG_FUNCTIONS lists them), with 0.27.0's prototypes. */
#elif defined (ABH_PROBE_FN_rsa_private_key_create)
struct GNUNET_CRYPTO_RsaPrivateKey *
(*const abh_probe_fn)(unsigned int) = &GNUNET_CRYPTO_rsa_private_key_create;
#elif defined (ABH_PROBE_FN_rsa_blind)
enum GNUNET_GenericReturnValue
(*const abh_probe_fn)(const void *, size_t,
                      const struct GNUNET_CRYPTO_RsaBlindingKeySecret *,
                      struct GNUNET_CRYPTO_RsaPublicKey *,
                      struct GNUNET_CRYPTO_RsaBlindedMessage *)
  = &GNUNET_CRYPTO_rsa_blind;
#elif defined (ABH_PROBE_FN_rsa_sign_blinded)
struct GNUNET_CRYPTO_RsaSignature *
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_RsaPrivateKey *,
                      const struct GNUNET_CRYPTO_RsaBlindedMessage *)
  = &GNUNET_CRYPTO_rsa_sign_blinded;
#elif defined (ABH_PROBE_FN_rsa_unblind)
struct GNUNET_CRYPTO_RsaSignature *
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_RsaSignature *,
                      const struct GNUNET_CRYPTO_RsaBlindingKeySecret *,
                      struct GNUNET_CRYPTO_RsaPublicKey *)
  = &GNUNET_CRYPTO_rsa_unblind;
#elif defined (ABH_PROBE_FN_rsa_verify)
enum GNUNET_GenericReturnValue
(*const abh_probe_fn)(const void *, size_t,
                      const struct GNUNET_CRYPTO_RsaSignature *,
                      const struct GNUNET_CRYPTO_RsaPublicKey *)
  = &GNUNET_CRYPTO_rsa_verify;
#elif defined (ABH_PROBE_FN_cs_private_key_generate)
void
(*const abh_probe_fn)(struct GNUNET_CRYPTO_CsPrivateKey *)
  = &GNUNET_CRYPTO_cs_private_key_generate;
#elif defined (ABH_PROBE_FN_cs_private_key_get_public)
void
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_CsPrivateKey *,
                      struct GNUNET_CRYPTO_CsPublicKey *)
  = &GNUNET_CRYPTO_cs_private_key_get_public;
#elif defined (ABH_PROBE_FN_cs_r_derive)
void
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_CsSessionNonce *,
                      const char *, const struct GNUNET_CRYPTO_CsPrivateKey *,
                      struct GNUNET_CRYPTO_CsRSecret[2])
  = &GNUNET_CRYPTO_cs_r_derive;
#elif defined (ABH_PROBE_FN_cs_r_get_public)
void
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_CsRSecret *,
                      struct GNUNET_CRYPTO_CsRPublic *)
  = &GNUNET_CRYPTO_cs_r_get_public;
#elif defined (ABH_PROBE_FN_cs_blinding_secrets_derive)
void
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_CsBlindingNonce *,
                      struct GNUNET_CRYPTO_CsBlindingSecret[2])
  = &GNUNET_CRYPTO_cs_blinding_secrets_derive;
#elif defined (ABH_PROBE_FN_cs_calc_blinded_c)
void
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_CsBlindingSecret[2],
                      const struct GNUNET_CRYPTO_CsRPublic[2],
                      const struct GNUNET_CRYPTO_CsPublicKey *,
                      const void *, size_t, struct GNUNET_CRYPTO_CsC[2],
                      struct GNUNET_CRYPTO_CSPublicRPairP *)
  = &GNUNET_CRYPTO_cs_calc_blinded_c;
#elif defined (ABH_PROBE_FN_cs_sign_derive)
void
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_CsPrivateKey *,
                      const struct GNUNET_CRYPTO_CsRSecret[2],
                      const struct GNUNET_CRYPTO_CsBlindedMessage *,
                      struct GNUNET_CRYPTO_CsBlindSignature *)
  = &GNUNET_CRYPTO_cs_sign_derive;
#elif defined (ABH_PROBE_FN_cs_unblind)
void
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_CsBlindS *,
                      const struct GNUNET_CRYPTO_CsBlindingSecret *,
                      struct GNUNET_CRYPTO_CsS *)
  = &GNUNET_CRYPTO_cs_unblind;
#elif defined (ABH_PROBE_FN_cs_verify)
enum GNUNET_GenericReturnValue
(*const abh_probe_fn)(const struct GNUNET_CRYPTO_CsSignature *,
                      const struct GNUNET_CRYPTO_CsPublicKey *,
                      const void *, size_t)
  = &GNUNET_CRYPTO_cs_verify;
#elif ABH_PROBE == 21
/* GNUnet 0.21.0 .. 0.27.0 */
enum GNUNET_GenericReturnValue
(*const abh_probe_blind)(const void *, size_t,
                         const struct GNUNET_CRYPTO_RsaBlindingKeySecret *,
                         struct GNUNET_CRYPTO_RsaPublicKey *,
                         struct GNUNET_CRYPTO_RsaBlindedMessage *)
  = &GNUNET_CRYPTO_rsa_blind;
void
(*const abh_probe_sign)(const struct GNUNET_CRYPTO_CsPrivateKey *,
                        const struct GNUNET_CRYPTO_CsRSecret[2],
                        const struct GNUNET_CRYPTO_CsBlindedMessage *,
                        struct GNUNET_CRYPTO_CsBlindSignature *)
  = &GNUNET_CRYPTO_cs_sign_derive;
const struct GNUNET_CRYPTO_CsBlindingNonce abh_probe_nonce;
#elif ABH_PROBE == 19
/* GNUnet 0.19, 0.20 */
int
(*const abh_probe_blind)(const struct GNUNET_HashCode *,
                         const struct GNUNET_CRYPTO_RsaBlindingKeySecret *,
                         struct GNUNET_CRYPTO_RsaPublicKey *, void **,
                         size_t *)
  = &GNUNET_CRYPTO_rsa_blind;
unsigned int
(*const abh_probe_sign)(const struct GNUNET_CRYPTO_CsPrivateKey *,
                        const struct GNUNET_CRYPTO_CsRSecret[2],
                        const struct GNUNET_CRYPTO_CsC[2],
                        const struct GNUNET_CRYPTO_CsNonce *,
                        struct GNUNET_CRYPTO_CsBlindS *)
  = &GNUNET_CRYPTO_cs_sign_derive;
const struct GNUNET_CRYPTO_CsNonce abh_probe_nonce;
#else
#error "compile with -DABH_PROBE=21 or 19, or one of the other ABH_PROBE_* of the top comment"
#endif
