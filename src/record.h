/* record: the on-disk record of one job (SPEC §3) — parsing, the
 * transitions and formatting.  Memory only, no I/O; the output formats
 * of jobreg-get are in output.h. */
#ifndef JOBREG_RECORD_H
#define JOBREG_RECORD_H

#include <stddef.h>
#include <time.h>

#include "rfc3339.h"
#include "status.h"
#include "sys.h"

#define RECORD_MAX 65536   /* a larger file is corrupt */

struct field {
	char *key;
	char *value;
	unsigned char owned;    /* OWN_KEY | OWN_VALUE: malloc'd, not in text */
	unsigned char rank;     /* place in the SPEC §3 key order (record.c) */
};
enum { OWN_KEY = 1, OWN_VALUE = 2 };

struct record {
	struct field *fields;
	size_t count;
	size_t cap;
	char *text;             /* the parsed bytes, split in place */
};

void record_init(struct record *r);
void record_free(struct record *r);

/* Parse LEN bytes.  Returns 0, or -1 with *why set to a static reason
 * (the record is then corrupt and R holds nothing). */
int record_parse(struct record *r, const char *data, size_t len, const char **why);

const char *record_get(const struct record *r, const char *key);
/* A copy of SRC that owns all its strings. */
void record_copy(struct record *dst, const struct record *src);
void record_put(struct record *r, const char *key, const char *value);
void record_drop(struct record *r, const char *key);

/* The written status (PENDING, RUNNING or DONE) of a parsed record. */
enum status record_status(const struct record *r);

/* The canonical text: keys in SPEC order, unknown keys after them.
 * Returns -1 when it is larger than RECORD_MAX (it would read back as
 * corrupt, so it must not be written), else 0. */
int record_format(const struct record *r, struct buf *out);
/* That order as indices into r->fields, into IDX (r->count entries). */
void record_order(const struct record *r, size_t *idx);

/* The owner a RUNNING record is given.  0 or NULL: absent, not written.
 * OWNER_LOCK records carry the dispatcher's pid fields too, and the inode
 * of the run lock it holds (SPEC §2). */
struct owner {
	enum { OWNER_NONE, OWNER_LOCK, OWNER_PID } kind;
	const char *host;
	long pid;
	unsigned long long pid_start;
	const char *boot_id;
	unsigned long long pid_ns, time_ns;   /* inodes of /proc/self/ns/{pid,time} */
	unsigned long long run_lock;          /* OWNER_LOCK: inode of .JOB.run */
};

/* How a run ended. */
struct run_end {
	int exit_status;           /* -1: not known */
	const char *signal_name;   /* "TERM", "RTMIN+3"; NULL: not killed */
	int timed_out;             /* the time limit ended it */
};

/* Transitions of SPEC §3.  NOTE replaces the note when not NULL.  The
 * job's history and settings (runs, failures, lost, consecutive_failures,
 * last_success, late_after, late_from, keep_runs) are kept by every
 * transition. */
void record_to_pending(struct record *r, time_t now, const char *note);
/* How a run begins: its owner, EXPIRES (0: none), TIMEOUT (<= 0: none)
 * and ATTEMPT (0: none; dispatch --retries). */
struct run_start {
	const struct owner *owner;
	time_t expires;
	double timeout;
	unsigned long attempt;
};
/* The same owner as now recorded: a renewal (since, started, runs and
 * attempt kept); otherwise runs + 1. */
void record_to_running(struct record *r, time_t now, const struct run_start *how,
		       const char *note);
/* A failed attempt whose next one starts at RETRY_AT: the record stays
 * RUNNING, with failures and consecutive_failures + 1. */
void record_to_retry(struct record *r, time_t now, time_t retry_at);
/* Failures and consecutive_failures + 1 for a FAILED end (not over a
 * DONE record, whose result this corrects, nor over an attempt waiting
 * for its retry, counted already); last_success = ended and
 * consecutive_failures dropped for an OK one. */
void record_to_done(struct record *r, time_t now, const struct run_end *end,
		    const char *note);
/* DONE with END, for the failed attempt whose failure record_to_retry()
 * counted already: no counter moves. */
void record_to_done_counted(struct record *r, time_t now, const struct run_end *end,
			    const char *note);
/* The run of a STALE record was lost (SPEC §2): failures, lost and
 * consecutive_failures + 1. */
void record_count_lost(struct record *r);
/* late_after = LATE_AFTER seconds (< 0: remove it and late_from);
 * late_from = NOW the first time (SPEC §2 Late jobs). */
void record_set_late(struct record *r, double late_after, time_t now);
/* The history length (SPEC §3a); the default is not written. */
#define KEEP_RUNS_DEFAULT 20
#define KEEP_RUNS_MAX 10000
void record_set_keep_runs(struct record *r, unsigned long keep);
unsigned long record_keep_runs(const struct record *r);
/* A counter of the record (runs, failures, ...); 0 when absent. */
unsigned long long record_count(const struct record *r, const char *key);

/* The outcome of a DONE record (status.h). */
enum outcome record_outcome(const struct record *r);
/* How a DONE record says its run ended. */
struct run_end record_run_end(const struct record *r);
/* The exit status of a run that ended so: 124 for a time limit, 128+N for
 * signal N, else its exit status (0 when unknown). */
int run_end_status(const struct run_end *e);

/* Is R a RUNNING record written for owner O (same kind, host, pid, start)? */
int record_owned_by(const struct record *r, const struct owner *o);

#endif
