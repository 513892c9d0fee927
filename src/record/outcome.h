/* outcome: how a run that ended is judged (SPEC §2 Warnings, §5
 * Outcomes): exit-status lists ("3,24,64-78") and the one judge of OK,
 * WARNING, FAILED and CANCELLED.  Pure: no I/O, no clock; dispatch's end,
 * jobreg-set --exit and the record's check all come here. */
#ifndef JOBREG_OUTCOME_H
#define JOBREG_OUTCOME_H

#include "record/status.h"

struct record;

/* A set of exit statuses 0-255. */
struct exit_set {
	unsigned char bits[32];
};
/* "3,24,64-78" (numbers 0-255 and ascending ranges, comma-separated, no
 * spaces) into *SET; -1 for anything else, the empty list included. */
int exit_set_parse(const char *s, struct exit_set *set);
int exit_set_has(const struct exit_set *set, int status);
/* The lowest status in both A and B; -1: none. */
int exit_set_common(const struct exit_set *a, const struct exit_set *b);

/* A job's policy, as its record keeps it (ok_exit, warn_exit,
 * min_duration; SPEC §3). */
struct outcome_policy {
	struct exit_set ok, warn;
	double min_duration;   /* seconds; 0: none */
};
/* R's policy (the parser checked the keys); none of them: empty. */
void outcome_policy_of(const struct record *r, struct outcome_policy *p);

/* What is known of a run's end. */
struct outcome_facts {
	int exit_status;       /* -1: not known */
	int signalled, timed_out, cancelled;
	double duration;       /* seconds it ran; < 0: not judged (only
				* dispatch judges min_duration) */
};
/* Why a run is a WARNING. */
enum warning_cause { WARN_NONE, WARN_EXIT, WARN_SHORT };

/* The outcome: cancelled is CANCELLED; a signal or a time limit FAILED
 * whatever the lists; an exit in warn_exit WARNING (0 too, if the list
 * names it); 0 or in ok_exit OK, but WARNING under min_duration; any
 * other FAILED; no exit status known: OUTCOME_UNKNOWN.  *WHY (may be
 * NULL) says why a WARNING is one. */
enum outcome outcome_judge(const struct outcome_policy *p, const struct outcome_facts *f,
			   enum warning_cause *why);

#endif
