#include "run/start.h"
#include "run/turn.h"
#include "liveness/facts.h"
#include "liveness/jobstate.h"
#include "liveness/wait.h"
#include "record/transition.h"
#include "registry/line.h"
#include "registry/lock.h"
#include "registry/slots.h"
#include "registry/write.h"
#include "run/holders.h"
#include "run/logrelay.h"
#include "run/logview.h"
#include "liveness/slotview.h"
#include "util/msg.h"
#include "util/signame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

enum action { RUN, REFUSE, WAIT, REPLAY, NOT_DUE, PAUSED, SUPERSEDED };

static int waits(const struct run_request *req)
{
	return req->wait || req->once || req->coalesce || req->replace;
}

/* --every (step 2a): when the job falls due (a realtime), or -1 when it
 * is due now.  The period runs from the start of the last successful
 * run, or of the live run. */
static double due_at(const struct run_request *req, const struct job_state *st)
{
	const char *from = record_get(&st->rec, st->status == ST_RUNNING ? "started"
									 : "last_success_started");
	time_t t;
	if (req->every <= 0 || !st->found || !from || time_parse(from, &t) < 0)
		return -1;
	double at = (double)t + req->every;
	return now_real() < at ? at : -1;
}

/* "not due until T", T rounded up to the second: no run starts early. */
static void say_not_due(const char *job, double at)
{
	char when[21];
	time_t whole = (time_t)at;
	time_format((double)whole < at ? whole + 1 : whole, when);
	info(job, "not due until %s", when);
}

int start_not_due(const struct registry *reg, const struct run_request *req)
{
	struct job_state st = { .status = ST_PENDING };
	struct buf data = {0};
	const char *why;
	double at = -1;
	if (req->every <= 0)
		return 0;
	if (reg_read(reg, req->job, req->job, RECORD_MAX, &data, &st.found) == 0 && st.found &&
	    record_parse(&st.rec, data.data, data.len, &why) == 0) {
		at = due_at(req, &st);   /* (from the last success: no liveness asked) */
		record_free(&st.rec);
	}
	buf_free(&data);
	if (at < 0)
		return 0;
	say_not_due(req->job, at);
	return 1;
}

/* Step 2 for the state ST, the line NUMS and AHEAD, the nearest live
 * place ahead of this call (0: none). */
static enum action decide(const struct run_request *req, const struct job_state *st,
			  const struct line_numbers *nums, const struct turn *t,
			  unsigned long long ahead)
{
	if (due_at(req, st) >= 0)
		return NOT_DUE;
	if (t->place.fd >= 0 && t->place.n < nums->replaced_below)
		return SUPERSEDED;
	/* A --replace of a paused job would stop the run it drains (and
	 * supersede the calls ahead) to start none: refused as paused, the
	 * run and the line left alone. */
	if (req->replace && st->paused && t->place.fd < 0 && (st->status == ST_RUNNING || ahead))
		return PAUSED;
	if (st->status == ST_RUNNING || ahead)
		return waits(req) ? WAIT : REFUSE;
	if (st->status == ST_DONE && req->once) {
		/* A call that waited for a run replays whatever came of it: it
		 * was the retry --retry-failed asked for.  One that only waited
		 * behind a waiter that left without a run has seen none. */
		enum outcome o = record_outcome(&st->rec);
		int waited = t->place.fd >= 0 && record_count(&st->rec, "runs") != t->runs_before;
		if (!req->retry_failed || waited ||
		    (o != OUTCOME_FAILED && o != OUTCOME_CANCELLED))
			return REPLAY;
	}
	return st->paused ? PAUSED : RUN;
}

/* Step 3: the result of the DONE run, as its message and exit status. */
static int replay(const struct registry *reg, const struct run_request *req,
		  const struct record *r)
{
	enum outcome o = record_outcome(r);
	if (o != OUTCOME_FAILED && o != OUTCOME_CANCELLED) {
		info(req->job, "already done");
		return 0;
	}
	struct run_result end = record_run_result(r);
	struct buf how = {0};
	const char *ended = record_get(r, "ended");
	if (end.cancelled_by)
		buf_addf(&how, "cancelled by %s, ", end.cancelled_by);
	run_describe_result(&how, &end);
	info(req->job, "already done: %s (%s%s%s); clear it to allow a new run",
	     end.cancelled_by ? "cancelled" : "failed", how.data, ended ? ", ended " : "",
	     ended ? ended : "");
	/* --chronic prints the failed run's log, as at its end, and how
	 * it ended, -q or not. */
	if (req->log == LOG_CHRONIC) {
		const char *limit = record_get(r, "timeout");
		logview_chronic(reg, req->job);
		buf_reset(&how);
		run_describe_failure(&how, &end, limit ? strtod(limit, NULL) : 0, NULL, 0, 0);
		warn(req->job, "run %llu %s", record_count(r, "runs"), how.data);
	}
	buf_free(&how);
	return run_result_status(&end);
}

/* A message about the run ST names: "already running (pid P on H since
 * T)", "taking over stale run (...)". */
static void say_run(const char *job, const char *what, const struct job_state *st)
{
	struct buf who = {0};
	jobstate_describe(&st->rec, &who);
	info(job, "%s (%s)", what, who.data ? who.data : "");
	buf_free(&who);
}

/* Step 2e's message: "paused until T (by U@H: NOTE)". */
static void say_paused(const char *job, const struct record *r)
{
	const char *until = record_get(r, "paused_until"), *by = record_get(r, "paused_by");
	const char *note = record_get(r, "paused_note");
	struct buf why = {0};
	if (by || note)
		buf_addf(&why, " (%s%s%s%s)", by ? "by " : "", by ? by : "", by && note ? ": " : "",
			 note ? note : "");
	if (until && strcmp(until, "inf") == 0)
		info(job, "paused until resumed%s", why.data ? why.data : "");
	else
		info(job, "paused until %s%s", until ? until : "?", why.data ? why.data : "");
	buf_free(&why);
}

/* The run lock is not free although no live run is recorded: a reader's
 * probe, a run ending after a forced clear (it needs the job lock to
 * finish), a leftover process of an old run (EARLIER: the DONE run's
 * dispatcher, 0: none), or anyone's flock.  Wait for it without the job
 * lock, blocked in an exclusive flock (a shared holder must not let us
 * through and spin), until DEADLINE (< 0: none), and start over; also once DIR names
 * another directory (removed, replaced: SPEC §5, every wait follows it),
 * which a wait a second at a time notices.  The lock is let go at once,
 * so neither a missing file is made nor the name re-checked here: the
 * start over does both. */
static int wait_run_lock(const struct registry *reg, const char *job, double deadline,
			 long earlier)
{
	char *name = reg_lock_name(job, RUN_LOCK);
	for (;;) {
		int fd = -1;
		int rc = reg_open_lock(reg, job, name, 1, 0, &fd);
		if (!rc && fd >= 0 && (rc = wait_lock(fd, LOCK_EX, deadline)) < 0)
			rc = fail_errno(errno, job, "lock %s", reg_path(reg, name));
		reg_unlock(&fd);
		if (rc == EXIT_BUSY && !reg_same(reg))
			rc = 0;   /* start over in what DIR names now */
		else if (rc == EXIT_BUSY && deadline >= 0 && now_mono() >= deadline)
			rc = run_lock_busy(reg, job, earlier);
		else if (rc == EXIT_BUSY)
			continue;
		free(name);
		return rc;
	}
}

/* Step 4, holding the job lock and now the run lock RUN_LOCK: the run's
 * log begun (--log), then RUNNING over ST's record. */
static int begin(const struct registry *reg, const struct run_request *req, struct run *run,
		 const struct job_state *st, int run_lock, const sigset_t *hold)
{
	int rc = 0;
	if (st->status == ST_STALE)
		say_run(req->job, "taking over stale run", st);
	/* The new log is made, but the last run's is set aside (logrelay.h)
	 * only once RUNNING is written: a dispatch that cannot start leaves
	 * the logs as they were; a log that cannot be made fails it before
	 * anything runs. */
	int failed = jobstate_last_run_failed(st);
	rc = logrelay_prepare(reg, req->job, req->log != LOG_NONE);
	/* From here on a signal must not kill us between RUNNING and DONE:
	 * hold it for the command. */
	if (!rc)
		sigprocmask(SIG_BLOCK, hold, NULL);
	if (!rc && (rc = run_begin(reg, run, st, run_lock)) != 0)
		logrelay_abandon(reg, req->job);
	else if (!rc)   /* (a log that cannot be put in place: no attempt) */
		run->log_status = logrelay_commit(reg, req->job, failed, req->log != LOG_NONE);
	return rc;
}

/* Step 4 under the job lock: the run lock, then RUNNING, which also ends
 * the call's turn in line; the follower's lock goes with that write.
 * EXIT_BUSY: the run lock is busy (*EARLIER: the DONE run's dispatcher). */
static int run_now(const struct registry *reg, const struct run_request *req, struct run *run,
		   struct job_state *st, struct turn *t, int *run_lock, const sigset_t *hold,
		   long *earlier)
{
	struct line_numbers nums;
	line_numbers(jobstate_record(st), &nums);
	int rc = reg_lock(reg, req->job, RUN_LOCK, LOCK_EX, 0, LOCK_CREATE | LOCK_QUIET_BUSY,
			  run_lock);
	if (rc == EXIT_BUSY && st->status == ST_DONE) {
		const char *pid = record_get(&st->rec, "pid");
		*earlier = pid ? strtol(pid, NULL, 10) : 0;
	}
	if (rc)
		return rc;
	/* The RUNNING record is written from ST's: the end of our turn goes
	 * in with it. */
	if (t->place.fd >= 0 && st->found)
		line_turn_ends(&st->rec, &t->place);
	else if (st->found && nums.next > nums.head)
		line_passed(&st->rec, &nums);
	if ((rc = begin(reg, req, run, st, *run_lock, hold)) != 0) {
		reg_unlock(run_lock);
		return rc;
	}
	reg_unlock(&t->coalesce_fd);
	if (t->place.fd < 0)
		line_sweep(reg, req->job, nums.head, nums.next);
	line_leave(reg, req->job, &t->place, nums.head);
	return 0;
}

/* A refusal outside the decision (no free slot): skipped + 1, and the
 * end of the call's turn, under the job lock. */
static int count_skip(const struct registry *reg, const struct run_request *req, struct turn *t)
{
	struct job_state st;
	int job_lock = -1;
	int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, req->lock_wait, LOCK_CREATE, &job_lock);
	if (rc)
		return rc;
	if ((rc = jobstate_read(reg, req->job, &st)) == 0)
		rc = turn_answer(reg, req->job, &st, t, 1, 0);
	jobstate_free(&st);
	reg_unlock(&job_lock);
	return rc;
}

/* Step 2f, without the job lock: one free slot of each group.  None
 * free: a call that waits waits in the group's line within its --wait
 * limit, DEADLINE; any other does not run (75 or -E), counted as a skip.
 * 0: held, and the caller decides afresh. */
static int take_slots(const struct registry *reg, const struct run_request *req,
		      struct turn *t, double deadline)
{
	size_t full;
	struct group_place gp = GROUP_PLACE_NONE;
	struct entry_watch watch = { -1, -1 };
	struct buf files = {0};
	int rc;
	if (waits(req))
		wait_watch_open(&watch, reg);
	while ((rc = slots_take(reg, req->job, req->slots, waits(req), req->lock_wait, &gp,
				&full)) == SLOTS_WAIT) {
		/* The wait follows DIR by name, and lasts while the call still
		 * wants the slots (a newer --replace may supersede it, looked
		 * at once a second): else it decides afresh. */
		if (!reg_same(reg) || turn_superseded(reg, req->job, t)) {
			rc = 0;
			break;
		}
		rc = EXIT_BUSY;
		if (deadline >= 0 && now_mono() >= deadline)
			break;
		buf_reset(&files);
		buf_addf(&files, ".%s.slot", gp.group);
		wait_watch(&watch, files.data, earliest(deadline, now_mono() + 1));
	}
	if (rc || !slots_held(req->slots))
		slots_release(req->slots);
	line_group_leave(reg, req->job, &gp, req->lock_wait);
	wait_watch_close(&watch);
	buf_free(&files);
	if (rc == EXIT_BUSY) {
		const struct slot_group *g = &req->slots->groups[full];
		struct slot_views held;
		struct buf who = {0};
		slotview_group(reg, g->name, g->n, &held);
		slotview_holders(&who, &held);
		info(req->job, "no free slot of %s (%s)%s%s", g->name, who.data ? who.data : "",
		     req->wait_arg ? " after --wait " : "", req->wait_arg ? req->wait_arg : "");
		slotview_free(&held);
		buf_free(&who);
		if (!waits(req) && (rc = count_skip(reg, req, t)) != 0)
			return rc;
		return req->conflict_code;
	}
	struct buf slots = {0};
	slots_format(req->slots, &slots);
	if (!rc && slots.len && setenv("JOBREG_SLOTS", slots.data, 1) < 0)
		rc = fail_errno(errno, req->job, "setenv");
	buf_free(&slots);
	return rc;
}

/* The wait passed: say so, leave the line. */
static int give_up(const struct registry *reg, const struct run_request *req, struct turn *t)
{
	info(req->job, "still running after --wait %s", req->wait_arg ? req->wait_arg : "");
	turn_leave(reg, req, t);
	return req->conflict_code;
}

/* One decision under the job lock: the exit status of an answer (*DONE),
 * or 0 to wait (*WAITING), to take the slots first (*TAKE_SLOTS), or with
 * *RUN_LOCK held to run; EXIT_BUSY with *LOCK_BUSY when the run lock was
 * busy. */
static int decide_locked(struct registry *reg, const struct run_request *req, struct run *run,
			 struct turn *t, int *run_lock, const sigset_t *hold, int *done,
			 int *waiting, int *take_slots, int *lock_busy, long *earlier)
{
	struct job_state st;
	struct line_numbers nums;
	int job_lock = -1, folded = 0;

	*done = *waiting = *take_slots = *lock_busy = 0;
	int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, req->lock_wait, LOCK_CREATE, &job_lock);
	if (rc) {
		*done = 1;
		return rc;
	}
	if ((rc = jobstate_read(reg, req->job, &st)) != 0) {
		jobstate_free(&st);
		reg_unlock(&job_lock);
		*done = 1;
		return rc;
	}
	turn_report_unanswered(reg, req, &st, t);
	line_numbers(jobstate_record(&st), &nums);
	/* The nearest live place ahead: below ours, or anywhere in line. */
	unsigned long long ahead = 0;
	if ((nums.next > nums.head || t->place.fd >= 0) &&
	    (rc = line_ahead(reg, req->job, &nums, t->place.fd >= 0 ? t->place.n : nums.next,
			     &ahead)) != 0) {
		jobstate_free(&st);
		reg_unlock(&job_lock);
		*done = 1;
		return rc;
	}
	*done = 1;
	enum action act = decide(req, &st, &nums, t, ahead);
	/* Step 2f: a run takes its slots without the job lock, then decides
	 * afresh; a call that will not run after all gives them back. */
	if (act != RUN)
		slots_release(req->slots);
	switch (act) {
	case RUN:
		if (req->slots->count && !slots_held(req->slots)) {
			*done = 0;
			*take_slots = 1;
			break;
		}
		rc = run_now(reg, req, run, &st, t, run_lock, hold, earlier);
		*done = rc != EXIT_BUSY;
		*lock_busy = rc == EXIT_BUSY;
		break;
	case REFUSE:
		if (st.status == ST_RUNNING)
			say_run(req->job, "already running", &st);
		else
			info(req->job, "%llu waiting", line_waiting(reg, req->job, &st.rec));
		rc = turn_answer(reg, req->job, &st, t, 1, 0);
		rc = rc ? rc : req->conflict_code;
		break;
	case PAUSED:
		say_paused(req->job, &st.rec);
		turn_let_go_coalesced(reg, req->job, t);
		rc = turn_answer(reg, req->job, &st, t, 1, 0);
		rc = rc ? rc : req->conflict_code;
		break;
	case NOT_DUE:
		say_not_due(req->job, due_at(req, &st));
		turn_let_go_coalesced(reg, req->job, t);
		rc = turn_answer(reg, req->job, &st, t, 0, 0);
		break;
	case REPLAY:
		turn_let_go_coalesced(reg, req->job, t);
		rc = turn_answer(reg, req->job, &st, t, 0, 0);
		rc = rc ? rc : replay(reg, req, &st.rec);
		break;
	case SUPERSEDED:
		info(req->job, "superseded by a newer --replace");
		turn_let_go_coalesced(reg, req->job, t);
		rc = turn_answer(reg, req->job, &st, t, 0, 0);
		rc = rc ? rc : req->conflict_code;
		break;
	case WAIT:
		rc = turn_join(reg, req, &st, t, &folded);
		if (!rc && folded)
			info(req->job, "coalesced into the waiting run");
		*done = rc || folded;
		*waiting = !*done;
		break;
	}
	jobstate_free(&st);
	reg_unlock(&job_lock);
	return rc;
}

int start_run(struct registry *reg, const struct run_request *req, struct run *run,
	      int *run_lock, const sigset_t *hold)
{
	double deadline = req->wait && req->wait_limit >= 0 ? now_mono() + req->wait_limit : -1;
	double lock_deadline = -1;   /* set once the run lock was found busy */
	struct turn t = { .place = PLACE_NONE, .coalesce_fd = -1 };

	for (;;) {
		int done, waiting, take, lock_busy;
		long earlier = 0;
		int rc = decide_locked(reg, req, run, &t, run_lock, hold, &done, &waiting, &take,
				       &lock_busy, &earlier);
		if (done) {
			if (*run_lock < 0) {
				slots_release(req->slots);
				turn_leave(reg, req, &t);
			}
			return rc;
		}
		if (take) {
			if ((rc = take_slots(reg, req, &t, deadline)) != 0) {
				turn_leave(reg, req, &t);
				return rc;
			}
		} else if (waiting) {
			rc = turn_wait(reg, req, &t, deadline);
			if (rc == EXIT_BUSY)
				return give_up(reg, req, &t);
			lock_deadline = -1;   /* a new busy spell gets its -w */
		} else if (lock_busy) {
			/* A waiter whose turn has come waits for it within its
			 * own --wait (SPEC §5a), any other call within -w. */
			if (lock_deadline < 0 && t.place.fd < 0)
				lock_deadline = now_mono() + req->lock_wait;
			rc = wait_run_lock(reg, req->job, t.place.fd >= 0 ? deadline : lock_deadline,
					   earlier);
			if (rc == EXIT_BUSY && t.place.fd >= 0) {
				turn_leave(reg, req, &t);
				return req->conflict_code;
			}
		}
		/* Start over in what DIR names now: the wait follows it (and a
		 * busy run lock there is a new spell). */
		if (!rc && !reg_same(reg))
			lock_deadline = -1;
		if (rc || (rc = reg_follow(reg, 1)) != 0) {
			slots_release(req->slots);
			turn_leave(reg, req, &t);
			return rc;
		}
	}
}
