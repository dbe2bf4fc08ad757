/*
 * sodium_bench_setup.c -- what the sodium_bench driver does before it
 * measures: the command line (usage at the top of sodium_bench.c), the
 * clock probe behind min_sample_ns, libsodium's self-test, and errors.
 */
#include "sodium_bench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_REPETITIONS 64UL
#define DEFAULT_WARMUP 4UL
#define MAX_REPETITIONS 1000000UL
#define MAX_FIXED_OPS 10000000UL
#define MAX_SIZE_BYTES (64UL * 1024UL * 1024UL)
#define MIN_SAMPLE_TICKS 100

#define CLOCK_PROBE_MIN_READS 20000UL
#define CLOCK_PROBE_MAX_READS 2000000UL
#define CLOCK_PROBE_MIN_CHANGES 1000UL

static const size_t default_sizes[] = { 1000, 10000, 100000 };

void
die (int status, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  fputs ("sodium_bench: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (status);
}

static unsigned long
parse_ulong (const char *opt, const char *text, unsigned long lo,
             unsigned long hi)
{
  char *end = NULL;
  unsigned long v;

  if ('\0' == text[0] || '-' == text[0] || '+' == text[0])
    die (1, "%s: '%s' is not a whole number in %lu..%lu", opt, text, lo, hi);
  errno = 0;
  v = strtoul (text, &end, 10);
  if (0 != errno || '\0' != *end || v < lo || v > hi)
    die (1, "%s: '%s' is not a whole number in %lu..%lu", opt, text, lo, hi);
  return v;
}

static void
parse_sizes (const char *text, struct Options *o)
{
  char buf[1024];
  char *save = NULL;
  char *tok;

  if (strlen (text) >= sizeof (buf))
    die (1, "--sizes: list too long");
  if (',' == text[0] || NULL != strstr (text, ",,")
      || ('\0' != text[0] && ',' == text[strlen (text) - 1]))
    die (1, "--sizes: '%s' has an empty item; give sizes like 64,1024", text);
  memcpy (buf, text, strlen (text) + 1);
  o->n_sizes = 0;
  for (tok = strtok_r (buf, ",", &save); NULL != tok;
       tok = strtok_r (NULL, ",", &save))
  {
    if (o->n_sizes == MAX_SIZES)
      die (1, "--sizes: at most %d sizes", MAX_SIZES);
    o->sizes[o->n_sizes++] =
      (size_t) parse_ulong ("--sizes", tok, 1, MAX_SIZE_BYTES);
  }
  if (0 == o->n_sizes)
    die (1, "--sizes: give at least one size in bytes");
}

void
parse_args (int argc, char **argv, struct Options *o)
{
  o->repetitions = DEFAULT_REPETITIONS;
  o->warmup = DEFAULT_WARMUP;
  o->fixed_ops = 1;
  o->count_markers = false;
  o->n_sizes = sizeof (default_sizes) / sizeof (default_sizes[0]);
  memcpy (o->sizes, default_sizes, sizeof (default_sizes));
  for (int i = 1; i < argc; i++)
  {
    const char *a = argv[i];

    if (0 == strcmp (a, "--count-markers"))
    {
      o->count_markers = true;
      continue;
    }
    if (i + 1 >= argc)
      die (1, "unknown or incomplete argument '%s' (see the usage at the "
           "top of sodium_bench.c)", a);
    if (0 == strcmp (a, "--repetitions"))
      o->repetitions = parse_ulong (a, argv[++i], 1, MAX_REPETITIONS);
    else if (0 == strcmp (a, "--warmup"))
      o->warmup = parse_ulong (a, argv[++i], 0, MAX_REPETITIONS);
    else if (0 == strcmp (a, "--sizes"))
      parse_sizes (argv[++i], o);
    else if (0 == strcmp (a, "--ops-per-sample"))
    {
      i++;
      if (0 == strcmp (argv[i], "auto"))
        o->fixed_ops = 0;
      else
        o->fixed_ops = parse_ulong (a, argv[i], 1, MAX_FIXED_OPS);
    }
    else
      die (1, "unknown argument '%s' (see the usage at the top of "
           "sodium_bench.c)", a);
  }
}

/* Back-to-back reads: smallest non-zero step and mean step. */
void
probe_clock (struct Clock *c)
{
  struct timespec res;
  uint64_t first, prev, min_step = UINT64_MAX;
  unsigned long reads = 1, changes = 0;
  uint64_t floor_ns;

  if (0 != clock_getres (CLOCK_MONOTONIC, &res))
    die (2, "clock_getres(CLOCK_MONOTONIC) failed: %s", strerror (errno));
  c->res_ns = (uint64_t) res.tv_sec * UINT64_C (1000000000)
              + (uint64_t) res.tv_nsec;
  first = prev = now_ns ();
  while (reads < CLOCK_PROBE_MAX_READS
         && (reads < CLOCK_PROBE_MIN_READS
             || changes < CLOCK_PROBE_MIN_CHANGES))
  {
    uint64_t t = now_ns ();

    reads++;
    if (t < prev)
      die (2, "CLOCK_MONOTONIC went backwards");
    if (t != prev)
    {
      changes++;
      if (t - prev < min_step)
        min_step = t - prev;
    }
    prev = t;
  }
  c->reads = reads;
  c->tick_ns = (0 == changes) ? 0 : min_step;
  c->pair_overhead_ns = (double) (prev - first) / (double) (reads - 1);
  floor_ns = c->res_ns;
  if (c->tick_ns > floor_ns)
    floor_ns = c->tick_ns;
  if ((uint64_t) c->pair_overhead_ns + 1 > floor_ns)
    floor_ns = (uint64_t) c->pair_overhead_ns + 1;
  c->min_sample_ns = MIN_SAMPLE_TICKS * floor_ns;
}

void
self_test (void)
{
  static const unsigned char sha256_abc[crypto_hash_sha256_BYTES] = {
    0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde,
    0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
    0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad
  };
  static const unsigned char sha512_abc[crypto_hash_sha512_BYTES] = {
    0xdd, 0xaf, 0x35, 0xa1, 0x93, 0x61, 0x7a, 0xba, 0xcc, 0x41, 0x73, 0x49,
    0xae, 0x20, 0x41, 0x31, 0x12, 0xe6, 0xfa, 0x4e, 0x89, 0xa9, 0x7e, 0xa2,
    0x0a, 0x9e, 0xee, 0xe6, 0x4b, 0x55, 0xd3, 0x9a, 0x21, 0x92, 0x99, 0x2a,
    0x27, 0x4f, 0xc1, 0xa8, 0x36, 0xba, 0x3c, 0x23, 0xa3, 0xfe, 0xeb, 0xbd,
    0x45, 0x4d, 0x44, 0x23, 0x64, 0x3c, 0xe8, 0x0e, 0x2a, 0x9a, 0xc9, 0x4f,
    0xa5, 0x4c, 0xa4, 0x9f
  };
  unsigned char out[crypto_hash_sha512_BYTES];

  if (0 != crypto_hash_sha256 (out, (const unsigned char *) "abc", 3)
      || 0 != memcmp (out, sha256_abc, sizeof (sha256_abc)))
    die (1, "self-test failed: SHA-256(\"abc\") is not the FIPS 180-2 value");
  if (0 != crypto_hash_sha512 (out, (const unsigned char *) "abc", 3)
      || 0 != memcmp (out, sha512_abc, sizeof (sha512_abc)))
    die (1, "self-test failed: SHA-512(\"abc\") is not the FIPS 180-2 value");
}
