/* pause: the registry's own pause (SPEC §5 jobreg-set --pause -a): the
 * record DIR/.-pause (version=1 and the pause's keys, transition.h),
 * replaced as records are under DIR/.-pause.lock.  While in force every
 * job is paused, one with no record too; single jobs' pauses are apart. */
#ifndef JOBREG_PAUSE_H
#define JOBREG_PAUSE_H

#include "record/record.h"
#include "registry/registry.h"

/* Read DIR/.-pause into *PAUSE (empty when there is none): *PAUSED 1
 * when it is in force at NOW (a realtime).  Returns an exit status (65
 * for a file that does not parse, printed). */
int registry_pause_read(const struct registry *reg, double now, struct record *pause,
			int *paused);
/* Pause the registry: DIR/.-pause written with record_pause()'s keys
 * (UNTIL, BY, NOTE), under its lock, waiting at most LOCK_WAIT seconds. */
int registry_pause(const struct registry *reg, double until, const char *by, const char *note,
		   double lock_wait);
/* Resume it: DIR/.-pause removed, under its lock; *HAD 1 when there was
 * one. */
int registry_resume(const struct registry *reg, double lock_wait, int *had);

#endif
