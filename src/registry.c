#include "registry.h"
#include "cli.h"
#include "record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_FLAGS (O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

const char *reg_path(const struct registry *reg, const char *name)
{
	static struct buf path;
	buf_reset(&path);
	buf_adds(&path, reg->path);
	if (name) {
		buf_addc(&path, '/');
		buf_adds(&path, name);
	}
	return path.data;
}

/* ".JOB.lock", ".JOB.run" or ".JOB.tmp." */
static char *dot_name(const char *job, const char *suffix)
{
	struct buf name = {0};
	buf_addc(&name, '.');
	buf_adds(&name, job);
	buf_adds(&name, suffix);
	return name.data;
}

static int open_dir(const char *path)
{
	int fd;
	do
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd;
}

/* mkdir -p: make PATH and any missing parents. */
static int make_dirs(char *path)
{
	if (mkdir(path, 0777) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	char *slash = strrchr(path, '/');
	while (slash && slash > path && slash[-1] == '/')
		slash--;
	if (!slash || slash == path)
		return -1;
	*slash = '\0';
	int rc = make_dirs(path);
	*slash = '/';
	if (rc < 0)
		return -1;
	if (mkdir(path, 0777) == 0 || errno == EEXIST)
		return 0;
	return -1;
}

int reg_open(struct registry *reg, const char *path, int create)
{
	int rc = 0;
	reg->path = xstrdup(path);
	reg->fd = open_dir(path);
	if (reg->fd >= 0 || (errno == ENOENT && !create))
		return 0;
	if (errno == ENOENT) {
		char *copy = xstrdup(path);
		int made = make_dirs(copy);
		free(copy);
		if (made < 0) {
			rc = fail(EXIT_CANTCREAT, NULL, "cannot create registry %s: %s",
				  path, strerror(errno));
			goto failed;
		}
		reg->fd = open_dir(path);
		if (reg->fd >= 0)
			return 0;
	}
	if (create && errno == ENOTDIR)
		rc = fail(EXIT_CANTCREAT, NULL, "cannot create registry %s: %s",
			  path, strerror(errno));
	else
		rc = fail_errno(errno, NULL, "open registry %s", path);
failed:
	free(reg->path);
	reg->path = NULL;
	return rc;
}

void reg_close(struct registry *reg)
{
	if (reg->fd >= 0)
		close_fd(reg->fd);
	reg->fd = -1;
	free(reg->path);
	reg->path = NULL;
}

static int not_regular(const struct registry *reg, const char *job, const char *name)
{
	return fail(EXIT_PERM, job, "not a regular file: %s", reg_path(reg, name));
}

/* openat relative to the registry; ELOOP means a symlink was refused. */
static int open_entry(const struct registry *reg, const char *job, const char *name,
		      int flags, int *fd, off_t *size)
{
	struct stat st;
	do
		*fd = openat(reg->fd, name, flags | ENTRY_FLAGS, 0666);
	while (*fd < 0 && errno == EINTR);
	if (*fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP)
			return not_regular(reg, job, name);
		return fail_errno(errno, job, "open %s", reg_path(reg, name));
	}
	if (fstat(*fd, &st) < 0) {
		int err = errno;
		close_fd(*fd);
		*fd = -1;
		return fail_errno(err, job, "stat %s", reg_path(reg, name));
	}
	if (!S_ISREG(st.st_mode)) {
		close_fd(*fd);
		*fd = -1;
		return not_regular(reg, job, name);
	}
	if (size)
		*size = st.st_size;
	return 0;
}

int reg_read(const struct registry *reg, const char *job, struct buf *data, int *found)
{
	int fd = -1, rc;
	*found = 0;
	buf_reset(data);
	if (reg->fd < 0)
		return 0;
	off_t size = 0;
	rc = open_entry(reg, job, job, O_RDONLY, &fd, &size);
	if (rc || fd < 0)
		return rc;
	/* One byte past the limit is enough to tell the record is too big. */
	if (data->cap < RECORD_MAX + 2) {
		buf_free(data);
		data->data = xmalloc(RECORD_MAX + 2);
		data->cap = RECORD_MAX + 2;
	}
	/* Ask for one byte more than fstat saw: a regular file that returns
	 * less is at its end, so one read(2) usually does. */
	size_t want = size < RECORD_MAX ? (size_t)size + 1 : RECORD_MAX + 1;
	ssize_t n;
	do
		n = read(fd, data->data, want);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)want && want < RECORD_MAX + 1) {
		ssize_t more = read_full(fd, data->data + n, RECORD_MAX + 1 - want);
		n = more < 0 ? -1 : n + more;
	}
	int err = errno;
	close_fd(fd);
	if (n < 0)
		return fail_errno(err, job, "read %s", reg_path(reg, job));
	data->len = (size_t)n;
	data->data[n] = '\0';
	*found = 1;
	return 0;
}

static volatile sig_atomic_t alarm_rang;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_rang = 1;
}

/* flock(2) with a bounded wait: a one-shot SIGALRM interrupts the wait
 * (no polling), as flock(1) does.  Returns 0, or -1 with errno
 * (EWOULDBLOCK on timeout). */
static int flock_wait(int fd, int op, double wait)
{
	if (flock(fd, op | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK && errno != EINTR)
		return -1;
	if (wait == 0) {
		errno = EWOULDBLOCK;
		return -1;
	}
	if (wait < 0) {
		while (flock(fd, op) < 0)
			if (errno != EINTR)
				return -1;
		return 0;
	}

	struct sigaction sa, old_sa;
	struct itimerval timer = {0}, old_timer;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;   /* no SA_RESTART: the wait must return EINTR */
	double deadline = now_mono() + wait;
	alarm_rang = 0;
	sigaction(SIGALRM, &sa, &old_sa);
	timer.it_value.tv_sec = (time_t)wait;
	timer.it_value.tv_usec = (suseconds_t)((wait - (double)(time_t)wait) * 1e6);
	if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0)
		timer.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &timer, &old_timer);

	int rc, err = 0;
	for (;;) {
		rc = flock(fd, op);
		if (rc == 0)
			break;
		err = errno;
		if (err != EINTR)
			break;
		if (alarm_rang || now_mono() >= deadline) {
			err = EWOULDBLOCK;
			break;
		}
	}
	struct itimerval off = {0};
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	(void)old_timer;
	if (rc < 0)
		errno = err;
	return rc;
}

int reg_lock(const struct registry *reg, const char *job, enum lock_kind kind,
	     int op, double wait, int flags, int *fd)
{
	char *name = dot_name(job, kind == JOB_LOCK ? ".lock" : ".run");
	double deadline = now_mono() + wait;
	int rc = 0;

	*fd = -1;
	if (reg->fd < 0)
		goto out;
	for (;;) {
		struct stat held, named;
		rc = open_entry(reg, job, name, O_RDONLY | ((flags & LOCK_CREATE) ? O_CREAT : 0),
				fd, NULL);
		if (rc || *fd < 0)
			break;
		double left = wait < 0 ? -1 : deadline - now_mono();
		if (wait >= 0 && left < 0)
			left = 0;
		if (flock_wait(*fd, op, left) < 0) {
			int err = errno;
			reg_unlock(fd);
			if (err == EWOULDBLOCK && (flags & LOCK_QUIET_BUSY))
				rc = EXIT_BUSY;
			else if (err == EWOULDBLOCK)
				rc = fail(EXIT_BUSY, job, "lock busy: %s (waited %g s)",
					  reg_path(reg, name), wait);
			else
				rc = fail_errno(err, job, "lock %s", reg_path(reg, name));
			break;
		}
		/* A clear may have removed the file while we waited: then we
		 * hold a lock nobody else can see, so take the new one. */
		if (fstat(*fd, &held) < 0) {
			int err = errno;
			reg_unlock(fd);
			rc = fail_errno(err, job, "stat %s", reg_path(reg, name));
			break;
		}
		if (fstatat(reg->fd, name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
		    named.st_dev == held.st_dev && named.st_ino == held.st_ino)
			break;
		reg_unlock(fd);
	}
out:
	free(name);
	return rc;
}

void reg_unlock(int *fd)
{
	if (*fd >= 0)
		close_fd(*fd);   /* closing drops the flock */
	*fd = -1;
}

int reg_lock_inode(const struct registry *reg, const char *job, enum lock_kind kind,
		   unsigned long long *ino)
{
	char *name = dot_name(job, kind == JOB_LOCK ? ".lock" : ".run");
	struct stat st;
	int rc = 0;

	*ino = 0;
	if (reg->fd >= 0 && fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		*ino = (unsigned long long)st.st_ino;
	else if (reg->fd >= 0 && errno != ENOENT)
		rc = fail_errno(errno, job, "stat %s", reg_path(reg, name));
	free(name);
	return rc;
}

/* Six random alphanumerics; collisions are retried by O_EXCL, so a cheap
 * generator seeded from the clock, the pid and a counter is enough. */
static void random_suffix(char out[7])
{
	static const char alnum[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static unsigned long long state;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	state ^= (unsigned long long)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^
		 (unsigned long long)ts.tv_sec ^ ((unsigned long long)getpid() << 32);
	for (int i = 0; i < 6; i++) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		out[i] = alnum[state % (sizeof alnum - 1)];
	}
	out[6] = '\0';
}

static int fsync_retry(int fd)
{
	int rc;
	do
		rc = fsync(fd);
	while (rc < 0 && errno == EINTR);
	return rc;
}

static int sync_dir(const struct registry *reg, const char *job, const char *after)
{
	if (fsync_retry(reg->fd) == 0)
		return 0;
	int err = errno;
	return fail(EXIT_IO, job, "fsync %s: %s (%s)", reg->path, strerror(err), after);
}

int reg_replace(const struct registry *reg, const char *job, const char *data, size_t len)
{
	char *prefix = dot_name(job, ".tmp.");
	struct buf tmp = {0};
	int fd = -1, rc = 0, err;
	char suffix[7];

	if (len > RECORD_MAX) {
		rc = fail(EXIT_IO, job, "the new record would be %zu bytes, over the %d-byte limit: %s",
			  len, RECORD_MAX, strerror(EFBIG));
		goto out;
	}
	for (int tries = 0; tries < 100; tries++) {
		random_suffix(suffix);
		buf_reset(&tmp);
		buf_adds(&tmp, prefix);
		buf_adds(&tmp, suffix);
		do
			fd = openat(reg->fd, tmp.data, O_WRONLY | O_CREAT | O_EXCL | ENTRY_FLAGS, 0666);
		while (fd < 0 && errno == EINTR);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		rc = fail_errno(errno, job, "create %s", reg_path(reg, tmp.data));
		goto out;
	}
	/* Any failure before the rename leaves the old record as it was. */
	if (write_full(fd, data, len) < 0) {
		err = errno;
		rc = fail_errno(err, job, "write %s", reg_path(reg, tmp.data));
		goto discard;
	}
	if (fsync_retry(fd) < 0) {
		err = errno;
		rc = fail_errno(err, job, "fsync %s", reg_path(reg, tmp.data));
		goto discard;
	}
	if (close_fd(fd) < 0) {
		fd = -1;
		err = errno;
		rc = fail_errno(err, job, "close %s", reg_path(reg, tmp.data));
		goto discard;
	}
	fd = -1;
	if (renameat(reg->fd, tmp.data, reg->fd, job) < 0) {
		err = errno;
		rc = fail_errno(err, job, "rename %s", reg_path(reg, tmp.data));
		goto discard;
	}
	rc = sync_dir(reg, job, "the new record is in place but may not be durable");
	goto out;
discard:
	if (fd >= 0)
		close_fd(fd);
	if (unlinkat(reg->fd, tmp.data, 0) < 0 && errno != ENOENT)
		warn(job, "cannot remove %s: %s", reg_path(reg, tmp.data), strerror(errno));
out:
	free(prefix);
	buf_free(&tmp);
	return rc;
}

int reg_remove(const struct registry *reg, const char *job, int sync)
{
	if (unlinkat(reg->fd, job, 0) < 0) {
		if (errno == ENOENT)
			return 0;
		return fail_errno(errno, job, "remove %s", reg_path(reg, job));
	}
	return sync ? reg_sync(reg, job) : 0;
}

int reg_sync(const struct registry *reg, const char *job)
{
	return sync_dir(reg, job, "the record is removed but that may not be durable");
}

void reg_remove_locks(const struct registry *reg, const char *job)
{
	static const char *const suffixes[] = { ".run", ".lock" };
	/* Run lock first: its holder is us, and the job lock still keeps
	 * every other writer out until both are gone.  This is tidying: a
	 * failure is reported, but the record is already removed. */
	for (int i = 0; i < 2; i++) {
		char *name = dot_name(job, suffixes[i]);
		if (unlinkat(reg->fd, name, 0) < 0 && errno != ENOENT)
			warn(job, "cannot remove %s: %s (the record is removed)",
			     reg_path(reg, name), strerror(errno));
		free(name);
	}
}

static int is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Is NAME exactly ".JOB.tmp." followed by six alphanumerics? */
static int is_temp_of(const char *name, const char *job)
{
	size_t jl = strlen(job);
	if (name[0] != '.' || strncmp(name + 1, job, jl) != 0 ||
	    strncmp(name + 1 + jl, ".tmp.", 5) != 0)
		return 0;
	const char *s = name + 1 + jl + 5;
	for (int i = 0; i < 6; i++)
		if (!is_alnum(s[i]))
			return 0;
	return s[6] == '\0';
}

static void remove_leftover(const struct registry *reg, const char *job, const char *name)
{
	if (unlinkat(reg->fd, name, 0) < 0 && errno != ENOENT)
		warn(job, "cannot remove leftover %s: %s", reg_path(reg, name), strerror(errno));
}

/* The registry as a DIR stream, on a descriptor of its own (readdir
 * needs one); NULL with errno set after the error is printed. */
static DIR *open_listing(const struct registry *reg, const char *job)
{
	int fd = openat(reg->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		int err = errno;
		if (fd >= 0)
			close_fd(fd);
		fail_errno(err, job, "read registry %s", reg->path);
		errno = err;
	}
	return dir;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void push(char ***list, size_t *count, const char *name)
{
	/* Grow in powers of two. */
	if ((*count & (*count - 1)) == 0)
		*list = xrealloc(*list, (*count ? *count * 2 : 1) * sizeof **list);
	(*list)[(*count)++] = xstrdup(name);
}

/* Call VISIT for every entry of the registry; returns an exit status. */
static int scan_dir(const struct registry *reg, const char *job,
		    void (*visit)(const char *name, void *ctx), void *ctx)
{
	DIR *dir = open_listing(reg, job);
	if (!dir)
		return errno_exit(errno);
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(dir);
		if (!e)
			break;
		visit(e->d_name, ctx);
	}
	int err = errno;
	closedir(dir);
	if (err)
		return fail_errno(err, job, "read registry %s", reg->path);
	return 0;
}

static void add_to_listing(const char *name, void *ctx)
{
	struct listing *l = ctx;
	if (name[0] == '.') {
		if (strstr(name, ".tmp."))
			push(&l->temps, &l->ntemps, name);
	} else if (valid_job_id(name)) {
		push(&l->jobs, &l->njobs, name);
	}
}

int reg_list(const struct registry *reg, struct listing *l)
{
	memset(l, 0, sizeof *l);
	if (reg->fd < 0)
		return 0;
	int rc = scan_dir(reg, NULL, add_to_listing, l);
	if (!rc && l->njobs > 1)
		qsort(l->jobs, l->njobs, sizeof *l->jobs, cmp_names);
	return rc;
}

void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->njobs; i++)
		free(l->jobs[i]);
	for (size_t i = 0; i < l->ntemps; i++)
		free(l->temps[i]);
	free(l->jobs);
	free(l->temps);
	memset(l, 0, sizeof *l);
}

struct sweep {
	const struct registry *reg;
	const char *job;
};

static void sweep_entry(const char *name, void *ctx)
{
	const struct sweep *sw = ctx;
	if (is_temp_of(name, sw->job))
		remove_leftover(sw->reg, sw->job, name);
}

int reg_sweep(const struct registry *reg, const char *job, const struct listing *l)
{
	struct sweep sw = { reg, job };
	if (l) {
		for (size_t i = 0; i < l->ntemps; i++)
			sweep_entry(l->temps[i], &sw);
		return 0;
	}
	/* No listing at hand: read the directory, keeping nothing but the
	 * matches, so a write costs little even in a large registry. */
	return scan_dir(reg, job, sweep_entry, &sw);
}
