#include "liveness/jobstate.h"
#include "registry/lock.h"
#include "util/msg.h"
#include "registry/openat.h"
#include "liveness/liveness.h"
#include "liveness/facts.h"
#include "record/transition.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

/* Do A and B name the same run (owner, start, limits)?  A dead verdict
 * stands when the record read again does. */
static int same_run(const struct record *a, const struct record *b)
{
	static const char *const keys[] = {
		"owner", "host", "pid", "pid_start", "started", "run_lock", "expires",
	};
	if (record_status(a) != ST_RUNNING || record_status(b) != ST_RUNNING)
		return 0;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!same_string(record_get(a, keys[i]), record_get(b, keys[i])))
			return 0;
	return 1;
}

/* Ask liveness_judge(), making the probes it asks for; a free run lock stays
 * in *PROBE for the read that confirms the verdict.  The verdict is for the
 * inode opened (liveness compares it with run_lock), so the name is not
 * looked up again: a run that started meanwhile shows in the confirming read. */
static int judge(const struct registry *reg, const char *job, const struct record *r,
		 int *probe, enum liveness *verdict, int *by_lock)
{
	struct ownership c;
	struct reader me;
	struct probes p = { .lock = LOCK_UNPROBED, .pid = PID_UNPROBED };
	int rc = 0, busy = 0;

	liveness_ownership(r, &c);
	if (probe_reader(&me) < 0)
		return fail_errno(errno, job, "cannot read this process's identity from /proc");
	for (;;) {
		*verdict = liveness_judge(&c, &me, &p);
		if (*verdict == LIVE_PROBE_LOCK) {
			rc = reg_probe_run_lock(reg, job, probe, &p.lock_ino, &busy);
			p.lock = busy ? LOCK_HELD : *probe < 0 ? LOCK_MISSING : LOCK_FREE;
		} else if (*verdict == LIVE_PROBE_PID && probe_pid(c.owner.pid, &p) < 0)
			rc = fail_errno(errno, job, "read /proc/%ld/stat", c.owner.pid);
		else if (*verdict != LIVE_PROBE_PID)
			break;
		if (rc)
			return rc;
	}
	*by_lock = liveness_lock_trusted(&c, &p);
	return 0;
}

/* Read and parse JOB into ST. */
static int read_record(const struct registry *reg, const char *job, struct job_state *st)
{
	static struct buf data;

	record_free(&st->rec);
	st->status = ST_PENDING;
	int rc = reg_read(reg, job, job, RECORD_MAX, &data, &st->found);
	if (rc || !st->found)
		return rc;
	if (record_parse(&st->rec, data.data, data.len, &st->why) < 0) {
		st->status = ST_CORRUPT;
		return EXIT_CORRUPT;
	}
	st->status = record_status(&st->rec);
	return 0;
}

/* When a record with late_after becomes late: late_after seconds after
 * its last_success, else its late_from; -1 without late_after. */
static double late_at(const struct record *r)
{
	const char *after = record_get(r, "late_after");
	time_t base;
	if (!after || record_time(r, record_get(r, "last_success") ? "last_success" : "late_from",
				  &base) < 0)
		return -1;
	return (double)base + strtod(after, NULL);
}

int jobstate_load(const struct registry *reg, const char *job, struct job_state *st)
{
	struct record dead;     /* a RUNNING record judged dead, to confirm */
	int probe = -1, rc;

	*st = (struct job_state){ .late_at = -1, .overdue_at = -1 };
	record_init(&st->rec);
	record_init(&dead);
	for (int attempt = 0;; attempt++) {
		if (attempt == 1000) {
			/* Each read a new dead run: say so rather than guess. */
			rc = fail(EXIT_IO, job, "the record of %s keeps changing", reg_path(reg, job));
			break;
		}
		rc = read_record(reg, job, st);
		if (rc || st->status != ST_RUNNING)
			break;
		if (same_run(&dead, &st->rec)) {   /* (an empty DEAD names no run) */
			st->status = ST_STALE;
			break;
		}
		reg_unlock(&probe);
		enum liveness verdict = LIVE_ALIVE;
		rc = judge(reg, job, &st->rec, &probe, &verdict, &st->by_lock);
		if (rc || verdict == LIVE_ALIVE)
			break;
		/* Dead: read again (under a free lock's probe, so no new run
		 * starts meanwhile): a run that just wrote DONE is not STALE. */
		record_free(&dead);
		dead = st->rec;
		record_init(&st->rec);
	}
	reg_unlock(&probe);
	record_free(&dead);
	if (rc && rc != EXIT_CORRUPT)
		st->status = ST_UNREADABLE;
	st->late_at = rc || !st->found ? -1 : late_at(&st->rec);
	st->late = st->late_at >= 0 && now_real() > st->late_at;
	st->paused = !rc && st->found && record_paused(&st->rec, now_real());
	st->overdue_at = st->status == ST_RUNNING ? record_overdue_at(&st->rec) : -1;
	st->overdue = st->overdue_at >= 0 && now_real() > st->overdue_at;
	return rc;
}

void jobstate_registry_pause(struct job_state *st, const struct record *pause)
{
	/* (a record that cannot be used shows nothing of a pause) */
	if (pause && !st->paused && st->status != ST_CORRUPT && st->status != ST_UNREADABLE) {
		st->paused = 1;
		st->registry_pause = pause;
	}
}

const struct record *jobstate_pause(const struct job_state *st)
{
	if (!st->paused)
		return NULL;
	return st->registry_pause ? st->registry_pause : &st->rec;
}

int jobstate_in(const struct job_state *st, unsigned mask)
{
	struct status_marks m = {
		.outcome = st->status == ST_DONE ? record_outcome(&st->rec) : OUTCOME_UNKNOWN,
		.late = st->late, .paused = st->paused, .overdue = st->overdue,
	};
	return status_in(mask, st->status, &m);
}

enum health jobstate_health(const struct job_state *st, unsigned long long notify_after)
{
	const struct record *r = jobstate_record(st);
	struct health_facts f = {
		.stale = st->status == ST_STALE,
		.overdue = st->overdue,
		.consecutive_failures = r ? record_count(r, "consecutive_failures") : 0,
		.notify_after = notify_after,
		.late = st->late,
		.last_success_warning = r && record_count(r, "last_success_warning") != 0,
	};
	return health_judge(&f);
}

int jobstate_last_run_failed(const struct job_state *st)
{
	switch (st->status) {
	case ST_STALE:
		return 1;
	case ST_RUNNING:
		return record_get(&st->rec, "retry_at") != NULL;
	case ST_PENDING:
	case ST_DONE:
		return record_count(&st->rec, "consecutive_failures") > 0;
	default:
		return 0;
	}
}

int jobstate_corrupt(const struct registry *reg, const char *job, const struct job_state *st)
{
	return fail(EXIT_CORRUPT, job, "corrupt record %s: %s", reg_path(reg, job), st->why);
}

int jobstate_read(const struct registry *reg, const char *job, struct job_state *st)
{
	int rc = jobstate_load(reg, job, st);
	return rc == EXIT_CORRUPT ? jobstate_corrupt(reg, job, st) : rc;
}

void jobstate_free(struct job_state *st)
{
	record_free(&st->rec);
}

void jobstate_describe(const struct record *r, struct buf *out)
{
	static const char *const keys[] = { "pid", "host", "since" };
	static const char *const words[] = { "pid", "on", "since" };
	const char *sep = "";
	for (size_t i = 0; i < 3; i++)
		if (record_get(r, keys[i])) {
			buf_addf(out, "%s%s %s", sep, words[i], record_get(r, keys[i]));
			sep = " ";
		}
}

const struct record *jobstate_record(const struct job_state *st)
{
	return st->found ? &st->rec : NULL;
}
