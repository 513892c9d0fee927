/* cancel: the canceller's side of a cancel (see cancel.h). */
#include "run/cancel.h"
#include "run/holders.h"
#include "registry/write.h"
#include "liveness/facts.h"
#include "liveness/wait.h"
#include "record/transition.h"
#include "util/msg.h"
#include "util/signame.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Why ST has no run to cancel (a false condition), or NULL: it has one. */
static const char *no_run(const struct job_state *st)
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

int cancel_ask(const struct registry *reg, const char *job, const struct job_state *st,
	       const struct cancel_request *req, unsigned long long *run)
{
	const char *why = no_run(st);
	if (why)
		return fail(EXIT_FALSE, job, "%s", why);

	struct record rec;
	char sig[SIGNAME_MAX];
	record_init(&rec);
	record_copy(&rec, &st->rec);
	*run = record_count(&rec, "runs");
	record_ask_cancel(&rec, signal_name(req->signal, sig), req->kill_after, req->by,
			  now_seconds());
	if (req->note)
		record_put(&rec, "note", req->note);
	int rc = commit_record(reg, job, &st->rec, st->status, &rec, NULL);
	record_free(&rec);
	return rc;
}

/* The run of a cancel, what its caller waits for, and what it saw. */
struct awaited {
	unsigned long long run;
	int until_end;
	int seen;          /* its dispatcher took the request up */
	int uncancelled;   /* it ended DONE, not cancelled, the request not seen */
};

/* Has the run ended: the record no longer that run's RUNNING one? */
static int run_ended(const struct awaited *a, const struct job_state *st)
{
	return st->status != ST_RUNNING || record_count(&st->rec, "runs") != a->run;
}

/* The wait's condition: the run has ended, or (until_end not asked) its
 * dispatcher has taken the request up. */
static int answered(void *ctx, size_t index, const struct job_state *st)
{
	struct awaited *a = ctx;
	(void)index;
	if (run_ended(a, st)) {
		/* (a run that ended cancelled says so in its DONE record) */
		a->uncancelled = !a->seen && st->status == ST_DONE &&
				 record_count(&st->rec, "runs") == a->run &&
				 !record_get(&st->rec, "cancelled");
		return 1;
	}
	if (record_count(&st->rec, "cancel_run") == a->run && record_get(&st->rec, "cancel_seen"))
		a->seen = 1;
	return a->seen && !a->until_end;
}

int cancel_no_answer(const struct registry *reg, const char *job, unsigned long long run,
		     const char *host)
{
	struct buf who = {0};
	int rc;
	if (run_lock_holders(reg, job, &who))
		rc = fail(EXIT_BUSY, job, "run %llu: no answer from its dispatcher on %s within %g s"
			  " (run lock held by %s); the request stays", run, host ? host : "?",
			  CANCEL_ANSWER_SECONDS, who.data);
	else
		rc = fail(EXIT_BUSY, job, "run %llu: no answer from its dispatcher on %s within %g s;"
			  " the request stays", run, host ? host : "?", CANCEL_ANSWER_SECONDS);
	buf_free(&who);
	return rc;
}

int cancel_wait(struct registry *reg, const char *job, unsigned long long run, double until_end)
{
	struct awaited a = { .run = run, .until_end = 0 };
	struct job_state st;
	char *jobs[] = { (char *)job };
	double start = now_mono();
	char *host = NULL;

	int rc = jobstate_load(reg, job, &st);
	if (rc == EXIT_CORRUPT)
		rc = jobstate_corrupt(reg, job, &st);
	if (!rc && !run_ended(&a, &st)) {
		const char *h = record_get(&st.rec, "host");
		host = h ? xstrdup(h) : NULL;
		/* Only a hint: the dispatcher reads its record once a second. */
		(void)signal_owner(&st.rec, SIGURG);
	}
	jobstate_free(&st);
	if (rc)
		return rc;

	/* A --wait shorter than the dispatcher's time to answer decides. */
	int wait_decides = until_end >= 0 && until_end < CANCEL_ANSWER_SECONDS;
	double answer_by = start + (wait_decides ? until_end : CANCEL_ANSWER_SECONDS);
	rc = wait_until(reg, jobs, 1, answered, &a, answer_by);
	if (rc == EXIT_BUSY && !wait_decides) {
		rc = cancel_no_answer(reg, job, run, host);
		goto out;
	}
	if (rc == 0 && until_end >= -1) {
		a.until_end = 1;
		rc = wait_until(reg, jobs, 1, answered, &a, until_end < 0 ? -1 : start + until_end);
	}
	if (rc == EXIT_BUSY)
		rc = fail(EXIT_BUSY, job, "run %llu has not ended within --wait", run);
	else if (rc == 0 && a.uncancelled)
		rc = fail(EXIT_FALSE, job, "run %llu ended before its dispatcher took the request up:"
			  " not cancelled", run);
out:
	free(host);
	return rc;
}
