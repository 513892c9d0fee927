/* report: jobreg-get --report, a view for people, not scripts (SPEC §5).
 * One line a job — id, status, why it is in that state, the age of its
 * last success, its last run's duration, the last line of its log — sorted
 * by severity (corrupt or unreadable, STALE, FAILED, LATE, CANCELLED,
 * PAUSED, RUNNING, PENDING, DONE with no result, OK), then by id; then a
 * summary line ("50 jobs: 3 failed, 2 late, 1 stale, 1 running, 43 ok").
 * Late and paused are no statuses: a job that is either is counted so
 * when that is worse than its status.
 *
 * report_finish() is pure: memory in, text out.  Only report_job() reads
 * files: the log's tail and, for a job whose last run failed with no
 * result on record, the history's last line. */
#ifndef JOBREG_REPORT_H
#define JOBREG_REPORT_H

#include "liveness/jobstate.h"
#include "record/record.h"
#include "registry/registry.h"
#include "util/sys.h"

/* How bad a job is: the order of the lines, and of the summary's words. */
enum report_kind {
	RK_CORRUPT, RK_UNREADABLE, RK_STALE, RK_FAILED, RK_LATE, RK_CANCELLED,
	RK_PAUSED, RK_RUNNING, RK_PENDING, RK_DONE, RK_OK, RK_KINDS
};

/* A line's columns: the last, the log's line, may be NULL. */
enum { RC_JOB, RC_STATUS, RC_WHY, RC_SUCCESS, RC_TOOK, RC_LOG, RC_COLUMNS };
struct report_line {
	char *col[RC_COLUMNS];
	enum report_kind kind;
};

/* A job's call waiting in a slot group's line (report_slot_waits()). */
struct slot_wait {
	char *job, *group;
	size_t position;  /* 1: the next to go */
	size_t found;     /* the order it was found in */
};

struct report {
	struct report_line *lines;
	size_t n, cap;
	double now;       /* the time ages are counted to */
	int colour;       /* ANSI colours on the why column */
	struct slot_wait *waits;   /* sorted by job, its first group's only */
	size_t nwaits;
};

void report_init(struct report *rp, double now, int colour);
/* Sort the lines, append them and the summary to OUT. */
void report_finish(struct report *rp, struct buf *out);
void report_free(struct report *rp);

/* The calls waiting in the line of each slot group L (a listing of REG)
 * knows, for report_job(): a job's first such call, in the group whose
 * line was read first.  Returns an exit status (a place that cannot be
 * probed is reported). */
struct listing;
int report_slot_waits(const struct registry *reg, struct report *rp, const struct listing *l);

/* The line of JOB of REG, ST its state as jobstate_load() left it, and
 * the facts read: the last line of its latest run's log (DIR/.JOB.log,
 * SPEC §3b; only its tail is read: a log that cannot be read is left out,
 * as diagnostics), whether its last run was lost (its history), the
 * waiters in its line ("3 waiting"), and its call waiting for a slot
 * (report_slot_waits(): "waiting for slot G, 2nd in line").  It says too
 * "skipped 5m ago: no-slot" (a call refused since its last transition),
 * and for a job whose record keeps every= "next due T" (or "due now": no
 * success on record).  Returns an exit status: a history that cannot be
 * read is reported, and the job's line says "failed". */
int report_job(const struct registry *reg, struct report *rp, const char *job,
		const struct job_state *st);

#endif
