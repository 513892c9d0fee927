/* holders: who holds a job's run lock (see holders.h); a background
 * process of the run that inherited it makes the next run wait. */
#include "run/holders.h"
#include "registry/lock.h"
#include "util/msg.h"
#include "liveness/proc.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void name_pids(struct buf *b, const long *pids, size_t n)
{
	buf_adds(b, n > 1 ? "pids " : "pid ");
	for (size_t i = 0; i < n; i++)
		buf_addf(b, "%s%ld", i ? ", " : "", pids[i]);
}

/* Why they hold it: all of them log relays, else left behind (and with
 * their relays), as said after an earlier run and after ours. */
static const char *const by_earlier[] = { "the log relay of an earlier run",
					  "left behind by an earlier run", "its log relay" };
static const char *const by_ours[] = { "the run's log relay", "a process the command left behind",
				       "the log relay" };

/* The pids but ours holding the run lock DEV/INO (the lock LOCKER took,
 * unless 0) into WHO, as name_pids() puts them; with WHY, in WORDS why:
 * " (RELAY)" when all are log relays (our program, not LOCKER), else
 * " (LEFT; RELAYS ITS)" or " (LEFT)".  Returns how many. */
static size_t holders_text(dev_t dev, ino_t ino, long locker, struct buf *who,
			   struct buf *why, const char *const words[3])
{
	long *pids = NULL, *relay;
	size_t count = 0, shown = 0, n_relays = 0;
	if (lock_sharers(dev, ino, locker, 64, &pids, &count) < 0)
		return 0;
	relay = xmalloc(count * sizeof *relay);
	for (size_t i = 0; i < count; i++) {
		if (pids[i] == (long)getpid())
			continue;
		if (pids[i] != locker && same_program(pids[i]))
			relay[n_relays++] = pids[i];
		pids[shown++] = pids[i];
	}
	if (shown)
		name_pids(who, pids, shown);
	if (why && shown && n_relays == shown) {
		buf_addf(why, " (%s)", words[0]);
	} else if (why && n_relays) {
		buf_addf(why, " (%s; ", words[1]);
		name_pids(why, relay, n_relays);
		buf_addf(why, " %s)", words[2]);
	} else if (why && shown) {
		buf_addf(why, " (%s)", words[1]);
	}
	free(pids);
	free(relay);
	return shown;
}

int run_lock_busy(const struct registry *reg, const char *job, long earlier)
{
	struct buf who = {0}, why = {0};
	char *name = reg_lock_name(job, RUN_LOCK);
	struct stat st;
	int left = earlier > 0 && fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		   holders_text(st.st_dev, st.st_ino, earlier, &who, &why, by_earlier);
	int found = left || run_lock_holders(reg, job, &who);
	int rc = fail(EXIT_BUSY, job, "lock busy: %s%s%s%s", reg_path(reg, name),
		      found ? " held by " : "", found ? who.data : "", why.data ? why.data : "");
	free(name);
	buf_free(&who);
	buf_free(&why);
	return rc;
}

/* A probe tells cheaply that nobody holds it; busy, only the sharers of
 * our own lock are named, not a next run's. */
void run_lock_release(const struct registry *reg, const char *job, int *fd)
{
	struct stat held;
	int have = fstat(*fd, &held) == 0, probe = -1;
	reg_unlock(fd);
	if (!have || reg_lock(reg, job, RUN_LOCK, LOCK_EX, 0, LOCK_QUIET_BUSY, &probe) != EXIT_BUSY) {
		reg_unlock(&probe);
		return;
	}
	struct buf who = {0}, why = {0};
	if (holders_text(held.st_dev, held.st_ino, (long)getpid(), &who, &why, by_ours))
		warn(job, "the run lock is still held by %s%s; the next run waits for it", who.data,
		     why.data);
	buf_free(&who);
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
	char *name = reg_lock_name(job, RUN_LOCK);
	struct stat st;
	size_t found = 0;
	if (fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		found = holders_text(st.st_dev, st.st_ino, 0, who, NULL, NULL);
	free(name);
	return found;
}
