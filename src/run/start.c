#include "run/start.h"
#include "liveness/facts.h"
#include "liveness/jobstate.h"
#include "liveness/wait.h"
#include "record/transition.h"
#include "registry/line.h"
#include "registry/lock.h"
#include "registry/write.h"
#include "run/holders.h"
#include "run/logrelay.h"
#include "run/logview.h"
#include "util/msg.h"
#include "util/signame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

/* How long a cancel may go unanswered before it is reported (SPEC §5). */
#define CANCEL_ANSWER_WAIT 2.0

enum action { RUN, REFUSE, WAIT, REPLAY, NOT_DUE, PAUSED, SUPERSEDED };

/* This call's standing in the job's line. */
struct turn {
	struct place place;             /* fd -1: none (yet) */
	int coalesce_fd;                /* --coalesce: the follower's lock */
	unsigned long long coalesced;   /* `coalesced` when it became the follower */
	unsigned long long asked_run;   /* --replace: the run it asked to stop */
	double answer_by;               /* now_mono() by which the ask is answered
					 * (0: answered or reported) */
	int waited;                     /* it has waited for a run in progress */
};

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

/* Step 2 for the state ST, the line NUMS and AHEAD, the nearest live
 * place ahead of this call (0: none). */
static enum action decide(const struct run_request *req, const struct job_state *st,
			  const struct line_numbers *nums, const struct turn *t,
			  unsigned long long ahead)
{
	if (t->place.fd >= 0 && t->place.n < nums->replaced_below)
		return SUPERSEDED;
	if (due_at(req, st) >= 0)
		return NOT_DUE;
	if (st->status == ST_RUNNING || ahead)
		return waits(req) ? WAIT : REFUSE;
	if (st->status == ST_DONE && req->once) {
		/* A call that waited replays whatever came of that run: it was
		 * the retry --retry-failed asked for. */
		enum outcome o = record_outcome(&st->rec);
		if (!req->retry_failed || t->waited ||
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

/* The follower of --coalesce leaves without running: the calls folded
 * into it have already exited 0. */
static void let_go_coalesced(const struct registry *reg, const char *job, struct turn *t)
{
	if (t->coalesce_fd < 0)
		return;
	struct buf data = {0};
	struct record rec;
	const char *why;
	int found = 0;
	if (reg_read(reg, job, job, RECORD_MAX, &data, &found) == 0 && found &&
	    record_parse(&rec, data.data, data.len, &why) == 0) {
		unsigned long long n = record_count(&rec, "coalesced") - t->coalesced;
		if (n)
			warn(job, "%llu coalesced call%s left unanswered", n, n == 1 ? "" : "s");
		record_free(&rec);
	}
	buf_free(&data);
	reg_unlock(&t->coalesce_fd);
}

/* The call leaves without a run: its place and its follower's lock go. */
static void leave(const struct registry *reg, const char *job, struct turn *t)
{
	let_go_coalesced(reg, job, t);
	line_abandon(reg, job, &t->place);
}

/* Under the job lock, the write that answers the call: with SKIP a
 * refused start counted, with COALESCED a folded call counted; and the
 * end of the call's turn when it has a place.  Nothing to write: 0. */
static int answer(const struct registry *reg, const char *job, const struct job_state *st,
		  struct turn *t, int skip, int coalesced)
{
	if (!skip && !coalesced && t->place.fd < 0)
		return 0;
	struct record rec;
	struct line_numbers nums;
	if (st->found) {
		record_copy(&rec, &st->rec);
	} else {
		record_init(&rec);
		record_to_pending(&rec, now_seconds(), NULL);
	}
	line_numbers(&rec, &nums);
	if (skip)
		record_count_skip(&rec, now_seconds());
	if (coalesced)
		record_count_up(&rec, "coalesced");
	line_turn_ends(&rec, &t->place);
	int rc = commit_record(reg, job, jobstate_record(st), st->status, &rec, NULL);
	record_free(&rec);
	line_leave(reg, job, &t->place, nums.head);
	return rc;
}

/* Under the job lock, a call that will wait: take its place in line (a
 * --coalesce call only if it becomes the follower: else it is folded,
 * *FOLDED), and with --replace supersede the places ahead and ask the
 * live run to stop.  One write. */
static int join(const struct registry *reg, const struct run_request *req,
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
			return answer(reg, req->job, st, t, 0, 1);
		}
		if (rc)
			return rc;
		t->coalesced = record_count(&st->rec, "coalesced");
	}
	if (st->found) {
		record_copy(&rec, &st->rec);
	} else {
		record_init(&rec);
		record_to_pending(&rec, now_seconds(), NULL);
	}
	if (t->place.fd < 0) {
		if ((rc = line_join(reg, req->job, &rec, &t->place)) != 0) {
			record_free(&rec);
			reg_unlock(&t->coalesce_fd);
			return rc;
		}
		changed = 1;
	}
	line_numbers(&rec, &nums);
	int ask = 0;
	if (req->replace) {
		const char *owner = record_get(&rec, "owner");
		unsigned long long run = record_count(&rec, "runs");
		if (nums.replaced_below < t->place.n) {
			char n[24];
			snprintf(n, sizeof n, "%llu", t->place.n);
			record_put(&rec, "replaced_below", n);
			changed = 1;
		}
		/* A live dispatched run not yet asked (by us or another). */
		ask = st->status == ST_RUNNING && owner && strcmp(owner, "lock") == 0 &&
		      record_count(&rec, "cancel_run") != run && t->asked_run != run;
		if (ask) {
			char sig[SIGNAME_MAX];
			struct buf by = {0};
			user_at_host(&by);
			record_ask_cancel(&rec, signal_name(req->timeout_signal, sig),
					  req->kill_after > 0 ? req->kill_after : 10, by.data,
					  now_seconds());
			buf_free(&by);
			t->asked_run = run;
			t->answer_by = now_mono() + CANCEL_ANSWER_WAIT;
			changed = 1;
		}
	}
	if (changed)
		rc = commit_record(reg, req->job, jobstate_record(st), st->status, &rec, NULL);
	if (rc)
		leave(reg, req->job, t);
	else if (ask)
		(void)signal_owner(&rec, SIGURG);   /* at once, on this host */
	record_free(&rec);
	return rc;
}

/* A --replace whose cancel went unanswered for CANCEL_ANSWER_WAIT: say so,
 * naming who holds the run lock, and go on waiting (SPEC §5a). */
static void report_unanswered(const struct registry *reg, const struct run_request *req,
			      const struct job_state *st, struct turn *t)
{
	if (t->answer_by <= 0 || now_mono() < t->answer_by)
		return;
	t->answer_by = 0;
	if (st->status != ST_RUNNING || record_count(&st->rec, "runs") != t->asked_run ||
	    record_get(&st->rec, "cancel_seen"))
		return;
	const char *host = record_get(&st->rec, "host");
	warn(req->job, "run %llu has not taken up the cancel within %gs: its dispatcher on %s"
	     " is dead or cut off while the run lock is held", t->asked_run, CANCEL_ANSWER_WAIT,
	     host ? host : "?");
	(void)run_lock_busy(reg, req->job, 0);
}

/* The run lock is not free although no live run is recorded: a reader's
 * probe, a run ending after a forced clear (it needs the job lock to
 * finish), a leftover process of an old run (EARLIER: the DONE run's
 * dispatcher, 0: none), or anyone's flock.  Wait for it without the job
 * lock, blocked in an exclusive flock (a shared holder must not let us
 * through and spin), until DEADLINE, and start over; also once DIR names
 * another directory (removed, replaced: SPEC §5, every wait follows it),
 * which a wait a second at a time notices.  The lock is let go at once,
 * so neither a missing file is made nor the name re-checked here: the
 * start over does both. */
static int wait_run_lock(const struct registry *reg, const char *job, double deadline,
			 long earlier)
{
	for (;;) {
		double left = deadline - now_mono();
		int fd = -1;
		int rc = reg_lock(reg, job, RUN_LOCK, LOCK_EX, left > 1 ? 1 : left > 0 ? left : 0,
				  LOCK_QUIET_BUSY | LOCK_NO_RECHECK, &fd);
		reg_unlock(&fd);
		if (rc != EXIT_BUSY || !reg_same(reg))
			return rc == EXIT_BUSY ? 0 : rc;
		if (now_mono() >= deadline)
			return run_lock_busy(reg, job, earlier);
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
	if ((rc = begin(reg, req, run, st, *run_lock, hold)) != 0) {
		reg_unlock(run_lock);
		return rc;
	}
	reg_unlock(&t->coalesce_fd);
	line_leave(reg, req->job, &t->place, nums.head);
	return 0;
}

/* Is the run over, or this call superseded?  (The head of the line
 * waits for this.) */
static int turn_may_come(void *ctx, size_t index, const struct job_state *st)
{
	const struct turn *t = ctx;
	struct line_numbers nums;
	(void)index;
	line_numbers(jobstate_record(st), &nums);
	return st->status != ST_RUNNING || t->place.n < nums.replaced_below;
}

/* Wait, without the job lock, until the call's turn may have come: no
 * live place ahead of it and the run in progress over, or superseded,
 * or a --replace's answer is due.  0 to decide again; EXIT_BUSY when
 * DEADLINE (< 0: none) passed. */
static int wait_turn(struct registry *reg, const struct run_request *req, struct turn *t,
		     double deadline)
{
	for (;;) {
		struct line_numbers nums;
		int rc = line_read(reg, req->job, &nums);
		if (rc)
			return rc;
		if (t->place.n < nums.replaced_below)
			return 0;
		unsigned long long ahead = line_ahead(reg, req->job, &nums, t->place.n);
		double until = earliest(deadline, t->answer_by > 0 ? t->answer_by : -1);
		if (!ahead) {
			char *jobs[] = { (char *)req->job };
			rc = wait_until(reg, jobs, 1, turn_may_come, t, until);
			if (rc == EXIT_BUSY && (deadline < 0 || now_mono() < deadline))
				rc = 0;   /* the answer is due: look */
			return rc;
		}
		/* Blocked on the place ahead, a second at a time, to see a
		 * --replace; the kernel wakes us when its holder goes. */
		double now = now_mono(), slice = 1;
		if (until >= 0 && until - now < slice)
			slice = until > now ? until - now : 0;
		if ((rc = line_wait_for(reg, req->job, ahead, slice)) != 0 && rc != EXIT_BUSY)
			return rc;
		if (deadline >= 0 && now_mono() >= deadline)
			return EXIT_BUSY;
		if (t->answer_by > 0 && now_mono() >= t->answer_by)
			return 0;
		if (!reg_same(reg))
			return 0;
	}
}

/* The wait passed: say so, leave the line. */
static int give_up(const struct registry *reg, const struct run_request *req, struct turn *t)
{
	info(req->job, "still running after --wait %s", req->wait_arg ? req->wait_arg : "");
	leave(reg, req->job, t);
	return req->conflict_code;
}

/* One decision under the job lock: the exit status of an answer (*DONE),
 * or 0 to wait (*WAITING) or with *RUN_LOCK held to run; EXIT_BUSY with
 * *LOCK_BUSY when the run lock was busy. */
static int decide_locked(struct registry *reg, const struct run_request *req, struct run *run,
			 struct turn *t, int *run_lock, const sigset_t *hold, int *done,
			 int *waiting, int *lock_busy, long *earlier)
{
	struct job_state st;
	struct line_numbers nums;
	int job_lock = -1, folded = 0;

	*done = *waiting = *lock_busy = 0;
	int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, req->lock_wait, LOCK_CREATE, &job_lock);
	if (rc) {
		*done = 1;
		return rc;
	}
	if ((rc = jobstate_read(reg, req->job, &st)) != 0) {
		reg_unlock(&job_lock);
		*done = 1;
		return rc;
	}
	report_unanswered(reg, req, &st, t);
	line_numbers(jobstate_record(&st), &nums);
	/* The nearest live place ahead: below ours, or anywhere in line. */
	unsigned long long ahead = 0;
	if (nums.next > nums.head || t->place.fd >= 0)
		ahead = line_ahead(reg, req->job, &nums, t->place.fd >= 0 ? t->place.n : nums.next);
	*done = 1;
	switch (decide(req, &st, &nums, t, ahead)) {
	case RUN:
		rc = run_now(reg, req, run, &st, t, run_lock, hold, earlier);
		*done = rc != EXIT_BUSY;
		*lock_busy = rc == EXIT_BUSY;
		break;
	case REFUSE:
		if (st.status == ST_RUNNING)
			say_run(req->job, "already running", &st);
		else
			info(req->job, "%llu waiting", line_waiting(reg, req->job, &st.rec));
		rc = answer(reg, req->job, &st, t, 1, 0);
		rc = rc ? rc : req->conflict_code;
		break;
	case PAUSED:
		say_paused(req->job, &st.rec);
		let_go_coalesced(reg, req->job, t);
		rc = answer(reg, req->job, &st, t, 1, 0);
		rc = rc ? rc : req->conflict_code;
		break;
	case NOT_DUE: {
		char when[21];
		double at = due_at(req, &st);
		time_t whole = (time_t)at;
		time_format(whole < at ? whole + 1 : whole, when);
		info(req->job, "not due until %s", when);
		let_go_coalesced(reg, req->job, t);
		rc = answer(reg, req->job, &st, t, 0, 0);
		break;
	}
	case REPLAY:
		let_go_coalesced(reg, req->job, t);
		rc = answer(reg, req->job, &st, t, 0, 0);
		rc = rc ? rc : replay(reg, req, &st.rec);
		break;
	case SUPERSEDED:
		info(req->job, "superseded by a newer --replace");
		let_go_coalesced(reg, req->job, t);
		rc = answer(reg, req->job, &st, t, 0, 0);
		rc = rc ? rc : req->conflict_code;
		break;
	case WAIT:
		rc = join(reg, req, &st, t, &folded);
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
		int done, waiting, lock_busy;
		long earlier = 0;
		int rc = decide_locked(reg, req, run, &t, run_lock, hold, &done, &waiting,
				       &lock_busy, &earlier);
		if (done) {
			if (*run_lock < 0)
				leave(reg, req->job, &t);
			return rc;
		}
		if (waiting) {
			rc = wait_turn(reg, req, &t, deadline);
			if (rc == EXIT_BUSY)
				return give_up(reg, req, &t);
			t.waited = 1;
			lock_deadline = -1;   /* a new busy spell gets its -w */
		} else if (lock_busy) {
			if (lock_deadline < 0)
				lock_deadline = now_mono() + req->lock_wait;
			rc = wait_run_lock(reg, req->job, lock_deadline, earlier);
		}
		/* Start over in what DIR names now: the wait follows it (and a
		 * busy run lock there is a new spell). */
		if (!rc && !reg_same(reg))
			lock_deadline = -1;
		if (rc || (rc = reg_follow(reg, 1)) != 0) {
			leave(reg, req->job, &t);
			return rc;
		}
	}
}
