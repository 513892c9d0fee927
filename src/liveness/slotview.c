#include "liveness/slotview.h"
#include "registry/slots.h"
#include "liveness/jobstate.h"
#include "record/transition.h"
#include "util/msg.h"

#include <stdlib.h>
#include <string.h>

/* Does the comma-separated LIST hold ITEM? */
static int list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, item, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Slot K of GROUP into V: who holds it, by the readers' rule. */
static int view_slot(const struct registry *reg, const char *group, unsigned long k,
		     struct slot_view *v)
{
	char *name = slot_file_name(group, k);
	struct buf data = {0}, item = {0};
	int found = 0;
	*v = (struct slot_view){ .group = xstrdup(group), .slot = k };
	int rc = reg_read(reg, group, name, 4096, &data, &found);
	free(name);
	/* "JOB RUN": the job is all that counts; its record says the rest. */
	size_t len = found && data.data ? strcspn(data.data, " \n") : 0;
	char *job = len ? xstrndup(data.data, len) : NULL;
	buf_free(&data);
	if (rc || !job || !valid_job_id(job)) {
		free(job);
		return rc;
	}
	struct job_state st;
	rc = jobstate_load(reg, job, &st);
	buf_addf(&item, "%s:%lu", group, k);
	if (!rc && st.status == ST_RUNNING && list_has(record_get(&st.rec, "slots"), item.data)) {
		const char *host = record_get(&st.rec, "host"), *pid = record_get(&st.rec, "pid");
		v->job = job;
		job = NULL;
		v->run = record_count(&st.rec, "runs");
		v->host = host ? xstrdup(host) : NULL;
		v->pid = pid ? xstrdup(pid) : NULL;
	}
	jobstate_free(&st);
	buf_free(&item);
	free(job);
	return rc == EXIT_CORRUPT ? 0 : rc;   /* (a corrupt record holds nothing) */
}

struct named { char *group; unsigned long k; };

static int by_group_slot(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->group, y->group);
	return c ? c : (x->k > y->k) - (x->k < y->k);
}

int slotview_list(const struct registry *reg, const struct listing *l, char *const *groups,
		  size_t ngroups, struct slot_views *out)
{
	struct named *files = xmalloc((l->nslots + 1) * sizeof *files);
	size_t n = 0;
	int status = 0;
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < l->nslots; i++) {
		if (!slot_file_parse(l->slots[i], &files[n].group, &files[n].k))
			continue;
		int wanted = ngroups == 0;
		for (size_t j = 0; j < ngroups && !wanted; j++)
			wanted = strcmp(groups[j], files[n].group) == 0;
		if (wanted)
			n++;
		else
			free(files[n].group);
	}
	if (n > 1)
		qsort(files, n, sizeof *files, by_group_slot);
	out->v = xmalloc((n + 1) * sizeof *out->v);
	for (size_t i = 0; i < n; i++) {
		keep_first(&status, view_slot(reg, files[i].group, files[i].k, &out->v[out->count++]));
		free(files[i].group);
	}
	free(files);
	return status;
}

int slotview_group(const struct registry *reg, const char *group, unsigned long n,
		   struct slot_views *out)
{
	int status = 0;
	out->v = xmalloc((n + 1) * sizeof *out->v);
	out->count = 0;
	for (unsigned long k = 1; k <= n; k++)
		keep_first(&status, view_slot(reg, group, k, &out->v[out->count++]));
	return status;
}

void slotview_free(struct slot_views *s)
{
	for (size_t i = 0; i < s->count; i++) {
		free(s->v[i].group);
		free(s->v[i].job);
		free(s->v[i].host);
		free(s->v[i].pid);
	}
	free(s->v);
	memset(s, 0, sizeof *s);
}

void slotview_holders(struct buf *out, const struct slot_views *s)
{
	size_t n = 0;
	buf_addf(out, "%zu held", s->count);
	for (size_t i = 0; i < s->count; i++)
		if (s->v[i].job)
			buf_addf(out, "%s%s", n++ ? ", " : ": ", s->v[i].job);
	/* (a process an ended run left, or a run not yet on record) */
	if (n < s->count)
		buf_addf(out, "%s%zu by no run on record", n ? ", " : ": ", s->count - n);
}
