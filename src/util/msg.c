#include "util/msg.h"
#include "util/sys.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

const char *prog_name = "jobreg";
int quiet;

static const char *context;
static void (*before)(void);
static int errors_are_info;
static struct buf held;
static int holding;

void messages_hold(void)
{
	holding = 1;
}

void messages_release(int say)
{
	holding = 0;
	if (say && held.len) {
		if (before)
			before();
		(void)write_full(2, held.data, held.len);
	}
	buf_free(&held);
}

const char *message_context(const char *text)
{
	const char *was = context;
	context = text;
	return was;
}

void errors_informational(int on)
{
	errors_are_info = on;
}

void message_before(void (*flush)(void))
{
	before = flush;
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
	if (holding) {
		buf_add(&held, line.data, line.len);
		buf_free(&line);
		return;
	}
	if (before)
		before();
	/* A closed stderr loses the message, nothing else (SIGPIPE is
	 * ignored: cli.h). */
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
	return exit_for_errno(err);
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

/* errno -> exit status: as a failed call anywhere, and as a failure to
 * create what the user named. */
static const struct {
	int err;
	unsigned char status, creating;
} errno_table[] = {
	{ EACCES, EXIT_PERM, EXIT_PERM },
	{ EPERM, EXIT_PERM, EXIT_PERM },
	{ ELOOP, EXIT_PERM, EXIT_CANTCREAT },
	{ EWOULDBLOCK, EXIT_BUSY, EXIT_BUSY },
	{ ENOENT, EXIT_IO, EXIT_CANTCREAT },
	{ ENOTDIR, EXIT_IO, EXIT_CANTCREAT },
	{ EISDIR, EXIT_IO, EXIT_CANTCREAT },
	{ EEXIST, EXIT_IO, EXIT_CANTCREAT },
	{ ENAMETOOLONG, EXIT_IO, EXIT_CANTCREAT },
	{ EROFS, EXIT_IO, EXIT_CANTCREAT },
};

static int lookup(int err, int creating)
{
	for (size_t i = 0; i < sizeof errno_table / sizeof errno_table[0]; i++)
		if (errno_table[i].err == err)
			return creating ? errno_table[i].creating : errno_table[i].status;
	return EXIT_IO;
}

int exit_for_errno(int err)
{
	return lookup(err, 0);
}

int exit_for_create(int err)
{
	return lookup(err, 1);
}
