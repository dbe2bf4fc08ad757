/*
 * blindsig -- archbench's in-container blind-signature timing driver.
 *
 * Times the Clause Blind Schnorr (CS) and RSA-FDH blind-signature primitives
 * of GNUnet's libgnunetutil, operation by operation, and prints line-based
 * TSV on stdout for harness/archbench_harness.py (see harness/CONTRACT.md for
 * the JSON the harness turns it into).
 *
 * Output lines (fields separated by one TAB, no field contains TAB/newline):
 *
 *   archbench-blindsig  <format version>                 first line
 *   meta      <key>  <value>                             build/run facts
 *   discard   <scheme> <bits> <operation> <kind> <ops> <index> <ns>
 *   sample    <scheme> <bits> <operation> <ops> <rep> <ns>
 *   done      <scheme> <bits> <taken> <budget_exhausted> <elapsed_ns> <stop>
 *   invalid   <scheme> <bits> <reason>                   at most one per pair
 *   end       ok                                         last line
 *
 * With --interactive, two more lines frame every repetition, and the driver
 * waits for one answer line on stdin after each:
 *
 *   start     <scheme> <bits>                            answer: go
 *   ask       <scheme> <bits> <kind> <index>             answer: more | more
 *                                                        nokeygen | stop
 *
 * (<kind> calibration, warmup or sample; "stop" after a sample repetition
 * ends the pair with <stop> "target").  The harness reads the machine's
 * noise counters at both and decides when a confidence interval is narrow
 * enough, so that rule has one implementation, in Python.  With
 * --reuse-keys, "more nokeygen" (only after a sample repetition) makes the
 * pair's next repetition skip its key generation block: the other blocks
 * run on the keys the last key generation block made (kept untimed, after
 * that block: blindsig_keys.h), and no key generation sample is printed.
 * Key generation samples therefore count on their own: their <rep> is
 * 0, 1, ... over the blocks that ran, the other operations' over all timed
 * repetitions.  The harness uses this to let key generation, whose time
 * varies from key to key by the prime search, leave the adaptive loop after
 * --min-repetitions blocks.
 *
 * <scheme> is CS or RSA, <bits> is the RSA modulus size (0 for CS), <ns> is
 * the CLOCK_MONOTONIC wall time of one block of <ops> operations.  "discard"
 * blocks (<kind> calibration or warmup, <index> counting from 0 within the
 * kind) were run and thrown away; "sample" blocks are the measurement.
 * "done" closes every (scheme, bits) pair: <taken> timed repetitions,
 * <budget_exhausted> 1 when --max-time stopped it early, <elapsed_ns> the
 * pair's own time (the sum of its repetitions, calibration and warmups
 * included), <stop> why it stopped: repetitions (all --repetitions taken),
 * budget, target (--interactive answer) or invalid.  Pairs take turns
 * (--order interleaved, the default) or run one after the other.  A
 * missing "end" line means the output is truncated (crash) and must be
 * discarded.
 *
 * Calibration, warmups and the time budget, per (scheme, bits) pair:
 *   every repetition runs the whole chain (key generation .. verifying) with
 *   its own block size per operation.  While calibrating, each operation's
 *   size follows next_block_size() after each repetition; the first
 *   repetition in which no size grows ends calibration (sizes are then
 *   fixed), and it and the following ones are the --warmup repetitions
 *   (discarded), then the timed ones.  blindsig_rules.py implements the
 *   same rule and checks every calibration step against it.
 *
 * Before anything is timed, the driver checks that the libgnunetutil it
 * loaded reports the major.minor version its headers declared, and runs
 * known-answer checks of every call the blocks make, for the schemes asked
 * for (blindsig_api.c); meta known_answers names the schemes that passed,
 * known_answers_taler those whose layer checks passed.
 *
 * GNUnet 0.21 and later: each pair's repetition also times the calls of the
 * scheme-independent layer GNU Taler uses (blindsig_taler.h), as operations
 * taler_key_generation .. taler_verifying after the raw chain's; meta
 * taler_layer says "measured" or why they are absent (0.19/0.20 have no such
 * layer; --fresh-items).
 *
 * Exit status: 0 when the run completed (even if some scheme is invalid),
 * 64 on usage errors, 65 when a known-answer check failed (nothing timed),
 * 70 on internal errors (no usable clock, a library other than the
 * headers').
 *
 * One source for both GNUnet blind-signature APIs: 0.19/0.20 and 0.21 to
 * 0.27, chosen at compile time from the headers (blindsig.h, ABH_BSIG_API).
 * The rows and what each block times are the same on both; where a row's
 * call differs, meta row_note:<scheme>:<operation> says how (blindsig_api.c),
 * and the harness puts it into the row's note.  The meta lines
 * gnunet_header_version (gnunet_config.h), gnunet_build_version
 * (pkg-config, from the Makefile), gnunet_library_version (what the loaded
 * library reports) and gnunet_bsig_api record which GNUnet it measured.
 *
 * Sources: this file (main, the meta lines), blindsig_options.c (the
 * command line), blindsig_rules.c (calibration and budget rules),
 * blindsig_pairs.c (pairs, order, --interactive, the per-repetition
 * lines), blindsig_measure.c (one repetition: everything timed, with the
 * headers it includes) and blindsig.h (what they share); the Makefile
 * links them into blindsig.
 */

#include "blindsig.h"

#include "clock_ns.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* The schemes whose known-answer checks passed before timing ("CS,RSA"),
 * of the raw calls and of the layer's (empty when its rows are absent);
 * NULL with --build-info, which runs none. */
static const char *kat_passed;
static const char *kat_taler_passed;


/**
 * Before anything is timed: the loaded libgnunetutil must be the one the
 * headers declared, and the calls the blocks make must give known answers
 * (blindsig_api.c) for every scheme that runs.
 *
 * @return 0, or the exit status after a message on stderr
 */
static int
check_library (bool run_cs, bool run_rsa)
{
  static char passed[16];
  const char *version = blindsig_library_version ();
  char why[REASON_LEN];

  if (! blindsig_library_matches (version))
  {
    fprintf (stderr, "blindsig: compiled against GNUnet %s headers, but the"
             " libgnunetutil it loaded reports '%s': link it with a RUNPATH"
             " to the matching library (or fix LD_LIBRARY_PATH)\n",
             GNUNET_VERSION, version);
    return EXIT_INTERNAL;
  }
  if (run_cs && (! blindsig_kat_cs (why, sizeof (why))))
  {
    fprintf (stderr, "blindsig: CS known-answer check failed on GNUnet %s:"
             " %s; nothing was timed\n", version, why);
    return EXIT_KAT;
  }
  if (run_rsa && (! blindsig_kat_rsa (why, sizeof (why))))
  {
    fprintf (stderr, "blindsig: RSA known-answer check failed on GNUnet %s:"
             " %s; nothing was timed\n", version, why);
    return EXIT_KAT;
  }
  snprintf (passed, sizeof (passed), "%s%s%s", run_cs ? "CS" : "",
            (run_cs && run_rsa) ? "," : "", run_rsa ? "RSA" : "");
  kat_passed = passed;
#if ABH_TALER_LAYER
  if (blindsig_taler_rows ())
  {
    if (run_cs && (! blindsig_kat_taler_cs (why, sizeof (why))))
    {
      fprintf (stderr, "blindsig: CS known-answer check of the"
               " scheme-independent layer failed on GNUnet %s: %s; nothing"
               " was timed\n", version, why);
      return EXIT_KAT;
    }
    if (run_rsa && (! blindsig_kat_taler_rsa (why, sizeof (why))))
    {
      fprintf (stderr, "blindsig: RSA known-answer check of the"
               " scheme-independent layer failed on GNUnet %s: %s; nothing"
               " was timed\n", version, why);
      return EXIT_KAT;
    }
    kat_taler_passed = passed;
  }
#endif
  return 0;
}


static void
print_meta (const struct Config *cfg, const struct ClockInfo *ci)
{
  struct timespec res;
  unsigned int key_bits[MAX_RSA_SIZES];
  unsigned int n_keys = blindsig_fixed_rsa_keys (key_bits, MAX_RSA_SIZES);

  printf ("meta\tgnunet_build_version\t%s\n", ABH_GNUNET_VERSION);
  printf ("meta\tgnunet_header_version\t%s\n", GNUNET_VERSION);
  printf ("meta\tgnunet_bsig_api\t%s\n", ABH_BSIG_API_NAME);
  printf ("meta\tgnunet_library_version\t%s\n", blindsig_library_version ());
  blindsig_print_row_notes ();
  if (NULL != kat_passed)
    printf ("meta\tknown_answers\t%s\n", kat_passed);
  if (NULL != kat_taler_passed)
    printf ("meta\tknown_answers_taler\t%s\n", kat_taler_passed);
  /* "measured", or why the layer's rows are absent (not an error). */
  printf ("meta\ttaler_layer\t%s\n", blindsig_taler_rows () ? "measured"
          : blindsig_taler_absent ());
  printf ("meta\tclock\tCLOCK_MONOTONIC\n");
  printf ("meta\tmessage_bytes\t%d\n", MSG_LEN);
  printf ("meta\tinputs\t%s\n", fresh_items ? "fresh" : "repeated");
  if (n_keys > 0)
  {
    /* --count-keys: RSA after key generation uses these fixed keys. */
    printf ("meta\tfixed_rsa_keys\t");
    for (unsigned int i = 0; i < n_keys; i++)
      printf ("%s%u", (i > 0) ? "," : "", key_bits[i]);
    printf ("\n");
  }
  if (NULL == ci)
  {
    if (0 == clock_getres (CLOCK_MONOTONIC, &res))
      printf ("meta\tclock_resolution_ns\t%" PRIu64 "\n",
              (uint64_t) res.tv_sec * UINT64_C (1000000000)
              + (uint64_t) res.tv_nsec);
    return;
  }
  if (0 != ci->resolution_ns)
    printf ("meta\tclock_resolution_ns\t%" PRIu64 "\n", ci->resolution_ns);
  if (0 != ci->observed_tick_ns)
    printf ("meta\tclock_observed_tick_ns\t%" PRIu64 "\n",
            ci->observed_tick_ns);
  printf ("meta\tclock_pair_overhead_ns\t%.2f\n", ci->pair_overhead_ns);
  printf ("meta\tclock_probe_reads\t%lu\n", ci->reads);
  printf ("meta\titerations\t%u\n", cfg->iterations);
  printf ("meta\trepetitions\t%u\n", cfg->repetitions);
  printf ("meta\twarmup\t%u\n", cfg->warmup);
  printf ("meta\tmin_block_ns\t%" PRIu64 "\n", cfg->min_block_ns);
  printf ("meta\tmax_block_ops\t%u\n", cfg->max_block_ops);
  printf ("meta\tmax_time_ns\t%" PRIu64 "\n", cfg->max_time_ns);
  printf ("meta\torder\t%s\n", cfg->interleave ? "interleaved" : "sequential");
  printf ("meta\torder_seed\t%" PRIu64 "\n", cfg->seed);
}


int
main (int argc, char **argv)
{
  static const struct option options[] = {
    { "iterations", required_argument, NULL, 'n' },
    { "repetitions", required_argument, NULL, 'r' },
    { "warmup", required_argument, NULL, 'w' },
    { "min-block-ns", required_argument, NULL, 'm' },
    { "max-time", required_argument, NULL, 't' },
    { "scheme", required_argument, NULL, 's' },
    { "rsa-bits", required_argument, NULL, 'b' },
    { "progress", no_argument, NULL, 'p' },
    { "count-markers", no_argument, NULL, 'c' },
    { "count-keys", required_argument, NULL, 'K' },
    { "fresh-items", no_argument, NULL, 'F' },
    { "build-info", no_argument, NULL, 'i' },
    { "inject-fault", required_argument, NULL, 'f' },
    { "next-block-size", required_argument, NULL, 'x' },
    { "interactive", no_argument, NULL, 'a' },
    { "reuse-keys", no_argument, NULL, 'k' },
    { "order", required_argument, NULL, 'o' },
    { "seed", required_argument, NULL, 'S' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  struct Config cfg = { .warmup = 1, .interleave = true };
  struct ClockInfo ci;
  bool seed_given = false;
  bool min_block_given = false;
  unsigned int rsa_sizes[MAX_RSA_SIZES] = { 1024, 2048, 3072, 4096 };
  unsigned int rsa_count = 4;
  bool run_cs = true;
  bool run_rsa = true;
  bool build_info = false;
  const char *count_keys_dir = NULL;
  uint64_t value;
  int opt;

  while (-1 != (opt = getopt_long (argc, argv, "", options, NULL)))
  {
    switch (opt)
    {
    case 'n':
      if (! parse_count (optarg, MAX_ITERATIONS, &cfg.iterations))
      {
        fprintf (stderr, "blindsig: bad --iterations '%s'\n", optarg);
        return EXIT_USAGE;
      }
      break;
    case 'r':
      if (! parse_count (optarg, MAX_REPETITIONS, &cfg.repetitions))
      {
        fprintf (stderr, "blindsig: bad --repetitions '%s'\n", optarg);
        return EXIT_USAGE;
      }
      break;
    case 'w':
      if (! parse_u64 (optarg, MAX_WARMUP, &value))
      {
        fprintf (stderr, "blindsig: bad --warmup '%s' (0..%lu)\n", optarg,
                 MAX_WARMUP);
        return EXIT_USAGE;
      }
      cfg.warmup = (unsigned int) value;
      break;
    case 'm':
      if (! parse_u64 (optarg, MAX_MIN_BLOCK_NS, &cfg.min_block_ns))
      {
        fprintf (stderr, "blindsig: bad --min-block-ns '%s' (0..%" PRIu64
                 ")\n", optarg, MAX_MIN_BLOCK_NS);
        return EXIT_USAGE;
      }
      min_block_given = true;
      break;
    case 't':
      if (! parse_seconds (optarg, &cfg.max_time_ns))
      {
        fprintf (stderr, "blindsig: bad --max-time '%s' (seconds, > 0)\n",
                 optarg);
        return EXIT_USAGE;
      }
      break;
    case 's':
      run_cs = (0 == strcmp (optarg, "cs")) || (0 == strcmp (optarg, "all"));
      run_rsa = (0 == strcmp (optarg, "rsa")) || (0 == strcmp (optarg, "all"));
      if (! (run_cs || run_rsa))
      {
        fprintf (stderr, "blindsig: bad --scheme '%s' (cs, rsa or all)\n",
                 optarg);
        return EXIT_USAGE;
      }
      break;
    case 'b':
      if (! parse_rsa_bits (optarg, rsa_sizes, &rsa_count))
      {
        fprintf (stderr,
                 "blindsig: bad --rsa-bits '%s' (distinct sizes %d..%d,"
                 " comma-separated, at most %d)\n",
                 optarg, MIN_RSA_BITS, MAX_RSA_BITS, MAX_RSA_SIZES);
        return EXIT_USAGE;
      }
      break;
    case 'p':
      show_progress = true;
      break;
    case 'a':
      cfg.interactive = true;
      break;
    case 'k':
      cfg.reuse_keys = true;
      break;
    case 'o':
      if (0 == strcmp (optarg, "interleaved"))
        cfg.interleave = true;
      else if (0 == strcmp (optarg, "sequential"))
        cfg.interleave = false;
      else
      {
        fprintf (stderr, "blindsig: bad --order '%s' (interleaved or"
                 " sequential)\n", optarg);
        return EXIT_USAGE;
      }
      break;
    case 'S':
      if (! parse_u64 (optarg, (uint64_t) INT64_MAX, &cfg.seed))
      {
        fprintf (stderr, "blindsig: bad --seed '%s'\n", optarg);
        return EXIT_USAGE;
      }
      seed_given = true;
      break;
    case 'c':
      blindsig_count_markers_on ();
      break;
    case 'K':
      count_keys_dir = optarg;
      break;
    case 'F':
      fresh_items = true;
      break;
    case 'i':
      build_info = true;
      break;
    case 'f':
      if (0 == strcmp (optarg, "cs"))
        inject_fault = "CS";
      else if (0 == strcmp (optarg, "rsa"))
        inject_fault = "RSA";
      else
      {
        fprintf (stderr, "blindsig: bad --inject-fault '%s' (cs or rsa)\n",
                 optarg);
        return EXIT_USAGE;
      }
      break;
    case 'x':
      if (0 != print_next_block_size (optarg))
      {
        fprintf (stderr, "blindsig: bad --next-block-size '%s'"
                 " (OPS,NS,MIN,MAX)\n", optarg);
        return EXIT_USAGE;
      }
      return 0;
    case 'h':
      usage (stdout);
      return 0;
    default:
      usage (stderr);
      return EXIT_USAGE;
    }
  }
  if (optind != argc)
  {
    fprintf (stderr, "blindsig: unexpected argument '%s'\n", argv[optind]);
    usage (stderr);
    return EXIT_USAGE;
  }
  if (build_info)
  {
    printf ("%s\t%d\n", BLINDSIG_FORMAT, BLINDSIG_FORMAT_VERSION);
    print_meta (&cfg, NULL);
    printf ("end\tok\n");
    return 0;
  }
  if (cfg.reuse_keys && (! cfg.interactive))
  {
    fprintf (stderr, "blindsig: --reuse-keys needs --interactive (the"
             " harness says when key generation leaves)\n");
    return EXIT_USAGE;
  }
  if ((NULL != count_keys_dir) && (! blindsig_count_markers ()))
  {
    fprintf (stderr, "blindsig: --count-keys needs --count-markers (fixed"
             " RSA keys are for counting only)\n");
    return EXIT_USAGE;
  }
  for (unsigned int k = 0; (NULL != count_keys_dir) && run_rsa
       && (k < rsa_count); k++)
    if (! blindsig_count_load_key (count_keys_dir, rsa_sizes[k]))
      return EXIT_USAGE;
  if ((0 == cfg.iterations) || (0 == cfg.repetitions))
  {
    fprintf (stderr, "blindsig: --iterations and --repetitions are required\n");
    usage (stderr);
    return EXIT_USAGE;
  }

  /* The negative verification checks make libgnunetutil log a warning per
   * rejected signature; those are expected, so only errors get through. */
  GNUNET_log_setup ("blindsig", "ERROR", NULL);
  {
    int status = check_library (run_cs, run_rsa);

    if (0 != status)
      return status;
  }

  if (! seed_given)
    cfg.seed = (now_ns () ^ ((uint64_t) getpid () << 32))
               & (uint64_t) INT64_MAX;
  probe_clock (&ci);
  if (! min_block_given)
    cfg.min_block_ns = default_min_block_ns (&ci);
  cfg.max_block_ops = (cfg.iterations > CALIBRATION_MAX_OPS)
                      ? cfg.iterations : CALIBRATION_MAX_OPS;
  printf ("%s\t%d\n", BLINDSIG_FORMAT, BLINDSIG_FORMAT_VERSION);
  print_meta (&cfg, &ci);
  fflush (stdout);
  run_pairs (&cfg, run_cs, rsa_sizes, run_rsa ? rsa_count : 0);
  printf ("end\tok\n");
  return (0 == fflush (stdout)) ? 0 : EXIT_INTERNAL;
}
