/* cancel: the one cancel (SPEC §2 Cancelled runs, §5a Cancelling) — the
 * request of jobreg-set --cancel and dispatch --replace, fenced by the run
 * number; the canceller's wait for its answer; the dispatcher's taking it
 * up at each tick and wake-up of its supervision (supervise.h). */
#ifndef JOBREG_CANCEL_H
#define JOBREG_CANCEL_H

#include "registry/registry.h"
#include "liveness/jobstate.h"
#include "run/runrecord.h"
#include "run/supervise.h"

/* What a cancel asks of a run. */
struct cancel_request {
	int signal;           /* sent first (SIGTERM by default) */
	double kill_after;    /* then KILL after these seconds (10 by default) */
	const char *by;       /* user@host of who asks; NULL: ours */
	const char *note;     /* replaces the record's note; NULL: kept */
};

/* The dispatcher has this long to take a request up (SPEC §5 --cancel). */
#define CANCEL_ANSWER_SECONDS 2.0

/* Why ST has no live dispatched run (owner=lock) to cancel, or NULL. */
const char *cancel_no_run(const struct job_state *st);
/* Into REC, a record of a live dispatched run, under the job lock: REQ
 * as the request for its run (one there replaced).  Returns the run. */
unsigned long long cancel_put(struct record *rec, const struct cancel_request *req);
/* Under JOB's lock, ST read there: ask its run (*RUN) to stop, on the
 * audit log first (its lock waited for at most LOCK_WAIT seconds); with
 * no run 1 after a message, nothing written.  Returns an exit status. */
int cancel_ask(const struct registry *reg, const char *job, const struct job_state *st,
	       const struct cancel_request *req, double lock_wait, unsigned long long *run);

/* After cancel_ask(), without the job lock: SIGURG to the dispatcher
 * (signal_owner()), then wait for its answer to run RUN's request, and
 * with UNTIL_END (seconds; -1: no limit; -2: not asked) for the run's end
 * (75 when it passes).  No answer in CANCEL_ANSWER_SECONDS:
 * cancel_no_answer().  A run that ended before the signal reached it: 1,
 * said.  Returns an exit status. */
int cancel_wait(struct registry *reg, const char *job, unsigned long long run,
		double until_end);

/* No answer from run RUN's dispatcher on HOST: said, with the run lock's
 * holders; the request stays.  Returns 75. */
int cancel_no_answer(const struct registry *reg, const char *job, unsigned long long run,
		     const char *host);

/* The dispatcher's side: what it did about the cancels of one run. */
struct cancel_taken {
	double kill_at;       /* KILL what the run left then (now_mono()); -1: no KILL */
	struct buf told;      /* the pids signalled: "TERM to pids 4242, 4243" */
};

/* At a tick or wake-up of RUN's supervision END (NULL: between attempts),
 * take a request for run->number up under the job lock.  A command that
 * ended before it reached it keeps its outcome (cancel_missed); else the
 * signal goes to the command and every process of this host holding
 * RUN_LOCK but us and our relay, and run->cancelled_by is set (between
 * attempts: no more retries).  Writes cancel_seen; 1 when taken up. */
int cancel_take_up(const struct registry *reg, struct run *run, int run_lock,
		   struct supervise_end *end, struct cancel_taken *c);
/* After a cancelled attempt's command ended: what else holds the run lock
 * has until C->kill_at, then SIGKILL; requests meanwhile are taken up. */
void cancel_linger(const struct registry *reg, struct run *run, int run_lock,
		   const struct supervise *s, const sigset_t *held, struct supervise_end *end,
		   struct cancel_taken *c);
/* "JOB: run N cancelled by U@H (TERM to pid 42)"; BETWEEN: "retries cancelled by U@H". */
void cancel_say(const struct run *run, const struct cancel_taken *c, int between);

#endif
