/* gen: write a registry of N records directly, in the format jobreg
 * writes, for the listing and sweep benchmarks of tests/bench/run.
 *
 *   gen DIR N SINCE [locks | runs]
 *
 * DIR must exist.  Jobs are named job-0000000 ... ; SINCE (RFC 3339,
 * e.g. 2020-01-01T00:00:00Z) goes into since/started/ended.  The mix, by
 * job number modulo 20:
 *   0-3   PENDING (an explicit PENDING record)          20 %
 *   4-13  DONE, exit=0 (every 5th exit=1), host, pid    50 %
 *   14-18 RUNNING with no owner (an operator's)         25 %
 *   19    RUNNING owner=lock, with its .JOB.run lock     5 %
 *         file present but free (nobody holds it: the
 *         dispatcher is gone), so readers probe the lock
 *         and report STALE - the most expensive read path.
 * With "locks", every job also has the lock files a real registry has:
 * .JOB.lock for each, and .JOB.run for the dispatched ones (DONE, and the
 * owner=lock RUNNING), as the sweep benchmark needs.  With "runs", the
 * same and, for every job, a history of three runs and a log, as 0.3
 * keeps them (.JOB.history, .JOB.log): a listing must not read them.
 * No fsync: this only has to be fast, not durable. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put(int dir, const char *name, const char *data, size_t len)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) < 0) {
		perror(name);
		exit(74);
	}
}

int main(int argc, char **argv)
{
	int runs = argc == 5 && strcmp(argv[4], "runs") == 0;
	int locks = runs || (argc == 5 && strcmp(argv[4], "locks") == 0);
	if (argc != 4 && !locks) {
		fprintf(stderr, "usage: gen DIR N SINCE [locks | runs]\n");
		return 64;
	}
	int dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		perror(argv[1]);
		return 74;
	}
	long n = atol(argv[2]);
	const char *t = argv[3];
	char name[64], data[1024];
	for (long i = 0; i < n; i++) {
		int len, kind = (int)(i % 20);
		snprintf(name, sizeof name, "job-%07ld", i);
		if (kind < 4)
			len = snprintf(data, sizeof data, "version=1\nstatus=PENDING\nsince=%s\n", t);
		else if (kind < 14)
			len = snprintf(data, sizeof data,
				       "version=1\nstatus=DONE\nsince=%s\nhost=build01\npid=%ld\n"
				       "started=%s\nended=%s\nexit=%d\n",
				       t, 1000 + i % 30000, t, t, i % 5 == 0);
		else if (kind < 19)
			len = snprintf(data, sizeof data,
				       "version=1\nstatus=RUNNING\nsince=%s\nstarted=%s\n"
				       "note=started by hand\n", t, t);
		else {
			len = snprintf(data, sizeof data,
				       "version=1\nstatus=RUNNING\nsince=%s\nowner=lock\n"
				       "host=build01\npid=%ld\nstarted=%s\n",
				       t, 1000 + i % 30000, t);
			char lock[80];
			snprintf(lock, sizeof lock, ".%s.run", name);
			put(dir, lock, "", 0);
		}
		put(dir, name, data, (size_t)len);
		if (locks) {
			char lock[80];
			snprintf(lock, sizeof lock, ".%s.lock", name);
			put(dir, lock, "", 0);
			if (kind >= 4 && kind < 14) {
				snprintf(lock, sizeof lock, ".%s.run", name);
				put(dir, lock, "", 0);
			}
		}
		if (runs) {
			char file[80];
			len = 0;
			for (int r = 1; r <= 3; r++)
				len += snprintf(data + len, sizeof data - (size_t)len,
						"run=%d outcome=OK started=%s ended=%s duration=0 exit=0"
						" host=build01 pid=%ld\n", r, t, t, 1000 + i % 30000);
			snprintf(file, sizeof file, ".%s.history", name);
			put(dir, file, data, (size_t)len);
			len = snprintf(data, sizeof data, "building %s\nstep 1 of 3\nstep 2 of 3\n"
				       "step 3 of 3\ndone\n", name);
			snprintf(file, sizeof file, ".%s.log", name);
			put(dir, file, data, (size_t)len);
		}
	}
	return 0;
}
