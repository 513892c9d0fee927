/* floor: the physical floor of one durable record update, for
 * tests/bench/run: open a temp file, write a record, fsync it, rename it
 * onto the record, fsync the directory.  Nothing else (no lock, no read,
 * no parse, no sweep).
 *
 *   floor DIR NAME [COUNT]
 *
 * Does COUNT updates (default 1).  With COUNT > 1 it prints the mean
 * microseconds per update measured inside the process ("in-process floor",
 * no fork+exec) on stdout. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char record[] =
	"version=1\nstatus=RUNNING\nsince=2026-12-02T14:00:05Z\n"
	"started=2026-12-02T14:00:05Z\n";

static void fail(const char *what)
{
	perror(what);
	exit(74);
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: floor DIR NAME [COUNT]\n");
		return 64;
	}
	long count = argc == 4 ? atol(argv[3]) : 1;
	char tmp[4096];
	int dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		fail(argv[1]);
	snprintf(tmp, sizeof tmp, ".%s.tmp.%06ld", argv[2], (long)getpid() % 1000000);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < count; i++) {
		int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0)
			fail("open");
		if (write(fd, record, sizeof record - 1) != (ssize_t)(sizeof record - 1))
			fail("write");
		if (fsync(fd) < 0)
			fail("fsync");
		if (close(fd) < 0)
			fail("close");
		if (renameat(dir, tmp, dir, argv[2]) < 0)
			fail("rename");
		if (fsync(dir) < 0)
			fail("fsync dir");
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (count > 1)
		printf("%.1f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
				  (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / (double)count);
	return 0;
}
