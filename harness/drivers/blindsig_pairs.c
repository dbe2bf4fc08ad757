/*
 * blindsig_pairs.c -- blindsig's (scheme, bits) pairs: their repetitions in
 * turn (--order), calibration, warmup and timed repetitions decided by the
 * rules (blindsig_rules.c), the --interactive protocol around each
 * repetition, and the discard, sample, done and invalid lines (the format:
 * the top of blindsig.c).  One repetition itself is blindsig_measure.c's.
 */
#include "blindsig.h"

#include "clock_ns.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Operation ids in chain order; the index is the stage index below.  The
 * layer's (blindsig_taler.h) follow the raw chain's when the run measures
 * them (blindsig_taler_rows()). */
#define TALER_OP_NAMES \
  "taler_key_generation", "taler_blinding_input", "taler_blinding", \
  "taler_signing", "taler_unblinding", "taler_verifying"
static const char *const cs_op_names[CS_OPS + TALER_OPS] = {
  "key_generation", "r_derivation", "blinding_secret_derivation",
  "blinding", "signing", "unblinding", "verifying", TALER_OP_NAMES
};
static const char *const rsa_op_names[RSA_OPS + TALER_OPS] = {
  "key_generation", "blinding", "signing", "unblinding", "verifying",
  TALER_OP_NAMES
};

bool show_progress;


static unsigned int
max_of (const unsigned int *ops, unsigned int count)
{
  unsigned int m = 0;

  for (unsigned int i = 0; i < count; i++)
    if (ops[i] > m)
      m = ops[i];
  return m;
}


static void
progress (const char *label, const char *what, unsigned int index,
          unsigned int total, unsigned int largest_block)
{
  if (! show_progress)
    return;
  if (0 == total)
    fprintf (stderr, "blindsig: %s %s %u done (largest block %u ops)\n",
             label, what, index + 1, largest_block);
  else
    fprintf (stderr, "blindsig: %s %s %u/%u done\n", label, what, index + 1,
             total);
}


/**
 * The state of one (scheme, bits) pair between its repetitions, so that
 * repetitions of different pairs can be interleaved.
 */
struct Pair
{
  const char *scheme;
  unsigned int bits;           /* 0 for CS */
  unsigned int n_ops;
  unsigned int taler_keygen;   /* index of taler_key_generation; 0: none */
  const char *const *names;
  unsigned int ops[MAX_OPS];   /* current block size per operation */
  struct Verdict v;
  bool calibrating;
  bool budget_spent;
  bool finished;
  unsigned int calibration_rounds;
  unsigned int warmups;
  unsigned int taken;
  uint64_t elapsed;            /* sum of this pair's repetition times, ns */
  const char *stop;            /* why it finished: see stop_reason below */
  char label[32];
  unsigned int keygen_taken;   /* timed key generation blocks */
  bool skip_keygen;            /* answer "more nokeygen": next one skips it */
  struct KeptKeys kept;        /* --reuse-keys: the last key generation's */
};


static void
pair_init (struct Pair *p, const char *scheme, unsigned int bits,
           const struct Config *cfg)
{
  memset (p, 0, sizeof (*p));
  p->scheme = scheme;
  p->bits = bits;
  p->n_ops = (0 == bits) ? CS_OPS : RSA_OPS;
  if (blindsig_taler_rows ())
  {
    p->taler_keygen = p->n_ops;
    p->n_ops += TALER_OPS;
  }
  p->names = (0 == bits) ? cs_op_names : rsa_op_names;
  p->calibrating = (0 != cfg->min_block_ns);
  p->stop = "repetitions";
  if (0 == bits)
    snprintf (p->label, sizeof (p->label), "%s", scheme);
  else
    snprintf (p->label, sizeof (p->label), "%s-%u", scheme, bits);
  for (unsigned int i = 0; i < p->n_ops; i++)
    p->ops[i] = cfg->iterations;
}


/**
 * --interactive: print @a line (a protocol line without newline), flush,
 * and read the harness's one-word answer into @a answer.  A closed stdin
 * means the harness is gone: nothing printed afterwards would be read.
 */
static void
converse (const char *line, char *answer, size_t size)
{
  printf ("%s\n", line);
  fflush (stdout);
  if (NULL == fgets (answer, (int) size, stdin))
  {
    fprintf (stderr, "blindsig: --interactive: stdin closed\n");
    exit (EXIT_INTERNAL);
  }
  answer[strcspn (answer, "\r\n")] = '\0';
}



/**
 * Run one repetition of pair @a p: calibration round, warmup or timed
 * repetition, decided as before; prints its discard/sample lines.  With
 * --interactive, a "start" line before and an "ask" line after it let the
 * harness read the machine's state around the repetition, and after a timed
 * repetition its answer "stop" ends the pair (the confidence-interval
 * target is reached; the rule lives in the harness only).  Sets
 * p->finished (and p->stop) once the pair is done.
 */
static void
pair_step (struct Pair *p, const struct Config *cfg)
{
  unsigned int next[MAX_OPS];
  uint64_t ns[MAX_OPS];
  bool grew = false;
  const char *kind;
  unsigned int index;
  char line[96];
  char answer[32] = "more";
  uint64_t t0;
  bool reuse;

  if (cfg->interactive)
  {
    snprintf (line, sizeof (line), "start\t%s\t%u", p->scheme, p->bits);
    converse (line, answer, sizeof (answer));
    if (0 != strcmp (answer, "go"))
    {
      fprintf (stderr, "blindsig: --interactive: expected 'go', got '%s'\n",
               answer);
      exit (EXIT_INTERNAL);
    }
  }
  reuse = p->skip_keygen && (p->kept.n > 0);
  if (p->skip_keygen && (0 == p->kept.n))
    verdict_fail (&p->v, "%s key generation: no key kept to reuse", p->label);
  t0 = now_ns ();
  blindsig_repetition (p->bits, p->ops, ns,
                       p->calibration_rounds + p->warmups + p->taken, &p->v,
                       cfg->reuse_keys ? &p->kept : NULL, reuse);
  p->elapsed += now_ns () - t0;
  if (p->calibrating)
    for (unsigned int i = 0; i < p->n_ops; i++)
    {
      next[i] = next_block_size (p->ops[i], ns[i], cfg->min_block_ns,
                                 cfg->max_block_ops);
      grew = grew || (next[i] != p->ops[i]);
    }
  if (grew)
  {
    kind = "calibration";
    index = p->calibration_rounds;
    for (unsigned int i = 0; i < p->n_ops; i++)
      printf ("discard\t%s\t%u\t%s\tcalibration\t%u\t%u\t%" PRIu64 "\n",
              p->scheme, p->bits, p->names[i], p->ops[i], index, ns[i]);
    memcpy (p->ops, next, p->n_ops * sizeof (*p->ops));
    progress (p->label, "calibration round", p->calibration_rounds++, 0,
              max_of (p->ops, p->n_ops));
  }
  else if ((p->warmups < cfg->warmup) && (! p->budget_spent))
  {
    /* Sizes are final from the first repetition in which none grew. */
    p->calibrating = false;
    kind = "warmup";
    index = p->warmups;
    for (unsigned int i = 0; i < p->n_ops; i++)
      printf ("discard\t%s\t%u\t%s\twarmup\t%u\t%u\t%" PRIu64 "\n",
              p->scheme, p->bits, p->names[i], p->ops[i], index, ns[i]);
    progress (p->label, "warmup repetition", p->warmups++, cfg->warmup, 0);
  }
  else
  {
    p->calibrating = false;
    kind = "sample";
    index = p->taken;
    for (unsigned int i = 0; i < p->n_ops; i++)
    {
      /* Key generation (stage 0, and the layer's) has its own count: it
       * may have left. */
      bool keygen = (0 == i) || ((0 != p->taler_keygen)
                                 && (i == p->taler_keygen));

      if (keygen && reuse)
        continue;
      printf ("sample\t%s\t%u\t%s\t%u\t%u\t%" PRIu64 "\n",
              p->scheme, p->bits, p->names[i], p->ops[i],
              keygen ? p->keygen_taken : index, ns[i]);
      /* A zero reading is "faster than the clock can tell", not a time. */
      if (0 == ns[i])
        verdict_fail (&p->v,
                      "%s block of %u ops measured 0 ns (below clock"
                      " resolution); raise --iterations or --min-block-ns",
                      p->names[i], p->ops[i]);
    }
    if (! reuse)
      p->keygen_taken++;
    progress (p->label, "repetition", p->taken++, cfg->repetitions, 0);
  }
  p->budget_spent = (0 != cfg->max_time_ns)
                    && (p->elapsed >= cfg->max_time_ns);
  if (cfg->interactive)
  {
    snprintf (line, sizeof (line), "ask\t%s\t%u\t%s\t%u", p->scheme, p->bits,
              kind, index);
    converse (line, answer, sizeof (answer));
    p->skip_keygen = (0 == strcmp (answer, "more nokeygen"));
    if (p->skip_keygen
        && ((! cfg->reuse_keys) || (0 != strcmp (kind, "sample"))))
    {
      fprintf (stderr, "blindsig: --interactive: 'more nokeygen' needs"
               " --reuse-keys and comes only after a sample repetition\n");
      exit (EXIT_INTERNAL);
    }
    if ((! p->skip_keygen) && (0 != strcmp (answer, "more"))
        && (0 != strcmp (answer, "stop")))
    {
      fprintf (stderr, "blindsig: --interactive: expected 'more', 'more"
               " nokeygen' or 'stop', got '%s'\n", answer);
      exit (EXIT_INTERNAL);
    }
  }
  else
    fflush (stdout);
  /* Once invalid, further blocks cannot make the rows printable, and
   * RSA-4096 key generation is too slow to repeat for nothing: a failed
   * check ends the pair after the repetition it happened in. */
  if (p->v.failed)
  {
    p->finished = true;
    p->stop = "invalid";
  }
  else if ((0 == strcmp (kind, "sample")) && (0 == strcmp (answer, "stop")))
  {
    p->finished = true;
    p->stop = "target";
  }
  /* Calibration always completes: timed blocks need their final size. */
  else if ((! p->calibrating)
           && should_stop_repetitions (p->taken, cfg->repetitions, p->elapsed,
                                       cfg->max_time_ns))
  {
    p->finished = true;
    p->stop = (p->taken < cfg->repetitions) ? "budget" : "repetitions";
  }
}



/**
 * Close pair @a p: its "done" line (with the stop reason) and any
 * "invalid" line.
 */
static void
pair_finish (struct Pair *p, const struct Config *cfg)
{
  bool budget = (0 == strcmp (p->stop, "budget"));

  blindsig_kept_keys_free (&p->kept);
  if (show_progress && budget)
    fprintf (stderr, "blindsig: %s: budget of %.3f s spent after %u of %u"
             " repetitions\n", p->label, (double) cfg->max_time_ns / 1e9,
             p->taken, cfg->repetitions);
  printf ("done\t%s\t%u\t%u\t%d\t%" PRIu64 "\t%s\n", p->scheme, p->bits,
          p->taken, budget ? 1 : 0, p->elapsed, p->stop);
  if (p->v.failed)
    printf ("invalid\t%s\t%u\t%s\n", p->scheme, p->bits, p->v.reason);
  fflush (stdout);
}



/**
 * splitmix64 (Steele, Lea, Flood 2014): the order of pairs in each round
 * of --order interleaved, reproducible from the seed printed in meta.
 */
static uint64_t
splitmix64 (uint64_t *state)
{
  uint64_t z = (*state += UINT64_C (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 30)) * UINT64_C (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C (0x94D049BB133111EB);
  return z ^ (z >> 31);
}



/**
 * Measure every pair.  Sequential: each pair to its end, in the order
 * given.  Interleaved: in rounds, each unfinished pair takes one
 * repetition per round, in an order shuffled per round (Fisher-Yates with
 * splitmix64 from cfg->seed), so that a slow minute of the machine is
 * spread over all pairs instead of landing on one.
 */
static void
run_pair_list (struct Pair *pairs, unsigned int n, const struct Config *cfg)
{
  unsigned int order[1 + MAX_RSA_SIZES];
  uint64_t state = cfg->seed;
  unsigned int left = n;

  if (! cfg->interleave)
  {
    for (unsigned int k = 0; k < n; k++)
    {
      while (! pairs[k].finished)
        pair_step (&pairs[k], cfg);
      pair_finish (&pairs[k], cfg);
    }
    return;
  }
  while (left > 0)
  {
    unsigned int m = 0;

    for (unsigned int k = 0; k < n; k++)
      if (! pairs[k].finished)
        order[m++] = k;
    for (unsigned int k = m; k > 1; k--)
    {
      unsigned int j = (unsigned int) (splitmix64 (&state) % k);
      unsigned int tmp = order[k - 1];

      order[k - 1] = order[j];
      order[j] = tmp;
    }
    for (unsigned int k = 0; k < m; k++)
    {
      struct Pair *p = &pairs[order[k]];

      pair_step (p, cfg);
      if (p->finished)
      {
        pair_finish (p, cfg);
        left--;
      }
    }
  }
}


void
run_pairs (const struct Config *cfg, bool run_cs,
           const unsigned int *rsa_sizes, unsigned int rsa_count)
{
  struct Pair pairs[1 + MAX_RSA_SIZES];
  unsigned int n_pairs = 0;

  if (run_cs)
    pair_init (&pairs[n_pairs++], "CS", 0, cfg);
  for (unsigned int k = 0; k < rsa_count; k++)
    pair_init (&pairs[n_pairs++], "RSA", rsa_sizes[k], cfg);
  run_pair_list (pairs, n_pairs, cfg);
}
