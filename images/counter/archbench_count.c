/*
 * archbench_count -- QEMU TCG plugin: guest instructions per marked block.
 *
 * The guest marks the start and end of every block with a harmless syscall
 * (getpid) carrying a magic first argument (see
 * harness/drivers/counting/count_marker.h):
 *
 *   getpid (ABC_MAGIC, ABC_START, seq)   ...   getpid (ABC_MAGIC, ABC_STOP, seq)
 *
 * The kernel ignores the extra arguments.  This plugin counts executed guest
 * instructions per vCPU (an inline add of each translation block's length
 * when the block starts executing, so nothing calls back per instruction)
 * and writes one line per closed block to the file named by its argument:
 *
 *   archbench-count  <plugin version>  <plugin API version>  <target>   first
 *   base             <guest_base, hex>                                  once (API 1)
 *   map              <lo> <hi> <perms> <offset> <path>  (hex; host /proc/self/maps,
 *                    file-backed mappings, read at the first START marker)
 *   tb               <seq> <block start vaddr, hex> <instructions>      per block (API 1)
 *   block            <seq>             <instructions>                   per block
 *   error            <text>                                             misuse
 *
 * Process mode (argument process=on, plugin version 3): no markers; the whole
 * process is counted, per vCPU (in qemu-user one vCPU per guest thread; index
 * 0 is the main thread, indices of threads that ended are reused by later
 * ones), for programs archbench does not own (Taler's security modules). Each
 * translation block calls back when it executes (no inline add: API 1 has no
 * per-vCPU inline counter, and a global one loses adds between threads that
 * run at once), adding its length to its vCPU's counter and, atomically, one
 * to its own execution count. At exit (after the maps lines, as above):
 *
 *   vcpu             <index> <instructions>                             per vCPU index
 *   exec             <block start vaddr, hex> <executions> <instructions>  per translation
 *   total            <instructions>                                     once, last
 *
 * The harness symbolises the `exec` lines (function entry blocks count the
 * calls of a function: harness/abh/suites/taler_counting.py).
 *
 * Attribution (plugin API 1, QEMU < 9): every translation block also gets its
 * own execution counter (a second inline add), so between START and STOP the
 * instructions of each block start address are known: the `tb` lines of a
 * block, written just before its `block` line, sum exactly to it (both read
 * their counters in the same syscall callbacks). Guest address = host address
 * - guest_base (in qemu-user, haddr - vaddr of any instruction); the harness
 * symbolises with the maps and the ELF symbol tables of the mapped files
 * (harness/abh/suites/count_symbols.py).
 *
 * The count between the two markers covers everything the guest executed
 * after the START syscall instruction, up to and including the STOP one.
 * Load with:  qemu-<arch> -plugin libarchbench_count.so,out=FILE ...
 * Built against the qemu-plugin.h of the QEMU that loads it (images/counter).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <qemu-plugin.h>

#define ABC_PLUGIN_VERSION "3"
#define ABC_MAGIC UINT64_C (0x41424331) /* "ABC1": fits 32-bit guests */
#define ABC_START 1
#define ABC_STOP 2
#define ABC_MAX_VCPUS 64
#define ABC_PROCESS_VCPUS 1024

/* Process mode (process=on): per-vCPU counts of the whole process. */
static int process_mode;
static uint64_t process_insns[ABC_PROCESS_VCPUS];
static uint64_t process_overflow;

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static FILE *out;
static uint64_t start_count[ABC_MAX_VCPUS];
static uint64_t open_seq[ABC_MAX_VCPUS];
static int open_block[ABC_MAX_VCPUS];

#if QEMU_PLUGIN_VERSION < 2
/* One record per translation: executions so far and at the last START. */
struct abc_tb
{
  uint64_t vaddr;
  uint64_t n_insns;
  uint64_t execs;
  uint64_t snap;
};
static GMutex tbs_lock;
static GPtrArray *tbs;
static uint64_t guest_base;
static int have_base;
static int maps_written;

static void
write_maps (void)
{
  FILE *maps = fopen ("/proc/self/maps", "r");
  char line[4096];

  fprintf (out, "base\t%" PRIx64 "\n", guest_base);
  if (NULL == maps)
  {
    fprintf (out, "error\tcannot read /proc/self/maps\n");
    return;
  }
  while (NULL != fgets (line, sizeof line, maps))
  {
    unsigned long lo, hi, off;
    char perms[8];
    int path_at = 0;

    if (4 > sscanf (line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &off,
                    &path_at) || 0 == path_at || '/' != line[path_at])
      continue;
    line[strcspn (line, "\n")] = '\0';
    fprintf (out, "map\t%lx\t%lx\t%s\t%lx\t%s\n", lo, hi, perms, off,
             line + path_at);
  }
  fclose (maps);
}
#endif

#if QEMU_PLUGIN_VERSION >= 2
/* QEMU >= 9.0: per-vCPU scoreboard, inline adds without races. */
static struct qemu_plugin_scoreboard *score;
static qemu_plugin_u64 insns;
#define ABC_READ(vcpu) qemu_plugin_u64_get (insns, (vcpu))
#else
/* QEMU < 9.0: one global counter (the drivers are single-threaded). */
static uint64_t insns;
#define ABC_READ(vcpu) ((void) (vcpu), insns)
#endif

#if QEMU_PLUGIN_VERSION < 2
static void
on_tb_exec (unsigned int vcpu, void *udata)
{
  struct abc_tb *rec = udata;

  /* One thread per vCPU index at a time: its counter has one writer. */
  if (vcpu < ABC_PROCESS_VCPUS)
    process_insns[vcpu] += rec->n_insns;
  else
    __atomic_fetch_add (&process_overflow, rec->n_insns, __ATOMIC_RELAXED);
  __atomic_fetch_add (&rec->execs, 1, __ATOMIC_RELAXED);
}
#endif

static void
on_tb_trans (qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
  (void) id;
#if QEMU_PLUGIN_VERSION >= 2
  qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu (
    tb, QEMU_PLUGIN_INLINE_ADD_U64, insns, qemu_plugin_tb_n_insns (tb));
#else
  if (! process_mode)
    qemu_plugin_register_vcpu_tb_exec_inline (
      tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, qemu_plugin_tb_n_insns (tb));
  {
    struct abc_tb *rec = g_new0 (struct abc_tb, 1);
    struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn (tb, 0);

    rec->vaddr = qemu_plugin_tb_vaddr (tb);
    rec->n_insns = qemu_plugin_tb_n_insns (tb);
    g_mutex_lock (&tbs_lock);
    if (! have_base && NULL != first)
    {
      guest_base = (uint64_t) (uintptr_t) qemu_plugin_insn_haddr (first)
                   - qemu_plugin_insn_vaddr (first);
      have_base = 1;
    }
    g_ptr_array_add (tbs, rec);
    g_mutex_unlock (&tbs_lock);
    if (process_mode)
      qemu_plugin_register_vcpu_tb_exec_cb (tb, on_tb_exec,
                                            QEMU_PLUGIN_CB_NO_REGS, rec);
    else
      qemu_plugin_register_vcpu_tb_exec_inline (
        tb, QEMU_PLUGIN_INLINE_ADD_U64, &rec->execs, 1);
  }
#endif
}

static void
on_syscall (qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
            uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
            uint64_t a7, uint64_t a8)
{
  (void) id; (void) num; (void) a4; (void) a5; (void) a6; (void) a7; (void) a8;
  if ((a1 & UINT64_C (0xffffffff)) != ABC_MAGIC || vcpu >= ABC_MAX_VCPUS)
    return;
  a2 &= UINT64_C (0xffffffff);
  a3 &= UINT64_C (0xffffffff);
  if (a2 == ABC_START)
  {
    if (open_block[vcpu])
      fprintf (out, "error\tblock %" PRIu64 " started inside block %" PRIu64
               "\n", a3, open_seq[vcpu]);
    open_block[vcpu] = 1;
    open_seq[vcpu] = a3;
#if QEMU_PLUGIN_VERSION < 2
    g_mutex_lock (&tbs_lock);
    if (! maps_written)
    {
      write_maps ();
      maps_written = 1;
    }
    for (guint i = 0; i < tbs->len; i++)
    {
      struct abc_tb *rec = g_ptr_array_index (tbs, i);
      rec->snap = rec->execs;
    }
    g_mutex_unlock (&tbs_lock);
#endif
    start_count[vcpu] = ABC_READ (vcpu);
  }
  else if (a2 == ABC_STOP)
  {
    if (! open_block[vcpu] || open_seq[vcpu] != a3)
      fprintf (out, "error\tblock %" PRIu64 " stopped but not started\n", a3);
    else
    {
      uint64_t total = ABC_READ (vcpu) - start_count[vcpu];
#if QEMU_PLUGIN_VERSION < 2
      g_mutex_lock (&tbs_lock);
      for (guint i = 0; i < tbs->len; i++)
      {
        struct abc_tb *rec = g_ptr_array_index (tbs, i);
        if (rec->execs != rec->snap)
          fprintf (out, "tb\t%" PRIu64 "\t%" PRIx64 "\t%" PRIu64 "\n", a3,
                   rec->vaddr, (rec->execs - rec->snap) * rec->n_insns);
        rec->snap = rec->execs;
      }
      g_mutex_unlock (&tbs_lock);
#endif
      fprintf (out, "block\t%" PRIu64 "\t%" PRIu64 "\n", a3, total);
    }
    open_block[vcpu] = 0;
    fflush (out);
  }
}

static void
write_process (void)
{
  uint64_t total = 0;

#if QEMU_PLUGIN_VERSION < 2
  g_mutex_lock (&tbs_lock);
  write_maps ();
  for (unsigned int i = 0; i < ABC_PROCESS_VCPUS; i++)
    if (0 != process_insns[i])
    {
      fprintf (out, "vcpu\t%u\t%" PRIu64 "\n", i, process_insns[i]);
      total += process_insns[i];
    }
  if (0 != process_overflow)
    fprintf (out, "error\tvCPU indices beyond %d executed %" PRIu64
             " instructions\n", ABC_PROCESS_VCPUS, process_overflow);
  for (guint i = 0; i < tbs->len; i++)
  {
    struct abc_tb *rec = g_ptr_array_index (tbs, i);
    if (0 != rec->execs)
      fprintf (out, "exec\t%" PRIx64 "\t%" PRIu64 "\t%" PRIu64 "\n",
               rec->vaddr, rec->execs, rec->execs * rec->n_insns);
  }
  g_mutex_unlock (&tbs_lock);
#else
  (void) process_insns;
  fprintf (out, "error\tprocess mode needs plugin API 1 (QEMU < 9)\n");
#endif
  fprintf (out, "total\t%" PRIu64 "\n", total + process_overflow);
}

static void
on_atexit (qemu_plugin_id_t id, void *p)
{
  (void) id; (void) p;
  if (process_mode)
    write_process ();
  fclose (out);
}

QEMU_PLUGIN_EXPORT int
qemu_plugin_install (qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                     char **argv)
{
  const char *path = NULL;

  for (int i = 0; i < argc; i++)
    if (0 == strncmp (argv[i], "out=", 4))
      path = argv[i] + 4;
    else if (0 == strcmp (argv[i], "process=on"))
      process_mode = 1;
  if (NULL == path || NULL == (out = fopen (path, "w")))
  {
    fprintf (stderr, "archbench_count: need a writable out=FILE argument\n");
    return -1;
  }
  fprintf (out, "archbench-count\t%s\t%d\t%s\n", ABC_PLUGIN_VERSION,
           QEMU_PLUGIN_VERSION, info->target_name);
  fflush (out);
#if QEMU_PLUGIN_VERSION >= 2
  score = qemu_plugin_scoreboard_new (sizeof (uint64_t));
  insns = qemu_plugin_scoreboard_u64 (score);
#else
  tbs = g_ptr_array_new ();
#endif
  qemu_plugin_register_vcpu_tb_trans_cb (id, on_tb_trans);
  if (! process_mode)
    qemu_plugin_register_vcpu_syscall_cb (id, on_syscall);
  qemu_plugin_register_atexit_cb (id, on_atexit, NULL);
  return 0;
}
