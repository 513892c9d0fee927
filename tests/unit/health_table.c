/* health_table: every row of SPEC §2 Health's order, checked against
 * health_judge(): each word wins over every word after it, and
 * notify_after lowers FAILED only for notifiers (§5c).  Prints one line
 * per row; exits 1 if a row reads otherwise.  Built and run by
 * tests/outcomes.bats. */
#include "record/health.h"

#include <stdio.h>

struct row {
	const char *name;
	struct health_facts f;
	enum health want;
};

static const struct row rows[] = {
	{ "nothing: a job that never ran", { 0 }, HEALTH_OK },
	{ "stale alone", { .stale = 1 }, HEALTH_STALE },
	{ "stale over everything", { .stale = 1, .overdue = 1, .consecutive_failures = 3, .late = 1,
				      .last_success_warning = 1 }, HEALTH_STALE },
	{ "overdue alone", { .overdue = 1 }, HEALTH_OVERDUE },
	{ "overdue over failed, late, warning", { .overdue = 1, .consecutive_failures = 2, .late = 1,
						  .last_success_warning = 1 }, HEALTH_OVERDUE },
	{ "failed once", { .consecutive_failures = 1 }, HEALTH_FAILED },
	{ "failed over late and warning", { .consecutive_failures = 1, .late = 1,
					    .last_success_warning = 1 }, HEALTH_FAILED },
	{ "late alone", { .late = 1 }, HEALTH_LATE },
	{ "late over warning", { .late = 1, .last_success_warning = 1 }, HEALTH_LATE },
	{ "warning alone", { .last_success_warning = 1 }, HEALTH_WARNING },
	{ "notify_after 1 is none", { .consecutive_failures = 1, .notify_after = 1 }, HEALTH_FAILED },
	{ "notify_after 3, 2 failures: OK below it", { .consecutive_failures = 2, .notify_after = 3 },
	  HEALTH_OK },
	{ "notify_after 3, 2 failures: late below it", { .consecutive_failures = 2, .notify_after = 3,
							 .late = 1 }, HEALTH_LATE },
	{ "notify_after 3, 2 failures: warning below it",
	  { .consecutive_failures = 2, .notify_after = 3, .last_success_warning = 1 }, HEALTH_WARNING },
	{ "notify_after 3, 3 failures", { .consecutive_failures = 3, .notify_after = 3 }, HEALTH_FAILED },
	{ "notify_after 3, 10 failures", { .consecutive_failures = 10, .notify_after = 3 },
	  HEALTH_FAILED },
	{ "notify_after does not hide stale", { .stale = 1, .notify_after = 5 }, HEALTH_STALE },
	{ "notify_after does not hide overdue", { .overdue = 1, .consecutive_failures = 1,
						  .notify_after = 5 }, HEALTH_OVERDUE },
};

int main(void)
{
	int bad = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		enum health got = health_judge(&rows[i].f);
		printf("%-4s %-48s %s\n", got == rows[i].want ? "ok" : "BAD", rows[i].name,
		       health_word(got));
		bad |= got != rows[i].want;
	}
	return bad;
}
