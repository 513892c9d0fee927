#include "report/format.h"
#include "registry/history.h"
#include "util/signame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void format_plain(struct buf *out, const char *job, enum status status, int with_id)
{
	if (with_id) {
		buf_adds(out, job);
		buf_addc(out, ' ');
	}
	buf_adds(out, status_word(status));
	buf_addc(out, '\n');
}

/* One -l column: "-" when empty; a tab of a hand-written record would
 * shift the columns, so it is shown as a space. */
static void add_column(struct buf *out, const char *value, char end)
{
	if (!value || !*value)
		value = "-";
	for (;;) {
		size_t n = strcspn(value, "\t");
		buf_add(out, value, n);
		value += n;
		if (!*value++)
			break;
		buf_addc(out, ' ');
	}
	buf_addc(out, end);
}

void format_long(struct buf *out, const char *job, const struct record *r,
		 enum status status)
{
	buf_adds(out, job);
	buf_addc(out, '\t');
	buf_adds(out, status_word(status));
	buf_addc(out, '\t');
	if (!r || r->count == 0) {
		buf_adds(out, "-\t-\t-\t-\t-\t-\n");
		return;
	}
	const char *sig_word = record_get(r, "signal");
	add_column(out, record_get(r, "since"), '\t');
	add_column(out, record_get(r, "owner"), '\t');
	add_column(out, record_get(r, "host"), '\t');
	add_column(out, record_get(r, "pid"), '\t');
	if (sig_word) {
		buf_adds(out, "SIG");
		add_column(out, sig_word, '\t');
	} else {
		add_column(out, record_get(r, "exit"), '\t');
	}
	add_column(out, record_get(r, "note"), '\n');
}

void json_string(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	buf_addc(out, '"');
	for (; *s; s++) {
		/* The plain bytes up to the next one to escape, at once. */
		size_t plain = 0;
		while ((unsigned char)s[plain] >= 0x20 && s[plain] != '"' && s[plain] != '\\' &&
		       s[plain] != 0x7f)
			plain++;
		buf_add(out, s, plain);
		s += plain;
		if (!*s)
			break;
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"': buf_adds(out, "\\\""); break;
		case '\\': buf_adds(out, "\\\\"); break;
		case '\n': buf_adds(out, "\\n"); break;
		case '\t': buf_adds(out, "\\t"); break;
		case '\r': buf_adds(out, "\\r"); break;
		default: {   /* the other control bytes */
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			buf_add(out, esc, sizeof esc);
		}
		}
	}
	buf_addc(out, '"');
}

/* Is KEY one of the N words of LIST?  The first byte first: this runs for
 * every field of every record of a listing. */
static int one_of(const char *key, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i][0] == key[0] && strcmp(key, list[i]) == 0)
			return 1;
	return 0;
}

/* Members the writer adds itself: a record's unknown key of that name
 * is left out. */
static int json_reserved(const char *key)
{
	static const char *const reserved[] = {
		"job", "stale", "corrupt", "unreadable", "duration", "late",
	};
	return one_of(key, reserved, sizeof reserved / sizeof reserved[0]);
}

/* Keys the parser checks are decimal numbers (timeout with a fraction;
 * version is 1). */
static int json_number_key(const char *key)
{
	static const char *const numbers[] = {
		"version", "pid", "pid_start", "exit", "runs", "failures", "pid_ns",
		"time_ns", "run_lock", "timeout", "attempt", "lost", "consecutive_failures",
		"late_after", "keep_runs",
	};
	return one_of(key, numbers, sizeof numbers / sizeof numbers[0]);
}

/* Flags: checked decimals, true when not 0. */
static int json_flag_key(const char *key)
{
	return strcmp(key, "timed_out") == 0;
}

void json_number(struct buf *out, const char *v)
{
	size_t n = strspn(v, "0123456789");
	const char *frac = v[n] == '.' ? v + n + 1 : "";
	while (n > 1 && *v == '0')
		v++, n--;
	if (n)
		buf_add(out, v, n);
	else
		buf_addc(out, '0');
	if (*frac) {
		buf_addc(out, '.');
		buf_adds(out, frac);
	}
}

/* ended - started of a DONE record, when it has both. */
static int duration(const struct record *r, long long *seconds)
{
	const char *started = record_get(r, "started"), *ended = record_get(r, "ended");
	time_t from, to;
	if (!started || !ended || time_parse(started, &from) < 0 || time_parse(ended, &to) < 0)
		return -1;
	*seconds = (long long)to - (long long)from;
	return 0;
}

void format_json(struct buf *out, const char *job, const struct record *r,
		 enum status status, int late)
{
	buf_adds(out, "{\"job\": ");
	json_string(out, job);
	if (status == ST_CORRUPT || status == ST_UNREADABLE) {
		buf_addf(out, ", \"%s\": true}\n", status == ST_CORRUPT ? "corrupt" : "unreadable");
		return;
	}
	if (!r || r->count == 0) {
		buf_adds(out, ", \"status\": ");
		json_string(out, status_word(status));
		buf_adds(out, "}\n");
		return;
	}
	size_t *idx = xmalloc((r->count + 1) * sizeof *idx);
	record_order(r, idx);
	for (size_t i = 0; i < r->count; i++) {
		const struct field *f = &r->fields[idx[i]];
		if (json_reserved(f->key))
			continue;
		buf_adds(out, ", ");
		json_string(out, f->key);
		buf_adds(out, ": ");
		if (strcmp(f->key, "status") == 0)
			json_string(out, status_word(status));
		else if (json_number_key(f->key))
			json_number(out, f->value);
		else if (json_flag_key(f->key))
			buf_adds(out, f->value[strspn(f->value, "0")] ? "true" : "false");
		else
			json_string(out, f->value);
	}
	free(idx);
	long long seconds;
	if (status == ST_DONE && duration(r, &seconds) == 0)
		buf_addf(out, ", \"duration\": %lld", seconds);
	if (status == ST_STALE)
		buf_adds(out, ", \"stale\": true");
	if (late)
		buf_adds(out, ", \"late\": true");
	buf_adds(out, "}\n");
}

/* ---- run history (SPEC §3a, get --history) ----------------------------- */

/* The value of KEY in a history line, as a string (NULL: none). */
static const char *hist_value(const char *line, size_t len, const char *key, struct buf *v)
{
	const char *p;
	size_t n;
	buf_reset(v);
	if (!history_get(line, len, key, &p, &n) || n == 0)
		return NULL;
	buf_add(v, p, n);
	return v->data;
}

void format_history(struct buf *out, int json, const char *job, const char *line, size_t len)
{
	static const char *const columns[] = { "run", "outcome", "started", "ended", "duration" };
	struct buf v = {0};
	if (json) {
		buf_adds(out, "{\"job\": ");
		json_string(out, job);
		for (size_t i = 0; i < len;) {
			size_t n = strcspn(line + i, " ");
			if (n > len - i)
				n = len - i;
			const char *eq = memchr(line + i, '=', n);
			if (eq && eq > line + i) {
				struct buf key = {0};
				buf_add(&key, line + i, (size_t)(eq - line - i));
				buf_reset(&v);
				buf_add(&v, eq + 1, n - (size_t)(eq - line - i) - 1);
				if (!json_reserved(key.data) || strcmp(key.data, "duration") == 0) {
					buf_adds(out, ", ");
					json_string(out, key.data);
					buf_adds(out, ": ");
					/* (a history line's own numbers too: run, duration) */
					if ((json_number_key(key.data) || strcmp(key.data, "duration") == 0 ||
					     strcmp(key.data, "run") == 0) &&
					    v.len && strspn(v.data, "0123456789") == v.len)
						json_number(out, v.data);
					else if (json_flag_key(key.data))
						buf_adds(out, v.data[strspn(v.data, "0")] ? "true" : "false");
					else
						json_string(out, v.data ? v.data : "");
				}
				buf_free(&key);
			}
			i += n + 1;
		}
		buf_adds(out, "}\n");
		buf_free(&v);
		return;
	}
	add_column(out, job, '\t');
	for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
		add_column(out, hist_value(line, len, columns[i], &v), '\t');
	if (hist_value(line, len, "signal", &v)) {
		buf_adds(out, "SIG");
		add_column(out, v.data, '\t');
	} else {
		add_column(out, hist_value(line, len, "exit", &v), '\t');
	}
	add_column(out, hist_value(line, len, "host", &v), '\t');
	add_column(out, hist_value(line, len, "pid", &v), '\n');
	buf_free(&v);
}


