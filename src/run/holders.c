/* leftover: the processes that hold a job's run lock when no run is
 * recorded (SPEC §5 step 7).  A command may leave a background process
 * behind that inherited the run lock; the run has ended and is DONE, but
 * the next run must wait for it.  Both ends say who it is. */
#include "run/holders.h"
#include "registry/lock.h"
#include "util/msg.h"
#include "liveness/proc.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pids other than ours that hold the run lock DEV/INO (the lock
 * LOCKER took, unless 0), as "pid 4242" or "pids 4242, 4243"; 0 when
 * none is found. */
static int holders_text(dev_t dev, ino_t ino, long locker, struct buf *out)
{
	long *pids = NULL;
	size_t count = 0, shown = 0;
	if (lock_sharers(dev, ino, locker, 64, &pids, &count) < 0)
		return 0;
	for (size_t i = 0; i < count; i++) {
		if (pids[i] == (long)getpid())
			continue;
		buf_addf(out, "%s%ld", shown ? ", " : "", pids[i]);
		shown++;
	}
	free(pids);
	if (shown) {
		struct buf text = {0};
		buf_addf(&text, "%s %s", shown > 1 ? "pids" : "pid", out->data);
		buf_free(out);
		*out = text;
	}
	return shown > 0;
}

int run_lock_busy(const struct registry *reg, const char *job, long earlier)
{
	struct buf who = {0};
	char *name = reg_lock_name(job, RUN_LOCK);
	struct stat st;
	int rc, found = 0, left = 0;
	if (fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		left = earlier > 0 && holders_text(st.st_dev, st.st_ino, earlier, &who);
		found = left || holders_text(st.st_dev, st.st_ino, 0, &who);
	}
	if (found)
		rc = fail(EXIT_BUSY, job, "lock busy: %s held by %s%s", reg_path(reg, name),
			  who.data, left ? " (left behind by an earlier run)" : "");
	else
		rc = fail(EXIT_BUSY, job, "lock busy: %s", reg_path(reg, name));
	free(name);
	buf_free(&who);
	return rc;
}

/* A probe tells cheaply that nobody holds it; when it is busy, only the
 * sharers of our own lock are named, not a next run that took it. */
void run_lock_release(const struct registry *reg, const char *job, int *fd)
{
	struct stat held;
	int have = fstat(*fd, &held) == 0, probe = -1;
	reg_unlock(fd);
	if (!have || reg_lock(reg, job, RUN_LOCK, LOCK_EX, 0, LOCK_QUIET_BUSY, &probe) != EXIT_BUSY) {
		reg_unlock(&probe);
		return;
	}
	struct buf who = {0};
	if (holders_text(held.st_dev, held.st_ino, (long)getpid(), &who))
		warn(job, "the run lock is still held by %s (a process the command left behind);"
		     " the next run waits for it", who.data);
	buf_free(&who);
}
