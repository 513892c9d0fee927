/* logview: reading a job's run logs (SPEC §3b) — jobreg-get --log,
 * --follow and --faillog, and dispatch --chronic's report.
 *
 * The relay cuts a log in place (logrelay.h); a reader takes no lock.  It
 * knows how far into the run's output it has printed and finds that place
 * from the log's first line.  It keeps a read only when the log's first
 * bytes were the same before and after it and the log was not shortened;
 * and, while a relay may write, when the first byte is not a cut's NUL
 * (LOG_CUT_MARK in the mode) and the start did not change under the same
 * first line since the last read (a move under way).  That is exact for
 * logrelay's order (NUL first, move, truncate, first line last); a cut in
 * another order can still be read half done, rarely.  Output cut before it
 * was read is told in one line on stderr; the reader goes on from the next
 * whole line. */
#ifndef JOBREG_LOGVIEW_H
#define JOBREG_LOGVIEW_H

#include "liveness/jobstate.h"
#include "registry/registry.h"

#include <sys/types.h>

/* jobreg-get --log: JOB's latest log to stdout as it is now; with FOLLOW
 * then what is appended until the run ends, every attempt of it (noticed
 * within 100 ms, a kill -9 of the whole run included), only whole lines
 * while it goes.  A log whose run is not RUNNING yet (run lock held) is
 * that run's.  Returns an exit status: 1 after a message when no log. */
int logview_print(struct registry *reg, const char *job, int follow);

/* jobreg-get --faillog: the log of JOB's last failed or lost run — the
 * latest log while that run is the latest (logrelay.h sets it aside only
 * when the next run begins), else the fail log; chosen under the job lock,
 * shared (at most LOCK_WAIT seconds), under which a run sets it aside. */
int logview_faillog(const struct registry *reg, const char *job, double lock_wait);

/* dispatch --chronic: a failed run's log on standard error, its last
 * line ended if the log left it open (dispatch's own line follows). */
void logview_chronic(const struct registry *reg, const char *job);

/* A notification's standard input (SPEC §5c): the log of ST's last failed
 * run (chosen as --faillog does) in *FD, placed at its last TAIL bytes;
 * -1 when there is none.  An exit status. */
int logview_failed_tail(const struct registry *reg, const char *job, const struct job_state *st,
			off_t tail, int *fd);

#endif
