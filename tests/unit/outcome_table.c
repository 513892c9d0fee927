/* outcome_table: the outcome of a run (SPEC §2 Warnings, §5 Outcomes),
 * checked against outcome_judge(), and the exit-status lists it reads
 * against exit_set_parse().  Prints one line per row; exits 1 if a row
 * reads otherwise.  Built and run by tests/outcomes.bats. */
#include "record/outcome.h"

#include <stdio.h>

struct row {
	const char *name;
	const char *ok, *warn;   /* the lists; NULL: none */
	double min_duration;
	struct outcome_facts f;
	enum outcome want;
	enum warning_cause why;
};

#define EXIT(n) { .exit_status = (n), .duration = -1 }
#define RAN(n, secs) { .exit_status = (n), .duration = (secs) }

static const struct row rows[] = {
	{ "exit 0", NULL, NULL, 0, EXIT(0), OUTCOME_OK, WARN_NONE },
	{ "exit 3", NULL, NULL, 0, EXIT(3), OUTCOME_FAILED, WARN_NONE },
	{ "no exit status known", NULL, NULL, 0, EXIT(-1), OUTCOME_UNKNOWN, WARN_NONE },
	{ "exit 24 in ok_exit", "24", NULL, 0, EXIT(24), OUTCOME_OK, WARN_NONE },
	{ "exit 24 in warn_exit", NULL, "24", 0, EXIT(24), OUTCOME_WARNING, WARN_EXIT },
	{ "exit 70 in a range of warn_exit", NULL, "3,64-78", 0, EXIT(70), OUTCOME_WARNING,
	  WARN_EXIT },
	{ "exit 79 past the range", NULL, "3,64-78", 0, EXIT(79), OUTCOME_FAILED, WARN_NONE },
	{ "exit 3 in neither list", "24", "25", 0, EXIT(3), OUTCOME_FAILED, WARN_NONE },
	{ "exit 0 in warn_exit: the list says so", NULL, "0", 0, EXIT(0), OUTCOME_WARNING,
	  WARN_EXIT },
	{ "a signal is FAILED whatever the lists", "0-255", NULL, 0,
	  { .exit_status = -1, .signalled = 1, .duration = -1 }, OUTCOME_FAILED, WARN_NONE },
	{ "a time limit is FAILED whatever the lists", NULL, "0-255", 0,
	  { .exit_status = -1, .timed_out = 1, .duration = -1 }, OUTCOME_FAILED, WARN_NONE },
	{ "a cancel is CANCELLED whatever the exit", "0-255", NULL, 0,
	  { .exit_status = 0, .cancelled = 1, .duration = -1 }, OUTCOME_CANCELLED, WARN_NONE },
	{ "OK under min_duration", NULL, NULL, 5, RAN(0, 0.4), OUTCOME_WARNING, WARN_SHORT },
	{ "ok_exit under min_duration", "24", NULL, 5, RAN(24, 0.4), OUTCOME_WARNING, WARN_SHORT },
	{ "OK at min_duration", NULL, NULL, 5, RAN(0, 5), OUTCOME_OK, WARN_NONE },
	{ "FAILED under min_duration stays FAILED", NULL, NULL, 5, RAN(3, 0.4), OUTCOME_FAILED,
	  WARN_NONE },
	{ "warn_exit under min_duration: the exit", NULL, "24", 5, RAN(24, 0.4), OUTCOME_WARNING,
	  WARN_EXIT },
	{ "min_duration not judged (jobreg-set)", NULL, NULL, 5, EXIT(0), OUTCOME_OK, WARN_NONE },
};

struct list_row {
	const char *list;
	int ok;             /* parses */
	int in, out;        /* a status in it, one not (-1: none) */
};

static const struct list_row lists[] = {
	{ "24", 1, 24, 23 }, { "3,24,64-78", 1, 64, 79 }, { "0-255", 1, 255, -1 },
	{ "7-7", 1, 7, 8 }, { "0", 1, 0, 1 },
	{ "", 0, -1, -1 }, { "256", 0, -1, -1 }, { "78-64", 0, -1, -1 }, { "3,", 0, -1, -1 },
	{ ",3", 0, -1, -1 }, { "3 ,4", 0, -1, -1 }, { "-3", 0, -1, -1 }, { "3-", 0, -1, -1 },
	{ "1e2", 0, -1, -1 }, { "99999999999999999999", 0, -1, -1 },
};

int main(void)
{
	int bad = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		struct outcome_policy p = { .min_duration = r->min_duration };
		enum warning_cause why;
		if ((r->ok && exit_set_parse(r->ok, &p.ok) < 0) ||
		    (r->warn && exit_set_parse(r->warn, &p.warn) < 0)) {
			printf("BAD  %-48s a list does not parse\n", r->name);
			bad = 1;
			continue;
		}
		enum outcome got = outcome_judge(&p, &r->f, &why);
		int good = got == r->want && why == r->why;
		printf("%-4s %-48s %s\n", good ? "ok" : "BAD", r->name,
		       got == OUTCOME_UNKNOWN ? "(none)" : outcome_word(got));
		bad |= !good;
	}
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		const struct list_row *l = &lists[i];
		struct exit_set set;
		int ok = exit_set_parse(l->list, &set) == 0;
		int good = ok == l->ok && (!ok || (exit_set_has(&set, l->in) &&
						   (l->out < 0 || !exit_set_has(&set, l->out))));
		char name[64];
		snprintf(name, sizeof name, "list '%s'", l->list);
		printf("%-4s %-48s %s\n", good ? "ok" : "BAD", name, ok ? "parses" : "refused");
		bad |= !good;
	}
	return bad;
}
