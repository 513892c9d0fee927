#include "run/after.h"
#include "liveness/wait.h"
#include "record/transition.h"
#include "registry/chain.h"
#include "run/turn.h"
#include "util/msg.h"

#include <stdlib.h>
#include <string.h>

/* JOB's fact from its state ST. */
static void fact_of(const char *job, const struct job_state *st, struct after_fact *f)
{
	const struct record *r = jobstate_record(st);
	*f = (struct after_fact){ .job = job, .found = r != NULL,
				  .running = st->status == ST_RUNNING };
	if (r) {
		f->succeeded = record_get(r, "last_success_run") != NULL;
		f->success = record_count(r, "last_success_run");
		f->runs = record_count(r, "runs");
	}
}

int after_gather(const struct registry *reg, const struct run_request *req,
		 struct after_facts *a)
{
	int rc = 0;
	a->n = 0;
	a->f = xmalloc(req->nafter * sizeof *a->f);
	a->st = xmalloc(req->nafter * sizeof *a->st);
	for (; !rc && a->n < req->nafter; a->n++) {
		rc = jobstate_read(reg, req->after_jobs[a->n], &a->st[a->n]);
		fact_of(req->after_jobs[a->n], &a->st[a->n], &a->f[a->n]);
	}
	return rc;
}

void after_facts_free(struct after_facts *a)
{
	for (size_t i = 0; i < a->n; i++)
		jobstate_free(&a->st[i]);
	free(a->f);
	free(a->st);
	*a = (struct after_facts){0};
}

int after_held(const struct run_request *req, const struct record *own)
{
	const char *held = own ? record_get(own, "after") : NULL;
	return !req->after || strcmp(held ? held : "", req->after) == 0;
}

void after_say(const struct registry *reg, const struct run_request *req,
	       const struct record *own, const struct after_fact *f, size_t n, const char *what)
{
	struct buf why = {0}, through = {0};
	int misspelt = 0;
	for (size_t i = 0; i < n; i++) {
		if (after_unmet(own, &f[i], 1) < 0)
			continue;
		buf_adds(&why, why.len ? ", " : "");
		after_describe(&why, own, &f[i]);
		misspelt |= !f[i].found;
	}
	int loops = chain_loops(reg, req->job, req->after, &through);
	if (loops)
		buf_addf(&why, "; it waits for itself through %s", through.data);
	if (misspelt || loops)
		warn(req->job, "%s: waiting for %s", what, why.data);
	else
		info(req->job, "%s: waiting for %s", what, why.data);
	buf_free(&why);
	buf_free(&through);
}

int after_not_due(const struct registry *reg, const struct run_request *req,
		  const struct record *own)
{
	struct after_facts a = {0};
	struct buf dropped = {0};
	int said = 0;
	if (!req->nafter || req->wait || !after_held(req, own))
		return 0;
	/* An error is said by the look under the job lock. */
	struct buf *was = message_hold(&dropped);
	int rc = after_gather(reg, req, &a);
	message_hold(was);
	message_release(&dropped, 0);
	if (!rc && after_unmet(own, a.f, a.n) >= 0) {
		after_say(reg, req, own, a.f, a.n, "not due");
		said = 1;
	}
	after_facts_free(&a);
	return said;
}

int after_wait(struct registry *reg, const struct run_request *req, double deadline)
{
	struct waiter *w = wait_jobs_open(reg, req->after_jobs, req->nafter, NULL);
	struct after_fact *f = xmalloc(req->nafter * sizeof *f);
	const struct job_state *states;
	struct record own;
	int rc, found;
	for (;;) {
		/* The named records first, the sources armed: a success after
		 * this look wakes the sleep. */
		if ((rc = wait_jobs_look(w, &states)) != 0 ||
		    (rc = reg_read_record(reg, req->job, &own, &found)) != 0)
			break;
		for (size_t i = 0; i < req->nafter; i++)
			fact_of(req->after_jobs[i], &states[i], &f[i]);
		if (after_unmet(&own, f, req->nafter) < 0 || turn_stopped()) {
			record_free(&own);
			break;
		}
		if ((rc = wait_jobs_sleep(w, deadline)) == EXIT_BUSY) {
			struct buf what = {0};
			buf_addf(&what, "still not due after --wait %s", req->wait_arg);
			after_say(reg, req, &own, f, req->nafter, what.data);
			buf_free(&what);
		}
		record_free(&own);
		if (rc)
			break;
	}
	free(f);
	wait_jobs_close(w);
	return rc;
}
