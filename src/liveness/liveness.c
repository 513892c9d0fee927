#include "liveness/liveness.h"
#include "util/sys.h"

#include <string.h>

void liveness_ownership(const struct record *r, struct ownership *c)
{
	const char *owner = record_get(r, "owner");

	memset(c, 0, sizeof *c);
	c->owner.kind = !owner ? OWNER_NONE
		      : strcmp(owner, "lock") == 0 ? OWNER_LOCK : OWNER_PID;
	c->owner.host = record_get(r, "host");
	/* The parser checked these are decimal (pid at most 10 digits). */
	c->owner.pid = (long)record_count(r, "pid");
	c->owner.pid_start = record_count(r, "pid_start");
	c->owner.boot_id = record_get(r, "boot_id");
	c->owner.pid_ns = record_count(r, "pid_ns");
	c->owner.time_ns = record_count(r, "time_ns");
	c->owner.run_lock = record_count(r, "run_lock");
	c->has_expires = record_time(r, "expires", &c->expires) == 0;
}

/* The pid rules of SPEC §2.2, without the TTL.  LIVE_ALIVE also stands
 * for "cannot be checked". */
static enum liveness by_pid(const struct owner *o, const struct reader *me,
			    const struct probes *p)
{
	/* A boot id names one boot of one machine; with none on either
	 * side, only the host name can tell the machines apart. */
	int same_boot = same_string(o->boot_id, me->boot_id) &&
			(o->boot_id || same_string(o->host, me->host));

	if (same_boot && o->pid_ns == me->pid_ns && o->time_ns == me->time_ns && o->pid > 0) {
		switch (p->pid) {
		case PID_UNPROBED:
			return LIVE_PROBE_PID;
		case PID_GONE:
		case PID_ZOMBIE:
			return LIVE_DEAD;
		case PID_STARTED:
			/* No pid_start recorded: existence is all we know. */
			return !o->pid_start || o->pid_start == p->pid_start ? LIVE_ALIVE : LIVE_DEAD;
		case PID_HIDDEN:
			/* Absence from /proc never proves death. */
			return LIVE_ALIVE;
		}
	}
	if (o->host && me->host && strcmp(o->host, me->host) == 0 && o->boot_id && me->boot_id &&
	    strcmp(o->boot_id, me->boot_id) != 0)
		return LIVE_DEAD;   /* rebooted since */
	return LIVE_ALIVE;          /* another host or namespace: cannot tell */
}

int liveness_lock_trusted(const struct ownership *c, const struct probes *p)
{
	if (c->owner.kind != OWNER_LOCK || p->lock == LOCK_UNPROBED)
		return 0;
	if (!c->owner.run_lock)
		return 1;   /* 0.1.0 wrote no inode: the lock as before */
	return p->lock != LOCK_MISSING && p->lock_ino == c->owner.run_lock;
}

enum liveness liveness_judge(const struct ownership *c, const struct reader *me,
			     const struct probes *p)
{
	if (c->owner.kind == OWNER_LOCK) {
		if (p->lock == LOCK_UNPROBED)
			return LIVE_PROBE_LOCK;
		if (liveness_lock_trusted(c, p))
			return p->lock == LOCK_HELD ? LIVE_ALIVE : LIVE_DEAD;
		/* Removed or replaced during the run: the lock proves
		 * nothing, the dispatcher's pid decides. */
		return by_pid(&c->owner, me, p);
	}
	/* expires is written rounded up to the second: compare it with the
	 * sub-second time, so a TTL of 1 s ends 1 to 2 s after it was set. */
	if (c->has_expires && me->now > (double)c->expires)
		return LIVE_DEAD;
	if (c->owner.kind == OWNER_NONE)
		return LIVE_ALIVE;
	return by_pid(&c->owner, me, p);
}
