/* jobstate: a job as readers see it — its record and the status derived
 * from the record and its owner's liveness (SPEC §2). */
#ifndef JOBREG_JOBSTATE_H
#define JOBREG_JOBSTATE_H

#include "record/record.h"
#include "registry/registry.h"

struct job_state {
	enum status status;   /* PENDING without a record; CORRUPT */
	int found;            /* a record exists */
	struct record rec;    /* empty unless found and not corrupt */
	const char *why;      /* what makes it corrupt */
	int by_lock;          /* the run lock decided liveness: a wait for
				 the run's end may block on it */
	int late;             /* a late job (SPEC §2 Late jobs) */
	double late_at;       /* when it is or becomes late (realtime), or
				 -1: it has no late_after */
	int paused;           /* a paused job (SPEC §2 Paused jobs), by its
				 own record or the registry's pause */
	const struct record *registry_pause;   /* the registry's pause when
				 it is the one that pauses the job, else NULL */
};

/* Read JOB and judge a RUNNING record's owner by liveness_judge(),
 * making the probes it asks for: the run lock with LOCK_SH|LOCK_NB (its
 * inode compared with run_lock), kill(2) and /proc for a pid.  A dead
 * verdict is confirmed by reading the record again (under the probe, when
 * the lock was free), so a run that has just written DONE is not called
 * STALE.  Returns an exit status: an error is printed and the status is
 * UNREADABLE; but 65 for a corrupt record silently, with status
 * ST_CORRUPT: jobstate_corrupt() reports it. */
int jobstate_load(const struct registry *reg, const char *job, struct job_state *st);
/* The registry's pause (DIR/.-pause, registry_pause_read(), read once a
 * call), PAUSE, on ST: a job with no pause of its own in force is paused
 * by it (SPEC §5 jobreg-set --pause -a), one with its own shows its own,
 * as dispatch's refusal does.  PAUSE NULL (none in force): nothing
 * changes.  PAUSE must outlive ST. */
void jobstate_registry_pause(struct job_state *st, const struct record *pause);
/* The pause that pauses ST: its record's, or the registry's; NULL when it
 * is not paused. */
const struct record *jobstate_pause(const struct job_state *st);
/* Is ST's status in the status list MASK (status.h)? */
int jobstate_in(const struct job_state *st, unsigned mask);
/* Has the job's latest run ended, FAILED or lost?  (STALE; an attempt
 * waiting for its retry; a DONE or PENDING record after a failure.)  Its
 * log is then the one to keep as the fail log (SPEC §3b). */
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
