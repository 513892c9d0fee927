/* slots: the slot groups of jobreg-dispatch --slots NAME:N (SPEC §5b) —
 * at most N runs at once across every job whose calls name group NAME.
 *
 * Slot K of NAME is the file DIR/.NAME.slot.K (K = 1..N, made like a lock
 * file when missing), held by an exclusive flock that the run's command
 * inherits (not close-on-exec), so a slot is free exactly when no process
 * of its run is left.  One free slot of each group is taken, groups in
 * sorted order of NAME, each by a non-blocking lock, all or none: a call
 * never waits while it holds a slot, so two can never deadlock.
 *
 * A call that waits stands in the line of the group that had no free
 * slot, or first of a group whose line has live places (it goes behind
 * them, even when a slot is free): the group's line of line.h.  Only the
 * call whose turn it is tries the slots; its turn ends when it takes them
 * or gives up.  It waits for the close of a slot file or a place of its
 * group with the one wait (liveness/wait.h), which its caller calls.
 *
 * Once the run is RUNNING its holder writes "JOB RUN" into each slot file,
 * in place, never truncated to nothing; readers (liveness/slotview.h)
 * never lock a slot file.  Functions return an exit status (0 on
 * success) after printing any error. */
#ifndef JOBREG_SLOTS_H
#define JOBREG_SLOTS_H

#include <stddef.h>

#include "registry/line.h"
#include "registry/registry.h"

#define SLOTS_MAX 10000   /* N of a group at most */

struct slot_group {
	char *name;
	unsigned long n;        /* its slots: .NAME.slot.1 ... .NAME.slot.N */
	unsigned long held;     /* the slot K held, 0: none */
	int *fds;               /* fds[K-1]: slot K's file while taking, or -1 */
};
struct slot_set {
	struct slot_group *groups;   /* sorted by name */
	size_t count;
};

/* Add --slots ARG ("NAME:N", N >= 1) to SET, kept sorted.  NULL, or why
 * it is a usage error (static text). */
const char *slots_add(struct slot_set *set, const char *arg);

/* Is a slot of every group of SET held?  (1 for no group.) */
int slots_held(const struct slot_set *set);

/* SPEC §5b's "wait in line": one look, that never waits but for the
 * line's lock (LOCK_WAIT seconds).  Take one free slot of each group of
 * SET for JOB; with WAIT, stand in the line of the group that had no
 * free slot (GP; first in the line of a group where others wait).
 * Returns 0 with every slot held; EXIT_BUSY (silently) with none held
 * and *FULL the index of the group that had none; with WAIT, SLOTS_WAIT:
 * none held yet, GP in the line of group *FULL — the caller waits for a
 * change of its files (wait.h) and looks again, or gives up; or an
 * error's status.  The caller leaves GP's line (line_group_leave()) once
 * done, holding the slots or not. */
#define SLOTS_WAIT (-1)
int slots_take(const struct registry *reg, const char *job, struct slot_set *set, int wait,
	       double lock_wait, struct group_place *gp, size_t *full);

/* Give back every slot of SET held. */
void slots_release(struct slot_set *set);
void slots_free(struct slot_set *set);

/* "NAME:K,NAME:K" of the slots held (the record's slots=, JOBREG_SLOTS). */
void slots_format(const struct slot_set *set, struct buf *out);

/* After RUNNING: "JOB RUN\n" into each slot file held.  A failure is
 * warned of only: the run goes on (readers then show the slot free). */
void slots_note(const struct registry *reg, const char *job, const struct slot_set *set,
		const char *run);

/* ".NAME.slot.K": the file of slot K of group NAME (malloc'd). */
char *slot_file_name(const char *group, unsigned long k);
/* Is ENTRY such a file?  Then *GROUP (malloc'd) and *K, where not NULL. */
int slot_file_parse(const char *entry, char **group, unsigned long *k);

#endif
