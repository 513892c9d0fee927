#include "record/status.h"

#include <string.h>
#include <strings.h>

static const char *const status_words[] = {
	[ST_PENDING] = "PENDING", [ST_RUNNING] = "RUNNING",
	[ST_STALE] = "STALE", [ST_DONE] = "DONE", [ST_CORRUPT] = "CORRUPT",
	[ST_UNREADABLE] = "UNREADABLE",
};

const char status_list_words[] =
	"PENDING, RUNNING, STALE, DONE, CANCELLED, OK, WARNING, FAILED, LATE, PAUSED, OVERDUE";

static const char *const outcome_words[] = {
	[OUTCOME_OK] = "OK", [OUTCOME_FAILED] = "FAILED", [OUTCOME_CANCELLED] = "CANCELLED",
	[OUTCOME_WARNING] = "WARNING",
};

const char *outcome_word(enum outcome o)
{
	return o == OUTCOME_UNKNOWN ? NULL : outcome_words[o];
}

enum outcome outcome_from_word(const char *s)
{
	for (int o = OUTCOME_OK; o <= OUTCOME_WARNING; o++)
		if (strcmp(s, outcome_words[o]) == 0)
			return (enum outcome)o;
	return OUTCOME_UNKNOWN;
}

static const char *const health_words[HEALTH_COUNT] = {
	[HEALTH_OK] = "OK", [HEALTH_WARNING] = "WARNING", [HEALTH_LATE] = "LATE",
	[HEALTH_FAILED] = "FAILED", [HEALTH_OVERDUE] = "OVERDUE", [HEALTH_STALE] = "STALE",
};

const char *health_word(enum health h)
{
	return health_words[h];
}

int health_from_word(const char *s)
{
	for (int h = 0; h < HEALTH_COUNT; h++)
		if (strcmp(s, health_words[h]) == 0)
			return h;
	return -1;
}

const char *status_word(enum status st)
{
	return status_words[st];
}

int status_from_word(const char *s, size_t len, int allow_stale)
{
	for (int st = ST_PENDING; st <= ST_DONE; st++) {
		if (st == ST_STALE && !allow_stale)
			continue;
		if (strlen(status_words[st]) == len && strncasecmp(s, status_words[st], len) == 0)
			return st;
	}
	return -1;
}

/* The words of a list, as status_list_words names them. */
static const struct { const char *word; unsigned bit; } list_words[] = {
	{ "PENDING", STATUS_BIT(ST_PENDING) }, { "RUNNING", STATUS_BIT(ST_RUNNING) },
	{ "STALE", STATUS_BIT(ST_STALE) }, { "DONE", STATUS_BIT(ST_DONE) },
	{ "CANCELLED", STATUS_CANCELLED_BIT }, { "OK", STATUS_OK_BIT },
	{ "WARNING", STATUS_WARNING_BIT }, { "FAILED", STATUS_FAILED_BIT },
	{ "LATE", STATUS_LATE_BIT }, { "PAUSED", STATUS_PAUSED_BIT },
	{ "OVERDUE", STATUS_OVERDUE_BIT },
};

int parse_status_list(const char *s, unsigned *mask)
{
	*mask = 0;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s), i = 0;
		while (i < sizeof list_words / sizeof list_words[0] &&
		       (strlen(list_words[i].word) != len || strncasecmp(s, list_words[i].word, len) != 0))
			i++;
		if (i == sizeof list_words / sizeof list_words[0])
			return -1;
		*mask |= list_words[i].bit;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

int status_in(unsigned mask, enum status st, const struct status_marks *m)
{
	if ((mask & STATUS_BIT(st)) || (m->late && (mask & STATUS_LATE_BIT)) ||
	    (m->paused && (mask & STATUS_PAUSED_BIT)) ||
	    (m->overdue && st == ST_RUNNING && (mask & STATUS_OVERDUE_BIT)))
		return 1;
	if (st != ST_DONE)
		return 0;
	return (m->outcome == OUTCOME_OK && (mask & STATUS_OK_BIT)) ||
	       (m->outcome == OUTCOME_WARNING && (mask & STATUS_WARNING_BIT)) ||
	       (m->outcome == OUTCOME_FAILED && (mask & STATUS_FAILED_BIT)) ||
	       (m->outcome == OUTCOME_CANCELLED && (mask & STATUS_CANCELLED_BIT));
}
