/*
 * count_marker.h -- block markers for counting instructions under QEMU.
 *
 * In counting mode (count_markers set by the driver's --count-markers) each
 * timed block is bracketed by a harmless getpid() carrying extra arguments:
 *   getpid (COUNT_MAGIC, COUNT_START, seq)  ...  getpid (COUNT_MAGIC, COUNT_STOP, seq)
 * The kernel ignores them; the archbench_count QEMU plugin
 * (images/counter/archbench_count.c, same constants) counts the guest
 * instructions executed between the two and writes one line per block.
 * seq counts blocks from 0 in the order the driver prints them.  The magic is
 * 32-bit so that 32-bit guests (armv7) pass it unchanged.
 */
#ifndef ARCHBENCH_COUNT_MARKER_H
#define ARCHBENCH_COUNT_MARKER_H

#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#define COUNT_MAGIC 0x41424331UL /* "ABC1" */
#define COUNT_START 1UL
#define COUNT_STOP 2UL

static bool count_markers;
static unsigned long count_seq;

static inline void
count_block_start (void)
{
  if (count_markers)
    (void) syscall (SYS_getpid, COUNT_MAGIC, COUNT_START, count_seq);
}

static inline void
count_block_stop (void)
{
  if (count_markers)
  {
    (void) syscall (SYS_getpid, COUNT_MAGIC, COUNT_STOP, count_seq);
    count_seq++;
  }
}

#endif
