#include "util/rfc3339.h"
#include "util/sys.h"

#include <stdio.h>
#include <string.h>

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * algorithm), so no timegm() is needed. */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

static int leap(long long y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

void time_format(time_t t, char out[21])
{
	char text[64];
	/* The format has four digits of year: clamp to what it can say. */
	if ((long long)t < -62167219200LL)   /* 0000-01-01T00:00:00Z */
		t = (time_t)-62167219200LL;
	if ((long long)t > 253402300799LL)   /* 9999-12-31T23:59:59Z */
		t = (time_t)253402300799LL;
	long long days = (long long)t / 86400, secs = (long long)t % 86400;
	if (secs < 0)
		secs += 86400, days--;
	/* Counted from 1970, not by gmtime_r(): it would first read the time
	 * zone, and a TZ naming a FIFO would block it. */
	long long y = 1970;
	while (days < 0)
		days += 365 + leap(--y);
	while (days >= 365 + leap(y))
		days -= 365 + leap(y++);
	int m = 0;
	while (days >= mdays[m] + (m == 1 && leap(y)))
		days -= mdays[m] + (m == 1 && leap(y)), m++;
	snprintf(text, sizeof text, "%04lld-%02d-%02lldT%02lld:%02lld:%02lldZ", y, m + 1,
		 days + 1, secs / 3600, secs / 60 % 60, secs % 60);
	memcpy(out, text, 21);
}

int time_parse(const char *s, time_t *t)
{
	unsigned long long y, mo, d, h, mi, sec;
	if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
	    s[13] != ':' || s[16] != ':' || s[19] != 'Z')
		return -1;
	if (parse_digits(s, 4, 9999, &y) || parse_digits(s + 5, 2, 99, &mo) ||
	    parse_digits(s + 8, 2, 99, &d) || parse_digits(s + 11, 2, 99, &h) ||
	    parse_digits(s + 14, 2, 99, &mi) || parse_digits(s + 17, 2, 99, &sec))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 ||
	    d > (unsigned long long)mdays[mo - 1] + (mo == 2 && leap((long long)y)) ||
	    h > 23 || mi > 59 || sec > 60)
		return -1;
	long long v = days_from_civil((long long)y, (unsigned)mo, (unsigned)d) * 86400 +
		      (long long)(h * 3600 + mi * 60 + sec);
	*t = (time_t)v;
	return 0;
}
