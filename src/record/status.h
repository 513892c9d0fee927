/* status: the statuses, outcomes and status lists (--is, --if, -s) of
 * SPEC §2, as words and as bit masks. */
#ifndef JOBREG_STATUS_H
#define JOBREG_STATUS_H

#include <stddef.h>

/* Statuses; STALE is derived by readers and never written.  CORRUPT and
 * UNREADABLE are what a reader prints for a record it cannot use. */
enum status { ST_PENDING, ST_RUNNING, ST_STALE, ST_DONE, ST_CORRUPT, ST_UNREADABLE };

/* The outcome of a DONE run (SPEC §2 Status lists; record_outcome()). */
enum outcome { OUTCOME_UNKNOWN, OUTCOME_OK, OUTCOME_FAILED, OUTCOME_CANCELLED, OUTCOME_WARNING };
/* "OK", "WARNING", ... as a record's outcome= and the history write them;
 * NULL for OUTCOME_UNKNOWN. */
const char *outcome_word(enum outcome o);
/* The outcome an outcome= value names (exact, upper case); OUTCOME_UNKNOWN
 * for any other. */
enum outcome outcome_from_word(const char *s);

/* A job's health (SPEC §2 Health), best first: the order of severity is
 * the reverse. */
enum health { HEALTH_OK, HEALTH_WARNING, HEALTH_LATE, HEALTH_FAILED, HEALTH_OVERDUE,
	      HEALTH_STALE };
#define HEALTH_COUNT 6
/* "OK", "WARNING", ...; upper case, as records and lists say them. */
const char *health_word(enum health h);
/* The health an upper-case word names; -1 for none. */
int health_from_word(const char *s);

/* "PENDING", "RUNNING", ...; upper case. */
const char *status_word(enum status st);
/* A status word of LEN bytes, case-insensitive; STALE only when
 * ALLOW_STALE.  -1 if it names none (OK and FAILED are list words only). */
int status_from_word(const char *s, size_t len, int allow_stale);

/* Status lists: a bit per status, the refinements of DONE (CANCELLED, OK,
 * FAILED, WARNING), and LATE, PAUSED and OVERDUE, which hold whatever the
 * status (OVERDUE: only a RUNNING job is). */
#define STATUS_BIT(st) (1u << (st))
#define STATUS_OK_BIT (1u << 8)
#define STATUS_FAILED_BIT (1u << 9)
#define STATUS_LATE_BIT (1u << 10)
#define STATUS_CANCELLED_BIT (1u << 11)
#define STATUS_PAUSED_BIT (1u << 12)
#define STATUS_WARNING_BIT (1u << 13)
#define STATUS_OVERDUE_BIT (1u << 14)
/* "RUNNING,stale,ok" into *MASK; -1 for a bad word. */
int parse_status_list(const char *s, unsigned *mask);
/* The words a list may hold, for messages: "PENDING, RUNNING, ..." */
extern const char status_list_words[];
/* What a status list asks of a job besides its status. */
struct status_marks {
	enum outcome outcome;   /* when DONE */
	int late, paused, overdue;
};
/* Is a job of status ST with MARKS in MASK? */
int status_in(unsigned mask, enum status st, const struct status_marks *marks);

#endif
