#include "util/msg.h"
#include "util/sys.h"
#include "util/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

const char *prog_name = "jobreg";
int quiet;

static const char *context;
static int errors_are_info;
static struct buf out;   /* standard output, not yet written */
static struct buf *hold;  /* messages kept (message_hold) */
static volatile int *mid_line;  /* message_mid_line() */

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

void message_mid_line(volatile int *flag)
{
	mid_line = flag;
}

/* Standard output flushed, and stderr at the start of a line. */
static void start_line(void)
{
	(void)out_flush();
	if (mid_line && *mid_line && write_full(2, "\n", 1) == 0)
		*mid_line = 0;
}

struct buf *message_hold(struct buf *held)
{
	struct buf *was = hold;
	hold = held;
	return was;
}

void message_release(struct buf *held, int write)
{
	if (write && held->len) {
		start_line();
		/* A closed stderr loses the message only (SIGPIPE is ignored). */
		(void)write_full(2, held->data, held->len);
	}
	buf_free(held);
}

static void emit(const char *job, int err, const char *fmt, va_list ap)
{
	struct buf line = {0};

	if (errors_are_info && quiet)
		return;
	buf_addf(&line, "%s: ", prog_name);
	if (job)
		buf_addf(&line, "%s: ", job);
	if (context)
		buf_addf(&line, "%s: ", context);
	buf_vaddf(&line, fmt, ap);
	if (err)
		buf_addf(&line, ": %s", strerror(err));
	/* Escaped: one line that drives no terminal, whatever a path or a
	 * note holds. */
	struct buf shown = {0};
	text_escape(&shown, line.data, line.len, ESCAPE_TEXT);
	buf_addc(&shown, '\n');
	buf_free(&line);
	if (hold)
		buf_add(hold, shown.data, shown.len);
	message_release(&shown, !hold);
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
	/* A large block (a listing's whole text) goes out without a copy. */
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

/* errno -> exit status, and the one for creating what the user named. */
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
