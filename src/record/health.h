/* health: a job's one health word (SPEC §2 Health), judged from facts
 * readers gather.  Pure: no I/O, no clock; tests/unit/health_table.c
 * holds its truth table. */
#ifndef JOBREG_HEALTH_H
#define JOBREG_HEALTH_H

#include "record/status.h"

struct health_facts {
	int stale;                 /* its run's owner is dead */
	int overdue;               /* its run is overdue */
	unsigned long long consecutive_failures;
	unsigned long long notify_after;   /* a notifier's notify_after (SPEC §5c); 0 or 1: none */
	int late;
	int last_success_warning;  /* its last success was a WARNING */
};

/* The worst word that applies, in §2's order. */
enum health health_judge(const struct health_facts *f);

#endif
