/* runrecord: the record a dispatched run holds (SPEC §5 steps 4 and 6,
 * Retries): RUNNING at its start and each attempt's, with retry_at between
 * attempts, DONE (or none, --clear) at its end.  Each write after the
 * first takes the job lock with no limit (a result must not be lost) and
 * goes ahead only while the record is still this run's (same owner and
 * start).  All go through commit_record(), so every ended attempt and a
 * lost run taken over are in the history. */
#ifndef JOBREG_RUNRECORD_H
#define JOBREG_RUNRECORD_H

#include "registry/write.h"
#include "record/outcome.h"
#include "record/record.h"
#include "record/transition.h"
#include "registry/registry.h"
#include "registry/slots.h"
#include "liveness/jobstate.h"

struct run_request;

struct run {
	const struct run_request *req;  /* what dispatch was asked (attempts.h);
					 * borrowed: outlives the run */
	struct owner owner;        /* the dispatcher: run lock and pid fields */
	unsigned long attempt;     /* the attempt now (0: no --retries) */
	char started[21];          /* its start, as recorded */
	char number[24];           /* its run number (JOBREG_RUN) */
	time_t ended_at;           /* when the last attempt to retry ended */
	int log_status;            /* the attempt's log could not be begun: the
				    * exit status (run_next()), else 0 */
	char *cancelled_by;        /* user@host of a cancel taken up (malloc'd) */
	struct outcome_policy policy;  /* as RUNNING recorded it (SPEC §5 Outcomes) */
	char *after_seen;          /* --after: the named jobs' successes this run
				    * follows, for its DONE if it succeeds (malloc'd) */
	int took_over;             /* step 4 took over a STALE record (SPEC §2 Lost runs) */
	int overdue_said;          /* this attempt's overdue notice was given */
	pid_t notifier;            /* the child notifying of it (attempts.h), or 0 */
	int notifier_child;        /* 1 in that child */
};

/* Step 4, holding the job lock (ST read under it) and the run lock
 * RUN_LOCK: RUNNING.  Returns an exit status. */
int run_begin(const struct registry *reg, struct run *run, const struct job_state *st,
	      int run_lock);
/* The attempt failed so (END); the next starts at RETRY_AT: RUNNING with
 * retry_at, the failure counted and in the history.  An exit status. */
int run_retry(const struct registry *reg, struct run *run, const struct run_result *end,
	      time_t retry_at);
/* The job lock within WAIT seconds (< 0: no limit; busy after it: 75,
 * silently), the record in ST, *OURS when still RUN's (else a message). */
int run_lock_record(const struct registry *reg, const struct run *run, double wait,
		    int *job_lock, struct job_state *st, int *ours);
/* The user@host of a request in R to stop run->number, going or waiting to
 * retry (SPEC §5a), answered or (ANSWERED 0) not, not missed; NULL: none. */
const char *run_cancel_request(const struct record *r, const struct run *run, int answered);
/* The next attempt begins: its log made (--log, --chronic; else a
 * leftover new log removed), RUNNING with a new run number,
 * the last log set aside for the new (failing: run->log_status).  *OURS 0:
 * the record is no longer this run's, nothing done.  A cancel found under
 * the job lock first starts none: run->cancelled_by set. */
int run_next(const struct registry *reg, struct run *run, int *ours);
/* Step 6: DONE with END (with run->cancelled_by cancelled; between attempts
 * the last one's with retries_cancelled_by), or --clear: no record, history
 * or logs.  A record no longer this run's is left alone, said.  DONE that
 * cannot be written (full disk) empties the log, tried again.  Exit status. */
int run_finish(const struct registry *reg, struct run *run, const struct run_result *end);

/* Why a run is a WARNING (SPEC §2 Warnings): "exit 24", "ended after
 * 0.4s, under --min-duration 5s" (DURATION, MIN seconds). */
void run_describe_warning(struct buf *b, enum warning_cause why, int exit_status,
			  double duration, double min);
/* Step 2c under the job lock, before anything is written: a status in
 * both lists, counting R's list that REQ does not replace, is a usage
 * error (64, said); else 0. */
int run_lists_check(const struct run_request *req, const struct record *r);
/* SECONDS as a duration option takes it: "2h", "4m", "5s", "0.5s". */
void run_add_duration(struct buf *b, double seconds);
/* "exit 3", "signal TERM", "timed out". */
void run_describe_result(struct buf *b, const struct run_result *e);
/* How a failed run ended (SPEC §5 Logs): "failed: exit 3", "timed out
 * after 5s (TERM, then KILL)", "killed by SIGKILL", "lost its run lock"
 * (LOST).  A limit of TIMEOUT s names LIMIT_SIGNAL (NULL: the one that
 * ended the run), then KILL when KILLED. */
void run_describe_failure(struct buf *b, const struct run_result *e, double timeout,
			  const char *limit_signal, int killed, int lost);

#endif
