/* line: see line.h.  Past 450 lines: both users and the readers are in
 * one file; split, each part would keep its own copy of the places. */
#include "registry/line.h"
#include "record/transition.h"
#include "registry/lock.h"
#include "registry/openat.h"
#include "util/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* A count, listing or sweep of places stops after this many files gone
 * in a row, so a sparse line costs a reader no more.  The search for the
 * place ahead never stops early: order is at stake there. */
#define MISSING_MAX 1000

/* A crashed joiner's leftover file is passed over, not reused; this many
 * in a row is something else (a full directory, a planted file). */
#define JOIN_TRIES 64

/* ---- places, whoever's line ---- */

/* A job's line or a slot group's: where its places are (".OWNER" MID
 * "N"), the first field of a waiter's line, how used-up numbers renew. */
struct line_kind {
	const char *mid, *first, *renew;
};
static const struct line_kind job_line = { ".wait.", "kind", "clear the job" };
static const struct line_kind group_line = { ".slotwait.", "job", "remove its .slotline" };

/* Place N of OWNER's line of kind K (malloc'd). */
static char *place_name(const struct line_kind *k, const char *owner, unsigned long long n)
{
	struct buf b = {0};
	buf_addf(&b, ".%s%s%llu", owner, k->mid, n);
	return b.data;
}

/* A line that spans more than a line can is read as its last part. */
static void clamp(struct line_numbers *nums)
{
	if (nums->head < 1)
		nums->head = 1;
	if (nums->next < nums->head)
		nums->next = nums->head;
	if (nums->next - nums->head > LINE_SPAN_MAX)
		nums->head = nums->next - LINE_SPAN_MAX;
}

/* "KEY=VALUE pid=P host=H since=T\n": who waits, for a place's file. */
static void who_line(struct buf *b, const char *key, const char *value)
{
	char host[HOST_NAME_MAX + 1] = "-", since[21];
	if (gethostname(host, sizeof host - 1) < 0 || !host[0])
		strcpy(host, "-");
	for (char *c = host; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			*c = '?';   /* one field, whatever the name */
	time_format(now_seconds(), since);
	buf_addf(b, "%s=%s pid=%ld host=%s since=%s\n", key, value, (long)getpid(), host, since);
}

/* Remove place P's file and let it go. */
static void drop(const struct registry *reg, const struct line_kind *k, const char *owner,
		 struct place *p)
{
	if (p->fd < 0)
		return;
	char *name = place_name(k, owner, p->n);
	(void)unlinkat(reg->fd, name, 0);
	free(name);
	close_fd(p->fd);
	p->fd = -1;
}

/* Take place NEXT of OWNER's line, or the first free number after it,
 * with WHO written.  WHAT names the line in messages. */
static int join(const struct registry *reg, const char *job, const struct line_kind *k,
		const char *owner, unsigned long long next, const char *who, const char *what,
		struct place *p)
{
	for (int i = 0; i < JOIN_TRIES; i++, next++) {
		if (next >= COUNTER_MAX)
			return fail(EXIT_IO, job, "take a place in %s: its numbers are used up "
				    "(%s once nobody waits)", what, k->renew);
		char *name = place_name(k, owner, next);
		struct stat st;
		int rc = entry_open(reg->fd, name, O_RDWR | O_CREAT | O_EXCL, &p->fd, &st);
		p->n = next;
		/* (blocking: a reader's probe may hold the new file an instant) */
		if (rc == 0 && entry_share(p->fd, reg->share_mode) == 0 &&
		    flock_wait(p->fd, LOCK_EX, -1) == 0 && write_full(p->fd, who, strlen(who)) == 0) {
			free(name);
			return 0;
		}
		int err = errno;
		drop(reg, k, owner, p);
		if (rc == ENTRY_NOT_REGULAR || (rc != 0 && err == EEXIST)) {
			free(name);
			continue;   /* a leftover: the next number is ours */
		}
		rc = fail_errno(err, job, "take a place in %s: %s", what, reg_path(reg, name));
		free(name);
		return rc;
	}
	return fail(EXIT_IO, job, "take a place in %s: %d places in a row are taken", what,
		    JOIN_TRIES);
}

/* The place (or follower's lock) file NAME: 1 live (locked), 0 not (free,
 * or not a regular file: nobody's), 2 gone; -1 with errno: the probe
 * failed, which decides nothing.  With FD, a live one is left open there.
 * With SWEEP (the job lock held) a free one is removed: its maker locked
 * it before the lock we hold was let go, so it is nobody's. */
static int probe(const struct registry *reg, const char *name, int *fd, int sweep)
{
	struct stat st;
	int pfd, rc = entry_open(reg->fd, name, O_RDONLY, &pfd, &st);
	if (rc == ENTRY_NOT_REGULAR)
		return 0;
	if (rc < 0)
		return errno == ENOENT ? 2 : -1;
	int live = flock_wait(pfd, LOCK_SH, 0) == 0 ? 0 : errno == EWOULDBLOCK ? 1 : -1;
	int err = errno;
	if (live == 0 && sweep)
		(void)unlinkat(reg->fd, name, 0);
	if (live == 1 && fd)
		*fd = pfd;
	else
		close_fd(pfd);
	errno = err;
	return live;
}

/* The nearest live place of OWNER's line in [FROM, BELOW) into *AHEAD
 * (0: none). */
static int nearest(const struct registry *reg, const char *job, const struct line_kind *k,
		   const char *owner, unsigned long long from, unsigned long long below,
		   unsigned long long *ahead)
{
	*ahead = 0;
	for (unsigned long long n = below; n > from && reg->fd >= 0;) {
		char *name = place_name(k, owner, --n);
		int rc = 0, state = probe(reg, name, NULL, 0);
		if (state < 0)
			rc = fail_errno(errno, job, "look at the place %s", reg_path(reg, name));
		free(name);
		if (state == 1)
			*ahead = n;
		if (state == 1 || state < 0)
			return rc;
	}
	return 0;
}

void line_sweep_file(const struct registry *reg, const char *name)
{
	(void)probe(reg, name, NULL, 1);
}

/* A place file's text into E's fields (malloc'd), KEY the first one's. */
static void entry_parse(const char *text, size_t len, const char *key, struct line_entry *e)
{
	char format[64], *line = xstrndup(text, len);
	char **fields[] = { &e->first, &e->pid, &e->host, &e->since };
	snprintf(format, sizeof format, "%.16s=%%ms pid=%%ms host=%%ms since=%%ms", key);
	e->first = e->pid = e->host = e->since = NULL;
	/* One line, whole: a torn one (no newline yet) tells nothing. */
	if (memchr(text, '\n', len))
		(void)sscanf(line, format, fields[0], fields[1], fields[2], fields[3]);
	for (size_t i = 0; i < 4; i++)
		if (!*fields[i])
			*fields[i] = xstrdup("-");
	free(line);
}

/* The places of OWNER's line in [FROM, TO): with OUT, the live ones
 * listed; without, the files nobody holds removed (job lock held).  A
 * place that cannot be looked at is reported (74) and the others still
 * listed: a reader leaves none out silently. */
static int walk(const struct registry *reg, const char *job, const struct line_kind *k,
		const char *owner, unsigned long long from, unsigned long long to,
		struct line_entries *out)
{
	unsigned missing = 0;
	int rc = 0;
	if (out)
		*out = (struct line_entries){ NULL, 0 };
	for (unsigned long long n = from; n < to && missing < MISSING_MAX && reg->fd >= 0; n++) {
		char *name = place_name(k, owner, n);
		int fd = -1, state = probe(reg, name, out ? &fd : NULL, !out);
		if (state < 0 && out && !rc)
			rc = fail_errno(errno, job, "cannot look at place %llu: %s", n,
					reg_path(reg, name));
		free(name);
		if (state < 0 && out)
			continue;
		missing = state == 2 ? missing + 1 : 0;
		if (state != 1 || !out)
			continue;
		char text[512];
		ssize_t got = read_full(fd, text, sizeof text);
		close_fd(fd);
		out->e = xrealloc(out->e, (out->count + 1) * sizeof *out->e);
		struct line_entry *e = &out->e[out->count++];
		e->n = n;
		entry_parse(text, got > 0 ? (size_t)got : 0, k->first, e);
	}
	return rc;
}

/* ---- a job's line ---- */

void line_numbers(const struct record *rec, struct line_numbers *nums)
{
	*nums = (struct line_numbers){ 0, 0, 0 };
	if (rec) {
		nums->head = record_count(rec, "wait_head");
		nums->replaced_below = record_count(rec, "replaced_below");
		nums->next = record_count(rec, "wait_next");
	}
	clamp(nums);
}

int line_read(const struct registry *reg, const char *job, struct line_numbers *nums)
{
	struct record rec;
	int found, rc = reg_read_record(reg, job, &rec, &found);
	line_numbers(found ? &rec : NULL, nums);
	record_free(&rec);
	return rc;
}

int line_join(const struct registry *reg, const char *job, struct record *rec,
	      const char *kind, struct place *p)
{
	struct line_numbers nums;
	struct buf who = {0};
	line_numbers(rec, &nums);
	who_line(&who, job_line.first, kind);
	int rc = join(reg, job, &job_line, job, nums.next, who.data, "line", p);
	if (!rc)
		record_put_number(rec, "wait_next", p->n + 1);
	buf_free(&who);
	return rc;
}

void line_abandon(const struct registry *reg, const char *job, struct place *p)
{
	drop(reg, &job_line, job, p);
}

int line_ahead(const struct registry *reg, const char *job, const struct line_numbers *nums,
	       unsigned long long below, unsigned long long *ahead)
{
	unsigned long long from = nums->head > nums->replaced_below ? nums->head
								    : nums->replaced_below;
	return nearest(reg, job, &job_line, job, from, below, ahead);
}

unsigned long long line_waiting(const struct registry *reg, const char *job,
				const struct record *rec)
{
	struct line_entries l;
	unsigned long long live = 0;
	if (line_list(reg, job, rec, &l) == 0)
		live = l.count;
	line_entries_free(&l);
	return live;
}

int line_open_place(const struct registry *reg, const char *job, unsigned long long n, int *fd)
{
	char *name = place_name(&job_line, job, n);
	struct stat st;
	int rc = 0;
	*fd = -1;
	/* (gone, or no regular file: it holds nobody up) */
	if (reg->fd >= 0 && entry_open(reg->fd, name, O_RDONLY, fd, &st) == -1 && errno != ENOENT)
		rc = fail_errno(errno, job, "wait for the place %s", reg_path(reg, name));
	free(name);
	return rc;
}

void line_turn_ends(struct record *rec, const struct place *p)
{
	struct line_numbers nums;
	line_numbers(rec, &nums);
	if (p->fd >= 0 && p->n + 1 > nums.head)
		record_put_number(rec, "wait_head", p->n + 1);
}

void line_passed(struct record *rec, const struct line_numbers *nums)
{
	record_put_number(rec, "wait_head", nums->next);
}

void line_sweep(const struct registry *reg, const char *job, unsigned long long from,
		unsigned long long to)
{
	(void)walk(reg, job, &job_line, job, from, to, NULL);
}

void line_leave(const struct registry *reg, const char *job, struct place *p,
		unsigned long long old_head)
{
	if (p->fd < 0)
		return;
	/* The unheld places below ours are over: no file stays per dead waiter. */
	line_sweep(reg, job, old_head, p->n);
	line_abandon(reg, job, p);
}

int line_clear(const struct registry *reg, const char *job, const struct record *was,
	       int keep_pause, int sync, int *kept)
{
	static const char *const keys[] = { "wait_next", "wait_head", "replaced_below" };
	int paused = keep_pause && record_paused(was, now_real());
	struct line_numbers nums;
	unsigned long long ahead;
	line_numbers(was, &nums);
	int rc = line_ahead(reg, job, &nums, nums.next, &ahead);
	if (rc)
		return rc;
	*kept = paused || ahead != 0;
	if (!*kept)
		return reg_remove(reg, job, sync);
	struct record rec;
	struct buf text = {0};
	record_init(&rec);
	record_to_pending(&rec, now_seconds(), NULL);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = record_get(was, keys[i]);
		if (v)
			record_put(&rec, keys[i], v);
	}
	if (paused)
		record_pause_copy(&rec, was);
	record_format(&rec, &text);
	rc = reg_replace(reg, job, job, text.data, text.len);
	buf_free(&text);
	record_free(&rec);
	return rc;
}

/* ---- a slot group's line ---- */

/* The numbers of the line file NAME from FD (missing: 1, 1).  An exit
 * status: a number past COUNTER_MAX, or none, is a corrupt file (65). */
static int group_numbers(const struct registry *reg, const char *job, const char *name,
			 int fd, struct line_numbers *nums)
{
	char text[128];
	static const char *const keys[] = { "next=", "head=" };
	unsigned long long *at[] = { &nums->next, &nums->head };
	int rc = 0;
	ssize_t n = read_full(fd, text, sizeof text - 1);
	if (n < 0)
		rc = fail_errno(errno, job, "read %s", reg_path(reg, name));
	text[n > 0 ? n : 0] = '\0';
	*nums = (struct line_numbers){ 1, 1, 0 };
	for (int i = 0; i < 2 && !rc; i++) {
		const char *v = strstr(text, keys[i]);
		size_t len = v ? strspn(v + 5, "0123456789") : 0;
		if (v && parse_digits(v + 5, len, COUNTER_MAX, at[i]) < 0)
			rc = fail(EXIT_CORRUPT, job, "corrupt %s: %s is not a number up to 2^63-1",
				  reg_path(reg, name), keys[i]);
	}
	clamp(nums);
	return rc;
}

/* GROUP's numbers read without its line's lock (line_group_busy());
 * no line file, or not a regular one: 1, 1. */
static int group_look(const struct registry *reg, const char *job, const char *group,
		      struct line_numbers *nums)
{
	char *name = reg_dot_name(group, ".slotline");
	struct stat st;
	int fd, rc = 0;
	*nums = (struct line_numbers){ 1, 1, 0 };
	if (entry_open(reg->fd, name, O_RDONLY, &fd, &st) == 0) {
		rc = group_numbers(reg, job, name, fd, nums);
		close_fd(fd);
	}
	free(name);
	return rc;
}

/* Rewrite the line file in place: the numbers only grow, so the text
 * never gets shorter, and it is never cut to nothing. */
static int group_write(int fd, const struct line_numbers *nums)
{
	char text[64];
	int len = snprintf(text, sizeof text, "next=%llu\nhead=%llu\n", nums->next, nums->head);
	return rewrite_full(fd, text, (size_t)len);
}

int line_group_join(const struct registry *reg, const char *job, const char *group,
		    double lock_wait, struct group_place *gp)
{
	struct line_numbers nums = { 1, 1, 0 };
	struct buf who = {0}, what = {0};
	char *lname = reg_dot_name(group, ".slotline");
	int lfd, rc = reg_lock_entry(reg, job, lname, LOCK_EX, lock_wait, LOCK_CREATE, &lfd);
	if (!rc)
		rc = group_numbers(reg, job, lname, lfd, &nums);
	who_line(&who, group_line.first, job);
	buf_addf(&what, "the line of slot group %s", group);
	if (!rc)
		rc = join(reg, job, &group_line, group, nums.next, who.data, what.data, &gp->p);
	if (!rc) {
		nums.next = gp->p.n + 1;
		if (group_write(lfd, &nums) < 0) {
			rc = fail_errno(errno, job, "write %s", reg_path(reg, lname));
			drop(reg, &group_line, group, &gp->p);
		} else {
			gp->group = group;
			gp->ahead = nums.head;
		}
	}
	reg_unlock(&lfd);
	buf_free(&who);
	buf_free(&what);
	free(lname);
	return rc;
}

int line_group_turn(const struct registry *reg, const char *job, struct group_place *gp,
		    int *turn)
{
	unsigned long long ahead;
	/* Places below AHEAD were found dead: a place, once dead, stays so. */
	if (gp->p.n - gp->ahead > LINE_SPAN_MAX)
		gp->ahead = gp->p.n - LINE_SPAN_MAX;
	int rc = nearest(reg, job, &group_line, gp->group, gp->ahead, gp->p.n, &ahead);
	if (!rc)
		gp->ahead = ahead ? ahead : gp->p.n;
	*turn = !rc && !ahead;
	return rc;
}

int line_group_busy(const struct registry *reg, const char *job, const char *group, int *busy)
{
	struct line_numbers nums;
	unsigned long long ahead = 0;
	int rc = group_look(reg, job, group, &nums);
	if (!rc)
		rc = nearest(reg, job, &group_line, group, nums.head, nums.next, &ahead);
	*busy = ahead != 0;
	return rc;
}

void line_group_leave(const struct registry *reg, const char *job, struct group_place *gp,
		      double lock_wait)
{
	struct line_numbers nums;
	int lfd = -1;
	if (!gp->group)
		return;
	char *lname = reg_dot_name(gp->group, ".slotline");
	/* Our turn had come: the places below ours are over. */
	if (gp->ahead >= gp->p.n &&
	    reg_lock_entry(reg, job, lname, LOCK_EX, lock_wait, LOCK_CREATE, &lfd) == 0 &&
	    group_numbers(reg, job, lname, lfd, &nums) == 0 && nums.head <= gp->p.n) {
		(void)walk(reg, job, &group_line, gp->group, nums.head, gp->p.n, NULL);
		nums.head = gp->p.n + 1;
		if (nums.next < nums.head)
			nums.next = nums.head;
		if (group_write(lfd, &nums) < 0)
			warn(job, "cannot write the line of slot group %s: %s", gp->group,
			     strerror(errno));
	}
	drop(reg, &group_line, gp->group, &gp->p);
	reg_unlock(&lfd);
	free(lname);
	gp->group = NULL;
}

/* ---- readers ---- */

int line_list(const struct registry *reg, const char *job, const struct record *rec,
	      struct line_entries *out)
{
	struct line_numbers nums;
	line_numbers(rec, &nums);
	unsigned long long from = nums.head > nums.replaced_below ? nums.head : nums.replaced_below;
	return walk(reg, job, &job_line, job, from, nums.next, out);
}

int line_group_list(const struct registry *reg, const char *group, struct line_entries *out)
{
	struct line_numbers nums;
	int rc = group_look(reg, group, group, &nums);
	*out = (struct line_entries){ NULL, 0 };
	if (!rc)
		rc = walk(reg, group, &group_line, group, nums.head, nums.next, out);
	return rc;
}

void line_entries_free(struct line_entries *l)
{
	for (size_t i = 0; i < l->count; i++) {
		free(l->e[i].first);
		free(l->e[i].pid);
		free(l->e[i].host);
		free(l->e[i].since);
	}
	free(l->e);
	*l = (struct line_entries){ NULL, 0 };
}
