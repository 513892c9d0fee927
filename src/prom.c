/* prom: jobreg-get -P, the jobs as metrics (see prom.h). */
#include "prom.h"
#include "transition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		"Runs of the job that ended FAILED (exit status not 0, a signal, or a time limit) or were lost." },
	[PROM_LOST] = { "jobreg_job_lost_runs_total", "counter",
		"Runs of the job that were lost: their owner died before it recorded a result." },
	[PROM_CONSECUTIVE] = { "jobreg_job_consecutive_failures", "gauge",
		"Runs of the job that failed or were lost since its last OK one." },
	[PROM_DURATION] = { "jobreg_job_duration_seconds", "gauge",
		"Duration of the job's last run (DONE), in seconds." },
	[PROM_LATE] = { "jobreg_job_late", "gauge",
		"1 when the job is late: its late_after has passed since its last success (or since late_after was given), else 0." },
	[PROM_LATE_AFTER] = { "jobreg_job_late_after_seconds", "gauge",
		"How long after its last success the job is late, in seconds." },
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

/* The number KEY of R (a plain or fractional decimal), or DEFAULT_VALUE
 * when it has none (NULL: no sample). */
static void count_sample(struct prom *p, enum prom_family fam, const char *job,
			 const struct record *r, const char *key, const char *default_value)
{
	const char *v = r ? record_get(r, key) : NULL;
	struct buf text = {0};
	if (!v && !default_value)
		return;
	json_number(&text, v ? v : default_value);
	sample(p, fam, job, NULL, text.data);
	buf_free(&text);
}

void prom_add(struct prom *p, const char *job, const struct record *r, enum status status,
	      int late)
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
	count_sample(p, PROM_RUNS, job, r, "runs", "0");
	count_sample(p, PROM_FAILURES, job, r, "failures", "0");
	count_sample(p, PROM_LOST, job, r, "lost", "0");
	count_sample(p, PROM_CONSECUTIVE, job, r, "consecutive_failures", "0");
	const char *from = r ? record_get(r, "started") : NULL, *to = r ? record_get(r, "ended") : NULL;
	time_t t0, t1;
	if (status == ST_DONE && from && to && time_parse(from, &t0) == 0 && time_parse(to, &t1) == 0) {
		char text[24];
		snprintf(text, sizeof text, "%lld", (long long)(t1 - t0));
		sample(p, PROM_DURATION, job, NULL, text);
	}
	if (r && record_get(r, "late_after")) {
		sample(p, PROM_LATE, job, NULL, late ? "1" : "0");
		count_sample(p, PROM_LATE_AFTER, job, r, "late_after", NULL);
	}
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
