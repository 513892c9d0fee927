#include "proc.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	if (pid <= 0) {
		errno = ESRCH;
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	/* The command name in field 2 may hold anything, even ") ", so the
	 * fields are counted from the last ')'; the 1 KiB read covers the
	 * 16-byte name and the 20 fields after it. */
	ssize_t n = read_proc(path, stat, sizeof stat);
	/* ENOENT is no proof of death: hidepid=2 hides live processes. */
	if (n < 0)
		return -1;
	char *p = strrchr(stat, ')');
	if (!p) {
		errno = EIO;
		return -1;
	}
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
	errno = EIO;
	return -1;
}

unsigned long long ns_inode(const char *kind)
{
	static unsigned long long pid_ns, time_ns;
	static int pid_done, time_done;
	int is_time = strcmp(kind, "time") == 0;
	unsigned long long *value = is_time ? &time_ns : &pid_ns;
	int *done = is_time ? &time_done : &pid_done;
	if (!*done) {
		struct stat sb;
		char path[32];
		snprintf(path, sizeof path, "/proc/self/ns/%s", is_time ? "time" : "pid");
		*done = 1;
		*value = stat(path, &sb) == 0 ? (unsigned long long)sb.st_ino : 0;
	}
	return *value;
}

static int cmp_pids(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* Does process PID (a /proc entry) have DEV, INO open? */
static int holds(const char *pid, dev_t dev, ino_t ino)
{
	struct buf path = {0};
	buf_addf(&path, "/proc/%s/fd", pid);
	DIR *fds = opendir(path.data);
	int found = 0;
	if (!fds) {
		buf_free(&path);
		return 0;   /* gone, or not ours to look into */
	}
	size_t base = path.len;
	struct dirent *e;
	while (!found && (e = readdir(fds)) != NULL) {
		struct stat sb;
		if (e->d_name[0] == '.')
			continue;
		path.len = base;
		buf_addf(&path, "/%s", e->d_name);
		/* stat follows the magic link to the open file itself. */
		found = stat(path.data, &sb) == 0 && sb.st_dev == dev && sb.st_ino == ino;
	}
	closedir(fds);
	buf_free(&path);
	return found;
}

int lock_holders(dev_t dev, ino_t ino, size_t max, long **pids, size_t *count)
{
	DIR *proc = opendir("/proc");
	*pids = NULL;
	*count = 0;
	if (!proc)
		return -1;
	size_t cap = 0;
	struct dirent *e;
	for (;;) {
		errno = 0;
		if (!(e = readdir(proc)))
			break;
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    strspn(e->d_name, "0123456789") != strlen(e->d_name))
			continue;
		if (!holds(e->d_name, dev, ino))
			continue;
		if (*count == cap) {
			cap = cap ? cap * 2 : 8;
			*pids = xrealloc(*pids, cap * sizeof **pids);
		}
		(*pids)[(*count)++] = strtol(e->d_name, NULL, 10);
	}
	int err = errno;
	closedir(proc);
	if (err) {
		free(*pids);
		*pids = NULL;
		*count = 0;
		errno = err;
		return -1;
	}
	if (*count > 1)
		qsort(*pids, *count, sizeof **pids, cmp_pids);
	if (*count > max)
		*count = max;
	return 0;
}
