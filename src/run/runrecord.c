#include "run/runrecord.h"
#include "run/attempts.h"
#include "record/after.h"
#include "registry/line.h"
#include "registry/lock.h"
#include "run/logrelay.h"
#include "util/msg.h"
#include "util/shquote.h"
#include "registry/sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

void run_describe_result(struct buf *b, const struct run_result *e)
{
	if (e->timed_out)
		buf_adds(b, "timed out");
	else if (e->signal_name)
		buf_addf(b, "signal %s", e->signal_name);
	else if (e->exit_status >= 0)
		buf_addf(b, "exit %d", e->exit_status);
	else
		buf_adds(b, "exit status unknown");
}

void run_add_duration(struct buf *b, double seconds)
{
	if (seconds >= 3600 && seconds == 3600 * (double)(long long)(seconds / 3600))
		buf_addf(b, "%lldh", (long long)(seconds / 3600));
	else if (seconds >= 60 && seconds == 60 * (double)(long long)(seconds / 60))
		buf_addf(b, "%lldm", (long long)(seconds / 60));
	else
		buf_addf(b, "%gs", seconds);
}

void run_describe_failure(struct buf *b, const struct run_result *e, double timeout,
			  const char *limit_signal, int killed, int lost)
{
	const char *sig = limit_signal ? limit_signal : e->signal_name;
	if (lost) {
		buf_adds(b, "lost its run lock");
	} else if (e->timed_out) {
		buf_adds(b, "timed out after ");
		run_add_duration(b, timeout);
		if (sig)
			buf_addf(b, " (%s%s)", sig, killed ? ", then KILL" : "");
	} else if (e->signal_name) {
		buf_addf(b, "killed by SIG%s", e->signal_name);
	} else if (e->exit_status >= 0) {
		buf_addf(b, "failed: exit %d", e->exit_status);
	} else {
		buf_adds(b, "failed: how it ended is not known");
	}
}

void run_describe_warning(struct buf *b, enum warning_cause why, int exit_status,
			  double duration, double min)
{
	if (why == WARN_SHORT) {
		/* (0.4s; a run that barely started, 0.003s) */
		buf_addf(b, "ended after %.*fs, under --min-duration ", duration < 0.1 ? 3 : 1,
			 duration);
		run_add_duration(b, min);
	} else {
		buf_addf(b, "exit %d", exit_status);
	}
}

/* The list REQ gives for KEY (NULL: not given), else R's. */
static const char *list_in_force(const char *given, const struct record *r, const char *key)
{
	return given ? given : record_get(r, key);
}

int run_lists_check(const struct run_request *req, const struct record *r)
{
	const char *ok_list = list_in_force(req->ok_exit, r, "ok_exit");
	const char *warn_list = list_in_force(req->warn_exit, r, "warn_exit");
	struct exit_set oks, warns;
	int both;
	if (!ok_list || !warn_list || !*ok_list || !*warn_list ||
	    exit_set_parse(ok_list, &oks) < 0 || exit_set_parse(warn_list, &warns) < 0 ||
	    (both = exit_set_common(&oks, &warns)) < 0)
		return 0;
	return fail(EXIT_USAGE, req->job, "exit status %d is in both --ok-exit %s%s and --warn-exit %s%s",
		    both, ok_list, req->ok_exit ? "" : " (stored)", warn_list,
		    req->warn_exit ? "" : " (stored)");
}

/* REC as the attempt begins: RUNNING, ours, a new run with its cmd= (the
 * last one's dropped); its start and number noted in RUN. */
static void begin_attempt(struct run *run, struct record *rec, const char *note)
{
	struct run_start how = { .owner = &run->owner, .timeout = run->req->timeout,
				 .attempt = run->attempt };
	struct buf cmd = {0};
	record_to_running(rec, now_seconds(), &how, note);
	shquote_argv(&cmd, run->req->command);
	record_put(rec, "cmd", cmd.data);
	buf_free(&cmd);
	const char *started = record_get(rec, "started");
	snprintf(run->started, sizeof run->started, "%s", started ? started : "");
	snprintf(run->number, sizeof run->number, "%llu", record_count(rec, "runs"));
	struct buf slots = {0};
	slots_format(run->req->slots, &slots);
	if (slots.len)
		record_put(rec, "slots", slots.data);
	buf_free(&slots);
}

int run_begin(const struct registry *reg, struct run *run, const struct job_state *st,
	      int run_lock)
{
	const struct run_request *req = run->req;
	struct stat lock_st;
	struct record rec;

	if (fstat(run_lock, &lock_st) < 0)
		return fail_errno(errno, req->job, "stat the run lock");
	run->owner.run_lock = (unsigned long long)lock_st.st_ino;
	record_copy(&rec, &st->rec);
	begin_attempt(run, &rec, req->note);
	if (req->late_after != LATE_NOT_GIVEN)
		record_set_late(&rec, req->late_after, now_seconds());
	if (req->overdue_after != OVERDUE_NOT_GIVEN)
		record_set_overdue(&rec, req->overdue_after);
	if (req->keep_runs >= 0)
		record_set_keep_runs(&rec, (unsigned long)req->keep_runs);
	/* The job's outcome policy: what a call gives replaces what is kept. */
	if (req->ok_exit)
		record_set_exit_list(&rec, "ok_exit", req->ok_exit);
	if (req->warn_exit)
		record_set_exit_list(&rec, "warn_exit", req->warn_exit);
	if (req->min_duration >= 0)
		record_set_min_duration(&rec, req->min_duration);
	outcome_policy_of(&rec, &run->policy);
	if (req->after)
		record_set_after(&rec, req->after);
	if (req->notify_after)
		record_set_notify_after(&rec, req->notify_after);
	int rc = commit_record(reg, req->job, jobstate_record(st), st->status, &rec, NULL);
	if (!rc)
		slots_note(reg, req->job, req->slots, run->number);
	record_free(&rec);
	return rc;
}

/* Is R still RUN's record: the same owner and the same start? */
static int still_ours(const struct record *r, const struct run *run)
{
	const char *started = record_get(r, "started");
	return record_owned_by(r, &run->owner) && started && strcmp(started, run->started) == 0;
}

int run_lock_record(const struct registry *reg, const struct run *run, double wait,
		     int *job_lock, struct job_state *st, int *ours)
{
	*ours = 0;
	record_init(&st->rec);
	st->found = 0;
	int rc = reg_lock(reg, run->req->job, JOB_LOCK, LOCK_EX, wait,
			  LOCK_CREATE | (wait >= 0 ? LOCK_QUIET_BUSY : 0), job_lock);
	if (!rc)
		rc = reg_read_record(reg, run->req->job, &st->rec, &st->found);
	if (!rc && st->found) {
		st->status = record_status(&st->rec);
		*ours = still_ours(&st->rec, run);
	}
	if (!rc && !*ours) {
		message_context(NULL);
		warn(run->req->job, "the record changed during the run; left alone");
	}
	return rc;
}

const char *run_cancel_request(const struct record *r, const struct run *run, int answered)
{
	const char *n = record_get(r, "cancel_run"), *by = record_get(r, "cancel_by");
	if (!n || strcmp(n, run->number) != 0 || (!answered && record_get(r, "cancel_seen")) ||
	    record_get(r, "cancel_missed") || !still_ours(r, run))
		return NULL;
	return by ? by : "?";
}

int run_retry(const struct registry *reg, struct run *run, const struct run_result *end,
	      time_t retry_at)
{
	struct job_state st;
	struct record done, wait;
	int job_lock = -1, ours;

	int rc = run_lock_record(reg, run, -1, &job_lock, &st, &ours);
	if (!rc && ours) {
		/* The ended attempt (for the history); the record RUNNING, its failure counted. */
		run->ended_at = now_seconds();
		record_copy(&done, &st.rec);
		record_to_done(&done, run->ended_at, end, NULL);
		record_copy(&wait, &st.rec);
		record_to_retry(&wait, run->ended_at, retry_at);
		rc = commit_record(reg, run->req->job, jobstate_record(&st), st.status, &wait, &done);
		record_free(&done);
		record_free(&wait);
	}
	jobstate_free(&st);
	reg_unlock(&job_lock);
	return rc;
}

int run_next(const struct registry *reg, struct run *run, int *ours)
{
	const char *job = run->req->job;
	int logged = run->req->log != LOG_NONE;
	struct job_state st;
	struct record rec;
	int job_lock = -1;

	int rc = run_lock_record(reg, run, -1, &job_lock, &st, ours);
	const char *by = *ours ? run_cancel_request(&st.rec, run, 1) : NULL;
	if (!rc && by) {
		/* Asked to stop while it waited: no next attempt (SPEC §5a). */
		free(run->cancelled_by);
		run->cancelled_by = xstrdup(by);
	} else if (!rc && *ours) {
		/* The failed log is set aside with the RUNNING write, under
		 * the same lock: a reader sees one change (logview.h).  One
		 * whose log cannot be made still begins, and cannot start. */
		run->log_status = logrelay_prepare(reg, job, logged);
		record_copy(&rec, &st.rec);
		run->attempt++;
		begin_attempt(run, &rec, NULL);
		rc = commit_record(reg, job, jobstate_record(&st), st.status, &rec, NULL);
		if (rc)
			logrelay_abandon(reg, job);
		else
			slots_note(reg, job, run->req->slots, run->number);
		if (!rc && !run->log_status)
			run->log_status = logrelay_commit(reg, job, 1, logged);
		record_free(&rec);
	}
	jobstate_free(&st);
	reg_unlock(&job_lock);
	return rc;
}

int run_finish(const struct registry *reg, struct run *run, const struct run_result *end)
{
	const char *job = run->req->job;
	int clear = run->req->clear_after;
	struct buf context = {0};
	struct job_state st;
	struct record rec;
	int job_lock = -1, ours;

	/* A failure says how the run ended: its result is not lost. */
	buf_adds(&context, clear ? "cannot clear the record (" : "cannot record DONE (");
	run_describe_result(&context, end);
	buf_addc(&context, ')');
	message_context(context.data);
	int rc = run_lock_record(reg, run, -1, &job_lock, &st, &ours);
	if (!rc && ours && clear) {
		int kept;
		rc = line_clear(reg, job, &st.rec, 1, 1, &kept);
		sweep_run_files(reg, job, NULL);
	} else if (!rc && ours) {
		record_copy(&rec, &st.rec);
		/* Between attempts its failure is counted already
		 * (run_retry()); retries cancelled, it stands (SPEC §5a). */
		struct run_result how = *end;
		how.cancelled_by = run->cancelled_by;
		if (!record_get(&rec, "retry_at"))
			record_to_done(&rec, now_seconds(), &how, NULL);
		else if (record_to_done_counted(&rec, run->ended_at, end, NULL) == 0 && run->cancelled_by)
			record_put(&rec, "retries_cancelled_by", run->cancelled_by);
		enum outcome o = record_outcome(&rec);
		int known = o != OUTCOME_UNKNOWN;
		/* Only a success moves --after on; any other end tries the
		 * same upstream successes again (SPEC §5d). */
		if (run->after_seen && (o == OUTCOME_OK || o == OUTCOME_WARNING))
			record_put(&rec, "after_seen", run->after_seen);
		/* The first try's error is said only without a second. */
		struct buf first_try = {0};
		struct buf *was_held = message_hold(&first_try);
		rc = commit_record(reg, job, jobstate_record(&st), st.status, &rec, known ? &rec : NULL);
		message_hold(was_held);
		/* The result is state, the log diagnostics: the log makes room. */
		if (rc == EXIT_IO && run->req->log != LOG_NONE && logrelay_empty(reg, job) == 0) {
			message_release(&first_try, 0);
			message_context(NULL);
			warn(job, "emptied the run's log to make room for its record");
			message_context(context.data);
			rc = commit_record(reg, job, jobstate_record(&st), st.status, &rec, known ? &rec : NULL);
		} else {
			message_release(&first_try, 1);
		}
		record_free(&rec);
	}
	message_context(NULL);
	jobstate_free(&st);
	buf_free(&context);
	reg_unlock(&job_lock);
	return rc;
}
