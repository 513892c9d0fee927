/* holders: who holds a job's run lock although no run is recorded — what
 * an ended run left (SPEC §5 step 7), or anyone's flock; pids from /proc
 * (proc.h), where we may look. */
#ifndef JOBREG_HOLDERS_H
#define JOBREG_HOLDERS_H

#include "registry/registry.h"

/* JOB's run lock stayed busy for -w: "lock busy: PATH held by pid P",
 * "(left behind by an earlier run)" when they share the lock EARLIER (the
 * DONE run's dispatcher, 0: none) took.  Returns 75. */
int run_lock_busy(const struct registry *reg, const char *job, long earlier);

/* After DONE: release our run lock *FD, then, if processes of the run
 * still hold it, warn "the run lock is still held by pid P (a process
 * the command left behind); the next run waits for it". */
void run_lock_release(const struct registry *reg, const char *job, int *fd);

/* The pids of this host that hold the run lock FD, but ours and our log
 * relays' (logrelay.h), into *PIDS (malloc'd); returns how many. */
size_t run_lock_leftovers(int fd, long **pids);

/* The pids but ours this host sees holding JOB's run lock, into WHO as
 * name_pids() puts them; returns how many (0: WHO left empty). */
size_t run_lock_holders(const struct registry *reg, const char *job, struct buf *who);

/* "pid 4242" or "pids 4242, 4243", of the N pids PIDS, onto B. */
void name_pids(struct buf *b, const long *pids, size_t n);

#endif
