/* report: jobreg-get --report, a view for people, not scripts (SPEC §5):
 * a line a job (id, status, why it is so, the age of its last success,
 * its last run's duration, its log's last line), by health (SPEC §2
 * Health; enum report_kind, corrupt and unreadable records first) then
 * id, then a summary by health, then the running and paused ("50 jobs: 1
 * stale, 1 overdue, 3 failed, 2 late, 1 warning, 42 ok; 1 running, 2
 * paused").  Only
 * report_job() reads files (the log's tail; the history's last line for a
 * failed run with no result on record); report_finish() is pure. */
#ifndef JOBREG_REPORT_H
#define JOBREG_REPORT_H

#include "liveness/jobstate.h"
#include "record/record.h"
#include "registry/registry.h"
#include "util/sys.h"

/* How bad a job is: a record that cannot be used, else its health, worst
 * first: the order of the lines, and of the summary's words. */
enum report_kind {
	RK_CORRUPT, RK_UNREADABLE, RK_STALE, RK_OVERDUE, RK_FAILED, RK_LATE, RK_WARNING,
	RK_OK, RK_KINDS
};

/* A line's columns: the last, the log's line, may be NULL. */
enum { RC_JOB, RC_STATUS, RC_WHY, RC_SUCCESS, RC_TOOK, RC_LOG, RC_COLUMNS };
struct report_line {
	char *col[RC_COLUMNS];
	enum report_kind kind;
	int running, paused;   /* for the summary's second part */
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
	struct buf audit;          /* the audit log, read at the first pause */
	int audit_read;
};

void report_init(struct report *rp, double now, int colour);
/* Sort the lines, append them and the summary to OUT. */
void report_finish(struct report *rp, struct buf *out);
void report_free(struct report *rp);

/* For report_job(): the calls waiting in the line of each slot group of
 * L (a listing of REG), of a job the first found.  Returns an exit status (a
 * place that cannot be probed is reported). */
struct listing;
int report_slot_waits(const struct registry *reg, struct report *rp, const struct listing *l);

/* The line of JOB of REG, ST as jobstate_load() left it: with the last
 * line of its log (SPEC §3b, from its tail; a log that cannot be read is
 * left out, as diagnostics), a lost last run (its history), "3 waiting",
 * "waiting for slot G, 2nd in line", "skipped 5m ago: no-slot", "next due
 * T" or "due now".  Returns an exit status: a history that cannot be read
 * is reported, and the line says "failed". */
int report_job(const struct registry *reg, struct report *rp, const char *job,
		const struct job_state *st);
/* JOB's line alone, without colour, into OUT (a notification's
 * JOBREG_SUMMARY, SPEC §5c).  An exit status, as report_job(). */
int report_line(const struct registry *reg, const char *job, const struct job_state *st,
		struct buf *out);

#endif
