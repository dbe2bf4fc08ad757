/*
 * rsa_large_options.c -- the rsa_large driver's command line (usage at the
 * top of rsa_large.c).  Every value is checked against its range; a bad one
 * exits 64 with the usage.
 */
#include "rsa_large.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
usage (const char *msg) __attribute__ ((noreturn));

static void
usage (const char *msg)
{
  fprintf (stderr,
           "rsa_large: %s\n"
           "usage: rsa_large --bits LIST [--repetitions N] [--min-block-ns NS]\n"
           "                 [--max-time S] [--keygen-repetitions K]"
           " [--keygen-max-time S] [--count-markers]\n",
           msg);
  exit (EXIT_USAGE);
}

static unsigned long long
parse_ull (const char *text, const char *opt, unsigned long long max)
{
  char *end;
  unsigned long long v;

  errno = 0;
  if ('\0' == text[0] || '-' == text[0])
    usage (opt);
  v = strtoull (text, &end, 10);
  if (0 != errno || '\0' != *end || v > max)
    usage (opt);
  return v;
}

static uint64_t
parse_seconds (const char *text, const char *opt)
{
  char *end;
  double s;

  errno = 0;
  s = strtod (text, &end);
  /* Upper bound: one day, far below what uint64_t ns can hold. */
  if (0 != errno || end == text || '\0' != *end || !(s > 0.0) || s > 86400.0)
    usage (opt);
  return (uint64_t) (s * 1e9);
}

static void
parse_bits (const char *text, struct options *o)
{
  const char *p = text;

  o->n_bits = 0;
  while (true)
    {
      char *end;
      unsigned long v;

      if (o->n_bits == MAX_SIZES)
        usage ("--bits: too many sizes");
      errno = 0;
      if (*p < '0' || *p > '9')
        usage ("--bits: expected a comma-separated list of integers");
      v = strtoul (p, &end, 10);
      if (0 != errno || v < MIN_BITS || v > MAX_BITS || 0 != v % 8)
        usage ("--bits: each size must be a multiple of 8 in 1024..16384");
      o->bits[o->n_bits++] = (unsigned int) v;
      if ('\0' == *end)
        return;
      if (',' != *end)
        usage ("--bits: expected a comma-separated list of integers");
      p = end + 1;
    }
}

void
parse_options (int argc, char **argv, struct options *o)
{
  o->n_bits = 0;
  o->repetitions = 3;
  o->min_block_ns = 1000000000u;
  o->max_time_ns = 60000000000ull;
  o->keygen_repetitions = 1;
  o->keygen_max_time_ns = 600000000000ull;
  o->count_markers = false;
  for (int i = 1; i < argc; i += 2)
    {
      const char *opt = argv[i];
      const char *val;

      if (0 == strcmp (opt, "--count-markers"))
        {
          o->count_markers = true;
          i--; /* a flag: no value follows */
          continue;
        }
      if (i + 1 >= argc)
        usage ("every option takes a value");
      val = argv[i + 1];
      if (0 == strcmp (opt, "--bits"))
        parse_bits (val, o);
      else if (0 == strcmp (opt, "--repetitions"))
        o->repetitions =
          (unsigned int) parse_ull (val, "--repetitions: 1..100000", MAX_REPETITIONS);
      else if (0 == strcmp (opt, "--min-block-ns"))
        o->min_block_ns = parse_ull (val, "--min-block-ns: 0..6e10", MAX_MIN_BLOCK_NS);
      else if (0 == strcmp (opt, "--max-time"))
        o->max_time_ns = parse_seconds (val, "--max-time: seconds in (0, 86400]");
      else if (0 == strcmp (opt, "--keygen-repetitions"))
        o->keygen_repetitions =
          (unsigned int) parse_ull (val, "--keygen-repetitions: 1..100000", MAX_REPETITIONS);
      else if (0 == strcmp (opt, "--keygen-max-time"))
        o->keygen_max_time_ns = parse_seconds (val, "--keygen-max-time: seconds in (0, 86400]");
      else
        usage ("unknown option");
    }
  if (0 == o->n_bits)
    usage ("--bits is required");
  if (0 == o->repetitions || 0 == o->keygen_repetitions)
    usage ("--repetitions and --keygen-repetitions must be >= 1");
}
