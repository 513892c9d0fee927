/* format: the formats of jobreg-get (jobreg-get(1)), pure functions from
 * a job id, its parsed record (NULL: none, or unusable) and its derived
 * status to text appended to OUT; no I/O.
 *
 * Plain:  "STATUS\n", or "JOB STATUS\n" WITH_ID (for -a).
 * Long:   job status since owner host pid exit note, tab-separated,
 *         "-" for an empty field, "SIG"+name for a signal.
 * JSON:   one object per line: "job", the record's fields in SPEC order
 *         (status the derived one; numbers as numbers, flags such as
 *         timed_out as booleans: json_kind() in format.c), then "duration"
 *         (ended - started, DONE), "stale", "overdue", "late", "paused",
 *         "waiting", "next_due", "health"; or {"job", "corrupt"|"unreadable":
 *         true}.  The lists (ok_exit, after, ...) are strings, "24" too.
 *         A record's unknown key named like such a member is left out, so
 *         a record cannot pass for another job.
 * Columns for people escape control characters; JSON strings as JSON
 * does (text_escape()).  Prometheus is prom.h's. */
#ifndef JOBREG_FORMAT_H
#define JOBREG_FORMAT_H

#include "record/record.h"
#include "util/sys.h"

void format_plain(struct buf *out, const char *job, enum status status, int with_id);
void format_long(struct buf *out, const char *job, const struct record *r,
		 enum status status);
/* What a reader judges of a job beyond its record's fields (-j, -P). */
struct job_flags {
	int late;                      /* a late job */
	int paused;                    /* a paused job */
	int overdue;                   /* an overdue run (SPEC §2 Overdue runs) */
	enum health health;            /* jobstate_health(), a reader's (SPEC §2 Health) */
	unsigned long long waiting;    /* live waiters in its line */
};
void format_json(struct buf *out, const char *job, const struct record *r,
		 enum status status, const struct job_flags *x);
/* A JSON string literal of S (UTF-8 passed through; C0, DEL and C1
 * controls escaped, text_escape()); the fuzzer checks it decodes back. */
void json_string(struct buf *out, const char *s);
/* A checked decimal ("007", "1.50") as a valid JSON (and Prometheus)
 * number: no leading zeros, a digit on both sides of a point. */
void json_number(struct buf *out, const char *v);

/* get --history: one ended run, LINE (LEN bytes) of JOB's history, as
 * "job run outcome started ended duration exit host pid" in columns as
 * -l's, or with JSON an object of "job" and the line's fields (numbers
 * and flags as -j's): a repeated key once, with its first value (as
 * history_get() reads it); a damaged line's bytes escaped, NUL too. */
void format_history(struct buf *out, int json, const char *job, const char *line, size_t len);

struct slot_view;
/* One slot: "group slot state job run host pid", tab-separated, "-" for
 * an empty field, state held or free; with JSON an object of those. */
void format_slot(struct buf *out, const struct slot_view *v, int json);

struct line_entry;
/* get --line: one live place of JOB's line (line.h), "job place kind
 * host pid since", tab-separated, "-" for what its line lacks; with JSON
 * an object of those, the absent left out. */
void format_place(struct buf *out, const char *job, const struct line_entry *e, int json);
/* get --slots: a call waiting in GROUP's line, after its slots: "group
 * place waiting job - host pid since"; with JSON an object of group,
 * place, "state": "waiting", job, host, pid and since. */
void format_slot_waiter(struct buf *out, const char *group, const struct line_entry *e,
			int json);

/* When a job with every= is next due (SPEC §5b), RFC 3339 into DUE: 1
 * with DUE; 0 when due now (no success on record); -1 with no period. */
int format_next_due(const struct record *r, char due[21]);

#endif
