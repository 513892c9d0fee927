/* start: steps 1-4 of jobreg-dispatch (SPEC §5), and a call that finds
 * the job running (§5a) — decide under the job lock, then run (the run
 * lock, RUNNING), answer (replay, not due, refused, paused, coalesced,
 * superseded), or wait in the job's line (turn.h) and start over.
 *
 * A waiting call (--wait, --once, --coalesce, --replace) holds its place
 * from its first wait to the write that ends its turn.  A call that does
 * not wait and finds a live run or place is refused and counted
 * (skipped).  A run takes its slots (slots.h) without the job lock, then
 * decides afresh. */
#ifndef JOBREG_START_H
#define JOBREG_START_H

#include <signal.h>

#include "record/after.h"
#include "run/attempts.h"
#include "run/turn.h"

/* Step 2 (SPEC §5 a-f) as one step, in the order the page decides. */
enum step {
	STEP_NOT_DUE,         /* a: "not due until T"; 0, nothing counted */
	STEP_AFTER,           /* a: --after not due (§5d); 0, only after= written */
	STEP_WAIT_AFTER,      /* a: the same with --wait: wait for the named jobs */
	STEP_SUPERSEDED,      /* b: a newer --replace; 75, skipped (superseded) */
	STEP_WAIT,            /* c: take or keep a place in line, wait, start over */
	STEP_REFUSE_RUNNING,  /* c: a live run; 75, skipped (running) */
	STEP_REFUSE_WAITING,  /* c: waiters ahead; 75, skipped (waiting) */
	STEP_REPLAY,          /* d: DONE and --once: the run's result */
	STEP_PAUSED,          /* e: by the record or the registry; 75, skipped */
	STEP_TAKE_SLOTS,      /* f: the slots first, without the job lock */
	STEP_RUN,             /* f: the slots held (or none): step 4 */
};

/* What a call knows when it decides, all read under the job lock. */
struct decide_facts {
	const struct job_state *st;
	int registry_paused;
	struct line_numbers nums;
	unsigned long long ahead;   /* the nearest live place ahead (0: none) */
	const struct turn *t;
	int slots_held;       /* a slot of every group held (1 for no group) */
	double now;           /* a realtime */
	const struct after_fact *after;   /* --after: each named job (§5d) */
	size_t nafter;
};

/* Step 2 for REQ: no I/O, a function of F alone. */
enum step decide(const struct run_request *req, const struct decide_facts *f);

/* Steps 1-4 for REQ: *RUN_LOCK held when the command is to run (RUN begun,
 * the signals HOLD held); else the return value is the exit status. */
int start_run(struct registry *reg, const struct run_request *req, struct run *run,
	      int *run_lock, const sigset_t *hold);

/* --every (SPEC §5 step 2a), a look without a lock before anything else:
 * 1 after "not due until T" (exit 0, nothing written), else 0. */
int start_not_due(const struct registry *reg, const struct run_request *req);

#endif
