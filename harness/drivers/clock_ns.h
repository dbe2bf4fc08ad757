/*
 * clock_ns.h -- the clock of blindsig's timed blocks: CLOCK_MONOTONIC in ns.
 *
 * Shared by harness/drivers/blindsig.c and benchmarks/harness_overhead.c (the bare
 * loop blindsig is compared with), so that both read the clock around a
 * block with the same code.  Like count_marker.h it holds a static
 * definition: include it once per translation unit.
 */
#ifndef ARCHBENCH_CLOCK_NS_H
#define ARCHBENCH_CLOCK_NS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Exit status when the clock fails: 70 (EX_SOFTWARE), both drivers'
 * internal-error status. */
#define CLOCK_NS_EXIT_FAILED 70

/**
 * CLOCK_MONOTONIC now, in ns.  Exits with CLOCK_NS_EXIT_FAILED (message on
 * stderr) when the clock cannot be read: without a clock no number a driver
 * prints would mean anything.
 */
static uint64_t
now_ns (void)
{
  struct timespec ts;

  if (0 != clock_gettime (CLOCK_MONOTONIC, &ts))
  {
    fprintf (stderr, "clock_gettime(CLOCK_MONOTONIC) failed: %s\n",
             strerror (errno));
    exit (CLOCK_NS_EXIT_FAILED);
  }
  return (uint64_t) ts.tv_sec * UINT64_C (1000000000)
         + (uint64_t) ts.tv_nsec;
}

#endif
