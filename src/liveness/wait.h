/* wait: the one wait of jobreg (SPEC §5: get --wait, dispatch --wait and
 * --once): until the caller finds the jobs of a list as it wants them, or
 * a deadline passes.  The caller holds no job lock while it waits.
 *
 * It notices a change within 100 ms and does not spin.  It sleeps in
 * poll(2) on:
 * - inotify of DIR: a record replaced, created, removed, rewritten in place
 *   or chmod'ed; the last close of a run lock DIR/.JOB.run, reported also
 *   when its holders were killed with kill -9 (IN_CLOSE_WRITE for a
 *   read-write holder, as jobreg-dispatch is; IN_CLOSE_NOWRITE for a
 *   read-only one, but also for every reader's probe, ours included, so it
 *   re-checks at most every 100 ms and ignores the closes that come while
 *   it checks: a read-only holder dying in those microseconds is missed);
 * - with a FILE, its writes, creation, rename and removal;
 * - a pidfd of a RUNNING record's pid, where pidfd_open(2) works;
 * - timers: the deadline; a record's `expires` and lateness (judged again
 *   at least once a second, for a stepped clock); one a second to follow
 *   DIR by name; a follow-up 100 ms after a run lock's close (__fput()
 *   queues the event just before it drops the lock); and 100 ms polls
 *   where nothing else tells: a pid owner with no pidfd, a DIR not there
 *   whose parent cannot be watched, no inotify (ENOSYS, EMFILE, ENOSPC), or
 *   a network filesystem (NFS, SMB, Ceph, FUSE, ...) whose changes on
 *   other hosts inotify never sees.
 * Every wake-up is only a hint: the states always come from jobstate_load(),
 * judged only after the sources are armed, so no wake-up is lost.  All
 * descriptors are close-on-exec and closed at the end. */
#ifndef JOBREG_WAIT_H
#define JOBREG_WAIT_H

#include <stddef.h>

#include "registry/registry.h"
#include "liveness/jobstate.h"

/* The wait for jobs: the caller looks, judges, sleeps, looks again.
 * Opened for the NJOBS jobs JOBS of REG and, with FILE, for the writes of
 * DIR's entry FILE too (jobreg-get --log --follow: its log).  REG follows
 * DIR by name: if DIR is removed, renamed, replaced or (as a symlink)
 * re-pointed, the wait goes on in what DIR names now, noticed within a
 * second, and REG is left open on that (fd -1 when there is none). */
struct waiter;
struct waiter *wait_jobs_open(struct registry *reg, char *const *jobs, size_t njobs,
			      const char *file);
/* Each job's state into (*STATES)[i], kept until the next look, with the
 * sources those states call for armed.  Returns an exit status (the error
 * printed; a corrupt record reported as jobstate_corrupt() does; a state
 * then left unread has no record). */
int wait_jobs_look(struct waiter *w, const struct job_state **states);
/* Sleep until a change may have come (0: look again) or DEADLINE, a
 * now_mono() time (< 0: none), passes: EXIT_BUSY (75, silently); or the
 * status of an error (printed). */
int wait_jobs_sleep(struct waiter *w, double deadline);
void wait_jobs_close(struct waiter *w);

/* The one blocking flock: flock(FD, OP) until it is granted, UNTIL (a
 * now_mono() time, < 0: none) passes or a second has, whichever comes
 * first, so that its caller notices a change (a --replace, DIR renamed)
 * at least once a second: it looks, and calls again.  0 granted,
 * EXIT_BUSY not yet, or -1 with errno. */
int wait_lock(int fd, int op, double until);

/* The wait for a change of some files of DIR (a slot group's slots and
 * places, SPEC §5b): the caller looks, waits, looks again.  Opened before
 * its first look, so that no change after it is missed. */
struct entry_watch {
	int ino;            /* inotify of DIR, or -1: a poll */
	double followup;    /* a look after a close, or -1 */
};
void wait_watch_open(struct entry_watch *w, const struct registry *reg);
/* Sleep until an entry of DIR whose name begins with PREFIX is closed
 * after writing (also by a holder killed with kill -9), removed or
 * renamed, and 100 ms after that once more (the kernel reports a close
 * just before it drops its locks), or until UNTIL (a now_mono() time); a
 * poll every 100 ms where inotify cannot tell (none, a network filesystem). */
void wait_watch(struct entry_watch *w, const char *prefix, double until);
void wait_watch_close(struct entry_watch *w);

#endif
