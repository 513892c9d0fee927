/* history: a job's run history, DIR/.JOB.history (SPEC §3a): one line of
 * key=value pairs per ended run, keyed by its run (at most once each).
 * Written under the job lock, replaced as a record is (registry.h); which
 * write adds which line is write.c's. */
#ifndef JOBREG_HISTORY_H
#define JOBREG_HISTORY_H

#include <stddef.h>
#include <time.h>

#include "record/record.h"
#include "record/transition.h"
#include "registry/registry.h"

#define HISTORY_SUFFIX ".history"
/* The largest history file read (KEEP_RUNS_MAX lines, with room).  A
 * writer begins a larger one again and leaves out damaged lines (no
 * decimal run=, a NUL byte, invalid UTF-8), with a warning: a history is
 * diagnostics and never stops a run. */
#define HISTORY_MAX (8u << 20)

/* The line of the run R ends, R being its record once ended (DONE, for OK
 * and FAILED) or its record when found lost (RUNNING, for LOST: ENDED is
 * then when the loss was found); without "\n". */
void history_line(struct buf *out, const struct record *r, const char *outcome, time_t ended);

/* Put LINE, of run RUN, into JOB's history, in place of that run's line
 * or last; then only the last KEEP lines stay (0: the file is removed).
 * With KEEP_SAME (LINE's outcome), a line of that run with that outcome is
 * left as it is; one with another (a correction's record written, then a
 * crash before its line) is replaced.  Job lock held; an exit status. */
int history_put(const struct registry *reg, const char *job, unsigned long long run,
		const char *line, unsigned long keep, const char *keep_same);

/* Only the last KEEP lines of JOB's history stay (0: the file is
 * removed), now.  Job lock held; an exit status. */
int history_trim(const struct registry *reg, const char *job, unsigned long keep);

/* For END making the OK or WARNING run of R, a DONE record, FAILED (a
 * correction): what JOB's history says came before that run (its last OK
 * or WARNING line, and the FAILED and LOST ones after it) into *B
 * (transition.h); otherwise *B is empty and nothing is read.  Job lock
 * held; an exit status. */
int history_before(const struct registry *reg, const char *job, const struct record *r,
		   const struct run_result *end, struct before_run *b);

/* JOB's history into DATA (*found 0: none); an exit status. */
int history_read(const struct registry *reg, const char *job, struct buf *data, int *found);

/* The next line of DATA from *POS (advanced past it) into *LINE and *LEN;
 * 0 at the end. */
int history_next(const struct buf *data, size_t *pos, const char **line, size_t *len);
/* The value of KEY in the line (LEN bytes) into *VALUE and *VLEN; 0 when
 * the line has no such key. */
int history_get(const char *line, size_t len, const char *key, const char **value,
		size_t *vlen);

#endif
