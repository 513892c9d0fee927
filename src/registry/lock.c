#include "registry/lock.h"
#include "registry/openat.h"
#include "util/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarm_rang;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_rang = 1;
}

/* A one-shot SIGALRM interrupts the wait (no polling), as flock(1) does. */
int flock_wait(int fd, int op, double wait)
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

	/* No SA_RESTART: the wait must return EINTR. */
	struct sigaction sa = { .sa_handler = on_alarm }, old_sa;
	struct itimerval timer = {0};
	sigemptyset(&sa.sa_mask);
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

/* Open lock file NAME of JOB into *fd (its status in *st), or -1 in *fd
 * when it is missing and CREATE is 0.  EXCLUSIVE opens read-write where
 * we may: NFS maps flock(2) to POSIX locks, which refuse LOCK_EX on a
 * read-only descriptor.  An existing file is opened without O_CREAT, which
 * fs.protected_regular refuses on another user's file in a sticky
 * directory, even for root; a missing one is made O_CREAT|O_EXCL. */
static int open_lock(const struct registry *reg, const char *job, const char *name,
		     int exclusive, int create, int *fd, struct stat *st)
{
	int mode = exclusive ? O_RDWR : O_RDONLY;
	/* Each round sees the file appear or vanish under us (a clear
	 * removing lock files could repeat it): bounded. */
	for (int round = 0; round < 100; round++) {
		int rc = entry_open(reg->fd, name, mode, fd, st);
		if (rc == 0)
			return 0;
		if (rc == ENTRY_NOT_REGULAR)
			return reg_not_regular(reg, job, name);
		if ((errno == EACCES || errno == EROFS) && mode == O_RDWR) {
			mode = O_RDONLY;
			continue;
		}
		if (errno != ENOENT)
			return fail_errno(errno, job, "open %s", reg_path(reg, name));
		if (!create)
			return 0;
		/* A planted non-regular entry at DIR/JOB is refused before a
		 * lock file is made for it: a refused call leaves nothing. */
		if (fstatat(reg->fd, job, st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st->st_mode))
			return reg_not_regular(reg, job, job);
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
			return reg_not_regular(reg, job, name);
		if (errno != EEXIST)
			return reg_cannot_write(reg, job, errno);
	}
	return fail_errno(EEXIST, job, "create %s", reg_path(reg, name));
}

/* reg_lock_entry(), *HELD the status of the file last opened (untouched
 * if none was). */
static int lock_entry(const struct registry *reg, const char *job, const char *name,
		      int op, double wait, int flags, int *fd, struct stat *held)
{
	double deadline = now_mono() + wait;
	int tries = 0;

	*fd = -1;
	if (reg->fd < 0)
		return 0;
	for (;;) {
		struct stat named;
		int rc = open_lock(reg, job, name, op == LOCK_EX, flags & LOCK_CREATE, fd, held);
		if (rc || *fd < 0)
			return rc;
		double left = wait < 0 ? -1 : deadline - now_mono();
		if (wait >= 0 && left < 0)
			left = 0;
		if (flock_wait(*fd, op, left) < 0) {
			int err = errno;
			reg_unlock(fd);
			errno = err;
			if (estale_again(&tries))
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
			if (named.st_dev == held->st_dev && named.st_ino == held->st_ino)
				return 0;
		} else if (errno != ENOENT && !estale_again(&tries)) {
			int err = errno;
			reg_unlock(fd);
			return fail_errno(err, job, "stat %s", reg_path(reg, name));
		}
		reg_unlock(fd);
	}
}

int reg_lock_entry(const struct registry *reg, const char *job, const char *name,
		   int op, double wait, int flags, int *fd)
{
	struct stat held;
	return lock_entry(reg, job, name, op, wait, flags, fd, &held);
}

int reg_lock(const struct registry *reg, const char *job, enum lock_kind kind,
	     int op, double wait, int flags, int *fd)
{
	char *name = reg_lock_name(job, kind);
	int rc = reg_lock_entry(reg, job, name, op, wait, flags, fd);
	free(name);
	return rc;
}

int reg_probe_run_lock(const struct registry *reg, const char *job, int *fd,
		       unsigned long long *ino, int *busy)
{
	char *name = reg_lock_name(job, RUN_LOCK);
	struct stat st = {0};
	int rc = lock_entry(reg, job, name, LOCK_SH, 0, LOCK_QUIET_BUSY | LOCK_NO_RECHECK, fd, &st);
	free(name);
	*ino = (unsigned long long)st.st_ino;
	*busy = rc == EXIT_BUSY;
	return *busy ? 0 : rc;
}

int reg_open_lock(const struct registry *reg, const char *job, const char *name,
		  int exclusive, int create, int *fd)
{
	struct stat st;
	*fd = -1;
	return reg->fd < 0 ? 0 : open_lock(reg, job, name, exclusive, create, fd, &st);
}

void reg_unlock(int *fd)
{
	if (*fd >= 0)
		close_fd(*fd);   /* closing drops the flock */
	*fd = -1;
}
