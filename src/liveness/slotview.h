/* slotview: the slots of dispatch --slots as readers see them (get --slots,
 * the -P slot series; SPEC §5b).  A reader never locks a slot file (its
 * probe would fail a dispatcher's non-blocking try): slot K of NAME is
 * held when DIR/.NAME.slot.K names a job ("JOB RUN") whose record is
 * RUNNING, alive (jobstate_load()), with NAME:K in its slots. */
#ifndef JOBREG_SLOTVIEW_H
#define JOBREG_SLOTVIEW_H

#include <stddef.h>

#include "registry/listing.h"
#include "registry/registry.h"
#include "util/sys.h"

struct slot_view {
	char *group;
	unsigned long slot;
	char *job;                 /* the holder, NULL: the slot is free */
	unsigned long long run;    /* ... its run (the record's runs) */
	char *host, *pid;          /* ... and its record's host and pid, or NULL */
};
struct slot_views {
	struct slot_view *v;       /* sorted by group, then slot */
	size_t count;
};

/* The slots of the groups that L (a listing of DIR) lists, only those of
 * the NGROUPS GROUPS when NGROUPS > 0.  Returns an exit status (a holder's
 * record that cannot be read is printed; its slot reads free). */
int slotview_list(const struct registry *reg, const struct listing *l, char *const *groups,
		  size_t ngroups, struct slot_views *out);
/* Slots 1..N of GROUP, found by name (no directory read). */
int slotview_group(const struct registry *reg, const char *group, unsigned long n,
		   struct slot_views *out);
void slotview_free(struct slot_views *s);

/* "N held: JOB1, JOB2" of S, every slot of a group none of which was
 * free: "K by no run on record" names those no run holds by its record. */
void slotview_holders(struct buf *out, const struct slot_views *s);

#endif
