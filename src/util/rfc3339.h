/* rfc3339: the times of a record — RFC 3339 in UTC to the second,
 * "2026-12-02T14:00:05Z", both ways, in UTC whatever TZ says: both count the days
 * themselves (no timegm() in POSIX, and gmtime_r() reads the time zone first). */
#ifndef JOBREG_RFC3339_H
#define JOBREG_RFC3339_H

#include <time.h>

/* T as "YYYY-MM-DDTHH:MM:SSZ" (21 bytes with the NUL), clamped to the
 * years 0000-9999 the form can say. */
void time_format(time_t t, char out[21]);
/* The form above, and a real date; returns 0, or -1. */
int time_parse(const char *s, time_t *t);

#endif
