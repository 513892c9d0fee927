/* cancel: the one cancel (see cancel.h). */
#include "run/cancel.h"
#include "run/attempts.h"
#include "run/holders.h"
#include "registry/audit.h"
#include "registry/lock.h"
#include "registry/write.h"
#include "liveness/facts.h"
#include "liveness/wait.h"
#include "record/transition.h"
#include "util/msg.h"
#include "util/signame.h"
#include "util/sys.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cancel_no_run(const struct job_state *st)
{
	const char *owner = st->found ? record_get(&st->rec, "owner") : NULL;
	if (st->status == ST_STALE)
		return "nothing to cancel: the job is STALE (its run's owner is dead)";
	if (st->status != ST_RUNNING)
		return st->status == ST_DONE ? "nothing to cancel: the job is DONE"
					     : "nothing to cancel: the job is PENDING";
	if (!owner)
		return "nothing to cancel: its RUNNING record has no owner (set by hand)";
	if (strcmp(owner, "lock") != 0)
		return "nothing to cancel: its run was not started by jobreg-dispatch (owner=pid)";
	return NULL;
}

unsigned long long cancel_put(struct record *rec, const struct cancel_request *req)
{
	char sig[SIGNAME_MAX];
	struct buf by = {0};
	if (!req->by)
		user_at_host(&by);
	record_ask_cancel(rec, signal_name(req->signal, sig), req->kill_after,
			  req->by ? req->by : by.data, now_seconds());
	if (req->note)
		record_put(rec, "note", req->note);
	buf_free(&by);
	return record_count(rec, "runs");
}

int cancel_ask(const struct registry *reg, const char *job, const struct job_state *st,
	       const struct cancel_request *req, double lock_wait, unsigned long long *run)
{
	const char *why = cancel_no_run(st);
	if (why)
		return fail(EXIT_FALSE, job, "%s", why);

	struct record rec;
	struct audit_change change;
	record_copy(&rec, &st->rec);
	*run = cancel_put(&rec, req);
	struct audit_line a = { .action = "cancel", .job = job, .status = status_word(st->status),
				.run = *run, .signal = record_get(&rec, "cancel_signal"),
				.note = req->note };
	int rc = audit_begin(reg, &a, lock_wait, 0, &change);
	if (!rc)
		rc = audit_end(reg, &a, lock_wait, &change,
			       commit_record(reg, job, &st->rec, st->status, &rec, NULL));
	record_free(&rec);
	return rc;
}

/* The run of a cancel, what its caller waits for, and what it saw. */
struct awaited {
	unsigned long long run;
	int until_end;
	int seen, missed;  /* taken up; the run ended before the signal reached it */
};

/* Has the run ended: the record no longer that run's RUNNING one? */
static int run_ended(const struct awaited *a, const struct job_state *st)
{
	return st->status != ST_RUNNING || record_count(&st->rec, "runs") != a->run;
}

/* The run has ended, or (without until_end) its dispatcher took it up. */
static int answered(struct awaited *a, const struct job_state *st)
{
	if (run_ended(a, st)) {
		/* (a cancelled run, or its retries, says so in DONE) */
		a->missed |= !a->seen && st->status == ST_DONE &&
			     record_count(&st->rec, "runs") == a->run &&
			     !record_get(&st->rec, "cancelled") &&
			     !record_get(&st->rec, "retries_cancelled_by");
		return 1;
	}
	if (record_count(&st->rec, "cancel_run") == a->run && record_get(&st->rec, "cancel_seen")) {
		a->seen = 1;
		a->missed = record_get(&st->rec, "cancel_missed") != NULL;
	}
	return a->seen && !a->until_end;
}

/* Wait with W, from *ST (its last look), until answered() or DEADLINE. */
static int wait_answer(struct waiter *w, struct awaited *a, const struct job_state **st,
		       double deadline)
{
	int rc = 0;
	while (!answered(a, *st) && (rc = wait_jobs_sleep(w, deadline)) == 0 &&
	       (rc = wait_jobs_look(w, st)) == 0)
		;
	return rc;
}

int cancel_no_answer(const struct registry *reg, const char *job, unsigned long long run,
		     const char *host)
{
	struct buf who = {0};
	int held = run_lock_holders(reg, job, &who) > 0;
	int rc = fail(EXIT_BUSY, job, "run %llu: no answer from its dispatcher on %s within %g s%s%s%s;"
		      " the request stays", run, host ? host : "?", CANCEL_ANSWER_SECONDS,
		      held ? " (run lock held by " : "", held ? who.data : "", held ? ")" : "");
	buf_free(&who);
	return rc;
}

int cancel_wait(struct registry *reg, const char *job, unsigned long long run, double until_end)
{
	struct awaited a = { .run = run };
	char *jobs[] = { (char *)job };
	double start = now_mono();
	/* A --wait shorter than the dispatcher's time to answer decides. */
	int wait_decides = until_end >= 0 && until_end < CANCEL_ANSWER_SECONDS;
	double answer_by = start + (wait_decides ? until_end : CANCEL_ANSWER_SECONDS);
	struct waiter *w = wait_jobs_open(reg, jobs, 1, NULL);
	const struct job_state *st;

	int rc = wait_jobs_look(w, &st);
	/* Only a hint: the dispatcher reads its record once a second. */
	if (!rc && !run_ended(&a, st))
		(void)signal_owner(&st->rec, SIGURG);
	if (!rc)
		rc = wait_answer(w, &a, &st, answer_by);
	if (rc == EXIT_BUSY && !wait_decides)
		rc = cancel_no_answer(reg, job, run, record_get(&st->rec, "host"));
	else if (rc == 0 && until_end >= -1) {
		a.until_end = 1;
		rc = wait_answer(w, &a, &st, until_end < 0 ? -1 : start + until_end);
	}
	/* (75 from cancel_no_answer() is said) */
	if (rc == EXIT_BUSY && (a.until_end || wait_decides))
		rc = fail(EXIT_BUSY, job, "run %llu has not ended within --wait", run);
	else if (rc == 0 && a.missed)
		rc = fail(EXIT_FALSE, job, "run %llu ended before the cancel reached it", run);
	wait_jobs_close(w);
	return rc;
}

/* The dispatcher's side.  Seconds a taking up waits for the job lock; and
 * between looks for what a cancelled command left (no SIGCHLD for them). */
#define CANCEL_LOCK_WAIT 0.2
#define LEFTOVER_LOOK 0.1

/* "SIG to pid P" or "SIG to pids P, Q" of the N pids PIDS, into C->told. */
static void tell(struct cancel_taken *c, int sig, const long *pids, size_t n)
{
	char name[SIGNAME_MAX];
	if (!n)
		return;
	buf_addf(&c->told, "%s%s to ", c->told.len ? "; " : "", signal_name(sig, name));
	name_pids(&c->told, pids, n);
}

/* SIG, then SIGCONT, to all of this host holding RUN_LOCK (found first)
 * but us and our relay: END's command and group through supervise_stop()
 * with KILL_AFTER, the others here; all told, the command first (FUSE's
 * locks are not in /proc/locks: it is signalled all the same). */
static void signal_holders(int run_lock, struct supervise_end *end, int sig, double kill_after,
			   struct cancel_taken *c)
{
	long *pids;
	size_t n = run_lock_leftovers(run_lock, &pids), told = 0;
	long *sent = xmalloc((n + 1) * sizeof *sent);
	int command = end && !end->ended;
	if (end)
		supervise_stop(end, sig, kill_after);
	if (command)
		sent[told++] = end->pid;
	for (size_t i = 0; i < n; i++) {
		pid_t p = (pid_t)pids[i];
		if (command && p == end->pid)
			continue;
		sent[told++] = p;
		if (command && end->own_group && getpgid(p) == end->pid)
			continue;   /* (signalled with its group) */
		(void)kill(p, sig);   /* (one gone meanwhile needs nothing) */
		if (sig != SIGKILL && sig != SIGCONT)
			(void)kill(p, SIGCONT);
	}
	tell(c, sig, sent, told);
	free(sent);
	free(pids);
}

/* Is a request for RUN there, unanswered?  A look without the lock; a
 * failure says nothing (the next look is a second later; a lost server is
 * the lock check's to report). */
static int asked(const struct registry *reg, const struct run *run)
{
	struct buf failed = {0};
	struct record rec;
	int found, yes = 0;
	struct buf *was_held = message_hold(&failed);
	if (reg_read_record(reg, run->req->job, &rec, &found) == 0 && found)
		yes = run_cancel_request(&rec, run, 0) != NULL;
	record_free(&rec);
	message_hold(was_held);
	message_release(&failed, 0);
	return yes;
}

int cancel_take_up(const struct registry *reg, struct run *run, int run_lock,
		   struct supervise_end *end, struct cancel_taken *c)
{
	struct job_state st;
	int job_lock = -1, ours, taken = 0;
	const char *by;
	if (!asked(reg, run))
		return 0;
	/* (a busy job lock: a second later, the supervision must go on) */
	if (run_lock_record(reg, run, CANCEL_LOCK_WAIT, &job_lock, &st, &ours) == 0 && ours &&
	    (by = run_cancel_request(&st.rec, run, 0))) {
		const char *signame = record_get(&st.rec, "cancel_signal");
		const char *kill = record_get(&st.rec, "cancel_kill_after");
		int sig = signame ? signal_number(signame) : SIGTERM;
		double kill_after = kill ? strtod(kill, NULL) : 10;
		/* Reaped or held still: one that ended first keeps its outcome. */
		int missed = end && !run->cancelled_by && supervise_freeze(end);
		if (!missed) {
			if (end) {
				signal_holders(run_lock, end, sig, kill_after, c);
				c->kill_at = earliest(c->kill_at, sig == SIGKILL ? -1 :
						      kill_after > 0 ? now_mono() + kill_after : -1);
			}
			free(run->cancelled_by);
			run->cancelled_by = xstrdup(by);
		}
		/* Carried out even if unanswered (a full disk): it is plain. */
		struct record seen;
		char when[21];
		record_copy(&seen, &st.rec);
		time_format(now_seconds(), when);
		record_put(&seen, "cancel_seen", when);
		if (missed)
			record_put(&seen, "cancel_missed", "1");
		(void)commit_record(reg, run->req->job, jobstate_record(&st), st.status, &seen, NULL);
		record_free(&seen);
		taken = 1;
	}
	jobstate_free(&st);
	reg_unlock(&job_lock);
	return taken;
}

void cancel_linger(const struct registry *reg, struct run *run, int run_lock,
		   const struct supervise *s, const sigset_t *held, struct supervise_end *end,
		   struct cancel_taken *c)
{
	long cmd = end->pid, *pids;
	if (end->killed && end->started)
		tell(c, SIGKILL, &cmd, 1);
	while (c->kill_at >= 0 && now_mono() < c->kill_at) {
		size_t n = run_lock_leftovers(run_lock, &pids);
		free(pids);
		if (!n)
			return;
		(void)supervise_pause(s, held, earliest(c->kill_at, now_mono() + LEFTOVER_LOOK));
		(void)cancel_take_up(reg, run, run_lock, end, c);
	}
	if (c->kill_at >= 0)
		signal_holders(run_lock, NULL, SIGKILL, 0, c);
}

void cancel_say(const struct run *run, const struct cancel_taken *c, int between)
{
	if (between)
		info(run->req->job, "retries cancelled by %s", run->cancelled_by);
	else
		info(run->req->job, "run %s cancelled by %s%s%s%s", run->number, run->cancelled_by,
		     c->told.len ? " (" : "", c->told.len ? c->told.data : "", c->told.len ? ")" : "");
}
