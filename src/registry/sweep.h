/* sweep: what jobreg-clear removes besides a record (SPEC §4) — the job's
 * lock files (also those of a job that has no record: an orphan, left by
 * a clear killed halfway or a record removed by hand), and in a sweep its
 * leftover temp files, found in the sweep's listing. */
#ifndef JOBREG_SWEEP_H
#define JOBREG_SWEEP_H

#include "registry/listing.h"
#include "registry/registry.h"

/* Was JOB's record listed as a regular file (d_type DT_REG)? */
int sweep_listed_regular(const struct listing *l, const char *job);

/* Job lock held: unlink JOB's leftover temp files that L, a sweep's
 * listing, lists: ".JOB.tmp" and 0.1's ".JOB.tmp.XXXXXX"; without L, the
 * name ".JOB.tmp" (no directory is read).  Never opened or followed;
 * failures are warned of. */
void sweep_temps(const struct registry *reg, const char *job, const struct listing *l);

/* Job lock held, record removed (or none): remove JOB's lock files, the
 * run lock too when it is free of any run.  With L, a sweep's listing,
 * a run lock it did not list is not looked for.  Failures are warned of. */
void sweep_locks(const struct registry *reg, const char *job, const struct listing *l);

/* Remove the files of JOB's runs that go with its record: the history
 * and the logs (SPEC §3a, §3b); with L, a sweep's listing, only those it
 * lists.  Failures are warned of. */
void sweep_run_files(const struct registry *reg, const char *job, const struct listing *l);

/* Remove the lock files of JOB if it has no record: take its job lock at
 * once (if it is busy, the job is in use and keeps them), check that no
 * record appeared, and remove them (with L, its listed temp files too).
 * Returns an exit status. */
int sweep_orphan(const struct registry *reg, const char *job, const struct listing *l);

/* Every sweep (jobreg-clear -a, jobreg-set -a): remove the place files
 * and followers' locks that L, a listing with the places, lists and
 * nobody holds, each under its job's lock taken at once (busy: left for
 * the next sweep), whatever the sweep does to the record (SPEC §5a): a
 * waiter killed between the write that ends its turn and the unlink of
 * its place leaves one below wait_head. */
void sweep_places(const struct registry *reg, const struct listing *l);

#endif
