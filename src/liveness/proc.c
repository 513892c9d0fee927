#include "liveness/proc.h"
#include "util/sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
	errno = err;
	if (n >= 0)
		data[n] = '\0';
	return n;
}

/* A /proc file or namespace that does not exist: the kernel has none. */
static int absent(int err)
{
	return err == ENOENT || err == ENOTDIR;
}

/* The inode of the namespace PATH into *INO (kept when the kernel has
 * none); 0, or -1 with errno. */
static int ns_inode(const char *path, unsigned long long *ino)
{
	struct stat sb;
	if (stat(path, &sb) == 0)
		*ino = (unsigned long long)sb.st_ino;
	else if (!absent(errno))
		return -1;
	return 0;
}

int proc_identity(const char **boot_id, unsigned long long *pid_ns, unsigned long long *time_ns)
{
	static char boot[64];
	static unsigned long long pid_ino, time_ino;
	static int done;
	if (!done) {
		ssize_t n = read_proc("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
		if ((n < 0 && !absent(errno)) || ns_inode("/proc/self/ns/pid", &pid_ino) < 0 ||
		    ns_inode("/proc/self/ns/time", &time_ino) < 0)
			return -1;   /* tried again next time */
		if (n <= 0)
			boot[0] = '\0';
		else
			boot[strcspn(boot, "\n")] = '\0';
		done = 1;
	}
	*boot_id = boot[0] ? boot : NULL;
	*pid_ns = pid_ino;
	*time_ns = time_ino;
	return 0;
}

int pid_start_time(long pid, unsigned long long *start)
{
	char path[64], stat[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	/* The command name in field 2 may hold anything, even ") ": count
	 * the fields from the last ')'.  1 KiB covers the 16-byte name and
	 * the 20 fields after it. */
	if (read_proc(path, stat, sizeof stat) < 0)
		return -1;   /* ENOENT is no proof of death: hidepid=2 */
	/* Field 3, the state, follows ") "; field 22 is the start time. */
	char *p = strrchr(stat, ')');
	char state = '\0';
	if (p && p[1] == ' ')
		state = p[2];
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');   /* the space before field + 1 */
	if (!state || !p) {
		errno = EIO;
		return -1;
	}
	if (state == 'Z' || state == 'X')
		return 0;
	*start = strtoull(p + 1, NULL, 10);
	return 1;
}

static int cmp_pids(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* The pid in a fdinfo lock line after "lock:" — "\t1: FLOCK  ADVISORY
 * WRITE 4242 fe:00:123 0 EOF", the fifth field; -1 if none. */
static long lock_pid(const char *p)
{
	for (int field = 0; field < 4; field++) {
		p += strspn(p, " \t");
		p += strcspn(p, " \t\n");
	}
	p += strspn(p, " \t");
	char *end;
	long pid = strtol(p, &end, 10);
	return end > p && (*end == ' ' || *end == '\t') ? pid : -1;
}

/* Does the descriptor FD of PID hold a lock, taken by LOCKER unless 0?
 * Its fdinfo lists the locks held through it (Linux 3.8+); a descriptor
 * merely open, like a waiter's, has none.  Where fdinfo cannot be read,
 * an open descriptor is all we can tell: 1. */
static int fd_locks(const char *pid, const char *fd, long locker)
{
	struct buf path = {0};
	char text[4096];   /* the lock lines follow four short ones */
	buf_addf(&path, "/proc/%s/fdinfo/%s", pid, fd);
	ssize_t n = read_proc(path.data, text, sizeof text);
	buf_free(&path);
	if (n <= 0)
		return 1;
	for (char *line = text; line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (strncmp(line, "lock:", 5) == 0 && (!locker || lock_pid(line + 5) == locker))
			return 1;
	}
	return 0;
}

/* Does process PID (a /proc entry) hold a lock on DEV, INO (taken by
 * LOCKER, unless 0) through a descriptor it has open? */
static int holds(const char *pid, dev_t dev, ino_t ino, long locker)
{
	struct buf path = {0};
	buf_addf(&path, "/proc/%s/fd", pid);
	DIR *fds = opendir(path.data);   /* NULL: gone, or not ours to look into */
	int found = 0;
	size_t base = path.len;
	struct dirent *e;
	while (fds && !found && (e = readdir(fds)) != NULL) {
		struct stat sb;
		if (e->d_name[0] == '.')
			continue;
		path.len = base;
		buf_addf(&path, "/%s", e->d_name);
		/* stat follows the magic link to the open file itself. */
		found = stat(path.data, &sb) == 0 && sb.st_dev == dev && sb.st_ino == ino &&
			fd_locks(pid, e->d_name, locker);
	}
	if (fds)
		closedir(fds);
	buf_free(&path);
	return found;
}

int lock_sharers(dev_t dev, ino_t ino, long locker, size_t max, long **pids, size_t *count)
{
	DIR *proc = opendir("/proc");
	*pids = NULL;
	*count = 0;
	if (!proc)
		return -1;
	size_t cap = 0;
	for (;;) {
		errno = 0;
		const struct dirent *e = readdir(proc);
		if (!e)
			break;
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    strspn(e->d_name, "0123456789") != strlen(e->d_name))
			continue;
		if (!holds(e->d_name, dev, ino, locker))
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

int same_program(long pid)
{
	char path[64];
	struct stat ours, theirs;
	snprintf(path, sizeof path, "/proc/%ld/exe", pid);
	return stat("/proc/self/exe", &ours) == 0 && stat(path, &theirs) == 0 &&
	       ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

int pid_fd(long pid)
{
#ifdef SYS_pidfd_open
	if (pid > 0 && pid <= INT_MAX)
		return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#endif
	(void)pid;
	return -1;
}
