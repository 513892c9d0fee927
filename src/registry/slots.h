/* slots: the slot groups of jobreg-dispatch --slots NAME:N (SPEC §5b).
 *
 * Slot K of NAME is DIR/.NAME.slot.K (K = 1..N, made like a lock file),
 * held by an exclusive flock the run's command inherits, so a slot is free
 * exactly when no process of its run is left.  One slot of each group is
 * taken, groups in sorted order, by non-blocking locks, all or none: a
 * call never waits holding a slot, so two can never deadlock.
 *
 * A call that waits stands in a group's line (line.h): the full group's,
 * or first the line of a group where others wait (it goes behind them,
 * even when a slot is free).  Only the call whose turn it is tries the
 * slots.  Its caller waits with the one wait (liveness/wait.h).
 *
 * Once RUNNING, the holder writes "JOB RUN" into each slot file in place,
 * never cut to nothing: readers (liveness/slotview.h) never lock one.
 * Functions return an exit status after printing any error. */
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

/* One look (SPEC §5b "wait in line"), waiting only for a line's lock
 * (LOCK_WAIT seconds): take a free slot of each group of SET for JOB;
 * with WAIT, stand in a line (GP).  Returns 0 with every slot held;
 * EXIT_BUSY (silently) with none held, *FULL the group that had none;
 * with WAIT, SLOTS_WAIT: none held, GP in the line of group *FULL — the
 * caller waits (wait.h) and looks again, or gives up; or an error's
 * status.  The caller leaves GP's line (line_group_leave()) once done. */
#define SLOTS_WAIT (-1)
int slots_take(const struct registry *reg, const char *job, struct slot_set *set, int wait,
	       double lock_wait, struct group_place *gp, size_t *full);

/* Give back every slot of SET held. */
void slots_release(struct slot_set *set);
void slots_free(struct slot_set *set);

/* "NAME:K,NAME:K" of the slots held (the record's slots=, JOBREG_SLOTS). */
void slots_format(const struct slot_set *set, struct buf *out);

/* After RUNNING: "JOB RUN\n" into each slot file held.  A failure is only
 * warned of: the run goes on (readers then show the slot free). */
void slots_note(const struct registry *reg, const char *job, const struct slot_set *set,
		const char *run);

/* ".NAME.slot.K": the file of slot K of group NAME (malloc'd). */
char *slot_file_name(const char *group, unsigned long k);
/* Is ENTRY such a file?  Then *GROUP (malloc'd) and *K, where not NULL. */
int slot_file_parse(const char *entry, char **group, unsigned long *k);

#endif
