/* facts: the facts liveness_judge() needs from this system — who is
 * reading (host name, boot id, pid and time namespaces, the time) and the
 * state of a pid.  The run-lock probe needs the registry: see jobstate.c.
 * A /proc file that cannot be read for a reason that says nothing about
 * the process (EMFILE, ENFILE, EIO, ...) is an error, never a guess. */
#ifndef JOBREG_FACTS_H
#define JOBREG_FACTS_H

#include "liveness/liveness.h"
#include "record/record.h"

/* This process's identity (read once; the time on every call).  Returns
 * 0, or -1 with errno when /proc could not be read. */
int probe_reader(struct reader *me);

/* Fill in P->pid for PID: GONE when kill(pid, 0) fails with ESRCH (or the
 * pid cannot be one), ZOMBIE, STARTED with its start time, or HIDDEN when
 * it exists but /proc will not show it (EPERM, EACCES, hidepid=).
 * Returns 0, or -1 with errno when /proc/PID/stat could not be read for
 * another reason: then nothing is known. */
int probe_pid(long pid, struct probes *p);

/* "user@host" of this process, for cancel_by and paused_by: the name of
 * the effective uid (its number when it has none), and the host name. */
void user_at_host(struct buf *out);

/* Send SIG to the dispatcher that owns the RUNNING record R, if it is a
 * process of this system: same host, boot and pid namespace, and the pid
 * started when the record says (so that no recycled pid is signalled).
 * Returns 1 when sent, else 0. */
int signal_owner(const struct record *r, int sig);

#endif
