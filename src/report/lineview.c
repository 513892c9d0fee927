/* lineview: who waits in a line, as readers see it (see lineview.h). */
#include "report/lineview.h"
#include "registry/line.h"
#include "registry/openat.h"
#include "util/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define SPAN_MAX 100000ULL   /* places a line spans at most (line.c) */
#define MISSING_MAX 1000     /* files gone in a row end a look (line.c) */
#define PLACE_TEXT 1024      /* bytes of a place file read, at most */

/* A slot group's numbers from .NAME.slotline, as the line reads them
 * (missing: 1, 1). */
static int slotline_numbers(const struct registry *reg, const char *group,
			    struct line_numbers *nums)
{
	struct buf name = {0}, data = {0};
	int found = 0;
	buf_addf(&name, ".%s.slotline", group);
	int rc = reg_read(reg, group, name.data, 4096, &data, &found);
	const char *next = found && data.data ? strstr(data.data, "next=") : NULL;
	const char *head = found && data.data ? strstr(data.data, "head=") : NULL;
	nums->next = next ? strtoull(next + 5, NULL, 10) : 1;
	nums->head = head ? strtoull(head + 5, NULL, 10) : 1;
	nums->replaced_below = 0;
	if (nums->head < 1 || nums->head > nums->next)
		nums->head = nums->next;
	if (nums->next - nums->head > SPAN_MAX)
		nums->head = nums->next - SPAN_MAX;
	buf_free(&name);
	buf_free(&data);
	return rc;
}

/* The value of KEY in the place's LINE ("k=v k=v"), malloc'd, or NULL. */
static char *line_value(const char *line, const char *key)
{
	size_t klen = strlen(key);
	for (const char *p = line; p && *p; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			p += klen + 1;
			size_t n = strcspn(p, " ");
			return n ? xstrndup(p, n) : NULL;
		}
	return NULL;
}

/* The line of the place open on FD into W; a line with no newline is
 * torn (being written, or cut): nothing of it is taken. */
static int read_place(int fd, struct waiter *w)
{
	char *text = xmalloc(PLACE_TEXT + 1);
	ssize_t n;
	do
		n = pread(fd, text, PLACE_TEXT, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		free(text);
		return -1;
	}
	text[n] = '\0';
	char *end = memchr(text, '\n', (size_t)n);
	if (end && memchr(text, '\0', (size_t)(end - text)) == NULL) {
		*end = '\0';
		w->kind = line_value(text, "kind");
		w->job = line_value(text, "job");
		w->pid = line_value(text, "pid");
		w->host = line_value(text, "host");
		w->since = line_value(text, "since");
	}
	free(text);
	return 0;
}

/* Place N (its file NAME): 1 live, read into W; 0 not live; -1 gone;
 * or -2 with errno when the probe failed. */
static int probe_place(const struct registry *reg, const char *name, struct waiter *w)
{
	struct stat st;
	int fd, rc, got = entry_open(reg->fd, name, O_RDONLY, &fd, &st);
	if (got == ENTRY_NOT_REGULAR)
		return 0;   /* (a planted name is nobody's place) */
	if (got < 0)
		return errno == ENOENT ? -1 : -2;
	do
		rc = flock(fd, LOCK_SH | LOCK_NB);
	while (rc < 0 && errno == EINTR);
	int live = rc < 0 && errno == EWOULDBLOCK;
	if ((rc < 0 && !live) || (live && read_place(fd, w) < 0))
		got = -2;
	int err = errno;
	close_fd(fd);
	errno = err;
	return got == -2 ? -2 : live;
}

int lineview_read(const struct registry *reg, const char *name, const struct record *rec,
		  int group, struct waiters *out)
{
	struct line_numbers nums;
	int status = 0;
	unsigned missing = 0;
	memset(out, 0, sizeof *out);
	if (group)
		status = slotline_numbers(reg, name, &nums);
	else
		line_numbers(rec, &nums);
	if (nums.head < nums.replaced_below)
		nums.head = nums.replaced_below;
	for (unsigned long long n = nums.head; reg->fd >= 0 && n < nums.next && missing < MISSING_MAX;
	     n++) {
		struct buf file = {0};
		struct waiter w = { .place = n };
		buf_addf(&file, ".%s.%s%llu", name, group ? "slotwait." : "wait.", n);
		int state = probe_place(reg, file.data, &w);
		if (state == -2)
			keep_first(&status, fail_errno(errno, name, "cannot look at place %llu: %s", n,
						       reg_path(reg, file.data)));
		buf_free(&file);
		missing = state == -1 ? missing + 1 : 0;
		if (state != 1)
			continue;
		out->v = xrealloc(out->v, (out->count + 1) * sizeof *out->v);
		out->v[out->count++] = w;
	}
	return status;
}

void lineview_free(struct waiters *w)
{
	for (size_t i = 0; i < w->count; i++) {
		free(w->v[i].kind);
		free(w->v[i].job);
		free(w->v[i].pid);
		free(w->v[i].host);
		free(w->v[i].since);
	}
	free(w->v);
	memset(w, 0, sizeof *w);
}
