// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pftag-cache: a QEMU TCG plugin (API version 1, QEMU 7.2) that counts,
 * per vCPU and only inside windows the guest marks, the instructions
 * executed, the memory loads and stores, and the misses of a modelled
 * two-level data cache.
 *
 * Build: scripts/qemu-plugin.sh (build/plugin/libpftag-cache.so).
 * Use:   qemu-system-x86_64 -accel tcg \
 *            -plugin build/plugin/libpftag-cache.so[,out=PATH][,l1=S/W/L][,l2=S/W/L][,warm=on][,prof=PATH]
 *        or scripts/boot.sh -p 'out=PATH' (tests/boot/cache-plugin.sh is
 *        the check, bench/plugin/marker-loop.c an example guest program).
 *
 * Window markers are x86 instructions a real CPU runs as NOPs:
 *     0f 1f 80 53 54 46 50    nopl 0x50465453(%rax)   "PFTS": start
 *     0f 1f 80 45 54 46 50    nopl 0x50465445(%rax)   "PFTE": end
 * In C, user or kernel code alike:
 *     asm volatile(".byte 0x0f,0x1f,0x80; .long 0x50465453" ::: "memory");
 * A start opens a window on the vCPU that runs it (a second start
 * restarts it); an end on that vCPU closes it and appends, flushed at
 * once, to out=PATH (opened for appending; default: QEMU's stderr):
 *     pftag-cache: window=N vcpu=V insns=I loads=L stores=S l1_misses=M1 l2_misses=M2
 * N numbers the windows in the order they end, over all vCPUs, from 1.
 * An end on a vCPU without an open window is ignored. At load, one line
 * describes the model:
 *     pftag-cache: model l1=32768/8/64 l2=1048576/16/64 lru
 *
 * What is counted, between the two markers (neither marker counts):
 *  - insns: every guest instruction the vCPU executes, whatever it runs:
 *    interrupt handlers and other tasks that get the vCPU in the window
 *    count too (keep windows short, pin the measured task to one CPU;
 *    -icount makes the timer interrupts in a window few and steady). An
 *    instruction that faults (a page fault, say) and is run again after
 *    the handler counts twice: its callback runs before it executes.
 *  - loads, stores: every memory access TCG makes on the guest's behalf,
 *    one per access. That is not one per instruction: QEMU 7.2 splits a
 *    16-byte SSE access into two 8-byte ones, push, call, ret
 *    and string instructions make their own accesses, and a locked
 *    read-modify-write is one access reported as a store under MTTCG
 *    (more than one vCPU) but a load and a store otherwise. Page-table
 *    walks are not guest accesses and are not seen.
 *  - l1_misses, l2_misses: the misses of a data cache model fed with
 *    the virtual address of each access (instruction fetches are not
 *    modelled): L1 32 KiB 8-way and L2 1 MiB 16-way, 64-byte lines, LRU
 *    in each set, write-allocate (a store fills like a load), L2 looked
 *    up only on an L1 miss, non-inclusive (an L1 fill fills L2 when L2
 *    misses too; an L2 eviction leaves L1 alone), no write-back traffic,
 *    no prefetching. An access that spans two lines looks up both. The
 *    model is indexed by virtual address: aliases of one physical line
 *    are different lines, and the address spaces of different processes
 *    mix. One model per vCPU, made at its first window and never reset:
 *    the counters are reset at each start, the cache state is not.
 *    By default the model sees only the accesses inside windows (outside
 *    them it stands still), so a working set's first window pays its
 *    compulsory misses (one per line) and later windows over the same
 *    data find it warm; a warm-up loop outside the window warms it only
 *    with warm=on.
 *
 * Arguments (comma-separated after the .so):
 *   out=PATH          where the lines go (appended; default stderr)
 *   l1=SIZE/WAYS/LINE, l2=SIZE/WAYS/LINE
 *                     a level's geometry, SIZE in bytes with an optional K
 *                     or M suffix, every figure a power of two and SIZE at
 *                     least WAYS * LINE (lines of the two levels may
 *                     differ: an L1 miss looks up the L2 lines of the
 *                     accessed bytes)
 *   warm=on           feed the model with every access of every vCPU,
 *                     also outside windows (counted only inside): a
 *                     warm-up before a window then warms it, as a real
 *                     cache; costs a model lookup per access everywhere.
 *                     The model line then ends in " warm".
 *   prof=PATH         also count, in each window, the instructions the
 *                     window's vCPU executes at each instruction address
 *                     (guest virtual address: the address spaces of
 *                     processes mix, as in the cache model), and at the
 *                     window's end append to PATH (opened for appending,
 *                     flushed at each window's end), in ascending order of
 *                     address, one line for each address run in the window:
 *                         window=N pc=0xADDR count=C
 *                     N is the window's number in the out= line; the
 *                     counts are reset at each start and sum to its insns
 *                     (what insns counts, e.g. a faulting instruction
 *                     twice, they count too). scripts/prof-report.py sums
 *                     them by kernel function. Costs a hash-table update
 *                     per instruction inside windows; outside, the cost
 *                     is the same as without prof=.
 * A bad argument fails qemu_plugin_install() and so QEMU's start.
 *
 * Cost: every instruction gets a callback and every access another;
 * outside a window each is a test of the vCPU's flag (and, with
 * warm=on, a model lookup per access). QEMU 7.2 has no per-vCPU inline
 * counters and no conditional callbacks, so the calls themselves cannot
 * be avoided outside windows.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MARK_START 0x50465453u /* "PFTS" */
#define MARK_END 0x50465445u   /* "PFTE" */
#define MARK_LEN 7

struct geometry {
	uint64_t size;
	uint32_t ways, line;
};

/*
 * One level of the cache: sets of ways, each set's tags kept in the order
 * of their last use, the most recent first, so that a hit moves its tag
 * to the front and a miss drops the last (least recently used) one.
 */
struct level {
	unsigned int line_shift;
	uint32_t ways;
	uint64_t set_mask;
	uint64_t *tag; /* line address, or EMPTY */
};
#define EMPTY UINT64_MAX

/*
 * prof=: a vCPU's instruction counts by address in its window, an open
 * addressing hash table (linear probing) that doubles at half full.
 */
struct prof_slot {
	uint64_t pc, count; /* count 0: the slot is free */
};
struct prof_table {
	struct prof_slot *slot;
	uint64_t mask, used;
};

struct vcpu {
	/* Touched by this vCPU's thread only. */
	bool in_window;
	uint64_t insns, loads, stores, l1_misses, l2_misses;
	struct level l1, l2;
	struct prof_table prof;
} __attribute__((aligned(64)));

static struct geometry geo[2] = {
	{ 32 * 1024, 8, 64 },
	{ 1024 * 1024, 16, 64 },
};
static struct vcpu *vcpus;
static unsigned int n_vcpus;
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t windows; /* under out_lock */
static bool warm; /* feed the model outside windows too */
static bool prof; /* prof= given */
static FILE *prof_out; /* prof=PATH, NULL after the exit; under out_lock */

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static unsigned int log2u(uint64_t v)
{
	return 63 - __builtin_clzll(v);
}

static int level_init(struct level *l, const struct geometry *g)
{
	uint64_t lines = g->size / g->line, i;

	l->line_shift = log2u(g->line);
	l->ways = g->ways;
	l->set_mask = lines / g->ways - 1;
	l->tag = malloc(lines * sizeof(*l->tag));
	if (!l->tag)
		return -1;
	for (i = 0; i < lines; i++)
		l->tag[i] = EMPTY;
	return 0;
}

/* Look line address LA up; on a miss, put it in place of the LRU way. */
static bool level_access(struct level *l, uint64_t la)
{
	uint64_t *tag = l->tag + (la & l->set_mask) * l->ways, prev = la, t;
	uint32_t w;

	/* Shift each tag one way back until LA's own way (a hit) or the
	 * end (a miss: the last, least recently used, tag falls off). */
	for (w = 0; w < l->ways; w++) {
		t = tag[w];
		tag[w] = prev;
		if (t == la)
			return true;
		prev = t;
	}
	return false;
}

static void cache_access(struct vcpu *v, uint64_t addr, uint64_t size)
{
	uint64_t end = addr + size - 1, la, from, to, l2a;

	for (la = addr >> v->l1.line_shift; la <= end >> v->l1.line_shift; la++) {
		if (level_access(&v->l1, la))
			continue;
		v->l1_misses++;
		/* The L2 lines of the accessed bytes in this L1 line. */
		from = la << v->l1.line_shift;
		to = from + (1ull << v->l1.line_shift) - 1;
		if (from < addr)
			from = addr;
		if (to > end)
			to = end;
		for (l2a = from >> v->l2.line_shift; l2a <= to >> v->l2.line_shift; l2a++)
			if (!level_access(&v->l2, l2a))
				v->l2_misses++;
	}
}

static struct vcpu *vcpu_of(unsigned int idx)
{
	return idx < n_vcpus ? &vcpus[idx] : NULL;
}

static void on_insn(unsigned int idx, void *udata)
{
	struct vcpu *v = vcpu_of(idx);

	if (v && v->in_window)
		v->insns++;
}

#define PROF_MIN_SLOTS 4096

static void prof_alloc(struct prof_table *t, uint64_t slots, unsigned int idx)
{
	t->slot = calloc(slots, sizeof(*t->slot));
	if (!t->slot) {
		fprintf(stderr, "pftag-cache: error: out of memory for the prof= table of vCPU %u\n", idx);
		exit(1);
	}
	t->mask = slots - 1;
	t->used = 0;
}

static inline uint64_t prof_hash(uint64_t pc)
{
	return (pc * 0x9e3779b97f4a7c15ull) >> 20;
}

static void prof_grow(struct prof_table *t, unsigned int idx)
{
	struct prof_slot *old = t->slot;
	uint64_t n = t->mask + 1, used = t->used, i, h;

	prof_alloc(t, 2 * n, idx);
	for (i = 0; i < n; i++) {
		if (!old[i].count)
			continue;
		for (h = prof_hash(old[i].pc) & t->mask; t->slot[h].count; h = (h + 1) & t->mask)
			;
		t->slot[h] = old[i];
	}
	t->used = used;
	free(old);
}

static inline void prof_count(struct vcpu *v, unsigned int idx, uint64_t pc)
{
	struct prof_table *t = &v->prof;
	uint64_t h;

	for (h = prof_hash(pc) & t->mask; t->slot[h].count; h = (h + 1) & t->mask) {
		if (t->slot[h].pc == pc) {
			t->slot[h].count++;
			return;
		}
	}
	t->slot[h].pc = pc;
	t->slot[h].count = 1;
	if (++t->used * 2 > t->mask + 1)
		prof_grow(t, idx);
}

/* prof=: on_insn's twin, with the instruction's address as udata. */
static void on_insn_prof(unsigned int idx, void *udata)
{
	struct vcpu *v = vcpu_of(idx);

	if (v && v->in_window) {
		v->insns++;
		prof_count(v, idx, (uint64_t)(uintptr_t)udata);
	}
}

static int prof_cmp(const void *a, const void *b)
{
	const struct prof_slot *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Append window N's counts of V to prof_out, under out_lock. */
static void prof_write(struct vcpu *v, uint64_t n)
{
	struct prof_table *t = &v->prof;
	uint64_t i, k = 0;

	/* Pack the used slots to the front, sort them, print them; the
	 * table is cleared at the next start anyway. */
	for (i = 0; i <= t->mask; i++)
		if (t->slot[i].count)
			t->slot[k++] = t->slot[i];
	qsort(t->slot, k, sizeof(*t->slot), prof_cmp);
	for (i = 0; i < k; i++)
		fprintf(prof_out, "window=%" PRIu64 " pc=0x%" PRIx64 " count=%" PRIu64 "\n",
			n, t->slot[i].pc, t->slot[i].count);
	fflush(prof_out);
	memset(t->slot, 0, (t->mask + 1) * sizeof(*t->slot));
	t->used = 0;
}

/* The model of a vCPU is made when it is first fed. */
static void model_init(struct vcpu *v, unsigned int idx)
{
	if (level_init(&v->l1, &geo[0]) || level_init(&v->l2, &geo[1])) {
		fprintf(stderr, "pftag-cache: error: out of memory for the cache model of vCPU %u\n", idx);
		exit(1);
	}
}

static void on_mem(unsigned int idx, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct vcpu *v = vcpu_of(idx);

	if (!v)
		return;
	if (!v->in_window) {
		if (!warm)
			return;
		/* Fed, not counted: the counters are reset at a start. */
		if (!v->l1.tag)
			model_init(v, idx);
		cache_access(v, vaddr, 1ull << qemu_plugin_mem_size_shift(info));
		return;
	}
	if (qemu_plugin_mem_is_store(info))
		v->stores++;
	else
		v->loads++;
	cache_access(v, vaddr, 1ull << qemu_plugin_mem_size_shift(info));
}

static void on_start(unsigned int idx, void *udata)
{
	struct vcpu *v = vcpu_of(idx);

	if (!v)
		return;
	if (!v->l1.tag)
		model_init(v, idx);
	v->insns = v->loads = v->stores = v->l1_misses = v->l2_misses = 0;
	if (prof) {
		if (!v->prof.slot)
			prof_alloc(&v->prof, PROF_MIN_SLOTS, idx);
		else if (v->prof.used) /* a restart: the end did not clear it */
			memset(v->prof.slot, 0, (v->prof.mask + 1) * sizeof(*v->prof.slot));
		v->prof.used = 0;
	}
	v->in_window = true;
}

static void on_end(unsigned int idx, void *udata)
{
	struct vcpu *v = vcpu_of(idx);

	if (!v || !v->in_window)
		return;
	v->in_window = false;
	pthread_mutex_lock(&out_lock);
	if (!out) { /* after the exit callback */
		pthread_mutex_unlock(&out_lock);
		return;
	}
	fprintf(out, "pftag-cache: window=%" PRIu64 " vcpu=%u insns=%" PRIu64 " loads=%" PRIu64
		" stores=%" PRIu64 " l1_misses=%" PRIu64 " l2_misses=%" PRIu64 "\n",
		++windows, idx, v->insns, v->loads, v->stores, v->l1_misses, v->l2_misses);
	fflush(out);
	if (prof_out)
		prof_write(v, windows);
	pthread_mutex_unlock(&out_lock);
}

static uint32_t marker(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);

	if (qemu_plugin_insn_size(insn) != MARK_LEN || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	return b[3] | b[4] << 8 | b[5] << 16 | (uint32_t)b[6] << 24;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		switch (marker(insn)) {
		case MARK_START:
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_start, QEMU_PLUGIN_CB_NO_REGS, NULL);
			break;
		case MARK_END:
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
			break;
		default:
			if (prof)
				qemu_plugin_register_vcpu_insn_exec_cb(
					insn, on_insn_prof, QEMU_PLUGIN_CB_NO_REGS,
					(void *)(uintptr_t)qemu_plugin_insn_vaddr(insn));
			else
				qemu_plugin_register_vcpu_insn_exec_cb(insn, on_insn, QEMU_PLUGIN_CB_NO_REGS,
								       NULL);
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, NULL);
		}
	}
}

static void plugin_exit(qemu_plugin_id_t id, void *udata)
{
	pthread_mutex_lock(&out_lock);
	if (out && out != stderr)
		fclose(out);
	out = NULL;
	if (prof_out)
		fclose(prof_out);
	prof_out = NULL;
	pthread_mutex_unlock(&out_lock);
}

/* "SIZE/WAYS/LINE", SIZE with an optional K or M. */
static int parse_geometry(const char *name, const char *s, struct geometry *g)
{
	unsigned long long size, ways, line;
	char *e;

	errno = 0;
	size = strtoull(s, &e, 10);
	if (*e == 'K' || *e == 'k')
		size <<= 10, e++;
	else if (*e == 'M' || *e == 'm')
		size <<= 20, e++;
	if (e == s || *e != '/' || errno)
		goto bad;
	s = e + 1;
	ways = strtoull(s, &e, 10);
	if (e == s || *e != '/' || errno)
		goto bad;
	s = e + 1;
	line = strtoull(s, &e, 10);
	if (e == s || *e || errno)
		goto bad;
	if (!pow2(size) || !pow2(ways) || !pow2(line) || ways > 1024 || line > 4096 ||
	    size < ways * line || size > (1ull << 32)) {
		fprintf(stderr, "pftag-cache: error: %s=%llu/%llu/%llu: size, ways and line must be "
			"powers of two, size >= ways * line, ways <= 1024, line <= 4096, size <= 4G\n",
			name, size, ways, line);
		return -1;
	}
	g->size = size;
	g->ways = ways;
	g->line = line;
	return 0;
bad:
	fprintf(stderr, "pftag-cache: error: %s= wants SIZE/WAYS/LINE, e.g. %s=32768/8/64\n", name, name);
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL, *prof_path = NULL;
	int n;

	for (n = 0; n < argc; n++) {
		char *a = argv[n];

		if (!strncmp(a, "out=", 4) && a[4]) {
			path = a + 4;
		} else if (!strncmp(a, "prof=", 5) && a[5]) {
			prof_path = a + 5;
		} else if (!strncmp(a, "l1=", 3)) {
			if (parse_geometry("l1", a + 3, &geo[0]))
				return -1;
		} else if (!strncmp(a, "l2=", 3)) {
			if (parse_geometry("l2", a + 3, &geo[1]))
				return -1;
		} else if (!strncmp(a, "warm=", 5)) {
			if (!qemu_plugin_bool_parse("warm", a + 5, &warm)) {
				fprintf(stderr, "pftag-cache: error: warm= wants on or off, not '%s'\n", a + 5);
				return -1;
			}
		} else {
			fprintf(stderr, "pftag-cache: error: unknown argument '%s' (known: out=PATH, "
				"l1=SIZE/WAYS/LINE, l2=SIZE/WAYS/LINE, warm=on|off, prof=PATH)\n", a);
			return -1;
		}
	}

	n_vcpus = info->system_emulation ? info->system.max_vcpus : 0;
	if (!info->system_emulation || n_vcpus < 1) {
		/* User mode: one vCPU a guest thread, their number unknown. */
		n_vcpus = 256;
	}
	vcpus = aligned_alloc(64, n_vcpus * sizeof(*vcpus));
	if (!vcpus) {
		fprintf(stderr, "pftag-cache: error: out of memory\n");
		return -1;
	}
	memset(vcpus, 0, n_vcpus * sizeof(*vcpus));

	out = stderr;
	if (path) {
		out = fopen(path, "a");
		if (!out) {
			fprintf(stderr, "pftag-cache: error: cannot open out=%s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	if (prof_path) {
		prof_out = fopen(prof_path, "a");
		if (!prof_out) {
			fprintf(stderr, "pftag-cache: error: cannot open prof=%s: %s\n", prof_path,
				strerror(errno));
			if (out != stderr)
				fclose(out);
			out = NULL;
			return -1;
		}
		prof = true;
	}
	fprintf(out, "pftag-cache: model l1=%" PRIu64 "/%u/%u l2=%" PRIu64 "/%u/%u lru%s\n",
		geo[0].size, geo[0].ways, geo[0].line, geo[1].size, geo[1].ways, geo[1].line,
		warm ? " warm" : "");
	fflush(out);

	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
