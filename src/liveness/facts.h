/* facts: what liveness_judge() needs from this system — who is reading and
 * the state of a pid (the run-lock probe is jobstate.c's).  A /proc file
 * unread for a reason that says nothing of the process (EMFILE, EIO, ...)
 * is an error, never a guess. */
#ifndef JOBREG_FACTS_H
#define JOBREG_FACTS_H

#include "liveness/liveness.h"
#include "record/record.h"

/* This process's identity (read once; the time on every call).  Returns
 * 0, or -1 with errno when /proc could not be read. */
int probe_reader(struct reader *me);

/* Fill in P->pid for PID (GONE also when it cannot be a pid; HIDDEN for
 * EPERM, EACCES, hidepid=).  Returns 0, or -1 with errno when
 * /proc/PID/stat could not be read for another reason. */
int probe_pid(long pid, struct probes *p);

/* "user@host" of this process, for cancel_by and paused_by: the name of
 * the effective uid (its number when it has none), and the host name. */
void user_at_host(struct buf *out);

/* Send SIG to the dispatcher that owns the RUNNING record R if it is a
 * process of this system (same host, boot and pid namespace) that started
 * when the record says: no recycled pid is signalled.  1 when sent. */
int signal_owner(const struct record *r, int sig);

#endif
