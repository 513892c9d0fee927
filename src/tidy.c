/* tidy: the lock files and leftovers a clear removes (SPEC §4).
 *
 * The run lock is taken without the re-check every other locker makes.
 * Holding the job lock, the name .JOB.run can only change under us by an
 * unlink of a file nobody ever locked (open_lock() removing its own new
 * file after a failed chmod) followed by a create by a dispatcher that
 * waits for the run lock without the job lock.  Such a new file was made
 * after we took the job lock, and every run takes its run lock holding
 * the job lock: no run, and no process left behind by one, holds it.  So
 * unlinking the name removes nothing a run relies on, and "the run lock
 * is free" stays true of every inode a run could hold. */
#include "tidy.h"
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_names(char **names, size_t n)
{
	if (n > 1)   /* an empty list is NULL, which qsort must not get */
		qsort(names, n, sizeof *names, cmp_names);
}

void tidy_index(struct listing *l)
{
	sort_names(l->temps, l->ntemps);
	sort_names(l->runs, l->nruns);
}

/* The first of the N sorted NAMES not below KEY. */
static size_t lower_bound(char *const *names, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(names[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int listed(char *const *names, size_t n, const char *key)
{
	size_t i = lower_bound(names, n, key);
	return i < n && strcmp(names[i], key) == 0;
}

int tidy_listed_regular(const struct listing *l, const char *job)
{
	size_t i = lower_bound(l->jobs, l->njobs, job);
	return i < l->njobs && strcmp(l->jobs[i], job) == 0 && l->regular[i];
}

int tidy_listed_run(const struct listing *l, const char *job)
{
	char *name = reg_lock_name(job, RUN_LOCK);
	int there = listed(l->runs, l->nruns, name);
	free(name);
	return there;
}

/* After the prefix ".JOB.tmp": nothing (ours), or "." and mkstemp's six
 * letters and digits (0.1's). */
static int temp_suffix(const char *s)
{
	if (!*s)
		return 1;
	if (*s++ != '.' || strlen(s) != 6)
		return 0;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && !(*s >= '0' && *s <= '9'))
			return 0;
	return 1;
}

void tidy_temps(const struct registry *reg, const char *job, const struct listing *l)
{
	struct buf prefix = {0};
	buf_addf(&prefix, ".%s.tmp", job);
	/* Every candidate begins with the prefix: they sort together. */
	for (size_t i = lower_bound(l->temps, l->ntemps, prefix.data); i < l->ntemps; i++) {
		const char *name = l->temps[i];
		if (strncmp(name, prefix.data, prefix.len) != 0)
			break;
		if (temp_suffix(name + prefix.len))
			reg_remove_leftover(reg, job, name);
	}
	buf_free(&prefix);
}

int tidy_run_lock(const struct registry *reg, const char *job, int *fd)
{
	return reg_lock(reg, job, RUN_LOCK, LOCK_EX, 0, LOCK_QUIET_BUSY | LOCK_NO_RECHECK, fd);
}

void tidy_remove_locks(const struct registry *reg, const char *job, int run)
{
	/* Run lock first: its holder is us, and the job lock still keeps
	 * every other writer out until both are gone.  This is tidying: a
	 * failure is reported, but the record is already removed. */
	for (int kind = run ? RUN_LOCK : JOB_LOCK; kind >= JOB_LOCK; kind--) {
		char *name = reg_lock_name(job, (enum lock_kind)kind);
		if (unlinkat(reg->fd, name, 0) < 0 && errno != ENOENT)
			warn(job, "cannot remove %s: %s (the record is removed)",
			     reg_path(reg, name), strerror(errno));
		free(name);
	}
}
