/* notify: the one notifier (SPEC §5c) of jobreg-get's sweep and of
 * jobreg-dispatch — announce a change of a job's health by running CMD.
 *
 * notify_job() follows §5c's steps.  A look without a lock first, so a
 * job whose health is what `notified` says costs one read and nothing
 * else.  Then under the job lock: the record read again, `.JOB.notify`
 * taken with LOCK_EX|LOCK_NB (taken or probed only under the job lock:
 * busy is a live claim, the job left to its holder), the claim written.
 * CMD runs without the job lock, holding the claim; then under the job
 * lock again, if the claim is still ours: `notified` (CMD exited 0) or
 * the back-off (`notify_failures`, `notify_retry_at`), the claim dropped,
 * `.JOB.notify` let go before the job lock.  A health that changed
 * meanwhile starts it over, at most three times.
 *
 * A crash anywhere loses no change: before the confirm the record still
 * says the old `notified`, and a dead claim holds no lock.  Only a crash
 * between CMD's end and the confirm's write delivers twice.
 *
 * CMD runs through supervise.h, the one way jobreg runs a command: its own
 * process group, 60 s, then TERM, KILL 5 s later.  Every descriptor of
 * jobreg is close-on-exec; the caller gives up its run lock and slots
 * first (dispatch after its run; the overdue notifier, a child of the
 * dispatcher, closes its copies: attempts.h).  This file lives in report/
 * because JOBREG_SUMMARY is report.c's line. */
#ifndef JOBREG_NOTIFY_H
#define JOBREG_NOTIFY_H

#include "registry/registry.h"

struct notifier {
	const char *cmd;                 /* CMD, run with /bin/sh -c */
	unsigned long long notify_after; /* --notify-after of the sweep; 0: not given */
	double lock_wait;                /* -w */
};

/* Announce JOB's change of health, if it has one.  Returns 0; 1 when CMD
 * failed (said, the retry put off); else the exit status of an error
 * (said; 65 for a corrupt record). */
int notify_job(const struct registry *reg, const char *job, const struct notifier *n);

#endif
