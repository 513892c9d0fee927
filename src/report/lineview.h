/* lineview: who waits in a line, as readers see it (SPEC §5a Who waits) —
 * the calls in a job's line (jobreg-get --line) and in a slot group's
 * (--slots' waiters, --report's "waiting for slot G, 2nd in line").
 *
 * A place is listed while it is live: its file is locked (a non-blocking
 * shared probe, which never disturbs its holder) and, in a job's line, its
 * number is at least replaced_below.  Its file holds one line, written by
 * the waiter under the line's lock before it let that lock go: "kind=K
 * pid=P host=H since=T" in a job's line, "job=J pid=P host=H since=T" in
 * a slot group's.  The numbers come from the job's record (wait_head,
 * wait_next) or from .NAME.slotline ("next=M\nhead=H\n"), capped as the
 * line caps them: never a directory read. */
#ifndef JOBREG_LINEVIEW_H
#define JOBREG_LINEVIEW_H

#include "record/record.h"
#include "registry/registry.h"

struct waiter {
	unsigned long long place;   /* N of .JOB.wait.N or .NAME.slotwait.N */
	/* The fields of its line; NULL where it has none, and all NULL when
	 * the line is missing or torn (no newline yet). */
	char *kind;                 /* a job's line: wait, once, coalesce, replace */
	char *job;                  /* a slot group's line: the call's job */
	char *pid, *host, *since;
};
struct waiters {
	struct waiter *v;           /* in the order they will go */
	size_t count;
};

/* The live places of JOB's line (REC its record, NULL: none) or, with
 * GROUP, of slot group NAME's line, in order, into OUT.  Returns an exit
 * status: a probe that fails for another reason than "no such file" or
 * "locked" (EMFILE, ENOLCK, EIO, ...) is reported and decides nothing
 * (74); the places found are kept.
 * (The one reader of places here: the line module's enumerator of live
 * places and reader of a place's line take its place when they come.) */
int lineview_read(const struct registry *reg, const char *name, const struct record *rec,
		  int group, struct waiters *out);
void lineview_free(struct waiters *w);

#endif
