/* logview: reading a job's run logs (SPEC §3b) — jobreg-get --log,
 * --follow and --faillog, and dispatch --chronic's print of a failed run's
 * log.  No lock is taken: the relay writes as output comes (logrelay.h). */
#ifndef JOBREG_LOGVIEW_H
#define JOBREG_LOGVIEW_H

#include "registry/registry.h"

/* jobreg-get --log: copy JOB's log, the latest run's, to standard output
 * as it is now.  Returns an exit status: 1 after a message when there is
 * none. */
int logview_print(const struct registry *reg, const char *job);

/* jobreg-get --faillog: the log of JOB's last run that failed or was lost
 * — the latest log when that run is the latest (its log is set aside only
 * when the next run begins, logrelay.h), else the fail log. */
int logview_faillog(const struct registry *reg, const char *job);

/* jobreg-get --log --follow: print JOB's log, then what is appended,
 * until the run that writes it ends (as a wait notices it: within 100
 * ms, a kill -9 of the whole run included).  Returns an exit status. */
int logview_follow(const struct registry *reg, const char *job);

/* dispatch --chronic: a failed run's log on standard error. */
void logview_chronic(const struct registry *reg, const char *job);

#endif
