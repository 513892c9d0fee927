/* floor: the physical floor of a jobreg command, for tests/bench/run: the
 * system calls the command makes on the registry's filesystem, in the same
 * order, and nothing else (no option parsing, no record parsing or
 * formatting, no liveness decision, no /proc or boot id, no messages).
 * Beside a command on the same mount, the ratio command / floor is the
 * command's own overhead there, not the filesystem's.
 *
 *   floor DIR NAME [COUNT]     one durable record update by hand: its
 *                              audit line (0.5, SPEC §3c: the audit lock,
 *                              an append, fsync), then open a temp file,
 *                              write, fsync, rename onto NAME, fsync DIR.
 *                              COUNT > 1: that many, and print the mean
 *                              microseconds per update measured inside the
 *                              process (no fork+exec) on stdout
 *   floor get DIR JOB          what jobreg-get -d DIR JOB does on DIR
 *   floor set DIR JOB          what jobreg-set -d DIR JOB RUNNING does
 *   floor dispatch DIR JOB CMD [ARG...]
 *                              what jobreg-dispatch -d DIR JOB CMD... does:
 *                              the same calls around a fork, exec and wait
 *                              of CMD
 *   floor sweep DIR            what jobreg-clear -d DIR -a does to a
 *                              registry of jobs that may all be cleared
 *
 * The sequences, learned with strace -f of the commands of 0.2.1 (a job
 * whose lock files exist, as in a registry in use):
 *   get       open DIR, fstat; open JOB, fstat, read, close; close DIR;
 *             the status on stdout
 *   set       open DIR, fstat; job lock: open .JOB.lock, fstat, flock
 *             LOCK_EX|LOCK_NB, fstatat (the inode check); read JOB (open,
 *             fstat, read, close); replace JOB: open .JOB.tmp O_EXCL,
 *             fstat, write, fsync, close, rename, fsync DIR; close the
 *             lock, close DIR (0.5: the audit line before the replace)
 *   dispatch  open DIR, fstat; job lock; read JOB; run lock: open .JOB.run,
 *             fstat, flock LOCK_EX|LOCK_NB, fstatat, fstat; replace JOB
 *             (RUNNING); close the job lock; fork, exec CMD, wait; job
 *             lock; read JOB; replace JOB (DONE); close the job lock;
 *             fstat and close the run lock; the leftover check: open
 *             .JOB.run, fstat, flock LOCK_EX|LOCK_NB, fstatat, close;
 *             close DIR
 *   sweep     open DIR, fstat, list it; for each record: job lock; read
 *             JOB; unlink JOB; if the listing has .JOB.run: open it,
 *             fstat, flock LOCK_EX|LOCK_NB (no inode check: the job lock
 *             is held), unlink it; unlink .JOB.lock; close the run lock
 *             and the job lock; then fsync DIR, close DIR
 * Exit: 0; 64 usage; 74 a failed call (named on stderr). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char record[] =
	"version=1\nstatus=RUNNING\nsince=2026-12-02T14:00:05Z\n"
	"started=2026-12-02T14:00:05Z\n";

/* The sizes jobreg writes for a dispatched run's RUNNING and DONE. */
static const char running[] =
	"version=1\nstatus=RUNNING\nsince=2026-12-02T14:00:05Z\nowner=lock\nhost=benchhost\n"
	"pid=123456\npid_start=123456789\nboot_id=00000000-0000-0000-0000-000000000000\n"
	"pid_ns=4026531836\ntime_ns=4026531834\nrun_lock=1234567\nstarted=2026-12-02T14:00:05Z\n"
	"runs=12\n";
static const char done[] =
	"version=1\nstatus=DONE\nsince=2026-12-02T14:00:06Z\nhost=benchhost\npid=123456\n"
	"started=2026-12-02T14:00:05Z\nended=2026-12-02T14:00:06Z\nexit=0\nruns=12\n"
	"last_success=2026-12-02T14:00:06Z\n";

static void fail(const char *what)
{
	perror(what);
	exit(74);
}

static int open_dir(const char *path)
{
	struct stat st;
	int dir = open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
	if (dir < 0)
		fail(path);
	if (fstat(dir, &st) < 0)
		fail("fstat dir");
	return dir;
}

static void close_fd(int fd)
{
	if (close(fd) < 0)
		fail("close");
}

static void name_of(char *buf, size_t size, const char *job, const char *suffix)
{
	if ((size_t)snprintf(buf, size, ".%s.%s", job, suffix) >= size)
		fail("name too long");
}

/* Open and lock a lock file as jobreg does; the inode check after. */
static int take_lock(int dir, const char *job, const char *suffix)
{
	char name[300];
	struct stat st, now;
	name_of(name, sizeof name, job, suffix);
	int fd = openat(dir, name, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fail(name);
	if (fstat(fd, &st) < 0)
		fail("fstat lock");
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		fail("flock");
	if (fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
		fail("fstatat lock");
	return fd;
}

/* Read the record whole (its size from fstat, one read past it). */
static void read_record(int dir, const char *job, char *buf, size_t size)
{
	struct stat st;
	int fd = openat(dir, job, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fail(job);
	if (fstat(fd, &st) < 0)
		fail("fstat record");
	size_t want = (size_t)st.st_size + 1 < size ? (size_t)st.st_size + 1 : size;
	if (read(fd, buf, want) < 0)
		fail("read record");
	close_fd(fd);
}

static void replace_record(int dir, const char *job, const char *text)
{
	char tmp[300];
	struct stat st;
	size_t len = strlen(text);
	name_of(tmp, sizeof tmp, job, "tmp");
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		fail(tmp);
	if (fstat(fd, &st) < 0)
		fail("fstat temp");
	if (write(fd, text, len) != (ssize_t)len)
		fail("write");
	if (fsync(fd) < 0)
		fail("fsync");
	close_fd(fd);
	if (renameat(dir, tmp, dir, job) < 0)
		fail("rename");
	if (fsync(dir) < 0)
		fail("fsync dir");
}

/* A change by hand's audit line (SPEC §3c): the audit lock, then one
 * append to .-audit, fsync, close; the lock let go. */
static void append_audit(int dir)
{
	static const char line[] = "time=2026-12-02T14:00:05Z user=root uid=0 host=build01 "
				   "pid=41213 command=jobreg-set action=set job=j status=RUNNING\n";
	int lock = openat(dir, ".-audit.lock", O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
			  0666);
	if (lock < 0 || flock(lock, LOCK_EX) < 0)
		fail("audit lock");
	int fd = openat(dir, ".-audit", O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOFOLLOW |
			O_CLOEXEC, 0666);
	if (fd < 0)
		fail("open .-audit");
	if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
		fail("write .-audit");
	if (fsync(fd) < 0)
		fail("fsync .-audit");
	close_fd(fd);
	close_fd(lock);
}

static int do_get(const char *path, const char *job)
{
	char buf[4096];
	int dir = open_dir(path);
	read_record(dir, job, buf, sizeof buf);
	close_fd(dir);
	if (write(STDOUT_FILENO, "DONE\n", 5) != 5)
		fail("write stdout");
	return 0;
}

static int do_set(const char *path, const char *job)
{
	char buf[4096];
	int dir = open_dir(path);
	int lock = take_lock(dir, job, "lock");
	read_record(dir, job, buf, sizeof buf);
	append_audit(dir);
	replace_record(dir, job, record);
	close_fd(lock);
	close_fd(dir);
	return 0;
}

static int do_dispatch(const char *path, const char *job, char **cmd)
{
	char buf[4096];
	struct stat st;
	int status;
	int dir = open_dir(path);
	int lock = take_lock(dir, job, "lock");
	read_record(dir, job, buf, sizeof buf);
	int run = take_lock(dir, job, "run");
	if (fstat(run, &st) < 0)
		fail("fstat run lock");
	replace_record(dir, job, running);
	close_fd(lock);
	pid_t pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		fail("waitpid");
	lock = take_lock(dir, job, "lock");
	read_record(dir, job, buf, sizeof buf);
	replace_record(dir, job, done);
	close_fd(lock);
	if (fstat(run, &st) < 0)
		fail("fstat run lock");
	close_fd(run);
	close_fd(take_lock(dir, job, "run"));
	close_fd(dir);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int listed(char **names, size_t n, const char *name)
{
	return bsearch(&name, names, n, sizeof *names, by_name) != NULL;
}

static int do_sweep(const char *path)
{
	char buf[4096], name[300];
	struct stat st;
	int dir = open_dir(path);
	int list = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = list < 0 ? NULL : fdopendir(list);
	if (!d)
		fail("list dir");
	char **names = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 1024) * sizeof *names)))
			fail("realloc");
		if (!(names[n++] = strdup(e->d_name)))
			fail("strdup");
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		const char *job = names[i];
		if (job[0] == '.')
			continue;
		int lock = take_lock(dir, job, "lock"), run = -1;
		read_record(dir, job, buf, sizeof buf);
		if (unlinkat(dir, job, 0) < 0)
			fail("unlink record");
		name_of(name, sizeof name, job, "run");
		if (listed(names, n, name)) {
			run = openat(dir, name, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
			if (run < 0 || fstat(run, &st) < 0 || flock(run, LOCK_EX | LOCK_NB) < 0)
				fail("run lock");
			if (unlinkat(dir, name, 0) < 0)
				fail("unlink run lock");
		}
		name_of(name, sizeof name, job, "lock");
		if (unlinkat(dir, name, 0) < 0)
			fail("unlink lock");
		if (run >= 0)
			close_fd(run);
		close_fd(lock);
	}
	if (fsync(dir) < 0)
		fail("fsync dir");
	close_fd(dir);
	return 0;
}

/* The durable update alone, COUNT times. */
static int do_update(const char *path, const char *name, long count)
{
	char tmp[4096];
	int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		fail(path);
	snprintf(tmp, sizeof tmp, ".%s.tmp.%06ld", name, (long)getpid() % 1000000);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < count; i++) {
		append_audit(dir);
		int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0)
			fail("open");
		if (write(fd, record, sizeof record - 1) != (ssize_t)(sizeof record - 1))
			fail("write");
		if (fsync(fd) < 0)
			fail("fsync");
		if (close(fd) < 0)
			fail("close");
		if (renameat(dir, tmp, dir, name) < 0)
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

static int usage(void)
{
	fprintf(stderr, "usage: floor DIR NAME [COUNT] | floor get|set DIR JOB | "
			"floor dispatch DIR JOB CMD [ARG...] | floor sweep DIR\n");
	return 64;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "get") == 0)
		return do_get(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "set") == 0)
		return do_set(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "sweep") == 0)
		return do_sweep(argv[2]);
	if (argc >= 5 && strcmp(argv[1], "dispatch") == 0)
		return do_dispatch(argv[2], argv[3], argv + 4);
	if (argc < 3 || argc > 4)
		return usage();
	return do_update(argv[1], argv[2], argc == 4 ? atol(argv[3]) : 1);
}
