#include "record/status.h"

#include <string.h>
#include <strings.h>

static const char *const status_words[] = {
	[ST_PENDING] = "PENDING", [ST_RUNNING] = "RUNNING",
	[ST_STALE] = "STALE", [ST_DONE] = "DONE", [ST_CORRUPT] = "CORRUPT",
	[ST_UNREADABLE] = "UNREADABLE",
};

const char status_list_words[] = "PENDING, RUNNING, STALE, DONE, OK, FAILED, LATE";

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

int parse_status_list(const char *s, unsigned *mask)
{
	*mask = 0;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		int st = status_from_word(s, len, 1);
		if (len == 2 && strncasecmp(s, "OK", 2) == 0)
			*mask |= STATUS_OK_BIT;
		else if (len == 6 && strncasecmp(s, "FAILED", 6) == 0)
			*mask |= STATUS_FAILED_BIT;
		else if (len == 4 && strncasecmp(s, "LATE", 4) == 0)
			*mask |= STATUS_LATE_BIT;
		else if (st < 0)
			return -1;
		else
			*mask |= STATUS_BIT(st);
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

int status_in(unsigned mask, enum status st, enum outcome outcome, int late)
{
	if ((mask & STATUS_BIT(st)) || (late && (mask & STATUS_LATE_BIT)))
		return 1;
	if (st != ST_DONE)
		return 0;
	return (outcome == OUTCOME_OK && (mask & STATUS_OK_BIT)) ||
	       (outcome == OUTCOME_FAILED && (mask & STATUS_FAILED_BIT));
}
