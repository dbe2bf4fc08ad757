/*
 * count_calibrate -- a loop of known instruction count, to check the counter.
 *
 *   count_calibrate N     (markers always on; run under the counting QEMU)
 *
 * Runs the loop below for N and then 2N iterations, each between the block
 * markers of count_marker.h (blocks 0 and 1), and prints
 *   archbench-calibrate  1
 *   loop  <instructions per iteration>  <N>
 * Every architecture's loop is two instructions per iteration (decrement and
 * set flags, branch back while non-zero), so a correct counter reports
 * exactly 2N more instructions for block 1 than for block 0; the rest of
 * block 0 is the fixed cost of the markers themselves.
 */
#include "count_marker.h"

#include <stdio.h>
#include <stdlib.h>

#define INSNS_PER_ITERATION 2

static void
loop (unsigned long n)
{
#if defined(__x86_64__)
  __asm__ volatile ("1: dec %0\n\tjnz 1b" : "+r" (n) : : "cc");
#elif defined(__aarch64__)
  __asm__ volatile ("1: subs %0, %0, #1\n\tb.ne 1b" : "+r" (n) : : "cc");
#elif defined(__arm__)
  __asm__ volatile ("1: subs %0, %0, #1\n\tbne 1b" : "+r" (n) : : "cc");
#elif defined(__riscv)
  __asm__ volatile ("1: addi %0, %0, -1\n\tbnez %0, 1b" : "+r" (n));
#elif defined(__powerpc64__)
  __asm__ volatile ("1: addic. %0, %0, -1\n\tbne 1b" : "+r" (n) : : "cr0", "xer");
#else
#error "no calibration loop for this architecture"
#endif
}

int
main (int argc, char **argv)
{
  char *end;
  unsigned long n;

  if (2 != argc || 0 == (n = strtoul (argv[1], &end, 10)) || '\0' != *end
      || n > 100000000UL)
  {
    fprintf (stderr, "usage: count_calibrate N  (1..100000000)\n");
    return 64;
  }
  count_markers = true;
  for (unsigned long k = 1; k <= 2; k++)
  {
    count_block_start ();
    loop (k * n);
    count_block_stop ();
  }
  printf ("archbench-calibrate\t1\nloop\t%d\t%lu\n", INSNS_PER_ITERATION, n);
  return 0;
}
