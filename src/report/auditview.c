#include "report/auditview.h"
#include "registry/audit.h"
#include "util/msg.h"
#include "util/rfc3339.h"
#include "util/utf8.h"

#include <string.h>

/* The fields printed as JSON numbers. */
static int numeric(const char *key, const char *value)
{
	unsigned long long n;
	return (strcmp(key, "uid") == 0 || strcmp(key, "pid") == 0 || strcmp(key, "run") == 0) &&
	       parse_digits(value, strlen(value), ~0ULL, &n) == 0;
}

/* Is the line at P (to END) to be shown: its job one of JOBS (or the
 * registry's), its time not before FROM (< 0: any)? */
static int wanted(const char *p, const char *end, char **jobs, size_t njobs, double from)
{
	struct buf key = {0}, value = {0};
	int job_ok = njobs == 0, time_ok = from < 0;
	while (audit_field(&p, end, &key, &value)) {
		time_t t;
		if (strcmp(key.data, "job") == 0)
			for (size_t i = 0; i < njobs; i++)
				job_ok |= strcmp(value.data, jobs[i]) == 0 || strcmp(value.data, "-") == 0;
		else if (strcmp(key.data, "time") == 0)
			time_ok = from < 0 || (time_parse(value.data, &t) == 0 && (double)t >= from);
	}
	buf_free(&key);
	buf_free(&value);
	return job_ok && time_ok;
}

/* The line at P (to END) as one JSON object into OUT. */
static void add_json(struct buf *out, const char *p, const char *end)
{
	struct buf key = {0}, value = {0};
	int first = 1;
	buf_addc(out, '{');
	while (audit_field(&p, end, &key, &value)) {
		buf_adds(out, first ? "\"" : ", \"");
		text_escape(out, key.data, key.len, ESCAPE_JSON);
		buf_adds(out, "\": ");
		if (numeric(key.data, value.data)) {
			buf_adds(out, value.data);
		} else {
			buf_addc(out, '"');
			text_escape(out, value.data, value.len, ESCAPE_JSON);
			buf_addc(out, '"');
		}
		first = 0;
	}
	buf_adds(out, "}\n");
	buf_free(&key);
	buf_free(&value);
}

int auditview_print(const struct registry *reg, char **jobs, size_t njobs, double since,
		    int json)
{
	struct buf log = {0}, text = {0};
	double from = since >= 0 ? now_real() - since : -1;
	int rc = audit_read(reg, &log);
	const char *end = log.data + log.len;
	for (const char *line = log.data; !rc && line && line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *stop = nl ? nl : end;
		if (stop > line && wanted(line, stop, jobs, njobs, from)) {
			if (json) {
				add_json(&text, line, stop);
			} else {
				text_escape(&text, line, (size_t)(stop - line), ESCAPE_TEXT);
				buf_addc(&text, '\n');
			}
			out_add(text.data, text.len);
			buf_reset(&text);
		}
		line = nl ? nl + 1 : NULL;
	}
	buf_free(&text);
	buf_free(&log);
	return out_flush() ? EXIT_IO : rc;
}
