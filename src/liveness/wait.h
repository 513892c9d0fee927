/* wait: the one wait of jobreg (SPEC §5: get --wait, dispatch --wait and
 * --once): until the caller finds the jobs of a list as it wants them, or
 * a deadline passes.  The caller holds no job lock while it waits.
 *
 * It notices a change within 100 ms and does not spin: it sleeps in poll(2)
 * on inotify of DIR (the records; the last close of a run lock
 * DIR/.JOB.run, reported even after kill -9), a pidfd of a RUNNING
 * record's pid, and timers (the deadline; `expires` and lateness, judged
 * again at least once a second for a stepped clock; DIR followed by name
 * once a second); it polls every 100 ms where none of these tells: no
 * inotify or pidfd, a DIR not there whose parent cannot be watched, or a
 * network filesystem, whose changes on other hosts inotify never sees.
 * A read-only holder's last close of a run lock looks like every reader's
 * probe, ours included: those re-check at most every 100 ms and the closes
 * during our own check are ignored, so a read-only holder dying in those
 * microseconds is missed (jobreg-dispatch holds it read-write).
 * Every wake-up is only a hint: the states always come from jobstate_load(),
 * judged only after the sources are armed, so no wake-up is lost.  All
 * descriptors are close-on-exec and closed at the end. */
#ifndef JOBREG_WAIT_H
#define JOBREG_WAIT_H

#include <stddef.h>

#include "registry/registry.h"
#include "liveness/jobstate.h"

/* The wait for jobs: the caller looks, judges, sleeps, looks again.  For
 * the NJOBS jobs JOBS of REG and, with FILE, the writes of DIR's entry FILE
 * (get --log --follow).  REG follows DIR by name: if DIR is removed,
 * renamed, replaced or re-pointed, the wait goes on, within a second, in
 * what DIR names now, and REG is left open on that (fd -1: none). */
struct waiter;
struct waiter *wait_jobs_open(struct registry *reg, char *const *jobs, size_t njobs,
			      const char *file);
/* Each job's state into (*STATES)[i], kept until the next look, with the
 * sources they call for armed.  Returns an exit status, the error printed
 * (a corrupt record too); a state then left unread has no record. */
int wait_jobs_look(struct waiter *w, const struct job_state **states);
/* Sleep until a change may have come (0: look again) or DEADLINE, a
 * now_mono() time (< 0: none), passes: EXIT_BUSY (75, silently); or the
 * status of an error (printed). */
int wait_jobs_sleep(struct waiter *w, double deadline);
void wait_jobs_close(struct waiter *w);

/* The one blocking flock: flock(FD, OP) until granted, UNTIL (a now_mono()
 * time, < 0: none) or a second passes, so that the caller looks for a
 * change (a --replace, DIR renamed) at least once a second, and calls
 * again.  0 granted, EXIT_BUSY not yet, or -1 with errno. */
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
