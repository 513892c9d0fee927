/* turn: a dispatch's turn in the job's line (SPEC §5a) — its place taken
 * (and with --coalesce the follower's lock, with --replace the waiters
 * ahead superseded and the live run asked to stop), the wait for its
 * turn, and the write that ends it.  start.c decides; this is how a call
 * that must wait stands in line.
 *
 * A call waits for the live place nearest ahead of it by a blocking lock
 * of that place's file, which the kernel grants when its holder goes
 * (dies, gives up, or starts its run); at the head of the line it waits
 * for the run in progress (wait.h).  Between waits it reads the record at
 * least once a second, for a --replace that superseded it. */
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
	double answer_by;               /* now_mono() by which the ask is answered
					 * (0: answered or reported) */
	unsigned long long runs_before; /* with a place: `runs` before the run it
					 * waits for (the one going when it
					 * joined, or the next) */
};

/* Under the job lock, a call that will wait (ST, the record read): take
 * its place (a --coalesce call only if it becomes the follower: else it
 * is folded, counted in `coalesced`, *FOLDED), and with --replace
 * supersede the places ahead and ask the live run to stop (then SIGURG
 * to its dispatcher, on this host).  One write.  Returns an exit status. */
int turn_join(const struct registry *reg, const struct run_request *req,
	      const struct job_state *st, struct turn *t, int *folded);
/* Wait, without the job lock, until the call's turn may have come: no
 * live place ahead and the run in progress over, or superseded, or a
 * --replace's answer due.  0: decide again; EXIT_BUSY when DEADLINE (< 0:
 * none) passed. */
int turn_wait(struct registry *reg, const struct run_request *req, struct turn *t,
	      double deadline);
/* Has a newer --replace superseded the call's place?  A look without the
 * job lock, for a wait outside the line (a slot's): the decision is made
 * again under it. */
int turn_superseded(const struct registry *reg, const char *job, const struct turn *t);
/* Under the job lock, the answer of the call: a follower of --coalesce
 * says how many folded calls it leaves unanswered and lets its lock go;
 * then the write: with SKIP (a reason, SPEC §5a Skips) a call that ends
 * without running counted, with COALESCED a folded call; and the end of
 * the call's turn when it has a place.  Nothing to write: 0. */
int turn_answer(const struct registry *reg, const char *job, const struct job_state *st,
		struct turn *t, const char *skip, int coalesced);
/* A call that ends without running outside a decision (no free slot,
 * its --wait passed, a signal): takes the job lock, and as one write
 * counts the skip for REASON and ends its turn (turn_answer()).  An exit
 * status. */
int turn_skip(const struct registry *reg, const struct run_request *req, struct turn *t,
	      const char *reason);
/* While ON, TERM, INT and HUP (unless ignored) do not end the call but
 * are noted, and every wait of the turn ends within a second:
 * turn_stopped() is then the signal (0: none). */
void turn_catch_stops(int on);
int turn_stopped(void);
/* A --replace whose cancel went unanswered for CANCEL_ANSWER_SECONDS: say so,
 * naming who holds the run lock; the call goes on waiting. */
void turn_report_unanswered(const struct registry *reg, const struct run_request *req,
			    const struct job_state *st, struct turn *t);
/* Without the job lock, the call leaves without a run: its place and its
 * follower's lock go (the folded calls counted under the job lock). */
void turn_leave(const struct registry *reg, const struct run_request *req, struct turn *t);

#endif
