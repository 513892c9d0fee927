/* liveness: is the owner of a RUNNING record alive?  (SPEC §2)
 *
 * One pure decision, no I/O.  liveness_judge() takes what the record says
 * (struct ownership), who reads it (struct reader) and the facts probed so far
 * (struct probes), and answers ALIVE, DEAD, or the probe it needs first:
 * PROBE_LOCK (the run lock: held, free or missing, and its inode) or
 * PROBE_PID (kill(pid, 0) and the pid's start time).  The caller makes that
 * probe, fills in its fact and asks again; it never asks for a fact it
 * already has, so at most two probes are made.  The rules, in order:
 *
 *   owner=lock, lock trusted (the record has no run_lock, as 0.1.0 wrote
 *     it, or DIR/.JOB.run is the inode run_lock names): alive exactly
 *     when the lock is held; a missing file without run_lock is dead.
 *   owner=lock, lock untrusted (file missing, or another inode): the
 *     dispatcher's pid fields decide by the pid rules; no TTL.
 *   other owners: dead once now > expires (to the sub-second); then
 *   no owner: alive (trusted as written);
 *   owner=pid, the pid rules:
 *     same boot_id, pid_ns and time_ns as the reader (a missing field
 *       matches a missing one; with no boot_id on either side the host
 *       must match too): the pid is probed — dead if gone (ESRCH), a
 *       zombie, or another start time; alive if it exists (also when
 *       its /proc entry is hidden, or the record has no pid_start);
 *     same host, both boot ids known and different: dead (a reboot);
 *     anything else (another host, another namespace): cannot be
 *       checked, alive.
 *
 * The man page jobreg(7) holds this as a truth table; the fuzzer
 * (tests/fuzz/liveness_fuzz.c) checks it. */
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
