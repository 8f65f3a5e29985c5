// SPDX-License-Identifier: GPL-2.0
/*
 * pftag-faults MIB ROUNDS: a page-fault heavy load. Maps MIB MiB of
 * anonymous memory (small pages only: MADV_NOHUGEPAGE), writes one byte
 * in every page, unmaps it, ROUNDS times: every round allocates, zeroes
 * and frees MIB*256 pages through the fault path. Prints the pages
 * touched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 0) : 10;
	size_t len = mib << 20, pg = sysconf(_SC_PAGESIZE), off;
	unsigned long r, touched = 0;

	for (r = 0; r < rounds; r++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		madvise(p, len, MADV_NOHUGEPAGE);
		for (off = 0; off < len; off += pg, touched++)
			p[off] = 1;
		munmap(p, len);
	}
	printf("pages=%lu\n", touched);
	return 0;
}
