#include "registry/history.h"
#include "record/transition.h"
#include "util/msg.h"
#include "util/utf8.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* " KEY=VALUE" when R has KEY with a value free of spaces (SPEC §3a). */
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

/* The time KEY of the line into WHEN ("" when none or not valid). */
static void copy_time(const char *line, size_t len, const char *key, char when[21])
{
	const char *v;
	size_t n;
	time_t t;
	when[0] = '\0';
	if (!history_get(line, len, key, &v, &n) || n != 20)
		return;
	memcpy(when, v, n);
	when[n] = '\0';
	if (time_parse(when, &t) < 0)
		when[0] = '\0';
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

/* The run of LINE into *RUN; 0 for a damaged line (HISTORY_MAX). */
static int line_run(const char *line, size_t len, unsigned long long *run)
{
	const char *v;
	size_t n;
	return history_get(line, len, "run", &v, &n) && parse_digits(v, n, ULLONG_MAX, run) == 0 &&
	       !memchr(line, '\0', len) && utf8_valid(line, len);
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

/* What a writer's read of a history left out of it. */
struct left_out {
	int too_large;
	size_t damaged;
};

/* JOB's history NAME, as a writer reads it, into DATA: the lines of runs
 * only, *LEFT saying what was left out (HISTORY_MAX; store() tells).  Only
 * an error reading it is an error (its exit status). */
static int load(const struct registry *reg, const char *job, const char *name,
		struct buf *data, struct left_out *left)
{
	struct buf raw = {0};
	const char *l;
	size_t pos = 0, len;
	unsigned long long run;
	int found, rc = reg_read(reg, job, name, HISTORY_MAX, &raw, &found);

	buf_reset(data);
	*left = (struct left_out){ .too_large = !rc && found && raw.len > HISTORY_MAX };
	if (left->too_large)
		buf_reset(&raw);
	while (!rc && history_next(&raw, &pos, &l, &len)) {
		if (!line_run(l, len, &run)) {
			left->damaged++;
			continue;
		}
		buf_add(data, l, len);
		buf_addc(data, '\n');
	}
	buf_free(&raw);
	return rc;
}

/* Write the last KEEP lines of TEXT (0: remove the file) as JOB's history
 * NAME, warning of what LEFT left out (outside the caller's message
 * context: not part of what that says). */
static int store(const struct registry *reg, const char *job, const char *name,
		 const struct buf *text, unsigned long keep, const struct left_out *left)
{
	const char *l;
	size_t pos = 0, len, count = 0, skip;
	const char *was_context = message_context(NULL);
	if (left->too_large)
		warn(job, "%s is over %u bytes: begun again", reg_path(reg, name), HISTORY_MAX);
	if (left->damaged)
		warn(job, "%s: %zu damaged line%s left out", reg_path(reg, name), left->damaged,
		     left->damaged == 1 ? "" : "s");
	message_context(was_context);
	if (keep == 0) {
		if (unlinkat(reg->fd, name, 0) < 0 && errno != ENOENT)
			return fail_errno(errno, job, "remove %s", reg_path(reg, name));
		return 0;
	}
	while (history_next(text, &pos, &l, &len))
		count++;
	for (pos = 0, skip = count > keep ? count - keep : 0; skip; skip--)
		history_next(text, &pos, &l, &len);
	return reg_replace(reg, job, name, text->data + pos, text->len - pos);
}

/* Is the outcome of LINE (LEN bytes) WORD? */
static int outcome_is(const char *line, size_t len, const char *word)
{
	const char *v;
	size_t n;
	return history_get(line, len, "outcome", &v, &n) && n == strlen(word) &&
	       memcmp(v, word, n) == 0;
}

int history_put(const struct registry *reg, const char *job, unsigned long long run,
		const char *line, unsigned long keep, const char *keep_same)
{
	char *name = reg_dot_name(job, HISTORY_SUFFIX);
	struct buf old = {0}, text = {0};
	const char *l;
	size_t pos = 0, len;
	unsigned long long r;
	struct left_out left = {0};
	int placed = 0, rc = 0;

	if (keep && (rc = load(reg, job, name, &old, &left)) != 0)
		goto out;
	/* The lines as they will be: LINE in place of its run's, else last. */
	while (history_next(&old, &pos, &l, &len)) {
		if (line_run(l, len, &r) && r == run) {
			if (keep_same && outcome_is(l, len, keep_same))
				goto out;
			if (placed)
				continue;
			l = line;
			len = strlen(line);
			placed = 1;
		}
		buf_add(&text, l, len);
		buf_addc(&text, '\n');
	}
	if (!placed) {
		buf_adds(&text, line);
		buf_addc(&text, '\n');
	}
	rc = store(reg, job, name, &text, keep, &left);
out:
	buf_free(&old);
	buf_free(&text);
	free(name);
	return rc;
}

int history_trim(const struct registry *reg, const char *job, unsigned long keep)
{
	char *name = reg_dot_name(job, HISTORY_SUFFIX);
	struct buf text = {0};
	struct left_out left = {0};
	const char *l;
	size_t pos = 0, len, count = 0;
	int rc = keep ? load(reg, job, name, &text, &left) : 0;

	while (history_next(&text, &pos, &l, &len))
		count++;
	/* Written only when that changes it. */
	if (!rc && (keep == 0 || count > keep || left.too_large || left.damaged))
		rc = store(reg, job, name, &text, keep, &left);
	buf_free(&text);
	free(name);
	return rc;
}

int history_before(const struct registry *reg, const char *job, const struct record *r,
		   const struct run_result *end, struct before_run *b)
{
	char *name;
	struct buf text = {0};
	struct left_out left;
	const char *l;
	size_t pos = 0, len;
	unsigned long long run, of = record_count(r, "runs"), last_ok = 0;
	int rc, ok = 0;

	memset(b, 0, sizeof *b);
	/* Only a correction that makes an OK or WARNING run FAILED needs it. */
	if (!record_get(r, "status") || record_status(r) != ST_DONE ||
	    (record_outcome(r) != OUTCOME_OK && record_outcome(r) != OUTCOME_WARNING) ||
	    !(end->signal_name || end->timed_out || end->exit_status > 0))
		return 0;
	name = reg_dot_name(job, HISTORY_SUFFIX);
	rc = load(reg, job, name, &text, &left);
	/* By run number, whatever the order of the lines. */
	while (!rc && history_next(&text, &pos, &l, &len))
		if (line_run(l, len, &run) && run < of && (!ok || run > last_ok) &&
		    (outcome_is(l, len, "OK") || outcome_is(l, len, "WARNING"))) {
			ok = 1;
			last_ok = run;
			copy_time(l, len, "ended", b->last_success);
			copy_time(l, len, "started", b->last_success_started);
			b->last_success_run = run;
			b->last_success_warning = outcome_is(l, len, "WARNING");
		}
	for (pos = 0; !rc && history_next(&text, &pos, &l, &len);)
		if (line_run(l, len, &run) && run < of && (!ok || run > last_ok) &&
		    (outcome_is(l, len, "FAILED") || outcome_is(l, len, "LOST")))
			b->consecutive_failures++;
	buf_free(&text);
	free(name);
	return rc;
}
