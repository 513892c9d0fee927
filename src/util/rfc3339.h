/* rfc3339: a record's times, "2026-12-02T14:00:05Z", both ways, in UTC
 * whatever TZ says: the days are counted here (POSIX has no timegm(), and
 * gmtime_r() reads the time zone first). */
#ifndef JOBREG_RFC3339_H
#define JOBREG_RFC3339_H

#include <time.h>

/* T as "YYYY-MM-DDTHH:MM:SSZ" (21 bytes with the NUL), clamped to the
 * years 0000-9999 the form can say. */
void time_format(time_t t, char out[21]);
/* The form above, and a real date; returns 0, or -1. */
int time_parse(const char *s, time_t *t);

#endif
