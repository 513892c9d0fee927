/* outcome: SPEC §2 Warnings, §5 Outcomes. */
#include "record/outcome.h"
#include "record/record.h"
#include "util/sys.h"

#include <stdlib.h>
#include <string.h>

#define EXIT_MAX 255

/* One number of a list, at *S, advanced past it; -1: none or over 255. */
static int list_number(const char **s)
{
	const char *p = *s;
	unsigned long long v;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == *s || parse_digits(*s, (size_t)(p - *s), EXIT_MAX, &v) < 0)
		return -1;
	*s = p;
	return (int)v;
}

int exit_set_parse(const char *s, struct exit_set *set)
{
	memset(set, 0, sizeof *set);
	for (;;) {
		int from = list_number(&s), to = from;
		if (from >= 0 && *s == '-') {
			s++;
			to = list_number(&s);
		}
		if (from < 0 || to < from)
			return -1;
		for (int n = from; n <= to; n++)
			set->bits[n / 8] |= (unsigned char)(1u << (n % 8));
		if (*s == '\0')
			return 0;
		if (*s++ != ',')
			return -1;
	}
}

int exit_set_has(const struct exit_set *set, int status)
{
	return status >= 0 && status <= EXIT_MAX && (set->bits[status / 8] >> (status % 8)) & 1;
}

int exit_set_common(const struct exit_set *a, const struct exit_set *b)
{
	for (int n = 0; n <= EXIT_MAX; n++)
		if (exit_set_has(a, n) && exit_set_has(b, n))
			return n;
	return -1;
}

void outcome_policy_of(const struct record *r, struct outcome_policy *p)
{
	const char *ok = record_get(r, "ok_exit"), *warn = record_get(r, "warn_exit");
	const char *min = record_get(r, "min_duration");
	memset(p, 0, sizeof *p);
	if (ok)
		(void)exit_set_parse(ok, &p->ok);
	if (warn)
		(void)exit_set_parse(warn, &p->warn);
	p->min_duration = min ? strtod(min, NULL) : 0;
}

enum outcome outcome_judge(const struct outcome_policy *p, const struct outcome_facts *f,
			   enum warning_cause *why)
{
	enum warning_cause cause = WARN_NONE;
	enum outcome o = OUTCOME_OK;
	/* The lists judge exit statuses only: a signal or a time limit is
	 * FAILED whatever they say. */
	int exited = !f->signalled && !f->timed_out;
	if (f->cancelled) {
		o = OUTCOME_CANCELLED;
	} else if (exited && f->exit_status < 0) {
		o = OUTCOME_UNKNOWN;
	} else if (exited && exit_set_has(&p->warn, f->exit_status)) {
		o = OUTCOME_WARNING;
		cause = WARN_EXIT;
	} else if (!exited || (f->exit_status != 0 && !exit_set_has(&p->ok, f->exit_status))) {
		o = OUTCOME_FAILED;
	} else if (p->min_duration > 0 && f->duration >= 0 && f->duration < p->min_duration) {
		/* The backup that found nothing to back up. */
		o = OUTCOME_WARNING;
		cause = WARN_SHORT;
	}
	if (why)
		*why = cause;
	return o;
}
