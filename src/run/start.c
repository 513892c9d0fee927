/* start: steps 1-4 of jobreg-dispatch (see start.h).  Past 450 lines:
 * decide() is the pure part, decide_locked() its facts and its write. */
#include "run/start.h"
#include "liveness/jobstate.h"
#include "liveness/wait.h"
#include "record/transition.h"
#include "registry/line.h"
#include "registry/lock.h"
#include "registry/pause.h"
#include "registry/slots.h"
#include "run/after.h"
#include "run/holders.h"
#include "run/logrelay.h"
#include "run/logview.h"
#include "liveness/slotview.h"
#include "util/msg.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/file.h>

static int waits(const struct run_request *req)
{
	return req->wait || req->once || req->coalesce || req->replace;
}

/* --every (step 2a): when the job falls due (a realtime), -1: due at NOW.
 * From the start of the last successful run, or of the live run. */
static double due_at(const struct run_request *req, const struct job_state *st, double now)
{
	const char *from = record_get(&st->rec, st->status == ST_RUNNING ? "started"
									 : "last_success_started");
	time_t t;
	if (req->every <= 0 || !st->found || !from || time_parse(from, &t) < 0)
		return -1;
	double at = (double)t + req->every;
	return now < at ? at : -1;
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
	double at = -1;
	int said = 0;
	if (req->every <= 0 && !req->nafter)
		return 0;
	if (reg_read_record(reg, req->job, &st.rec, &st.found) == 0 && st.found) {
		at = due_at(req, &st, now_real());   /* (no liveness asked) */
		if (at >= 0)
			say_not_due(req->job, at);
		else
			said = after_not_due(reg, req, &st.rec);
	}
	record_free(&st.rec);
	return at >= 0 || said;
}

enum step decide(const struct run_request *req, const struct decide_facts *f)
{
	const struct job_state *st = f->st;
	const struct turn *t = f->t;
	int placed = t->place.fd >= 0, busy = st->status == ST_RUNNING || f->ahead;
	int paused = st->paused || f->registry_paused;
	if (due_at(req, st, f->now) >= 0)
		return STEP_NOT_DUE;
	if (f->nafter && after_unmet(&st->rec, f->after, f->nafter) >= 0)
		return req->wait ? STEP_WAIT_AFTER : STEP_AFTER;
	if (placed && t->place.n < f->nums.replaced_below)
		return STEP_SUPERSEDED;
	/* A --replace of a paused job would stop its run to start none:
	 * refused as paused, the run and the line left alone. */
	if (req->replace && paused && !placed && busy)
		return STEP_PAUSED;
	if (busy && waits(req))
		return STEP_WAIT;
	if (busy)
		return st->status == ST_RUNNING ? STEP_REFUSE_RUNNING : STEP_REFUSE_WAITING;
	if (st->status == ST_DONE && req->once) {
		/* A call that waited for a run replays whatever came of it
		 * (the retry it asked for); `runs` tells one that saw none. */
		enum outcome o = record_outcome(&st->rec);
		int waited = placed && record_count(&st->rec, "runs") != t->runs_before;
		if (!req->retry_failed || waited ||
		    (o != OUTCOME_FAILED && o != OUTCOME_CANCELLED))
			return STEP_REPLAY;
	}
	if (paused)
		return STEP_PAUSED;
	return f->slots_held ? STEP_RUN : STEP_TAKE_SLOTS;
}

/* Step 3: the result of the DONE run, as its message and exit status. */
static int replay(const struct registry *reg, const struct run_request *req,
		  const struct record *r)
{
	enum outcome o = record_outcome(r);
	struct run_result end = record_run_result(r);
	struct buf how = {0};
	const char *ended = record_get(r, "ended");
	if (o == OUTCOME_WARNING) {
		run_describe_result(&how, &end);
		info(req->job, "already done: with a warning (%s%s%s)", how.data,
		     ended ? ", ended " : "", ended ? ended : "");
		buf_free(&how);
		return 0;
	}
	if (o != OUTCOME_FAILED && o != OUTCOME_CANCELLED) {
		info(req->job, "already done");
		return 0;
	}
	if (end.cancelled_by)
		buf_addf(&how, "cancelled by %s, ", end.cancelled_by);
	run_describe_result(&how, &end);
	info(req->job, "already done: %s (%s%s%s); --retry-failed runs it again",
	     end.cancelled_by ? "cancelled" : "failed", how.data, ended ? ", ended " : "",
	     ended ? ended : "");
	/* --chronic: the log and how it ended, as at the run's end, -q or not. */
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

/* "WHAT (pid P on H since T)" about ST's run. */
static void say_run(const char *job, const char *what, const struct job_state *st)
{
	struct buf who = {0};
	jobstate_describe(&st->rec, &who);
	info(job, "%s (%s)", what, who.data ? who.data : "");
	buf_free(&who);
}

/* Step 2e's message: "paused until T (by U@H: NOTE); jobreg-set --resume
 * JOB ends it" — the job's own pause, else the registry's (PAUSE). */
static void say_paused(const char *job, const struct job_state *st, const struct record *pause)
{
	struct buf why = {0};
	record_pause_describe(st->paused ? &st->rec : pause, &why);
	info(job, "paused %s; jobreg-set --resume %s ends it", why.data,
	     st->paused ? job : "-a");
	buf_free(&why);
}

/* The run lock is busy with no live run recorded: a reader's probe, a run
 * ending after a forced clear (it needs the job lock), a leftover of an
 * old run (EARLIER: its dispatcher, 0: none), anyone's flock.  Wait in an
 * exclusive flock (a shared one would let us through to spin) until
 * DEADLINE (< 0: none), DIR names another directory (SPEC §5) or a signal;
 * let it go at once: the start over makes the file and checks the name. */
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
		if (rc == EXIT_BUSY && (!reg_same(reg) || turn_stopped()))
			rc = 0;   /* start over in what DIR names now, or stop */
		else if (rc == EXIT_BUSY && deadline >= 0 && now_mono() >= deadline)
			rc = run_lock_busy(reg, job, earlier);
		else if (rc == EXIT_BUSY)
			continue;
		free(name);
		return rc;
	}
}

/* A dispatch through steps 1-4. */
struct call {
	struct registry *reg;
	const struct run_request *req;
	struct run *run;
	int *run_lock;
	const sigset_t *hold;   /* held once the run starts */
	struct turn t;
	double deadline;        /* when --wait ends (< 0: no limit) */
	long earlier;    /* the run lock was busy: the DONE run's dispatcher (0: none) */
};

/* Step 4, holding both locks: the run's log begun, then RUNNING. */
static int begin(const struct call *c, const struct job_state *st)
{
	const struct run_request *req = c->req;
	if (st->status == ST_STALE) {
		say_run(req->job, "taking over stale run", st);
		c->run->took_over = 1;
	}
	/* The last log is set aside only once RUNNING is written (logrelay.h);
	 * a log that cannot be made fails the run before anything runs. */
	int failed = jobstate_last_run_failed(st);
	int rc = logrelay_prepare(c->reg, req->job, req->log != LOG_NONE);
	/* No signal may kill us between RUNNING and DONE: held for the command. */
	if (!rc)
		sigprocmask(SIG_BLOCK, c->hold, NULL);
	if (!rc && (rc = run_begin(c->reg, c->run, st, *c->run_lock)) != 0)
		logrelay_abandon(c->reg, req->job);
	else if (!rc)   /* (a log that cannot be put in place: no attempt) */
		c->run->log_status = logrelay_commit(c->reg, req->job, failed, req->log != LOG_NONE);
	return rc;
}

/* Step 4 under the job lock: the run lock, then RUNNING, which ends the
 * call's turn (and the follower's lock).  EXIT_BUSY: the run lock is busy
 * (c->earlier: the DONE run's dispatcher). */
static int run_now(struct call *c, struct job_state *st)
{
	const struct registry *reg = c->reg;
	const struct run_request *req = c->req;
	struct turn *t = &c->t;
	struct line_numbers nums;
	line_numbers(jobstate_record(st), &nums);
	int rc = reg_lock(reg, req->job, RUN_LOCK, LOCK_EX, 0, LOCK_CREATE | LOCK_QUIET_BUSY,
			  c->run_lock);
	if (rc == EXIT_BUSY && st->status == ST_DONE) {
		const char *pid = record_get(&st->rec, "pid");
		c->earlier = pid ? strtol(pid, NULL, 10) : 0;
	}
	if (rc)
		return rc;
	/* With RUNNING: the end of our turn, --every's period (SPEC §5b). */
	if (req->every > 0)
		record_set_every(&st->rec, req->every);
	if (t->place.fd >= 0 && st->found)
		line_turn_ends(&st->rec, &t->place);
	else if (st->found && nums.next > nums.head)
		line_passed(&st->rec, &nums);
	if ((rc = begin(c, st)) != 0) {
		reg_unlock(c->run_lock);
		return rc;
	}
	reg_unlock(&t->coalesce_fd);
	if (t->place.fd < 0)
		line_sweep(reg, req->job, nums.head, nums.next);
	line_leave(reg, req->job, &t->place, nums.head);
	return 0;
}

/* Step 2f, without the job lock: one free slot of each group (a call
 * that waits waits in the group's line until DEADLINE).  0: held, decide
 * afresh; EXIT_BUSY, said: none. */
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
		/* Decided afresh once DIR names another directory, or a newer
		 * --replace or a signal ends the wait (looked at once a second). */
		if (!reg_same(reg) || turn_stopped() || turn_superseded(reg, req->job, t)) {
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
	if (rc == EXIT_BUSY && !turn_stopped()) {
		const struct slot_group *g = &req->slots->groups[full];
		struct slot_views held;
		struct buf who = {0};
		slotview_group(reg, g->name, g->n, &held);
		slotview_holders(&who, &held);
		info(req->job, "no free slot of %s (%s)%s%s", g->name, who.data ? who.data : "",
		     req->wait_arg ? " after --wait " : "", req->wait_arg ? req->wait_arg : "");
		slotview_free(&held);
		buf_free(&who);
	}
	struct buf slots = {0};
	slots_format(req->slots, &slots);
	if (!rc && slots.len && setenv("JOBREG_SLOTS", slots.data, 1) < 0)
		rc = fail_errno(errno, req->job, "setenv");
	buf_free(&slots);
	return rc;
}

/* What a call does after a decision under the job lock. */
enum next {
	NEXT_END,         /* the call is answered: its exit status */
	NEXT_RUN,         /* the run lock is held: run */
	NEXT_WAIT,        /* its turn in line */
	NEXT_TAKE_SLOTS,  /* its slots, then decide afresh */
	NEXT_RUN_LOCK,    /* the run lock was busy: wait for it, decide afresh */
	NEXT_WAIT_AFTER,  /* --after --wait: for the named jobs, decide afresh */
};

/* The skip_reason of each step that refuses a start (SPEC §5a Skips). */
static const char *const skip_reasons[] = {
	[STEP_SUPERSEDED] = "superseded", [STEP_REFUSE_RUNNING] = "running",
	[STEP_REFUSE_WAITING] = "waiting", [STEP_PAUSED] = "paused", [STEP_RUN] = NULL,
};

/* Under the job lock: step 2's facts, the decision, and its write (an
 * answer, a place in line, RUNNING).  An exit status; *NEXT what next. */
static int decide_locked(struct call *c, enum next *next)
{
	const struct run_request *req = c->req;
	const char *job = req->job;
	struct turn *t = &c->t;
	struct job_state st;
	struct record pause;
	int job_lock = -1, folded = 0;
	struct decide_facts f = { .st = &st, .t = t, .now = now_real() };
	struct after_facts after = {0};

	*next = NEXT_END;
	int rc = reg_lock(c->reg, job, JOB_LOCK, LOCK_EX, req->lock_wait, LOCK_CREATE, &job_lock);
	if (rc)
		return rc;
	record_init(&pause);
	if ((rc = jobstate_read(c->reg, job, &st)) != 0 ||
	    (rc = run_lists_check(req, &st.rec)) != 0)
		goto out;
	/* --after: the named jobs, read with ours locked (SPEC §5d). */
	if (req->nafter && (rc = after_gather(c->reg, req, &after)) != 0)
		goto out;
	f.after = after.f;
	f.nafter = after.n;
	turn_report_unanswered(c->reg, req, &st, t);
	line_numbers(jobstate_record(&st), &f.nums);
	/* The nearest live place ahead: below ours, or anywhere in line. */
	if ((f.nums.next > f.nums.head || t->place.fd >= 0) &&
	    (rc = line_ahead(c->reg, job, &f.nums, t->place.fd >= 0 ? t->place.n : f.nums.next,
			     &f.ahead)) != 0)
		goto out;
	f.slots_held = !req->slots->count || slots_held(req->slots);
	enum step step = decide(req, &f);
	/* The registry's pause only refuses a start (or a --replace's wait):
	 * read only then, so a refusal costs no more. */
	if (!st.paused && (step == STEP_RUN || step == STEP_TAKE_SLOTS ||
			   (step == STEP_WAIT && req->replace))) {
		if ((rc = registry_pause_read(c->reg, f.now, &pause, &f.registry_paused)) != 0)
			goto out;
		step = decide(req, &f);
	}
	if (step == STEP_TAKE_SLOTS) {
		*next = NEXT_TAKE_SLOTS;
	} else if (step == STEP_RUN) {
		/* The successes this run follows, for its DONE (SPEC §5d). */
		struct buf seen = {0};
		after_seen_format(&seen, after.f, after.n);
		free(c->run->after_seen);
		c->run->after_seen = seen.data;
		rc = run_now(c, &st);
		*next = rc == EXIT_BUSY ? NEXT_RUN_LOCK : rc ? NEXT_END : NEXT_RUN;
	} else if (step == STEP_WAIT) {
		slots_release(req->slots);   /* (none taken: one waits without) */
		rc = turn_join(c->reg, req, &st, t, &folded);
		if (!rc && folded)
			info(job, "coalesced into the waiting run");
		*next = rc || folded ? NEXT_END : NEXT_WAIT;
	} else {
		/* An answer: said, and written with the end of the turn. */
		if (step == STEP_REFUSE_RUNNING)
			say_run(job, "already running", &st);
		else if (step == STEP_REFUSE_WAITING)
			info(job, "%llu waiting", line_waiting(c->reg, job, &st.rec));
		else if (step == STEP_PAUSED)
			say_paused(job, &st, &pause);
		else if (step == STEP_SUPERSEDED)
			info(job, "superseded by a newer --replace");
		else if (step == STEP_NOT_DUE)
			say_not_due(job, due_at(req, &st, f.now));
		else if (step == STEP_AFTER)
			after_say(c->reg, req, &st.rec, after.f, after.n, "not due");
		/* Not due by --after writes the list, if new, and nothing else. */
		if ((step == STEP_AFTER || step == STEP_WAIT_AFTER) &&
		    !after_held(req, jobstate_record(&st)))
			t->after = req->after;
		slots_release(req->slots);
		rc = turn_answer(c->reg, job, &st, t, skip_reasons[step], 0);
		if (!rc && step == STEP_WAIT_AFTER)
			*next = NEXT_WAIT_AFTER;
		if (!rc && step == STEP_REPLAY)
			rc = replay(c->reg, req, &st.rec);
		else if (!rc && skip_reasons[step])
			rc = req->conflict_code;
	}
out:
	after_facts_free(&after);
	record_free(&pause);
	jobstate_free(&st);
	reg_unlock(&job_lock);
	return rc;
}

/* The wait after a decision NEXT: 0 to decide again, or the exit status
 * that ends the call, counted (no-slot, wait-expired; interrupted by TERM,
 * INT or HUP). */
static int wait_for(struct call *c, enum next next, double *lock_deadline)
{
	const struct run_request *req = c->req;
	int placed = c->t.place.fd >= 0, rc;
	turn_catch_stops(1);
	if (next == NEXT_TAKE_SLOTS) {
		rc = take_slots(c->reg, req, &c->t, c->deadline);
	} else if (next == NEXT_WAIT) {
		rc = turn_wait(c->reg, req, &c->t, c->deadline);
		*lock_deadline = -1;   /* a new busy spell gets its -w */
	} else if (next == NEXT_WAIT_AFTER) {
		rc = after_wait(c->reg, req, c->deadline);
	} else {
		/* A waiter within its --wait (SPEC §5a), any other call -w. */
		if (*lock_deadline < 0 && !placed)
			*lock_deadline = now_mono() + req->lock_wait;
		rc = wait_run_lock(c->reg, req->job, placed ? c->deadline : *lock_deadline, c->earlier);
	}
	turn_catch_stops(0);
	int sig = turn_stopped();
	if (sig) {
		slots_release(req->slots);
		(void)turn_skip(c->reg, req, &c->t, "interrupted");
		/* Ended by the signal, as without the wait. */
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	/* (a busy run lock of a call with no place: an error, not a skip) */
	if (rc != EXIT_BUSY || (next == NEXT_RUN_LOCK && !placed))
		return rc;
	if (next == NEXT_WAIT)
		info(req->job, "still running after --wait %s", req->wait_arg ? req->wait_arg : "");
	rc = turn_skip(c->reg, req, &c->t,
		       next == NEXT_TAKE_SLOTS && !waits(req) ? "no-slot" : "wait-expired");
	return rc ? rc : req->conflict_code;
}

int start_run(struct registry *reg, const struct run_request *req, struct run *run,
	      int *run_lock, const sigset_t *hold)
{
	struct call c = { .reg = reg, .req = req, .run = run, .run_lock = run_lock, .hold = hold,
			  .t = { .place = PLACE_NONE, .coalesce_fd = -1 },
			  .deadline = req->wait && req->wait_limit >= 0 ? now_mono() + req->wait_limit : -1 };
	double lock_deadline = -1;   /* set once the run lock was found busy */
	int rc;

	for (;;) {
		enum next next;
		c.earlier = 0;
		rc = decide_locked(&c, &next);
		if (next == NEXT_RUN)
			return rc;
		if (next == NEXT_END || (rc = wait_for(&c, next, &lock_deadline)) != 0)
			break;
		/* Start over in what DIR names now (a new busy spell there). */
		if (!reg_same(reg))
			lock_deadline = -1;
		if ((rc = reg_follow(reg, 1)) != 0)
			break;
	}
	slots_release(req->slots);
	turn_leave(reg, req, &c.t);
	return rc;
}
