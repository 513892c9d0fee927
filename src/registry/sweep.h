/* sweep: what jobreg-clear removes besides a record (SPEC §4): the job's
 * lock files (also an orphan's, with no record), and in a sweep its
 * leftover temp files.  L, where taken, is a sweep's listing (LIST_ALL). */
#ifndef JOBREG_SWEEP_H
#define JOBREG_SWEEP_H

#include "registry/listing.h"
#include "registry/registry.h"

/* Was JOB's record listed as a regular file (d_type DT_REG)? */
int sweep_listed_regular(const struct listing *l, const char *job);

/* Job lock held: unlink JOB's leftover temp files L lists (".JOB.tmp",
 * 0.1's ".JOB.tmp.XXXXXX"); without L, ".JOB.tmp".  Never opened or
 * followed; failures are warned of. */
void sweep_temps(const struct registry *reg, const char *job, const struct listing *l);

/* Job lock held, record removed (or none): remove JOB's lock files, the
 * run lock too when no run holds it (with L, only if L lists it).
 * Failures are warned of. */
void sweep_locks(const struct registry *reg, const char *job, const struct listing *l);

/* Remove JOB's history and logs (SPEC §3a, §3b); with L, those it lists.
 * Failures are warned of. */
void sweep_run_files(const struct registry *reg, const char *job, const struct listing *l);

/* Remove JOB's lock files (with L, its listed temp files too) if it has
 * no record: under its job lock taken at once (busy: in use, kept), no
 * record having appeared.  An exit status. */
int sweep_orphan(const struct registry *reg, const char *job, const struct listing *l);

/* Every sweep (SPEC §5a): remove the place files and followers' locks L
 * lists that nobody holds, each under its job's lock taken at once (busy:
 * left for the next sweep), whatever it does to the record: a waiter
 * killed between the write that ends its turn and the unlink of its place
 * leaves one below wait_head. */
void sweep_places(const struct registry *reg, const struct listing *l);

#endif
