/* format: every format of jobreg-get (see jobreg-get(1)), as pure
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
 *         "late": true for a late job; "next_due" for a record that keeps
 *         every= and a success (format_next_due()).
 * Every column for people escapes control characters, JSON strings as
 * JSON does (util/utf8.h text_escape()).
 * The Prometheus format is prom.h's. */
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

/* get --history: one ended run, a LINE of LEN bytes of the history
 * (history.h) of JOB: tab-separated "job run outcome started ended
 * duration exit host pid" ("-" for an empty field, SIG+name for a signal),
 * or with JSON one object of "job" and the line's fields (numbers as
 * numbers, flags as true): a key the line repeats is given once, its
 * first value, as history_get() reads it, and the bytes of a damaged or
 * hand-edited line are escaped, NUL bytes too. */
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

/* When a job whose record keeps every= (dispatch --every) is next due:
 * the started of its last success plus every (SPEC §5b), into DUE as
 * RFC 3339 text.  1 with DUE; 0 when it is due now (no success on
 * record); -1 when the record keeps no period. */
int format_next_due(const struct record *r, char due[21]);

#endif
