#include "record/after.h"
#include "record/transition.h"

#include <string.h>

/* Each comma-separated item of V (none empty) a job id, with ":RUN" after
 * it when WITH_RUN. */
static int items_ok(const char *v, int with_run)
{
	char id[JOB_ID_MAX + 1];
	unsigned long long run;
	for (;;) {
		size_t n = strcspn(v, with_run ? ":," : ",");
		if (n == 0 || n > JOB_ID_MAX)
			return 0;
		memcpy(id, v, n);
		id[n] = '\0';
		if (!valid_job_id(id))
			return 0;
		v += n;
		if (with_run) {
			size_t k;
			if (*v++ != ':' || (k = strcspn(v, ",")) == 0 ||
			    parse_digits(v, k, COUNTER_MAX, &run) < 0)
				return 0;
			v += k;
		}
		if (*v == '\0')
			return 1;
		v++;   /* ',' */
	}
}

int after_list_ok(const char *v)
{
	return items_ok(v, 0);
}

int after_seen_ok(const char *v)
{
	return items_ok(v, 1);
}

int after_seen_get(const char *seen, const char *job, unsigned long long *run)
{
	size_t len = strlen(job);
	for (const char *p = seen; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, job, len) == 0 && p[len] == ':')
			return parse_digits(p + len + 1, strcspn(p + len + 1, ","), COUNTER_MAX, run) == 0;
	return 0;
}

/* OWN's entry for F that still counts (SPEC §5d: one above F's runs is
 * from before F was cleared): 1 with *RUN, or 0. */
static int entry(const struct record *own, const struct after_fact *f, unsigned long long *run)
{
	return after_seen_get(record_get(own, "after_seen"), f->job, run) && *run <= f->runs;
}

long after_unmet(const struct record *own, const struct after_fact *f, size_t n)
{
	unsigned long long seen;
	for (size_t i = 0; i < n; i++)
		if (!f[i].found || f[i].running || !f[i].succeeded ||
		    (entry(own, &f[i], &seen) && f[i].success <= seen))
			return (long)i;
	return -1;
}

void after_describe(struct buf *b, const struct record *own, const struct after_fact *f)
{
	unsigned long long seen;
	buf_adds(b, f->job);
	if (!f->found)
		buf_adds(b, " (no record)");
	else if (f->running)
		buf_adds(b, " (running)");
	else if (entry(own, f, &seen))
		buf_addf(b, " (no success since run %llu)", seen);
	else
		buf_adds(b, " (no success yet)");
}

void after_seen_format(struct buf *b, const struct after_fact *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_addf(b, "%s%s:%llu", i ? "," : "", f[i].job, f[i].success);
}

void record_set_after(struct record *r, const char *list)
{
	if (*list)
		record_put(r, "after", list);
	else
		record_drop(r, "after");
}
