/* tidy: what jobreg-clear removes besides a record (SPEC §4) — the job's
 * two lock files, and in a sweep its leftover temp files, found in the
 * sweep's listing.  Call every function holding the job lock. */
#ifndef JOBREG_TIDY_H
#define JOBREG_TIDY_H

#include "registry.h"

/* Sort L's temps and runs for the lookups below. */
void tidy_index(struct listing *l);
/* Was JOB's record listed as a regular file (d_type DT_REG)? */
int tidy_listed_regular(const struct listing *l, const char *job);
/* Was JOB's run lock listed? */
int tidy_listed_run(const struct listing *l, const char *job);

/* Unlink JOB's leftover temp files that L lists: ".JOB.tmp" and 0.1's
 * ".JOB.tmp.XXXXXX" (never opened or followed).  Failures are warned. */
void tidy_temps(const struct registry *reg, const char *job, const struct listing *l);

/* Take JOB's run lock at once (LOCK_EX|LOCK_NB, no re-check: see
 * tidy.c); 0 with *fd, -1 in *fd when there is none; 75 quietly when
 * busy; else the error's status after its message. */
int tidy_run_lock(const struct registry *reg, const char *job, int *fd);

/* Remove JOB's lock files: the run lock too when RUN (we hold it, free
 * of any run), then the job lock.  A failure is only warned of. */
void tidy_remove_locks(const struct registry *reg, const char *job, int run);

#endif
