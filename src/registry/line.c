#include "registry/line.h"
#include "record/transition.h"
#include "registry/lock.h"
#include "registry/openat.h"
#include "util/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

/* A count or a sweep of the places stops after this many in a row whose
 * files are gone (callers that gave up remove theirs): a record whose
 * numbers are far apart, by hand or by a long-gone line, costs a reader
 * no more.  The search for the place ahead (line_ahead) never stops
 * early: order is at stake there. */
#define MISSING_MAX 1000

/* The most places a line spans, from wait_head to wait_next. */
#define LINE_SPAN_MAX 100000ULL

/* A leftover file of a crashed joiner is passed over, not reused: this
 * many in a row is something else (a full directory, a planted file). */
#define JOIN_TRIES 64

static unsigned long long number(const struct record *rec, const char *key)
{
	const char *v = rec ? record_get(rec, key) : NULL;
	return v ? strtoull(v, NULL, 10) : 0;
}

void line_numbers(const struct record *rec, struct line_numbers *nums)
{
	nums->head = number(rec, "wait_head");
	nums->replaced_below = number(rec, "replaced_below");
	nums->next = number(rec, "wait_next");
	if (nums->head < 1)
		nums->head = 1;
	if (nums->next < nums->head)
		nums->next = nums->head;
	/* No line is this long: numbers further apart come from a record
	 * edited by hand, and a look at every place between them would hold
	 * the job lock for ever. */
	if (nums->next - nums->head > LINE_SPAN_MAX)
		nums->head = nums->next - LINE_SPAN_MAX;
}

int line_read(const struct registry *reg, const char *job, struct line_numbers *nums)
{
	struct buf data = {0};
	struct record rec;
	const char *why;
	int found = 0;
	int rc = reg_read(reg, job, job, RECORD_MAX, &data, &found);
	if (!rc && found && record_parse(&rec, data.data, data.len, &why) == 0) {
		line_numbers(&rec, nums);
		record_free(&rec);
	} else {
		line_numbers(NULL, nums);
	}
	buf_free(&data);
	return rc;
}

/* ".JOB.wait.N" */
static char *place_name(const char *job, unsigned long long n)
{
	char suffix[32];
	snprintf(suffix, sizeof suffix, ".wait.%llu", n);
	return reg_dot_name(job, suffix);
}

static void put_number(struct record *rec, const char *key, unsigned long long v)
{
	char text[24];
	snprintf(text, sizeof text, "%llu", v);
	record_put(rec, key, text);
}

int line_join(const struct registry *reg, const char *job, struct record *rec,
	      struct place *p)
{
	struct line_numbers nums;
	line_numbers(rec, &nums);
	for (int i = 0; i < JOIN_TRIES; i++, nums.next++) {
		char *name = place_name(job, nums.next);
		struct stat st;
		int rc = entry_open(reg->fd, name, O_RDWR | O_CREAT | O_EXCL, &p->fd, &st);
		if (rc == 0 && entry_share(p->fd, reg->share_mode) == 0 &&
		    flock_wait(p->fd, LOCK_EX, -1) == 0) {
			free(name);
			p->n = nums.next;
			put_number(rec, "wait_next", nums.next + 1);
			return 0;
		}
		int err = errno;
		if (rc == 0) {
			(void)unlinkat(reg->fd, name, 0);
			close_fd(p->fd);
			p->fd = -1;
		}
		if (rc == 0 || (rc != ENTRY_NOT_REGULAR && err != EEXIST)) {
			rc = fail_errno(err, job, "take a place in line: %s", reg_path(reg, name));
			free(name);
			return rc;
		}
		free(name);
	}
	return fail(EXIT_IO, job, "take a place in line: %d places in a row are taken",
		    JOIN_TRIES);
}

void line_abandon(const struct registry *reg, const char *job, struct place *p)
{
	if (p->fd < 0)
		return;
	char *name = place_name(job, p->n);
	(void)unlinkat(reg->fd, name, 0);
	free(name);
	close_fd(p->fd);
	p->fd = -1;
}

/* Open place N: 1 with *fd, 0 when there is none (or it is no regular
 * file: a planted name is nobody's place). */
static int open_place(const struct registry *reg, const char *job, unsigned long long n, int *fd)
{
	char *name = place_name(job, n);
	struct stat st;
	int rc = entry_open(reg->fd, name, O_RDONLY, fd, &st);
	free(name);
	return rc == 0;
}

/* Place N's liveness: 1 live, 0 dead, -1 its file is gone. */
static int place_state(const struct registry *reg, const char *job, unsigned long long n,
		       const struct line_numbers *nums)
{
	int fd;
	if (n < nums->replaced_below || n < nums->head || reg->fd < 0)
		return 0;
	if (!open_place(reg, job, n, &fd))
		return -1;
	int rc;
	do
		rc = flock(fd, LOCK_SH | LOCK_NB);
	while (rc < 0 && errno == EINTR);
	int live = rc < 0 && errno == EWOULDBLOCK;
	close_fd(fd);
	return live;
}

unsigned long long line_ahead(const struct registry *reg, const char *job,
			      const struct line_numbers *nums, unsigned long long below)
{
	/* Every one: order is at stake (no MISSING_MAX here). */
	for (unsigned long long n = below; n > nums->head && n - 1 >= nums->replaced_below;) {
		if (place_state(reg, job, --n, nums) == 1)
			return n;
	}
	return 0;
}

unsigned long long line_waiting(const struct registry *reg, const char *job,
				const struct record *rec)
{
	struct line_numbers nums;
	unsigned long long live = 0;
	line_numbers(rec, &nums);
	unsigned missing = 0;
	for (unsigned long long n = nums.head; n < nums.next && missing < MISSING_MAX; n++) {
		int state = place_state(reg, job, n, &nums);
		live += state == 1;
		missing = state < 0 ? missing + 1 : 0;
	}
	return live;
}

int line_wait_for(const struct registry *reg, const char *job, unsigned long long n,
		  double wait)
{
	int fd;
	if (reg->fd < 0 || !open_place(reg, job, n, &fd))
		return 0;
	int rc = flock_wait(fd, LOCK_SH, wait);
	close_fd(fd);
	return rc == 0 || errno != EWOULDBLOCK ? 0 : EXIT_BUSY;
}

void line_turn_ends(struct record *rec, const struct place *p)
{
	struct line_numbers nums;
	line_numbers(rec, &nums);
	if (p->fd >= 0 && p->n + 1 > nums.head)
		put_number(rec, "wait_head", p->n + 1);
}

void line_passed(struct record *rec, const struct line_numbers *nums)
{
	put_number(rec, "wait_head", nums->next);
}

/* line_sweep_file(); -1 when there is no such file. */
static int sweep_file(const struct registry *reg, const char *name)
{
	struct stat st;
	int fd;
	if (entry_open(reg->fd, name, O_RDONLY, &fd, &st) != 0)
		return errno == ENOENT ? -1 : 0;
	/* Held: a live place (or follower).  Free: nobody's, since a place
	 * is locked by its maker before the job lock we hold was let go. */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		(void)unlinkat(reg->fd, name, 0);
	close_fd(fd);
	return 0;
}

void line_sweep_file(const struct registry *reg, const char *job, const char *name)
{
	(void)job;
	(void)sweep_file(reg, name);
}

void line_sweep(const struct registry *reg, const char *job, unsigned long long from,
		unsigned long long to)
{
	unsigned missing = 0;
	for (unsigned long long n = from; n < to && missing < MISSING_MAX; n++) {
		char *name = place_name(job, n);
		missing = sweep_file(reg, name) < 0 ? missing + 1 : 0;
		free(name);
	}
}

void line_leave(const struct registry *reg, const char *job, struct place *p,
		unsigned long long old_head)
{
	if (p->fd < 0)
		return;
	/* The places below ours that nobody holds are over: remove them, so
	 * that no file is left for each waiter that died. */
	line_sweep(reg, job, old_head, p->n);
	line_abandon(reg, job, p);
}

int line_clear(const struct registry *reg, const char *job, const struct record *was,
	       int keep_pause, int sync, int *kept)
{
	static const char *const keys[] = { "wait_next", "wait_head", "replaced_below" };
	int paused = keep_pause && record_paused(was, now_real());
	struct line_numbers nums;
	line_numbers(was, &nums);
	*kept = paused || line_ahead(reg, job, &nums, nums.next) != 0;
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
	int rc = reg_replace(reg, job, job, text.data, text.len);
	buf_free(&text);
	record_free(&rec);
	return rc;
}
