#include "liveness.h"
#include "proc.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int owner_alive(const struct record *r, time_t now)
{
	const char *owner = record_get(r, "owner");
	const char *expires = record_get(r, "expires");
	time_t until;

	if (owner && strcmp(owner, "pid") == 0) {
		const char *their_boot = record_get(r, "boot_id");
		const char *our_boot = boot_id();
		/* Only a pid of this boot can be checked. */
		if (their_boot && our_boot && strcmp(their_boot, our_boot) == 0) {
			unsigned long long start;
			const char *want = record_get(r, "pid_start");
			int live = pid_start_time(strtol(record_get(r, "pid"), NULL, 10), &start);
			if (live == 0)
				return 0;
			if (live > 0 && want && strtoull(want, NULL, 10) != start)
				return 0;
		}
	}
	if (expires && time_parse(expires, &until) == 0 && now > until)
		return 0;
	return 1;
}
