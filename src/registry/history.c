#include "registry/history.h"
#include "record/transition.h"
#include "util/msg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* " KEY=VALUE" when the record has KEY, with a value free of spaces (the
 * line's separator; SPEC §3a). */
static void add_key(struct buf *out, const struct record *r, const char *key)
{
	const char *v = record_get(r, key);
	if (!v || !*v || strpbrk(v, " \t"))
		return;
	buf_addf(out, " %s=%s", key, v);
}

void history_line(struct buf *out, const struct record *r, const char *outcome, time_t ended)
{
	char when[21];
	time_t from;
	const char *started = record_get(r, "started");

	buf_addf(out, "run=%llu outcome=%s", record_count(r, "runs"), outcome);
	add_key(out, r, "attempt");
	add_key(out, r, "started");
	time_format(ended, when);
	buf_addf(out, " ended=%s", when);
	if (strcmp(outcome, "LOST") != 0) {
		if (started && time_parse(started, &from) == 0 && ended >= from)
			buf_addf(out, " duration=%lld", (long long)(ended - from));
		add_key(out, r, "exit");
		add_key(out, r, "signal");
		add_key(out, r, "timed_out");
	}
	add_key(out, r, "host");
	add_key(out, r, "pid");
}

int history_next(const struct buf *data, size_t *pos, const char **line, size_t *len)
{
	while (*pos < data->len) {
		const char *start = data->data + *pos;
		const char *nl = memchr(start, '\n', data->len - *pos);
		size_t n = nl ? (size_t)(nl - start) : data->len - *pos;
		*pos += n + (nl != NULL);
		// cppcheck-suppress knownConditionTrueFalse ; an empty line (nl == start) has n == 0
		if (n) {
			*line = start;
			*len = n;
			return 1;
		}
	}
	return 0;
}

int history_get(const char *line, size_t len, const char *key, const char **value,
		size_t *vlen)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i < len;) {
		size_t n = 0;
		while (i + n < len && line[i + n] != ' ')
			n++;
		if (n > klen && line[i + klen] == '=' && memcmp(line + i, key, klen) == 0) {
			*value = line + i + klen + 1;
			*vlen = n - klen - 1;
			return 1;
		}
		i += n + 1;
	}
	return 0;
}

/* Is LINE (LEN bytes) the line of run RUN? */
static int of_run(const char *line, size_t len, unsigned long long run)
{
	const char *v;
	size_t n;
	char digits[24];
	if (!history_get(line, len, "run", &v, &n) || n == 0 || n >= sizeof digits)
		return 0;
	memcpy(digits, v, n);
	digits[n] = '\0';
	return strspn(digits, "0123456789") == n && strtoull(digits, NULL, 10) == run;
}

int history_read(const struct registry *reg, const char *job, struct buf *data, int *found)
{
	char *name = reg_dot_name(job, HISTORY_SUFFIX);
	int rc = reg_read(reg, job, name, HISTORY_MAX, data, found);
	if (!rc && *found && data->len > HISTORY_MAX)
		rc = fail(EXIT_IO, job, "%s is over %u bytes", reg_path(reg, name), HISTORY_MAX);
	free(name);
	return rc;
}

int history_put(const struct registry *reg, const char *job, unsigned long long run,
		const char *line, unsigned long keep, int only_if_absent)
{
	char *name = reg_dot_name(job, HISTORY_SUFFIX);
	struct buf old = {0}, text = {0};
	const char *l;
	size_t pos = 0, len, count = 0, skip;
	int found, placed = 0, rc;

	if (keep == 0) {
		rc = 0;
		if (unlinkat(reg->fd, name, 0) < 0 && errno != ENOENT)
			rc = fail_errno(errno, job, "remove %s", reg_path(reg, name));
		goto out;
	}
	if ((rc = history_read(reg, job, &old, &found)) != 0)
		goto out;
	/* The lines as they will be, then the last KEEP of them. */
	while (history_next(&old, &pos, &l, &len)) {
		if (of_run(l, len, run)) {
			if (only_if_absent)
				goto out;
			if (placed)
				continue;
			l = line;
			len = strlen(line);
			placed = 1;
		}
		buf_add(&text, l, len);
		buf_addc(&text, '\n');
		count++;
	}
	if (!placed) {
		buf_adds(&text, line);
		buf_addc(&text, '\n');
		count++;
	}
	for (pos = 0, skip = count > keep ? count - keep : 0; skip; skip--)
		history_next(&text, &pos, &l, &len);
	rc = reg_replace(reg, job, name, text.data + pos, text.len - pos);
out:
	buf_free(&old);
	buf_free(&text);
	free(name);
	return rc;
}
