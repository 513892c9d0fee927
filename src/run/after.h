/* after: step 2a of jobreg-dispatch for --after (SPEC §5d) — the named
 * jobs' facts that decide() judges (record/after.h), the not-due message,
 * and the wait of --wait until they may make the job due. */
#ifndef JOBREG_RUN_AFTER_H
#define JOBREG_RUN_AFTER_H

#include "liveness/jobstate.h"
#include "record/after.h"
#include "run/attempts.h"

/* The named jobs as the call read them. */
struct after_facts {
	struct after_fact *f;
	struct job_state *st;   /* (f[i].job's state, which the facts point into) */
	size_t n;
};

/* Each of REQ's named jobs read and its owner judged (jobstate.h).  An
 * exit status, said (65 for a corrupt record). */
int after_gather(const struct registry *reg, const struct run_request *req,
		 struct after_facts *a);
void after_facts_free(struct after_facts *a);
/* Does OWN (NULL: no record) hold REQ's --after list as given? */
int after_held(const struct run_request *req, const struct record *own);
/* "JOB: WHAT: waiting for backup (no success since run 41), ...", and
 * "; it waits for itself through b" when the chain leads back; said even
 * with -q when a named job has no record, or the chain leads back (neither
 * ends by waiting). */
void after_say(const struct registry *reg, const struct run_request *req,
	       const struct record *own, const struct after_fact *f, size_t n, const char *what);
/* Step 2a from a read without the job lock (as --every's): 1 when the
 * named jobs make the job not due, said; 0 to decide under the lock —
 * also when OWN (the record read) does not hold the list yet, which that
 * decision writes, and with --wait. */
int after_not_due(const struct registry *reg, const struct run_request *req,
		  const struct record *own);
/* --wait, without the job lock: until the named jobs may make the job due
 * (0: decide again), a stop signal (0: turn.h says it), or DEADLINE (a
 * now_mono() time, < 0: none) passes: EXIT_BUSY, said.  The one wait
 * (wait.h) watches the named records. */
int after_wait(struct registry *reg, const struct run_request *req, double deadline);

#endif
