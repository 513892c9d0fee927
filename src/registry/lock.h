/* lock: a job's locks (SPEC §4, §6) — the job lock of every writer, the
 * run lock a dispatch holds for its run — taken with a bounded wait, their
 * names re-checked once held, and a reader's probe of the run lock. */
#ifndef JOBREG_LOCK_H
#define JOBREG_LOCK_H

#include "registry/registry.h"

/* Flags of reg_lock(). */
enum {
	LOCK_CREATE = 1,      /* create the lock file if missing */
	LOCK_QUIET_BUSY = 2,  /* a busy lock returns 75 without a message */
	LOCK_NO_RECHECK = 4   /* no re-check of the name: the run lock taken
			       * holding the job lock by a clear (see sweep.c) */
};

/* Lock JOB's lock KIND with OP (LOCK_EX or LOCK_SH), waiting at most WAIT
 * seconds (< 0: no limit).  *fd is the locked descriptor, or -1 when the
 * file is missing without LOCK_CREATE.  None is made for a record that is
 * not a regular file (77).  Once locked, the name is re-checked to name
 * the inode held, else the lock is taken again. */
int reg_lock(const struct registry *reg, const char *job, enum lock_kind kind,
	     int op, double wait, int flags, int *fd);
void reg_unlock(int *fd);
/* flock(FD, OP) waiting at most WAIT seconds (< 0: no limit, 0: none).
 * Returns 0, or -1 with errno (EWOULDBLOCK: the wait passed). */
int flock_wait(int fd, int op, double wait);
/* reg_lock() of the lock file NAME of DIR (a slot group's files, slots.h);
 * JOB names the caller in messages. */
int reg_lock_entry(const struct registry *reg, const char *job, const char *name,
		   int op, double wait, int flags, int *fd);
/* Open lock file NAME as reg_lock() does, without locking it: *fd -1
 * when it is missing and CREATE is 0.  Returns an exit status. */
int reg_open_lock(const struct registry *reg, const char *job, const char *name,
		  int exclusive, int create, int *fd);

/* A reader's probe of JOB's run lock (SPEC §2), LOCK_SH|LOCK_NB, its name
 * not re-checked (liveness compares *INO, the inode opened or 0, with the
 * record's run_lock).  *busy: someone holds it; else *fd holds the probe
 * (-1: no run lock), for the caller to re-read the record under and
 * release.  Returns an exit status. */
int reg_probe_run_lock(const struct registry *reg, const char *job, int *fd,
		       unsigned long long *ino, int *busy);

#endif
