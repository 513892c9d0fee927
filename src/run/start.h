/* start: steps 1-4 of jobreg-dispatch (SPEC §5) and what a call does when
 * the job is already running (§5a) — decide under the job lock, then run
 * (take the run lock, write RUNNING), answer (replay, not due, refused,
 * paused, coalesced, superseded), or wait in the job's line and start
 * over.
 *
 * A call that waits (--wait, --once, --coalesce, --replace) holds a place
 * in line from its first wait to the write that ends its turn, which
 * starts its run or answers it (turn.h).  A call that does not wait and
 * finds a live run or a live place is refused, and the refusal counted
 * (skipped).  --coalesce: one follower, holding DIR/.JOB.coalesce, waits;
 * the others count in `coalesced` and exit 0.  --replace: asks the live
 * run to stop (as jobreg-set --cancel), supersedes the places ahead of
 * its own (replaced_below), and waits.  A run takes its slots (slots.h)
 * without the job lock, then decides afresh. */
#ifndef JOBREG_START_H
#define JOBREG_START_H

#include <signal.h>

#include "run/attempts.h"
#include "run/turn.h"

/* Step 2 (SPEC §5 a-f) as one step, in the order the page decides. */
enum step {
	STEP_NOT_DUE,         /* a: "not due until T"; 0, nothing counted */
	STEP_SUPERSEDED,      /* b: a newer --replace; 75, skipped (superseded) */
	STEP_WAIT,            /* c: take or keep a place in line, wait, start over */
	STEP_REFUSE_RUNNING,  /* c: a live run; 75, skipped (running) */
	STEP_REFUSE_WAITING,  /* c: waiters ahead; 75, skipped (waiting) */
	STEP_REPLAY,          /* d: DONE and --once: the run's result */
	STEP_PAUSED,          /* e: by the record or the registry; 75, skipped */
	STEP_TAKE_SLOTS,      /* f: the slots first, without the job lock */
	STEP_RUN,             /* f: the slots held (or none): step 4 */
};

/* What a call knows when it decides, all read under the job lock: the
 * job (its record and the liveness judgement), the registry's pause, the
 * line's numbers and the nearest live place ahead of the call (0: none),
 * the call's own standing in line and its slots, and NOW (a realtime). */
struct decide_facts {
	const struct job_state *st;
	int registry_paused;
	struct line_numbers nums;
	unsigned long long ahead;
	const struct turn *t;
	int slots_held;       /* a slot of every group held (1 for no group) */
	double now;
};

/* Step 2 for REQ: no I/O, a function of F alone. */
enum step decide(const struct run_request *req, const struct decide_facts *f);

/* Steps 1-4 for REQ: *RUN_LOCK is held when the command is to run (RUN
 * begun, the signals HOLD held); otherwise the return value is
 * dispatch's exit status. */
int start_run(struct registry *reg, const struct run_request *req, struct run *run,
	      int *run_lock, const sigset_t *hold);

/* --every (SPEC §5 step 2a): a look at the record without a lock, before
 * anything else: when the job's last success started less than the
 * period ago, say "not due until T" and return 1 (exit 0, nothing
 * written); else 0, and start_run() decides under the job lock. */
int start_not_due(const struct registry *reg, const struct run_request *req);

#endif
