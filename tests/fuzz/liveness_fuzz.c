/* liveness_fuzz: a libFuzzer harness for the owner-liveness decision of
 * src/liveness/liveness.c (SPEC §2), a pure function of a record's owner fields,
 * the reader's identity and the probed facts.
 *
 * The input picks the record's fields (owner kind, host, pid, pid_start,
 * boot_id, pid_ns, time_ns, run_lock, expires) and the reader's (host,
 * boot id, namespaces, now) from small pools, so equal and different
 * values both come up often, and the facts a probe would find (run lock
 * held / free / missing and its inode; pid gone / zombie / started at some
 * time / hidden).  The fields are also written into a record and read back
 * with liveness_ownership(), which must give the same claim.  The harness then
 * drives liveness_judge() as state.c does and checks:
 *
 *   - the answer is deterministic, and a probe is never asked for twice
 *     (so at most two probes), and only the probe the owner kind needs;
 *   - owner=lock: the lock is probed first; with a trusted lock (no
 *     run_lock, or the inode it names) the answer is the lock's alone —
 *     ALIVE exactly when held — whatever the pid facts, reader and expiry;
 *     untrusted, the same answer as the pid rules give an owner=pid
 *     record of the same fields without expiry;
 *   - not lock-owned: expired (now > expires) is DEAD; else no owner is
 *     ALIVE; the run lock is never probed;
 *   - owner=pid, same boot id, namespaces (and host without boot ids):
 *     a gone or zombie pid is DEAD, a hidden one ALIVE, a started one
 *     ALIVE exactly when its start matches (or none was recorded);
 *   - same host, both boot ids known and different: DEAD;
 *   - another host (and no same boot id) or another namespace: never DEAD
 *     unless expired; the pid is never probed.
 *
 * Any violated property calls abort().  Built by tests/fuzz/run, or alone
 * with the library (every .c file under src/ but the src/cmd/jobreg-*.c mains):
 *   clang -fsanitize=fuzzer,address,undefined -Isrc tests/fuzz/liveness_fuzz.c LIB.c... */
#include "../../src/liveness/liveness.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail_at(const char *what, int line)
{
	fprintf(stderr, "liveness_fuzz: property violated (line %d): %s\n", line, what);
	abort();
}
#define CHECK(cond) do { if (!(cond)) fail_at(#cond, __LINE__); } while (0)

/* The input, a byte at a time; zeros once it runs out. */
struct input {
	const uint8_t *p;
	size_t left;
};

static unsigned byte(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static unsigned long long u64(struct input *in)
{
	unsigned long long v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | byte(in);
	return v;
}

static const char *const hosts[] = { NULL, "build01", "build02", "" };
static const char *const boots[] = {
	NULL, "2fb9737d-c7c1-46e4-8990-aabd01a0259b", "61b8a60e-ba3d-46ba-bfae-ef490477a8fa",
};
static const unsigned long long nss[] = { 0, 4026531836ULL, 4026532179ULL };
static const long pids[] = { 0, 1, 41213, 4194304, 2147483647L, 9999999999L };

#define PICK(pool, in) (pool)[byte(in) % (sizeof(pool) / sizeof((pool)[0]))]

static unsigned long long small(struct input *in)
{
	unsigned b = byte(in);
	return b < 200 ? b % 4 : u64(in);   /* 0 (absent) and neighbours, or anything */
}

static int same(const char *a, const char *b)
{
	return a ? b && strcmp(a, b) == 0 : !b;
}

/* Drive liveness_judge() as state.c does, answering probes from FACTS. */
static enum liveness drive(const struct ownership *c, const struct reader *me,
			   const struct probes *facts, struct probes *seen)
{
	struct probes p = { .lock = LOCK_UNPROBED, .pid = PID_UNPROBED };
	int probes = 0;
	for (;;) {
		enum liveness v = liveness_judge(c, me, &p);
		CHECK(v == liveness_judge(c, me, &p));   /* deterministic */
		if (v == LIVE_PROBE_LOCK) {
			CHECK(p.lock == LOCK_UNPROBED);
			CHECK(c->owner.kind == OWNER_LOCK);
			CHECK(p.pid == PID_UNPROBED);        /* the lock comes first */
			p.lock = facts->lock;
			p.lock_ino = facts->lock_ino;
		} else if (v == LIVE_PROBE_PID) {
			CHECK(p.pid == PID_UNPROBED);
			CHECK(c->owner.kind != OWNER_NONE);
			CHECK(c->owner.pid > 0);
			p.pid = facts->pid;
			p.pid_start = facts->pid_start;
		} else {
			CHECK(v == LIVE_ALIVE || v == LIVE_DEAD);
			*seen = p;
			return v;
		}
		CHECK(++probes <= 2);
	}
}

/* Write C's fields into a record and read the claim back. */
static void round_trip(const struct ownership *c)
{
	struct record r;
	char num[32], when[21];
	struct ownership back;

	record_init(&r);
	record_put(&r, "version", "1");
	record_put(&r, "status", "RUNNING");
	if (c->owner.kind != OWNER_NONE)
		record_put(&r, "owner", c->owner.kind == OWNER_LOCK ? "lock" : "pid");
	if (c->owner.host)
		record_put(&r, "host", c->owner.host);
#define NUM(key, v) do { if (v) { snprintf(num, sizeof num, "%llu", \
		(unsigned long long)(v)); record_put(&r, key, num); } } while (0)
	NUM("pid", c->owner.pid);
	NUM("pid_start", c->owner.pid_start);
	if (c->owner.boot_id)
		record_put(&r, "boot_id", c->owner.boot_id);
	NUM("pid_ns", c->owner.pid_ns);
	NUM("time_ns", c->owner.time_ns);
	NUM("run_lock", c->owner.run_lock);
	if (c->has_expires) {
		time_format(c->expires, when);
		record_put(&r, "expires", when);
	}
	liveness_ownership(&r, &back);
	CHECK(back.owner.kind == c->owner.kind);
	CHECK(same(back.owner.host, c->owner.host));
	CHECK(back.owner.pid == c->owner.pid);
	CHECK(back.owner.pid_start == c->owner.pid_start);
	CHECK(same(back.owner.boot_id, c->owner.boot_id));
	CHECK(back.owner.pid_ns == c->owner.pid_ns);
	CHECK(back.owner.time_ns == c->owner.time_ns);
	CHECK(back.owner.run_lock == c->owner.run_lock);
	CHECK(back.has_expires == c->has_expires);
	CHECK(!c->has_expires || back.expires == c->expires);
	record_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct ownership c;
	struct reader me;
	struct probes facts, seen;

	memset(&c, 0, sizeof c);
	c.owner.kind = byte(&in) % 3 == 0 ? OWNER_NONE : byte(&in) % 2 ? OWNER_LOCK : OWNER_PID;
	c.owner.host = PICK(hosts, &in);
	c.owner.pid = PICK(pids, &in);
	c.owner.pid_start = small(&in);
	c.owner.boot_id = PICK(boots, &in);
	c.owner.pid_ns = PICK(nss, &in);
	c.owner.time_ns = PICK(nss, &in);
	c.owner.run_lock = small(&in);
	me.host = PICK(hosts, &in);
	me.boot_id = PICK(boots, &in);
	me.pid_ns = PICK(nss, &in);
	me.time_ns = PICK(nss, &in);
	/* Times within a few seconds of an expiry, fractions included. */
	time_t base = 1796302812;
	c.has_expires = byte(&in) & 1;
	c.expires = base + (int)(byte(&in) % 8) - 4;
	me.now = (double)base + ((int)byte(&in) - 128) / 32.0;
	memset(&facts, 0, sizeof facts);
	facts.lock = LOCK_HELD + byte(&in) % 3;
	facts.lock_ino = byte(&in) & 1 ? c.owner.run_lock : small(&in);
	facts.pid = PID_GONE + byte(&in) % 4;
	facts.pid_start = byte(&in) & 1 ? c.owner.pid_start : small(&in);

	round_trip(&c);

	enum liveness v = drive(&c, &me, &facts, &seen);
	int expired = c.has_expires && me.now > (double)c.expires;
	int same_boot = same(c.owner.boot_id, me.boot_id) &&
			(c.owner.boot_id || same(c.owner.host, me.host));
	int same_ns = c.owner.pid_ns == me.pid_ns && c.owner.time_ns == me.time_ns;
	int checkable = same_boot && same_ns && c.owner.pid > 0;
	int rebooted = c.owner.host && me.host && strcmp(c.owner.host, me.host) == 0 &&
		       c.owner.boot_id && me.boot_id && strcmp(c.owner.boot_id, me.boot_id) != 0;
	int pid_dead = facts.pid == PID_GONE || facts.pid == PID_ZOMBIE ||
		       (facts.pid == PID_STARTED && c.owner.pid_start &&
			facts.pid_start != c.owner.pid_start);
	/* The pid rules, as SPEC §2.2 states them. */
	enum liveness by_pid = checkable ? (pid_dead ? LIVE_DEAD : LIVE_ALIVE)
			     : rebooted ? LIVE_DEAD : LIVE_ALIVE;

	CHECK(seen.pid == PID_UNPROBED || checkable);
	if (c.owner.kind == OWNER_LOCK) {
		CHECK(seen.lock != LOCK_UNPROBED);
		int trusted = !c.owner.run_lock ||
			      (facts.lock != LOCK_MISSING && facts.lock_ino == c.owner.run_lock);
		CHECK(trusted == liveness_lock_trusted(&c, &seen));
		if (trusted) {
			CHECK(seen.pid == PID_UNPROBED);     /* never decided by pid */
			CHECK(v == (facts.lock == LOCK_HELD ? LIVE_ALIVE : LIVE_DEAD));
		} else {
			CHECK(v == by_pid);                  /* no TTL */
			/* Same as an owner=pid record of these fields, no expiry. */
			struct ownership as_pid = c;
			struct probes ignored;
			as_pid.owner.kind = OWNER_PID;
			as_pid.has_expires = 0;
			CHECK(drive(&as_pid, &me, &facts, &ignored) == v);
		}
	} else {
		CHECK(seen.lock == LOCK_UNPROBED);
		CHECK(!liveness_lock_trusted(&c, &seen));
		if (expired)
			CHECK(v == LIVE_DEAD);
		else if (c.owner.kind == OWNER_NONE)
			CHECK(v == LIVE_ALIVE);
		else
			CHECK(v == by_pid);
		if (c.owner.kind == OWNER_PID && !expired) {
			if (!checkable && !rebooted)
				CHECK(v == LIVE_ALIVE);      /* cannot be checked */
			if (checkable && facts.pid == PID_HIDDEN)
				CHECK(v == LIVE_ALIVE);
			if (checkable && (facts.pid == PID_GONE || facts.pid == PID_ZOMBIE))
				CHECK(v == LIVE_DEAD);
		}
		if (c.owner.kind == OWNER_PID && me.host && c.owner.host &&
		    strcmp(me.host, c.owner.host) != 0 && !same_boot && !expired)
			CHECK(v == LIVE_ALIVE);              /* another host */
	}
	return 0;
}
