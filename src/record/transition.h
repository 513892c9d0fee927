/* transition: what each write does to a record (SPEC §3), and what a
 * record says of its run and the job's history.  Memory only, no I/O. */
#ifndef JOBREG_TRANSITION_H
#define JOBREG_TRANSITION_H

#include <time.h>

#include "record/record.h"

/* The owner a RUNNING record is given (SPEC §2); 0 or NULL: not written. */
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
	const char *cancelled_by;  /* user@host of the cancel ("?": unknown);
				    * NULL: not cancelled */
	enum outcome outcome;      /* as dispatch judged it (outcome.h);
				    * OUTCOME_UNKNOWN: DONE judges it by the
				    * record's ok_exit and warn_exit */
};

/* Transitions of SPEC §3.  NOTE replaces the note when not NULL; every
 * transition keeps the job's history counters and settings. */
void record_to_pending(struct record *r, time_t now, const char *note);
/* How a run begins. */
struct run_start {
	const struct owner *owner;
	time_t expires;          /* 0: none */
	double timeout;          /* <= 0: none */
	unsigned long attempt;   /* 0: none (dispatch --retries) */
};
/* The same owner as now recorded: a renewal (since, started, runs and
 * attempt kept); otherwise runs + 1. */
void record_to_running(struct record *r, time_t now, const struct run_start *how,
		       const char *note);
/* A failed attempt, counted here (failures and consecutive_failures + 1):
 * RUNNING, the next at RETRY_AT. */
void record_to_retry(struct record *r, time_t now, time_t retry_at);
/* The history before a run ("": none known), which a correction that makes
 * an OK run FAILED puts back. */
struct before_run {
	char last_success[21], last_success_started[21];
	unsigned long long last_success_run;   /* 0: none known */
	int last_success_warning;
	unsigned long long consecutive_failures;
};
/* DONE with END.  A run's failure counts once, whatever the corrections
 * (a new result over a DONE record, or over an attempt that waits for its
 * retry): FAILED over an OK run also puts back what BEFORE says; OK over
 * a FAILED run takes its failure back.  An END with no result (exit -1,
 * no signal, not timed out) over a DONE record keeps the record's result.
 * A cancelled run counts cancelled_runs + 1 only: neither OK nor FAILED. */
void record_to_done_after(struct record *r, time_t now, const struct run_result *end,
			  const char *note, const struct before_run *before);
/* The same with nothing known of the runs before. */
void record_to_done(struct record *r, time_t now, const struct run_result *end,
		    const char *note);
/* DONE with END, no counter moved (record_to_retry() counted the
 * failure).  Returns 1 when it kept a DONE record's result, else 0. */
int record_to_done_counted(struct record *r, time_t now, const struct run_result *end,
			   const char *note);
/* The run of a STALE record was lost (SPEC §2 Lost runs). */
void record_count_lost(struct record *r);
/* SPEC §2 Late jobs: late_from NOW when first set; LATE_AFTER < 0 removes
 * late_after and late_from. */
void record_set_late(struct record *r, double late_after, time_t now);
#define LATE_NOT_GIVEN (-2.0)   /* no --late-after: the record's stays */
/* When R's run is or becomes overdue (SPEC §2 Overdue runs): started +
 * overdue_after + 1 s, a realtime; -1 when R has no overdue_after or no
 * running attempt (one that waits for its retry runs nothing). */
double record_overdue_at(const struct record *r);
/* overdue_after = SECONDS; < 0 removes it. */
void record_set_overdue(struct record *r, double seconds);
#define OVERDUE_NOT_GIVEN (-2.0)   /* no --overdue-after: the record's stays */
/* The outcome policy (SPEC §5 Outcomes): ok_exit or warn_exit (KEY) =
 * LIST, "" removes it; min_duration = SECONDS, 0 removes it. */
void record_set_exit_list(struct record *r, const char *key, const char *list);
void record_set_min_duration(struct record *r, double seconds);
/* --notify-after N (SPEC §5c): notify_after = N; 1 removes it. */
void record_set_notify_after(struct record *r, unsigned long long n);
/* The history length (SPEC §3a); the default is not written. */
#define KEEP_RUNS_DEFAULT 20
#define KEEP_RUNS_MAX 10000
void record_set_keep_runs(struct record *r, unsigned long keep);
unsigned long record_keep_runs(const struct record *r);
/* A history counter + 1; one at COUNTER_MAX stays. */
void record_count_up(struct record *r, const char *key);
/* A call that ended without running, for REASON (SPEC §5a Skips). */
void record_count_skip(struct record *r, time_t now, const char *reason);
/* dispatch --every, in seconds (SPEC §5b). */
void record_set_every(struct record *r, double every);
/* A cancel of R's current run (SPEC §5a), replacing an earlier request's
 * cancel_seen and cancel_missed; SIGNAL is a name. */
void record_ask_cancel(struct record *r, const char *signal, double kill_after, const char *by,
		       time_t now);
/* A pause (SPEC §2 Paused jobs), of a job or of the registry: until UNTIL
 * (a realtime, rounded up; INFINITY: inf, a pause with no end), NOTE
 * NULL: none.
 * record_resume() returns 1 if R was paused. */
void record_pause(struct record *r, double until, const char *by, const char *note);
int record_resume(struct record *r);
/* SRC's pause, if any, into R (dispatch --clear keeps a pause in force). */
void record_pause_copy(struct record *r, const struct record *src);
/* Is R paused at NOW (a realtime)? */
int record_paused(const struct record *r, double now);
/* "until T (by U@H: NOTE)" or "until resumed (...)", for messages. */
void record_pause_describe(const struct record *r, struct buf *out);
/* ended - started, in seconds: 0, or -1 when R lacks either. */
int record_duration(const struct record *r, long long *seconds);
/* A number the parser checked; 0 when absent. */
unsigned long long record_count(const struct record *r, const char *key);
/* KEY = V, in decimal. */
void record_put_number(struct record *r, const char *key, unsigned long long v);

/* The outcome of a DONE record (status.h). */
enum outcome record_outcome(const struct record *r);
/* How a DONE record says its run ended, its outcome included. */
struct run_result record_run_result(const struct record *r);
/* 0 for an OK or WARNING outcome; 124 for a time limit, 128+N for signal
 * N, else the exit status (0 when unknown); 1 for a cancelled or FAILED
 * run that would give 0 (--once never replays it as a success). */
int run_result_status(const struct run_result *e);

/* Is R a RUNNING record written for owner O (same kind, host, pid, start)? */
int record_owned_by(const struct record *r, const struct owner *o);

#endif
