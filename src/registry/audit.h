/* audit: the one writer of the audit log DIR/.-audit (SPEC §3c), and its
 * reading.  A line is written under the job lock, once the change is
 * decided, and before it is made:
 *
 *   job lock (the caller's) -> .-audit.lock (LOCK_EX, bounded by -w) ->
 *   open .-audit (O_APPEND; the name re-checked to be the file opened) ->
 *   one write(2) -> fsync -> close -> audit lock let go -> the change.
 *
 * Appends happen only under the audit lock, so lines of many hosts never
 * interleave, also where a filesystem's appends are not atomic across
 * clients; a write that fails half-way is cut back off (ftruncate) before
 * the lock goes, so no torn line is left for the next to follow.  The
 * holder that takes .-audit past AUDIT_ROTATE renames it to .-audit.1 and
 * fsyncs the directory.  A line that cannot be written means the change
 * is not made (74, 77, 75 for a busy lock), unless the caller forces it
 * (--force), which says that it is not on the audit log.  A crash between
 * the line and the change leaves a line too many, never one too few. */
#ifndef JOBREG_AUDIT_H
#define JOBREG_AUDIT_H

#include "registry/registry.h"
#include "util/sys.h"

#define AUDIT_FILE ".-audit"
#define AUDIT_OLD ".-audit.1"
#define AUDIT_ROTATE (1024L * 1024)
#define AUDIT_LINE_MAX 4096   /* the newline included */

/* One change by hand.  NULL fields (0 for run) are left out. */
struct audit_line {
	const char *action;   /* set, cancel, pause, resume, clear, replace */
	const char *job;      /* NULL: the registry's own (job=-) */
	const char *status;   /* the job's status: for clear, the record's removed */
	unsigned long long run;   /* cancel, replace: the run asked to stop */
	const char *signal;   /* ... and the signal it gets first */
	const char *until;    /* pause: when it ends (inf) */
	const char *note;     /* -m; cut on a character boundary to fit */
};

/* A change in the making: its messages are held (message_hold()) until
 * audit_end(), whose result=failed line gives the last one as its error. */
struct audit_change {
	struct buf held, *was_held;
	int logged;           /* its line was written */
};

/* Job lock held, the change decided: write A's line, waiting at most
 * LOCK_WAIT seconds for the audit lock.  0, then make the change and call
 * audit_end(); else the exit status of a line that could not be written
 * (said; the change is not to be made), or with FORCE 0 after saying the
 * change is not on the audit log. */
int audit_begin(const struct registry *reg, const struct audit_line *a, double lock_wait,
		int force, struct audit_change *c);
/* After the change, RC its exit status: the held messages written, and
 * for a failed change on the log its second line (result=failed, the
 * error).  Returns RC. */
int audit_end(const struct registry *reg, const struct audit_line *a, double lock_wait,
	      struct audit_change *c, int rc);

/* Readers.  The log, .-audit.1 then .-audit, whole lines only, into LOG
 * (read again if a rotation came between the two).  No log: LOG empty.
 * An exit status (77 for an entry that is not a regular file). */
int audit_read(const struct registry *reg, struct buf *log);
/* The field after *P (a line of a log, ending at END or a newline): its
 * KEY and its VALUE unquoted; *P moves past it.  0 at the line's end. */
int audit_field(const char **p, const char *end, struct buf *key, struct buf *value);
/* The last line in LOG (LEN bytes) of ACTION for JOB (NULL: the
 * registry's own): its time into WHEN, its person (sudo_user, else user;
 * with "as USER" when through sudo) into WHO.  1 if there is one. */
int audit_last(const char *log, size_t len, const char *job, const char *action,
	       struct buf *when, struct buf *who);

#endif
