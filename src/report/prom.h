/* prom: jobreg-get -P, the jobs as metrics in the Prometheus text format
 * (for node_exporter's textfile collector).  Families are grouped: feed
 * every job to prom_add(), then take the text piece by piece from
 * prom_more(): each family with # HELP and # TYPE, a job's series
 * labelled name (the job id; not job, which a scrape sets) and registry
 * (prom_init()'s, an absolute path).  A CORRUPT or UNREADABLE job has no
 * series, only a count in jobreg_corrupt_records.  No I/O; a job costs
 * its values, a few dozen bytes, whatever the record's size. */
#ifndef JOBREG_PROM_H
#define JOBREG_PROM_H

#include "report/format.h"
#include "record/record.h"
#include "util/sys.h"

enum prom_family {
	PROM_STATUS, PROM_EXIT, PROM_START, PROM_END, PROM_SUCCESS,
	PROM_RUNS, PROM_FAILURES, PROM_LOST, PROM_CONSECUTIVE, PROM_DURATION,
	PROM_LATE, PROM_LATE_AFTER, PROM_CANCELLED, PROM_SKIPPED, PROM_COALESCED,
	PROM_WAITING, PROM_PAUSED, PROM_HEALTH, PROM_WARNINGS, PROM_OVERDUE, PROM_FAMILIES
};
struct prom_job {
	const char *name;    /* the caller's, valid until the text is taken */
	size_t at;           /* in values: the job's next family's value */
};
struct prom {
	struct prom_job *jobs;
	size_t njobs, cap;
	struct buf values;                   /* per job, one string a family */
	unsigned long long unusable;         /* CORRUPT and UNREADABLE jobs */
	char *registry;                      /* escaped label value */
	struct prom_slots {                  /* the slot groups seen */
		char *group;                 /* escaped label value */
		unsigned long in_use, capacity;
	} *slots;
	size_t nslots;
	int registry_paused;                 /* the registry's pause: jobreg_registry_paused */
	int family;                          /* where prom_more() goes on */
	size_t next;
};
/* About how much text one prom_more() call gives. */
#define PROM_CHUNK 65536

void prom_init(struct prom *p, const char *registry);
/* Job JOB (valid until the text is taken), its record R (NULL: none),
 * derived STATUS and what else the reader judged of it (X). */
void prom_add(struct prom *p, const char *job, const struct record *r, enum status status,
	      const struct job_flags *x);
/* Slot group GROUP (SPEC §5b): IN_USE of its CAPACITY slots held; its
 * series come last, labelled registry and group. */
void prom_add_slots(struct prom *p, const char *group, unsigned long in_use, unsigned long capacity);
/* Append the next piece of the text to OUT: 1 while more follows; 0 with
 * the last piece, P then freed.  REGISTRY_UP: 1 when DIR exists and could
 * be listed (for named jobs: opened), else 0 (no job series then, unless
 * named jobs of a missing DIR, which read PENDING). */
int prom_more(struct prom *p, int registry_up, struct buf *out);
/* Free P without taking its text. */
void prom_free(struct prom *p);

#endif
