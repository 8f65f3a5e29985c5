// SPDX-License-Identifier: GPL-2.0
/*
 * pftag-slab [-f DIR -n FILES] [-s PAIRS] [-- CMD [ARG...]]: a slab-heavy
 * load for the memory ledger of `make bench` (bench/guest/run-bench).
 *
 *   -f DIR -n FILES  create FILES empty files in DIR (a tmpfs: a dentry
 *                    and a shmem inode each; names of at most 6 digits,
 *                    inline in the dentry)
 *   -s PAIRS         open PAIRS AF_UNIX stream socket pairs and queue 64
 *                    bytes on each (two sockets, socket inodes, files and
 *                    dentries, and an skb with its data, a pair), kept
 *                    open while CMD runs
 *   -- CMD           run CMD (e.g. a print of the ledger) while the
 *                    sockets are open, and exit with its status; the
 *                    sockets close when this program exits, the files
 *                    stay
 *
 * Prints what it made, with the CLOCK_MONOTONIC nanoseconds each part
 * took (under -icount shift=0: guest instructions).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: pftag-slab [-f DIR -n FILES] [-s PAIRS] [-- CMD [ARG...]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	unsigned long files = 0, pairs = 0, i;
	unsigned long long t;
	char msg[64], name[16];
	int opt, dfd;

	while ((opt = getopt(argc, argv, "+f:n:s:")) != -1) {
		switch (opt) {
		case 'f': dir = optarg; break;
		case 'n': files = strtoul(optarg, NULL, 0); break;
		case 's': pairs = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if ((files && !dir) || files > 999999)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (files) {
		dfd = open(dir, O_RDONLY | O_DIRECTORY);
		if (dfd < 0) {
			perror(dir);
			return 1;
		}
		t = now_ns();
		for (i = 0; i < files; i++) {
			int fd;

			snprintf(name, sizeof(name), "%lu", i);
			fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd < 0) {
				fprintf(stderr, "pftag-slab: file %lu of %lu in %s: %s\n",
					i, files, dir, strerror(errno));
				return 1;
			}
			close(fd);
		}
		printf("pftag-slab: files=%lu dir=%s ns=%llu\n", files, dir, now_ns() - t);
		close(dfd);
	}

	if (pairs) {
		struct rlimit rl;

		/* Two descriptors a pair, kept open: raise the limit. */
		rl.rlim_cur = rl.rlim_max = 2 * pairs + 64;
		if (setrlimit(RLIMIT_NOFILE, &rl)) {
			perror("pftag-slab: setrlimit(RLIMIT_NOFILE)");
			return 1;
		}
		memset(msg, 'x', sizeof(msg));
		t = now_ns();
		for (i = 0; i < pairs; i++) {
			int sv[2];

			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
				fprintf(stderr, "pftag-slab: socket pair %lu of %lu: %s\n",
					i, pairs, strerror(errno));
				return 1;
			}
			if (write(sv[0], msg, sizeof(msg)) != sizeof(msg)) {
				fprintf(stderr, "pftag-slab: write on socket pair %lu: %s\n",
					i, strerror(errno));
				return 1;
			}
		}
		printf("pftag-slab: socketpairs=%lu queued_bytes=%lu ns=%llu\n",
		       pairs, pairs * sizeof(msg), now_ns() - t);
	}

	if (optind < argc) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("pftag-slab: fork");
			return 1;
		}
		if (!pid) {
			execvp(argv[optind], argv + optind);
			perror(argv[optind]);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0) {
			perror("pftag-slab: waitpid");
			return 1;
		}
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	return 0;
}
