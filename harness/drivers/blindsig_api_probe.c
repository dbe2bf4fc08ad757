/*
 * blindsig_api_probe.c -- which blind-signature API do these GNUnet headers
 * declare?  Not part of the driver: the Makefile compiles it twice with
 * -fsyntax-only -Werror (ABH_PROBE 21, then 19) and passes the variant that
 * compiles as ABH_PROBE_BSIG_API, which blindsig.h holds against the version
 * gnunet_config.h states.  The version decides; this probe only checks it,
 * from the types and prototypes themselves (a development snapshot between
 * 0.20 and 0.21 states 0.20 but already has the new API).
 *
 * The function pointers must match the prototypes exactly, so a variant
 * compiles only against headers of its own API.
 */
#include <gnunet/gnunet_util_lib.h>

#if ABH_PROBE == 21
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
#error "compile with -DABH_PROBE=21 or -DABH_PROBE=19"
#endif
