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
