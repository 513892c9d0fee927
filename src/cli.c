#include "cli.h"
#include "record.h"
#include "sys.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *prog_name = "jobreg";
int quiet;

static struct buf out;
static const char *context;
static int errors_are_info;

void message_context(const char *text)
{
	context = text;
}

void errors_informational(int on)
{
	errors_are_info = on;
}

void cli_init(const char *name, struct common *c)
{
	prog_name = name;
	c->dir = NULL;
	c->lock_wait = 10;
}

static void emit(const char *job, int err, const char *fmt, va_list ap)
{
	struct buf line = {0};

	if (errors_are_info && quiet)
		return;
	buf_adds(&line, prog_name);
	buf_adds(&line, ": ");
	if (job) {
		buf_adds(&line, job);
		buf_adds(&line, ": ");
	}
	if (context) {
		buf_adds(&line, context);
		buf_adds(&line, ": ");
	}
	buf_vaddf(&line, fmt, ap);
	if (err) {
		buf_adds(&line, ": ");
		buf_adds(&line, strerror(err));
	}
	/* One message is one line, whatever a path or note contains. */
	for (size_t i = 0; i < line.len; i++)
		if (line.data[i] == '\n' || line.data[i] == '\r')
			line.data[i] = '?';
	buf_addc(&line, '\n');
	out_flush();
	(void)write_full(2, line.data, line.len);
	buf_free(&line);
}

int fail(int code, const char *job, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(job, 0, fmt, ap);
	va_end(ap);
	return code;
}

int fail_errno(int err, const char *job, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(job, err, fmt, ap);
	va_end(ap);
	return errno_exit(err);
}

void warn(const char *job, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(job, 0, fmt, ap);
	va_end(ap);
}

void info(const char *job, const char *fmt, ...)
{
	if (quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(job, 0, fmt, ap);
	va_end(ap);
}

int usage_error(const char *usage, const char *fmt, ...)
{
	struct buf text = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&text, fmt, ap);
	va_end(ap);
	buf_adds(&text, "; usage: ");
	buf_adds(&text, usage);
	int code = fail(EXIT_USAGE, NULL, "%s", text.data);
	buf_free(&text);
	return code;
}

int errno_exit(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
	case ELOOP:
		return EXIT_PERM;
	case EWOULDBLOCK:
		return EXIT_BUSY;
	default:
		return EXIT_IO;
	}
}

int cli_common_option(int opt, const char *arg, char **argv, struct common *c,
		      const char *usage, const char *help)
{
	switch (opt) {
	case 'd':
		if (!*arg)
			return usage_error(usage, "empty registry directory");
		c->dir = arg;
		return -1;
	case 'w':
		if (parse_duration(arg, &c->lock_wait) < 0)
			return usage_error(usage, "bad lock wait '%s'", arg);
		return -1;
	case 'q':
		quiet = 1;
		return -1;
	case 'h':
		out_adds("usage: ");
		out_adds(usage);
		out_adds("\n");
		out_adds(help);
		return out_flush() ? EXIT_IO : 0;
	case 'V':
		out_adds(prog_name);
		out_adds(" " JOBREG_VERSION "\n");
		return out_flush() ? EXIT_IO : 0;
	case ':':
		return usage_error(usage, "option '%s' needs an argument",
				   argv[optind - 1]);
	case '?':
	default:
		if (optopt)
			return usage_error(usage, "unknown option '-%c'", optopt);
		return usage_error(usage, "unknown option '%s'", argv[optind - 1]);
	}
}

int valid_job_id(const char *id)
{
	size_t n = 0;
	if (id[0] == '.' || id[0] == '-' || id[0] == '\0')
		return 0;
	for (; id[n]; n++) {
		unsigned char ch = (unsigned char)id[n];
		if (n >= JOB_ID_MAX)
			return 0;
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
		      ch == '@' || ch == '+' || ch == '-'))
			return 0;
	}
	return 1;
}

int misplaced_option(const char *word)
{
	return fail(EXIT_USAGE, NULL, "misplaced option '%s': options come before the job %s",
		    word, strcmp(prog_name, "jobreg-dispatch") == 0 ? "id" : "ids");
}

int check_job_ids(char **ids, int count)
{
	for (int i = 0; i < count; i++) {
		if (valid_job_id(ids[i]))
			continue;
		/* A job id cannot begin with '-': this is an option given
		 * after the operands, never a job to act on. */
		if (ids[i][0] == '-' && ids[i][1])
			return misplaced_option(ids[i]);
		/* Quote the id with its unprintable bytes escaped, so the
		 * message stays one readable line. */
		struct buf shown = {0};
		for (const unsigned char *p = (const unsigned char *)ids[i]; *p; p++) {
			if (*p < 0x20 || *p >= 0x7f)
				buf_addf(&shown, "\\x%02x", *p);
			else
				buf_addc(&shown, (char)*p);
		}
		/* Name the id whole, unless it is absurdly long. */
		if (strlen(ids[i]) > JOB_ID_MAX)
			fail(EXIT_USAGE, NULL, "bad job id '%.1024s%s': longer than %d bytes",
			     shown.data, shown.len > 1024 ? "..." : "", JOB_ID_MAX);
		else
			fail(EXIT_USAGE, NULL,
			     "bad job id '%s': use 1-%d of [A-Za-z0-9._@+-], not starting with '.' or '-'",
			     shown.len ? shown.data : "", JOB_ID_MAX);
		buf_free(&shown);
		return EXIT_USAGE;
	}
	return 0;
}

int parse_duration(const char *s, double *seconds)
{
	double value = 0, scale = 1;
	int digits = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++, digits++)
		value = value * 10 + (*p - '0');
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			scale /= 10;
			value += (*p - '0') * scale;
		}
	}
	if (!digits)
		return -1;
	switch (*p) {
	case '\0': break;
	case 's': p++; break;
	case 'm': value *= 60; p++; break;
	case 'h': value *= 3600; p++; break;
	case 'd': value *= 86400; p++; break;
	default: return -1;
	}
	/* A century is more than any wait or age we can mean. */
	if (*p || value > 3.2e9)
		return -1;
	*seconds = value;
	return 0;
}

int parse_limit(const char *s, double *seconds)
{
	if (strcmp(s, "inf") == 0 || strcmp(s, "infinity") == 0) {
		*seconds = -1;
		return 0;
	}
	return parse_duration(s, seconds);
}

int parse_uint(const char *s, long max, long *value)
{
	long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	*value = v;
	return 0;
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
		else if (st < 0)
			return -1;
		else
			*mask |= STATUS_BIT(st);
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

char *registry_path(const char *opt_dir)
{
	const char *env;
	struct buf path = {0};

	if (opt_dir)
		return xstrdup(opt_dir);
	env = getenv("JOBREG_DIR");
	if (env && *env)
		return xstrdup(env);
	/* The XDG spec says relative paths there are to be ignored. */
	env = getenv("XDG_STATE_HOME");
	if (env && env[0] == '/') {
		buf_adds(&path, env);
		buf_adds(&path, "/jobreg");
		return path.data;
	}
	env = getenv("HOME");
	if (!env || !*env) {
		fail(EXIT_USAGE, NULL,
		     "no registry: give -d DIR or set JOBREG_DIR, XDG_STATE_HOME or HOME");
		return NULL;
	}
	buf_adds(&path, env);
	buf_adds(&path, "/.local/state/jobreg");
	return path.data;
}

/* Write to standard output; a failure is reported once, and every later
 * write is dropped. */
static int out_write(const char *data, size_t len)
{
	static int failed;
	if (!len || failed)
		return failed;
	if (write_full(1, data, len) < 0) {
		failed = 1;
		fail_errno(errno, NULL, "write to standard output");
	}
	return failed;
}

void out_add(const char *data, unsigned long len)
{
	/* A large block (a listing's whole text) goes out as it is, not
	 * through a copy. */
	if (len >= 65536) {
		if (!out_flush())
			(void)out_write(data, len);
		return;
	}
	buf_add(&out, data, len);
	if (out.len >= 65536)
		out_flush();
}

void out_adds(const char *s)
{
	out_add(s, strlen(s));
}

int out_flush(void)
{
	/* Emptied first: the failure's message flushes again. */
	size_t len = out.len;
	out.len = 0;
	int failed = out_write(out.data, len);
	buf_reset(&out);
	return failed;
}
