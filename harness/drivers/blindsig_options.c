/*
 * blindsig_options.c -- blindsig's command line: the --help text and the
 * parsers of option values (main() in blindsig.c reads the options and
 * names the bad ones), and the --next-block-size testing aid.
 */
#include "blindsig.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
usage (FILE *out)
{
  fprintf (out,
           "usage: blindsig --iterations N --repetitions R [--warmup K]\n"
           "                [--min-block-ns NS] [--max-time S]"
           " [--scheme cs|rsa|all] [--rsa-bits B1,B2,...] [--progress]\n"
           "                [--count-markers [--count-keys DIR]] [--fresh-items]"
           " [--order O]"
           " [--seed N] [--interactive [--reuse-keys]]\n"
           "       blindsig --build-info\n"
           "\n"
           "  --iterations N    smallest operations per timed block"
           " (1..%lu)\n"
           "  --repetitions R   timed blocks per operation (1..%lu)\n"
           "  --warmup K        repetitions run and discarded first"
           " (0..%lu, default 1)\n"
           "  --min-block-ns NS grow blocks until one takes NS ns; 0 = keep"
           " N (default: max(%d clock ticks, 1 ms))\n"
           "  --max-time S      per scheme/size budget in seconds: no new"
           " repetition once spent (>= 1 taken)\n"
           "  --scheme S        cs, rsa or all (default all)\n"
           "  --rsa-bits LIST   RSA modulus sizes in bits, %d..%d"
           " (default 1024,2048,3072,4096)\n"
           "  --progress        report finished repetitions on stderr\n"
           "  --count-markers   mark every block for the QEMU counting plugin"
           " and fix\n"
           "                    every input (count_inputs.h)\n"
           "  --count-keys DIR  with --count-markers: after key generation,"
           " RSA uses the\n"
           "                    fixed key DIR/count-key-rsa-<bits>.key\n"
           "  --order O         interleaved (default: pairs take turns, one"
           " repetition each, shuffled per round) or sequential\n"
           "  --seed N          seed of the interleaved order"
           " (default: clock)\n"
           "  --interactive     print start/ask lines around each repetition"
           " and read go / more|stop on stdin\n"
           "  --reuse-keys      with --interactive: keep each key generation's"
           " keys; the answer\n"
           "                    'more nokeygen' skips the next repetition's key"
           " generation block and reuses them\n"
           "  --fresh-items     every operation of a block on its own fresh item"
           " (default: one call after another on the same item, as GNUnet's"
           " perf_crypto_* programs)\n"
           "  --build-info      print the meta lines and exit\n"
           "  --inject-fault S  testing only: corrupt one cs|rsa message"
           " before verification\n"
           "  --next-block-size OPS,NS,MIN,MAX  testing only: print the"
           " calibration rule's answer\n",
           MAX_ITERATIONS, MAX_REPETITIONS, MAX_WARMUP, MIN_BLOCK_TICKS,
           MIN_RSA_BITS, MAX_RSA_BITS);
}


bool
parse_u64 (const char *text, uint64_t max, uint64_t *out)
{
  char *end;
  unsigned long long value;

  if ((NULL == text) || ('\0' == *text) || ('-' == *text) || ('+' == *text))
    return false;
  errno = 0;
  value = strtoull (text, &end, 10);
  if ((0 != errno) || ('\0' != *end) || (value > max))
    return false;
  *out = (uint64_t) value;
  return true;
}


bool
parse_count (const char *text, unsigned long max, unsigned int *out)
{
  uint64_t value;

  if ((! parse_u64 (text, max, &value)) || (0 == value))
    return false;
  *out = (unsigned int) value;
  return true;
}


bool
parse_seconds (const char *text, uint64_t *out_ns)
{
  char *end;
  double value;

  if ((NULL == text) || ('\0' == *text))
    return false;
  errno = 0;
  value = strtod (text, &end);
  /* "! (value > 0)" also rejects NaN. */
  if ((0 != errno) || ('\0' != *end) || (! (value > 0)) || (value > MAX_TIME_S))
    return false;
  *out_ns = (uint64_t) (value * 1e9 + 0.5);
  if (0 == *out_ns)
    *out_ns = 1;
  return true;
}


bool
parse_rsa_bits (const char *text, unsigned int *sizes, unsigned int *count)
{
  char buf[256];
  char *save = NULL;

  if (strlen (text) >= sizeof (buf))
    return false;
  strcpy (buf, text);
  *count = 0;
  for (char *tok = strtok_r (buf, ",", &save); NULL != tok;
       tok = strtok_r (NULL, ",", &save))
  {
    unsigned int bits;

    if ((*count >= MAX_RSA_SIZES)
        || (! parse_count (tok, MAX_RSA_BITS, &bits))
        || (bits < MIN_RSA_BITS))
      return false;
    for (unsigned int j = 0; j < *count; j++)
      if (sizes[j] == bits)
        return false;                  /* would duplicate rows */
    sizes[(*count)++] = bits;
  }
  return *count > 0;
}


/**
 * Testing aid: "OPS,NS,MIN,MAX" -> next_block_size() on stdout, so the
 * harness's tests can hold the C rule against the Python one.
 */
int
print_next_block_size (const char *text)
{
  uint64_t v[4];
  char buf[128];
  char *save = NULL;
  unsigned int k = 0;

  if (strlen (text) >= sizeof (buf))
    return EXIT_USAGE;
  strcpy (buf, text);
  for (char *tok = strtok_r (buf, ",", &save); NULL != tok;
       tok = strtok_r (NULL, ",", &save))
    if ((k >= 4) || (! parse_u64 (tok, UINT64_MAX, &v[k++])))
      return EXIT_USAGE;
  if ((4 != k) || (v[0] < 1) || (v[0] > MAX_ITERATIONS)
      || (v[2] > MAX_MIN_BLOCK_NS) || (v[3] < 1) || (v[3] > MAX_ITERATIONS))
    return EXIT_USAGE;
  printf ("%u\n", next_block_size ((unsigned int) v[0], v[1], v[2],
                                   (unsigned int) v[3]));
  return 0;
}
