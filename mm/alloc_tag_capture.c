// SPDX-License-Identifier: GPL-2.0-only
/*
 * Call chains of chosen allocation tags.
 *
 * /proc/allocinfo counts allocations by call site, and a call site inside a
 * helper (xas_alloc(), kvmalloc_node(), __alloc_skb(), ...) sums every caller
 * of the helper into one line. Capture tells, for the tags an operator
 * chooses, which call chains their calls and bytes come from:
 *
 *   /sys/kernel/debug/alloc_tag/capture/
 *     tags        write to choose: "file:line", "func:NAME" (every tag of the
 *                 function), "module:NAME" (every tag of a loaded module),
 *                 or a tag as /proc/allocinfo writes it; "-" before any of
 *                 them unchooses, "clear" unchooses every tag. Read: the
 *                 chosen tags.
 *     control     write start, stop or reset; read: running or stopped
 *     depth       frames kept of a chain (1 to 32), set while stopped
 *     max_chains  distinct chains kept a tag (1 to 4096), set while stopped
 *     chains      every chosen tag's counters, and its chains' calls, bytes
 *                 and frames, innermost first
 *     last_error  why the last write that failed did
 *
 * The contract with the allocation paths:
 *
 * 1. The hook (alloc_tag_capture_hook()) runs where pages and slab objects
 *    are charged to their tag: in any context an allocation runs in, with
 *    interrupts off, under the zone lock, in interrupt context. An
 *    allocation in NMI context is counted as unrecorded without a trace:
 *    the stack depot takes its pool lock even when it may not allocate.
 * 2. So the capture path takes no lock and allocates nothing. It saves the
 *    trace in a per-CPU buffer, stores it in the stack depot without
 *    STACK_DEPOT_FLAG_CAN_ALLOC, and counts it in the tag's table of
 *    chains, allocated when the tag was chosen: a slot is claimed with a
 *    compare-and-exchange of its handle, counters are atomic.
 * 3. What cannot be stored is counted, never dropped: "unrecorded" when the
 *    depot has no room or the CPU is capturing already (an interrupt in the
 *    middle of a capture), "overflow" when the table is full. A tag's calls
 *    are the sum of its chains', its overflow and its unrecorded calls.
 * 4. Nothing is kept per allocation: the counters are of allocations made
 *    since capture started, not of live ones, and cost a table a chosen tag
 *    rather than a record an allocation.
 * 5. The capture path runs with preemption disabled, and a table is freed
 *    after an RCU grace period only: a capture in flight on another CPU
 *    never sees its table go, whether the tag was unchosen, its module
 *    unloaded or its counters reset.
 * 6. The depot gets room back in process context: a trace it could not
 *    store is handed over (irq_work, then a work item) to be stored with
 *    STACK_DEPOT_FLAG_CAN_ALLOC, which also gives the depot a pool in
 *    reserve; start does the same with a record of its own.
 */

#include <linux/alloc_tag.h>
#include <linux/alloc_tag_capture.h>
#include <linux/alloc_tag_idx.h>
#include <linux/debugfs.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/seq_buf.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/stackdepot.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

/* Tags that can be chosen at once. */
#define CAPTURE_MAX_TAGS	64
/* Frames a chain keeps: the default and the limit. */
#define CAPTURE_DEPTH		16
#define CAPTURE_DEPTH_MAX	32
/* Frames taken of a trace: the chain and the allocator's frames below it. */
#define CAPTURE_TRACE_MAX	64
/* Distinct chains a tag keeps: the default and the limit. */
#define CAPTURE_CHAINS		64
#define CAPTURE_CHAINS_MAX	4096
/* Address ranges of the functions a tag's call site may be in. */
#define CAPTURE_FN_RANGES	4

struct capture_range {
	unsigned long start;
	unsigned long end;
};

/* A distinct call chain of a chosen tag: its depot handle, 0 if free. */
struct capture_chain {
	depot_stack_handle_t handle;
	atomic_long_t calls;
	atomic_long_t bytes;
};

/* A chosen tag and its table of chains. */
struct capture_tag {
	struct alloc_tag *tag;
	/* where the tag's function is: a chain starts there */
	struct capture_range fn[CAPTURE_FN_RANGES];
	atomic_long_t overflow_calls;
	atomic_long_t overflow_bytes;
	atomic_long_t unrecorded_calls;
	atomic_long_t unrecorded_bytes;
	struct rcu_head rcu;
	unsigned int max_chains;
	struct capture_chain chains[] __counted_by(max_chains);
};

/*
 * The chosen tags, in no order, NULL where free. Changed only with the
 * module list lock held: for reading by a writer that holds capture_lock,
 * for writing by module unload (alloc_tag_capture_module_unload()), which
 * cannot take capture_lock. Read locklessly by the capture path.
 */
static struct capture_tag __rcu *chosen[CAPTURE_MAX_TAGS];
static atomic_t nr_chosen;

/* protects running, depth, max_chains, last_error; orders writers of chosen[] */
static DEFINE_MUTEX(capture_lock);
static bool running;
static unsigned int capture_depth = CAPTURE_DEPTH;
static unsigned int max_chains = CAPTURE_CHAINS;
static char last_error[256];

/* A CPU's trace, and whether the CPU is capturing (interrupts may nest). */
struct capture_cpu {
	unsigned int busy;
	unsigned long trace[CAPTURE_TRACE_MAX];
};

static DEFINE_PER_CPU(struct capture_cpu, capture_cpu);

/*
 * The allocator's entry points, sorted by address: a chain starts past
 * them. Their names end in _noprof (the functions alloc_hooks() wraps),
 * or they are the slab functions slab_alloc_hooks() gives a tag
 * (__kmalloc*_tagged(), kmem_cache_alloc*_tagged()).
 */
static struct capture_range *noprof;
static unsigned int nr_noprof;

/* A trace the depot could not store, handed over to be stored in process context. */
static atomic_t refill_busy;
static unsigned long refill_trace[CAPTURE_TRACE_MAX];
static unsigned int refill_nr;

static void capture_refill_workfn(struct work_struct *work)
{
	stack_depot_save_flags(refill_trace, refill_nr, GFP_KERNEL,
			       STACK_DEPOT_FLAG_CAN_ALLOC);
	/* refill_trace is free again: tests/litmus/capture-refill.litmus. */
	atomic_set_release(&refill_busy, 0);
}

static DECLARE_WORK(capture_refill_work, capture_refill_workfn);

static void capture_refill_irq_workfn(struct irq_work *work)
{
	schedule_work(&capture_refill_work);
}

static DEFINE_IRQ_WORK(capture_refill_irq_work, capture_refill_irq_workfn);

/* Hand @nr frames at @trace over to be stored; one trace at a time. */
static void capture_refill(const unsigned long *trace, unsigned int nr)
{
	if (!nr || atomic_cmpxchg_acquire(&refill_busy, 0, 1))
		return;
	memcpy(refill_trace, trace, nr * sizeof(*trace));
	refill_nr = nr;
	irq_work_queue(&capture_refill_irq_work);
}

static bool in_ranges(const struct capture_range *r, unsigned int nr, unsigned long ip)
{
	unsigned int lo = 0, hi = nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (ip < r[mid].start)
			hi = mid;
		else if (ip >= r[mid].end)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

static bool in_fn(const struct capture_tag *ct, unsigned long ip)
{
	unsigned int i;

	for (i = 0; i < CAPTURE_FN_RANGES && ct->fn[i].end; i++)
		if (ip >= ct->fn[i].start && ip < ct->fn[i].end)
			return true;
	return false;
}

/*
 * Where the chain starts in @trace: at the tag's own function, found past
 * the allocator's entry points, else just past the outermost of these (the
 * function was inlined into its callers, or ended in a tail call of the
 * allocator, as a helper that returns kmalloc()'s result does), else at
 * the start. Frames are return addresses: the call is the byte before.
 */
static unsigned int capture_first_frame(const struct capture_tag *ct,
					const unsigned long *trace, unsigned int nr)
{
	unsigned int i, first = 0;
	bool past_noprof = false;

	for (i = 0; i < nr; i++) {
		unsigned long ip = trace[i] - 1;

		if (in_ranges(noprof, nr_noprof, ip)) {
			past_noprof = true;
			first = i + 1;
		} else if (past_noprof && in_fn(ct, ip)) {
			return i;
		}
	}
	return first < nr ? first : 0;
}

/* Count a call of @bytes in @ct's chain @handle, or as overflow. */
static void capture_count(struct capture_tag *ct, depot_stack_handle_t handle,
			  size_t bytes)
{
	unsigned int n = ct->max_chains, slot = hash_32(handle, 32) % n, i;

	for (i = 0; i < n; i++) {
		struct capture_chain *c = &ct->chains[slot];
		depot_stack_handle_t old = READ_ONCE(c->handle);

		if (!old) {
			old = cmpxchg(&c->handle, 0, handle);
			if (!old)
				old = handle;
		}
		if (old == handle) {
			atomic_long_inc(&c->calls);
			atomic_long_add(bytes, &c->bytes);
			return;
		}
		slot = slot + 1 < n ? slot + 1 : 0;
	}
	atomic_long_inc(&ct->overflow_calls);
	atomic_long_add(bytes, &ct->overflow_bytes);
}

static struct capture_tag *capture_find(struct alloc_tag *tag)
{
	unsigned int i;

	for (i = 0; i < CAPTURE_MAX_TAGS; i++) {
		struct capture_tag *ct = rcu_dereference_sched(chosen[i]);

		if (ct && ct->tag == tag)
			return ct;
	}
	return NULL;
}

/**
 * alloc_tag_capture - record the call chain of an allocation at a chosen tag
 * @tag: the tag the allocation is charged to, chosen for capture
 * @bytes: the allocation's size
 * @ret: returned, for the caller's tail call (alloc_tag_idx_chosen())
 *
 * Context: any, from the allocation hooks; takes no lock, allocates nothing;
 * in NMI context counts the allocation as unrecorded.
 * Return: @ret.
 */
noinline void *__cold alloc_tag_capture(struct alloc_tag *tag, size_t bytes, void *ret)
{
	depot_stack_handle_t handle = 0;
	struct capture_tag *ct;
	unsigned long *trace;
	unsigned int nr, first;

	preempt_disable();
	/*
	 * The mark the hook read, before chosen[]: pairs with smp_wmb() in
	 * capture_marks_update() (tests/litmus/capture-mark+fix.litmus).
	 */
	smp_rmb();
	ct = capture_find(tag);
	if (!ct)
		goto out;
	/* The depot takes a lock: no trace in NMI context (the file's 1.). */
	if (in_nmi())
		goto count_unrecorded;
	if (this_cpu_inc_return(capture_cpu.busy) != 1)
		goto unrecorded;

	trace = this_cpu_ptr(&capture_cpu)->trace;
	nr = stack_trace_save(trace, CAPTURE_TRACE_MAX, 0);
	first = capture_first_frame(ct, trace, nr);
	nr = min(nr - first, READ_ONCE(capture_depth));
	if (nr)
		handle = stack_depot_save_flags(trace + first, nr, GFP_NOWAIT, 0);
	if (!handle) {
		capture_refill(trace + first, nr);
		goto unrecorded;
	}
	capture_count(ct, handle, bytes);
	this_cpu_dec(capture_cpu.busy);
	goto out;
unrecorded:
	this_cpu_dec(capture_cpu.busy);
count_unrecorded:
	atomic_long_inc(&ct->unrecorded_calls);
	atomic_long_add(bytes, &ct->unrecorded_bytes);
out:
	preempt_enable();
	return ret;
}

/* Entry @i of chosen[], which the caller keeps from changing (see chosen[]). */
static struct capture_tag *chosen_entry(unsigned int i)
{
	return rcu_dereference_protected(chosen[i], true);
}

/*
 * Mark @tag's index as chosen (ALLOC_TAG_IDX_CAPTURE), or unmark it. A
 * tag's idx field is written only under the module list lock: by a
 * module's load and unload, and here.
 */
static void capture_mark(struct alloc_tag *tag, bool chosen)
{
	unsigned long idx = READ_ONCE(tag->idx);

	alloc_tag_module_list_assert_held();
	if (chosen)
		idx |= ALLOC_TAG_IDX_CAPTURE;
	else
		idx &= ~ALLOC_TAG_IDX_CAPTURE;
	WRITE_ONCE(tag->idx, idx);
}

/* Drop the chosen entry @i: no new capture finds it, captures in flight keep it. */
static void capture_drop(unsigned int i)
{
	struct capture_tag *ct = chosen_entry(i);

	capture_mark(ct->tag, false);
	RCU_INIT_POINTER(chosen[i], NULL);
	atomic_dec(&nr_chosen);
	/* After a grace period: captures run preempt-off (tests/litmus/capture-drop.litmus). */
	kvfree_rcu(ct, rcu);
}

/**
 * alloc_tag_capture_module_unload - drop the chosen tags of a module
 * @tags: the module's tags
 * @nr: how many
 *
 * Context: module unload, with the module list lock held for writing.
 */
void alloc_tag_capture_module_unload(struct alloc_tag *tags, unsigned long nr)
{
	unsigned int i, dropped = 0;

	alloc_tag_module_list_assert_held();
	for (i = 0; i < CAPTURE_MAX_TAGS; i++) {
		struct capture_tag *ct = chosen_entry(i);

		if (!ct || ct->tag < tags || ct->tag >= tags + nr)
			continue;
		capture_drop(i);
		dropped++;
	}
	if (dropped)
		pr_info("alloc_tag capture: module %s unloaded, its %u chosen tags dropped with their chains\n",
			tags->ct.modname, dropped);
}

/*
 * The chosen tags' marks follow running: the allocation hooks send the
 * allocations of a marked tag to alloc_tag_capture(). Each chosen entry
 * is in chosen[] before its tag is marked, so the capture path finds it.
 */
static void capture_marks_update(void)
{
	unsigned int i;

	lockdep_assert_held(&capture_lock);
	alloc_tag_lock_module_list(true);
	/*
	 * Every chosen[] entry before a mark: pairs with smp_rmb() in
	 * alloc_tag_capture(), as the hook's test of the mark is a control
	 * dependency, which does not order its loads
	 * (tests/litmus/capture-mark.litmus, capture-mark+fix.litmus).
	 */
	smp_wmb();
	for (i = 0; i < CAPTURE_MAX_TAGS; i++) {
		struct capture_tag *ct = chosen_entry(i);

		if (ct)
			capture_mark(ct->tag, running);
	}
	alloc_tag_lock_module_list(false);
}

/* Fail a write: the message says what was wrong and the way out. */
static __printf(2, 3) int capture_fail(int err, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, args);
	va_end(args);
	return err;
}

/* A selection of tags, from a line written to tags. */
struct capture_sel {
	const char *file;
	unsigned int line;
	const char *func;
	const char *module;
};

static bool sel_match(const struct capture_sel *sel, const struct codetag *ct)
{
	if (sel->file && (ct->lineno != sel->line || strcmp(ct->filename, sel->file)))
		return false;
	if (sel->func && strcmp(ct->function, sel->func))
		return false;
	if (sel->module && (!ct->modname || strcmp(ct->modname, sel->module)))
		return false;
	return true;
}

/*
 * Parse @s into @sel: words "file:line", "func:NAME", "module:NAME" or
 * "[NAME]" (a module, as /proc/allocinfo writes it), each at most once.
 */
static int sel_parse(char *s, struct capture_sel *sel)
{
	char *word;

	memset(sel, 0, sizeof(*sel));
	while ((word = strsep(&s, " \t")) != NULL) {
		size_t len = strlen(word);
		char *colon = strrchr(word, ':');

		if (!len)
			continue;
		if (str_has_prefix(word, "func:") && len > 5 && !sel->func) {
			sel->func = word + 5;
		} else if (str_has_prefix(word, "module:") && len > 7 && !sel->module) {
			sel->module = word + 7;
		} else if (word[0] == '[' && word[len - 1] == ']' && len > 2 && !sel->module) {
			word[len - 1] = '\0';
			sel->module = word + 1;
		} else if (colon && colon > word && !sel->file &&
			   !kstrtouint(colon + 1, 10, &sel->line)) {
			*colon = '\0';
			sel->file = word;
		} else {
			return capture_fail(-EINVAL,
					    "'%s': not file:line, func:NAME, module:NAME or [NAME]; write a tag as /proc/allocinfo shows it, or 'clear'",
					    word);
		}
	}
	if (!sel->file && !sel->func && !sel->module)
		return capture_fail(-EINVAL,
				    "empty selection: write file:line, func:NAME or module:NAME");
	return 0;
}

static int sel_not_found(const struct capture_sel *sel)
{
	char what[160];
	struct seq_buf sb;

	if (sel->module && !sel->file && !sel->func)
		return capture_fail(-ENOENT,
				    "module %s has no allocation tags: it is not loaded (see lsmod), or allocates through no tagged call site",
				    sel->module);
	seq_buf_init(&sb, what, sizeof(what));
	if (sel->file)
		seq_buf_printf(&sb, " %s:%u", sel->file, sel->line);
	if (sel->module)
		seq_buf_printf(&sb, " [%s]", sel->module);
	if (sel->func)
		seq_buf_printf(&sb, " func:%s", sel->func);
	return capture_fail(-ENOENT, "no tag%s: /proc/allocinfo lists the tags there are",
			     seq_buf_str(&sb));
}

struct fn_scan {
	struct capture_tag **new;
	unsigned int nr;
	const char *modname;
};

static void fn_add(struct capture_tag *ct, unsigned long addr)
{
	unsigned long size, offset;
	unsigned int i;

	if (!kallsyms_lookup_size_offset(addr, &size, &offset) || offset)
		return;
	for (i = 0; i < CAPTURE_FN_RANGES; i++) {
		if (ct->fn[i].start == addr)
			return;
		if (!ct->fn[i].end) {
			ct->fn[i].start = addr;
			ct->fn[i].end = addr + size;
			return;
		}
	}
}

static bool same_module(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* @name is @fn, or a copy of it the compiler made (fn.constprop.0, ...). */
static bool fn_name_match(const char *name, const char *fn)
{
	size_t len = strlen(fn);

	return !strncmp(name, fn, len) && (name[len] == '\0' || name[len] == '.');
}

static int fn_scan_one(void *data, const char *name, unsigned long addr)
{
	struct fn_scan *scan = data;
	unsigned int i;

	for (i = 0; i < scan->nr; i++) {
		struct capture_tag *ct = scan->new[i];

		if (!same_module(scan->modname, ct->tag->ct.modname))
			continue;
		if (fn_name_match(name, ct->tag->ct.function))
			fn_add(ct, addr);
	}
	return 0;
}

/* Find where the functions of the @nr tags at @new are. */
static void capture_find_fns(struct capture_tag **new, unsigned int nr)
{
	struct fn_scan scan = { .new = new, .nr = nr };
	unsigned int i, j;

	kallsyms_on_each_symbol(fn_scan_one, &scan);
	for (i = 0; i < nr; i++) {
		const char *modname = new[i]->tag->ct.modname;

		if (!modname)
			continue;
		for (j = 0; j < i; j++)
			if (same_module(new[j]->tag->ct.modname, modname))
				break;
		if (j < i)
			continue;
		scan.modname = modname;
		module_kallsyms_on_each_symbol(modname, fn_scan_one, &scan);
	}
}

static bool ends_with(const char *name, const char *suffix)
{
	size_t len = strlen(name), n = strlen(suffix);

	return len > n && !strcmp(name + len - n, suffix);
}

static bool is_alloc_entry(const char *name)
{
	if (ends_with(name, "_noprof"))
		return true;
	return ends_with(name, "_tagged") &&
	       (str_has_prefix(name, "__kmalloc") ||
		str_has_prefix(name, "kmem_cache_alloc"));
}

static int noprof_count(void *data, const char *name, unsigned long addr)
{
	unsigned long size, offset;

	if (!is_alloc_entry(name) || !core_kernel_text(addr) ||
	    !kallsyms_lookup_size_offset(addr, &size, &offset) || offset)
		return 0;
	if (noprof && nr_noprof < *(unsigned int *)data) {
		noprof[nr_noprof].start = addr;
		noprof[nr_noprof].end = addr + size;
	}
	nr_noprof++;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct capture_range *ra = a, *rb = b;

	return ra->start < rb->start ? -1 : ra->start > rb->start;
}

/* Find the allocator's entry points, once. */
static int capture_find_noprof(void)
{
	unsigned int size = 0;

	lockdep_assert_held(&capture_lock);
	if (noprof)
		return 0;
	nr_noprof = 0;
	kallsyms_on_each_symbol(noprof_count, &size);
	size = nr_noprof;
	noprof = kcalloc(max(size, 1U), sizeof(*noprof), GFP_KERNEL);
	if (!noprof)
		return capture_fail(-ENOMEM, "no memory for the allocator's entry points");
	nr_noprof = 0;
	kallsyms_on_each_symbol(noprof_count, &size);
	nr_noprof = min(nr_noprof, size);
	sort(noprof, nr_noprof, sizeof(*noprof), range_cmp, NULL);
	return 0;
}

static struct capture_tag *capture_tag_alloc(struct alloc_tag *tag, unsigned int n)
{
	struct capture_tag *ct = kvzalloc(struct_size(ct, chains, n), GFP_KERNEL);

	if (!ct)
		return NULL;
	ct->tag = tag;
	ct->max_chains = n;
	return ct;
}

static int chosen_index(struct alloc_tag *tag)
{
	unsigned int i;

	for (i = 0; i < CAPTURE_MAX_TAGS; i++) {
		struct capture_tag *ct = chosen_entry(i);

		if (ct && ct->tag == tag)
			return i;
	}
	return -1;
}

/* Choose the tags @sel selects. Context: capture_lock, module list lock held. */
static int capture_choose(const struct capture_sel *sel)
{
	struct capture_tag **new;
	struct codetag_iterator iter = alloc_tag_ct_iter();
	unsigned int nr = 0, matched = 0, over = 0, i, slot = 0;
	struct codetag *ctag;
	int err = 0;

	new = kcalloc(CAPTURE_MAX_TAGS, sizeof(*new), GFP_KERNEL);
	if (!new)
		return capture_fail(-ENOMEM, "no memory to choose tags");
	while ((ctag = codetag_next_ct(&iter))) {
		struct alloc_tag *tag = ct_to_alloc_tag(ctag);

		if (!sel_match(sel, ctag))
			continue;
		matched++;
		if (chosen_index(tag) >= 0)
			continue;
		/* A selection is chosen whole or not at all: count the excess. */
		if (atomic_read(&nr_chosen) + nr >= CAPTURE_MAX_TAGS) {
			over++;
			continue;
		}
		new[nr] = capture_tag_alloc(tag, max_chains);
		if (!new[nr]) {
			err = capture_fail(-ENOMEM, "no memory for a table of %u chains",
					   max_chains);
			goto out;
		}
		nr++;
	}
	if (!matched) {
		err = sel_not_found(sel);
		goto out;
	}
	if (over) {
		err = capture_fail(-ENOSPC,
				   "%d tags chosen and %u more selected: at most %d can be; unchoose some ('-file:line' or 'clear') first",
				   atomic_read(&nr_chosen), nr + over, CAPTURE_MAX_TAGS);
		goto out;
	}
	capture_find_fns(new, nr);
	for (i = 0; i < nr; i++) {
		while (rcu_access_pointer(chosen[slot]))
			slot++;
		rcu_assign_pointer(chosen[slot], new[i]);
		atomic_inc(&nr_chosen);
		new[i] = NULL;
	}
out:
	for (i = 0; i < nr; i++)
		kvfree(new[i]);
	kfree(new);
	return err;
}

/* Unchoose the tags @sel selects. Context: capture_lock, module list lock held. */
static int capture_unchoose(const struct capture_sel *sel)
{
	struct codetag_iterator iter;
	unsigned int i, dropped = 0;

	for (i = 0; i < CAPTURE_MAX_TAGS; i++) {
		struct capture_tag *ct = chosen_entry(i);

		if (ct && (!sel || sel_match(sel, &ct->tag->ct))) {
			capture_drop(i);
			dropped++;
		}
	}
	if (dropped || !sel)
		return 0;
	/* Nothing chosen matched: fine, if some tag does. */
	iter = alloc_tag_ct_iter();
	while (codetag_next_ct(&iter))
		if (sel_match(sel, iter.ct))
			return 0;
	return sel_not_found(sel);
}

static int capture_tags_line(char *line)
{
	struct capture_sel sel;
	bool unchoose = false;
	int err;

	line = strim(line);
	if (!*line)
		return 0;
	if (!strcmp(line, "clear"))
		return capture_unchoose(NULL);
	if (line[0] == '-') {
		unchoose = true;
		line++;
	}
	err = sel_parse(line, &sel);
	if (err)
		return err;
	return unchoose ? capture_unchoose(&sel) : capture_choose(&sel);
}

/*
 * Set the stack depot up and store a record of capture's own: one it has
 * not seen if @reserve (start), so that it keeps a pool in reserve, else
 * always the same one (a choice of tags), which adds nothing after the
 * first. Returns 0, or capture_fail()'s error when the depot keeps no
 * trace: it was disabled at boot (stack_depot_disable=on, which Android's
 * command line has), or it has no memory; stack_depot_init() returns 0 in
 * the first case, so the record tells.
 */
static int capture_depot_ready(bool reserve)
{
	static unsigned long starts;
	unsigned long entries[2] = { (unsigned long)capture_depot_ready,
				     reserve ? ++starts : 0 };

	if (!stack_depot_init() &&
	    stack_depot_save_flags(entries, ARRAY_SIZE(entries), GFP_KERNEL,
				   STACK_DEPOT_FLAG_CAN_ALLOC))
		return 0;
	return capture_fail(-EOPNOTSUPP,
			    "the stack depot keeps no call chain: it is disabled (boot without stack_depot_disable=on) or has no memory (see the boot log)");
}

static ssize_t capture_tags_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	char *buf, *s, *line;
	int err = 0;

	if (count >= PAGE_SIZE)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	mutex_lock(&capture_lock);
	last_error[0] = '\0';
	err = capture_depot_ready(false);
	if (err)
		goto unlock;
	err = capture_find_noprof();
	if (err)
		goto unlock;
	alloc_tag_lock_module_list(true);
	s = buf;
	while (!err && (line = strsep(&s, "\n")))
		err = capture_tags_line(line);
	alloc_tag_lock_module_list(false);
	capture_marks_update();
unlock:
	mutex_unlock(&capture_lock);
	kfree(buf);
	return err ? err : count;
}

static void site_show(struct seq_file *m, struct alloc_tag *tag)
{
	char buf[256];
	struct seq_buf sb;

	seq_buf_init(&sb, buf, sizeof(buf));
	codetag_to_text(&sb, &tag->ct);
	seq_puts(m, seq_buf_str(&sb));
}

static int capture_tags_show(struct seq_file *m, void *v)
{
	unsigned int i;

	mutex_lock(&capture_lock);
	alloc_tag_lock_module_list(true);
	for (i = 0; i < CAPTURE_MAX_TAGS; i++) {
		struct capture_tag *ct = chosen_entry(i);

		if (!ct)
			continue;
		site_show(m, ct->tag);
		seq_putc(m, '\n');
	}
	alloc_tag_lock_module_list(false);
	mutex_unlock(&capture_lock);
	return 0;
}

DEFINE_SHOW_STORE_ATTRIBUTE(capture_tags);

/*
 * Replace every chosen tag's table by an empty one of @n chains. Captures
 * in flight count in the old table, which is freed after them.
 */
static int capture_reset(unsigned int n)
{
	unsigned int i;
	int err = 0;

	alloc_tag_lock_module_list(true);
	for (i = 0; i < CAPTURE_MAX_TAGS; i++) {
		struct capture_tag *old = chosen_entry(i), *ct;

		if (!old)
			continue;
		ct = capture_tag_alloc(old->tag, n);
		if (!ct) {
			err = capture_fail(-ENOMEM,
					   "no memory for a table of %u chains: some tags keep their chains",
					   n);
			break;
		}
		memcpy(ct->fn, old->fn, sizeof(ct->fn));
		rcu_assign_pointer(chosen[i], ct);
		kvfree_rcu(old, rcu);
	}
	alloc_tag_lock_module_list(false);
	return err;
}

static ssize_t capture_control_write(struct file *file, const char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	char *buf, *cmd;
	int err = 0;

	if (count >= PAGE_SIZE)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	cmd = strim(buf);

	mutex_lock(&capture_lock);
	last_error[0] = '\0';
	if (!strcmp(cmd, "start")) {
		if (!mem_alloc_profiling_enabled()) {
			err = capture_fail(-EPERM,
					   "memory allocation profiling is off: switch it on first (sysctl vm.mem_profiling=1)");
		} else {
			err = capture_depot_ready(true);
			running = !err;
		}
	} else if (!strcmp(cmd, "stop")) {
		running = false;
	} else if (!strcmp(cmd, "reset")) {
		err = capture_reset(max_chains);
	} else {
		err = capture_fail(-EINVAL, "'%s': write start, stop or reset", cmd);
	}
	capture_marks_update();
	mutex_unlock(&capture_lock);
	kfree(buf);
	return err ? err : count;
}

static int capture_control_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n", READ_ONCE(running) ? "running" : "stopped");
	return 0;
}

DEFINE_SHOW_STORE_ATTRIBUTE(capture_control);

/* depth and max_chains: a number in a range, set while stopped. */
static ssize_t capture_param_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	unsigned int *param = file_inode(file)->i_private;
	bool is_depth = param == &capture_depth;
	unsigned int limit = is_depth ? CAPTURE_DEPTH_MAX : CAPTURE_CHAINS_MAX;
	const char *name = is_depth ? "depth" : "max_chains";
	unsigned int val;
	int err;

	err = kstrtouint_from_user(ubuf, count, 10, &val);
	mutex_lock(&capture_lock);
	last_error[0] = '\0';
	if (err || !val || val > limit) {
		err = capture_fail(-EINVAL, "%s: a number from 1 to %u", name, limit);
	} else if (running) {
		err = capture_fail(-EBUSY,
				   "%s cannot change while capture runs: write stop to control first",
				   name);
	} else if (val != *param) {
		if (!is_depth)
			err = capture_reset(val);
		if (!err)
			WRITE_ONCE(*param, val);
	}
	mutex_unlock(&capture_lock);
	return err ? err : count;
}

static int capture_param_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%u\n", READ_ONCE(*(unsigned int *)m->private));
	return 0;
}

DEFINE_SHOW_STORE_ATTRIBUTE(capture_param);

struct chain_copy {
	depot_stack_handle_t handle;
	unsigned long calls;
	unsigned long bytes;
};

/* Most calls first; the same calls by handle, for a stable order. */
static int chain_cmp(const void *a, const void *b)
{
	const struct chain_copy *ca = a, *cb = b;

	if (ca->calls != cb->calls)
		return ca->calls < cb->calls ? 1 : -1;
	return ca->handle < cb->handle ? -1 : ca->handle > cb->handle;
}

static void capture_tag_show(struct seq_file *m, unsigned int n,
			     struct capture_tag *ct, struct chain_copy *copy)
{
	unsigned long calls = 0, bytes = 0, oc, ob, uc, ub;
	unsigned int i, k = 0;

	for (i = 0; i < ct->max_chains; i++) {
		struct capture_chain *c = &ct->chains[i];

		copy[k].handle = READ_ONCE(c->handle);
		copy[k].calls = atomic_long_read(&c->calls);
		copy[k].bytes = atomic_long_read(&c->bytes);
		if (!copy[k].handle || !copy[k].calls)
			continue;
		calls += copy[k].calls;
		bytes += copy[k].bytes;
		k++;
	}
	sort(copy, k, sizeof(*copy), chain_cmp, NULL);
	oc = atomic_long_read(&ct->overflow_calls);
	ob = atomic_long_read(&ct->overflow_bytes);
	uc = atomic_long_read(&ct->unrecorded_calls);
	ub = atomic_long_read(&ct->unrecorded_bytes);
	seq_printf(m, "tag %u state %s calls %lu bytes %lu chains %u overflow_calls %lu overflow_bytes %lu unrecorded_calls %lu unrecorded_bytes %lu site ",
		   n, running ? "running" : "stopped", calls + oc + uc,
		   bytes + ob + ub, k, oc, ob, uc, ub);
	site_show(m, ct->tag);
	seq_putc(m, '\n');

	for (i = 0; i < k; i++) {
		unsigned long *entries;
		unsigned int nr, j;

		seq_printf(m, "chain %u %u calls %lu bytes %lu stack ", n, i,
			   copy[i].calls, copy[i].bytes);
		nr = stack_depot_fetch(copy[i].handle, &entries);
		for (j = 0; j < nr; j++)
			seq_printf(m, "%s%ps", j ? ";" : "", (void *)entries[j]);
		seq_putc(m, '\n');
	}
}

static int capture_chains_show(struct seq_file *m, void *v)
{
	struct chain_copy *copy = NULL;
	unsigned int i, n = 0;

	seq_puts(m, "capture - version: 1.0\n");
	mutex_lock(&capture_lock);
	alloc_tag_lock_module_list(true);
	for (i = 0; i < CAPTURE_MAX_TAGS; i++) {
		struct capture_tag *ct = chosen_entry(i);

		if (!ct)
			continue;
		if (!copy) {
			copy = kvmalloc_array(CAPTURE_CHAINS_MAX, sizeof(*copy), GFP_KERNEL);
			if (!copy)
				break;
		}
		capture_tag_show(m, n++, ct, copy);
	}
	alloc_tag_lock_module_list(false);
	mutex_unlock(&capture_lock);
	kvfree(copy);
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(capture_chains);

static int capture_last_error_show(struct seq_file *m, void *v)
{
	mutex_lock(&capture_lock);
	if (last_error[0])
		seq_printf(m, "%s\n", last_error);
	mutex_unlock(&capture_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(capture_last_error);

static int __init alloc_tag_capture_init(void)
{
	struct dentry *parent, *dir;

	parent = debugfs_lookup("alloc_tag", NULL);
	if (!parent)
		parent = debugfs_create_dir("alloc_tag", NULL);
	else
		dput(parent);
	dir = debugfs_create_dir("capture", parent);
	debugfs_create_file("tags", 0600, dir, NULL, &capture_tags_fops);
	debugfs_create_file("control", 0600, dir, NULL, &capture_control_fops);
	debugfs_create_file("depth", 0600, dir, &capture_depth, &capture_param_fops);
	debugfs_create_file("max_chains", 0600, dir, &max_chains, &capture_param_fops);
	debugfs_create_file("chains", 0400, dir, NULL, &capture_chains_fops);
	debugfs_create_file("last_error", 0400, dir, NULL, &capture_last_error_fops);
	return 0;
}
late_initcall_sync(alloc_tag_capture_init);
