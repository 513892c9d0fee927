/* attempts: steps 5 and 6 of a dispatched run (SPEC §5, Retries) — each
 * attempt under supervision, its output through the log relay, a FAILED
 * one retried while --retries allows (--retry-delay, doubled each time, at
 * most an hour; with --retry-exit only its exit statuses), then DONE, or no
 * record with --clear.  Each attempt's outcome is judged here (outcome.h)
 * and recorded as judged: OK and WARNING exit 0.  The caller holds
 * the run lock throughout; each attempt gets JOBREG_RUN (with --retries
 * JOBREG_ATTEMPT).  A run lock lost (SPEC §6) ends the run, nothing more
 * written.
 *
 * The overdue notice (SPEC §5 Outcomes): at the tick the attempt becomes
 * overdue, "JOB: run N overdue: running for D", and with --notify a
 * notification while the supervision goes on.  The notifier is report/'s
 * (its JOBREG_SUMMARY is the --report line), above this layer, and CMD may
 * take a minute; so the dispatcher forks, and the child, having closed its
 * copies of the run lock, the slots and the relay's pipes, returns from
 * run_attempts() with run->notifier_child set: the dispatcher's main
 * notifies in it and exits.  The parent reaps it (run->notifier) before
 * its own notification at the end.  A takeover that counted a lost run
 * (run->took_over) is announced the same way as its run begins. */
#ifndef JOBREG_ATTEMPTS_H
#define JOBREG_ATTEMPTS_H

#include <signal.h>

#include "record/outcome.h"
#include "registry/registry.h"
#include "registry/slots.h"
#include "run/logrelay.h"
#include "run/runrecord.h"

/* What jobreg-dispatch was asked. */
struct run_request {
	const char *job;
	int sigpipe_ignored;    /* for the command: SIGPIPE as we got it */
	int once;
	int retry_failed;
	int clear_after;
	int wait;               /* --wait given */
	int coalesce;           /* --coalesce */
	int replace;            /* --replace */
	double every;           /* --every; 0: not given */
	double wait_limit;      /* < 0: no limit */
	const char *wait_arg;   /* as given, for messages */
	int conflict_code;
	const char *note;
	char **command;
	double lock_wait;
	double timeout;         /* --timeout; <= 0: no limit */
	double kill_after;      /* --kill-after; <= 0: no KILL */
	int kill_after_given;   /* (--replace's default is 10 s) */
	int timeout_signal;     /* --signal, default SIGTERM (also --replace's) */
	const char *signal_arg; /* --signal as given, for messages */
	long retries;           /* --retries */
	double retry_delay;     /* --retry-delay, default 10 */
	enum log_mode log;      /* --log, --chronic */
	unsigned long long log_size;   /* --log-size, default 1M */
	double late_after;      /* --late-after; -1: inf; LATE_NOT_GIVEN */
	double overdue_after;   /* --overdue-after; -1: inf; OVERDUE_NOT_GIVEN */
	long keep_runs;         /* --keep-runs; -1: not given */
	const char *ok_exit;    /* --ok-exit, --warn-exit (checked lists; "":
				 * remove the stored one); NULL: not given */
	const char *warn_exit;
	double min_duration;    /* --min-duration; 0: remove; -1: not given */
	int retry_exit_given;   /* --retry-exit: only these FAILED exits retried */
	struct exit_set retry_exit;
	struct slot_set *slots; /* --slots (slots.h) */
	const char *after;      /* --after's list ("": none, drop after=); NULL: not given */
	char **after_jobs;      /* its jobs (SPEC §5d) */
	size_t nafter;
	const char *notify;     /* --notify CMD, else JOBREG_NOTIFY; NULL: none */
	unsigned long long notify_after;   /* --notify-after N; 0: not given */
};

/* Fork the notifying child of the header (one at a time; RELAY NULL: no
 * relay yet): 1 in the child, which holds nothing of the run, else 0. */
struct logrelay;
int run_notifier_fork(struct run *run, int run_lock, const struct logrelay *relay);
/* Run RUN's command (its mask OLD_MASK, HOLD held outside it) holding the
 * run lock RUN_LOCK, then record its end.  Returns the command's exit
 * status, else the error's; *LOST_LOCK 1 when the run lock was lost. */
int run_attempts(const struct registry *reg, struct run *run, int run_lock, const sigset_t *hold,
		 const sigset_t *old_mask, int *lost_lock);

#endif
