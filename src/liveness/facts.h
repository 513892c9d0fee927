/* facts: the facts liveness_judge() needs from this system — who is
 * reading (host name, boot id, pid and time namespaces, the time) and the
 * state of a pid.  The run-lock probe needs the registry: see jobstate.c.
 * A /proc file that cannot be read for a reason that says nothing about
 * the process (EMFILE, ENFILE, EIO, ...) is an error, never a guess. */
#ifndef JOBREG_FACTS_H
#define JOBREG_FACTS_H

#include "liveness/liveness.h"

/* This process's identity (read once; the time on every call).  Returns
 * 0, or -1 with errno when /proc could not be read. */
int probe_reader(struct reader *me);

/* Fill in P->pid for PID: GONE when kill(pid, 0) fails with ESRCH (or the
 * pid cannot be one), ZOMBIE, STARTED with its start time, or HIDDEN when
 * it exists but /proc will not show it (EPERM, EACCES, hidepid=).
 * Returns 0, or -1 with errno when /proc/PID/stat could not be read for
 * another reason: then nothing is known. */
int probe_pid(long pid, struct probes *p);

#endif
