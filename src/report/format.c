/* format: the formats of jobreg-get (see format.h). */
#include "report/format.h"
#include "liveness/slotview.h"
#include "registry/line.h"
#include "record/transition.h"
#include "registry/history.h"
#include "util/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void format_plain(struct buf *out, const char *job, enum status status, int with_id)
{
	buf_addf(out, "%s%s%s\n", with_id ? job : "", with_id ? " " : "", status_word(status));
}

/* One column for people: "-" when empty; a tab (of a hand-written record)
 * as a space so the columns hold, other controls escaped (a shared
 * registry's writer must not drive the reader's terminal). */
static void add_column(struct buf *out, const char *value, char end)
{
	if (!value || !*value)
		value = "-";
	for (;;) {
		size_t n = strcspn(value, "\t");
		text_escape(out, value, n, ESCAPE_TEXT);
		value += n;
		if (!*value++)
			break;
		buf_addc(out, ' ');
	}
	buf_addc(out, end);
}

/* How a run ended: SIG and the signal's name, else the exit status. */
static void add_exit_column(struct buf *out, const char *sig, const char *exit_status)
{
	if (sig)
		buf_adds(out, "SIG");
	add_column(out, sig ? sig : exit_status, '\t');
}

void format_long(struct buf *out, const char *job, const struct record *r,
		 enum status status)
{
	static const char *const columns[] = { "since", "owner", "host", "pid" };
	buf_addf(out, "%s\t%s\t", job, status_word(status));
	if (!r || r->count == 0) {
		buf_adds(out, "-\t-\t-\t-\t-\t-\n");
		return;
	}
	for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
		add_column(out, record_get(r, columns[i]), '\t');
	add_exit_column(out, record_get(r, "signal"), record_get(r, "exit"));
	add_column(out, record_get(r, "note"), '\n');
}

/* json_string() of LEN bytes, NUL escaped too; a byte that begins no
 * UTF-8 sequence is U+FFFD, so the text is always valid JSON. */
static void json_string_n(struct buf *out, const char *s, size_t len)
{
	buf_addc(out, '"');
	text_escape(out, s, len, ESCAPE_JSON);
	buf_addc(out, '"');
}

void json_string(struct buf *out, const char *s)
{
	json_string_n(out, s, strlen(s));
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

/* How JSON gives a key of a record or a history line: RESERVED, a member
 * the writer adds itself (a record's key of that name is left out);
 * NUMBER, a decimal; FLAG, a decimal, true when not 0. */
enum json_kind { JSON_STRING, JSON_RESERVED, JSON_NUMBER, JSON_FLAG };
static enum json_kind json_kind(const char *key)
{
	static const char *const reserved[] = {
		"job", "stale", "corrupt", "unreadable", "duration", "late", "paused",
		"waiting", "next_due", "overdue", "health",
	};
	static const char *const numbers[] = {
		"version", "pid", "pid_start", "exit", "runs", "failures", "pid_ns",
		"time_ns", "run_lock", "timeout", "attempt", "lost", "consecutive_failures",
		"late_after", "keep_runs", "cancel_run", "cancel_kill_after", "cancelled_runs",
		"skipped", "coalesced", "wait_next", "wait_head", "replaced_below", "every",
		"overdue_after", "min_duration", "warnings", "last_success_run", "notify_after",
		"notifier_pid", "notify_failures",
	};
	static const char *const flags[] = { "timed_out", "cancelled", "last_success_warning" };
	if (one_of(key, reserved, sizeof reserved / sizeof reserved[0]))
		return JSON_RESERVED;
	if (one_of(key, numbers, sizeof numbers / sizeof numbers[0]))
		return JSON_NUMBER;
	/* (not a list: ok_exit, warn_exit, after, after_seen are strings) */
	return one_of(key, flags, sizeof flags / sizeof flags[0]) ? JSON_FLAG : JSON_STRING;
}

/* Is V a decimal, a fraction allowed ("90", "0.5")?  A key the parser
 * does not check (every, from newer dispatchers) may be no number. */
static int decimal(const char *v)
{
	size_t n = strspn(v, "0123456789");
	return n && (!v[n] || (v[n] == '.' && v[n + 1] && !v[n + 1 + strspn(v + n + 1, "0123456789")]));
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

/* V (LEN bytes) as a number or flag of KIND when NUMERIC, else a string. */
static void json_value(struct buf *out, enum json_kind kind, const char *v, size_t len,
		       int numeric)
{
	if (numeric && kind == JSON_NUMBER)
		json_number(out, v);
	else if (numeric && kind == JSON_FLAG)
		buf_adds(out, v[strspn(v, "0")] ? "true" : "false");
	else
		json_string_n(out, v, len);
}

void format_json(struct buf *out, const char *job, const struct record *r,
		 enum status status, const struct job_flags *x)
{
	buf_adds(out, "{\"job\": ");
	json_string(out, job);
	if (status == ST_CORRUPT || status == ST_UNREADABLE) {
		buf_addf(out, ", \"%s\": true}\n", status == ST_CORRUPT ? "corrupt" : "unreadable");
		return;
	}
	if (!r || r->count == 0) {
		/* (no record: paused by the registry's pause, if at all) */
		buf_adds(out, ", \"status\": ");
		json_string(out, status_word(status));
		buf_addf(out, "%s, \"health\": \"%s\"}\n", x->paused ? ", \"paused\": true" : "",
			 health_word(x->health));
		return;
	}
	size_t *idx = xmalloc((r->count + 1) * sizeof *idx);
	record_order(r, idx);
	for (size_t i = 0; i < r->count; i++) {
		const struct field *f = &r->fields[idx[i]];
		enum json_kind kind = json_kind(f->key);
		if (kind == JSON_RESERVED)
			continue;
		buf_adds(out, ", ");
		json_string(out, f->key);
		buf_adds(out, ": ");
		if (strcmp(f->key, "status") == 0)
			json_string(out, status_word(status));
		else
			json_value(out, kind, f->value, strlen(f->value),
				   kind == JSON_FLAG || decimal(f->value));
	}
	free(idx);
	long long seconds;
	if (status == ST_DONE && record_duration(r, &seconds) == 0)
		buf_addf(out, ", \"duration\": %lld", seconds);
	if (status == ST_STALE)
		buf_adds(out, ", \"stale\": true");
	if (x->overdue)
		buf_adds(out, ", \"overdue\": true");
	if (x->late)
		buf_adds(out, ", \"late\": true");
	if (x->paused)
		buf_adds(out, ", \"paused\": true");
	if (x->waiting)
		buf_addf(out, ", \"waiting\": %llu", x->waiting);
	char due[21];
	if (format_next_due(r, due) == 1)
		buf_addf(out, ", \"next_due\": \"%s\"", due);
	buf_addf(out, ", \"health\": \"%s\"}\n", health_word(x->health));
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

/* A key=value pair of a history line; NAME is the key as JSON reads it
 * back: itself, or a copy with U+FFFD for its bytes that are not UTF-8. */
struct pair {
	const char *name, *value;
	size_t nlen, vlen;
	size_t copy;   /* the copy's place in the copies, or NO_COPY */
};
#define NO_COPY ((size_t)-1)

/* By key, then by place in the line. */
static int pair_order(const void *a, const void *b)
{
	const struct pair *p = *(const struct pair *const *)a, *q = *(const struct pair *const *)b;
	int c = memcmp(p->name, q->name, p->nlen < q->nlen ? p->nlen : q->nlen);
	if (c)
		return c;
	if (p->nlen != q->nlen)
		return p->nlen < q->nlen ? -1 : 1;
	return p < q ? -1 : p > q;
}

/* KEY (LEN bytes) with U+FFFD, as UTF-8, for each byte that begins no
 * UTF-8 sequence, appended to COPIES (as json_string_n() writes it). */
static void add_key_copy(struct buf *copies, const char *key, size_t len)
{
	for (const char *end = key + len; key < end;) {
		size_t n = utf8_seq(key, (size_t)(end - key));
		if (n)
			buf_add(copies, key, n);
		else
			buf_adds(copies, "\xef\xbf\xbd");
		key += n ? n : 1;
	}
}

/* The pairs of the line into *PAIRS, in order, each key once with its
 * first value as history_get() reads it (a sort, not a scan per key: a
 * damaged line may be megabytes long); keys as JSON gives them, so two
 * alike in U+FFFD are one (COPIES holds such copies).  Returns how many. */
static size_t line_pairs(const char *line, size_t len, struct pair **pairs, struct buf *copies)
{
	size_t count = 0, kept = 0;
	for (size_t i = 0; i <= len; i++)
		count += i == len || line[i] == ' ';
	struct pair *p = xmalloc(count * sizeof *p);
	struct pair **by_key = xmalloc(count * sizeof *by_key); // NOLINT(bugprone-sizeof-expression): an array of pointers
	count = 0;
	for (size_t i = 0; i < len;) {
		const char *at = line + i, *sp = memchr(at, ' ', len - i);
		size_t n = sp ? (size_t)(sp - at) : len - i;
		const char *eq = memchr(at, '=', n);
		i += n + 1;
		if (eq && eq > at) {
			size_t klen = (size_t)(eq - at);
			p[count] = (struct pair){ .name = at, .value = eq + 1, .nlen = klen,
						  .vlen = n - klen - 1, .copy = NO_COPY };
			if (!utf8_valid(at, klen)) {
				p[count].copy = copies->len;
				add_key_copy(copies, at, klen);
				p[count].nlen = copies->len - p[count].copy;
			}
			by_key[count] = &p[count];
			count++;
		}
	}
	/* (COPIES grew as it went: its place is known now) */
	for (size_t i = 0; i < count; i++)
		if (p[i].copy != NO_COPY)
			p[i].name = copies->data + p[i].copy;
	qsort(by_key, count, sizeof *by_key, pair_order); // NOLINT(bugprone-sizeof-expression): as above
	for (size_t i = 1; i < count; i++)
		if (by_key[i]->nlen == by_key[i - 1]->nlen &&
		    memcmp(by_key[i]->name, by_key[i - 1]->name, by_key[i]->nlen) == 0)
			by_key[i]->value = NULL;   /* a repeat */
	for (size_t i = 0; i < count; i++)
		if (p[i].value)
			p[kept++] = p[i];
	free(by_key);
	*pairs = p;
	return kept;
}

/* The JSON object of a history line: its pairs in order. */
static void history_json(struct buf *out, const char *job, const char *line, size_t len)
{
	struct buf key = {0}, value = {0}, copies = {0};
	struct pair *pairs;
	size_t count = line_pairs(line, len, &pairs, &copies);
	buf_adds(out, "{\"job\": ");
	json_string(out, job);
	for (size_t i = 0; i < count; i++) {
		const struct pair *p = &pairs[i];
		/* NUL-terminated copies to compare (up to a NUL a damaged
		 * line may hold); the bytes are written whole. */
		buf_reset(&key);
		buf_add(&key, p->name, p->nlen);
		buf_reset(&value);
		buf_add(&value, p->value, p->vlen);
		enum json_kind kind = json_kind(key.data);
		if (strcmp(key.data, "duration") == 0 || strcmp(key.data, "run") == 0)
			kind = JSON_NUMBER;   /* a history line's own */
		else if (kind == JSON_RESERVED)
			continue;
		buf_adds(out, ", ");
		json_string_n(out, p->name, p->nlen);
		buf_adds(out, ": ");
		json_value(out, kind, value.data, p->vlen,
			   p->vlen && strspn(value.data, "0123456789") == p->vlen);
	}
	buf_adds(out, "}\n");
	free(pairs);
	buf_free(&copies);
	buf_free(&key);
	buf_free(&value);
}

void format_history(struct buf *out, int json, const char *job, const char *line, size_t len)
{
	static const char *const columns[] = { "run", "outcome", "started", "ended", "duration" };
	struct buf v = {0}, sig = {0};
	if (json) {
		history_json(out, job, line, len);
		return;
	}
	add_column(out, job, '\t');
	for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
		add_column(out, hist_value(line, len, columns[i], &v), '\t');
	add_exit_column(out, hist_value(line, len, "signal", &sig), hist_value(line, len, "exit", &v));
	add_column(out, hist_value(line, len, "host", &v), '\t');
	add_column(out, hist_value(line, len, "pid", &v), '\n');
	buf_free(&v);
	buf_free(&sig);
}

/* A field of a line of --slots or --line: its JSON member (NULL: a
 * column for people only), its value (NULL: "-" for people, no member)
 * and whether JSON writes it as a number when it is one. */
struct out_field {
	const char *name, *value;
	int number;
};

/* FIELDS as tab-separated columns, or with JSON as one object. */
static void format_fields(struct buf *out, const struct out_field *f, size_t n, int json)
{
	const char *sep = "{";
	for (size_t i = 0; i < n; i++) {
		const char *v = f[i].value;
		if (!json) {
			add_column(out, v, i + 1 < n ? '\t' : '\n');
			continue;
		}
		if (!f[i].name || !v)
			continue;
		buf_addf(out, "%s\"%s\": ", sep, f[i].name);
		sep = ", ";
		json_value(out, f[i].number ? JSON_NUMBER : JSON_STRING, v, strlen(v),
			   v[strspn(v, "0123456789")] == '\0' && strlen(v) <= 20);
	}
	if (json)
		buf_adds(out, "}\n");
}

void format_slot(struct buf *out, const struct slot_view *v, int json)
{
	char slot[24], run[24];
	snprintf(slot, sizeof slot, "%lu", v->slot);
	snprintf(run, sizeof run, "%llu", v->run);
	const struct out_field f[] = {
		{ "group", v->group, 0 }, { "slot", slot, 1 },
		{ "state", v->job ? "held" : "free", 0 }, { "job", v->job, 0 },
		{ "run", v->job ? run : NULL, 1 }, { "host", v->host, 0 }, { "pid", v->pid, 1 },
	};
	format_fields(out, f, sizeof f / sizeof f[0], json);
}

/* A value of a waiter's place file; "-" is what it lacks. */
static const char *given(const char *v)
{
	return strcmp(v, "-") == 0 ? NULL : v;
}

void format_place(struct buf *out, const char *job, const struct line_entry *e, int json)
{
	char place[24];
	snprintf(place, sizeof place, "%llu", e->n);
	const struct out_field f[] = {
		{ "job", job, 0 }, { "place", place, 1 }, { "kind", given(e->first), 0 },
		{ "host", given(e->host), 0 }, { "pid", given(e->pid), 1 },
		{ "since", given(e->since), 0 },
	};
	format_fields(out, f, sizeof f / sizeof f[0], json);
}

/* (the columns of a slot: its run's is empty) */
void format_slot_waiter(struct buf *out, const char *group, const struct line_entry *e,
			int json)
{
	char place[24];
	snprintf(place, sizeof place, "%llu", e->n);
	const struct out_field f[] = {
		{ "group", group, 0 }, { "place", place, 1 }, { "state", "waiting", 0 },
		{ "job", given(e->first), 0 }, { NULL, NULL, 0 }, { "host", given(e->host), 0 },
		{ "pid", given(e->pid), 1 }, { "since", given(e->since), 0 },
	};
	format_fields(out, f, sizeof f / sizeof f[0], json);
}

int format_next_due(const struct record *r, char due[21])
{
	const char *every = r ? record_get(r, "every") : NULL;
	char *end;
	time_t t;
	if (!every || !*every)
		return -1;
	double period = strtod(every, &end);
	if (*end || !(period > 0) || period > 1e12)
		return -1;
	if (record_time(r, "last_success_started", &t) < 0)
		return 0;
	time_format(t + (time_t)period + (period > (double)(time_t)period), due);
	return 1;
}
