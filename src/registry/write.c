#include "registry/write.h"
#include "record/transition.h"
#include "registry/history.h"
#include "util/msg.h"

#include <string.h>

/* The outcome word of a DONE record's history line (one of no known
 * result counts as FAILED there). */
static const char *line_outcome(const struct record *r)
{
	enum outcome o = record_outcome(r);
	return o == OUTCOME_UNKNOWN ? "FAILED" : outcome_word(o);
}

/* The time R's KEY says ("ended": when a DONE record's run ended,
 * "since": when the record was written), or now. */
static time_t time_of(const struct record *r, const char *key)
{
	const char *e = record_get(r, key);
	time_t t;
	return e && time_parse(e, &t) == 0 ? t : now_seconds();
}

/* Put R's line (OUTCOME, ended at ENDED) into JOB's history, bounded by
 * KEEP; with KEEP_SAME, one of that run with OUTCOME already is kept. */
static int put_line(const struct registry *reg, const char *job, const struct record *r,
		    const char *outcome, time_t ended, unsigned long keep, int keep_same)
{
	struct buf line = {0};
	history_line(&line, r, outcome, ended);
	int rc = history_put(reg, job, record_count(r, "runs"), line.data, keep,
			     keep_same ? outcome : NULL);
	buf_free(&line);
	return rc;
}

int commit_record(const struct registry *reg, const char *job, const struct record *was,
		  enum status was_status, struct record *rec, const struct record *ended)
{
	unsigned long keep = record_keep_runs(rec);
	unsigned long long was_run = was ? record_count(was, "runs") : 0;
	int ends_was = ended && record_count(ended, "runs") == was_run;
	struct buf text = {0};
	int rc = 0;

	/* Not lost (write.h): a renewal (a heartbeat after its TTL), and a
	 * dispatcher killed while it waited to retry. */
	int renewed = record_status(rec) == ST_RUNNING && record_count(rec, "runs") == was_run;
	int between_attempts = was && record_get(was, "retry_at");
	if (was_status == ST_STALE && !ends_was && !renewed && !between_attempts) {
		/* The run was lost: its line first (see write.h). */
		record_count_lost(rec);
		rc = put_line(reg, job, was, "LOST", now_seconds(), keep, 0);
	} else if (was_status == ST_DONE && !ends_was && record_get(was, "started") &&
		   record_outcome(was) != OUTCOME_UNKNOWN) {
		/* Leaving a DONE record: its run's line, if a crash lost it
		 * or left it with the outcome a correction took back. */
		rc = put_line(reg, job, was, line_outcome(was), time_of(was, "ended"), keep, 1);
	} else if (between_attempts && !ends_was && record_get(was, "started")) {
		/* Leaving the record between two attempts: the failed one's
		 * line, if a crash lost it (it ended at that record's since). */
		rc = put_line(reg, job, was, "FAILED", time_of(was, "since"), keep, 1);
	}
	if (rc)
		return rc;
	record_format(rec, &text);   /* too large: reg_replace refuses it */
	rc = reg_replace(reg, job, job, text.data, text.len);
	buf_free(&text);
	if (!rc && ended) {
		const char *was_context = message_context("the record is in place, not its history line");
		rc = put_line(reg, job, ended, line_outcome(ended), time_of(ended, "ended"),
			      record_keep_runs(ended), 0);
		message_context(was_context);
	}
	/* A shorter keep_runs (--keep-runs N) trims the history now. */
	if (!rc && was && keep < record_keep_runs(was))
		rc = history_trim(reg, job, keep);
	return rc;
}
