/*
 * sodium_bench.h -- what the parts of the sodium_bench driver share.
 *
 *   sodium_bench.c          protocol (its top comment), main: set-up and
 *                           meta lines
 *   sodium_bench_setup.c    command line, clock probe, self-test, errors
 *   sodium_bench_measure.c  each row's preparation, timed block and checks,
 *                           calibration, sample lines
 *
 * Include it first: it sets the feature macros the system headers need.
 */
#ifndef ARCHBENCH_SODIUM_BENCH_H
#define ARCHBENCH_SODIUM_BENCH_H

#define _POSIX_C_SOURCE 200809L
/* syscall () for the counting markers (count_marker.h). */
#define _DEFAULT_SOURCE

#include <sodium.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MAX_SIZES 32
#define SIGN_MESSAGE_BYTES 32
#define REASON_LEN 200

struct Options
{
  unsigned long repetitions;
  unsigned long warmup;
  unsigned long fixed_ops;     /* 0: auto */
  size_t sizes[MAX_SIZES];
  size_t n_sizes;
  bool count_markers;          /* --count-markers */
};

struct Clock
{
  uint64_t res_ns;
  uint64_t tick_ns;            /* 0: no step seen */
  double pair_overhead_ns;
  unsigned long reads;
  uint64_t min_sample_ns;
};

/* One row being measured: scheme, operation and, for per-byte rows, the
 * message size. */
struct Row
{
  const char *scheme;
  const char *operation;
  size_t size;                 /* 0: no size parameter */
};

/* Inputs and outputs of one block, prepared before the clock starts. */
struct Work
{
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  unsigned char msg[SIGN_MESSAGE_BYTES];
  unsigned char sig[crypto_sign_BYTES];
  unsigned char x_sk_a[crypto_scalarmult_SCALARBYTES];
  unsigned char x_pk_a[crypto_scalarmult_BYTES];
  unsigned char x_sk_b[crypto_scalarmult_SCALARBYTES];
  unsigned char x_pk_b[crypto_scalarmult_BYTES];
  unsigned char shared_a[crypto_scalarmult_BYTES];
  unsigned char shared_b[crypto_scalarmult_BYTES];
  unsigned char key[crypto_stream_xsalsa20_KEYBYTES];
  unsigned char nonce[crypto_stream_xsalsa20_NONCEBYTES];
  unsigned char digest[crypto_hash_sha512_BYTES];
  unsigned char *plain;        /* largest size */
  unsigned char *cipher;       /* largest size */
  unsigned char *back;         /* largest size */
};

/* sodium_bench_setup.c: "sodium_bench: <message>" on stderr, exit status. */
void die (int status, const char *fmt, ...)
  __attribute__ ((noreturn, format (printf, 2, 3)));

/* sodium_bench_setup.c: parse argv into *o; bad arguments exit 1. */
void parse_args (int argc, char **argv, struct Options *o);

/* sodium_bench_setup.c: clock resolution, smallest step, cost of a pair of
 * reads and the minimum sample they imply (top of sodium_bench.c). */
void probe_clock (struct Clock *c);

/* sodium_bench_setup.c: the FIPS 180-2 "abc" digests; exit 1 on mismatch. */
void self_test (void);

/* sodium_bench_measure.c: every row in turn (Ed25519 key generation, sign,
 * verify; X25519; XSalsa20, SHA-256, SHA-512 per size), each with its
 * calib/warmup/sample lines; sets count_marker.h's switch from
 * o->count_markers.  w holds buffers of the largest size. */
void measure_rows (const struct Options *o, const struct Clock *c,
                   struct Work *w);

/* CLOCK_MONOTONIC in ns (inline: it is read inside the timed blocks). */
static inline uint64_t
now_ns (void)
{
  struct timespec ts;

  if (0 != clock_gettime (CLOCK_MONOTONIC, &ts))
    die (2, "clock_gettime(CLOCK_MONOTONIC) failed: %s", strerror (errno));
  return (uint64_t) ts.tv_sec * UINT64_C (1000000000) + (uint64_t) ts.tv_nsec;
}

#endif
