/* logview: reading a job's run logs (SPEC §3b) — jobreg-get --log,
 * --follow and --faillog, and dispatch --chronic's print of a failed run's
 * log.
 *
 * The relay cuts a log in place (logrelay.h) and a reader takes no lock.
 * A reader knows how far into the run's output it has printed and finds
 * that place from the log's first line.  It keeps a read only when the
 * log's first bytes (that line and the start of what follows it) were the
 * same before and after the read and the log was not shortened under it;
 * and, while a relay may write, when the first byte is not a cut's NUL
 * (LOG_CUT_MARK in the log's mode, logrelay.h) and the
 * start did not change under the same first line since the last read (a
 * move under way).  That is exact for a cut that makes its first byte NUL
 * first, then moves the kept bytes, truncates, and writes the first line
 * last: a cut under way is then always seen, and waited for.  A cut that
 * writes the line before moving, or truncates after writing it, can still
 * be read half done, rarely.  Output cut before it was read is told in
 * one line on stderr, and the reader goes on from the next whole line. */
#ifndef JOBREG_LOGVIEW_H
#define JOBREG_LOGVIEW_H

#include "registry/registry.h"

/* jobreg-get --log: copy JOB's log, the latest run's, to standard output
 * as it is now.  With FOLLOW (--follow), then what is appended, until the
 * run that writes it ends, every attempt of it (as a wait notices it:
 * within 100 ms, a kill -9 of the whole run included).  A log made for a
 * run whose record does not say RUNNING yet is that run's: the run lock
 * is held.  While the run goes, only whole lines are printed.  Returns an
 * exit status: 1 after a message when there is no log. */
int logview_print(struct registry *reg, const char *job, int follow);

/* jobreg-get --faillog: the log of JOB's last run that failed or was lost
 * — the latest log when that run is the latest (its log is set aside only
 * when the next run begins, logrelay.h), else the fail log.  Which one is
 * chosen under the job lock, shared (waiting at most LOCK_WAIT seconds),
 * since a run begins by setting the last log aside and then writing its
 * RUNNING record, under that lock. */
int logview_faillog(const struct registry *reg, const char *job, double lock_wait);

/* dispatch --chronic: a failed run's log on standard error, its last
 * line ended if the log left it open (dispatch's own line follows). */
void logview_chronic(const struct registry *reg, const char *job);

#endif
