/* cancel: the canceller's side of a cancel (SPEC §2 Cancelled runs, §5a
 * Cancelling) — the request written into the record of a live
 * dispatched run, fenced by the run's number; the run's dispatcher woken
 * at once where this host can tell it is that process; and the wait for
 * its answer (cancel_seen) or for the run's end.  The dispatcher carries
 * the request out (supervise.c). */
#ifndef JOBREG_CANCEL_H
#define JOBREG_CANCEL_H

#include "registry/registry.h"
#include "liveness/jobstate.h"

/* What a cancel asks of a run. */
struct cancel_request {
	int signal;           /* sent first (SIGTERM by default) */
	double kill_after;    /* then KILL after these seconds (10 by default) */
	const char *by;       /* user@host of who asks */
	const char *note;     /* replaces the record's note; NULL: kept */
};

/* The dispatcher has this long to take a request up (SPEC §5 --cancel). */
#define CANCEL_ANSWER_SECONDS 2.0

/* Under JOB's lock, with ST as jobstate_load() read it there: ask JOB's
 * run to stop.  A job that is not RUNNING with a live dispatched run
 * (owner=lock) is a false condition: a message, 1, nothing written.
 * Otherwise the record gets the cancel_* keys for its run (a request
 * already there is replaced, its cancel_seen dropped) and *RUN is that
 * run's number.  Returns an exit status. */
int cancel_ask(const struct registry *reg, const char *job, const struct job_state *st,
	       const struct cancel_request *req, unsigned long long *run);

/* After cancel_ask(), the job lock let go: wake the dispatcher the record
 * names with SIGURG where this host can tell it is that process
 * (signal_owner(), facts.h); then wait until it takes run
 * RUN's request up (or the run ends), and with UNTIL_END (>= 0 seconds,
 * or -1: no limit; -2: not asked) until the run has ended.  No answer
 * within CANCEL_ANSWER_SECONDS: a message naming the run's host and the
 * pids seen holding its run lock, 75, the request left in place.  Returns
 * an exit status (75 also when UNTIL_END passes first). */
int cancel_wait(struct registry *reg, const char *job, unsigned long long run,
		double until_end);

/* No answer from run RUN's dispatcher on HOST within CANCEL_ANSWER_SECONDS:
 * say so, naming the pids this host sees holding the run lock.  Returns
 * 75. */
int cancel_no_answer(const struct registry *reg, const char *job, unsigned long long run,
		     const char *host);

#endif
