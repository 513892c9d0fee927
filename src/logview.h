/* logview: reading a job's run logs (SPEC §3b) — jobreg-get --log,
 * --follow and --faillog, and dispatch --chronic's print of a failed run's
 * log.  No lock is taken: the relay writes as output comes (logrelay.h). */
#ifndef JOBREG_LOGVIEW_H
#define JOBREG_LOGVIEW_H

#include "registry.h"

/* Copy JOB's log (SUFFIX ".log" or ".faillog") to descriptor OUT as it is
 * now.  Returns an exit status: 1 (after a message, unless QUIET_MISSING)
 * when there is none. */
int logview_print(const struct registry *reg, const char *job, const char *suffix, int out,
		  int quiet_missing);

/* jobreg-get --log --follow: print JOB's log, then what is appended,
 * until the run that writes it ends (as a wait notices it: within 100
 * ms, a kill -9 of the whole run included).  Returns an exit status. */
int logview_follow(const struct registry *reg, const char *job);

/* dispatch --chronic: a failed run's log on standard error. */
void logview_chronic(const struct registry *reg, const char *job);

#endif
