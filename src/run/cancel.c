/* cancel: the canceller's side of a cancel (see cancel.h). */
#include "run/cancel.h"
#include "run/holders.h"
#include "registry/write.h"
#include "liveness/facts.h"
#include "liveness/proc.h"
#include "liveness/wait.h"
#include "record/transition.h"
#include "util/msg.h"
#include "util/signame.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *user_at_host(void)
{
	struct buf b = {0};
	struct reader me = {0};
	errno = 0;
	const struct passwd *pw = getpwuid(geteuid());
	/* A name that could not sit in a record as one word: the number. */
	if (pw && pw->pw_name && pw->pw_name[0] && !strpbrk(pw->pw_name, "@= \t\r\n"))
		buf_adds(&b, pw->pw_name);
	else
		buf_addf(&b, "%lu", (unsigned long)geteuid());
	buf_addf(&b, "@%s", probe_reader(&me) == 0 && me.host ? me.host : "");
	return b.data;
}

/* Seconds as a plain decimal, trailing zeros of the fraction dropped. */
static void put_seconds(struct record *r, const char *key, double seconds)
{
	struct buf b = {0};
	buf_addf(&b, "%.9f", seconds);
	while (b.data[b.len - 1] == '0')
		b.data[--b.len] = '\0';
	if (b.data[b.len - 1] == '.')
		b.data[--b.len] = '\0';
	record_put(r, key, b.data);
	buf_free(&b);
}

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
	char sig[SIGNAME_MAX], at[21];
	record_init(&rec);
	record_copy(&rec, &st->rec);
	*run = record_count(&rec, "runs");
	/* A new request is one nobody has taken up yet. */
	record_drop(&rec, "cancel_seen");
	char number[24];
	snprintf(number, sizeof number, "%llu", *run);
	record_put(&rec, "cancel_run", number);
	record_put(&rec, "cancel_signal", signal_name(req->signal, sig));
	put_seconds(&rec, "cancel_kill_after", req->kill_after);
	record_put(&rec, "cancel_by", req->by);
	time_format(now_seconds(), at);
	record_put(&rec, "cancel_at", at);
	if (req->note)
		record_put(&rec, "note", req->note);
	int rc = commit_record(reg, job, &st->rec, st->status, &rec, NULL);
	record_free(&rec);
	return rc;
}

/* SIGURG to the dispatcher of REC, where this host can check that it is
 * that process (SPEC §5a): same host, boot and pid namespace, and the
 * pid's start time.  Only a hint: it reads its record once a second. */
static void wake_dispatcher(const char *job, const struct record *rec)
{
	struct ownership o;
	struct reader me;
	liveness_ownership(rec, &o);
	if (o.owner.pid <= 0 || !o.owner.pid_start || probe_reader(&me) < 0)
		return;
	if (!o.owner.host || !me.host || strcmp(o.owner.host, me.host) != 0 ||
	    !o.owner.boot_id || !me.boot_id || strcmp(o.owner.boot_id, me.boot_id) != 0 ||
	    o.owner.pid_ns != me.pid_ns)
		return;
	/* EPERM: another user's dispatcher, which notices within a second. */
	if (signal_started(o.owner.pid, o.owner.pid_start, SIGURG) < 0 && errno != EPERM)
		warn(job, "cannot wake the dispatcher, pid %ld: %s", o.owner.pid, strerror(errno));
}

/* The run of a cancel, and what its caller waits for. */
struct awaited {
	unsigned long long run;
	int until_end;
};

/* Has the run ended: the record no longer that run's RUNNING one? */
static int run_ended(const struct awaited *a, const struct job_state *st)
{
	return st->status != ST_RUNNING || record_count(&st->rec, "runs") != a->run;
}

static int answered(void *ctx, size_t index, const struct job_state *st)
{
	const struct awaited *a = ctx;
	(void)index;
	if (run_ended(a, st) || a->until_end)
		return run_ended(a, st);
	return record_count(&st->rec, "cancel_run") == a->run && record_get(&st->rec, "cancel_seen");
}

/* No answer: say so, with the run's host and who holds its run lock. */
static int no_answer(const struct registry *reg, const char *job, unsigned long long run,
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
		wake_dispatcher(job, &st.rec);
	}
	jobstate_free(&st);
	if (rc)
		return rc;

	/* A --wait shorter than the dispatcher's time to answer decides. */
	int wait_decides = until_end >= 0 && until_end < CANCEL_ANSWER_SECONDS;
	double answer_by = start + (wait_decides ? until_end : CANCEL_ANSWER_SECONDS);
	rc = wait_until(reg, jobs, 1, answered, &a, answer_by);
	if (rc == EXIT_BUSY && !wait_decides) {
		rc = no_answer(reg, job, run, host);
		goto out;
	}
	if (rc == 0 && until_end >= -1) {
		a.until_end = 1;
		rc = wait_until(reg, jobs, 1, answered, &a, until_end < 0 ? -1 : start + until_end);
	}
	if (rc == EXIT_BUSY)
		rc = fail(EXIT_BUSY, job, "run %llu has not ended within --wait", run);
out:
	free(host);
	return rc;
}
