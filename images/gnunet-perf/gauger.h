/* archbench shim for GNUnet's gauger.h: GAUGER() reports to a gauger server, which a
   benchmark container has none of (and no network); the timings are printed anyway. */
#ifndef ARCHBENCH_GAUGER_H
#define ARCHBENCH_GAUGER_H
#define GAUGER(category, counter, value, unit) ((void) 0)
#endif
