// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * marker-loop: a guest program with loops of known loads and stores
 * between the window markers of the pftag-cache plugin
 * (bench/plugin/pftag-cache.c); tests/boot/cache-plugin.sh checks the
 * plugin's counts against them. Static, for the guest's initramfs:
 *     gcc -static -O2 -o marker-loop marker-loop.c
 *
 * marker-loop CPU load|store|empty SIZE STRIDE OFFSET N RUNS
 *
 * Pins itself to CPU, maps an array of SIZE bytes (a power of two) and
 * writes it all (so no page fault falls into a window), then RUNS times:
 * one warm-up pass of the loop outside any window, then the same loop in
 * a window. The loop makes N accesses of 8 bytes, the i-th at
 * base + OFFSET + (i * STRIDE mod SIZE), and is 5 instructions an
 * iteration with exactly one access, so a window holds 5 * N
 * instructions and N loads (or stores) plus whatever interrupts add.
 * "empty" runs an empty window (the two markers back to back).
 * With MARKER_GO=PATH in the environment it waits, pinned and ready,
 * until PATH is a file that is not empty before the first run: two
 * instances on two CPUs then run their windows at the same time. The
 * caller creates PATH empty first: a lookup of a name that does not exist
 * allocates a dentry each time on tmpfs, and millions of them, freed only
 * after RCU grace periods that two spinning CPUs delay, ran a 512 MiB
 * guest out of memory under -icount.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#define START ".byte 0x0f,0x1f,0x80; .long 0x50465453\n\t"
#define END ".byte 0x0f,0x1f,0x80; .long 0x50465445\n\t"

/* The loop, MARK_A before and MARK_B after it; INSN the access. */
#define LOOP(MARK_A, MARK_B, INSN)                                         \
	asm volatile("mov %[n], %%rcx\n\t"                                  \
		     "xor %%edx, %%edx\n\t"                                 \
		     "xor %%eax, %%eax\n\t" MARK_A "1:\n\t" INSN "\n\t"     \
		     "add %[stride], %%rdx\n\t"                             \
		     "and %[mask], %%rdx\n\t"                               \
		     "dec %%rcx\n\t"                                        \
		     "jnz 1b\n\t" MARK_B                                    \
		     :                                                      \
		     : [n] "r"(n), [base] "r"(base), [stride] "r"(stride),  \
		       [mask] "r"(mask)                                     \
		     : "rax", "rcx", "rdx", "memory", "cc")

#define LOAD "mov (%[base],%%rdx), %%rax"
#define STORE "mov %%rax, (%[base],%%rdx)"

int main(int argc, char **argv)
{
	uint64_t size, stride, offset, n, mask, runs, r;
	const char *mode, *go = getenv("MARKER_GO");
	struct stat st;
	cpu_set_t set;
	char *mem, *base;

	if (argc != 8) {
		fprintf(stderr, "usage: marker-loop CPU load|store|empty SIZE STRIDE OFFSET N RUNS\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("marker-loop: sched_setaffinity");
		return 1;
	}
	mode = argv[2];
	size = strtoull(argv[3], NULL, 0);
	stride = strtoull(argv[4], NULL, 0);
	offset = strtoull(argv[5], NULL, 0);
	n = strtoull(argv[6], NULL, 0);
	runs = strtoull(argv[7], NULL, 0);
	if (!size || (size & (size - 1)) || !n || n > (1ull << 40)) {
		fprintf(stderr, "marker-loop: SIZE must be a power of two and N > 0\n");
		return 2;
	}
	mask = size - 1;
	mem = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED) {
		perror("marker-loop: mmap");
		return 1;
	}
	memset(mem, 1, size + 4096);
	base = mem + offset;
	/*
	 * Poll every 100 us, not with sched_yield(): with two instances
	 * yielding on both CPUs of an -icount guest, the kernel's switch
	 * from tsc-early to tsc, when it fell into the wait (a kernel that
	 * boots faster gets there sooner), never finished ("Switched to
	 * clocksource tsc" never came), and the guest hung.
	 */
	while (go && (stat(go, &st) || !st.st_size))
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);

	for (r = 0; r < runs; r++) {
		if (!strcmp(mode, "load")) {
			LOOP("", "", LOAD);
			LOOP(START, END, LOAD);
		} else if (!strcmp(mode, "store")) {
			LOOP("", "", STORE);
			LOOP(START, END, STORE);
		} else if (!strcmp(mode, "empty")) {
			asm volatile(START END ::: "memory");
		} else {
			fprintf(stderr, "marker-loop: unknown mode '%s'\n", mode);
			return 2;
		}
	}
	printf("marker-loop: cpu=%s mode=%s size=%llu stride=%llu offset=%llu n=%llu runs=%llu done\n",
	       argv[1], mode, (unsigned long long)size, (unsigned long long)stride,
	       (unsigned long long)offset, (unsigned long long)n, (unsigned long long)runs);
	return 0;
}
