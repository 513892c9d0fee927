/* after: the chains of dispatch --after (SPEC §5d) in a record — `after`,
 * the jobs a job follows, and `after_seen`, the successes its last
 * successful run followed — and the judge of step 2a for them.  Memory
 * only: the facts come from the caller (run/after.h gathers them). */
#ifndef JOBREG_AFTER_H
#define JOBREG_AFTER_H

#include <stddef.h>

#include "record/record.h"

/* A named job as the call found it, under its own job lock. */
struct after_fact {
	const char *job;
	int found;                  /* it has a record */
	int running;                /* RUNNING with a live owner (STALE is not) */
	int succeeded;              /* it has a last_success_run */
	unsigned long long success; /* that run's number */
	unsigned long long runs;
};

/* Is V a list of job ids, "backup,dump" (after=)? */
int after_list_ok(const char *v);
/* Is V a list of JOB:RUN, "backup:41,dump:7" (after_seen=)? */
int after_seen_ok(const char *v);
/* JOB's entry in the after_seen list SEEN (NULL: none): 1 with *RUN, or 0. */
int after_seen_get(const char *seen, const char *job, unsigned long long *run);

/* The judge of step 2a for --after: the index of the first of the N facts
 * F that keeps OWN's job from being due — no record, running, or no
 * success above OWN's after_seen entry for it (an entry above its `runs`
 * counts as none) — or -1: due. */
long after_unmet(const struct record *own, const struct after_fact *f, size_t n);
/* Why F keeps OWN's job waiting: "backup (no success since run 41)",
 * "backup (no success yet)", "backup (running)", "backup (no record)". */
void after_describe(struct buf *b, const struct record *own, const struct after_fact *f);
/* The after_seen of a run that followed the N facts F: "backup:41,dump:7". */
void after_seen_format(struct buf *b, const struct after_fact *f, size_t n);

/* after=LIST into R; "" drops it. */
void record_set_after(struct record *r, const char *list);

#endif
