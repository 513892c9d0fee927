/* slots: the slot groups of --slots (see slots.h).  Past 450 lines
 * because a group's line and its wait live here beside the slots: the
 * line is a file of its own (.NAME.slotline), not a record, and the wait
 * watches slot files, which wait.c does not know.  Both repeat the shape
 * of line.c and wait.c; making one line and one wait serve jobs and
 * groups is the next clean-up. */
#include "registry/slots.h"
#include "registry/lock.h"
#include "registry/openat.h"
#include "util/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLACE_ROUNDS 1000   /* places taken by leftovers skipped, at most */

/* ---- names ------------------------------------------------------------- */

/* ".NAME" SUFFIX NUMBER, malloc'd (NUMBER 0: none). */
static char *group_file(const char *group, const char *suffix, unsigned long number)
{
	struct buf b = {0};
	buf_addf(&b, ".%s%s", group, suffix);
	if (number)
		buf_addf(&b, "%lu", number);
	return b.data;
}

char *slot_file_name(const char *group, unsigned long k)
{
	return group_file(group, ".slot.", k);
}

int slot_file_parse(const char *entry, char **group, unsigned long *k)
{
	static const char mid[] = ".slot.";
	size_t n = strlen(entry), digits = 0;
	unsigned long long value;
	while (digits < n && entry[n - 1 - digits] >= '0' && entry[n - 1 - digits] <= '9')
		digits++;
	/* K as we write it: no leading zero. */
	if (entry[0] != '.' || digits == 0 || entry[n - digits] == '0' ||
	    n < 1 + (sizeof mid - 1) + digits + 1 ||
	    memcmp(entry + n - digits - (sizeof mid - 1), mid, sizeof mid - 1) != 0 ||
	    parse_digits(entry + n - digits, digits, SLOTS_MAX, &value) < 0)
		return 0;
	char *name = xstrndup(entry + 1, n - digits - (sizeof mid - 1) - 1);
	int ok = valid_job_id(name);
	if (ok && group)
		*group = name;
	else
		free(name);
	if (ok && k)
		*k = (unsigned long)value;
	return ok;
}

/* ---- the set ----------------------------------------------------------- */

const char *slots_add(struct slot_set *set, const char *arg)
{
	const char *colon = strchr(arg, ':');
	unsigned long long n;
	if (!colon)
		return "not NAME:N";
	if (strchr(colon, ','))
		return "one group per --slots; give one --slots NAME:N for each group";
	char *name = xstrndup(arg, (size_t)(colon - arg));
	if (!valid_job_id(name)) {
		free(name);
		return "NAME must be spelled as a job id";
	}
	if (parse_digits(colon + 1, strlen(colon + 1), SLOTS_MAX, &n) < 0 || n == 0) {
		free(name);
		return "N must be a number from 1 to 10000";
	}
	size_t at = 0;
	while (at < set->count && strcmp(set->groups[at].name, name) < 0)
		at++;
	if (at < set->count && strcmp(set->groups[at].name, name) == 0) {
		free(name);
		return "the same group given twice";
	}
	set->groups = xrealloc(set->groups, (set->count + 1) * sizeof *set->groups);
	memmove(set->groups + at + 1, set->groups + at, (set->count - at) * sizeof *set->groups);
	struct slot_group *g = &set->groups[at];
	*g = (struct slot_group){ .name = name, .n = (unsigned long)n };
	g->fds = xmalloc(g->n * sizeof *g->fds);
	for (unsigned long k = 0; k < g->n; k++)
		g->fds[k] = -1;
	set->count++;
	return NULL;
}

int slots_held(const struct slot_set *set)
{
	for (size_t i = 0; set && i < set->count; i++)
		if (!set->groups[i].held)
			return 0;
	return 1;
}

/* Close G's slot files; with HELD_TOO also the one held. */
static void close_group(struct slot_group *g, int held_too)
{
	for (unsigned long k = 1; k <= g->n; k++)
		if (g->fds[k - 1] >= 0 && (held_too || k != g->held)) {
			close_fd(g->fds[k - 1]);
			g->fds[k - 1] = -1;
		}
	if (held_too)
		g->held = 0;
}

void slots_release(struct slot_set *set)
{
	for (size_t i = 0; set && i < set->count; i++)
		close_group(&set->groups[i], 1);
}

void slots_free(struct slot_set *set)
{
	slots_release(set);
	for (size_t i = 0; i < set->count; i++) {
		free(set->groups[i].name);
		free(set->groups[i].fds);
	}
	free(set->groups);
	memset(set, 0, sizeof *set);
}

void slots_format(const struct slot_set *set, struct buf *out)
{
	for (size_t i = 0; set && i < set->count; i++)
		if (set->groups[i].held)
			buf_addf(out, "%s%s:%lu", out->len ? "," : "", set->groups[i].name,
				 set->groups[i].held);
}

/* ---- taking the slots -------------------------------------------------- */

/* Open the slot files of G not open yet, made if missing (all N, so that
 * readers see the group whole). */
static int open_group(const struct registry *reg, const char *job, struct slot_group *g)
{
	for (unsigned long k = 1; k <= g->n; k++) {
		if (g->fds[k - 1] >= 0)
			continue;
		char *name = slot_file_name(g->name, k);
		int rc = reg_open_lock(reg, job, name, 1, 1, &g->fds[k - 1]);
		free(name);
		if (rc)
			return rc;
	}
	return 0;
}

/* Does NAME still name the file FD is open on? */
static int still_named(const struct registry *reg, int fd, const char *name)
{
	struct stat held, named;
	return fstat(fd, &held) == 0 && fstatat(reg->fd, name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
	       held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

/* A free slot of G, by a non-blocking exclusive lock, kept across exec:
 * 0 (G->held), EXIT_BUSY when none is free, or an error's status. */
static int take_one(const struct registry *reg, const char *job, struct slot_group *g)
{
	int rounds = 0;
	for (unsigned long k = 1; k <= g->n; k++) {
		char *name = slot_file_name(g->name, k);
		int rc = 0, fd = g->fds[k - 1];
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK && errno != EINTR)
				rc = fail_errno(errno, job, "lock %s", reg_path(reg, name));
		} else if (!still_named(reg, fd, name) && ++rounds < 100) {
			/* Removed or replaced while we held it open: try the
			 * file the name names now. */
			close_fd(fd);
			rc = reg_open_lock(reg, job, name, 1, 1, &g->fds[k - 1]);
			k--;
		} else if (fcntl(fd, F_SETFD, 0) < 0) {
			rc = fail_errno(errno, job, "fcntl %s", reg_path(reg, name));
		} else {
			g->held = k;
		}
		free(name);
		if (rc || g->held)
			return rc;
	}
	return EXIT_BUSY;
}

/* One slot of every group, in order; on failure none is held and *FULL
 * is the group that had no free slot. */
static int try_all(const struct registry *reg, const char *job, struct slot_set *set,
		   size_t *full)
{
	int rc = 0;
	for (size_t i = 0; i < set->count && !rc; i++) {
		struct slot_group *g = &set->groups[i];
		if (!g->held && (rc = open_group(reg, job, g)) == 0)
			rc = take_one(reg, job, g);
		if (rc == EXIT_BUSY)
			*full = i;
	}
	for (size_t i = 0; i < set->count; i++) {
		/* The files not held are let go; a failure gives back
		 * everything, but the full group's files stay open: closing
		 * them would wake the waiters for nothing. */
		if (rc && i != *full)
			close_group(&set->groups[i], 1);
		else if (!rc)
			close_group(&set->groups[i], 0);
	}
	return rc;
}

/* ---- the group's line -------------------------------------------------- */

struct line {
	struct slot_group *g;    /* NULL: in no line */
	unsigned long place;     /* M: our place, .NAME.slotwait.M */
	int fd;                  /* its file, locked */
	unsigned long ahead;     /* the lowest place that may still be live */
};

/* Read "next=M\nhead=H\n" from the line file FD (missing: 1, 1). */
static int line_read(int fd, unsigned long *next, unsigned long *head)
{
	char text[128];
	ssize_t n;
	do
		n = pread(fd, text, sizeof text - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	text[n] = '\0';
	*next = *head = 1;
	const char *v = strstr(text, "next=");
	if (v)
		*next = strtoul(v + 5, NULL, 10);
	if ((v = strstr(text, "head=")) != NULL)
		*head = strtoul(v + 5, NULL, 10);
	if (*next < 1 || *next >= ULONG_MAX - PLACE_ROUNDS)
		*next = 1;
	if (*head < 1 || *head > *next)
		*head = *next;
	return 0;
}

/* Rewrite the line file in place: the numbers only grow, so the text
 * never gets shorter, and it is never cut to nothing. */
static int line_write(int fd, unsigned long next, unsigned long head)
{
	char text[64];
	int len = snprintf(text, sizeof text, "next=%lu\nhead=%lu\n", next, head);
	int rc;
	if (pwrite_full(fd, text, (size_t)len, 0) < 0)
		return -1;
	do
		rc = ftruncate(fd, len);
	while (rc < 0 && errno == EINTR);
	return rc;
}

/* Lock G's line file; an exit status. */
static int line_lock(const struct registry *reg, const char *job, const struct slot_group *g,
		     double lock_wait, int *fd)
{
	char *name = group_file(g->name, ".slotline", 0);
	int rc = reg_lock_entry(reg, job, name, LOCK_EX, lock_wait, LOCK_CREATE, fd);
	free(name);
	return rc;
}

/* Take a place in G's line. */
static int join(const struct registry *reg, const char *job, struct slot_group *g,
		double lock_wait, struct line *line)
{
	unsigned long next = 1, head = 1;
	int lfd, rc = line_lock(reg, job, g, lock_wait, &lfd);
	if (rc)
		return rc;
	char *lname = group_file(g->name, ".slotline", 0);
	if (line_read(lfd, &next, &head) < 0)
		rc = fail_errno(errno, job, "read %s", reg_path(reg, lname));
	/* A place whose file exists is a leftover: the next one is ours. */
	for (int round = 0; !rc && round < PLACE_ROUNDS; round++, next++) {
		char *name = group_file(g->name, ".slotwait.", next);
		struct stat st;
		int got = entry_open(reg->fd, name, O_RDWR | O_CREAT | O_EXCL, &line->fd, &st);
		/* (blocking: a newcomer's look at the line, line_busy(), may
		 * hold the new file for an instant) */
		int locked = -1;
		if (got == 0 && entry_share(line->fd, reg->share_mode) == 0)
			while ((locked = flock(line->fd, LOCK_EX)) < 0 && errno == EINTR)
				;
		if (got == 0 && locked < 0) {
			rc = fail_errno(errno, job, "lock %s", reg_path(reg, name));
			(void)unlinkat(reg->fd, name, 0);
			reg_unlock(&line->fd);
		} else if (got == 0) {
			line->place = next;
		} else if (got == ENTRY_NOT_REGULAR || errno != EEXIST) {
			rc = got == ENTRY_NOT_REGULAR ? reg_not_regular(reg, job, name)
				: fail_errno(errno, job, "create %s", reg_path(reg, name));
		}
		free(name);
		if (line->fd >= 0)
			break;
	}
	if (!rc && line->fd < 0)
		rc = fail_errno(EEXIST, job, "no place in the line of %s", g->name);
	if (!rc && line_write(lfd, line->place + 1, head) < 0) {
		rc = fail_errno(errno, job, "write %s", reg_path(reg, lname));
		char *name = group_file(g->name, ".slotwait.", line->place);
		(void)unlinkat(reg->fd, name, 0);
		free(name);
		reg_unlock(&line->fd);
	}
	if (!rc) {
		line->g = g;
		line->ahead = head;
	}
	free(lname);
	reg_unlock(&lfd);
	return rc;
}

/* Is it our turn: no live place in [ahead, M)?  1 yes, 0 no (or an
 * error, printed, its status in *RC). */
static int our_turn(const struct registry *reg, const char *job, struct line *line, int *rc)
{
	for (; line->ahead < line->place; line->ahead++) {
		char *name = group_file(line->g->name, ".slotwait.", line->ahead);
		struct stat st;
		int fd, got = entry_open(reg->fd, name, O_RDONLY, &fd, &st);
		int live = got == 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		if (got == -1 && errno != ENOENT)
			*rc = fail_errno(errno, job, "open %s", reg_path(reg, name));
		if (got == 0)
			close_fd(fd);
		free(name);
		if (live || *rc)
			return 0;
	}
	return 1;
}

/* Has G's line a live place?  Read without the line's lock: a place
 * being taken meanwhile comes after ours anyway. */
static int line_busy(const struct registry *reg, const char *job, struct slot_group *g)
{
	char *lname = group_file(g->name, ".slotline", 0);
	struct stat st;
	int fd, rc = 0, busy = 0;
	if (entry_open(reg->fd, lname, O_RDONLY, &fd, &st) == 0) {
		struct line look = { .g = g, .fd = -1 };
		if (line_read(fd, &look.place, &look.ahead) == 0)
			busy = !our_turn(reg, job, &look, &rc) && !rc;
		close_fd(fd);
	}
	free(lname);
	return busy;
}

/* Leave the line; AT_HEAD: our turn had come, so the places below ours
 * are over (head = M + 1, their leftover files removed). */
static void leave(const struct registry *reg, const char *job, struct line *line, int at_head,
		  double lock_wait)
{
	unsigned long next, head;
	int lfd = -1;
	if (!line->g)
		return;
	if (at_head && line_lock(reg, job, line->g, lock_wait, &lfd) == 0 &&
	    line_read(lfd, &next, &head) == 0) {
		for (unsigned long p = head; p < line->place; p++) {
			char *name = group_file(line->g->name, ".slotwait.", p);
			(void)unlinkat(reg->fd, name, 0);
			free(name);
		}
		if (head <= line->place && line_write(lfd, next, line->place + 1) < 0)
			warn(job, "cannot write the line of slot group %s: %s", line->g->name,
			     strerror(errno));
	}
	char *name = group_file(line->g->name, ".slotwait.", line->place);
	(void)unlinkat(reg->fd, name, 0);
	free(name);
	reg_unlock(&lfd);
	reg_unlock(&line->fd);
	line->g = NULL;
}

/* ---- waking up --------------------------------------------------------- */

/* An inotify of DIR for the closes of slot files and places by their
 * holders (read-write), and the removal of places, or -1 (then the wait
 * polls every 100 ms).  Not the read-only closes: every reader's, and the
 * waiters' own looks at the places ahead, would wake every waiter. */
static int watch_open(const struct registry *reg)
{
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino >= 0 && inotify_add_watch(ino, reg->path, IN_CLOSE_WRITE | IN_DELETE | IN_ONLYDIR) < 0) {
		close_fd(ino);
		ino = -1;
	}
	return ino;
}

/* Does event E concern GROUP: one of its slot files or places? */
static int concerns(const struct inotify_event *e, const char *group)
{
	size_t n = strlen(group);
	if (e->mask & IN_Q_OVERFLOW)
		return 1;
	if (!e->len || e->name[0] != '.' || strncmp(e->name + 1, group, n) != 0)
		return 0;
	const char *rest = e->name + 1 + n;
	return strncmp(rest, ".slot.", 6) == 0 || strncmp(rest, ".slotwait.", 10) == 0;
}

/* Sleep until an event of GROUP, or TIMEOUT seconds: 1 woken by one.
 * The events of other files are read and passed over in the same sleep,
 * so a busy registry costs a read each, never a look at the line. */
static int watch_wait(int ino, const char *group, double timeout)
{
	double until = now_mono() + timeout;
	if (ino < 0) {
		(void)poll(NULL, 0, (int)((timeout < 0.1 ? timeout : 0.1) * 1000) + 1);
		return 0;
	}
	for (;;) {
		double left = until - now_mono();
		struct pollfd p = { .fd = ino, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			return 0;   /* (EINTR too: the caller looks again) */
		char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		ssize_t n;
		int woke = 0;
		while ((n = read(ino, events, sizeof events)) > 0)
			for (char *at = events; at < events + n;) {
				const struct inotify_event *e = (const struct inotify_event *)(void *)at;
				woke |= concerns(e, group);
				at += sizeof *e + e->len;
			}
		if (woke)
			return 1;
	}
}

int slots_take(const struct registry *reg, const char *job, struct slot_set *set, int wait,
	       double deadline, double lock_wait, int (*stop)(void *), void *stop_ctx,
	       size_t *full)
{
	struct line line = { .fd = -1 };
	int ino = -1, rc = 0, turn = 1, followups = 0;
	double next_look = now_mono() + 1;

	*full = 0;
	/* A call that waits goes behind the waiters already in line. */
	for (size_t i = 0; wait && i < set->count && !line.g; i++)
		if (line_busy(reg, job, &set->groups[i])) {
			if ((rc = join(reg, job, &set->groups[i], lock_wait, &line)) != 0)
				return rc;
			*full = i;
			ino = watch_open(reg);
		}
	for (;;) {
		rc = 0;
		turn = !line.g || our_turn(reg, job, &line, &rc);
		if (rc)
			break;
		if (turn) {
			rc = try_all(reg, job, set, full);
			if (rc != EXIT_BUSY || !wait)
				break;
			if (line.g != &set->groups[*full]) {
				/* (a turn in another group's line is over) */
				leave(reg, job, &line, 1, lock_wait);
				if ((rc = join(reg, job, &set->groups[*full], lock_wait, &line)) != 0)
					break;
				if (ino < 0)
					ino = watch_open(reg);
				continue;   /* (at once when nobody is ahead) */
			}
		}
		rc = EXIT_BUSY;
		double left = deadline < 0 ? 1 : deadline - now_mono();
		if (left <= 0)
			break;
		/* Every wait follows DIR by name, and lasts while the caller
		 * wants the slots: else the caller starts over. */
		if (!reg_same(reg)) {
			rc = 0;
			break;
		}
		if (stop && now_mono() >= next_look) {
			next_look = now_mono() + 1;
			if (stop(stop_ctx)) {
				rc = 0;
				break;
			}
		}
		double slice = followups == 2 ? 0.005 : followups == 1 ? 0.05 : 1;
		int woke = watch_wait(ino, line.g->name, left < slice ? left : slice);
		followups = woke ? 2 : followups > 0 ? followups - 1 : 0;
	}
	if (rc || !slots_held(set))
		slots_release(set);
	leave(reg, job, &line, turn, lock_wait);
	if (ino >= 0)
		close_fd(ino);
	return rc;
}

/* ---- the holder's line ------------------------------------------------- */

void slots_note(const struct registry *reg, const char *job, const struct slot_set *set,
		const char *run)
{
	struct buf text = {0};
	buf_addf(&text, "%s %s\n", job, run);
	for (size_t i = 0; set && i < set->count; i++) {
		const struct slot_group *g = &set->groups[i];
		int rc, fd = g->held ? g->fds[g->held - 1] : -1;
		if (fd < 0)
			continue;
		/* Written over the last holder's line, then cut to ours:
		 * never empty. */
		rc = pwrite_full(fd, text.data, text.len, 0);
		while (rc == 0 && (rc = ftruncate(fd, (off_t)text.len)) < 0 && errno == EINTR)
			;
		if (rc < 0) {
			char *name = slot_file_name(g->name, g->held);
			warn(job, "cannot write %s: %s", reg_path(reg, name), strerror(errno));
			free(name);
		}
	}
	buf_free(&text);
}
