/* auditview: jobreg-get --audit [--since D] [-j] [JOB...] (SPEC §5, §3c):
 * the audit log, .-audit.1 then .-audit, oldest first.  Plain: each line
 * as written, control characters escaped (utf8.h's one escaping: a line
 * planted by hand must not move a terminal either); -j: one JSON object a
 * line, its keys in the line's order, values unquoted back, uid, pid and
 * run as numbers.  With JOBs, their lines and the registry's own (job=-,
 * its pause, which holds every job too).  No log: nothing, 0. */
#ifndef JOBREG_AUDITVIEW_H
#define JOBREG_AUDITVIEW_H

#include <stddef.h>

#include "registry/registry.h"

/* Print REG's audit log to standard output: the lines of the NJOBS JOBS
 * (0: all) newer than SINCE seconds ago (< 0: all); JSON for -j.  An
 * exit status. */
int auditview_print(const struct registry *reg, char **jobs, size_t njobs, double since,
		    int json);

#endif
