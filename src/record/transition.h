/* transition: what each write does to a record (SPEC §3 transitions) —
 * PENDING, RUNNING for an owner, between two attempts, DONE with how the
 * run ended, a lost run counted — and what a record says of its run and
 * the job's history (counters, outcome, settings).  Memory only, no I/O;
 * the bytes of a record are record.h's. */
#ifndef JOBREG_TRANSITION_H
#define JOBREG_TRANSITION_H

#include <time.h>

#include "record/record.h"

/* The owner a RUNNING record is given.  0 or NULL: absent, not written.
 * OWNER_LOCK records carry the dispatcher's pid fields too, and the inode
 * of the run lock it holds (SPEC §2). */
struct owner {
	enum { OWNER_NONE, OWNER_LOCK, OWNER_PID } kind;
	const char *host;
	long pid;
	unsigned long long pid_start;
	const char *boot_id;
	unsigned long long pid_ns, time_ns;   /* inodes of /proc/self/ns/{pid,time} */
	unsigned long long run_lock;          /* OWNER_LOCK: inode of .JOB.run */
};

/* How a run ended. */
struct run_result {
	int exit_status;           /* -1: not known */
	const char *signal_name;   /* "TERM", "RTMIN+3"; NULL: not killed */
	int timed_out;             /* the time limit ended it */
	const char *cancelled_by;  /* user@host whose cancel stopped it (SPEC §2
				    * Cancelled runs; "?" when the record does
				    * not say); NULL: not cancelled */
};

/* Transitions of SPEC §3.  NOTE replaces the note when not NULL.  The
 * job's history and settings (runs, failures, lost, consecutive_failures,
 * last_success, last_success_started, late_after, late_from, keep_runs)
 * are kept by every transition. */
void record_to_pending(struct record *r, time_t now, const char *note);
/* How a run begins: its owner, EXPIRES (0: none), TIMEOUT (<= 0: none)
 * and ATTEMPT (0: none; dispatch --retries). */
struct run_start {
	const struct owner *owner;
	time_t expires;
	double timeout;
	unsigned long attempt;
};
/* The same owner as now recorded: a renewal (since, started, runs and
 * attempt kept); otherwise runs + 1. */
void record_to_running(struct record *r, time_t now, const struct run_start *how,
		       const char *note);
/* A failed attempt whose next one starts at RETRY_AT: the record stays
 * RUNNING, with failures and consecutive_failures + 1. */
void record_to_retry(struct record *r, time_t now, time_t retry_at);
/* What the job's history says came before a run: the last OK run's
 * ended and started ("": none known) and the FAILED or lost runs since
 * it.  A correction that makes an OK run FAILED puts these back. */
struct before_run {
	char last_success[21], last_success_started[21];
	unsigned long long consecutive_failures;
};
/* DONE with END.  A run's failure counts once, whatever the corrections
 * (a new result over a DONE record, or over an attempt waiting for its
 * retry, whose failure record_to_retry() counted): a FAILED end counts
 * failures and consecutive_failures + 1 unless the run was FAILED already;
 * over an OK run it also puts last_success, last_success_started and
 * consecutive_failures back as BEFORE says (+ 1).  An OK end sets
 * last_success = ended and last_success_started = started, drops
 * consecutive_failures, and over a FAILED run takes its failure back
 * (failures - 1).  An END with no result (exit_status -1, no signal, not
 * timed out) over a DONE record keeps the result the record has.  A
 * cancelled run (END->cancelled_by) counts cancelled_runs + 1 and nothing
 * else: neither OK nor FAILED. */
void record_to_done_after(struct record *r, time_t now, const struct run_result *end,
			  const char *note, const struct before_run *before);
/* The same with nothing known of the runs before. */
void record_to_done(struct record *r, time_t now, const struct run_result *end,
		    const char *note);
/* DONE with END, for the failed attempt whose failure record_to_retry()
 * counted already: no counter moves.  Returns 1 when, as above, it kept
 * the result of a DONE record (END has none), else 0. */
int record_to_done_counted(struct record *r, time_t now, const struct run_result *end,
			   const char *note);
/* The run of a STALE record was lost (SPEC §2): failures, lost and
 * consecutive_failures + 1. */
void record_count_lost(struct record *r);
/* late_after = LATE_AFTER seconds (< 0: remove it and late_from);
 * late_from = NOW the first time (SPEC §2 Late jobs). */
void record_set_late(struct record *r, double late_after, time_t now);
/* A --late-after that was not given: the record's is left as it is (-1,
 * inf, removes it). */
#define LATE_NOT_GIVEN (-2.0)
/* The history length (SPEC §3a); the default is not written. */
#define KEEP_RUNS_DEFAULT 20
#define KEEP_RUNS_MAX 10000
void record_set_keep_runs(struct record *r, unsigned long keep);
unsigned long record_keep_runs(const struct record *r);
/* KEY + 1 (a history counter: skipped, coalesced, ...); one at its
 * maximum stays. */
void record_count_up(struct record *r, const char *key);
/* A call that ended without running (SPEC §5a Skips): skipped + 1,
 * last_skipped = NOW, skip_reason = REASON (one word: "running",
 * "waiting", "paused", "no-slot", "wait-expired", "superseded",
 * "interrupted"). */
void record_count_skip(struct record *r, time_t now, const char *reason);
/* dispatch --every: the period, in seconds, kept as a setting for readers
 * (SPEC §5b). */
void record_set_every(struct record *r, double every);
/* A cancel of R's run (SPEC §5a): cancel_run = its runs, cancel_signal
 * SIGNAL (a name), cancel_kill_after KILL_AFTER seconds, cancel_by BY,
 * cancel_at NOW; an earlier request's cancel_seen and cancel_missed go. */
void record_ask_cancel(struct record *r, const char *signal, double kill_after, const char *by,
		       time_t now);
/* A pause (SPEC §2 Paused jobs), in a job's record or the registry's
 * .-pause: its three keys.  record_pause() writes them, until UNTIL (a
 * realtime, rounded up to the second; INFINITY: inf), by BY, with NOTE
 * (NULL: none); record_resume() removes them, and returns 1 if there
 * were any. */
void record_pause(struct record *r, double until, const char *by, const char *note);
int record_resume(struct record *r);
/* SRC's pause, if any, into R (dispatch --clear keeps a pause in force). */
void record_pause_copy(struct record *r, const struct record *src);
/* Is R paused at NOW (a realtime): paused_until inf, or a time after NOW? */
int record_paused(const struct record *r, double now);
/* "until T (by U@H: NOTE)", or "until resumed (...)" for a pause with no
 * end: what a refusal and a --resume say of R's pause. */
void record_pause_describe(const struct record *r, struct buf *out);
/* ended - started of R's run, in seconds, into *SECONDS: 0, or -1 when
 * it lacks either. */
int record_duration(const struct record *r, long long *seconds);
/* A number of the record, as the parser checked it (runs, failures, pid,
 * ...); 0 when absent. */
unsigned long long record_count(const struct record *r, const char *key);
/* KEY = V, in decimal. */
void record_put_number(struct record *r, const char *key, unsigned long long v);

/* The outcome of a DONE record (status.h). */
enum outcome record_outcome(const struct record *r);
/* How a DONE record says its run ended. */
struct run_result record_run_result(const struct record *r);
/* The exit status of a run that ended so: 124 for a time limit, 128+N for
 * signal N, else its exit status (0 when unknown); a cancelled run that
 * would give 0 gives 1, so that --once never replays it as a success. */
int run_result_status(const struct run_result *e);

/* Is R a RUNNING record written for owner O (same kind, host, pid, start)? */
int record_owned_by(const struct record *r, const struct owner *o);

#endif
