/*
 * rsa_large -- archbench's RSA sign/verify timing driver for large moduli.
 *
 * `openssl speed rsa` stops at 15360 bits; this driver times RSA key
 * generation, signing and verifying at any size libcrypto accepts (up to its
 * 16384-bit limit) through the OpenSSL 3 EVP API, with a time budget, and
 * checks that what it timed is correct.  The harness's abh/suites/rsa_large.py
 * runs it and parses its output.
 *
 * Usage:
 *   rsa_large --bits 2048,4096 [--repetitions N] [--min-block-ns NS]
 *             [--max-time S] [--keygen-repetitions K] [--keygen-max-time S]
 *             [--count-markers]
 *
 * --count-markers brackets every block that prints a keygen, keygen_aborted,
 * calibrate or sample line with the counting markers of count_marker.h, in
 * the order the lines are printed (block k of the process = marker seq k),
 * so that the archbench_count QEMU plugin's k-th count belongs to the k-th
 * such line (paired by harness/abh/suites/rsa_large_output.py).
 *
 * Output (stdout, one event per line, fields separated by one space; only
 * the last field of "meta" and "invalid" may contain spaces):
 *
 *   rsa-large 1                                  first line: format, version
 *   meta <key> <value...>                        openssl_version, padding, ...
 *   keygen <bits> <ns>                           one completed key generation
 *   keygen_aborted <bits> <ns>                   one generation stopped by the
 *                                                keygen budget after <ns>
 *   keygen_done <bits> <taken> <exhausted 0|1>   end of key generation
 *   calibrate <bits> <sign|verify> <ops> <ns>    discarded calibration block
 *   sample <bits> <sign|verify> <ops> <ns>       timed block of <ops> operations
 *   invalid <bits> <reason...>                   the size's rows must not be
 *                                                published (at most one per size)
 *   done <bits> <taken> <exhausted 0|1>          end of the size: <taken> timed
 *                                                repetitions (each = one sign
 *                                                and one verify sample)
 *   end ok                                       last line
 *
 * <ns> is CLOCK_MONOTONIC wall time.  Sizes come in --bits order; each has
 * keygen lines, keygen_done, calibrate lines, sample lines, then done.  A
 * missing "end" line means the output is truncated and must be discarded.
 *
 * What is timed, and why (comparability with `openssl speed rsa`):
 *   `openssl speed rsa` signs a 36-byte buffer with EVP_PKEY_sign() and the
 *   default PKCS#1 v1.5 padding.  This driver also calls EVP_PKEY_sign() on
 *   a precomputed digest with RSA_PKCS1_PADDING, but sets SHA-256 as the
 *   signature digest, so what it produces is a real RSASSA-PKCS1-v1_5
 *   SHA-256 signature (the 32-byte digest wrapped in its 51-byte DigestInfo)
 *   that EVP_PKEY_verify() can check.  The private-key exponentiation (with
 *   CRT and blinding, as in openssl speed) dominates either way; hashing the
 *   message is left out of the timing, as openssl speed leaves it out.
 *   EVP_DigestSign() would add the SHA-256 of the message to every timed
 *   operation and make the figures incomparable for short messages.
 *
 * Per size:
 *   1. Key generation (public exponent 65537): up to --keygen-repetitions
 *      generations, each timed alone.  A generation still running when
 *      --keygen-max-time seconds have passed since the first started is
 *      aborted through the generation callback (keygen_aborted, exhausted
 *      1).  The first completed key is used for signing; when none
 *      completed the size is invalid.
 *   2. Correctness, outside the timing: a signature of each of the
 *      MESSAGES messages must verify, and must not verify for a message
 *      with one byte changed.
 *   3. Calibration, separately for sign and verify: blocks of 1, 2, 4, ...
 *      operations until one lasts >= --min-block-ns (or MAX_BLOCK_OPS is
 *      reached); these blocks are discarded and the last size is kept.
 *   4. Repetitions: one sign block, then (untimed) verification of every
 *      signature that block produced, then one verify block.  Repetition
 *      r > 0 starts only if the time spent since step 3 began plus the
 *      previous repetition's duration stays within --max-time (so at least
 *      one repetition always runs); otherwise exhausted = 1.
 *
 * Exit status: 0 when the run completed (even if a size is invalid), 64 on
 * usage errors, 70 on internal errors (allocation, clock, libcrypto setup).
 *
 * Sources: this file (main, meta lines, output, errors), rsa_large_options.c
 * (command line), rsa_large_measure.c (everything per size: keys, checks,
 * calibration, timed blocks) and rsa_large.h (what they share); the
 * Makefile links them into rsa_large.
 */

#include "rsa_large.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/opensslv.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define FORMAT_NAME "rsa-large"
#define FORMAT_VERSION 1

void
die (const char *what)
{
  fprintf (stderr, "rsa_large: %s\n", what);
  ERR_print_errors_fp (stderr);
  exit (EXIT_INTERNAL);
}

void
out (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  if (vprintf (fmt, ap) < 0)
    die ("cannot write to stdout");
  va_end (ap);
  /* Flushed per line so that a crash or a timeout keeps what was measured. */
  if (0 != fflush (stdout))
    die ("cannot write to stdout");
}


int
main (int argc, char **argv)
{
  struct options o;

  parse_options (argc, argv, &o);
  out ("%s %d\n", FORMAT_NAME, FORMAT_VERSION);
  out ("meta openssl_version %s\n", OpenSSL_version (OPENSSL_VERSION));
  out ("meta openssl_build_version %s\n", OPENSSL_VERSION_TEXT);
  out ("meta scheme RSASSA-PKCS1-v1_5 SHA-256 via EVP_PKEY_sign, e=65537\n");
  out ("meta min_block_ns %" PRIu64 "\n", o.min_block_ns);
  out ("meta max_block_ops %u\n", MAX_BLOCK_OPS);
  run_sizes (&o);
  out ("end ok\n");
  return 0;
}
