/* turn: a dispatch's turn in the job's line (SPEC §5a) — its place, the
 * wait for its turn, and the write that ends it; start.c decides.
 *
 * A call waits for the live place nearest ahead by a blocking lock of its
 * file, which the kernel grants when the holder goes (dies, gives up, or
 * starts its run); at the head it waits for the run (wait.h).  It reads
 * the record at least once a second, for a --replace that superseded it. */
#ifndef JOBREG_TURN_H
#define JOBREG_TURN_H

#include "liveness/jobstate.h"
#include "registry/line.h"
#include "run/attempts.h"
#include "run/cancel.h"

/* This call's standing in the job's line. */
struct turn {
	struct place place;             /* fd -1: none (yet) */
	int coalesce_fd;                /* --coalesce: the follower's lock */
	unsigned long long coalesced;   /* `coalesced` when it became the follower */
	unsigned long long asked_run;   /* --replace: the run it asked to stop */
	double answer_by;               /* when the ask is due (0: answered, said) */
	unsigned long long runs_before; /* `runs` before the run it waits for */
	const char *after;              /* --after's list, for the answer to write
					 * (the record lacks it, SPEC §5d); NULL: none */
};

/* Under the job lock, ST read there: take the call's place (--coalesce
 * only as the follower, holding DIR/.JOB.coalesce: else *FOLDED, counted
 * in `coalesced`); with --replace supersede the places ahead
 * (replaced_below) and ask the live run to stop (SIGURG on this host).
 * One write.  Returns an exit status. */
int turn_join(const struct registry *reg, const struct run_request *req,
	      const struct job_state *st, struct turn *t, int *folded);
/* Without the job lock, until the turn may have come (no live place
 * ahead and no run), or superseded, or a --replace's answer due.  0:
 * decide again; EXIT_BUSY when DEADLINE (< 0: none) passed. */
int turn_wait(struct registry *reg, const struct run_request *req, struct turn *t,
	      double deadline);
/* Has a newer --replace superseded the call's place?  A look without the
 * job lock, for a slot's wait; decided again under it. */
int turn_superseded(const struct registry *reg, const char *job, const struct turn *t);
/* Under the job lock, the call's answer: a --coalesce follower says how
 * many folded calls it leaves unanswered and lets its lock go; then one
 * write counting SKIP (a reason, SPEC §5a Skips) or COALESCED, and ending
 * the turn of a call with a place.  Nothing to write: 0. */
int turn_answer(const struct registry *reg, const char *job, const struct job_state *st,
		struct turn *t, const char *skip, int coalesced);
/* Taking the job lock, turn_answer() with skip REASON for a call that ends
 * outside a decision (no free slot, --wait passed, a signal).  Exit status. */
int turn_skip(const struct registry *reg, const struct run_request *req, struct turn *t,
	      const char *reason);
/* While ON, TERM, INT and HUP (unless ignored) are noted, not fatal; every
 * wait ends within a second, turn_stopped() the signal (0: none). */
void turn_catch_stops(int on);
int turn_stopped(void);
/* A --replace's cancel unanswered for CANCEL_ANSWER_SECONDS: said, with
 * who holds the run lock; the call goes on waiting. */
void turn_report_unanswered(const struct registry *reg, const struct run_request *req,
			    const struct job_state *st, struct turn *t);
/* Without the job lock: the call leaves without a run, its place and follower's lock go. */
void turn_leave(const struct registry *reg, const struct run_request *req, struct turn *t);

#endif
