/* wait: the one wait of jobreg (SPEC §5: get --wait, dispatch --wait and
 * --once) — until a condition holds for every job of a list, or a
 * deadline passes.  The caller holds no job lock while it waits.
 *
 * It notices a change within 100 ms and does not spin.  It sleeps in
 * poll(2) on:
 * - inotify of the registry directory: a record replaced (rename),
 *   created, removed (clear), rewritten in place or chmod'ed; and the close
 *   of the last descriptor of a run lock DIR/.JOB.run, which the kernel
 *   reports also when its holders were killed with kill -9 (IN_CLOSE_WRITE
 *   for a holder that opened it read-write, as jobreg-dispatch does;
 *   IN_CLOSE_NOWRITE for a read-only holder — but also for every reader's
 *   probe, ours included, so that one re-checks at most every 100 ms and
 *   ignores the closes that come while it checks, its own probes among
 *   them — a read-only holder dying in those microseconds is missed);
 * - for wait_following(), the writes to one file of DIR (IN_MODIFY), its
 *   creation, rename and removal;
 * - a pidfd of a RUNNING record's pid, where pidfd_open(2) works;
 * - timers: the deadline, a record's `expires` (judged again at least once
 *   a second, for a stepped clock), one a second to follow DIR by name, a
 *   follow-up 100 ms after a
 *   run lock's close (__fput() queues the event just before it drops the
 *   lock), and 100 ms polls where nothing else will do: a pid owner with no
 *   pidfd, a registry that does not exist yet and whose parent cannot be
 *   watched, no inotify (ENOSYS, EMFILE, ENOSPC), or a network filesystem
 *   (NFS, SMB, Ceph, FUSE, ...) whose changes on other hosts inotify never
 *   sees.
 * Every wake-up is only a hint: the states always come from jobstate_load(),
 * and the condition is checked again after each source is armed, so no
 * wake-up is lost.  All descriptors are close-on-exec and closed on return. */
#ifndef JOBREG_WAIT_H
#define JOBREG_WAIT_H

#include <stddef.h>

#include "registry/registry.h"
#include "liveness/jobstate.h"

/* Is job JOBS[INDEX], in state ST, where the caller wants it?  Called for
 * every job at each check, in order. */
typedef int (*wait_cond)(void *ctx, size_t index, const struct job_state *st);

/* Wait until COND holds for every job at one check.  DEADLINE is a
 * now_mono() time (< 0: none).  REG follows DIR by name: if DIR is
 * removed, renamed, replaced or (as a symlink) re-pointed, the wait goes
 * on in what DIR names now, noticed within a second, and REG is left
 * open on that (fd -1 when there is none).  Returns 0, EXIT_BUSY (75, silently) when
 * the deadline passes first, or the status of an error (printed; a
 * corrupt record is reported as jobstate_corrupt() does). */
int wait_until(struct registry *reg, char *const *jobs, size_t njobs,
	       wait_cond cond, void *ctx, double deadline);

/* wait_until() for the one job JOB, with no deadline, checking also
 * whenever DIR's entry FILE is written, made, renamed or removed
 * (jobreg-get --log --follow: FILE is the log, and COND prints what came). */
int wait_following(struct registry *reg, const char *job, const char *file, wait_cond cond,
		   void *ctx);

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
 * renamed, and
 * 100 ms after that once more (the kernel reports a close just before
 * it drops its locks), or until UNTIL (a now_mono() time); a poll every
 * 100 ms where inotify cannot tell (none, a network filesystem). */
void wait_watch(struct entry_watch *w, const char *prefix, double until);
void wait_watch_close(struct entry_watch *w);

#endif
