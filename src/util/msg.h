/* msg: the exit statuses of SPEC §7, one-line messages on stderr, the
 * buffer of standard output they keep in order with, and errno -> exit
 * status. */
#ifndef JOBREG_MSG_H
#define JOBREG_MSG_H

/* Exit statuses of SPEC §7 (the sysexits.h values). */
enum {
	EXIT_FALSE = 1,     /* a condition was false */
	EXIT_USAGE = 64,    /* bad option, id, status, duration or number */
	EXIT_CORRUPT = 65,  /* corrupt record */
	EXIT_CANTCREAT = 73,/* cannot create the registry, or -o FILE */
	EXIT_IO = 74,       /* I/O error; the previous record is intact */
	EXIT_BUSY = 75,     /* lock wait timed out, or the job is running */
	EXIT_PERM = 77      /* permission denied, or not a regular file */
};

extern const char *prog_name;
extern int quiet;

/* One line on stderr each: "PROG: JOB: text" (JOB may be NULL).  fail()
 * returns CODE; fail_errno() appends ": strerror(ERR)" and returns
 * exit_for_errno(ERR). */
int fail(int code, const char *job, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int fail_errno(int err, const char *job, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void warn(const char *job, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Informational: silenced by -q. */
void info(const char *job, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* While TEXT is not NULL, every message says it after the job, so a
 * lower layer's error tells what it was part of ("PROG: JOB: cannot
 * record DONE (exit 3): write PATH: ...").  Returns the one it replaces. */
const char *message_context(const char *text);
/* While HELD is not NULL, messages are kept in it, for a caller that may
 * yet recover from the error to drop or release.  Returns the one it
 * replaces. */
struct buf;
struct buf *message_hold(struct buf *held);
/* Write the messages HELD kept to stderr when WRITE, then empty it. */
void message_release(struct buf *held, int write);
/* While *MID_LINE (set by another process: dispatch's log relay) says
 * stderr is mid-line, a message first ends the line and clears it. */
void message_mid_line(volatile int *mid_line);
/* While ON, errors count as informational: -q silences them too
 * (jobreg-get -P, where a record's error is data in the metrics). */
void errors_informational(int on);

/* Buffered standard output, flushed before each message.  A failed write
 * is reported once (out_flush() returns 1 from then on), and every later
 * write is dropped. */
void out_add(const char *data, unsigned long len);
void out_adds(const char *s);
int out_flush(void);

/* The exit status for a failed system call's errno: 77 for permission
 * (and ELOOP, which O_NOFOLLOW gives for a symlink), 75 for EWOULDBLOCK,
 * else 74.  exit_for_create(), for making what the user named (the
 * registry, -o FILE), gives 73 for a path that cannot name one. */
int exit_for_errno(int err);
int exit_for_create(int err);

/* First-failure rule of SPEC §7: keep the first non-zero status. */
static inline void keep_first(int *status, int code)
{
	if (*status == 0)
		*status = code;
}

#endif
