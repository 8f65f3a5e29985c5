// SPDX-License-Identifier: GPL-2.0
/*
 * pftag-clock: the guest's clocks, printed as "tsc=N boottime_ns=N".
 * Under QEMU with -icount shift=0 the TSC counts instructions since the
 * machine's reset (firmware and kernel decompression included) and
 * CLOCK_BOOTTIME those since the kernel's timekeeping started: run first
 * thing in userspace, they are the instructions it took to get there.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

int main(void)
{
	struct timespec ts;
	uint64_t tsc = __rdtsc();

	clock_gettime(CLOCK_BOOTTIME, &ts);
	printf("tsc=%llu boottime_ns=%llu\n", (unsigned long long)tsc,
	       (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec);
	return 0;
}
