/* liveness: facts about processes on this machine (SPEC §2) — the boot id
 * and a pid's start time.  The only module that reads /proc. */
#ifndef JOBREG_LIVENESS_H
#define JOBREG_LIVENESS_H

#include <sys/types.h>
#include <time.h>

#include "record.h"

/* This boot's id (cached), or NULL when /proc does not tell. */
const char *boot_id(void);

/* The start time of PID (field 22 of /proc/PID/stat).  Returns 1 and sets
 * *start for a live process, 0 for none or a zombie, -1 on error. */
int pid_start_time(long pid, unsigned long long *start);

/* Is the owner of a RUNNING record that is not lock-owned alive by its pid
 * and its expires (NOW)?  1 alive, 0 dead. */
int owner_alive(const struct record *r, time_t now);

#endif
