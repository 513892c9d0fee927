/* holders: who holds a job's run lock when no run is recorded (see
 * holders.h): a background process that inherited it makes the next run
 * wait; both ends say who it is. */
#include "run/holders.h"
#include "registry/lock.h"
#include "util/msg.h"
#include "liveness/proc.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void name_pids(struct buf *b, const long *pids, size_t n)
{
	buf_adds(b, n > 1 ? "pids " : "pid ");
	for (size_t i = 0; i < n; i++)
		buf_addf(b, "%s%ld", i ? ", " : "", pids[i]);
}

/* The pids but ours holding the run lock DEV/INO (the lock LOCKER took,
 * unless 0) into WHO, those that are a log relay (our program, not
 * LOCKER) into RELAYS, as name_pids(); returns how many (*N_RELAYS). */
static size_t holders_text(dev_t dev, ino_t ino, long locker, struct buf *who,
			   struct buf *relays, size_t *n_relays)
{
	long *pids = NULL, *relay;
	size_t count = 0, shown = 0;
	*n_relays = 0;
	if (lock_sharers(dev, ino, locker, 64, &pids, &count) < 0)
		return 0;
	relay = xmalloc(count * sizeof *relay);
	for (size_t i = 0; i < count; i++) {
		if (pids[i] == (long)getpid())
			continue;
		if (pids[i] != locker && same_program(pids[i]))
			relay[(*n_relays)++] = pids[i];
		pids[shown++] = pids[i];
	}
	if (shown)
		name_pids(who, pids, shown);
	if (*n_relays)
		name_pids(relays, relay, *n_relays);
	free(pids);
	free(relay);
	return shown;
}

/* " (RELAY)" when all of WHO are RELAYS, else " (LEFT; RELAYS ITS)" or
 * " (LEFT)", into WHY. */
static void why_held(struct buf *why, const struct buf *who, const struct buf *relays,
		     size_t n_relays, const char *relay, const char *left, const char *its)
{
	if (n_relays && strcmp(who->data, relays->data) == 0)
		buf_addf(why, " (%s)", relay);
	else if (n_relays)
		buf_addf(why, " (%s; %s %s)", left, relays->data, its);
	else
		buf_addf(why, " (%s)", left);
}

int run_lock_busy(const struct registry *reg, const char *job, long earlier)
{
	struct buf who = {0}, relays = {0}, why = {0};
	char *name = reg_lock_name(job, RUN_LOCK);
	struct stat st;
	size_t n_relays = 0;
	int left = earlier > 0 && fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		   holders_text(st.st_dev, st.st_ino, earlier, &who, &relays, &n_relays);
	/* What left them: the run, or jobreg's own relay of its log. */
	if (left)
		why_held(&why, &who, &relays, n_relays, "the log relay of an earlier run",
			 "left behind by an earlier run", "its log relay");
	int found = left || run_lock_holders(reg, job, &who);
	int rc = fail(EXIT_BUSY, job, "lock busy: %s%s%s%s", reg_path(reg, name),
		      found ? " held by " : "", found ? who.data : "", why.data ? why.data : "");
	free(name);
	buf_free(&who);
	buf_free(&relays);
	buf_free(&why);
	return rc;
}

/* A probe tells cheaply that nobody holds it; busy, only the sharers of
 * our own lock are named, not a next run's. */
void run_lock_release(const struct registry *reg, const char *job, int *fd)
{
	struct stat held;
	int have = fstat(*fd, &held) == 0, probe = -1;
	size_t n_relays = 0;
	reg_unlock(fd);
	if (!have || reg_lock(reg, job, RUN_LOCK, LOCK_EX, 0, LOCK_QUIET_BUSY, &probe) != EXIT_BUSY) {
		reg_unlock(&probe);
		return;
	}
	struct buf who = {0}, relays = {0}, why = {0};
	if (holders_text(held.st_dev, held.st_ino, (long)getpid(), &who, &relays, &n_relays)) {
		why_held(&why, &who, &relays, n_relays, "the run's log relay",
			 "a process the command left behind", "the log relay");
		warn(job, "the run lock is still held by %s%s; the next run waits for it", who.data,
		     why.data);
	}
	buf_free(&who);
	buf_free(&relays);
	buf_free(&why);
}

size_t run_lock_leftovers(int fd, long **pids)
{
	struct stat st;
	size_t count = 0, kept = 0;
	*pids = NULL;
	if (fstat(fd, &st) < 0 || lock_sharers(st.st_dev, st.st_ino, (long)getpid(), 64, pids, &count) < 0)
		return 0;
	for (size_t i = 0; i < count; i++)
		if ((*pids)[i] != (long)getpid() && !same_program((*pids)[i]))
			(*pids)[kept++] = (*pids)[i];
	return kept;
}

size_t run_lock_holders(const struct registry *reg, const char *job, struct buf *who)
{
	struct buf relays = {0};
	char *name = reg_lock_name(job, RUN_LOCK);
	struct stat st;
	size_t found = 0, n_relays = 0;
	if (fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		found = holders_text(st.st_dev, st.st_ino, 0, who, &relays, &n_relays);
	free(name);
	buf_free(&relays);
	return found;
}
