#include "output.h"
#include "signame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void output_plain(struct buf *out, const char *job, enum status status, int with_id)
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

void output_long(struct buf *out, const char *job, const struct record *r,
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
		"job", "stale", "corrupt", "unreadable", "duration",
	};
	return one_of(key, reserved, sizeof reserved / sizeof reserved[0]);
}

/* Keys the parser checks are decimal numbers (timeout with a fraction;
 * version is 1). */
static int json_number_key(const char *key)
{
	static const char *const numbers[] = {
		"version", "pid", "pid_start", "exit", "runs", "failures", "pid_ns",
		"time_ns", "run_lock", "timeout",
	};
	return one_of(key, numbers, sizeof numbers / sizeof numbers[0]);
}

/* Flags: checked decimals, true when not 0. */
static int json_flag_key(const char *key)
{
	return strcmp(key, "timed_out") == 0;
}

/* A checked decimal ("007", "1.50", ".5", "2.") as a valid JSON number:
 * no leading zeros, a digit on both sides of a point. */
static void number(struct buf *out, const char *v)
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

void output_json(struct buf *out, const char *job, const struct record *r,
		 enum status status)
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
			number(out, f->value);
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
	buf_adds(out, "}\n");
}

/* The status a DONE record's run ended with, as dispatch --once replays
 * it (one rule, in record.c): 124 if a time limit ended it, 128+N for
 * signal N, else its exit status; -1 if unknown. */
static int exit_code(const struct record *r)
{
	if (record_outcome(r) == OUTCOME_UNKNOWN)
		return -1;
	struct run_end end = record_run_end(r);
	return run_end_status(&end);
}

/* ---- Prometheus text exposition format ------------------------------- */

static const struct {
	const char *name, *type, *help;
} families[PROM_FAMILIES] = {
	[PROM_STATUS] = { "jobreg_job_status", "gauge",
		"Status of the job: 1 for its status (pending, running, stale or done), 0 for the other three." },
	[PROM_EXIT] = { "jobreg_job_exit_code", "gauge",
		"Exit status of the job's last run (DONE): 128+N for signal N, 124 when its time limit ended it." },
	[PROM_START] = { "jobreg_job_start_time_seconds", "gauge",
		"Start of the job's current or last run, in seconds since the epoch." },
	[PROM_END] = { "jobreg_job_end_time_seconds", "gauge",
		"End of the job's last run, in seconds since the epoch." },
	[PROM_SUCCESS] = { "jobreg_job_last_success_time_seconds", "gauge",
		"End of the job's last run that exited 0, in seconds since the epoch." },
	[PROM_RUNS] = { "jobreg_job_runs_total", "counter",
		"Runs of the job started since its record was created." },
	[PROM_FAILURES] = { "jobreg_job_failures_total", "counter",
		"Runs of the job that ended FAILED (exit status not 0, a signal, or a time limit)." },
};
static const char corrupt_name[] = "jobreg_corrupt_records";
static const char corrupt_help[] =
	"Records of the registry that are corrupt or cannot be read (they have no jobreg_job_ series).";
static const char up_name[] = "jobreg_registry_up";
static const char up_help[] =
	"1 when the registry directory exists and could be listed, else 0.";

/* A label value: backslash, double quote and newline escaped. */
static void label_value(struct buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			buf_adds(out, "\\\\");
		else if (*s == '"')
			buf_adds(out, "\\\"");
		else if (*s == '\n')
			buf_adds(out, "\\n");
		else
			buf_addc(out, *s);
	}
}

void prom_init(struct prom *p, const char *registry)
{
	struct buf label = {0};
	memset(p, 0, sizeof *p);
	label_value(&label, registry);
	p->registry = label.data ? label.data : xstrdup("");
}

/* NAME{name="JOB",registry="REG"[,EXTRA]} VALUE.  Not job=: that is the
 * label a scrape sets to the target's job, which would rename ours to
 * exported_job. */
static void sample(struct prom *p, enum prom_family fam, const char *job,
		   const char *extra, const char *value)
{
	struct buf *out = &p->family[fam];
	buf_adds(out, families[fam].name);
	buf_adds(out, "{name=\"");
	label_value(out, job);
	buf_adds(out, "\",registry=\"");
	buf_adds(out, p->registry);
	buf_addc(out, '"');
	if (extra)
		buf_adds(out, extra);
	buf_addf(out, "} %s\n", value);
}

static void time_sample(struct prom *p, enum prom_family fam, const char *job,
			const struct record *r, const char *key)
{
	const char *v = r ? record_get(r, key) : NULL;
	time_t t;
	char text[24];
	if (!v || time_parse(v, &t) < 0)
		return;
	snprintf(text, sizeof text, "%lld", (long long)t);
	sample(p, fam, job, NULL, text);
}

static void count_sample(struct prom *p, enum prom_family fam, const char *job,
			 const struct record *r, const char *key)
{
	const char *v = r ? record_get(r, key) : NULL;
	struct buf text = {0};
	number(&text, v ? v : "0");
	sample(p, fam, job, NULL, text.data);
	buf_free(&text);
}

void prom_add(struct prom *p, const char *job, const struct record *r, enum status status)
{
	static const enum status shown[] = { ST_PENDING, ST_RUNNING, ST_STALE, ST_DONE };
	static const char *const names[] = { "pending", "running", "stale", "done" };
	if (status == ST_CORRUPT || status == ST_UNREADABLE) {
		p->unusable++;
		return;
	}
	if (r && r->count == 0)
		r = NULL;
	for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
		char extra[32];
		snprintf(extra, sizeof extra, ",status=\"%s\"", names[i]);
		sample(p, PROM_STATUS, job, extra, status == shown[i] ? "1" : "0");
	}
	int code = r && status == ST_DONE ? exit_code(r) : -1;
	if (code >= 0) {
		char text[16];
		snprintf(text, sizeof text, "%d", code);
		sample(p, PROM_EXIT, job, NULL, text);
	}
	time_sample(p, PROM_START, job, r, "started");
	time_sample(p, PROM_END, job, r, "ended");
	time_sample(p, PROM_SUCCESS, job, r, "last_success");
	count_sample(p, PROM_RUNS, job, r, "runs");
	count_sample(p, PROM_FAILURES, job, r, "failures");
}

static void header(struct buf *out, const char *name, const char *type, const char *help)
{
	buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void prom_finish(struct prom *p, int registry_up, struct buf *out)
{
	for (int fam = 0; fam < PROM_FAMILIES; fam++) {
		header(out, families[fam].name, families[fam].type, families[fam].help);
		if (p->family[fam].len)
			buf_add(out, p->family[fam].data, p->family[fam].len);
		buf_free(&p->family[fam]);
	}
	header(out, corrupt_name, "gauge", corrupt_help);
	buf_addf(out, "%s{registry=\"%s\"} %llu\n", corrupt_name, p->registry, p->unusable);
	header(out, up_name, "gauge", up_help);
	buf_addf(out, "%s{registry=\"%s\"} %d\n", up_name, p->registry, registry_up ? 1 : 0);
	free(p->registry);
	p->registry = NULL;
}
