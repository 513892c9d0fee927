/* sweep: see sweep.h.
 *
 * The run lock is taken without the re-check every other locker makes.
 * Holding the job lock, .JOB.run can only change under us by the unlink
 * of a file nobody ever locked (open_lock() after a failed chmod), then a
 * create by a dispatcher waiting for the run lock without the job lock.
 * Every run takes its run lock holding the job lock, so no run, nor any
 * process it left, holds that new file: unlinking the name removes
 * nothing a run relies on, and "the run lock is free" stays true of every
 * inode a run could hold. */
#include "registry/sweep.h"
#include "registry/line.h"
#include "registry/lock.h"
#include "util/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int sweep_listed_regular(const struct listing *l, const char *job)
{
	return listing_has(l->jobs, l->njobs, job) && !listing_has(l->unsure, l->nunsure, job);
}

/* After the prefix ".JOB.tmp": nothing (ours), or "." and mkstemp's six
 * letters and digits (0.1's). */
static int temp_suffix(const char *s)
{
	return !*s || (s[0] == '.' && strlen(s + 1) == 6 && strspn(s + 1, ALNUM) == 6);
}

void sweep_temps(const struct registry *reg, const char *job, const struct listing *l)
{
	char *prefix = reg_dot_name(job, ".tmp");
	size_t n = strlen(prefix);
	if (!l) {
		reg_remove_leftover(reg, job, prefix);
		free(prefix);
		return;
	}
	/* Every candidate begins with the prefix: they sort together. */
	for (size_t i = listing_lower_bound(l->temps, l->ntemps, prefix); i < l->ntemps; i++) {
		const char *name = l->temps[i];
		if (strncmp(name, prefix, n) != 0)
			break;
		if (temp_suffix(name + n))
			reg_remove_leftover(reg, job, name);
	}
	free(prefix);
}

/* Unlink NAME of JOB; a failure is warned of, saying AFTER what, and
 * returns -1.  Unless LISTED, a missing entry is not unlinked (a
 * read-only filesystem refuses even that). */
static int remove_file(const struct registry *reg, const char *job, const char *name,
		       const char *after, int listed)
{
	struct stat st;
	if (!listed && fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (unlinkat(reg->fd, name, 0) == 0 || errno == ENOENT)
		return 0;
	warn(job, "cannot remove %s: %s (%s)", reg_path(reg, name), strerror(errno), after);
	return -1;
}

/* The run files of JOB (with L, those it lists); stops at a failure. */
static int run_files_after(const struct registry *reg, const char *job,
			   const struct listing *l, const char *after)
{
	static const char *const suffixes[] = { ".history", ".log", ".faillog", ".newlog" };
	int rc = 0;
	for (size_t i = 0; !rc && i < sizeof suffixes / sizeof suffixes[0]; i++) {
		char *name = reg_dot_name(job, suffixes[i]);
		if (!l || listing_has(l->runfiles, l->nrunfiles, name))
			rc = remove_file(reg, job, name, after, l != NULL);
		free(name);
	}
	return rc;
}

void sweep_run_files(const struct registry *reg, const char *job, const struct listing *l)
{
	(void)run_files_after(reg, job, l, "the record is removed");
}

/* sweep_locks(), saying AFTER what a failure came.  With the run lock
 * free too, nobody uses the lock files, and lockers re-check the inode
 * after locking: removing them is safe.  A run lock made since L (by a
 * run started after it) is left, costing only a file: it is never
 * unlinked without being held. */
static void locks_after(const struct registry *reg, const char *job, const struct listing *l,
			const char *after)
{
	char *run_name = reg_lock_name(job, RUN_LOCK);
	int listed = !l || listing_has(l->runs, l->nruns, run_name), run = -1, rc = 0;
	free(run_name);
	if (listed && reg_lock(reg, job, RUN_LOCK, LOCK_EX, 0, LOCK_QUIET_BUSY | LOCK_NO_RECHECK,
			       &run) != 0)
		return;
	/* The run lock first, when held: the job lock keeps every writer out
	 * until both are gone.  Tidying: a failure is reported once. */
	for (int kind = run >= 0 ? RUN_LOCK : JOB_LOCK; !rc && kind >= JOB_LOCK; kind--) {
		char *name = reg_lock_name(job, (enum lock_kind)kind);
		rc = remove_file(reg, job, name, after, 1);
		free(name);
	}
	reg_unlock(&run);
}

void sweep_locks(const struct registry *reg, const char *job, const struct listing *l)
{
	locks_after(reg, job, l, "the record is removed");
}

int sweep_orphan(const struct registry *reg, const char *job, const struct listing *l)
{
	struct stat st;
	int lock = -1;
	/* Without L: only if one is there (a run lock alone gets a job lock
	 * for the while). */
	if (!l) {
		char *name = reg_lock_name(job, RUN_LOCK), *job_lock = reg_lock_name(job, JOB_LOCK);
		int any = fstatat(reg->fd, job_lock, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
			  fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
		free(name);
		free(job_lock);
		if (!any)
			return 0;
	}
	int rc = reg_lock(reg, job, JOB_LOCK, LOCK_EX, 0, LOCK_CREATE | LOCK_QUIET_BUSY, &lock);
	if (rc == EXIT_BUSY)
		return 0;   /* in use: not an orphan now */
	if (!rc && lock >= 0 && fstatat(reg->fd, job, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT) {
		if (l)
			sweep_temps(reg, job, l);
		if (run_files_after(reg, job, l, "there is no record") == 0)
			locks_after(reg, job, l, "there is no record");
	}
	reg_unlock(&lock);
	return rc;
}

void sweep_places(const struct registry *reg, const struct listing *l)
{
	for (size_t i = 0; i < l->nplaces; i++) {
		char *job = listing_place_job(l->places[i]);
		int lock = -1;
		/* (No job lock file: nobody is joining that line.) */
		if (job && reg_lock(reg, job, JOB_LOCK, LOCK_EX, 0, LOCK_QUIET_BUSY, &lock) == 0)
			(void)line_sweep_file(reg, l->places[i]);
		reg_unlock(&lock);
		free(job);
	}
}
