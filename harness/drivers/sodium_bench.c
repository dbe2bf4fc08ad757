/*
 * sodium_bench: times libsodium's Ed25519, X25519, XSalsa20, SHA-256 and
 * SHA-512 the way pycryptopp's benchmark did (each row timed repeatedly,
 * summarised by the harness as best / Nth-best / mean / Nth-worst / worst).
 *
 * Usage:
 *   sodium_bench [--repetitions N] [--warmup W] [--sizes S1,S2,...]
 *                [--ops-per-sample K|auto] [--count-markers]
 *
 *   --repetitions N   timed samples per row (1..1000000, default 64)
 *   --warmup W        discarded samples per row before the timed ones
 *                     (0..1000000, default 4)
 *   --sizes LIST      message sizes in bytes of the XSalsa20 and SHA rows
 *                     (1..67108864 each, default 1000,10000,100000: the
 *                     small / medium / large sizes of pycryptopp's bench)
 *   --ops-per-sample  operations inside one timed sample.  K (1..10000000,
 *                     default 1) times K calls per sample; 1 times every
 *                     call on its own, like pycryptopp.  "auto" calibrates
 *                     each row: starting from 1, a sample shorter than
 *                     min_sample_ns grows to the count that would take
 *                     min_sample_ns at the measured rate plus 25 % (tenfold
 *                     when it read 0 ns), at most 1000000, where
 *                     min_sample_ns = 100 x max(clock_getres, smallest
 *                     observed clock step, mean cost of a pair of reads),
 *                     so that clock resolution and the reads themselves
 *                     stay below 1 % of a sample.  Calibration ends at the
 *                     second consecutive sample that is long enough (the
 *                     first call of a row is slowed by cold caches).
 *                     Sizes never shrink, so a sample after calibration
 *                     can still be shorter than min_sample_ns when the
 *                     machine speeds up.
 *   --count-markers   bracket every timed block (each calib, warmup and
 *                     sample line, in print order) with the counting
 *                     markers of count_marker.h, so that the archbench_count
 *                     QEMU plugin's k-th count belongs to the k-th such line
 *                     (paired by harness/abh/suites/sodium_output.py).
 *
 * Timing: clock_gettime(CLOCK_MONOTONIC) around each block of K calls;
 * inputs (keys, messages, nonces) are drawn before the clock starts.  Each
 * row is measured on its own: warmup samples, then timed ones.
 *
 * Checks (untimed, after every block, warmup and calibration included):
 *   Ed25519 key_generation  the secret key's embedded public key equals the
 *                           one returned, and the pair signs and verifies
 *   Ed25519 sign            the signature verifies; with one message bit
 *                           flipped it must not
 *   Ed25519 verify          every timed call returns success; a flipped
 *                           message bit fails
 *   X25519 derive           every call succeeds; the other party derives
 *                           the same shared secret
 *   XSalsa20 stream         the output differs from the input, and XORing
 *                           the keystream again restores the input
 *   SHA-256 / SHA-512       the FIPS 180-2 "abc" digests are checked once at
 *                           start (mismatch: exit 1); every call returns 0
 * A failed check prints an "invalid" line for its row and ends that row; the
 * other rows go on.
 *
 * Output (stdout, one record per line, fields separated by one space):
 *   meta <key> <value...>      sodium_version (sodium_version_string()),
 *                              sodium_header_version, runtime_features,
 *                              clock, clock_res_ns, clock_tick_ns (absent
 *                              when no step was seen), clock_pair_overhead_ns,
 *                              clock_probe_reads, min_sample_ns,
 *                              repetitions, warmup, sizes, ops_per_sample,
 *                              sign_message_bytes
 *   calib  <scheme> <operation> <param> <bytes_per_op> <ops> <ns>
 *   warmup <scheme> <operation> <param> <bytes_per_op> <ops> <ns>
 *   sample <scheme> <operation> <param> <bytes_per_op> <ops> <ns>
 *   invalid <scheme> <operation> <param> <bytes_per_op> <reason...>
 *   end
 * <param> is "-" or the message size in bytes; <bytes_per_op> is 0 for rows
 * that are not per byte; <ns> is the wall time of one block of <ops> calls
 * (it may be 0 when the clock is too coarse).  "end" is printed last, so
 * its absence means the driver died.  Exit status 0 with "end" even when
 * rows are invalid; 1 (message on stderr) on bad arguments or when libsodium
 * cannot be initialised or fails its self-test; 2 on a broken clock or
 * memory exhaustion.
 *
 * Sources: this file (main: set-up and meta lines), sodium_bench_setup.c
 * (command line, clock probe, self-test, errors), sodium_bench_measure.c
 * (each row's preparation, timed block, checks and sample lines) and
 * sodium_bench.h (what they share); the Makefile links them into
 * sodium_bench.
 */
#include "sodium_bench.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static void
print_features (void)
{
  static const struct
  {
    const char *name;
    int (*has) (void);
  } features[] = {
    { "neon", sodium_runtime_has_neon },
    { "sse2", sodium_runtime_has_sse2 },
    { "sse3", sodium_runtime_has_sse3 },
    { "ssse3", sodium_runtime_has_ssse3 },
    { "sse41", sodium_runtime_has_sse41 },
    { "avx", sodium_runtime_has_avx },
    { "avx2", sodium_runtime_has_avx2 },
    { "avx512f", sodium_runtime_has_avx512f },
    { "pclmul", sodium_runtime_has_pclmul },
    { "aesni", sodium_runtime_has_aesni },
    { "rdrand", sodium_runtime_has_rdrand },
  };
  bool any = false;

  fputs ("meta runtime_features ", stdout);
  for (size_t i = 0; i < sizeof (features) / sizeof (features[0]); i++)
    if (features[i].has ())
    {
      printf ("%s%s", any ? "," : "", features[i].name);
      any = true;
    }
  puts (any ? "" : "-");
}

int
main (int argc, char **argv)
{
  struct Options o;
  struct Clock c;
  struct Work w;
  size_t max_size = 0;

  parse_args (argc, argv, &o);
  if (sodium_init () < 0)
    die (1, "sodium_init() failed");
  self_test ();
  probe_clock (&c);
  for (size_t i = 0; i < o.n_sizes; i++)
    if (o.sizes[i] > max_size)
      max_size = o.sizes[i];
  memset (&w, 0, sizeof (w));
  w.plain = malloc (max_size);
  w.cipher = malloc (max_size);
  w.back = malloc (max_size);
  if (NULL == w.plain || NULL == w.cipher || NULL == w.back)
    die (2, "out of memory for %zu-byte messages", max_size);

  printf ("meta sodium_version %s\n", sodium_version_string ());
  printf ("meta sodium_header_version %s\n", SODIUM_VERSION_STRING);
  print_features ();
  printf ("meta clock CLOCK_MONOTONIC\n");
  printf ("meta clock_res_ns %" PRIu64 "\n", c.res_ns);
  if (0 != c.tick_ns)
    printf ("meta clock_tick_ns %" PRIu64 "\n", c.tick_ns);
  printf ("meta clock_pair_overhead_ns %.2f\n", c.pair_overhead_ns);
  printf ("meta clock_probe_reads %lu\n", c.reads);
  printf ("meta min_sample_ns %" PRIu64 "\n", c.min_sample_ns);
  printf ("meta repetitions %lu\n", o.repetitions);
  printf ("meta warmup %lu\n", o.warmup);
  fputs ("meta sizes ", stdout);
  for (size_t i = 0; i < o.n_sizes; i++)
    printf ("%s%zu", (0 == i) ? "" : ",", o.sizes[i]);
  fputs ("\n", stdout);
  if (0 == o.fixed_ops)
    printf ("meta ops_per_sample auto\n");
  else
    printf ("meta ops_per_sample %lu\n", o.fixed_ops);
  printf ("meta sign_message_bytes %d\n", SIGN_MESSAGE_BYTES);

  measure_rows (&o, &c, &w);
  puts ("end");
  free (w.plain);
  free (w.cipher);
  free (w.back);
  if (0 != fflush (stdout) || ferror (stdout))
    die (2, "cannot write to stdout");
  return 0;
}
