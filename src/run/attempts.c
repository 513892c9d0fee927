#include "run/attempts.h"
#include "run/cancel.h"
#include "run/logview.h"
#include "run/supervise.h"
#include "util/msg.h"
#include "util/signame.h"
#include "util/sys.h"

#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define RETRY_DELAY_MAX 3600.0   /* seconds: the longest wait for a retry */

/* The supervision of every attempt (supervise.h). */
static struct supervise supervision(const struct run *run, int run_lock)
{
	const struct run_request *req = run->req;
	return (struct supervise){
		.command = req->command, .keep_fd = run_lock, .timeout = req->timeout,
		.kill_after = req->kill_after, .signal = req->timeout_signal, .check_lock = 1,
		.sigpipe_ignored = req->sigpipe_ignored, .out_fd = -1, .err_fd = -1,
		.job = req->job, .run = run->number,
	};
}

int run_notifier_fork(struct run *run, int run_lock, const struct logrelay *relay)
{
	const struct run_request *req = run->req;
	/* One notifying child at a time: its start-over sees a newer change. */
	if (run->notifier > 0 && waitpid(run->notifier, NULL, WNOHANG) == 0)
		return 0;
	(void)out_flush();
	pid_t pid = fork();
	if (pid < 0) {
		fail_errno(errno, req->job, "cannot notify: fork");
		return 0;
	}
	if (pid > 0) {
		run->notifier = pid;
		return 0;
	}
	/* The child holds nothing of the run: no lock, slot or relay pipe. */
	close_fd(run_lock);
	slots_release(req->slots);
	if (relay) {
		int fds[] = { relay->out_fd, relay->err_fd, relay->report_fd, relay->ack_fd };
		for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
			if (fds[i] > 2)
				close_fd(fds[i]);
	}
	run->notifier = 0;
	run->notifier_child = 1;
	return 1;
}

/* SPEC §5 Outcomes: the moment the attempt is overdue, by the record's
 * overdue_after now (jobreg-set may change it mid-run), read at each tick
 * as a cancel is: said once, even with -q.  With a CMD a child notifies
 * while this supervision goes on (attempts.h).  Returns 1 in that child. */
static int overdue_look(const struct registry *reg, struct run *run, int run_lock,
			struct logrelay *relay)
{
	const struct run_request *req = run->req;
	struct buf failed = {0}, *was_held;
	struct record rec;
	int found = 0;
	double at = -1, after = 0;
	if (run->overdue_said)
		return 0;
	was_held = message_hold(&failed);   /* (a failed look: the next tick's) */
	if (reg_read_record(reg, req->job, &rec, &found) == 0 && found &&
	    same_string(record_get(&rec, "started"), run->started) &&
	    same_string(record_get(&rec, "runs"), run->number)) {
		at = record_overdue_at(&rec);
		after = at >= 0 ? strtod(record_get(&rec, "overdue_after"), NULL) : 0;
	}
	record_free(&rec);
	message_hold(was_held);
	message_release(&failed, 0);
	if (at < 0 || now_real() <= at)
		return 0;
	run->overdue_said = 1;
	struct buf how = {0};
	run_add_duration(&how, after);
	warn(req->job, "run %s overdue: running for %s", run->number, how.data);
	buf_free(&how);
	return req->notify && run_notifier_fork(run, run_lock, relay);
}

/* Step 5, one attempt: its exit status, END and ENDED filled.  One whose
 * environment or log relay cannot be readied ends as a command that could
 * not start (126). */
static int attempt(const struct registry *reg, struct run *run, int run_lock,
		   const sigset_t *hold, const sigset_t *old_mask, struct logrelay *relay,
		   struct run_result *end, char signame[SIGNAME_MAX], struct supervise_end *ended,
		   struct cancel_taken *c, double *ran_for)
{
	const struct run_request *req = run->req;
	struct supervise how = supervision(run, run_lock);
	char attempt_no[24];
	int rc = run->log_status;

	relay->pid = relay->out_fd = relay->err_fd = -1;
	relay->have_report = 0;
	snprintf(attempt_no, sizeof attempt_no, "%lu", run->attempt);
	if (setenv("JOBREG_RUN", run->number, 1) < 0 ||
	    (run->attempt ? setenv("JOBREG_ATTEMPT", attempt_no, 1) : unsetenv("JOBREG_ATTEMPT")) < 0)
		rc = fail_errno(errno, req->job, "setenv");
	else if (!rc && req->log != LOG_NONE)
		rc = logrelay_start(reg, req->job, req->log, req->log_size, run_lock, relay,
				    &how.out_fd, &how.err_fd);
	*ran_for = 0;
	if (rc) {
		memset(ended, 0, sizeof *ended);
		ended->start_errno = EIO;
		return supervise_outcome(ended, end, signame);
	}
	/* At each tick and wake-up a cancel is looked for (SPEC §5a), and
	 * whether the run is overdue (§5 Outcomes). */
	run->overdue_said = 0;
	double began = now_mono();
	supervise_start(&how, hold, old_mask, ended);
	while (supervise_step(&how, hold, ended) != SV_ENDED) {
		(void)cancel_take_up(reg, run, run_lock, ended, c);
		if (overdue_look(reg, run, run_lock, relay)) {
			*end = (struct run_result){ .exit_status = -1 };
			return 0;   /* the notifying child, to main */
		}
	}
	*ran_for = now_mono() - began;
	if (run->cancelled_by)
		cancel_linger(reg, run, run_lock, &how, hold, ended, c);
	logrelay_finish(relay);
	if (ended->start_errno)
		fail_errno(ended->start_errno, req->job, "cannot start %s", req->command[0]);
	else if (ended->exec_errno)
		fail_errno(ended->exec_errno, req->job, "cannot run %s", req->command[0]);
	else if (ended->wait_errno)
		fail_errno(ended->wait_errno, req->job, "cannot wait for %s", req->command[0]);
	return supervise_outcome(ended, end, signame);
}

/* The wait before retry K. */
static double retry_delay(const struct run_request *req, unsigned long k)
{
	double d = req->retry_delay;
	while (--k > 0 && d < RETRY_DELAY_MAX)
		d *= 2;
	return d < RETRY_DELAY_MAX ? d : RETRY_DELAY_MAX;
}

/* "JOB: run N timed out after ...", despite -q when LOUD (cron mails output). */
static void say_failure(const struct run *run, const struct run_result *end,
			const struct supervise_end *ended, int lost, int loud)
{
	const struct run_request *req = run->req;
	struct buf how = {0};
	char name[SIGNAME_MAX];
	run_describe_failure(&how, end, req->timeout, signal_name(req->timeout_signal, name),
			     ended->killed, lost);
	/* With --retries, which attempt it was: the last, or one retried. */
	if (run->attempt)
		buf_addf(&how, ", attempt %lu of %ld", run->attempt, (long)req->retries + 1);
	if (loud)
		warn(req->job, "run %s %s", run->number, how.data);
	else
		info(req->job, "run %s %s", run->number, how.data);
	buf_free(&how);
}

/* END's outcome (SPEC §5 Outcomes), judged by the policy the run's
 * RUNNING recorded; *WHY for a WARNING. */
static enum outcome judge(const struct run *run, const struct run_result *end, double ran_for,
			  enum warning_cause *why)
{
	struct outcome_facts f = { .exit_status = end->exit_status,
				   .signalled = end->signal_name != NULL,
				   .timed_out = end->timed_out,
				   .cancelled = run->cancelled_by != NULL, .duration = ran_for };
	return outcome_judge(&run->policy, &f, why);
}

/* May a FAILED attempt that ended so be retried (126 and 127 aside)?
 * With --retry-exit only an exit status it names (SPEC §5 Retries). */
static int retry_allowed(const struct run_request *req, const struct run_result *end)
{
	if (!req->retry_exit_given)
		return 1;
	return !end->signal_name && !end->timed_out && exit_set_has(&req->retry_exit, end->exit_status);
}

/* "JOB: run N ended with a warning: exit 24", not with -q unless LOUD
 * (--chronic's report). */
static void say_warning(const struct run *run, const struct run_result *end,
			enum warning_cause why, double ran_for, int loud)
{
	struct buf how = {0};
	run_describe_warning(&how, why, end->exit_status, ran_for, run->policy.min_duration);
	if (loud)
		warn(run->req->job, "run %s ended with a warning: %s", run->number, how.data);
	else
		info(run->req->job, "run %s ended with a warning: %s", run->number, how.data);
	buf_free(&how);
}

int run_attempts(const struct registry *reg, struct run *run, int run_lock, const sigset_t *hold,
		 const sigset_t *old_mask, int *lost_lock)
{
	const struct run_request *req = run->req;
	int chronic_mode = req->log == LOG_CHRONIC;
	struct logrelay relay = {0};
	struct cancel_taken cancel = { .kill_at = -1 };
	for (;;) {
		struct run_result end;
		struct supervise_end ended;
		char signame[SIGNAME_MAX];
		double ran_for;
		enum warning_cause why = WARN_NONE;
		int status = attempt(reg, run, run_lock, hold, old_mask, &relay, &end, signame, &ended,
				     &cancel, &ran_for);
		if (run->notifier_child)
			return 0;
		int lost = ended.lost_lock, ours = 1, rc = 0, between = 0;
		/* 126 and 127, as exec's own failures: the command cannot run. */
		int cannot_run = (!ended.start_errno && ended.exec_errno) || status == 126 ||
				 status == 127;
		/* As recorded: an OK or WARNING run exits 0 (SPEC §5 Outcomes). */
		if (!ended.wait_errno) {
			end.outcome = judge(run, &end, ran_for, &why);
			status = run_result_status(&end);
		}
		int warned = end.outcome == OUTCOME_WARNING;
		if (!lost && end.outcome == OUTCOME_FAILED && !ended.stopped && !cannot_run &&
		    retry_allowed(req, &end) && run->attempt &&
		    run->attempt <= (unsigned long)req->retries) {
			double until = now_mono() + retry_delay(req, run->attempt);
			struct supervise how = supervision(run, run_lock);
			enum supervise_event ev = SV_TICK;
			/* --chronic: a run that ends OK after all prints nothing. */
			if (end.timed_out)
				say_failure(run, &end, &ended, 0, !chronic_mode);
			rc = run_retry(reg, run, &end, now_seconds() + (time_t)(until - now_mono() + 0.999));
			info(req->job, "attempt %lu failed; attempt %lu in %gs", run->attempt,
			     run->attempt + 1, retry_delay(req, run->attempt));
			/* A cancel now ends the retries (SPEC §5a). */
			while (!rc && !run->cancelled_by &&
			       (ev = supervise_pause(&how, hold, until)) != SV_ENDED &&
			       ev != SV_STOP && ev != SV_LOST)
				(void)cancel_take_up(reg, run, run_lock, NULL, &cancel);
			lost = ev == SV_LOST;
			if (!rc && ev == SV_ENDED && !run->cancelled_by &&
			    (rc = run_next(reg, run, &ours)) == 0 && ours && !run->cancelled_by)
				continue;
			between = 1;
		} else if (end.timed_out && !lost && !chronic_mode) {
			say_failure(run, &end, &ended, 0, 1);
		}
		/* --chronic: a failed (or lost) or warned run's log, then how
		 * it ended. */
		int chronic = chronic_mode && (status || lost || warned);
		/* SPEC §6: after a lost run lock the record is not ours to write. */
		*lost_lock = lost;
		if (lost)
			ours = 0;
		/* The report comes after the record: from the relay's memory,
		 * else from the log, read before --clear removes it. */
		if (chronic && req->clear_after && !relay.have_report)
			logview_chronic(reg, req->job);
		if (!rc && ours)
			rc = run_finish(reg, run, &end);
		if (chronic && relay.have_report)
			(void)logrelay_report(&relay);
		else if (chronic && !req->clear_after)
			logview_chronic(reg, req->job);
		if (warned && !lost)
			say_warning(run, &end, why, ran_for, chronic);
		else if (chronic)
			say_failure(run, &end, &ended, lost, 1);
		if (!rc && ours && run->cancelled_by)
			cancel_say(run, &cancel, between);
		free(run->cancelled_by);
		run->cancelled_by = NULL;
		buf_free(&cancel.told);
		buf_free(&relay.report);
		/* A result that could not be recorded is still the run's: a
		 * failed run exits with its status, a good one with the error's. */
		return lost ? EXIT_IO : status ? status : rc;
	}
}
