/* cli: what every command shares — exit statuses, one-line messages,
 * common options, and the parsing of user input (ids, numbers, durations,
 * status lists, the registry path). */
#ifndef JOBREG_CLI_H
#define JOBREG_CLI_H

#include <getopt.h>

/* Exit statuses of SPEC §6 (the sysexits.h values). */
enum {
	EXIT_FALSE = 1,     /* a condition was false */
	EXIT_USAGE = 64,    /* bad option, id, status, duration or number */
	EXIT_CORRUPT = 65,  /* corrupt record */
	EXIT_CANTCREAT = 73,/* cannot create the registry */
	EXIT_IO = 74,       /* I/O error; the previous record is intact */
	EXIT_BUSY = 75,     /* lock wait timed out, or the job is running */
	EXIT_PERM = 77      /* permission denied, or not a regular file */
};

#define JOB_ID_MAX 128

extern const char *prog_name;
extern int quiet;

/* The options every command takes. */
struct common {
	const char *dir;       /* -d DIR, or NULL */
	double lock_wait;      /* -w SECONDS, default 10 */
};

#define COMMON_SHORTOPTS "d:w:qhV"
#define COMMON_LONGOPTS                              \
	{ "dir", required_argument, 0, 'd' },        \
	{ "lock-wait", required_argument, 0, 'w' },  \
	{ "quiet", no_argument, 0, 'q' },            \
	{ "help", no_argument, 0, 'h' },             \
	{ "version", no_argument, 0, 'V' }

void cli_init(const char *name, struct common *c);

/* Handle one getopt_long result that is common to all commands (or an
 * error).  Returns -1 when parsing goes on, else the status to exit with
 * (0 after --help/--version, 64 after a usage error). */
int cli_common_option(int opt, const char *arg, char **argv, struct common *c,
		      const char *usage, const char *help);

/* Messages.  Each is one line on stderr: "PROG: JOB: text".  JOB may be
 * NULL.  fail() returns CODE; fail_errno() appends ": strerror(ERR)" and
 * returns errno_exit(ERR). */
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
 * lower layer's error tells what it was part of:
 * "PROG: JOB: cannot record DONE (exit 3): write PATH: strerror". */
void message_context(const char *text);
/* While ON, errors count as informational: -q silences them too
 * (jobreg-get -P, where a record's error is data in the metrics). */
void errors_informational(int on);
/* A usage error: "PROG: text; usage: USAGE", returns 64. */
int usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The exit status for a failed system call's errno. */
int errno_exit(int err);

/* First-failure rule of SPEC §6: keep the first non-zero status. */
static inline void keep_first(int *status, int code)
{
	if (*status == 0)
		*status = code;
}

int valid_job_id(const char *id);
/* Check every id; on the first bad one print its error and return 64.
 * An operand beginning with '-' is reported as a misplaced option. */
int check_job_ids(char **ids, int count);
/* "misplaced option 'WORD': options come before the job ids"; returns 64. */
int misplaced_option(const char *word);

/* A non-negative decimal number with an optional unit s, m, h or d. */
int parse_duration(const char *s, double *seconds);
/* A duration, or "inf" for no limit (*seconds = -1). */
int parse_limit(const char *s, double *seconds);
/* A decimal integer in 0..MAX. */
int parse_uint(const char *s, long max, long *value);
/* "RUNNING,stale,ok" into a mask of STATUS_BIT(status), STATUS_OK_BIT and
 * STATUS_FAILED_BIT (record.h); 0 on success. */
int parse_status_list(const char *s, unsigned *mask);

/* The registry path: -d, else $JOBREG_DIR, else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg.  Returns a malloc'd path,
 * or NULL after printing why (exit 64). */
char *registry_path(const char *opt_dir);

/* Buffered standard output: out_flush() reports a failed write once. */
void out_add(const char *data, unsigned long len);
void out_adds(const char *s);
int out_flush(void);

#endif
