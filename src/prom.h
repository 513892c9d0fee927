/* prom: jobreg-get -P — the jobs as metrics in the Prometheus text
 * exposition format, for node_exporter's textfile collector.  Families are
 * grouped: feed every job to prom_add(), then prom_finish() writes all the
 * families (each with # HELP and # TYPE), every job's series labelled name
 * (the job id; not job, which a scrape sets) and registry (REGISTRY, an
 * absolute path).  A CORRUPT or UNREADABLE job has no series of its own;
 * jobreg_corrupt_records counts it, and jobreg_registry_up says whether
 * DIR could be listed.  Memory only, no I/O. */
#ifndef JOBREG_PROM_H
#define JOBREG_PROM_H

#include "output.h"
#include "record.h"
#include "sys.h"

enum prom_family {
	PROM_STATUS, PROM_EXIT, PROM_START, PROM_END, PROM_SUCCESS,
	PROM_RUNS, PROM_FAILURES, PROM_LOST, PROM_CONSECUTIVE, PROM_DURATION,
	PROM_LATE, PROM_LATE_AFTER, PROM_FAMILIES
};
struct prom {
	struct buf family[PROM_FAMILIES];   /* samples, one buffer per family */
	unsigned long long unusable;         /* CORRUPT and UNREADABLE jobs */
	char *registry;                      /* escaped label value */
};
void prom_init(struct prom *p, const char *registry);
/* Job JOB, its record R (NULL: none) and derived STATUS; LATE: it is
 * late. */
void prom_add(struct prom *p, const char *job, const struct record *r, enum status status,
	      int late);
/* Append every family to OUT and free P.  REGISTRY_UP: 1 when DIR exists
 * and could be listed (for named jobs: opened), else 0 (no job series
 * then, unless named jobs of a missing DIR, which read PENDING). */
void prom_finish(struct prom *p, int registry_up, struct buf *out);

#endif
