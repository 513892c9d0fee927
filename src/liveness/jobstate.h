/* jobstate: a job as readers see it — its record and the status derived
 * from the record and its owner's liveness (SPEC §2). */
#ifndef JOBREG_JOBSTATE_H
#define JOBREG_JOBSTATE_H

#include "record/health.h"
#include "record/record.h"
#include "registry/registry.h"

struct job_state {
	enum status status;   /* PENDING without a record; CORRUPT */
	int found;            /* a record exists */
	struct record rec;    /* empty unless found and not corrupt */
	const char *why;      /* what makes it corrupt */
	int by_lock;          /* the run lock decided liveness: the wait watches its close */
	int late;             /* a late job (SPEC §2 Late jobs) */
	double late_at;       /* when it is or becomes late (realtime); -1: no late_after */
	int overdue;          /* an overdue run (SPEC §2 Overdue runs) */
	double overdue_at;    /* when its run is or becomes overdue; -1: none */
	int paused;           /* paused (SPEC §2 Paused jobs) by its record or the registry */
	const struct record *registry_pause;   /* the registry's pause, when it pauses it */
};

/* Read JOB and judge a RUNNING record's owner by liveness_judge(), making
 * the probes it asks for; a dead verdict is confirmed by a second read
 * (SPEC §2).  Returns an exit status: an error printed, status UNREADABLE;
 * or 65 silently, status ST_CORRUPT, for jobstate_corrupt() to report. */
int jobstate_load(const struct registry *reg, const char *job, struct job_state *st);
/* Apply the registry's pause PAUSE (registry_pause_read(), once a call;
 * NULL: none in force) to ST: a job with no pause of its own in force is
 * paused by it (SPEC §5 jobreg-set --pause -a), one with its own keeps
 * its own.  PAUSE must outlive ST. */
void jobstate_registry_pause(struct job_state *st, const struct record *pause);
/* The pause that pauses ST: its record's, or the registry's; NULL when it
 * is not paused. */
const struct record *jobstate_pause(const struct job_state *st);
/* ST's health (SPEC §2 Health); NOTIFY_AFTER: 0 for readers, a
 * notifier's notify_after (SPEC §5c) else. */
enum health jobstate_health(const struct job_state *st, unsigned long long notify_after);
/* Is ST's status in the status list MASK (status.h)? */
int jobstate_in(const struct job_state *st, unsigned mask);
/* Has the job's latest run ended, FAILED or lost (STALE, a retry waiting,
 * a DONE or PENDING record after a failure)?  Its log is then the fail
 * log (SPEC §3b). */
int jobstate_last_run_failed(const struct job_state *st);
/* Report ST's corrupt record; returns 65. */
int jobstate_corrupt(const struct registry *reg, const char *job, const struct job_state *st);
/* jobstate_load(), a corrupt record reported (65). */
int jobstate_read(const struct registry *reg, const char *job, struct job_state *st);
/* ST's record, or NULL when it has none. */
const struct record *jobstate_record(const struct job_state *st);

void jobstate_free(struct job_state *st);

/* "pid P on HOST since T", leaving out what the record lacks. */
void jobstate_describe(const struct record *r, struct buf *out);

#endif
