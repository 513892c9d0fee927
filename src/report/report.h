/* report: jobreg-get --report, a view for people, not scripts (SPEC §5).
 * One line a job — id, status, why it is in that state, the age of its
 * last success, its last run's duration, the last line of its log — sorted
 * by severity (corrupt or unreadable, STALE, FAILED, LATE, CANCELLED,
 * PAUSED, RUNNING, PENDING, DONE with no result, OK), then by id; then a
 * summary line ("50 jobs: 3 failed, 2 late, 1 stale, 1 running, 43 ok").
 * Late and paused are no statuses: a job that is either is counted so
 * when that is worse than its status.
 *
 * report_add() and report_finish() are pure: memory in, text out.  Only
 * report_job() reads files: the log's tail and, for a job whose last run
 * failed with no result on record, the history's last line. */
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

struct report_line {
	char *job, *status, *why, *success, *took, *log;
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

/* What report_add() needs to know of a job besides its state. */
struct report_facts {
	const char *log_line;   /* the last line of its log (NULL: none) */
	int last_lost;          /* its last run was lost (history), when the
				   record holds no result of it */
	unsigned long long waiting;   /* live waiters in its line */
	const struct slot_wait *slot_wait;   /* a call of it waiting for a
						slot, or NULL */
};

void report_init(struct report *rp, double now, int colour);
/* One job: ST its state as jobstate_load() left it.  Besides its state,
 * its line says "3 waiting", "waiting for slot G, 2nd in line", "skipped
 * 5m ago: no-slot" (a call refused since its last transition), and for a
 * job whose record keeps every= "next due T" (or "due now": no success
 * on record). */
void report_add(struct report *rp, const char *job, const struct job_state *st,
		const struct report_facts *facts);
/* Sort the lines, append them and the summary to OUT. */
void report_finish(struct report *rp, struct buf *out);
void report_free(struct report *rp);

/* SECONDS as a person reads it, the two largest units: "45s", "5m3s",
 * "2h10m", "3d4h". */
void report_duration(struct buf *out, double seconds);

/* The calls waiting in the line of each slot group L (a listing of REG)
 * knows, for report_job(): a job's first such call, in the group whose
 * line was read first.  Returns an exit status (a place that cannot be
 * probed is reported). */
struct listing;
int report_slot_waits(const struct registry *reg, struct report *rp, const struct listing *l);

/* report_add() for JOB of REG, the facts read: the last line of its
 * latest run's log (DIR/.JOB.log, SPEC §3b; only its tail is read: a log
 * that cannot be read is left out, as diagnostics), whether its last run
 * was lost (its history), the waiters in its line, and its call
 * waiting for a slot (report_slot_waits()).  Returns an exit status: a history that
 * cannot be read is reported, and the job's line says "failed". */
int report_job(const struct registry *reg, struct report *rp, const char *job,
		const struct job_state *st);

#endif
