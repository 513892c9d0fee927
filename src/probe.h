/* probe: the facts liveness_judge() needs from this system — who is
 * reading (host name, boot id, pid and time namespaces, the time) and the
 * state of a pid.  The run-lock probe needs the registry: see state.c. */
#ifndef JOBREG_PROBE_H
#define JOBREG_PROBE_H

#include "liveness.h"

/* This process's identity (cached; the time is read on every call). */
void probe_reader(struct reader *me);

/* Fill in P->pid for PID: GONE when kill(pid, 0) fails with ESRCH (or the
 * pid cannot be one), ZOMBIE, STARTED with its start time, or HIDDEN when
 * it exists but /proc will not tell (EPERM, EACCES, hidepid=). */
void probe_pid(long pid, struct probes *p);

#endif
