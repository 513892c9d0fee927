/* liveness: is the owner of a RUNNING record alive (SPEC §2)?  The facts
 * about processes come from proc.h. */
#ifndef JOBREG_LIVENESS_H
#define JOBREG_LIVENESS_H

#include <sys/types.h>
#include <time.h>

#include "record.h"

/* Is the owner of a RUNNING record that is not lock-owned alive by its pid
 * and its expires (NOW)?  1 alive, 0 dead. */
int owner_alive(const struct record *r, time_t now);

#endif
