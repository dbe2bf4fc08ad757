/*
 * rsa_large.h -- what the parts of the rsa_large driver share.
 *
 *   rsa_large.c          protocol and what is timed (its top comment),
 *                        main, meta lines, output, errors
 *   rsa_large_options.c  the command line
 *   rsa_large_measure.c  per size: key generation under its budget, the
 *                        PKCS#1 v1.5 SHA-256 contexts and digests, the
 *                        correctness check, calibration, timed blocks
 *
 * Include it first: it sets the feature macros the system headers need.
 */
#ifndef ARCHBENCH_RSA_LARGE_H
#define ARCHBENCH_RSA_LARGE_H

#define _POSIX_C_SOURCE 200809L
/* syscall () for the counting markers (count_marker.h). */
#define _DEFAULT_SOURCE

#include <openssl/evp.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define EXIT_USAGE 64
#define EXIT_INTERNAL 70

#define MIN_BITS 1024
#define MAX_BITS 16384
#define MAX_SIZES 64
#define MAX_REPETITIONS 100000u
#define MAX_MIN_BLOCK_NS 60000000000ull
/* Largest block; bounds the signature buffer (MAX_BLOCK_OPS * modulus bytes). */
#define MAX_BLOCK_OPS (1u << 18)

struct options
{
  unsigned int bits[MAX_SIZES];
  size_t n_bits;
  unsigned int repetitions;
  uint64_t min_block_ns;
  uint64_t max_time_ns;
  unsigned int keygen_repetitions;
  uint64_t keygen_max_time_ns;
  bool count_markers;          /* --count-markers */
};

/* rsa_large.c: message and libcrypto's error queue on stderr, exit 70. */
void die (const char *what) __attribute__ ((noreturn));

/* rsa_large.c: print one protocol line and flush it (so that a crash or a
 * timeout keeps what was measured); dies when stdout fails. */
void out (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* rsa_large_options.c: parse argv into *o; usage errors exit 64. */
void parse_options (int argc, char **argv, struct options *o);

/* rsa_large_measure.c: key generation, checks, calibration and timed blocks
 * of every size in o->bits, in order, with their output lines; sets
 * count_marker.h's switch from o->count_markers. */
void run_sizes (const struct options *o);

/* CLOCK_MONOTONIC in ns (inline: it is read inside the timed blocks). */
static inline uint64_t
now_ns (void)
{
  struct timespec ts;

  if (0 != clock_gettime (CLOCK_MONOTONIC, &ts))
    die ("clock_gettime(CLOCK_MONOTONIC) failed");
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

#endif
