/*
 * blindsig_api.c -- what differs between the GNUnet blind-signature APIs
 * (ABH_BSIG_API, blindsig.h) outside the timed code: the version the loaded
 * library reports and the notes on rows whose call changed.
 *
 * A separate translation unit on purpose: nothing here is timed, and
 * blindsig_measure.c (all timed code) must compile as before.
 */
#include "blindsig.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* -------------------------------------------- version and row notes */

const char *
blindsig_library_version (void)
{
  const struct GNUNET_OS_ProjectData *pd;

#if ABH_GNUNET_API_NUM >= 2300
  pd = GNUNET_OS_project_data_gnunet ();       /* renamed in 0.23 */
#else
  pd = GNUNET_OS_project_data_default ();
#endif
  return ((NULL == pd) || (NULL == pd->version)) ? "" : pd->version;
}


bool
blindsig_library_matches (const char *version)
{
  unsigned int major;
  unsigned int minor;

  /* GNUnet's meson build hard-coded PACKAGE_VERSION '0.21.0' and
   * VCS_VERSION 'mesonbuild' from 0.21.0 to 0.23.1 (meson.build; 0.24.0
   * takes the real version), so every such library reports this.  The
   * libraries a driver could load by mistake still differ: Debian's (soname
   * 15, as 0.21's) report "0.19.3 release" / "0.20.0 release", and 0.22's
   * soname is 17. */
  if ((0 == strcmp (version, "0.21.0 mesonbuild"))
      && (ABH_GNUNET_API_NUM >= 2100) && (ABH_GNUNET_API_NUM < 2400))
    return true;
  /* "0.20.0 release" (Debian), "0.27.0" (meson): major.minor decide the
   * ABI; the micro version and any suffix may differ. */
  return (2 == sscanf (version, "%u.%u", &major, &minor))
         && (major == GNUNET_MAJOR_VERSION) && (minor == GNUNET_MINOR_VERSION);
}


/* Where a row's call or the work inside it differs from the 0.19/0.20 API
 * the rows were defined on.  Scheme, operation, first version, note. */
struct RowNote
{
  const char *scheme;
  const char *operation;
  unsigned int since;                          /* ABH_GNUNET_API_NUM */
  const char *text;
};

static const struct RowNote row_notes[] = {
  { "RSA", "blinding", 2100,
    "GNUnet 0.21 API: rsa_blind takes (message, size) instead of a"
    " GNUNET_HashCode and fills a RsaBlindedMessage; the driver passes the"
    " 64-byte SHA-512 hash of its message (hashed untimed, as for 0.19/0.20),"
    " so the full-domain hash, inside rsa_blind on both APIs, gets the same"
    " bytes: same work" },
  { "RSA", "verifying", 2100,
    "GNUnet 0.21 API: rsa_verify takes (message, size); the driver passes"
    " the same 64-byte hash as for 0.19/0.20, so the full-domain hash inside"
    " gets the same bytes: same work" },
  { "CS", "r_derivation", 2200,
    "GNUnet 0.22+: the KDF deriving r0, r1 runs on libsodium's HMAC instead"
    " of libgcrypt's (same bytes)" },
  { "CS", "blinding_secret_derivation", 2200,
    "GNUnet 0.22+: the HKDF deriving alpha, beta runs on libsodium's HMAC"
    " instead of libgcrypt's (same bytes)" },
  { "CS", "blinding", 2200,
    "GNUnet 0.22+: the KDF of the full-domain hash runs on libsodium's HMAC"
    " instead of libgcrypt's (same bytes)" },
  { "CS", "signing", 2200,
    "GNUnet 0.22+: the HKDF deriving b runs on libsodium's HMAC instead of"
    " libgcrypt's (same bytes)" },
  { "CS", "verifying", 2200,
    "GNUnet 0.22+: the KDF of the full-domain hash runs on libsodium's HMAC"
    " instead of libgcrypt's (same bytes)" },
  { "RSA", "blinding", 2200,
    "GNUnet 0.22+: the KDFs of the full-domain hash and of the blinding"
    " factor run on libsodium's HMAC instead of libgcrypt's (same bytes)" },
  { "RSA", "unblinding", 2200,
    "GNUnet 0.22+: the KDF of the blinding factor runs on libsodium's HMAC"
    " instead of libgcrypt's (same bytes)" },
  { "RSA", "verifying", 2200,
    "GNUnet 0.22+: the KDF of the full-domain hash runs on libsodium's HMAC"
    " instead of libgcrypt's (same bytes)" },
};


void
blindsig_print_row_notes (void)
{
  const unsigned int n = sizeof (row_notes) / sizeof (row_notes[0]);

  /* One meta line per (scheme, operation); notes of one row are joined. */
  for (unsigned int i = 0; i < n; i++)
  {
    bool first = true;
    bool printed_before = false;

    for (unsigned int j = 0; j < i; j++)
      if ((0 == strcmp (row_notes[j].scheme, row_notes[i].scheme))
          && (0 == strcmp (row_notes[j].operation, row_notes[i].operation)))
        printed_before = true;
    if (printed_before)
      continue;
    for (unsigned int j = i; j < n; j++)
    {
      if ((0 != strcmp (row_notes[j].scheme, row_notes[i].scheme))
          || (0 != strcmp (row_notes[j].operation, row_notes[i].operation))
          || (ABH_GNUNET_API_NUM < row_notes[j].since))
        continue;
      if (first)
        printf ("meta\trow_note:%s:%s\t", row_notes[i].scheme,
                row_notes[i].operation);
      printf ("%s%s", first ? "" : "; ", row_notes[j].text);
      first = false;
    }
    if (! first)
      printf ("\n");
  }
}
