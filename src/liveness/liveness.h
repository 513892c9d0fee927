/* liveness: is the owner of a RUNNING record alive?  (SPEC §2 Owners and liveness)
 *
 * One pure decision, no I/O.  liveness_judge() takes what the record says
 * (struct ownership), who reads it (struct reader) and the facts probed so far
 * (struct probes), and answers ALIVE, DEAD, or the probe it needs first:
 * PROBE_LOCK (the run lock: held, free or missing, and its inode) or
 * PROBE_PID (kill(pid, 0) and the pid's start time).  The caller makes that
 * probe, fills in its fact and asks again; it never asks for a fact it
 * already has, so at most two probes are made.
 *
 * The rules are SPEC §2's, and three of ours: a record with no run_lock
 * (as 0.1.0 wrote it) trusts the lock as found, a missing file being dead;
 * with no boot_id on either side, the host must match too before a pid is
 * probed; and with no pid_start, a pid that exists is alive.  jobreg(7) holds them as a truth table; tests/fuzz/liveness_fuzz.c checks it. */
#ifndef JOBREG_LIVENESS_H
#define JOBREG_LIVENESS_H

#include <time.h>

#include "record/record.h"
#include "record/transition.h"

/* What a RUNNING record says about its owner. */
struct ownership {
	struct owner owner;     /* kind OWNER_NONE: no owner */
	int has_expires;
	time_t expires;
};

/* Who is reading: this process's identity (0 / NULL: the kernel has none). */
struct reader {
	const char *host;
	const char *boot_id;
	unsigned long long pid_ns, time_ns;
	double now;             /* now_real() */
};

/* Facts probed so far; zero-initialized means none. */
struct probes {
	enum { LOCK_UNPROBED, LOCK_HELD, LOCK_FREE, LOCK_MISSING } lock;
	unsigned long long lock_ino;   /* HELD, FREE: inode of DIR/.JOB.run */
	enum {
		PID_UNPROBED,
		PID_GONE,       /* kill(pid, 0) failed with ESRCH */
		PID_ZOMBIE,
		PID_STARTED,    /* exists; its start time is pid_start */
		PID_HIDDEN      /* exists, but its /proc entry cannot be read */
	} pid;
	unsigned long long pid_start;
};

enum liveness { LIVE_ALIVE, LIVE_DEAD, LIVE_PROBE_LOCK, LIVE_PROBE_PID };

/* What a parsed RUNNING record says of its owner; its strings point into R. */
void liveness_ownership(const struct record *r, struct ownership *c);

enum liveness liveness_judge(const struct ownership *c, const struct reader *me,
			     const struct probes *p);

/* Does the probed run lock decide a lock-owned record (no pid check)? */
int liveness_lock_trusted(const struct ownership *c, const struct probes *p);

#endif
