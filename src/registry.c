#include "registry.h"
#include "atomic.h"
#include "entry.h"
#include "msg.h"
#include "record.h"

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

int valid_job_id(const char *id)
{
	size_t n = 0;
	if (id[0] == '.' || id[0] == '-' || id[0] == '\0')
		return 0;
	for (; id[n]; n++) {
		unsigned char ch = (unsigned char)id[n];
		if (n >= JOB_ID_MAX)
			return 0;
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
		      ch == '@' || ch == '+' || ch == '-'))
			return 0;
	}
	return 1;
}

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

char *reg_dot_name(const char *job, const char *suffix)
{
	struct buf name = {0};
	buf_addc(&name, '.');
	buf_adds(&name, job);
	buf_adds(&name, suffix);
	return name.data;
}

char *reg_lock_name(const char *job, enum lock_kind kind)
{
	return reg_dot_name(job, kind == JOB_LOCK ? ".lock" : ".run");
}

static int open_dir(const char *path)
{
	int fd, tries = 0;
	do
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && (errno == EINTR || stale_again(&tries)));
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

/* In a group-writable registry the files we create are made group-readable
 * and -writable as well (SPEC §1). */
static int note_sharing(struct registry *reg)
{
	struct stat st;
	if (fstat(reg->fd, &st) < 0)
		return fail_errno(errno, NULL, "stat registry %s", reg->path);
	reg->share_mode = entry_share_mode(st.st_mode);
	reg->dev = st.st_dev;
	reg->ino = st.st_ino;
	return 0;
}

/* Why a writer could not make or open the registry PATH: exit 73 when the
 * path cannot name a directory we could create (a missing parent that
 * cannot be made, a file or dangling symlink in the way, a name too long),
 * 77 for permission, 74 for the rest. */
static int cannot_create(const char *path, int err)
{
	struct stat st;
	if (err == ENOENT && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return fail(EXIT_CANTCREAT, NULL,
			    "cannot create registry %s: it is a symbolic link to a missing directory",
			    path);
	if (exit_for_create(err) == EXIT_CANTCREAT)
		return fail(EXIT_CANTCREAT, NULL, "cannot create registry %s: %s", path, strerror(err));
	return fail_errno(err, NULL, "open registry %s", path);
}

int reg_open(struct registry *reg, const char *path, int create)
{
	int rc;
	reg->path = xstrdup(path);
	reg->share_mode = 0;
	reg->fd = open_dir(path);
	if (reg->fd < 0 && errno == ENOENT && create) {
		char *copy = xstrdup(path);
		int made = make_dirs(copy);
		free(copy);
		if (made < 0) {
			rc = fail(EXIT_CANTCREAT, NULL, "cannot create registry %s: %s",
				  path, strerror(errno));
			goto failed;
		}
		reg->fd = open_dir(path);
	}
	if (reg->fd >= 0) {
		if ((rc = note_sharing(reg)) == 0)
			return 0;
		close_fd(reg->fd);
		reg->fd = -1;
		goto failed;
	}
	if (errno == ENOENT && !create)
		return 0;
	rc = create ? cannot_create(path, errno) : fail_errno(errno, NULL, "open registry %s", path);
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

int reg_same(const struct registry *reg)
{
	struct stat st;
	if (stat(reg->path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? reg->fd < 0 : 1;
	return reg->fd >= 0 && st.st_dev == reg->dev && st.st_ino == reg->ino;
}

int reg_follow(struct registry *reg, int create)
{
	/* A writer makes the registry that is missing now. */
	if (reg_same(reg) && (reg->fd >= 0 || !create))
		return 0;
	char *path = xstrdup(reg->path);
	reg_close(reg);
	int rc = reg_open(reg, path, create);
	free(path);
	return rc;
}

static int not_regular(const struct registry *reg, const char *job, const char *name)
{
	return fail(EXIT_PERM, job, "not a regular file: %s", reg_path(reg, name));
}

/* entry_open() that reports: 0 with *fd, or -1 in *fd when there is none;
 * else the exit status after the message. */
static int open_entry(const struct registry *reg, const char *job, const char *name,
		      int flags, int *fd, off_t *size)
{
	struct stat st;
	int rc = entry_open(reg->fd, name, flags, fd, &st);
	if (rc == ENTRY_NOT_REGULAR)
		return not_regular(reg, job, name);
	if (rc < 0)
		return errno == ENOENT ? 0 : fail_errno(errno, job, "open %s", reg_path(reg, name));
	if (size)
		*size = st.st_size;
	return 0;
}

/* One read of JOB's record on FD into DATA; -1 with errno on failure. */
static int read_record(int fd, off_t size, struct buf *data)
{
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
	if (n < 0)
		return -1;
	data->len = (size_t)n;
	data->data[n] = '\0';
	return 0;
}

int reg_read(const struct registry *reg, const char *job, struct buf *data, int *found)
{
	int fd = -1, tries = 0;
	*found = 0;
	buf_reset(data);
	if (reg->fd < 0)
		return 0;
	for (;;) {
		off_t size = 0;
		int rc = open_entry(reg, job, job, O_RDONLY, &fd, &size);
		if (rc || fd < 0)
			return rc;
		rc = read_record(fd, size, data);
		int err = errno;
		close_fd(fd);
		if (rc == 0)
			break;
		errno = err;
		if (!stale_again(&tries))
			return fail_errno(err, job, "read %s", reg_path(reg, job));
	}
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
	struct itimerval timer = {0};
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;   /* no SA_RESTART: the wait must return EINTR */
	double deadline = now_mono() + wait;
	alarm_rang = 0;
	sigaction(SIGALRM, &sa, &old_sa);
	/* A mask inherited with SIGALRM blocked would make the wait endless. */
	sigset_t alarm_set, old_mask;
	sigemptyset(&alarm_set);
	sigaddset(&alarm_set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alarm_set, &old_mask);
	timer.it_value.tv_sec = (time_t)wait;
	timer.it_value.tv_usec = (suseconds_t)((wait - (double)(time_t)wait) * 1e6);
	if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0)
		timer.it_value.tv_usec = 1;
	/* An alarm that rings before flock() has begun to wait interrupts
	 * nothing: it rings again every 10 ms until the wait sees it. */
	timer.it_interval.tv_usec = 10000;
	setitimer(ITIMER_REAL, &timer, NULL);

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
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	if (rc < 0)
		errno = err;
	return rc;
}

/* A planted non-regular entry at DIR/JOB is refused before a lock file is
 * made for it, so a refused set or clear leaves nothing behind. */
static int record_refused(const struct registry *reg, const char *job)
{
	struct stat st;
	if (fstatat(reg->fd, job, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		return not_regular(reg, job, job);
	return 0;
}

/* Open lock file NAME of JOB into *fd (its status in *st), or -1 in *fd
 * when it is missing and CREATE is 0.  An exclusive lock is opened
 * read-write where we may, since NFS maps flock(2) to POSIX locks, which
 * refuse LOCK_EX on a read-only descriptor; else, and for shared locks,
 * read-only.  An existing file is opened without O_CREAT, which
 * fs.protected_regular refuses on another user's file in a sticky
 * directory, even for root; a missing one is made with O_CREAT|O_EXCL,
 * and opened after all if someone else made it first. */
static int open_lock(const struct registry *reg, const char *job, const char *name,
		     int exclusive, int create, int *fd, struct stat *st)
{
	int mode = exclusive ? O_RDWR : O_RDONLY;
	/* Each round sees the file appear or vanish under us: rare, but a
	 * clear removing lock files could repeat it, so bound the rounds. */
	for (int round = 0; round < 100; round++) {
		int rc = entry_open(reg->fd, name, mode, fd, st);
		if (rc == 0)
			return 0;
		if (rc == ENTRY_NOT_REGULAR)
			return not_regular(reg, job, name);
		if ((errno == EACCES || errno == EROFS) && mode == O_RDWR) {
			mode = O_RDONLY;
			continue;
		}
		if (errno != ENOENT)
			return fail_errno(errno, job, "open %s", reg_path(reg, name));
		if (!create)
			return 0;
		if ((rc = record_refused(reg, job)) != 0)
			return rc;
		rc = entry_open(reg->fd, name, mode | O_CREAT | O_EXCL, fd, st);
		if (rc == 0 && entry_share(*fd, reg->share_mode) == 0)
			return 0;
		if (rc == 0) {
			/* Ours, and of no use to the other users: remove it.  A
			 * locker that opened it meanwhile re-checks the name. */
			int err = errno;
			(void)unlinkat(reg->fd, name, 0);
			close_fd(*fd);
			*fd = -1;
			return fail_errno(err, job, "chmod %s", reg_path(reg, name));
		}
		if (rc == ENTRY_NOT_REGULAR)
			return not_regular(reg, job, name);
		if (errno != EEXIST)
			return fail_errno(errno, job, "create %s", reg_path(reg, name));
	}
	return fail_errno(EEXIST, job, "create %s", reg_path(reg, name));
}

/* Take lock NAME of JOB (see reg_lock()). */
static int take_lock(const struct registry *reg, const char *job, const char *name,
		     int op, double wait, int flags, int *fd)
{
	double deadline = now_mono() + wait;
	int tries = 0;

	for (;;) {
		struct stat held, named;
		int rc = open_lock(reg, job, name, op == LOCK_EX, flags & LOCK_CREATE, fd, &held);
		if (rc || *fd < 0)
			return rc;
		double left = wait < 0 ? -1 : deadline - now_mono();
		if (wait >= 0 && left < 0)
			left = 0;
		if (flock_wait(*fd, op, left) < 0) {
			int err = errno;
			reg_unlock(fd);
			errno = err;
			if (stale_again(&tries))
				continue;
			if (err == EWOULDBLOCK && (flags & LOCK_QUIET_BUSY))
				return EXIT_BUSY;
			if (err == EWOULDBLOCK)
				return fail(EXIT_BUSY, job, "lock busy: %s (waited %g s)",
					    reg_path(reg, name), wait);
			return fail_errno(err, job, "lock %s", reg_path(reg, name));
		}
		/* A clear may have removed the file while we waited: then we
		 * hold a lock nobody else can see, so take the new one. */
		if (flags & LOCK_NO_RECHECK)
			return 0;
		if (fstatat(reg->fd, name, &named, AT_SYMLINK_NOFOLLOW) == 0) {
			if (named.st_dev == held.st_dev && named.st_ino == held.st_ino)
				return 0;
		} else if (errno != ENOENT && !stale_again(&tries)) {
			int err = errno;
			reg_unlock(fd);
			return fail_errno(err, job, "stat %s", reg_path(reg, name));
		}
		reg_unlock(fd);
	}
}

int reg_lock(const struct registry *reg, const char *job, enum lock_kind kind,
	     int op, double wait, int flags, int *fd)
{
	*fd = -1;
	if (reg->fd < 0)
		return 0;
	char *name = reg_lock_name(job, kind);
	int rc = take_lock(reg, job, name, op, wait, flags, fd);
	free(name);
	return rc;
}

int reg_probe_run_lock(const struct registry *reg, const char *job, int *fd,
		       unsigned long long *ino, int *busy)
{
	char *name = reg_lock_name(job, RUN_LOCK);
	struct stat st;
	int rc = 0, tries = 0;

	*fd = -1;
	*ino = 0;
	*busy = 0;
	while (reg->fd >= 0) {
		rc = open_lock(reg, job, name, 0, 0, fd, &st);
		if (rc || *fd < 0)
			break;
		*ino = (unsigned long long)st.st_ino;
		if (flock(*fd, LOCK_SH | LOCK_NB) == 0)
			break;
		int err = errno;
		reg_unlock(fd);
		if (err == EWOULDBLOCK) {
			*busy = 1;
			break;
		}
		errno = err;
		if (!stale_again(&tries)) {
			rc = fail_errno(err, job, "lock %s", reg_path(reg, name));
			break;
		}
	}
	free(name);
	return rc;
}

void reg_unlock(int *fd)
{
	if (*fd >= 0)
		close_fd(*fd);   /* closing drops the flock */
	*fd = -1;
}

void reg_remove_leftover(const struct registry *reg, const char *job, const char *name)
{
	if (unlinkat(reg->fd, name, 0) < 0 && errno != ENOENT)
		warn(job, "cannot remove leftover %s: %s", reg_path(reg, name), strerror(errno));
}

static int sync_dir(const struct registry *reg, const char *job, const char *after)
{
	if (fsync_retry(reg->fd) == 0)
		return 0;
	int err = errno;
	return fail(EXIT_IO, job, "fsync %s: %s (%s)", reg->path, strerror(err), after);
}

/* Create JOB's temp file TMP afresh into *fd.  Every writer of JOB holds
 * its job lock, so an existing TMP is a crashed writer's leftover: it is
 * unlinked (never opened or followed) and the create tried again. */
static int create_temp(const struct registry *reg, const char *job, const char *tmp, int *fd)
{
	struct stat st;
	for (int round = 0; round < 2; round++) {
		/* An ESTALE create is tried again already, as every open. */
		int rc = entry_open(reg->fd, tmp, O_WRONLY | O_CREAT | O_EXCL, fd, &st);
		if (rc == ENTRY_NOT_REGULAR)
			return not_regular(reg, job, tmp);
		if (rc == 0)
			return 0;
		if (errno != EEXIST)
			return fail_errno(errno, job, "create %s", reg_path(reg, tmp));
		if (unlinkat(reg->fd, tmp, 0) < 0 && errno != ENOENT)
			return errno == EISDIR ? not_regular(reg, job, tmp)
					       : fail_errno(errno, job, "remove leftover %s", reg_path(reg, tmp));
	}
	/* EEXIST again: someone writes without the lock. */
	return fail_errno(EEXIST, job, "create %s", reg_path(reg, tmp));
}

int reg_replace(const struct registry *reg, const char *job, const char *name,
		const char *data, size_t len)
{
	char *tmp = reg_dot_name(job, ".tmp");
	int is_record = strcmp(name, job) == 0, rc, fd, tries = 0;

	if (is_record && len > RECORD_MAX) {
		rc = fail(EXIT_IO, job, "the new record would be %zu bytes, over the %d-byte limit: %s",
			  len, RECORD_MAX, strerror(EFBIG));
		goto out;
	}
	for (;;) {
		if ((rc = create_temp(reg, job, tmp, &fd)) != 0)
			break;
		if (entry_share(fd, reg->share_mode) < 0) {
			int err = errno;
			close_fd(fd);
			rc = fail_errno(err, job, "chmod %s", reg_path(reg, tmp));
			reg_remove_leftover(reg, job, tmp);
			break;
		}
		struct atomic_failure f;
		if (atomic_replace(reg->fd, fd, tmp, name, data, len, &f) == 0)
			break;
		errno = f.err;
		if (strcmp(f.step, "fsync directory") == 0)
			rc = fail(EXIT_IO, job, "fsync %s: %s (%s is in place but may not be durable)",
				  reg->path, strerror(f.err),
				  is_record ? "the new record" : reg_path(reg, name));
		else if (!f.tmp_err && stale_again(&tries))
			continue;
		else
			rc = fail_errno(f.err, job, "%s %s", f.step, reg_path(reg, tmp));
		if (f.tmp_err)
			warn(job, "cannot remove leftover %s: %s", reg_path(reg, tmp),
			     strerror(f.tmp_err));
		break;
	}
out:
	free(tmp);
	return rc;
}

int reg_remove(const struct registry *reg, const char *job, int sync)
{
	int tries = 0;
	while (unlinkat(reg->fd, job, 0) < 0) {
		if (errno == ENOENT)
			return 0;
		if (!stale_again(&tries))
			return fail_errno(errno, job, "remove %s", reg_path(reg, job));
	}
	return sync ? reg_sync(reg, job) : 0;
}

int reg_sync(const struct registry *reg, const char *job)
{
	return sync_dir(reg, job, "the record is removed but that may not be durable");
}
