#include "util/rfc3339.h"

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

void time_format(time_t t, char out[21])
{
	/* The format has four digits of year: clamp to what it can say. */
	if ((long long)t < -62167219200LL)   /* 0000-01-01T00:00:00Z */
		t = (time_t)-62167219200LL;
	if ((long long)t > 253402300799LL)   /* 9999-12-31T23:59:59Z */
		t = (time_t)253402300799LL;
	long long days = (long long)t / 86400, secs = (long long)t % 86400;
	if (secs < 0)
		secs += 86400, days--;
	/* civil_from_days, the inverse of the above. */
	long long z = days + 719468;
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long long y = (long long)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	const unsigned vals[6] = { (unsigned)y, m, d, (unsigned)(secs / 3600),
			     (unsigned)(secs / 60 % 60), (unsigned)(secs % 60) };
	static const char layout[] = "0000-00-00T00:00:00Z";
	static const int pos[6] = { 0, 5, 8, 11, 14, 17 };
	memcpy(out, layout, sizeof layout);
	for (int i = 0; i < 6; i++) {
		int width = i == 0 ? 4 : 2;
		unsigned v = vals[i];
		for (int k = width - 1; k >= 0; k--, v /= 10)
			out[pos[i] + k] = (char)('0' + v % 10);
	}
}

static int digits(const char *s, int n, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (unsigned)(s[i] - '0');
	}
	return 0;
}

int time_parse(const char *s, time_t *t)
{
	unsigned y, mo, d, h, mi, sec;
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
	    s[13] != ':' || s[16] != ':' || s[19] != 'Z')
		return -1;
	if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
	    digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &sec))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60)
		return -1;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return -1;
	long long v = days_from_civil(y, mo, d) * 86400 + (long long)h * 3600 +
		      (long long)mi * 60 + sec;
	*t = (time_t)v;
	return 0;
}
