#include "state.h"
#include "cli.h"
#include "liveness.h"

#include <string.h>
#include <sys/file.h>

static int same_value(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The run a lock-owned record names: its pid and start. */
static int same_run(const struct record *a, const struct record *b)
{
	return record_status(a) == ST_RUNNING && record_status(b) == ST_RUNNING &&
	       same_value(record_get(a, "owner"), record_get(b, "owner")) &&
	       same_value(record_get(a, "host"), record_get(b, "host")) &&
	       same_value(record_get(a, "pid"), record_get(b, "pid")) &&
	       same_value(record_get(a, "started"), record_get(b, "started"));
}

static int lock_owned(const struct record *r)
{
	const char *owner = record_get(r, "owner");
	return owner && strcmp(owner, "lock") == 0;
}

static int read_record(const struct registry *reg, const char *job, struct job_state *st)
{
	static struct buf data;
	const char *why;

	record_free(&st->rec);
	st->status = ST_PENDING;
	int rc = reg_read(reg, job, &data, &st->found);
	if (rc)
		return rc;
	if (!st->found)
		return 0;
	if (record_parse(&st->rec, data.data, data.len, &why) < 0) {
		st->status = ST_CORRUPT;
		st->why = why;
		return EXIT_CORRUPT;
	}
	st->status = record_status(&st->rec);
	return 0;
}

int state_load(const struct registry *reg, const char *job, struct job_state *st)
{
	struct record probed;   /* the record read before the probe */
	int probe = -1, rc;

	record_init(&st->rec);
	record_init(&probed);
	st->why = NULL;
	for (int attempt = 0; attempt < 1000; attempt++) {
		rc = read_record(reg, job, st);
		if (rc || st->status != ST_RUNNING)
			break;
		if (!lock_owned(&st->rec)) {
			if (!owner_alive(&st->rec, now_seconds()))
				st->status = ST_STALE;
			break;
		}
		if (attempt > 0 && probed.count && same_run(&probed, &st->rec)) {
			/* Read again under a successful probe and the same
			 * run: nobody holds its lock, so it is dead. */
			st->status = ST_STALE;
			break;
		}
		reg_unlock(&probe);
		rc = reg_lock(reg, job, RUN_LOCK, LOCK_SH, 0, LOCK_QUIET_BUSY, &probe);
		if (rc == EXIT_BUSY) {
			rc = 0;   /* held: the run is alive */
			break;
		}
		if (rc)
			break;
		/* Free (or gone): remember this run, read again under it. */
		record_free(&probed);
		probed = st->rec;
		record_init(&st->rec);
	}
	reg_unlock(&probe);
	record_free(&probed);
	return rc;
}

int state_corrupt(const struct registry *reg, const char *job, const struct job_state *st)
{
	return fail(EXIT_CORRUPT, job, "corrupt record %s: %s", reg_path(reg, job), st->why);
}

void state_free(struct job_state *st)
{
	record_free(&st->rec);
}

void state_describe(const struct record *r, struct buf *out)
{
	const char *pid = record_get(r, "pid"), *host = record_get(r, "host");
	const char *since = record_get(r, "since");
	const char *sep = "";
	if (pid) {
		buf_addf(out, "pid %s", pid);
		sep = " ";
	}
	if (host) {
		buf_addf(out, "%son %s", sep, host);
		sep = " ";
	}
	if (since)
		buf_addf(out, "%ssince %s", sep, since);
}
