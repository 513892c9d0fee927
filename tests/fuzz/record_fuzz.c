/* record_fuzz: a libFuzzer harness for the record parser, formatter, JSON
 * writer and time functions of src/record/record.c (SPEC §3).
 *
 * Every input is fed to record_parse.  The harness then checks:
 *
 *   - record_parse agrees with an independent reference model of SPEC §3
 *     (accept exactly what the model accepts, and keep every line, in order);
 *   - on failure: *why is set and the record holds nothing;
 *   - on success: record_format's text parses again and re-formats to the
 *     identical bytes (round trip), and is a permutation of the input's lines
 *     in canonical key order;
 *   - format_json (src/report/format.c), for every status (and with no record), writes exactly one
 *     line holding one well-formed JSON object: a small validating scanner
 *     of our own (balanced strings, legal escapes only, no raw control bytes,
 *     valid UTF-8, numbers per RFC 8259, unique member names) that also
 *     decodes every member back and compares it with the record's fields
 *     (0.5's counters and settings numbers, last_success_warning a boolean,
 *     the exit lists and after strings; "overdue" as the reader says,
 *     "health" last for every job, with a record or not);
 *   - record_to_pending / record_to_running (no owner, a dispatcher's lock,
 *     a pid, and a renewal by the record's own owner; with and without a
 *     TTL and a time limit) / record_to_done (exit statuses, signals, time
 *     limits), alone and chained, leave a record whose text parses, whose
 *     keys are in canonical order, and which holds what SPEC §3 says the
 *     transition writes, keeps and drops: the owner's fields, pid_ns,
 *     time_ns and run_lock as given (absent when 0), timeout to the
 *     nanosecond, and the history surviving every transition — runs only
 *     grows (by one for a new run, not for a renewal; never wrapping),
 *     failures counts the FAILED ends (a run's once, whatever the
 *     corrections: a FAILED run corrected to OK takes it back),
 *     last_success and last_success_started are the last OK one's ended
 *     and started (dropped when that run is corrected to FAILED);
 *     The keys of 0.4: a run's cancel_* and slots go with DONE and a new
 *     run, its cmd with a new run and PENDING; cancelled_runs counts the
 *     cancelled ends (a correction takes one back); skipped, coalesced,
 *     the line's numbers and the pause are kept by every transition;
 *     The keys of 0.5: DONE writes outcome, judged by the record's
 *     ok_exit and warn_exit (a reference judge; and outcome_judge, as a
 *     dispatcher gives it, with min_duration, against it); OK and WARNING
 *     are successes (last_success, last_success_run, last_success_warning,
 *     warnings counted once whatever the corrections), and a success
 *     corrected to FAILED gives back what came before it;
 *   - record_outcome and status_in agree with SPEC §2's OK / WARNING /
 *     FAILED / CANCELLED (outcome= first) and status lists (OVERDUE too),
 *     and record_run_result / run_result_status (what --once replays: OK
 *     and WARNING as 0, a cancelled or FAILED run never as 0) with the
 *     record's fields and its outcome, for the input and every record a
 *     transition makes;
 *   - utf8_valid and note_problem agree with reference implementations;
 *   - shquote_argv (cmd=) of the input's NUL-separated words is a value a
 *     record holds, and reads back as the words unless it was cut.
 *
 * Inputs of exactly 20 bytes are also fed to time_parse (compared with a
 * reference validator and glibc timegm), and time_format round trips; the
 * first 8 bytes of an input are also used as a time_t for time_format.
 *
 * Any violated property calls abort().
 *
 * Built by tests/fuzz/run (clang -fsanitize=fuzzer,address,undefined), or
 * with tests/fuzz/replay.c as a plain replay driver (run --replay).
 *
 * The regress-* seeds reproduce bugs this harness found (a record grown past
 * 64 KiB by a transition, duplicate JSON members, counters wrapping to 0,
 * timed_out=00 taken for a time limit, a cancelled run with exit 0 and no
 * cancelled_by replayed as a success, outcome=FAILED with no exit status
 * replayed as one); they must keep passing.
 *
 * Speed matters (a fuzzer finds what it executes): allocations under ASan
 * are much of the cost, so the harness keeps its own few (record copies in
 * one block, one arena for the JSON scanner's members). */
#include "../../src/report/format.h"
#include "../../src/record/outcome.h"
#include "../../src/record/record.h"
#include "../../src/record/transition.h"
#include "../../src/util/shquote.h"
#include "../../src/util/signame.h"
#include "../../src/util/utf8.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------------ */
/* Failing.                                                            */

static void fail_at(const char *what, int line)
{
	fprintf(stderr, "record_fuzz: property violated (line %d): %s\n", line, what);
	abort();
}
#define CHECK(cond) do { if (!(cond)) fail_at(#cond, __LINE__); } while (0)
#define FAIL(msg) fail_at(msg, __LINE__)

/* ------------------------------------------------------------------ */
/* Reference UTF-8 (RFC 3629), written independently of utf8_valid.   */

/* Length of the well-formed sequence at S (at most N bytes), 0 if none. */
static size_t ref_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;   /* range of the second byte */
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c == 0xe0)
		len = 3, lo = 0xa0;
	else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
		len = 3;
	else if (c == 0xed)
		len = 3, hi = 0x9f;           /* no surrogates */
	else if (c == 0xf0)
		len = 4, lo = 0x90;
	else if (c >= 0xf1 && c <= 0xf3)
		len = 4;
	else if (c == 0xf4)
		len = 4, hi = 0x8f;           /* up to U+10FFFF */
	else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

static int ref_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < n;) {
		size_t k = ref_utf8_seq(s + i, n - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

static int ref_note_valid(const char *s, size_t n)
{
	if (n > NOTE_MAX || !ref_utf8_valid(s, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
			return 0;
	/* C1 controls, U+0080-U+009F: C2 80 - C2 9F in valid UTF-8. */
	for (size_t i = 0; i + 1 < n; i++)
		if ((unsigned char)s[i] == 0xc2 && (unsigned char)s[i + 1] <= 0x9f)
			return 0;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Time.                                                               */

static int is_leap(unsigned y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Does S (NUL-terminated) have the shape and ranges time_parse accepts:
 * YYYY-MM-DDTHH:MM:SSZ, a real date, 00-23, 00-59, 00-60 (a leap second)? */
static int ref_time_valid(const char *s, unsigned v[6])
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	if (strlen(s) != 20)
		return 0;
	for (int i = 0; i < 20; i++) {
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return 0;
	}
	static const int pos[6] = { 0, 5, 8, 11, 14, 17 };
	for (int i = 0; i < 6; i++) {
		int w = i == 0 ? 4 : 2;
		v[i] = 0;
		for (int k = 0; k < w; k++)
			v[i] = v[i] * 10 + (unsigned)(s[pos[i] + k] - '0');
	}
	static const unsigned mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (v[1] < 1 || v[1] > 12 || v[2] < 1)
		return 0;
	unsigned dim = mdays[v[1] - 1] + (v[1] == 2 && is_leap(v[0]));
	return v[2] <= dim && v[3] <= 23 && v[4] <= 59 && v[5] <= 60;
}

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define T_MIN (-62167219200LL)
#define T_MAX (253402300799LL)

static void check_time_format(time_t t)
{
	char out[21];
	memset(out, 'X', sizeof out);
	time_format(t, out);
	CHECK(out[20] == '\0');
	unsigned v[6];
	/* Out of range the year is clamped; the text must still have the
	 * shape (whether it is a real date is checked below, in range). */
	for (int i = 0; i < 20; i++)
		CHECK(out[i] != '\0');
	if ((long long)t < T_MIN || (long long)t > T_MAX)
		return;
	CHECK(ref_time_valid(out, v));
	CHECK(v[5] <= 59);
	time_t back;
	CHECK(time_parse(out, &back) == 0);
	CHECK(back == t);
	/* And against the C library. */
	struct tm tm;
	CHECK(gmtime_r(&t, &tm) != NULL);
	CHECK((long long)tm.tm_year + 1900 == v[0] && (unsigned)tm.tm_mon + 1 == v[1] &&
	      (unsigned)tm.tm_mday == v[2] && (unsigned)tm.tm_hour == v[3] &&
	      (unsigned)tm.tm_min == v[4] && (unsigned)tm.tm_sec == v[5]);
}

static void check_time_text(const char *s)
{
	unsigned v[6];
	time_t t = (time_t)0x5a5a5a5a;
	int ok = time_parse(s, &t) == 0;
	int ref = ref_time_valid(s, v);
	if (ok != ref)
		FAIL(ok ? "time_parse accepts a bad time" : "time_parse rejects a good time");
	if (!ok)
		return;
	/* The value, against timegm (which also folds a :60 into the next
	 * minute). */
	struct tm tm = {0};
	tm.tm_year = (int)v[0] - 1900;
	tm.tm_mon = (int)v[1] - 1;
	tm.tm_mday = (int)v[2];
	tm.tm_hour = (int)v[3];
	tm.tm_min = (int)v[4];
	tm.tm_sec = (int)v[5];
	time_t want = timegm(&tm);
	CHECK(t == want);
	/* Round trip: the text back, exactly, unless it named a leap second
	 * (then the next second's text, which parses to the same time). */
	char out[21];
	time_format(t, out);
	if (v[5] != 60) {
		CHECK(strcmp(out, s) == 0);
	} else if ((long long)t <= T_MAX) {
		time_t again;
		CHECK(time_parse(out, &again) == 0);
		CHECK(again == t);
	}
	check_time_format(t);
}

/* ------------------------------------------------------------------ */
/* A reference model of the record format (SPEC §3 and record.h).      */

struct ref_line {
	const char *key;
	size_t klen;
	const char *value;
	size_t vlen;
};

static int ref_key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

static int cmp_line(const void *a, const void *b)
{
	const struct ref_line *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->key, y->key, n);
	return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

static int ref_eq(const struct ref_line *l, const char *key)
{
	return l->klen == strlen(key) && memcmp(l->key, key, l->klen) == 0;
}

static int ref_decimal(const struct ref_line *l, size_t max)
{
	if (l->vlen == 0 || l->vlen > max)
		return 0;
	for (size_t i = 0; i < l->vlen; i++)
		if (l->value[i] < '0' || l->value[i] > '9')
			return 0;
	return 1;
}

/* Is the decimal value of L (ref_decimal()) above the decimal MAX? */
static int ref_beyond(const struct ref_line *l, const char *max)
{
	size_t skip = 0, n = strlen(max);
	while (skip + 1 < l->vlen && l->value[skip] == '0')
		skip++;
	if (l->vlen - skip != n)
		return l->vlen - skip > n;
	return memcmp(l->value + skip, max, n) > 0;
}

/* DIGITS[.DIGITS]: 1-12 digits, then 1-9 after a point. */
static int ref_seconds(const struct ref_line *l)
{
	size_t i = 0, whole, frac = 0;
	while (i < l->vlen && l->value[i] >= '0' && l->value[i] <= '9')
		i++;
	whole = i;
	if (i < l->vlen && l->value[i] == '.') {
		for (i++; i < l->vlen && l->value[i] >= '0' && l->value[i] <= '9'; i++)
			frac++;
		if (frac == 0 || frac > 9)
			return 0;
	}
	return whole >= 1 && whole <= 12 && i == l->vlen;
}

/* A decimal of at most 999 (leading zeros allowed), all of N bytes at S. */
static int ref_small(const char *s, size_t n, unsigned *v)
{
	*v = 0;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		*v = *v * 10 + (unsigned)(s[i] - '0');
		if (*v > 999)
			return 0;
	}
	return 1;
}

/* cancel_signal: a signal as kill -l names it, with SIG or without, in
 * any case ("TERM", "sigterm", "RTMIN+3", "RTMAX-1"), or its number. */
static int ref_signal(const struct ref_line *l)
{
	static const char names[] = " HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE"
		" ALRM TERM STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH"
		" IO PWR SYS ";
	const char *v = l->value;
	size_t n = l->vlen;
	unsigned k;
	if (ref_small(v, n, &k))
		return k >= 1 && (int)k <= SIGRTMAX;
	if (n >= 3 && strncasecmp(v, "SIG", 3) == 0)
		v += 3, n -= 3;
	if (n >= 5 && (strncasecmp(v, "RTMIN", 5) == 0 || strncasecmp(v, "RTMAX", 5) == 0)) {
		int max = v[4] == 'X' || v[4] == 'x';
		if (n == 5)
			return 1;
		if (v[5] != (max ? '-' : '+') || !ref_small(v + 6, n - 6, &k))
			return 0;
		return max ? SIGRTMAX - (int)k >= SIGRTMIN : SIGRTMIN + (int)k <= SIGRTMAX;
	}
	char word[9] = " ";
	if (n == 0 || n > 6)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return 0;
		word[1 + i] = c;
	}
	word[1 + n] = ' ';
	word[2 + n] = '\0';
	return strstr(names, word) != NULL;
}

/* A job id of SPEC §1, N bytes at S: 1-128 bytes of [A-Za-z0-9._@+-],
 * not beginning with . or -. */
static int ref_job_id(const char *s, size_t n)
{
	if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '@' || c == '+' || c == '-'))
			return 0;
	}
	return 1;
}

/* SPEC §3's after ("backup,dump") or, WITH_RUN, after_seen
 * ("backup:41,dump:7", each run a counter): job ids, comma-separated,
 * none empty; N bytes at S. */
static int ref_after_list(const char *s, size_t n, int with_run)
{
	size_t i = 0;
	for (;;) {
		size_t start = i;
		while (i < n && s[i] != ',' && !(with_run && s[i] == ':'))
			i++;
		if (!ref_job_id(s + start, i - start))
			return 0;
		if (with_run) {
			unsigned long long v = 0;
			size_t digits = 0;
			if (i == n || s[i++] != ':')
				return 0;
			for (; i < n && s[i] != ','; i++, digits++) {
				unsigned d = (unsigned)(s[i] - '0');
				if (s[i] < '0' || s[i] > '9' || v > (COUNTER_MAX - d) / 10)
					return 0;
				v = v * 10 + d;
			}
			if (digits == 0)
				return 0;
		}
		if (i == n)
			return 1;
		i++;   /* ',' */
	}
}

/* An exit-status list of SPEC §2 Warnings ("3,24,64-78": numbers 0-255,
 * leading zeros allowed, and ascending ranges, comma-separated, not
 * empty), N bytes at S; its members into SET (may be NULL). */
static int ref_exit_list(const char *s, size_t n, unsigned char set[256])
{
	unsigned char dummy[256];
	if (!set)
		set = dummy;
	memset(set, 0, 256);
	size_t i = 0;
	for (;;) {
		unsigned bound[2] = { 0, 0 };
		int parts = 0;
		for (;;) {
			size_t start = i;
			unsigned long v = 0;
			while (i < n && s[i] >= '0' && s[i] <= '9') {
				v = v * 10 + (unsigned long)(s[i] - '0');
				if (v > 255)
					return 0;
				i++;
			}
			if (i == start)
				return 0;
			bound[parts++] = (unsigned)v;
			if (parts == 2 || i == n || s[i] != '-')
				break;
			i++;
		}
		if (parts == 1)
			bound[1] = bound[0];
		if (bound[1] < bound[0])
			return 0;
		for (unsigned k = bound[0]; k <= bound[1]; k++)
			set[k] = 1;
		if (i == n)
			return 1;
		if (s[i++] != ',')
			return 0;
	}
}

/* Is L's value exactly one of the NULL-ended WORDS (case matters)? */
static int ref_word(const struct ref_line *l, const char *const *words)
{
	for (; *words; words++)
		if (l->vlen == strlen(*words) && memcmp(l->value, *words, l->vlen) == 0)
			return 1;
	return 0;
}

static const struct ref_line *ref_find(const struct ref_line *lines, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (ref_eq(&lines[i], key))
			return &lines[i];
	return NULL;
}

/* Split DATA into lines (into *OUT, malloc'd; *N of them) and say whether
 * it is a valid record.  The lines are only split when the bytes pass the
 * whole-file checks. */
static int ref_parse(const char *data, size_t len, struct ref_line **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (len == 0 || len > RECORD_MAX || memchr(data, '\0', len) || !ref_utf8_valid(data, len))
		return 0;
	size_t cap = 1;
	for (size_t i = 0; i < len; i++)
		cap += data[i] == '\n';
	struct ref_line *lines = calloc(cap, sizeof *lines);
	CHECK(lines != NULL);
	*out = lines;
	size_t start = 0;
	while (start < len) {
		size_t end = start;
		while (end < len && data[end] != '\n')
			end++;
		const char *eq = memchr(data + start, '=', end - start);
		if (!eq)
			return 0;
		struct ref_line *l = &lines[(*n)++];
		l->key = data + start;
		l->klen = (size_t)(eq - l->key);
		l->value = eq + 1;
		l->vlen = end - (start + l->klen + 1);
		if (l->klen == 0)
			return 0;
		for (size_t i = 0; i < l->klen; i++)
			if (!ref_key_char((unsigned char)l->key[i]))
				return 0;
		for (size_t i = 0; i < l->vlen; i++)
			if ((unsigned char)l->value[i] < 0x20 && l->value[i] != '\t')
				return 0;
		start = end + 1;   /* past the '\n' (or past the end) */
	}
	/* Duplicate keys: sort a copy by key, compare neighbours. */
	if (*n > 1) {
		struct ref_line *sorted = xmalloc(*n * sizeof *sorted);
		memcpy(sorted, lines, *n * sizeof *sorted);
		qsort(sorted, *n, sizeof *sorted, cmp_line);
		int dup = 0;
		for (size_t i = 1; i < *n && !dup; i++)
			dup = cmp_line(&sorted[i - 1], &sorted[i]) == 0;
		free(sorted);
		if (dup)
			return 0;
	}
	if (!ref_eq(&lines[0], "version") || lines[0].vlen != 1 || lines[0].value[0] != '1')
		return 0;
	const struct ref_line *l = ref_find(lines, *n, "status");
	if (!l)
		return 0;
	static const char *const written[] = { "PENDING", "RUNNING", "DONE" };
	int good = 0;
	for (int i = 0; i < 3; i++)
		good |= l->vlen == strlen(written[i]) && strncasecmp(l->value, written[i], l->vlen) == 0;
	if (!good)
		return 0;
	l = ref_find(lines, *n, "owner");
	if (l && !(l->vlen == 4 && memcmp(l->value, "lock", 4) == 0) &&
	    !(l->vlen == 3 && memcmp(l->value, "pid", 3) == 0))
		return 0;
	if (l && l->vlen == 3 && !ref_find(lines, *n, "pid"))
		return 0;
	if ((l = ref_find(lines, *n, "pid")) && !ref_decimal(l, 10))
		return 0;
	if ((l = ref_find(lines, *n, "pid_start")) && !ref_decimal(l, 20))
		return 0;
	if ((l = ref_find(lines, *n, "exit")) && !ref_decimal(l, 10))
		return 0;
	/* The 0.2 and 0.4 numbers: counters and inodes, plain decimals (at
	 * most 20 digits, as pid_start; a counter, after the three inodes,
	 * at most 2^63-1: SPEC §5a); timeout a number of seconds, a
	 * fraction allowed (at most 12 digits, then at most 9 after the
	 * point). */
	static const char *const counts[] = {
		"pid_ns", "time_ns", "run_lock", "runs", "failures", "timed_out",
		"attempt", "lost", "consecutive_failures", "keep_runs", "cancel_run",
		"cancel_missed", "cancelled", "cancelled_runs", "skipped", "coalesced",
		"wait_next", "wait_head", "replaced_below",
		/* 0.5 */
		"last_success_run", "last_success_warning", "warnings", "notify_after",
		"notifier_pid", "notify_failures",
	};
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		if ((l = ref_find(lines, *n, counts[i])) && (!ref_decimal(l, 20) ||
		    (i >= 3 && ref_beyond(l, "9223372036854775807"))))
			return 0;
	if ((l = ref_find(lines, *n, "timeout")) && !ref_seconds(l))
		return 0;
	if ((l = ref_find(lines, *n, "every")) && !ref_seconds(l))
		return 0;
	if ((l = ref_find(lines, *n, "late_after")) && !ref_seconds(l))
		return 0;
	if ((l = ref_find(lines, *n, "cancel_kill_after")) && !ref_seconds(l))
		return 0;
	if ((l = ref_find(lines, *n, "cancel_signal")) && !ref_signal(l))
		return 0;
	/* 0.5: seconds, an outcome, the exit lists, the chains' lists, health
	 * words. */
	if ((l = ref_find(lines, *n, "overdue_after")) && !ref_seconds(l))
		return 0;
	if ((l = ref_find(lines, *n, "min_duration")) && !ref_seconds(l))
		return 0;
	static const char *const outcomes[] = { "OK", "WARNING", "FAILED", "CANCELLED", NULL };
	static const char *const healths[] = { "OK", "WARNING", "LATE", "FAILED", "OVERDUE",
					       "STALE", NULL };
	if ((l = ref_find(lines, *n, "outcome")) && !ref_word(l, outcomes))
		return 0;
	if ((l = ref_find(lines, *n, "ok_exit")) && !ref_exit_list(l->value, l->vlen, NULL))
		return 0;
	if ((l = ref_find(lines, *n, "warn_exit")) && !ref_exit_list(l->value, l->vlen, NULL))
		return 0;
	if ((l = ref_find(lines, *n, "after")) && !ref_after_list(l->value, l->vlen, 0))
		return 0;
	if ((l = ref_find(lines, *n, "after_seen")) && !ref_after_list(l->value, l->vlen, 1))
		return 0;
	if ((l = ref_find(lines, *n, "notified")) && !ref_word(l, healths))
		return 0;
	if ((l = ref_find(lines, *n, "notifying")) && !ref_word(l, healths))
		return 0;
	/* A pause may have no end: inf, else a time. */
	l = ref_find(lines, *n, "paused_until");
	int endless = l && l->vlen == 3 && memcmp(l->value, "inf", 3) == 0;
	static const char *const times[] = { "since", "started", "ended", "expires", "retry_at",
					     "cancel_at", "cancel_seen", "last_success",
					     "last_success_started", "last_skipped", "late_from",
					     "paused_until", "notified_at", "notifier_until",
					     "notify_retry_at" };
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
		if (endless && strcmp(times[i], "paused_until") == 0)
			continue;
		if ((l = ref_find(lines, *n, times[i]))) {
			char buf[32];
			unsigned v[6];
			if (l->vlen != 20)
				return 0;
			memcpy(buf, l->value, 20);
			buf[20] = '\0';
			if (!ref_time_valid(buf, v))
				return 0;
		}
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* Record helpers.                                                     */

static const char *const spec_order[] = {
	"version", "status", "since", "owner", "host", "pid", "pid_start",
	"boot_id", "pid_ns", "time_ns", "run_lock", "expires", "timeout",
	"started", "ended", "exit", "signal", "timed_out", "attempt", "retry_at",
	"cancel_run", "cancel_signal", "cancel_kill_after", "cancel_by", "cancel_at",
	"cancel_seen", "cancel_missed", "outcome", "cancelled", "cancelled_by",
	"retries_cancelled_by", "slots", "cmd", "runs", "failures", "lost",
	"consecutive_failures", "last_success", "last_success_started", "last_success_run",
	"last_success_warning", "cancelled_runs", "warnings", "skipped", "last_skipped",
	"skip_reason", "coalesced", "wait_next", "wait_head", "replaced_below", "paused_until",
	"paused_by", "paused_note", "every", "late_after", "overdue_after", "ok_exit",
	"warn_exit", "min_duration", "after", "after_seen", "notify_after", "notified",
	"notified_at", "notifying", "notifier_host", "notifier_pid", "notifier_until",
	"notify_failures", "notify_retry_at", "late_from", "keep_runs", "note",
};
#define SPEC_KEYS (sizeof spec_order / sizeof spec_order[0])

static size_t rank_n(const char *key, size_t len)
{
	for (size_t i = 0; i < SPEC_KEYS; i++)
		if (strlen(spec_order[i]) == len && memcmp(key, spec_order[i], len) == 0)
			return i;
	return SPEC_KEYS;
}

static size_t rank(const char *key)
{
	for (size_t i = 0; i < SPEC_KEYS; i++)
		if (strcmp(key, spec_order[i]) == 0)
			return i;
	return SPEC_KEYS;
}

/* The fields of a record sorted by key, for lookups in O(log n) (the
 * record's own record_get is linear, and inputs can hold 30000 lines). */
struct index {
	const struct field **f;
	size_t n;
};

static int cmp_field(const void *a, const void *b)
{
	const struct field *const *x = a, *const *y = b;
	return strcmp((*x)->key, (*y)->key);
}

static void index_build(struct index *ix, const struct record *r)
{
	ix->n = r->count;
	ix->f = xmalloc((r->count + 1) * sizeof *ix->f);
	for (size_t i = 0; i < r->count; i++)
		ix->f[i] = &r->fields[i];
	qsort(ix->f, ix->n, sizeof *ix->f, cmp_field);
}

static const char *index_get(const struct index *ix, const char *key)
{
	struct field probe = { .key = (char *)key };
	const struct field *p = &probe;
	const struct field **hit = bsearch(&p, ix->f, ix->n, sizeof *ix->f, cmp_field);
	return hit ? (*hit)->value : NULL;
}

static void index_free(struct index *ix)
{
	free(ix->f);
}

/* Parse TEXT (LEN bytes), which must succeed, into R. */
static void must_parse(struct record *r, const char *text, size_t len, const char *what)
{
	const char *why = NULL;
	if (record_parse(r, text, len, &why) != 0) {
		fprintf(stderr, "record_fuzz: %s does not parse (%s); %zu bytes:\n%.*s\n",
			what, why ? why : "no reason", len, (int)(len > 2000 ? 2000 : len), text);
		FAIL("the formatted record does not parse");
	}
	CHECK(r->count > 0);
}

static int same_opt(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A deep copy of R, laid out as record_parse lays out a record: the
 * strings in one text block the fields point into (two allocations, not
 * two per field: allocation under ASan is most of a harness's cost). */
static void copy_record(struct record *dst, const struct record *src)
{
	size_t size = 1;
	for (size_t i = 0; i < src->count; i++)
		size += strlen(src->fields[i].key) + strlen(src->fields[i].value) + 2;
	dst->count = dst->cap = src->count;
	dst->text = xmalloc(size);
	dst->fields = xmalloc((src->count + 1) * sizeof *dst->fields);
	char *p = dst->text;
	for (size_t i = 0; i < src->count; i++) {
		size_t k = strlen(src->fields[i].key) + 1, v = strlen(src->fields[i].value) + 1;
		/* (the whole field first, so that one added later is copied too) */
		dst->fields[i] = src->fields[i];
		dst->fields[i].key = memcpy(p, src->fields[i].key, k);
		dst->fields[i].value = memcpy(p + k, src->fields[i].value, v);
		dst->fields[i].owned = 0;
		p += k + v;
	}
}

/* R's fields are those of BEFORE, except the keys in CHANGED (a NULL-ended
 * list), which may differ or come and go. */
static void check_kept(const struct record *before, const struct record *r,
		       const char *const *changed)
{
	struct index ib, ir;
	index_build(&ib, before);
	index_build(&ir, r);
	for (size_t i = 0; i < before->count; i++) {
		const char *k = before->fields[i].key;
		int free_to_change = 0;
		for (const char *const *c = changed; *c; c++)
			free_to_change |= strcmp(*c, k) == 0;
		if (!free_to_change && !same_opt(index_get(&ir, k), before->fields[i].value)) {
			fprintf(stderr, "record_fuzz: key '%s' was not kept\n", k);
			FAIL("a transition lost or changed a key it must keep");
		}
	}
	for (size_t i = 0; i < r->count; i++) {
		const char *k = r->fields[i].key;
		int free_to_change = 0;
		for (const char *const *c = changed; *c; c++)
			free_to_change |= strcmp(*c, k) == 0;
		if (!free_to_change && !index_get(&ib, k)) {
			fprintf(stderr, "record_fuzz: key '%s' appeared\n", k);
			FAIL("a transition added a key it must not write");
		}
	}
	index_free(&ib);
	index_free(&ir);
}

/* ------------------------------------------------------------------ */
/* A small validating JSON scanner (RFC 8259), for one object.          */

struct member {
	char *name;
	char *value;      /* decoded string, or the number / literal text */
	int is_string;
	size_t name_at, value_at;   /* in the arena, while it may move */
};

struct scanner {
	const char *p, *end;
	struct member *m;
	size_t n, cap;
};

/* Every member name and value of the object scanned last, NUL-terminated
 * (one growing buffer for the whole run, not two allocations a member:
 * allocation under ASan is much of a harness's cost). */
static struct buf arena;

static void js_ws(struct scanner *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int js_hex4(struct scanner *s, unsigned *v)
{
	if (s->end - s->p < 4)
		return -1;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(s->p[i]);
		if (h < 0)
			return -1;
		*v = *v << 4 | (unsigned)h;
	}
	s->p += 4;
	return 0;
}

static void put_utf8(struct buf *b, unsigned cp)
{
	char u[4];
	if (cp < 0x80) {
		buf_addc(b, (char)cp);
		return;
	}
	if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 3);
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		buf_add(b, u, 4);
	}
}

/* A string at s->p (the opening quote); its decoded bytes into OUT. */
static int js_string(struct scanner *s, struct buf *out)
{
	buf_reset(out);
	buf_add(out, "", 0);
	if (s->p >= s->end || *s->p != '"')
		return -1;
	s->p++;
	for (;;) {
		if (s->p >= s->end)
			return -1;                      /* unterminated */
		unsigned char c = (unsigned char)*s->p;
		if (c == '"') {
			s->p++;
			return 0;
		}
		if (c < 0x20)
			return -1;                      /* raw control byte */
		if (c != '\\') {
			/* A run of plain bytes at once. */
			const char *run = s->p;
			while (s->p < s->end && *s->p != '"' && *s->p != '\\' &&
			       (unsigned char)*s->p >= 0x20) {
				size_t k = ref_utf8_seq((const unsigned char *)s->p,
							(size_t)(s->end - s->p));
				if (!k)
					return -1;      /* invalid UTF-8 */
				s->p += k;
			}
			buf_add(out, run, (size_t)(s->p - run));
			continue;
		}
		if (++s->p >= s->end)
			return -1;
		char e = *s->p++;
		switch (e) {
		case '"': buf_addc(out, '"'); break;
		case '\\': buf_addc(out, '\\'); break;
		case '/': buf_addc(out, '/'); break;
		case 'b': buf_addc(out, '\b'); break;
		case 'f': buf_addc(out, '\f'); break;
		case 'n': buf_addc(out, '\n'); break;
		case 'r': buf_addc(out, '\r'); break;
		case 't': buf_addc(out, '\t'); break;
		case 'u': {
			unsigned cp, lo;
			if (js_hex4(s, &cp) < 0)
				return -1;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -1;              /* lone low surrogate */
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (s->end - s->p < 2 || s->p[0] != '\\' || s->p[1] != 'u')
					return -1;
				s->p += 2;
				if (js_hex4(s, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
					return -1;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			put_utf8(out, cp);
			break;
		}
		default:
			return -1;                      /* illegal escape */
		}
	}
}

static int js_digits(struct scanner *s)
{
	const char *start = s->p;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p > start ? 0 : -1;
}

static int js_number(struct scanner *s)
{
	if (s->p < s->end && *s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;                                 /* no leading zeros */
	else if (js_digits(s) < 0)
		return -1;
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		if (js_digits(s) < 0)
			return -1;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (js_digits(s) < 0)
			return -1;
	}
	return 0;
}

static int js_literal(struct scanner *s, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return -1;
	s->p += n;
	return 0;
}

/* One object holding scalars only (all record_json writes). */
static int js_object(struct scanner *s)
{
	struct buf name = {0}, value = {0};
	int rc = -1;
	buf_reset(&arena);
	js_ws(s);
	if (s->p >= s->end || *s->p++ != '{')
		goto out;
	js_ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		rc = 0;
		goto out;
	}
	for (;;) {
		js_ws(s);
		if (js_string(s, &name) < 0)
			goto out;
		js_ws(s);
		if (s->p >= s->end || *s->p++ != ':')
			goto out;
		js_ws(s);
		int is_string = 0;
		const char *vstart = s->p;
		if (s->p < s->end && *s->p == '"') {
			if (js_string(s, &value) < 0)
				goto out;
			is_string = 1;
		} else {
			int r;
			if (s->p < s->end && *s->p == 't')
				r = js_literal(s, "true");
			else if (s->p < s->end && *s->p == 'f')
				r = js_literal(s, "false");
			else if (s->p < s->end && *s->p == 'n')
				r = js_literal(s, "null");
			else
				r = js_number(s);
			if (r < 0)
				goto out;
			buf_reset(&value);
			buf_add(&value, vstart, (size_t)(s->p - vstart));
		}
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 16;
			s->m = xrealloc(s->m, s->cap * sizeof *s->m);
		}
		/* Names and values hold no NUL: record text has none. */
		if (memchr(name.data, '\0', name.len) || memchr(value.data, '\0', value.len))
			goto out;
		s->m[s->n].name_at = arena.len;
		buf_add(&arena, name.data, name.len);
		buf_addc(&arena, '\0');
		s->m[s->n].value_at = arena.len;
		buf_add(&arena, value.data, value.len);
		buf_addc(&arena, '\0');
		s->m[s->n].is_string = is_string;
		s->n++;
		js_ws(s);
		if (s->p >= s->end)
			goto out;
		if (*s->p == ',') {
			s->p++;
			continue;
		}
		if (*s->p++ != '}')
			goto out;
		rc = 0;
		break;
	}
out:
	for (size_t i = 0; i < s->n; i++) {
		s->m[i].name = arena.data + s->m[i].name_at;
		s->m[i].value = arena.data + s->m[i].value_at;
	}
	buf_free(&name);
	buf_free(&value);
	return rc;
}

static void scanner_free(struct scanner *s)
{
	free(s->m);
}

static const struct member *member(const struct scanner *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->m[i].name, name) == 0)
			return &s->m[i];
	return NULL;
}

static int one_of(const char *k, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(k, *list) == 0)
			return 1;
	return 0;
}

static int json_number_key(const char *k)
{
	static const char *const keys[] = {
		"version", "pid", "pid_start", "exit", "runs", "failures", "pid_ns",
		"time_ns", "run_lock", "timeout", "attempt", "lost", "consecutive_failures",
		"late_after", "keep_runs", "cancel_run", "cancel_kill_after", "cancelled_runs",
		"skipped", "coalesced", "wait_next", "wait_head", "replaced_below", "every",
		/* 0.5: counters and settings (not the lists: ok_exit, warn_exit,
		 * after and after_seen are strings, "24" too) */
		"overdue_after", "min_duration", "warnings", "last_success_run", "notify_after",
		"notifier_pid", "notify_failures", NULL,
	};
	return one_of(k, keys);
}

/* Flags: a checked decimal, true unless it is all zeros. */
static int json_flag_key(const char *k)
{
	static const char *const keys[] = { "timed_out", "cancelled", "last_success_warning",
					    NULL };
	return one_of(k, keys);
}

static int is_reserved_member(const char *k)
{
	static const char *const keys[] = {
		"job", "stale", "corrupt", "unreadable", "duration", "late", "paused",
		"waiting", "next_due", "overdue", "health", NULL,
	};
	return one_of(k, keys);
}

/* The JSON number a checked decimal ("007", "1.50") must become: no
 * leading zeros, a digit before a point, no point without a fraction. */
static void ref_number(const char *v, struct buf *out)
{
	const char *point = strchr(v, '.');
	size_t whole = point ? (size_t)(point - v) : strlen(v);
	while (whole > 1 && v[0] == '0')
		v++, whole--;
	buf_reset(out);
	if (whole)
		buf_add(out, v, whole);
	else
		buf_addc(out, '0');
	if (point && point[1]) {
		buf_addc(out, '.');
		buf_adds(out, point + 1);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const struct job_flags no_flags, late_only = { .late = 1 };

/* Check format_json(JOB, R, ST, X) (R may be NULL). */
static void check_json(const char *job, const struct record *r, enum status st,
		       const struct job_flags *x)
{
	struct buf out = {0};
	format_json(&out, job, r, st, x);
	CHECK(out.data != NULL && out.len > 0);
	CHECK(strlen(out.data) == out.len);
	/* JSON Lines: one line, ending in its only newline. */
	CHECK(out.data[out.len - 1] == '\n');
	CHECK(memchr(out.data, '\n', out.len - 1) == NULL);
	CHECK(ref_utf8_valid(out.data, out.len));

	struct scanner s = { out.data, out.data + out.len, NULL, 0, 0 };
	if (js_object(&s) < 0) {
		fprintf(stderr, "record_fuzz: malformed JSON near byte %zu: %s",
			(size_t)(s.p - out.data), out.data);
		FAIL("format_json wrote malformed JSON");
	}
	js_ws(&s);
	CHECK(s.p == s.end);           /* nothing after the object */

	/* Unique member names (RFC 8259 §4 "SHOULD"; a duplicate "job" or
	 * "stale" would let a record's unknown key spoof the job's name or
	 * its staleness for any reader that keeps the last one). */
	{
		const char **names = xmalloc((s.n + 1) * sizeof *names);
		for (size_t i = 0; i < s.n; i++)
			names[i] = s.m[i].name;
		qsort(names, s.n, sizeof *names, cmp_str);
		for (size_t i = 1; i < s.n; i++)
			if (strcmp(names[i - 1], names[i]) == 0) {
				fprintf(stderr, "record_fuzz: duplicate member \"%s\": %.2000s",
					names[i], out.data);
				FAIL("format_json wrote a duplicate member name");
			}
		free(names);
	}

	/* The contents. */
	CHECK(s.n > 0 && strcmp(s.m[0].name, "job") == 0 && s.m[0].is_string &&
	      strcmp(s.m[0].value, job) == 0);
	if (st == ST_CORRUPT || st == ST_UNREADABLE) {
		CHECK(s.n == 2 && strcmp(s.m[1].name, st == ST_CORRUPT ? "corrupt" : "unreadable") == 0 &&
		      strcmp(s.m[1].value, "true") == 0 && !s.m[1].is_string);
		goto done;
	}
	const struct member *m = member(&s, "status");
	CHECK(m && m->is_string && strcmp(m->value, status_word(st)) == 0);
	/* "health", the reader's word (SPEC §2 Health), last, for every job. */
	const struct member *hm = &s.m[s.n - 1];
	CHECK(strcmp(hm->name, "health") == 0 && hm->is_string &&
	      strcmp(hm->value, health_word(x->health)) == 0);
	if (!r || r->count == 0) {
		/* (and a registry's pause, with no record) */
		CHECK(s.n == 3 + (size_t)(x->paused != 0));
		if (x->paused)
			CHECK(strcmp(s.m[2].name, "paused") == 0 && !s.m[2].is_string &&
			      strcmp(s.m[2].value, "true") == 0);
		goto done;
	}
	/* Every field once, in canonical order, with its value (numbers for
	 * the numeric keys, booleans for the flags), then "duration" (ended -
	 * started) for DONE, "stale": true for STALE, then "overdue": true,
	 * "late": true, "paused": true and "waiting": N as X says, "next_due",
	 * and "health".  Unknown keys named like the writer's own members
	 * (job, stale, corrupt, unreadable, duration, overdue, late, paused,
	 * waiting, next_due, health) are left out. */
	size_t shown = 0;
	for (size_t i = 0; i < r->count; i++)
		shown += !is_reserved_member(r->fields[i].key);
	const char *started = record_get(r, "started"), *ended = record_get(r, "ended");
	time_t from = 0, to = 0;
	int has_duration = st == ST_DONE && started && ended &&
			   time_parse(started, &from) == 0 && time_parse(ended, &to) == 0;
	/* "next_due": the started of the last success plus every, rounded up
	 * to the second (SPEC §5b), when both are there. */
	const char *every = record_get(r, "every"), *success = record_get(r, "last_success_started");
	char next_due[21] = "";
	time_t since_success;
	if (every && success && time_parse(success, &since_success) == 0) {
		char *end;
		double period = strtod(every, &end);
		if (!*end && period > 0 && period <= 1e12)
			time_format(since_success + (time_t)period + (period > (double)(time_t)period),
				    next_due);
	}
	size_t added = (size_t)(st == ST_STALE) + (x->overdue != 0) + (x->late != 0) +
		       (x->paused != 0) + (x->waiting != 0) + (next_due[0] != 0) + 1;
	CHECK(s.n == 1 + shown + (size_t)has_duration + added);
	struct buf want = {0};
	size_t last_rank = 0;
	struct index ix;
	index_build(&ix, r);
	for (size_t i = 0; i < shown; i++) {
		const struct member *mm = &s.m[1 + i];
		const char *v = index_get(&ix, mm->name);
		if (!v) {
			fprintf(stderr, "record_fuzz: JSON member \"%s\" is not a field\n", mm->name);
			FAIL("format_json wrote a member the record has not");
		}
		size_t rk = rank(mm->name);
		CHECK(rk >= last_rank);
		last_rank = rk;
		if (strcmp(mm->name, "status") == 0)
			continue;
		if (json_number_key(mm->name)) {
			CHECK(!mm->is_string);
			/* The same decimal number, leading zeros dropped. */
			ref_number(v, &want);
			CHECK(strcmp(mm->value, want.data) == 0);
		} else if (json_flag_key(mm->name)) {
			CHECK(!mm->is_string);
			CHECK(strcmp(mm->value, v[strspn(v, "0")] ? "true" : "false") == 0);
		} else {
			CHECK(mm->is_string);
			if (strcmp(mm->value, v) != 0) {
				fprintf(stderr, "record_fuzz: \"%s\" decodes to '%s', field is '%s'\n",
					mm->name, mm->value, v);
				FAIL("a JSON string does not decode to the field's value");
			}
		}
	}
	index_free(&ix);
	if (has_duration) {
		const struct member *d = &s.m[1 + shown];
		buf_reset(&want);
		buf_addf(&want, "%lld", (long long)to - (long long)from);
		CHECK(strcmp(d->name, "duration") == 0 && !d->is_string &&
		      strcmp(d->value, want.data) == 0);
	}
	buf_free(&want);
	{
		/* The members the reader adds, in this order. */
		char waiting[24];
		snprintf(waiting, sizeof waiting, "%llu", x->waiting);
		const struct { int on; const char *name, *value; } tail[] = {
			{ st == ST_STALE, "stale", "true" }, { x->overdue, "overdue", "true" },
			{ x->late, "late", "true" },
			{ x->paused, "paused", "true" }, { x->waiting != 0, "waiting", waiting },
		};
		const struct member *mm = &s.m[s.n - added];
		for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) {
			if (!tail[i].on)
				continue;
			CHECK(strcmp(mm->name, tail[i].name) == 0 && !mm->is_string &&
			      strcmp(mm->value, tail[i].value) == 0);
			mm++;
		}
		if (next_due[0]) {
			CHECK(strcmp(mm->name, "next_due") == 0 && mm->is_string &&
			      strcmp(mm->value, next_due) == 0);
			mm++;
		}
		CHECK(mm == hm);
	}
done:
	scanner_free(&s);
	buf_free(&out);
}

/* json_string on any valid UTF-8 without NUL: valid JSON that decodes back. */
static void check_json_string(const char *str)
{
	struct buf out = {0}, dec = {0};
	json_string(&out, str);
	struct scanner s = { out.data, out.data + out.len, NULL, 0, 0 };
	CHECK(js_string(&s, &dec) == 0);
	CHECK(s.p == s.end);
	CHECK(strcmp(dec.data, str) == 0);
	CHECK(memchr(out.data, '\n', out.len) == NULL);
	buf_free(&out);
	buf_free(&dec);
}

/* ------------------------------------------------------------------ */
/* Transitions.                                                        */

/* What each transition may write or drop (SPEC §3); every other key,
 * unknown ones and the history (runs, failures, last_success) included,
 * must come through unchanged unless the checks below say how it moves. */
static const char *const pending_changes[] = {
	"status", "since", "note", "owner", "host", "pid", "pid_start", "boot_id",
	"pid_ns", "time_ns", "run_lock", "expires", "timeout", "ended", "exit",
	"signal", "timed_out", "started", "attempt", "retry_at", "cancelled",
	"cancelled_by", "slots", "cmd", "cancel_run", "cancel_signal",
	"cancel_kill_after", "cancel_by", "cancel_at", "cancel_seen", "cancel_missed",
	"outcome", "retries_cancelled_by", NULL,
};
static const char *const running_changes[] = {
	"status", "since", "note", "owner", "host", "pid", "pid_start", "boot_id",
	"pid_ns", "time_ns", "run_lock", "expires", "timeout", "ended", "exit",
	"signal", "timed_out", "started", "runs", "attempt", "retry_at", "cancelled",
	"cancelled_by", "slots", "cmd", "cancel_run", "cancel_signal",
	"cancel_kill_after", "cancel_by", "cancel_at", "cancel_seen", "cancel_missed",
	"outcome", "retries_cancelled_by", NULL,
};
/* What belongs to one run: a new run (not a renewal) drops them, as DONE
 * drops all but cmd (SPEC §3). */
static const char *const one_run_keys[] = {
	"slots", "cmd", "cancel_run", "cancel_signal", "cancel_kill_after", "cancel_by",
	"cancel_at", "cancel_seen", "cancel_missed", NULL,
};
static const char *const done_changes[] = {
	"status", "since", "note", "owner", "pid_start", "boot_id", "pid_ns",
	"time_ns", "run_lock", "expires", "ended", "exit", "signal", "timed_out",
	"retry_at", "failures", "consecutive_failures", "last_success", "last_success_started",
	"cancelled", "cancelled_by", "cancelled_runs", "slots", "cancel_run", "cancel_signal",
	"cancel_kill_after", "cancel_by", "cancel_at", "cancel_seen", "cancel_missed",
	"outcome", "retries_cancelled_by", "last_success_run", "last_success_warning", "warnings",
	NULL,
};

/* The keys of a formatted record (TEXT, LEN bytes of "k=v\n" lines) are in
 * canonical order: SPEC §3's keys in its order, then the unknown ones. */
static void check_canonical(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t last = 0;
	while (p < end) {
		const char *eq = memchr(p, '=', (size_t)(end - p));
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		CHECK(eq && nl && eq < nl);
		size_t rk = rank_n(p, (size_t)(eq - p));
		/* Known keys strictly ascending (each once); unknown ones after. */
		CHECK(rk > last || (rk == last && (rk == SPEC_KEYS || p == text)));
		last = rk;
		p = nl + 1;
	}
}

/* Format R, parse it (must work), check it re-formats identically and
 * in canonical key order; returns nothing, frees nothing. */
static void check_written(const struct record *r, const char *what)
{
	struct buf text = {0};
	struct record again;
	int fits = record_format(r, &text) == 0;
	CHECK(text.data != NULL);
	/* Too large to write: the writers refuse it (and it would not parse). */
	CHECK(fits == (text.len <= RECORD_MAX));
	check_canonical(text.data, text.len);
	if (!fits) {
		buf_free(&text);
		return;
	}
	must_parse(&again, text.data, text.len, what);
	struct buf text2 = {0};
	record_format(&again, &text2);
	CHECK(text2.len == text.len && memcmp(text.data, text2.data, text.len) == 0);
	buf_free(&text2);
	record_free(&again);
	buf_free(&text);
}

static void check_common(const struct record *before, const struct record *r,
			 const char *status, const char *note)
{
	CHECK(r->count > 0 && strcmp(r->fields[0].key, "version") == 0);
	CHECK(same_opt(record_get(r, "version"), "1"));
	CHECK(same_opt(record_get(r, "status"), status));
	CHECK(same_opt(record_get(r, "note"), note ? note : record_get(before, "note")));
}

/* Decimal strings (as the parser checked: digits, leading zeros allowed)
 * compared as numbers, of any size. */
static int dec_cmp(const char *a, const char *b)
{
	while (*a == '0' && a[1])
		a++;
	while (*b == '0' && b[1])
		b++;
	size_t la = strlen(a), lb = strlen(b);
	if (la != lb)
		return la < lb ? -1 : 1;
	int c = memcmp(a, b, la);
	return (c > 0) - (c < 0);
}

/* Is the decimal A, plus one, the decimal B?  (A plain "no counter yet"
 * is NULL, i.e. 0.) */
static int dec_is_next(const char *a, const char *b)
{
	struct buf want = {0};
	const char *digits = a ? a : "0";
	while (*digits == '0' && digits[1])
		digits++;
	buf_adds(&want, digits);
	size_t i = want.len;
	for (;;) {
		if (i == 0) {           /* 999 + 1: one more digit */
			buf_reset(&want);
			buf_addc(&want, '1');
			for (size_t k = 0; k < strlen(digits); k++)
				buf_addc(&want, '0');
			break;
		}
		i--;
		if (want.data[i] != '9') {
			want.data[i]++;
			break;
		}
		want.data[i] = '0';
	}
	int same = b && dec_cmp(want.data, b) == 0;
	buf_free(&want);
	return same;
}

/* runs only grows: by exactly one when a new run starts (up to COUNTER_MAX,
 * 2^63-1: a counter already at its maximum stays
 * there), else not at all. */
static void check_runs(const struct record *before, const struct record *r, int new_run)
{
	const char *was = record_get(before, "runs"), *now = record_get(r, "runs");
	if (!new_run) {
		CHECK(same_opt(now, was));
		return;
	}
	CHECK(now != NULL);
	if (was && dec_cmp(was, "9223372036854775807") >= 0) {
		if (dec_cmp(now, was) < 0)
			FAIL("runs went down at its maximum (wrapped around?)");
		return;
	}
	if (!dec_is_next(was, now)) {
		fprintf(stderr, "record_fuzz: runs was %s, is %s\n", was ? was : "(none)", now);
		FAIL("a new run did not count runs up by one");
	}
}

/* A decimal value's number is not zero. */
static int dec_nonzero(const char *v)
{
	return v && strspn(v, "0") != strlen(v);
}

/* The outcome of a DONE record by SPEC §2 Status lists: its outcome=
 * when it has one; else FAILED for a signal, a time limit or an exit
 * status other than 0; OK for exit 0; else unknown. */
static enum outcome ref_outcome(const struct record *r)
{
	const char *x = record_get(r, "exit"), *o = record_get(r, "outcome");
	if (o)
		return strcmp(o, "OK") == 0 ? OUTCOME_OK : strcmp(o, "WARNING") == 0 ? OUTCOME_WARNING
		     : strcmp(o, "CANCELLED") == 0 ? OUTCOME_CANCELLED : OUTCOME_FAILED;
	if (dec_nonzero(record_get(r, "cancelled")))
		return OUTCOME_CANCELLED;
	if (record_get(r, "signal") || dec_nonzero(record_get(r, "timed_out")))
		return OUTCOME_FAILED;
	if (!x)
		return OUTCOME_UNKNOWN;
	return dec_nonzero(x) ? OUTCOME_FAILED : OUTCOME_OK;
}

/* record_run_result and run_result_status (what --once replays, SPEC §5 step
 * 3) against the record's fields, and against its outcome: a FAILED run
 * replays a status other than 0, an OK or unknown one 0. */
static void check_run_end(const struct record *r)
{
	struct run_result e = record_run_result(r);
	const char *x = record_get(r, "exit"), *sig = record_get(r, "signal");
	int want_exit = -1;
	if (x) {
		unsigned long long n = strtoull(x, NULL, 10);   /* 10 digits at most */
		want_exit = n <= 255 ? (int)n : 1;
	}
	CHECK(e.exit_status == want_exit);
	CHECK(same_opt(e.signal_name, sig));
	CHECK(!e.timed_out == !dec_nonzero(record_get(r, "timed_out")));
	int cancelled = ref_outcome(r) == OUTCOME_CANCELLED;
	const char *by = record_get(r, "cancelled_by");
	CHECK(same_opt(e.cancelled_by, !cancelled ? NULL : by ? by : "?"));
	int status = run_result_status(&e);
	enum outcome o = ref_outcome(r);
	CHECK(e.outcome == o);
	if (o == OUTCOME_OK || o == OUTCOME_WARNING) {
		/* A success replays 0, whatever the command's status (SPEC §5
		 * Outcomes: 24 in ok_exit or warn_exit). */
		CHECK(status == 0);
	} else if (e.timed_out) {
		CHECK(status == 124);
	} else if (sig) {
		int n = signal_number(sig);
		CHECK(status == (n > 0 ? 128 + n : 1));
	} else if ((cancelled || o == OUTCOME_FAILED) && want_exit <= 0) {
		/* A cancelled run is replayed as a FAILED one, and a FAILED
		 * one (outcome=FAILED with no exit status, or exit=0: a record
		 * made by hand) as a failure: never 0. */
		CHECK(status == 1);
	} else {
		CHECK(status == (want_exit > 0 ? want_exit : 0));
	}
	if ((o == OUTCOME_FAILED || o == OUTCOME_CANCELLED) != (status != 0)) {
		fprintf(stderr, "record_fuzz: outcome %d, replayed status %d\n", (int)ref_outcome(r), status);
		FAIL("--once would replay a FAILED run as a success, or an OK one as a failure");
	}
}

/* status_in against the SPEC's status lists, for masks drawn from H. */
static void check_status_in(const struct record *r, uint64_t h)
{
	static const unsigned all = STATUS_BIT(ST_PENDING) | STATUS_BIT(ST_RUNNING) |
				    STATUS_BIT(ST_STALE) | STATUS_BIT(ST_DONE) |
				    STATUS_BIT(ST_CORRUPT) | STATUS_BIT(ST_UNREADABLE) |
				    STATUS_OK_BIT | STATUS_FAILED_BIT | STATUS_LATE_BIT |
				    STATUS_CANCELLED_BIT | STATUS_PAUSED_BIT | STATUS_WARNING_BIT |
				    STATUS_OVERDUE_BIT;
	enum outcome o = r ? ref_outcome(r) : OUTCOME_UNKNOWN;
	const unsigned masks[] = {
		STATUS_OK_BIT, STATUS_FAILED_BIT, STATUS_OK_BIT | STATUS_FAILED_BIT,
		(unsigned)h & all, (unsigned)(h >> 16) & all,
	};
	for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
		for (int st = ST_PENDING; st <= ST_UNREADABLE; st++) {
			unsigned mask = masks[m];
			int want = (mask & STATUS_BIT(st)) != 0 ||
				   (st == ST_DONE && r &&
				    ((o == OUTCOME_OK && (mask & STATUS_OK_BIT)) ||
				     (o == OUTCOME_WARNING && (mask & STATUS_WARNING_BIT)) ||
				     (o == OUTCOME_FAILED && (mask & STATUS_FAILED_BIT)) ||
				     (o == OUTCOME_CANCELLED && (mask & STATUS_CANCELLED_BIT))));
			struct status_marks marks = {
				.outcome = r ? record_outcome(r) : OUTCOME_UNKNOWN,
				.late = (int)(h >> (32 + st)) & 1, .paused = (int)(h >> (40 + st)) & 1,
				.overdue = (int)(h >> (48 + st)) & 1,
			};
			want = want || (marks.late && (mask & STATUS_LATE_BIT)) ||
			       (marks.paused && (mask & STATUS_PAUSED_BIT)) ||
			       (marks.overdue && st == ST_RUNNING && (mask & STATUS_OVERDUE_BIT));
			if (!status_in(mask, (enum status)st, &marks) != !want) {
				fprintf(stderr, "record_fuzz: status_in(%#x, %s) is %d\n", mask,
					status_word((enum status)st), !want);
				FAIL("status_in disagrees with SPEC's status lists");
			}
		}
		static const struct status_marks none = { .outcome = OUTCOME_UNKNOWN };
		CHECK(!status_in(masks[m], ST_DONE, &none) == !(masks[m] & STATUS_BIT(ST_DONE)));
	}
}

/* A run's limit as record_to_running is given it: none, or a duration
 * parse_duration accepts (up to 3.2e9 seconds, fractions allowed). */
static double pick_timeout(uint64_t x)
{
	switch (x % 6) {
	case 0: return 0;                                            /* none */
	case 1: return -1;                                           /* inf */
	case 2: return (double)((x >> 8) & 0xffff) / 8;              /* n/8 s */
	case 3: return (double)((x >> 8) % 86400 + 1);               /* a day */
	case 4: return (double)((x >> 8) % 3200000000ULL + 1);       /* a century */
	default: return (double)((x >> 8) % 3200000000000ULL) / 1000; /* ms */
	}
}

/* R's timeout says TIMEOUT seconds (none when <= 0), to the nanosecond
 * (9 digits after the point at most, as the parser wants). */
static void check_timeout(const struct record *r, double timeout)
{
	const char *t = record_get(r, "timeout");
	if (timeout <= 0) {
		CHECK(t == NULL);
		return;
	}
	CHECK(t != NULL);
	char *end;
	double v = strtod(t, &end);
	CHECK(*end == '\0');
	double d = v > timeout ? v - timeout : timeout - v;
	if (d > 1e-9 + timeout * 1e-15) {
		fprintf(stderr, "record_fuzz: timeout %.17g written as %s\n", timeout, t);
		FAIL("the record's timeout is not the run's limit");
	}
}

/* The owner fields of a RUNNING record R, as written for O. */
static void check_owner_fields(const struct record *r, const struct owner *o)
{
	int any = o->kind != OWNER_NONE;
	if (!any) {
		static const char *const none[] = {
			"owner", "host", "pid", "pid_start", "boot_id", "pid_ns", "time_ns",
			"run_lock", NULL,
		};
		for (const char *const *k = none; *k; k++)
			CHECK(record_get(r, *k) == NULL);
		return;
	}
	CHECK(same_opt(record_get(r, "owner"), o->kind == OWNER_LOCK ? "lock" : "pid"));
	CHECK(same_opt(record_get(r, "host"), o->host));
	const char *p = record_get(r, "pid");
	CHECK(p && atol(p) == o->pid);
	/* 0 / NULL: absent, not written. */
	const struct { const char *key; unsigned long long v; } nums[] = {
		{ "pid_start", o->pid_start }, { "pid_ns", o->pid_ns }, { "time_ns", o->time_ns },
		{ "run_lock", o->kind == OWNER_LOCK ? o->run_lock : 0 },
	};
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		const char *v = record_get(r, nums[i].key);
		if (!nums[i].v) {
			CHECK(v == NULL);
		} else {
			CHECK(v && strtoull(v, NULL, 10) == nums[i].v);
		}
	}
	CHECK(same_opt(record_get(r, "boot_id"), o->boot_id));
}

/* The ends of a run (SPEC §5 step 6) the DONE transition is given. */
static struct run_result pick_end(uint64_t x, int which)
{
	static const char *const sigs[] = { "TERM", "KILL", "SEGV", "RTMIN+3", "RTMAX-2" };
	struct run_result e;
	e.exit_status = (int)(x % 258) - 2;              /* -2..255; < 0 unknown */
	e.signal_name = (x >> 9) % 3 == 0 ? sigs[(size_t)which % 5] : NULL;
	e.timed_out = (x >> 11) % 4 == 0;
	e.cancelled_by = (x >> 13) % 4 == 0 ? "ops@ops01.example" : NULL;
	e.outcome = OUTCOME_UNKNOWN;   /* jobreg-set: DONE judges it */
	return e;
}

/* SPEC §2 Warnings, §5 Outcomes: how a run that ended is judged by R's
 * ok_exit, warn_exit and (when DURATION >= 0: dispatch) min_duration. */
static enum outcome ref_judge(const struct record *r, const struct run_result *e,
			      double duration)
{
	unsigned char ok[256] = {0}, warn[256] = {0};
	const char *v;
	if ((v = record_get(r, "ok_exit")))
		CHECK(ref_exit_list(v, strlen(v), ok));
	if ((v = record_get(r, "warn_exit")))
		CHECK(ref_exit_list(v, strlen(v), warn));
	v = record_get(r, "min_duration");
	double min = v ? strtod(v, NULL) : 0;
	if (e->cancelled_by)
		return OUTCOME_CANCELLED;
	if (e->signal_name || e->timed_out)
		return OUTCOME_FAILED;   /* whatever the lists say */
	if (e->exit_status < 0)
		return OUTCOME_UNKNOWN;
	if (e->exit_status <= 255 && warn[e->exit_status])
		return OUTCOME_WARNING;
	if (e->exit_status != 0 && !(e->exit_status <= 255 && ok[e->exit_status]))
		return OUTCOME_FAILED;
	return duration >= 0 && duration < min ? OUTCOME_WARNING : OUTCOME_OK;
}

/* Now and then the end as a dispatcher gives it: judged already, by R's
 * lists and min_duration, for a run of some seconds (X); outcome_judge
 * must agree with the reference. */
static void dispatcher_end(const struct record *r, struct run_result *e, uint64_t x)
{
	if (x % 3 != 0)
		return;
	struct outcome_policy p;
	double duration = (double)((x >> 2) % 20000) / 1000;
	struct outcome_facts f = { .exit_status = e->exit_status < 0 ? -1 : e->exit_status,
				   .signalled = e->signal_name != NULL, .timed_out = e->timed_out,
				   .cancelled = e->cancelled_by != NULL, .duration = duration };
	outcome_policy_of(r, &p);
	e->outcome = outcome_judge(&p, &f, NULL);
	CHECK(e->outcome == ref_judge(r, e, duration));
}

/* R is BEFORE after record_to_done_after(END, PRIOR) at NOW (PRIOR NULL:
 * record_to_done, nothing known before the run): SPEC §3 → DONE. */
static void check_done(const struct record *before, const struct record *r, time_t now,
		       const struct run_result *end, const char *note,
		       const struct before_run *prior)
{
	static const struct before_run nothing;
	if (!prior)
		prior = &nothing;
	char when[21];
	time_format(now, when);
	check_common(before, r, "DONE", note);
	CHECK(same_opt(record_get(r, "since"), when));
	/* The run's cancel and slots go; its cmd stays (check_kept). */
	for (const char *const *k = one_run_keys; *k; k++)
		CHECK(strcmp(*k, "cmd") == 0 || record_get(r, *k) == NULL);
	if (record_get(before, "status") && record_status(before) == ST_DONE &&
	    end->exit_status < 0 && !end->signal_name && !end->timed_out) {
		/* No result over a DONE record: its run's result and the
		 * counters stay (transition.h). */
		static const char *const same[] = {
			"ended", "exit", "signal", "timed_out", "failures", "consecutive_failures",
			"last_success", "last_success_started", "started", "host", "pid", "timeout",
			"cancelled", "cancelled_by", "cancelled_runs", "outcome", "warnings",
			"last_success_run", "last_success_warning", "retries_cancelled_by", NULL,
		};
		for (const char *const *k = same; *k; k++)
			CHECK(same_opt(record_get(r, *k), record_get(before, *k)));
		CHECK(record_outcome(r) == record_outcome(before));
		CHECK(!record_get(r, "retry_at"));
		check_runs(before, r, 0);
		check_kept(before, r, done_changes);
		check_status_in(r, (uint64_t)now * 0x9e3779b97f4a7c15ULL);
		return;
	}
	CHECK(same_opt(record_get(r, "ended"), when));
	/* Who ran it and its limit are kept. */
	static const char *const kept[] = { "started", "host", "pid", "timeout", NULL };
	for (const char *const *k = kept; *k; k++)
		CHECK(same_opt(record_get(r, *k), record_get(before, *k)));
	static const char *const dropped[] = {
		"owner", "pid_start", "boot_id", "pid_ns", "time_ns", "run_lock", "expires", NULL,
	};
	for (const char *const *k = dropped; *k; k++)
		CHECK(record_get(r, *k) == NULL);
	if (end->signal_name) {
		CHECK(same_opt(record_get(r, "signal"), end->signal_name) && !record_get(r, "exit"));
	} else if (end->exit_status >= 0) {
		const char *x = record_get(r, "exit");
		CHECK(x && atoi(x) == end->exit_status && !record_get(r, "signal"));
	} else {
		CHECK(!record_get(r, "exit") && !record_get(r, "signal"));
	}
	CHECK(same_opt(record_get(r, "timed_out"), end->timed_out ? "1" : NULL));
	CHECK(same_opt(record_get(r, "cancelled"), end->cancelled_by ? "1" : NULL));
	CHECK(same_opt(record_get(r, "cancelled_by"), end->cancelled_by));
	/* The outcome, and the history it moves: a cancelled run is neither
	 * OK nor FAILED, whatever its exit status (SPEC §2); the dispatcher's
	 * judgement, else the record's lists judge the exit status (SPEC §2
	 * Warnings: jobreg-set --exit N). */
	enum outcome want = end->outcome != OUTCOME_UNKNOWN ? end->outcome :
			    ref_judge(before, end, -1);
	static const char *const words[] = {
		[OUTCOME_OK] = "OK", [OUTCOME_WARNING] = "WARNING", [OUTCOME_FAILED] = "FAILED",
		[OUTCOME_CANCELLED] = "CANCELLED", [OUTCOME_UNKNOWN] = NULL,
	};
	CHECK(same_opt(record_get(r, "outcome"), words[want]));
	CHECK(record_outcome(r) == want);
	CHECK(ref_outcome(r) == want);
	CHECK(!record_get(r, "retries_cancelled_by"));
	int success = want == OUTCOME_OK || want == OUTCOME_WARNING;
	/* What a later --once replays is how this run ended. */
	struct run_result back = record_run_result(r);
	CHECK(!back.timed_out == !end->timed_out);
	CHECK(same_opt(back.signal_name, end->signal_name));
	CHECK(back.exit_status == (end->signal_name || end->exit_status < 0 ? -1 : end->exit_status));
	CHECK(same_opt(back.cancelled_by, end->cancelled_by));
	check_run_end(r);
	check_runs(before, r, 0);
	const char *f0 = record_get(before, "failures"), *f1 = record_get(r, "failures");
	/* A run's failure is counted once, whatever the corrections: the
	 * result the run had (a DONE record's, or FAILED for the attempt that
	 * set retry_at, counted then) decides what moves (transition.h). */
	enum outcome was = record_get(before, "retry_at") ? OUTCOME_FAILED :
			   record_get(before, "status") && record_status(before) == ST_DONE ?
			   ref_outcome(before) : OUTCOME_UNKNOWN;
	/* cancelled_runs: a cancelled run corrected takes its count back
	 * (not below 0), and its new result counts as any other's. */
	const char *k0 = record_get(before, "cancelled_runs"), *k1 = record_get(r, "cancelled_runs");
	int none = !k0 || dec_cmp(k0, "0") == 0;
	if (k0 && dec_cmp(k0, "9223372036854775807") >= 0)
		CHECK(same_opt(k1, k0));
	else if (was == OUTCOME_CANCELLED && want == OUTCOME_CANCELLED)
		CHECK(k1 && (none ? dec_cmp(k1, "1") == 0 : dec_cmp(k1, k0) == 0));
	else if (was == OUTCOME_CANCELLED)
		CHECK(none ? same_opt(k1, k0) : dec_cmp(k0, "1") == 0 ? !k1 : dec_is_next(k1, k0));
	else if (want == OUTCOME_CANCELLED)
		CHECK(dec_is_next(k0, k1));
	else
		CHECK(same_opt(k1, k0));
	if (was == OUTCOME_CANCELLED)
		was = OUTCOME_UNKNOWN;
	int saturated = f0 && dec_cmp(f0, "9223372036854775807") >= 0;
	if (want == OUTCOME_FAILED && was != OUTCOME_FAILED) {
		if (saturated) {
			CHECK(f1 && dec_cmp(f1, f0) >= 0);
		} else if (!dec_is_next(f0, f1)) {
			fprintf(stderr, "record_fuzz: failures was %s, is %s\n", f0 ? f0 : "(none)",
				f1 ? f1 : "(none)");
			FAIL("a FAILED run did not count failures up by one");
		}
	} else if (success && was == OUTCOME_FAILED && f0 && !saturated &&
		   dec_cmp(f0, "0") != 0) {
		/* A FAILED run corrected to OK: its failure taken back.  A
		 * cancel takes none back (SPEC §5a: no counter goes down). */
		if (dec_cmp(f0, "1") == 0)
			CHECK(!f1);
		else
			CHECK(dec_is_next(f1, f0));
	} else {
		CHECK(same_opt(f1, f0));
	}
	/* The last success: this run if OK or WARNING; if it was the
	 * success now FAILED, what came before it (nothing known to
	 * record_to_done); else kept.  So its run number (SPEC §5d: --after
	 * must not follow a run that did not succeed) and whether it was a
	 * warning. */
	int unmade = want == OUTCOME_FAILED && (was == OUTCOME_OK || was == OUTCOME_WARNING);
	char prior_run[24] = "";
	if (prior->last_success_run)
		snprintf(prior_run, sizeof prior_run, "%llu", prior->last_success_run);
	CHECK(same_opt(record_get(r, "last_success"),
		       success ? when : unmade ? (prior->last_success[0] ? prior->last_success : NULL) :
		       record_get(before, "last_success")));
	CHECK(same_opt(record_get(r, "last_success_started"),
		       success ? record_get(before, "started") :
		       unmade ? (prior->last_success_started[0] ? prior->last_success_started : NULL) :
		       record_get(before, "last_success_started")));
	const char *runs = record_get(before, "runs"), *lsr = record_get(r, "last_success_run");
	if (success)
		CHECK(lsr && lsr[0] && (lsr[0] != '0' || !lsr[1]) &&
		      dec_cmp(lsr, runs ? runs : "0") == 0);
	else
		CHECK(same_opt(lsr, unmade ? (prior_run[0] ? prior_run : NULL) :
				    record_get(before, "last_success_run")));
	CHECK(same_opt(record_get(r, "last_success_warning"),
		       want == OUTCOME_WARNING ? "1" : success ? NULL :
		       unmade ? (prior->last_success_warning ? "1" : NULL) :
		       record_get(before, "last_success_warning")));
	/* warnings: a WARNING run counts once, whatever the corrections. */
	const char *w0 = record_get(before, "warnings"), *w1 = record_get(r, "warnings");
	if (w0 && dec_cmp(w0, "9223372036854775807") >= 0)
		CHECK(same_opt(w1, w0));
	else if (want == OUTCOME_WARNING && was != OUTCOME_WARNING)
		CHECK(dec_is_next(w0, w1));
	else if (was == OUTCOME_WARNING && want != OUTCOME_WARNING && w0 && dec_cmp(w0, "0") != 0)
		CHECK(dec_cmp(w0, "1") == 0 ? !w1 : dec_is_next(w1, w0));
	else
		CHECK(same_opt(w1, w0));
	/* consecutive_failures: + 1 for FAILED (over the success it unmakes,
	 * those PRIOR knew of + 1), gone after OK, else kept. */
	const char *c0 = record_get(before, "consecutive_failures");
	const char *c1 = record_get(r, "consecutive_failures");
	if (success)
		CHECK(!c1);
	else if (want == OUTCOME_UNKNOWN || want == OUTCOME_CANCELLED || was == OUTCOME_FAILED)
		CHECK(same_opt(c1, c0));
	else if (unmade) {
		char want_c[24];
		snprintf(want_c, sizeof want_c, "%llu", prior->consecutive_failures + 1);
		CHECK(same_opt(c1, want_c));
	}
	else if (!(c0 && dec_cmp(c0, "9223372036854775807") >= 0))
		CHECK(dec_is_next(c0, c1));
	CHECK(!record_get(r, "retry_at"));
	check_kept(before, r, done_changes);
	check_status_in(r, (uint64_t)now * 0x9e3779b97f4a7c15ULL);
}

/* The owner the record itself names (for a renewal). */
static struct owner own_owner(const struct record *parsed)
{
	struct owner o;
	memset(&o, 0, sizeof o);
	const char *own = record_get(parsed, "owner"), *v;
	o.kind = !own ? OWNER_NONE : strcmp(own, "lock") == 0 ? OWNER_LOCK : OWNER_PID;
	v = record_get(parsed, "host");
	o.host = v ? v : "";
	v = record_get(parsed, "pid");
	o.pid = v ? atol(v) : 0;
	v = record_get(parsed, "pid_start");
	o.pid_start = v ? strtoull(v, NULL, 10) : 0;
	o.boot_id = record_get(parsed, "boot_id");
	v = record_get(parsed, "pid_ns");
	o.pid_ns = v ? strtoull(v, NULL, 10) : 0;
	v = record_get(parsed, "time_ns");
	o.time_ns = v ? strtoull(v, NULL, 10) : 0;
	v = record_get(parsed, "run_lock");
	o.run_lock = v ? strtoull(v, NULL, 10) : 0;
	return o;
}

static void transitions(const struct record *parsed, const uint8_t *data, size_t size)
{
	/* A deterministic "now" and TTL from the input, within the years
	 * time_format can write (a TTL is at most a century, see cli.c). */
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ULL;
	uint64_t h2 = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
	time_t now = (time_t)(1700000000 + (int64_t)(h % 400000000));
	time_t ttl = (time_t)(1 + (h >> 32) % 3200000000ULL);
	if (h & 1)
		now = (time_t)(h % (uint64_t)(T_MAX - 3200000001LL));
	char when[21];
	time_format(now, when);

	const char *note = (h & 2) ? "résumé ✓ \"quoted\" \\ back\tslash" : NULL;
	/* The record's own note as the new one, when it is a valid note. */
	const char *own_note = record_get(parsed, "note");
	if ((h & 4) && own_note && !note_problem(own_note))
		note = own_note;

	/* The owners: none, a dispatcher (lock), a pid, and the record's own. */
	struct owner owners[4];
	memset(owners, 0, sizeof owners);
	owners[0].kind = OWNER_NONE;
	owners[1].kind = OWNER_LOCK;
	owners[1].host = "build01";
	owners[1].pid = 41213;
	owners[1].pid_start = (h2 & 1) ? 0 : 8812345;
	owners[1].boot_id = (h2 & 2) ? NULL : "2fb9737d-c7c1-46e4-8990-aabd01a0259b";
	owners[1].pid_ns = (h2 & 4) ? 0 : 4026531836ULL;
	owners[1].time_ns = (h2 & 8) ? 0 : 4026531834ULL;
	owners[1].run_lock = (h2 & 16) ? 0 : 1234567;
	owners[2].kind = OWNER_PID;
	owners[2].host = "build01.example.org";
	owners[2].pid = 2147483647;
	owners[2].pid_start = 18446744073709551615ULL;
	owners[2].boot_id = (h & 8) ? NULL : "2fb9737d-c7c1-46e4-8990-aabd01a0259b";
	owners[2].pid_ns = (h2 & 32) ? 0 : 18446744073709551615ULL;
	owners[2].time_ns = (h2 & 64) ? 0 : 1;
	owners[2].run_lock = 99;   /* not written for a pid owner */
	owners[3] = own_owner(parsed);

	struct record r;

	/* → PENDING */
	copy_record(&r, parsed);
	record_to_pending(&r, now, note);
	check_common(parsed, &r, "PENDING", note);
	CHECK(same_opt(record_get(&r, "since"), when));
	for (const char *const *k = pending_changes + 3; *k; k++)
		CHECK(record_get(&r, *k) == NULL);
	check_kept(parsed, &r, pending_changes);
	check_runs(parsed, &r, 0);
	check_written(&r, "record_to_pending");
	check_json("job", &r, record_status(&r), &no_flags);
	record_free(&r);

	/* → RUNNING, each owner, with and without a TTL and a time limit */
	for (int o = 0; o < 4; o++) {
		const struct owner *ow = &owners[o];
		time_t expires = (h >> (8 + o)) & 1 ? now + ttl : 0;
		double timeout = pick_timeout(h2 >> (8 + 8 * o));
		copy_record(&r, parsed);
		/* A dispatcher's lock never renews: every dispatch is a new run. */
		int renewal = ow->kind != OWNER_LOCK && record_owned_by(&r, ow);
		struct run_start how = { ow, expires, timeout, 0 };
		record_to_running(&r, now, &how, note);
		check_common(parsed, &r, "RUNNING", note);
		/* Written for this owner (a pid owner without a boot id or a
		 * start time never matches, see record_owned_by). */
		if (ow->kind != OWNER_PID || (ow->boot_id && ow->pid_start))
			CHECK(record_owned_by(&r, ow));
		if (renewal) {
			const char *old = record_get(parsed, "since");
			CHECK(same_opt(record_get(&r, "since"), old ? old : when));
			old = record_get(parsed, "started");
			CHECK(same_opt(record_get(&r, "started"), old ? old : when));
		} else {
			CHECK(same_opt(record_get(&r, "since"), when));
			CHECK(same_opt(record_get(&r, "started"), when));
		}
		check_runs(parsed, &r, !renewal);
		CHECK(!record_get(&r, "ended") && !record_get(&r, "exit") &&
		      !record_get(&r, "signal") && !record_get(&r, "timed_out") &&
		      !record_get(&r, "cancelled") && !record_get(&r, "cancelled_by") &&
		      !record_get(&r, "outcome") && !record_get(&r, "retries_cancelled_by"));
		for (const char *const *k = one_run_keys; *k && !renewal; k++)
			CHECK(record_get(&r, *k) == NULL);
		check_owner_fields(&r, ow);
		if (expires) {
			char e[21];
			time_format(expires, e);
			CHECK(same_opt(record_get(&r, "expires"), e));
		} else {
			CHECK(!record_get(&r, "expires"));
		}
		check_timeout(&r, timeout);
		check_kept(parsed, &r, running_changes);
		check_written(&r, "record_to_running");
		check_status_in(&r, h2 >> o);
		check_json("job", &r, ST_RUNNING, &late_only);
		check_json("job", &r, ST_STALE, &no_flags);

		/* … then → DONE: keeps started, host, pid, timeout. */
		struct record run;
		copy_record(&run, &r);
		struct run_result end = pick_end(h >> (16 + 8 * o), o);
		dispatcher_end(&run, &end, h2 >> (4 + 8 * o));
		record_to_done(&r, now + 1, &end, NULL);
		check_done(&run, &r, now + 1, &end, NULL, NULL);
		check_timeout(&r, timeout);
		check_written(&r, "record_to_running then record_to_done");
		check_json("job", &r, record_status(&r), &late_only);

		/* … and a renewal of the run, by its owner: not a new run. */
		if (o == (int)(h2 >> 60) % 4 && ow->kind == OWNER_NONE) {
			record_free(&r);
			copy_record(&r, &run);
			CHECK(record_owned_by(&r, ow));
			struct run_start again = { ow, 0, timeout, 0 };
			record_to_running(&r, now + 2, &again, NULL);
			check_runs(&run, &r, 0);
			CHECK(same_opt(record_get(&r, "started"), record_get(&run, "started")));
			CHECK(same_opt(record_get(&r, "since"), record_get(&run, "since")));
			check_kept(&run, &r, running_changes);
			check_written(&r, "a renewal");
		}
		record_free(&run);
		record_free(&r);
	}

	/* → DONE straight from the record as it was (a record that was
	 * RUNNING, or any other: set DONE), … */
	struct run_result end = pick_end(h2 >> 40, 4);
	/* … with what came before the run, as the history tells it (a
	 * correction of a success to FAILED puts it back), or nothing. */
	struct before_run prior;
	memset(&prior, 0, sizeof prior);
	if (h2 & 128) {
		time_format(now - 86400 - 60, prior.last_success);
		if (h2 & 256)
			time_format(now - 86400 - 3600, prior.last_success_started);
		prior.last_success_run = (h2 >> 9) % 4 ? (h2 >> 11) % 1000 + 1 : 0;
		prior.last_success_warning = (h2 >> 21) & 1;
		prior.consecutive_failures = (h2 >> 22) % 3;
	}
	copy_record(&r, parsed);
	record_to_done_after(&r, now, &end, note, &prior);
	check_done(parsed, &r, now, &end, note, &prior);
	check_written(&r, "record_to_done");
	/* … and back to PENDING: the history stays. */
	struct record done;
	copy_record(&done, &r);
	record_to_pending(&r, now + 2, NULL);
	check_runs(&done, &r, 0);
	static const char *const history[] = { "failures", "last_success", "last_success_started",
						NULL };
	for (const char *const *k = history; *k; k++)
		CHECK(same_opt(record_get(&r, *k), record_get(&done, *k)));
	check_written(&r, "record_to_done then record_to_pending");
	record_free(&done);
	record_free(&r);
}

/* ------------------------------------------------------------------ */
/* cmd= (SPEC §5 step 5).                                              */

/* The words a shell reads back from Q (LEN bytes), as shquote writes
 * them, into OUT with a NUL between two words: one space between words;
 * in a word plain bytes (only those a shell takes as themselves), '…',
 * \' and $'…' (\\ \' \t \n \r \e \xHH).  0 when Q is not so made. */
static int ref_unquote(const char *q, size_t len, struct buf *out)
{
	buf_reset(out);
	buf_add(out, "", 0);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)q[i];
		if (c == ' ') {
			buf_addc(out, '\0');
			i++;
		} else if (c == '\'') {
			const char *end = memchr(q + i + 1, '\'', len - i - 1);
			if (!end)
				return 0;
			buf_add(out, q + i + 1, (size_t)(end - q) - i - 1);
			i = (size_t)(end - q) + 1;
		} else if (c == '\\') {
			if (i + 1 >= len || q[i + 1] != '\'')
				return 0;
			buf_addc(out, '\'');
			i += 2;
		} else if (c == '$') {
			if (i + 1 >= len || q[i + 1] != '\'')
				return 0;
			for (i += 2;; ) {
				if (i >= len)
					return 0;
				if (q[i] == '\'') {
					i++;
					break;
				}
				if (q[i] != '\\') {
					buf_addc(out, q[i++]);
					continue;
				}
				if (i + 1 >= len)
					return 0;
				char e = q[i + 1];
				const char *from = "\\'tnre", *to = "\\'\t\n\r\033", *at = strchr(from, e);
				if (e && at) {
					buf_addc(out, to[at - from]);
					i += 2;
				} else if (e == 'x' && i + 3 < len && hexval(q[i + 2]) >= 0 &&
					   hexval(q[i + 3]) >= 0) {
					buf_addc(out, (char)(hexval(q[i + 2]) * 16 + hexval(q[i + 3])));
					i += 4;
				} else {
					return 0;
				}
			}
		} else {
			if (!(c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || strchr("@%+=:,./_-", c)))
				return 0;
			buf_addc(out, (char)c);
			i++;
		}
	}
	return 1;
}

/* shquote_argv of the words of DATA (split at its NUL bytes, as no word
 * of an argv holds one): a value a record holds whatever the words — at
 * most SHQUOTE_MAX bytes, valid UTF-8, no control byte —, which reads back
 * as the words when it was not cut. */
static void check_shquote(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	size_t n = 1;
	for (size_t i = 0; i < size; i++)
		n += data[i] == '\0';
	char **argv = xmalloc((n + 1) * sizeof *argv);
	argv[0] = text;
	for (size_t i = 0, k = 1; i < size; i++)
		if (!data[i])
			argv[k++] = text + i + 1;
	argv[n] = NULL;
	struct buf q = {0}, back = {0}, rec = {0};
	shquote_argv(&q, argv);
	CHECK(q.data && q.len == strlen(q.data) && q.len <= SHQUOTE_MAX);
	CHECK(ref_utf8_valid(q.data, q.len));
	for (size_t i = 0; i < q.len; i++) {
		unsigned char c = (unsigned char)q.data[i];
		CHECK(c >= 0x20 && c != 0x7f);
		CHECK(!(c == 0xc2 && i + 1 < q.len && (unsigned char)q.data[i + 1] < 0xa0));
	}
	/* A cut leaves at least SHQUOTE_MAX - 3 bytes (a character is 4 at
	 * most): anything shorter is whole. */
	if (q.len < SHQUOTE_MAX - 3) {
		if (!ref_unquote(q.data, q.len, &back) || back.len != size ||
		    memcmp(back.data, data, size) != 0) {
			fprintf(stderr, "record_fuzz: cmd=%s\n", q.data);
			FAIL("shquote_argv's words do not read back as they were");
		}
	}
	struct record r;
	buf_adds(&rec, "version=1\nstatus=RUNNING\ncmd=");
	buf_add(&rec, q.data, q.len);
	must_parse(&r, rec.data, rec.len, "a record with shquote_argv's cmd");
	CHECK(strcmp(record_get(&r, "cmd"), q.data) == 0);
	record_free(&r);
	buf_free(&rec);
	buf_free(&back);
	buf_free(&q);
	free(argv);
	free(text);
}

/* ------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;

	/* utf8_valid / note_problem against the references. */
	CHECK(!utf8_valid(text, size) == !ref_utf8_valid(text, size));
	if (size <= NOTE_MAX + 1) {
		char *s = xstrndup(text, size);
		size_t n = strlen(s);
		CHECK(!note_problem(s) == !!ref_note_valid(s, n));
		if (ref_utf8_valid(s, n))
			check_json_string(s);
		free(s);
	}

	if (size <= 4096)
		check_shquote(data, size);

	/* Status words: the three written ones and STALE when allowed, in
	 * any case, nothing else. */
	if (size <= 8) {
		static const char *const words[] = { "PENDING", "RUNNING", "STALE", "DONE" };
		for (int allow = 0; allow <= 1; allow++) {
			int want = -1;
			for (int i = 0; i < 4; i++)
				if ((i != ST_STALE || allow) && size == strlen(words[i]) &&
				    strncasecmp(text, words[i], size) == 0 && !memchr(text, 0, size))
					want = i;
			CHECK(status_from_word(text, size, allow) == want);
		}
	}

	/* Times: a 20-byte input is a time text; 8 bytes are a time_t. */
	if (size == 20) {
		char s[21];
		memcpy(s, data, 20);
		s[20] = '\0';
		check_time_text(s);
	}
	if (size >= 8) {
		int64_t t;
		memcpy(&t, data, sizeof t);
		check_time_format((time_t)t);
		/* And within the years the format can write. */
		long long span = T_MAX - T_MIN + 1;
		long long in = (long long)(((uint64_t)t) % (uint64_t)span) + T_MIN;
		check_time_format((time_t)in);
	}

	/* The record. */
	struct record r;
	struct ref_line *lines;
	size_t nlines;
	const char *why = (const char *)1;
	r.fields = (struct field *)1;   /* garbage: record_parse must reset it */
	r.count = r.cap = 12345;
	int rc = record_parse(&r, text, size, &why);
	int ref = ref_parse(text, size, &lines, &nlines);
	if (rc != 0 && rc != -1)
		FAIL("record_parse returned neither 0 nor -1");
	if ((rc == 0) != ref) {
		fprintf(stderr, "record_fuzz: record_parse says %s (%s), the reference says %s\n",
			rc == 0 ? "valid" : "corrupt", rc == 0 ? "-" : why, ref ? "valid" : "corrupt");
		FAIL("record_parse disagrees with SPEC §3");
	}
	if (rc < 0) {
		CHECK(why != NULL && why != (const char *)1 && strlen(why) > 0);
		CHECK(r.count == 0 && r.fields == NULL);
		record_free(&r);   /* harmless on an empty record */
		free(lines);
		return 0;
	}
	CHECK(why == NULL);
	CHECK(r.count == nlines && r.count <= r.cap);
	for (size_t i = 0; i < r.count; i++) {
		CHECK(strlen(r.fields[i].key) == lines[i].klen &&
		      memcmp(r.fields[i].key, lines[i].key, lines[i].klen) == 0);
		CHECK(strlen(r.fields[i].value) == lines[i].vlen &&
		      memcmp(r.fields[i].value, lines[i].value, lines[i].vlen) == 0);
		/* record_get finds each field (linear: only for small records). */
		if (r.count <= 256)
			CHECK(record_get(&r, r.fields[i].key) == r.fields[i].value);
	}
	free(lines);
	enum status st = record_status(&r);
	CHECK(st == ST_PENDING || st == ST_RUNNING || st == ST_DONE);
	CHECK(strcasecmp(record_get(&r, "status"), status_word(st)) == 0);

	/* Every 20-byte value is a time text too. */
	for (size_t i = 0; i < r.count; i++)
		if (strlen(r.fields[i].value) == 20)
			check_time_text(r.fields[i].value);

	/* Round trip: format, parse, format again — the same bytes. */
	struct buf f1 = {0}, f2 = {0};
	int fits = record_format(&r, &f1) == 0;
	CHECK(fits == (f1.len <= RECORD_MAX));
	CHECK(f1.data && f1.len > 0 && f1.data[f1.len - 1] == '\n');
	/* The input's lines (a newline added at the end if missing), in the
	 * canonical key order. */
	CHECK(f1.len == size + (data[size - 1] != '\n'));
	{
		const char *p = f1.data;
		size_t last = 0;
		struct index ix;
		index_build(&ix, &r);
		for (size_t i = 0; i < r.count; i++) {
			const char *eq = strchr(p, '='), *nl = strchr(p, '\n');
			CHECK(eq && nl && eq < nl);
			char *k = xstrndup(p, (size_t)(eq - p));
			const char *v = index_get(&ix, k);
			CHECK(v && strlen(v) == (size_t)(nl - eq - 1) && memcmp(v, eq + 1, strlen(v)) == 0);
			size_t rk = rank(k);
			CHECK(rk >= last && (rk > last || rk == SPEC_KEYS || i == 0));
			last = rk;
			free(k);
			p = nl + 1;
		}
		CHECK(p == f1.data + f1.len);
		index_free(&ix);
	}
	struct record r2;
	if (!fits)
		goto skip_round_trip;
	must_parse(&r2, f1.data, f1.len, "record_format's text");
	record_format(&r2, &f2);
	if (f2.len != f1.len || memcmp(f1.data, f2.data, f1.len) != 0)
		FAIL("format(parse(format(record))) differs from format(record)");
	CHECK(r2.count == r.count);
	record_free(&r2);
skip_round_trip:

	/* The JSON, for every status, and for no record. */
	for (int s = ST_PENDING; s <= ST_UNREADABLE; s++)
		for (unsigned f = 0; f < 8; f++) {
			/* late, paused, and a line of none, one or very many;
			 * overdue and each health word in turn */
			struct job_flags x = { .late = f & 1, .paused = f >> 1 & 1,
					       .waiting = f < 4 ? 0 : f < 6 ? 1 : 18446744073709551615ULL,
					       .overdue = (int)((f + (unsigned)s) % 3 == 0),
					       .health = (enum health)((f + (unsigned)s) % HEALTH_COUNT) };
			check_json("nightly.build-01@x+y", &r, (enum status)s, &x);
		}
	check_json("nightly", NULL, ST_PENDING, &no_flags);
	{
		static const struct job_flags paused_stale = { .paused = 1, .health = HEALTH_STALE };
		check_json("nightly", NULL, ST_PENDING, &paused_stale);
	}

	/* The outcome of the record as it is, and the status lists. */
	CHECK(record_outcome(&r) == ref_outcome(&r));
	check_run_end(&r);
	check_status_in(&r, (uint64_t)size * 0x9e3779b97f4a7c15ULL);
	check_status_in(NULL, (uint64_t)size);

	/* The transitions. */
	transitions(&r, data, size);

	buf_free(&f1);
	buf_free(&f2);
	record_free(&r);
	return 0;
}
