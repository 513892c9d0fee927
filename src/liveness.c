#include "liveness.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read a small /proc file whole; returns its length or -1. */
static ssize_t read_proc(const char *path, char *data, size_t size)
{
	int fd;
	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -1;
	ssize_t n = read_full(fd, data, size - 1);
	int err = errno;
	close_fd(fd);
	if (n < 0) {
		errno = err;
		return -1;
	}
	data[n] = '\0';
	return n;
}

const char *boot_id(void)
{
	static char id[64];
	static int done;
	if (!done) {
		done = 1;
		ssize_t n = read_proc("/proc/sys/kernel/random/boot_id", id, sizeof id);
		if (n <= 0)
			id[0] = '\0';
		else
			id[strcspn(id, "\n")] = '\0';
	}
	return id[0] ? id : NULL;
}

int pid_start_time(long pid, unsigned long long *start)
{
	char path[64], stat[1024];
	if (pid <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	/* The command name in field 2 may hold anything, even ") ", so the
	 * fields are counted from the last ')'; the 1 KiB read covers the
	 * 16-byte name and the 20 fields after it. */
	ssize_t n = read_proc(path, stat, sizeof stat);
	if (n < 0)
		return errno == ENOENT || errno == ESRCH ? 0 : -1;
	char *p = strrchr(stat, ')');
	if (!p)
		return -1;
	p++;
	/* Field 3 is the state; field 22 the start time. */
	int field = 2;
	char state = 0;
	char *save = NULL;
	for (char *tok = strtok_r(p, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		field++;
		if (field == 3)
			state = tok[0];
		if (field == 22) {
			if (state == 'Z' || state == 'X')
				return 0;
			*start = strtoull(tok, NULL, 10);
			return 1;
		}
	}
	return -1;
}

int owner_alive(const struct record *r, time_t now)
{
	const char *owner = record_get(r, "owner");
	const char *expires = record_get(r, "expires");
	time_t until;

	if (owner && strcmp(owner, "pid") == 0) {
		const char *their_boot = record_get(r, "boot_id");
		const char *our_boot = boot_id();
		/* Only a pid of this boot can be checked. */
		if (their_boot && our_boot && strcmp(their_boot, our_boot) == 0) {
			unsigned long long start;
			const char *want = record_get(r, "pid_start");
			int live = pid_start_time(strtol(record_get(r, "pid"), NULL, 10), &start);
			if (live == 0)
				return 0;
			if (live > 0 && want && strtoull(want, NULL, 10) != start)
				return 0;
		}
	}
	if (expires && time_parse(expires, &until) == 0 && now > until)
		return 0;
	return 1;
}
