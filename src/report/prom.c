/* prom: jobreg-get -P, the jobs as metrics (see prom.h). */
#include "report/prom.h"
#include "record/transition.h"

#include <stdlib.h>
#include <string.h>

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
	[PROM_CANCELLED] = { "jobreg_job_cancelled_runs_total", "counter",
		"Runs of the job that were cancelled (jobreg-set --cancel, jobreg-dispatch --replace)." },
	[PROM_SKIPPED] = { "jobreg_job_skipped_total", "counter",
		"Starts of the job refused: it was running or paused, or waiters were ahead." },
	[PROM_COALESCED] = { "jobreg_job_coalesced_total", "counter",
		"Dispatches of the job folded into a run already waiting (--coalesce)." },
	[PROM_WAITING] = { "jobreg_job_waiting", "gauge",
		"Dispatchers of the job waiting in line for their turn." },
	[PROM_PAUSED] = { "jobreg_job_paused", "gauge",
		"1 when the job is paused (jobreg-set --pause; -a: every job), else 0." },
	[PROM_HEALTH] = { "jobreg_job_health", "gauge",
		"Health of the job: 1 for its health (ok, warning, late, failed, overdue or stale), 0 for the other five." },
	[PROM_WARNINGS] = { "jobreg_job_warnings_total", "counter",
		"Runs of the job that ended WARNING (dispatch --warn-exit, --min-duration)." },
	[PROM_OVERDUE] = { "jobreg_job_overdue", "gauge",
		"1 when the job's run has been running longer than its overdue_after, else 0." },
};
/* The registry's gauges, after the jobs' families, in this order (all
 * gauges: a name ending in _total is a counter's). */
enum { REG_CORRUPT, REG_PAUSED, REG_UP, REG_SLOTS_USED, REG_SLOTS_CAPACITY, REG_GAUGES };
static const struct {
	const char *name, *help;
} gauges[REG_GAUGES] = {
	[REG_CORRUPT] = { "jobreg_corrupt_records",
		"Records of the registry that are corrupt or cannot be read (they have no jobreg_job_ series)." },
	[REG_PAUSED] = { "jobreg_registry_paused",
		"1 when the registry is paused (jobreg-set --pause -a): every job is, else 0." },
	[REG_UP] = { "jobreg_registry_up",
		"1 when the registry directory exists and could be listed, else 0." },
	[REG_SLOTS_USED] = { "jobreg_slots_in_use",
		"Slots of the group (dispatch --slots) held by a live run." },
	[REG_SLOTS_CAPACITY] = { "jobreg_slots_capacity",
		"Slots of the group (dispatch --slots N): its files DIR/.NAME.slot.K." },
};

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

/* label_value() of S, a new string. */
static char *label_dup(const char *s)
{
	struct buf label = {0};
	label_value(&label, s);
	return label.data ? label.data : xstrdup("");
}

void prom_init(struct prom *p, const char *registry)
{
	memset(p, 0, sizeof *p);
	p->registry = label_dup(registry);
}

/* ---- prom_add: a job's values, one a family, each NUL-ended (empty: no sample) */

static void time_value(struct buf *values, const struct record *r, const char *key)
{
	time_t t;
	if (record_time(r, key, &t) == 0)
		buf_addf(values, "%lld", (long long)t);
	buf_addc(values, '\0');
}

/* The number KEY of R, or DEFAULT_VALUE when it has none (NULL: no sample). */
static void count_value(struct buf *values, const struct record *r, const char *key,
			const char *default_value)
{
	const char *v = r ? record_get(r, key) : NULL;
	if (v || default_value)
		json_number(values, v ? v : default_value);
	buf_addc(values, '\0');
}

static const enum status shown[] = { ST_PENDING, ST_RUNNING, ST_STALE, ST_DONE };
static const char *const shown_names[] = { "pending", "running", "stale", "done" };
#define NSHOWN (sizeof shown / sizeof shown[0])
/* The health label's values, in the order of enum health. */
static const char *const health_names[HEALTH_COUNT] = {
	"ok", "warning", "late", "failed", "overdue", "stale",
};

void prom_add(struct prom *p, const char *job, const struct record *r, enum status status,
	      const struct job_flags *x)
{
	struct buf *v = &p->values;
	if (status == ST_CORRUPT || status == ST_UNREADABLE) {
		p->unusable++;
		return;
	}
	if (r && r->count == 0)
		r = NULL;
	if (p->njobs == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->jobs = xrealloc(p->jobs, p->cap * sizeof *p->jobs);
	}
	p->jobs[p->njobs].name = job;
	p->jobs[p->njobs++].at = v->len;

	/* In the order of enum prom_family.  The status: its index in
	 * shown[] (NSHOWN for none of them). */
	size_t i = 0;
	while (i < NSHOWN && shown[i] != status)
		i++;
	buf_addc(v, (char)('0' + i));
	buf_addc(v, '\0');
	/* The exit status as dispatch --once replays it (run_result_status()),
	 * but the command's own for an OK or WARNING run of exit 24: the
	 * outcome is the health series' to say. */
	if (r && status == ST_DONE && record_outcome(r) != OUTCOME_UNKNOWN) {
		struct run_result end = record_run_result(r);
		end.outcome = OUTCOME_UNKNOWN;
		buf_addf(v, "%d", run_result_status(&end));
	}
	buf_addc(v, '\0');
	time_value(v, r, "started");
	time_value(v, r, "ended");
	time_value(v, r, "last_success");
	count_value(v, r, "runs", "0");
	count_value(v, r, "failures", "0");
	count_value(v, r, "lost", "0");
	count_value(v, r, "consecutive_failures", "0");
	long long seconds;
	if (status == ST_DONE && record_duration(r, &seconds) == 0)
		buf_addf(v, "%lld", seconds);
	buf_addc(v, '\0');
	if (r && record_get(r, "late_after"))
		buf_addc(v, x->late ? '1' : '0');
	buf_addc(v, '\0');
	count_value(v, r, "late_after", NULL);
	count_value(v, r, "cancelled_runs", "0");
	count_value(v, r, "skipped", "0");
	count_value(v, r, "coalesced", "0");
	buf_addf(v, "%llu", x->waiting);
	buf_addc(v, '\0');
	buf_addc(v, x->paused ? '1' : '0');
	buf_addc(v, '\0');
	buf_addc(v, (char)('0' + x->health));
	buf_addc(v, '\0');
	count_value(v, r, "warnings", "0");
	if (r && record_get(r, "overdue_after"))
		buf_addc(v, x->overdue ? '1' : '0');
	buf_addc(v, '\0');
}

void prom_add_slots(struct prom *p, const char *group, unsigned long in_use, unsigned long capacity)
{
	p->slots = xrealloc(p->slots, (p->nslots + 1) * sizeof *p->slots);
	p->slots[p->nslots++] = (struct prom_slots){ label_dup(group), in_use, capacity };
}

/* ---- prom_more: the text, family after family ---------------------- */

/* FAM's samples of JOB, whose value there is VALUE: NAME{name="JOB",
 * registry="REG"} VALUE; the status and health families' one a word,
 * status="WORD" (health="WORD"), 1 for the one VALUE's digit names.
 * Not job=: a scrape sets that label to the target's job, and would
 * rename ours to exported_job. */
static void job_samples(const struct prom *p, struct buf *out, enum prom_family fam,
			const char *job, const char *value)
{
	const char *const *words = fam == PROM_STATUS ? shown_names
				 : fam == PROM_HEALTH ? health_names : NULL;
	size_t series = fam == PROM_STATUS ? NSHOWN : fam == PROM_HEALTH ? HEALTH_COUNT : 1;
	for (size_t i = 0; i < series; i++) {
		buf_addf(out, "%s{name=\"", families[fam].name);
		label_value(out, job);
		buf_addf(out, "\",registry=\"%s\"", p->registry);
		if (words)
			buf_addf(out, ",%s=\"%s\"} %c\n", fam == PROM_STATUS ? "status" : "health",
				 words[i], (size_t)(value[0] - '0') == i ? '1' : '0');
		else
			buf_addf(out, "} %s\n", value);
	}
}

static void header(struct buf *out, const char *name, const char *type, const char *help)
{
	buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int prom_more(struct prom *p, int registry_up, struct buf *out)
{
	for (; p->family < PROM_FAMILIES; p->family++, p->next = 0) {
		enum prom_family fam = (enum prom_family)p->family;
		if (p->next == 0)
			header(out, families[fam].name, families[fam].type, families[fam].help);
		while (p->next < p->njobs) {
			/* Each job's values are in family order: step past this one. */
			struct prom_job *job = &p->jobs[p->next++];
			const char *value = p->values.data + job->at;
			job->at += strlen(value) + 1;
			if (*value)
				job_samples(p, out, fam, job->name, value);
			if (out->len >= PROM_CHUNK)
				return 1;
		}
	}
	unsigned long long value[] = { p->unusable, p->registry_paused ? 1 : 0, registry_up ? 1 : 0 };
	for (int g = REG_CORRUPT; g <= REG_UP; g++) {
		header(out, gauges[g].name, "gauge", gauges[g].help);
		buf_addf(out, "%s{registry=\"%s\"} %llu\n", gauges[g].name, p->registry, value[g]);
	}
	for (int g = REG_SLOTS_USED; g <= REG_SLOTS_CAPACITY && p->nslots; g++) {
		header(out, gauges[g].name, "gauge", gauges[g].help);
		for (size_t i = 0; i < p->nslots; i++)
			buf_addf(out, "%s{registry=\"%s\",group=\"%s\"} %lu\n", gauges[g].name,
				 p->registry, p->slots[i].group,
				 g == REG_SLOTS_CAPACITY ? p->slots[i].capacity : p->slots[i].in_use);
	}
	prom_free(p);
	return 0;
}

void prom_free(struct prom *p)
{
	free(p->jobs);
	buf_free(&p->values);
	free(p->registry);
	for (size_t i = 0; i < p->nslots; i++)
		free(p->slots[i].group);
	free(p->slots);
	memset(p, 0, sizeof *p);
}
