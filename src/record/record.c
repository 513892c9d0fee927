#include "record/record.h"
#include "record/outcome.h"
#include "record/after.h"
#include "util/signame.h"
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

/* SPEC §3 key order; unknown keys follow, in the order they came. */
enum known_key {
	K_VERSION, K_STATUS, K_SINCE, K_OWNER, K_HOST, K_PID, K_PID_START, K_BOOT_ID, K_PID_NS,
	K_TIME_NS, K_RUN_LOCK, K_EXPIRES, K_TIMEOUT, K_STARTED, K_ENDED, K_EXIT, K_SIGNAL,
	K_TIMED_OUT, K_ATTEMPT, K_RETRY_AT, K_CANCEL_RUN, K_CANCEL_SIGNAL, K_CANCEL_KILL_AFTER,
	K_CANCEL_BY, K_CANCEL_AT, K_CANCEL_SEEN, K_CANCEL_MISSED, K_OUTCOME, K_CANCELLED,
	K_CANCELLED_BY, K_RETRIES_CANCELLED_BY, K_SLOTS, K_CMD, K_RUNS, K_FAILURES, K_LOST,
	K_CONSECUTIVE_FAILURES, K_LAST_SUCCESS, K_LAST_SUCCESS_STARTED, K_LAST_SUCCESS_RUN,
	K_LAST_SUCCESS_WARNING, K_CANCELLED_RUNS, K_WARNINGS, K_SKIPPED, K_LAST_SKIPPED,
	K_SKIP_REASON, K_COALESCED, K_WAIT_NEXT, K_WAIT_HEAD, K_REPLACED_BELOW, K_PAUSED_UNTIL,
	K_PAUSED_BY, K_PAUSED_NOTE, K_EVERY, K_LATE_AFTER, K_OVERDUE_AFTER, K_OK_EXIT, K_WARN_EXIT,
	K_MIN_DURATION, K_AFTER, K_AFTER_SEEN, K_NOTIFY_AFTER, K_NOTIFIED, K_NOTIFIED_AT, K_NOTIFYING,
	K_NOTIFIER_HOST, K_NOTIFIER_PID, K_NOTIFIER_UNTIL, K_NOTIFY_FAILURES, K_NOTIFY_RETRY_AT,
	K_LATE_FROM, K_KEEP_RUNS, K_NOTE, KNOWN_COUNT
};
static const char *const known_keys[KNOWN_COUNT] = {
	"version", "status", "since", "owner", "host", "pid", "pid_start", "boot_id", "pid_ns",
	"time_ns", "run_lock", "expires", "timeout", "started", "ended", "exit", "signal",
	"timed_out", "attempt", "retry_at", "cancel_run", "cancel_signal", "cancel_kill_after",
	"cancel_by", "cancel_at", "cancel_seen", "cancel_missed", "outcome", "cancelled",
	"cancelled_by", "retries_cancelled_by", "slots", "cmd", "runs", "failures", "lost",
	"consecutive_failures", "last_success", "last_success_started", "last_success_run",
	"last_success_warning", "cancelled_runs", "warnings", "skipped", "last_skipped",
	"skip_reason", "coalesced", "wait_next", "wait_head", "replaced_below", "paused_until",
	"paused_by", "paused_note", "every", "late_after", "overdue_after", "ok_exit", "warn_exit",
	"min_duration", "after", "after_seen", "notify_after", "notified", "notified_at", "notifying",
	"notifier_host", "notifier_pid", "notifier_until", "notify_failures", "notify_retry_at",
	"late_from", "keep_runs", "note",
};

int valid_job_id(const char *id)
{
	size_t n = strspn(id, ALNUM "._@+-");
	return n > 0 && n <= JOB_ID_MAX && id[n] == '\0' && id[0] != '.' && id[0] != '-';
}

void record_init(struct record *r)
{
	*r = (struct record){0};
}

static void free_field(struct field *f)
{
	if (f->owned & OWN_KEY)
		free(f->key);
	if (f->owned & OWN_VALUE)
		free(f->value);
}

void record_free(struct record *r)
{
	for (size_t i = 0; i < r->count; i++)
		free_field(&r->fields[i]);
	free(r->fields);
	free(r->text);
	record_init(r);
}

/* The rank of a LEN-byte key; KNOWN_COUNT if unknown.  The first byte is
 * compared first, here and in find(): listings do this for every record. */
static int key_rank_len(const char *key, size_t len)
{
	for (int i = 0; i < KNOWN_COUNT; i++)
		if (known_keys[i][0] == key[0] && strncmp(known_keys[i], key, len) == 0 &&
		    known_keys[i][len] == '\0')
			return i;
	return KNOWN_COUNT;
}

static struct field *find(const struct record *r, const char *key)
{
	for (size_t i = 0; i < r->count; i++)
		if (r->fields[i].key[0] == key[0] && strcmp(r->fields[i].key, key) == 0)
			return &r->fields[i];
	return NULL;
}

const char *record_get(const struct record *r, const char *key)
{
	struct field *f = find(r, key);
	return f ? f->value : NULL;
}

int record_time(const struct record *r, const char *key, time_t *t)
{
	const char *v = r ? record_get(r, key) : NULL;
	return v && time_parse(v, t) == 0 ? 0 : -1;
}

static void append(struct record *r, char *key, char *value, unsigned char owned, int rank)
{
	if (r->count == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->fields = xrealloc(r->fields, r->cap * sizeof *r->fields);
	}
	r->fields[r->count++] = (struct field){ .key = key, .value = value, .owned = owned,
						.rank = (unsigned char)rank };
}

void record_copy(struct record *dst, const struct record *src)
{
	record_init(dst);
	for (size_t i = 0; i < src->count; i++)
		append(dst, xstrdup(src->fields[i].key), xstrdup(src->fields[i].value),
		       OWN_KEY | OWN_VALUE, src->fields[i].rank);
}

void record_put(struct record *r, const char *key, const char *value)
{
	struct field *f = find(r, key);
	if (f) {
		char *copy = xstrdup(value);
		if (f->owned & OWN_VALUE)
			free(f->value);
		f->value = copy;
		f->owned |= OWN_VALUE;
		return;
	}
	append(r, xstrdup(key), xstrdup(value), OWN_KEY | OWN_VALUE, key_rank_len(key, strlen(key)));
}

int record_drop(struct record *r, const char *key)
{
	struct field *f = find(r, key);
	if (!f)
		return 0;
	free_field(f);
	size_t i = (size_t)(f - r->fields);
	memmove(f, f + 1, (r->count - i - 1) * sizeof *f);
	r->count--;
	return 1;
}

enum status record_status(const struct record *r)
{
	const char *s = record_get(r, "status");
	return s ? (enum status)status_from_word(s, strlen(s), 0) : ST_PENDING;
}

static int is_decimal(const char *s, size_t maxlen)
{
	size_t n = strlen(s);
	return n > 0 && n <= maxlen && strspn(s, "0123456789") == n;
}

/* A non-negative decimal number, a fraction allowed ("90", "0.5"). */
static int is_number(const char *s)
{
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 12)
		return 0;
	if (s[n] == '.') {
		size_t f = strspn(s + n + 1, "0123456789");
		if (f == 0 || f > 9)
			return 0;
		n += 1 + f;
	}
	return s[n] == '\0';
}

/* A key of LEN bytes (K[LEN] is its '='). */
static int key_valid(const char *k, size_t len)
{
	return len > 0 && strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_-.") == len;
}

static int cmp_keys(const void *a, const void *b)
{
	const char *const *ka = a, *const *kb = b;
	return strcmp(*ka, *kb);
}

/* Do N unknown keys repeat?  (Known ones are checked by rank.) */
static int has_duplicate(const char **keys, size_t n)
{
	if (n > 1)
		qsort(keys, n, sizeof *keys, cmp_keys);
	for (size_t i = 1; i < n; i++)
		if (strcmp(keys[i - 1], keys[i]) == 0)
			return 1;
	return 0;
}

/* The values jobreg interprets must be well-formed, or liveness and the
 * JSON numbers could not be trusted.  VAL: each known key's value by rank
 * (NULL: absent); FIRST: the rank of the first key. */
static const char *check_values(const char *const *val, int first, int need_status)
{
	const char *v;
	time_t t;
	unsigned long long n;
	struct exit_set exits;
	static const enum known_key times[] = { K_SINCE, K_STARTED, K_ENDED, K_EXPIRES,
						K_RETRY_AT, K_CANCEL_AT, K_CANCEL_SEEN,
						K_LAST_SUCCESS, K_LAST_SUCCESS_STARTED,
						K_LAST_SKIPPED, K_LATE_FROM, K_NOTIFIED_AT,
						K_NOTIFIER_UNTIL, K_NOTIFY_RETRY_AT };
	static const enum known_key counts[] = { K_PID_NS, K_TIME_NS, K_RUN_LOCK, K_RUNS,
						 K_FAILURES, K_TIMED_OUT, K_ATTEMPT, K_LOST,
						 K_CONSECUTIVE_FAILURES, K_KEEP_RUNS,
						 K_CANCEL_RUN, K_CANCEL_MISSED, K_CANCELLED, K_CANCELLED_RUNS,
						 K_SKIPPED, K_COALESCED, K_WAIT_NEXT, K_WAIT_HEAD,
						 K_REPLACED_BELOW, K_LAST_SUCCESS_RUN,
						 K_LAST_SUCCESS_WARNING, K_WARNINGS, K_NOTIFY_AFTER,
						 K_NOTIFIER_PID, K_NOTIFY_FAILURES };
	static const struct { enum known_key key; const char *why; } seconds[] = {
		{ K_TIMEOUT, "bad timeout" }, { K_EVERY, "bad every" },
		{ K_LATE_AFTER, "bad late_after" }, { K_CANCEL_KILL_AFTER, "bad cancel_kill_after" },
		{ K_OVERDUE_AFTER, "bad overdue_after" }, { K_MIN_DURATION, "bad min_duration" },
	};

	if (first != K_VERSION)
		return "first line is not version=";
	if (strcmp(val[K_VERSION], "1") != 0)
		return "unknown version";
	if (!(v = val[K_STATUS]) && need_status)
		return "no status";
	if (v && status_from_word(v, strlen(v), 0) < 0)
		return "bad status";
	v = val[K_OWNER];
	if (v && strcmp(v, "lock") != 0 && strcmp(v, "pid") != 0)
		return "bad owner";
	if ((v = val[K_PID]) && !is_decimal(v, 10))
		return "bad pid";
	if ((v = val[K_PID_START]) && !is_decimal(v, 20))
		return "bad pid_start";
	if ((v = val[K_EXIT]) && !is_decimal(v, 10))
		return "bad exit";
	if ((v = val[K_OWNER]) && strcmp(v, "pid") == 0 && !val[K_PID])
		return "owner=pid without pid";
	/* (the first three are inode numbers, not counters) */
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		if ((v = val[counts[i]]) && (!is_decimal(v, 20) ||
		    (i >= 3 && parse_digits(v, strlen(v), COUNTER_MAX, &n) < 0)))
			return "bad number";
	for (size_t i = 0; i < sizeof seconds / sizeof seconds[0]; i++)
		if ((v = val[seconds[i].key]) && !is_number(v))
			return seconds[i].why;
	if ((v = val[K_OUTCOME]) && outcome_from_word(v) == OUTCOME_UNKNOWN)
		return "bad outcome";
	if ((v = val[K_OK_EXIT]) && exit_set_parse(v, &exits) < 0)
		return "bad ok_exit";
	if ((v = val[K_WARN_EXIT]) && exit_set_parse(v, &exits) < 0)
		return "bad warn_exit";
	if ((v = val[K_NOTIFIED]) && health_from_word(v) < 0)
		return "bad notified";
	if ((v = val[K_NOTIFYING]) && health_from_word(v) < 0)
		return "bad notifying";
	if (((v = val[K_AFTER]) && !after_list_ok(v)) ||
	    ((v = val[K_AFTER_SEEN]) && !after_seen_ok(v)))
		return "bad after";
	if ((v = val[K_CANCEL_SIGNAL]) && signal_number(v) <= 0)
		return "bad cancel_signal";
	/* A pause may have no end. */
	if ((v = val[K_PAUSED_UNTIL]) && strcmp(v, "inf") != 0 && time_parse(v, &t) < 0)
		return "bad paused_until";
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
		if ((v = val[times[i]]) && time_parse(v, &t) < 0)
			return "bad time";
	return NULL;
}

static int parse(struct record *r, const char *data, size_t len, int need_status,
		 const char **why)
{
	record_init(r);
	/* Keys and values point into one copy of the text ('=', '\n' -> NUL). */
	r->text = xstrndup(data, len);
	char *p = r->text, *end = r->text + len;
	const char *val[KNOWN_COUNT] = {0};   /* by rank */
	const char **unknown = NULL;          /* the other keys */
	size_t nunknown = 0;
	int first = KNOWN_COUNT, dup = 0;

	*why = NULL;
	if (len > RECORD_MAX)
		*why = "larger than 64 KiB";
	else if (len == 0)
		*why = "empty";
	else if (memchr(data, '\0', len))
		*why = "NUL byte";
	else if (!utf8_valid(data, len))
		*why = "invalid UTF-8";
	while (!*why && p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		char *eq = memchr(p, '=', (size_t)(eol - p));
		if (!eq) {
			*why = "line without '='";
			break;
		}
		if (!key_valid(p, (size_t)(eq - p))) {
			*why = "bad key";
			break;
		}
		for (const char *c = eq + 1; c < eol; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t') {
				*why = "control byte in a value";
				break;
			}
		if (*why)
			break;
		*eq = '\0';
		*eol = '\0';
		int rank = key_rank_len(p, (size_t)(eq - p));
		if (r->count == 0)
			first = rank;
		if (rank == KNOWN_COUNT) {
			if ((nunknown & (nunknown - 1)) == 0)
				unknown = xrealloc(unknown, (nunknown ? nunknown * 2 : 1) *
						   sizeof *unknown);
			unknown[nunknown++] = p;
		} else if (val[rank]) {
			dup = 1;   /* reported after the lines' own faults */
		} else {
			val[rank] = eq + 1;
		}
		append(r, p, eq + 1, 0, rank);
		p = nl ? nl + 1 : end;
	}
	if (!*why && (dup || has_duplicate(unknown, nunknown)))
		*why = "duplicate key";
	free(unknown);
	if (!*why)
		*why = check_values(val, first, need_status);
	if (*why) {
		record_free(r);
		return -1;
	}
	return 0;
}

int record_parse(struct record *r, const char *data, size_t len, const char **why)
{
	return parse(r, data, len, 1, why);
}

int record_parse_settings(struct record *r, const char *data, size_t len, const char **why)
{
	return parse(r, data, len, 0, why);
}

/* A counting sort by rank: stable, so unknown keys keep their order, and
 * linear (a search per rank was most of a fuzzer's time). */
void record_order(const struct record *r, size_t *idx)
{
	size_t next[KNOWN_COUNT + 2] = {0};
	for (size_t i = 0; i < r->count; i++)
		next[r->fields[i].rank + 1]++;
	for (size_t k = 1; k <= KNOWN_COUNT; k++)
		next[k] += next[k - 1];
	for (size_t i = 0; i < r->count; i++)
		idx[next[r->fields[i].rank]++] = i;
}

int record_format(const struct record *r, struct buf *out)
{
	size_t start = out->len;
	size_t *idx = xmalloc((r->count + 1) * sizeof *idx);
	record_order(r, idx);
	for (size_t i = 0; i < r->count; i++) {
		buf_adds(out, r->fields[idx[i]].key);
		buf_addc(out, '=');
		buf_adds(out, r->fields[idx[i]].value);
		buf_addc(out, '\n');
	}
	free(idx);
	return out->len - start > RECORD_MAX ? -1 : 0;
}
