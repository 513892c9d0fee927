/* output: every format of jobreg-get (see jobreg-get(1)), as pure
 * functions from a job id, its parsed record (NULL when there is none or
 * it could not be used) and its derived status to text appended to OUT.
 * Memory only, no I/O: the caller decides where the text goes.
 *
 * Plain:  "STATUS\n", or "JOB STATUS\n" WITH_ID (for -a).
 * Long:   job status since owner host pid exit note, tab-separated,
 *         "-" for an empty field, "SIG"+name for a signal.
 * JSON:   one object per line: "job", the record's fields in SPEC order
 *         (status the derived one; version, pid, pid_start, exit, runs,
 *         failures, pid_ns, time_ns, run_lock, timeout as numbers,
 *         timed_out as a boolean),
 *         "duration" (ended - started) for a DONE run, "stale": true for
 *         STALE; {"job", "corrupt": true} or {"job", "unreadable": true}.
 *         Unknown keys named like a member the writer adds are left out,
 *         so a record cannot pass for another job.
 * Prometheus: the text exposition format, families grouped: feed every
 *         job to prom_add(), then prom_finish() writes all the families
 *         (each with # HELP and # TYPE), every job's series labelled
 *         name (the job id; not job, which a scrape sets) and registry
 *         (REGISTRY, an absolute path).  A CORRUPT or UNREADABLE job
 *         has no series of its own; jobreg_corrupt_records counts it,
 *         and jobreg_registry_up says whether DIR could be listed. */
#ifndef JOBREG_OUTPUT_H
#define JOBREG_OUTPUT_H

#include "record.h"
#include "sys.h"

void output_plain(struct buf *out, const char *job, enum status status, int with_id);
void output_long(struct buf *out, const char *job, const struct record *r,
		 enum status status);
void output_json(struct buf *out, const char *job, const struct record *r,
		 enum status status);
/* A JSON string literal of S (UTF-8 passed through, controls escaped). */
void json_string(struct buf *out, const char *s);

enum prom_family {
	PROM_STATUS, PROM_EXIT, PROM_START, PROM_END, PROM_SUCCESS,
	PROM_RUNS, PROM_FAILURES, PROM_FAMILIES
};
struct prom {
	struct buf family[PROM_FAMILIES];   /* samples, one buffer per family */
	unsigned long long unusable;         /* CORRUPT and UNREADABLE jobs */
	char *registry;                      /* escaped label value */
};
void prom_init(struct prom *p, const char *registry);
void prom_add(struct prom *p, const char *job, const struct record *r, enum status status);
/* Append every family to OUT and free P.  REGISTRY_UP: 1 when DIR exists
 * and could be listed (for named jobs: opened), else 0 (no job series
 * then, unless named jobs of a missing DIR, which read PENDING). */
void prom_finish(struct prom *p, int registry_up, struct buf *out);

#endif
