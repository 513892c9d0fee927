/* liveness_table: every row of the truth table in jobreg(7) ("Owners and
 * liveness"), checked against liveness_judge() as state.c drives it (the
 * probes answered from the row).  Prints one line per row; exits 1 if a
 * row reads otherwise.  Built and run by tests/namespaces.bats. */
#include "liveness/liveness.h"

#include <stdio.h>

#define HOST "build01"
#define BOOT "2fb9737d-c7c1-46e4-8990-aabd01a0259b"
#define OLD_BOOT "61b8a60e-ba3d-46ba-bfae-ef490477a8fa"
#define PID_NS 4026531836ULL
#define TIME_NS 4026531834ULL
#define NOW 1796302812.5

struct row {
	const char *name;
	struct ownership c;
	struct probes facts;
	enum liveness want;
};

/* An owner of this host, boot and namespaces (the reader's identity);
 * LOCKED: a dispatcher's, whose run lock is inode INO (0: not recorded). */
#define SAME(k) { .kind = (k), .host = HOST, .pid = 4242, .pid_start = 777, \
	.boot_id = BOOT, .pid_ns = PID_NS, .time_ns = TIME_NS }
#define LOCKED(ino) { .kind = OWNER_LOCK, .host = HOST, .pid = 4242, .pid_start = 777, \
	.boot_id = BOOT, .pid_ns = PID_NS, .time_ns = TIME_NS, .run_lock = (ino) }

static const struct row rows[] = {
	{ "lock, trusted (run_lock is the inode), held", { .owner = LOCKED(99) },
	  { .lock = LOCK_HELD, .lock_ino = 99, .pid = PID_GONE }, LIVE_ALIVE },
	{ "lock, trusted (no run_lock), held", { .owner = LOCKED(0) },
	  { .lock = LOCK_HELD, .lock_ino = 5, .pid = PID_GONE }, LIVE_ALIVE },
	{ "lock, trusted, free", { .owner = LOCKED(99) },
	  { .lock = LOCK_FREE, .lock_ino = 99, .pid = PID_STARTED, .pid_start = 777 }, LIVE_DEAD },
	{ "lock, trusted (no run_lock), missing", { .owner = LOCKED(0) },
	  { .lock = LOCK_MISSING, .pid = PID_STARTED, .pid_start = 777 }, LIVE_DEAD },
	{ "lock, not trusted (missing), pid alive", { .owner = LOCKED(99) },
	  { .lock = LOCK_MISSING, .pid = PID_STARTED, .pid_start = 777 }, LIVE_ALIVE },
	{ "lock, not trusted (other inode, held), pid gone", { .owner = LOCKED(99) },
	  { .lock = LOCK_HELD, .lock_ino = 98, .pid = PID_GONE }, LIVE_DEAD },
	{ "lock, not trusted, expired: no TTL", { .owner = LOCKED(99), .has_expires = 1, .expires = 1796302800 },
	  { .lock = LOCK_FREE, .lock_ino = 98, .pid = PID_STARTED, .pid_start = 777 }, LIVE_ALIVE },
	{ "none, expires passed", { .owner = { .kind = OWNER_NONE }, .has_expires = 1, .expires = 1796302812 }, { 0 }, LIVE_DEAD },
	{ "none, expires not passed", { .owner = { .kind = OWNER_NONE }, .has_expires = 1, .expires = 1796302813 }, { 0 }, LIVE_ALIVE },
	{ "none, no expires", { .owner = { .kind = OWNER_NONE } }, { 0 }, LIVE_ALIVE },
	{ "pid, expires passed, pid alive", { .owner = SAME(OWNER_PID), .has_expires = 1, .expires = 1796302812 },
	  { .pid = PID_STARTED, .pid_start = 777 }, LIVE_DEAD },
	{ "pid, same identity, ESRCH", { .owner = SAME(OWNER_PID) }, { .pid = PID_GONE }, LIVE_DEAD },
	{ "pid, same identity, a zombie", { .owner = SAME(OWNER_PID) }, { .pid = PID_ZOMBIE }, LIVE_DEAD },
	{ "pid, same identity, other start time", { .owner = SAME(OWNER_PID) },
	  { .pid = PID_STARTED, .pid_start = 778 }, LIVE_DEAD },
	{ "pid, same identity, same start", { .owner = SAME(OWNER_PID) },
	  { .pid = PID_STARTED, .pid_start = 777 }, LIVE_ALIVE },
	{ "pid, same identity, hidden by /proc", { .owner = SAME(OWNER_PID) },
	  { .pid = PID_HIDDEN }, LIVE_ALIVE },
	{ "pid, same host, other boot (alive pid)", { .owner = { .kind = OWNER_PID, .host = HOST, .pid = 4242,
	  .boot_id = OLD_BOOT, .pid_ns = PID_NS, .time_ns = TIME_NS } },
	  { .pid = PID_STARTED, .pid_start = 777 }, LIVE_DEAD },
	{ "pid, other host, other boot (gone pid)", { .owner = { .kind = OWNER_PID, .host = "build02",
	  .pid = 4242, .boot_id = OLD_BOOT, .pid_ns = PID_NS, .time_ns = TIME_NS } },
	  { .pid = PID_GONE }, LIVE_ALIVE },
	{ "pid, other pid namespace (gone pid)", { .owner = { .kind = OWNER_PID, .host = HOST, .pid = 1,
	  .boot_id = BOOT, .pid_ns = 4026532179ULL, .time_ns = TIME_NS } },
	  { .pid = PID_GONE }, LIVE_ALIVE },
	{ "pid, other time namespace (other start)", { .owner = { .kind = OWNER_PID, .host = HOST,
	  .pid = 4242, .pid_start = 1, .boot_id = BOOT, .pid_ns = PID_NS, .time_ns = 4026532178ULL } },
	  { .pid = PID_STARTED, .pid_start = 777 }, LIVE_ALIVE },
	{ "pid, no time_ns recorded, reader has one", { .owner = { .kind = OWNER_PID, .host = HOST,
	  .pid = 4242, .boot_id = BOOT, .pid_ns = PID_NS } }, { .pid = PID_GONE }, LIVE_ALIVE },
};

int main(void)
{
	const struct reader me = { HOST, BOOT, PID_NS, TIME_NS, NOW };
	int bad = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct ownership *c = &rows[i].c;
		struct probes p = { .lock = LOCK_UNPROBED, .pid = PID_UNPROBED };
		enum liveness v;
		int probes = 0;
		while ((v = liveness_judge(c, &me, &p)) == LIVE_PROBE_LOCK || v == LIVE_PROBE_PID) {
			if (++probes > 2)
				break;   /* asked again: wrong */
			if (v == LIVE_PROBE_LOCK) {
				p.lock = rows[i].facts.lock;
				p.lock_ino = rows[i].facts.lock_ino;
			} else {
				p.pid = rows[i].facts.pid;
				p.pid_start = rows[i].facts.pid_start;
			}
		}
		int ok = v == rows[i].want;
		bad |= !ok;
		printf("%s %s: %s\n", ok ? "ok" : "WRONG", rows[i].name,
		       v == LIVE_ALIVE ? "RUNNING" : v == LIVE_DEAD ? "STALE" : "a probe again");
	}
	return bad;
}
