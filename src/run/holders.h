/* holders: naming the processes that hold a job's run lock although no
 * run is recorded — the leftovers of an ended run (SPEC §5 step 7), or
 * anyone's flock.  Pids come from /proc (proc.h), where we may look. */
#ifndef JOBREG_HOLDERS_H
#define JOBREG_HOLDERS_H

#include "registry/registry.h"

/* The run lock of JOB stayed busy for -w: print "lock busy: PATH held by
 * pid P", adding "(left behind by an earlier run)" when the holders share
 * the lock that EARLIER (the DONE run's dispatcher, 0: none) took.
 * Returns 75. */
int run_lock_busy(const struct registry *reg, const char *job, long earlier);

/* After DONE: release our run lock *FD, then, if processes of the run
 * still hold it, warn "the run lock is still held by pid P (a process
 * the command left behind); the next run waits for it". */
void run_lock_release(const struct registry *reg, const char *job, int *fd);

/* The pids of this host that hold the run lock FD, but ours and our log
 * relays' (logrelay.h), into *PIDS (malloc'd); returns how many. */
size_t run_lock_leftovers(int fd, long **pids);

/* The pids other than ours that hold JOB's run lock, where this host can
 * see them, into WHO as "pid 4242" or "pids 4242, 4243"; returns how many
 * (0: none seen, WHO left empty). */
size_t run_lock_holders(const struct registry *reg, const char *job, struct buf *who);

/* "pid 4242" or "pids 4242, 4243", of the N pids PIDS, onto B. */
void name_pids(struct buf *b, const long *pids, size_t n);

#endif
