#include "registry/slots.h"
#include "registry/line.h"
#include "registry/lock.h"
#include "registry/openat.h"
#include "util/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- names ------------------------------------------------------------- */

char *slot_file_name(const char *group, unsigned long k)
{
	struct buf b = {0};
	buf_addf(&b, ".%s.slot.%lu", group, k);
	return b.data;
}

int slot_file_parse(const char *entry, char **group, unsigned long *k)
{
	char *name = reg_dot_job(entry, ".slot.", 1);
	const char *digits = name ? entry + 1 + strlen(name) + strlen(".slot.") : NULL;
	unsigned long long value;
	/* K as we write it: no leading zero. */
	int ok = name && digits[0] != '0' &&
		 parse_digits(digits, strlen(digits), SLOTS_MAX, &value) == 0;
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
	const char *why = NULL;
	size_t at = 0;
	while (at < set->count && strcmp(set->groups[at].name, name) < 0)
		at++;
	if (!valid_job_id(name))
		why = "NAME must be spelled as a job id";
	else if (parse_digits(colon + 1, strlen(colon + 1), SLOTS_MAX, &n) < 0 || n == 0)
		why = "N must be a number from 1 to 10000";
	else if (at < set->count && strcmp(set->groups[at].name, name) == 0)
		why = "the same group given twice";
	if (why) {
		free(name);
		return why;
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

/* Open G's slot files not open yet, all N made if missing (so that
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
		if (flock_wait(fd, LOCK_EX, 0) < 0) {
			if (errno != EWOULDBLOCK)
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
		/* A failure gives back everything, but the full group's
		 * files stay open: closing them would wake waiters for nothing. */
		if (rc && i != *full)
			close_group(&set->groups[i], 1);
		else if (!rc)
			close_group(&set->groups[i], 0);
	}
	return rc;
}

int slots_take(const struct registry *reg, const char *job, struct slot_set *set, int wait,
	       double lock_wait, struct group_place *gp, size_t *full)
{
	int rc, busy, turn = 1;

	*full = 0;
	/* A call that waits goes behind the waiters already in line. */
	for (size_t i = 0; wait && !gp->group && i < set->count; i++) {
		if ((rc = line_group_busy(reg, job, set->groups[i].name, &busy)) != 0)
			return rc;
		if (busy && (rc = line_group_join(reg, job, set->groups[i].name, lock_wait, gp)) != 0)
			return rc;
	}
	for (;;) {
		if (gp->group && (rc = line_group_turn(reg, job, gp, &turn)) != 0)
			return rc;
		if (!turn)
			break;
		rc = try_all(reg, job, set, full);
		if (rc != EXIT_BUSY || !wait)
			return rc;
		if (gp->group == set->groups[*full].name)
			break;
		/* A turn in another group's line is over: into the full one's. */
		line_group_leave(reg, job, gp, lock_wait);
		if ((rc = line_group_join(reg, job, set->groups[*full].name, lock_wait, gp)) != 0)
			return rc;
	}
	/* The group whose line GP stands in. */
	*full = 0;
	while (*full + 1 < set->count && set->groups[*full].name != gp->group)
		(*full)++;
	return SLOTS_WAIT;
}

/* ---- the holder's line ------------------------------------------------- */

void slots_note(const struct registry *reg, const char *job, const struct slot_set *set,
		const char *run)
{
	struct buf text = {0};
	buf_addf(&text, "%s %s\n", job, run);
	for (size_t i = 0; set && i < set->count; i++) {
		const struct slot_group *g = &set->groups[i];
		int fd = g->held ? g->fds[g->held - 1] : -1;
		if (fd >= 0 && rewrite_full(fd, text.data, text.len) < 0) {
			char *name = slot_file_name(g->name, g->held);
			warn(job, "cannot write %s: %s", reg_path(reg, name), strerror(errno));
			free(name);
		}
	}
	buf_free(&text);
}
