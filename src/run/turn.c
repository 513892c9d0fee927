#include "run/turn.h"
#include "record/after.h"
#include "liveness/facts.h"
#include "liveness/wait.h"
#include "record/transition.h"
#include "registry/audit.h"
#include "registry/lock.h"
#include "registry/write.h"
#include "util/msg.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>

/* The --coalesce follower leaves without running (its folded calls exited 0). */
static void let_go_coalesced(const struct registry *reg, const char *job, struct turn *t)
{
	if (t->coalesce_fd < 0)
		return;
	struct record rec;
	int found;
	if (reg_read_record(reg, job, &rec, &found) == 0 && found) {
		unsigned long long n = record_count(&rec, "coalesced") - t->coalesced;
		if (n)
			warn(job, "%llu coalesced call%s left unanswered", n, n == 1 ? "" : "s");
	}
	record_free(&rec);
	reg_unlock(&t->coalesce_fd);
}

/* Under the job lock, the call leaves without a run. */
static void leave_locked(const struct registry *reg, const char *job, struct turn *t)
{
	let_go_coalesced(reg, job, t);
	line_abandon(reg, job, &t->place);
}

/* A follower counts the calls it leaves under the job lock, which a call
 * holds while it folds: one folded meanwhile is counted, or finds the lock
 * free and follows.  (No limit: the job lock is held only to decide.) */
void turn_leave(const struct registry *reg, const struct run_request *req, struct turn *t)
{
	int job_lock = -1;
	if (t->coalesce_fd >= 0)
		(void)reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, -1, LOCK_CREATE, &job_lock);
	leave_locked(reg, req->job, t);
	reg_unlock(&job_lock);
}

int turn_skip(const struct registry *reg, const struct run_request *req, struct turn *t,
	      const char *reason)
{
	struct job_state st;
	int job_lock = -1;
	/* A follower waits for the job lock with no limit, as turn_leave(). */
	int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, t->coalesce_fd >= 0 ? -1 : req->lock_wait,
			  LOCK_CREATE, &job_lock);
	if (!rc) {
		if ((rc = jobstate_read(reg, req->job, &st)) == 0)
			rc = turn_answer(reg, req->job, &st, t, reason, 0);
		jobstate_free(&st);
	}
	leave_locked(reg, req->job, t);   /* (what an error left) */
	reg_unlock(&job_lock);
	return rc;
}

/* TERM, INT or HUP while the call waits: caught, to leave the line counted, then die of it. */
static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };
static struct sigaction stop_was[sizeof stop_signals / sizeof stop_signals[0]];
static volatile sig_atomic_t stopped_by;

static void on_stop(int sig)
{
	stopped_by = sig;
}

void turn_catch_stops(int on)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++) {
		int restore = !on || (sigaction(stop_signals[i], &sa, &stop_was[i]) == 0 &&
				      stop_was[i].sa_handler == SIG_IGN);   /* (nohup) */
		if (restore)
			sigaction(stop_signals[i], &stop_was[i], NULL);
	}
}

int turn_stopped(void)
{
	return stopped_by;
}

/* ST's record to change, or a PENDING one when the job has none. */
static void record_to_change(const struct job_state *st, struct record *rec)
{
	if (st->found) {
		record_copy(rec, &st->rec);
	} else {
		record_init(rec);
		record_to_pending(rec, now_seconds(), NULL);
	}
}

int turn_answer(const struct registry *reg, const char *job, const struct job_state *st,
		struct turn *t, const char *skip, int coalesced)
{
	let_go_coalesced(reg, job, t);
	if (!skip && !coalesced && t->place.fd < 0 && !t->after)
		return 0;
	struct record rec;
	struct line_numbers nums;
	record_to_change(st, &rec);
	line_numbers(&rec, &nums);
	if (skip)
		record_count_skip(&rec, now_seconds(), skip);
	if (coalesced)
		record_count_up(&rec, "coalesced");
	if (t->after)
		record_set_after(&rec, t->after);
	t->after = NULL;
	line_turn_ends(&rec, &t->place);
	int rc = commit_record(reg, job, jobstate_record(st), st->status, &rec, NULL);
	record_free(&rec);
	line_leave(reg, job, &t->place, nums.head);
	return rc;
}

int turn_join(const struct registry *reg, const struct run_request *req,
	      const struct job_state *st, struct turn *t, int *folded)
{
	struct record rec;
	struct line_numbers nums;
	int rc = 0, changed = 0;

	*folded = 0;
	if (t->place.fd < 0 && req->coalesce) {
		rc = reg_lock(reg, req->job, COALESCE_LOCK, LOCK_EX, 0,
			      LOCK_CREATE | LOCK_QUIET_BUSY, &t->coalesce_fd);
		if (rc == EXIT_BUSY) {
			*folded = 1;
			return turn_answer(reg, req->job, st, t, NULL, 1);
		}
		if (rc)
			return rc;
		t->coalesced = record_count(&st->rec, "coalesced");
	}
	record_to_change(st, &rec);
	if (t->place.fd < 0) {
		const char *kind = req->replace ? "replace" : req->coalesce ? "coalesce"
				   : req->once ? "once" : "wait";
		if ((rc = line_join(reg, req->job, &rec, kind, &t->place)) != 0) {
			record_free(&rec);
			reg_unlock(&t->coalesce_fd);
			return rc;
		}
		/* `runs` tells a waiter that waited for no run. */
		unsigned long long runs = record_count(&st->rec, "runs");
		t->runs_before = runs - (st->status == ST_RUNNING && runs > 0);
		changed = 1;
	}
	line_numbers(&rec, &nums);
	int ask = 0;
	if (req->replace) {
		unsigned long long run = record_count(&rec, "runs");
		if (nums.replaced_below < t->place.n) {
			record_put_number(&rec, "replaced_below", t->place.n);
			changed = 1;
		}
		/* A live dispatched run not yet asked (by us or another). */
		ask = !cancel_no_run(st) && record_count(&rec, "cancel_run") != run &&
		      t->asked_run != run;
		if (ask) {
			struct cancel_request c = { .signal = req->timeout_signal, .kill_after =
				req->kill_after_given ? (req->kill_after > 0 ? req->kill_after : 0) : 10 };
			t->asked_run = cancel_put(&rec, &c);
			t->answer_by = now_mono() + CANCEL_ANSWER_SECONDS;
			changed = 1;
		}
	}
	/* The run asked to stop is a change by hand: on the audit log first
	 * (SPEC §3c); the rest of the write is the line's own bookkeeping. */
	struct audit_line a = { .action = "replace", .job = req->job, .run = t->asked_run,
				.signal = ask ? record_get(&rec, "cancel_signal") : NULL };
	struct audit_change change = {0};
	if (ask)
		rc = audit_begin(reg, &a, req->lock_wait, 0, &change);
	if (changed && !rc)
		rc = commit_record(reg, req->job, jobstate_record(st), st->status, &rec, NULL);
	if (ask && (!rc || change.logged))
		rc = audit_end(reg, &a, req->lock_wait, &change, rc);
	if (rc)
		leave_locked(reg, req->job, t);
	else if (ask)
		(void)signal_owner(&rec, SIGURG);   /* at once, on this host */
	record_free(&rec);
	return rc;
}

void turn_report_unanswered(const struct registry *reg, const struct run_request *req,
			    const struct job_state *st, struct turn *t)
{
	if (t->answer_by <= 0 || now_mono() < t->answer_by)
		return;
	t->answer_by = 0;
	if (st->status == ST_RUNNING && record_count(&st->rec, "runs") == t->asked_run &&
	    !record_get(&st->rec, "cancel_seen"))
		(void)cancel_no_answer(reg, req->job, t->asked_run, record_get(&st->rec, "host"));
}

int turn_superseded(const struct registry *reg, const char *job, const struct turn *t)
{
	struct line_numbers nums;
	return t->place.fd >= 0 && line_read(reg, job, &nums) == 0 &&
	       t->place.n < nums.replaced_below;
}

/* For the head of the line: run over, or call superseded? */
static int turn_may_come(const struct turn *t, const struct job_state *st)
{
	struct line_numbers nums;
	line_numbers(jobstate_record(st), &nums);
	return st->status != ST_RUNNING || t->place.n < nums.replaced_below || stopped_by;
}

int turn_wait(struct registry *reg, const struct run_request *req, struct turn *t,
	      double deadline)
{
	for (;;) {
		struct line_numbers nums;
		int rc = line_read(reg, req->job, &nums);
		if (rc)
			return rc;
		if (t->place.n < nums.replaced_below)
			return 0;
		unsigned long long ahead;
		if ((rc = line_ahead(reg, req->job, &nums, t->place.n, &ahead)) != 0)
			return rc;
		double until = earliest(deadline, t->answer_by > 0 ? t->answer_by : -1);
		if (!ahead) {
			char *jobs[] = { (char *)req->job };
			struct waiter *w = wait_jobs_open(reg, jobs, 1, NULL);
			const struct job_state *st;
			while ((rc = wait_jobs_look(w, &st)) == 0 && !turn_may_come(t, st) &&
			       (rc = wait_jobs_sleep(w, until)) == 0)
				;
			wait_jobs_close(w);
			if (rc == EXIT_BUSY && (deadline < 0 || now_mono() < deadline))
				rc = 0;   /* the answer is due: look */
			return rc;
		}
		/* Blocked until the place ahead is let go; awake each second for a --replace. */
		int fd;
		if ((rc = line_open_place(reg, req->job, ahead, &fd)) != 0)
			return rc;
		if (fd >= 0 && wait_lock(fd, LOCK_SH, until) < 0)
			rc = fail_errno(errno, req->job, "wait for a place in line");
		reg_unlock(&fd);
		if (rc)
			return rc;
		if (deadline >= 0 && now_mono() >= deadline)
			return EXIT_BUSY;
		if ((t->answer_by > 0 && now_mono() >= t->answer_by) || stopped_by)
			return 0;
		if (!reg_same(reg))
			return 0;
	}
}

