/* line: a job's line of waiting dispatchers (SPEC §5a).
 *
 * A place is the file DIR/.JOB.wait.N, made and locked exclusively by the
 * waiter under the job lock, numbered from the record's wait_next.  It is
 * live while its file is locked and N >= replaced_below; the kernel drops
 * the lock of a waiter that dies, so a dead one leaves the line by
 * itself.  Places below wait_head are over.  Liveness is probed with
 * LOCK_SH|LOCK_NB on a descriptor of our own, which never disturbs the
 * holder; a waiter waits for the place ahead of it by a blocking shared
 * lock of that file, which the kernel grants when its holder goes.
 * Nothing here reads the directory: the numbers are in the record. */
#ifndef JOBREG_LINE_H
#define JOBREG_LINE_H

#include "record/record.h"
#include "registry/registry.h"

/* A place in line, held while fd >= 0. */
struct place {
	unsigned long long n;
	int fd;
};
#define PLACE_NONE { 0, -1 }

/* The record's numbers: the next place, the first not over, and the
 * first not superseded by a --replace. */
struct line_numbers {
	unsigned long long next, head, replaced_below;
};
void line_numbers(const struct record *rec, struct line_numbers *nums);
/* The numbers of JOB's record as it is now, read without a lock (a
 * waiter's look between two waits).  Returns an exit status; a missing
 * or corrupt record gives the numbers of none. */
int line_read(const struct registry *reg, const char *job, struct line_numbers *nums);

/* Under the job lock: take a place for this call, N = wait_next (made
 * O_CREAT|O_EXCL; a leftover of that number makes it N + 1), locked;
 * REC gets wait_next = N + 1, for the caller to write before it lets the
 * job lock go (line_abandon() if that write fails).  Returns an exit
 * status. */
int line_join(const struct registry *reg, const char *job, struct record *rec,
	      struct place *p);
/* Give up a place (a wait that passed, a write that failed): its file
 * removed, its lock let go. */
void line_abandon(const struct registry *reg, const char *job, struct place *p);

/* The nearest live place below BELOW (at least wait_head), or 0: none.
 * Costs one probe per place between them, dead and missing ones
 * included: a place a waiter that gave up removed stays in the range
 * until a turn ends above it. */
unsigned long long line_ahead(const struct registry *reg, const char *job,
			      const struct line_numbers *nums, unsigned long long below);
/* The live places in [wait_head, wait_next), for readers (SPEC §5 -j
 * "waiting", -P jobreg_job_waiting); 0 for a record without a line.  A
 * count: it stops after MISSING_MAX missing files in a row (line.c), so a
 * record whose numbers are far apart costs a reader no more. */
unsigned long long line_waiting(const struct registry *reg, const char *job,
				const struct record *rec);
/* Wait at most WAIT seconds for place N to be let go: 0 when it has been
 * (or its file is gone), EXIT_BUSY when the wait passed. */
int line_wait_for(const struct registry *reg, const char *job, unsigned long long n,
		  double wait);

/* Under the job lock, in the write that ends the turn of P (it starts a
 * run or answers the call): REC gets wait_head = P->n + 1 (never lower). */
void line_turn_ends(struct record *rec, const struct place *p);
/* Under the job lock, in the write that starts a run of a call with no
 * place, which found no live place in line: every place in it is over
 * (wait_head = wait_next), so later calls do not look at them again. */
void line_passed(struct record *rec, const struct line_numbers *nums);
/* After that write, still under the job lock: P's file and the unlocked
 * ones below it (down to the head REC had before) removed, P let go. */
void line_leave(const struct registry *reg, const char *job, struct place *p,
		unsigned long long old_head);

/* Job lock held: remove the files of the places in [FROM, TO) that
 * nobody holds (JOB's line being over, or cleared). */
void line_sweep(const struct registry *reg, const char *job, unsigned long long from,
		unsigned long long to);
/* Job lock held: remove JOB's place or follower's lock file NAME (as a
 * sweep's listing found it) if nobody holds it. */
void line_sweep_file(const struct registry *reg, const char *job, const char *name);
/* Clear JOB's record WAS (job lock held; with SYNC the directory
 * fsynced): it is removed, unless places in line are live or, with
 * KEEP_PAUSE (dispatch --clear), a pause is in force — then it becomes
 * PENDING with the line's numbers (so that none is handed out twice,
 * SPEC §5a) and the pause, and nothing else, and *KEPT is 1.  Returns an
 * exit status. */
int line_clear(const struct registry *reg, const char *job, const struct record *was,
	       int keep_pause, int sync, int *kept);

#endif
